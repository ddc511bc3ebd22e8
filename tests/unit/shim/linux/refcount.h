/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: refcount_t; misuse (inc from 0, underflow) WARNs. */
#ifndef _SHIM_LINUX_REFCOUNT_H
#define _SHIM_LINUX_REFCOUNT_H

#include <linux/types.h>
#include <linux/bug.h>

typedef struct {
	int refs;
} refcount_t;

#define REFCOUNT_INIT(n)	{ .refs = (n) }

static inline void refcount_set(refcount_t *r, int n)
{
	__atomic_store_n(&r->refs, n, __ATOMIC_RELAXED);
}

static inline unsigned int refcount_read(const refcount_t *r)
{
	return __atomic_load_n(&r->refs, __ATOMIC_RELAXED);
}

static inline void refcount_inc(refcount_t *r)
{
	WARN_ON(__atomic_fetch_add(&r->refs, 1, __ATOMIC_RELAXED) <= 0);
}

static inline bool refcount_inc_not_zero(refcount_t *r)
{
	int old = __atomic_load_n(&r->refs, __ATOMIC_RELAXED);

	do {
		if (old <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&r->refs, &old, old + 1, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

static inline bool refcount_dec_and_test(refcount_t *r)
{
	int old = __atomic_fetch_sub(&r->refs, 1, __ATOMIC_ACQ_REL);

	WARN_ON(old <= 0);
	return old == 1;
}

static inline void refcount_dec(refcount_t *r)
{
	WARN_ON(__atomic_fetch_sub(&r->refs, 1, __ATOMIC_RELEASE) <= 1);
}

#endif
