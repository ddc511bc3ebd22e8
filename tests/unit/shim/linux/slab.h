/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: kmalloc family on top of malloc, with failure injection
 * (shim_fail_alloc_in()) so tests can walk every allocation failure point.
 */
#ifndef _SHIM_LINUX_SLAB_H
#define _SHIM_LINUX_SLAB_H

#include <stdlib.h>
#include <linux/types.h>
#include <linux/overflow.h>

#define __GFP_ZERO		0x1u
#define __GFP_NOWARN		0x2u
#define __GFP_ACCOUNT		0x4u
#define GFP_KERNEL		0x10u
#define GFP_ATOMIC		0x20u
#define GFP_NOWAIT		0x40u
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)
#define SLAB_ACCOUNT		0x1ul

/* Allocations made and not yet freed through this shim. */
extern long shim_alloc_live;

void *shim_alloc(size_t size, gfp_t gfp);
void shim_free(const void *p);
/* Make the n-th allocation from now fail (n >= 1); 0 disarms. */
void shim_fail_alloc_in(unsigned long n);
/* True once an armed failure has been delivered (and disarmed). */
bool shim_alloc_failed(void);

#define kmalloc(size, gfp)	shim_alloc((size), (gfp))
#define kzalloc(size, gfp)	shim_alloc((size), (gfp) | __GFP_ZERO)
#define kvmalloc(size, gfp)	shim_alloc((size), (gfp))
#define kvzalloc(size, gfp)	shim_alloc((size), (gfp) | __GFP_ZERO)
#define kmalloc_array(n, size, gfp)	shim_alloc(size_mul((n), (size)), (gfp))
#define kvmalloc_array(n, size, gfp)	shim_alloc(size_mul((n), (size)), (gfp))
#define kcalloc(n, size, gfp)	shim_alloc(size_mul((n), (size)), (gfp) | __GFP_ZERO)
#define kvcalloc(n, size, gfp)	shim_alloc(size_mul((n), (size)), (gfp) | __GFP_ZERO)
#define kfree(p)		shim_free(p)
#define kvfree(p)		shim_free(p)

struct kmem_cache {
	size_t size;
};

static inline struct kmem_cache *kmem_cache_create(const char *name,
						   unsigned int size,
						   unsigned int align,
						   unsigned long flags,
						   void (*ctor)(void *))
{
	struct kmem_cache *c = malloc(sizeof(*c));

	(void)name; (void)align; (void)flags; (void)ctor;
	if (c)
		c->size = size;
	return c;
}

#define kmem_cache_destroy(c)		free(c)
#define kmem_cache_alloc(c, gfp)	shim_alloc((c)->size, (gfp))
#define kmem_cache_zalloc(c, gfp)	shim_alloc((c)->size, (gfp) | __GFP_ZERO)
#define kmem_cache_free(c, p)		((void)(c), shim_free(p))

#endif
