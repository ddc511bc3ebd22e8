/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: bit operations (the atomic ones use compiler atomics). */
#ifndef _SHIM_LINUX_BITOPS_H
#define _SHIM_LINUX_BITOPS_H

#include <linux/types.h>
#include <linux/bits.h>

#define DECLARE_BITMAP(name, bits)	unsigned long name[BITS_TO_LONGS(bits)]

static inline void set_bit(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline void clear_bit(long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline bool test_and_set_bit(long nr, volatile unsigned long *addr)
{
	return __atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr),
				 __ATOMIC_SEQ_CST) & BIT_MASK(nr);
}

static inline bool test_and_clear_bit(long nr, volatile unsigned long *addr)
{
	return __atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr),
				  __ATOMIC_SEQ_CST) & BIT_MASK(nr);
}

static inline void __set_bit(long nr, unsigned long *addr)
{
	addr[BIT_WORD(nr)] |= BIT_MASK(nr);
}

static inline void __clear_bit(long nr, unsigned long *addr)
{
	addr[BIT_WORD(nr)] &= ~BIT_MASK(nr);
}

static inline bool test_bit(long nr, const volatile unsigned long *addr)
{
	return addr[BIT_WORD(nr)] & BIT_MASK(nr);
}

static inline unsigned int hweight32(u32 w)
{
	return __builtin_popcount(w);
}

static inline unsigned int hweight64(u64 w)
{
	return __builtin_popcountll(w);
}

/* fls(0) = 0, fls(1) = 1, fls(0x80000000) = 32 */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* ffs(0) = 0, ffs(1) = 1; renamed: libc's <strings.h> declares ffs() too */
#define ffs(x)	shim_ffs(x)
static inline int shim_ffs(int x)
{
	return __builtin_ffs(x);
}

/* Undefined for 0, as in the kernel. */
static inline unsigned long __ffs(unsigned long x)
{
	return __builtin_ctzl(x);
}

static inline unsigned long __fls(unsigned long x)
{
	return BITS_PER_LONG - 1 - __builtin_clzl(x);
}

static inline u32 rol32(u32 w, unsigned int s)
{
	return (w << (s & 31)) | (w >> ((-s) & 31));
}

static inline u32 ror32(u32 w, unsigned int s)
{
	return (w >> (s & 31)) | (w << ((-s) & 31));
}

static inline void bitmap_zero(unsigned long *dst, unsigned int nbits)
{
	unsigned int i;

	for (i = 0; i < BITS_TO_LONGS(nbits); i++)
		dst[i] = 0;
}

#endif
