/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: Jenkins hash (Bob Jenkins' public-domain lookup3 mix and
 * final steps), with the kernel's function names and initial value.
 */
#ifndef _SHIM_LINUX_JHASH_H
#define _SHIM_LINUX_JHASH_H

#include <string.h>
#include <linux/types.h>
#include <linux/bitops.h>

#define JHASH_INITVAL	0xdeadbeef

#define __jhash_mix(a, b, c) do {			\
	a -= c; a ^= rol32(c, 4);  c += b;		\
	b -= a; b ^= rol32(a, 6);  a += c;		\
	c -= b; c ^= rol32(b, 8);  b += a;		\
	a -= c; a ^= rol32(c, 16); c += b;		\
	b -= a; b ^= rol32(a, 19); a += c;		\
	c -= b; c ^= rol32(b, 4);  b += a;		\
} while (0)

#define __jhash_final(a, b, c) do {			\
	c ^= b; c -= rol32(b, 14);			\
	a ^= c; a -= rol32(c, 11);			\
	b ^= a; b -= rol32(a, 25);			\
	c ^= b; c -= rol32(b, 16);			\
	a ^= c; a -= rol32(c, 4);			\
	b ^= a; b -= rol32(a, 14);			\
	c ^= b; c -= rol32(b, 24);			\
} while (0)

/* Hash an arbitrary byte string (host-endian 32-bit words, then the tail). */
static inline u32 jhash(const void *key, u32 length, u32 initval)
{
	const u8 *k = key;
	u32 a, b, c, w[3];

	a = b = c = JHASH_INITVAL + length + initval;
	while (length > 12) {
		memcpy(w, k, 12);
		a += w[0];
		b += w[1];
		c += w[2];
		__jhash_mix(a, b, c);
		length -= 12;
		k += 12;
	}
	switch (length) {
	case 12: c += (u32)k[11] << 24;	/* fall through */
	case 11: c += (u32)k[10] << 16;	/* fall through */
	case 10: c += (u32)k[9] << 8;	/* fall through */
	case 9:  c += k[8];		/* fall through */
	case 8:  b += (u32)k[7] << 24;	/* fall through */
	case 7:  b += (u32)k[6] << 16;	/* fall through */
	case 6:  b += (u32)k[5] << 8;	/* fall through */
	case 5:  b += k[4];		/* fall through */
	case 4:  a += (u32)k[3] << 24;	/* fall through */
	case 3:  a += (u32)k[2] << 16;	/* fall through */
	case 2:  a += (u32)k[1] << 8;	/* fall through */
	case 1:  a += k[0];
		__jhash_final(a, b, c);
		break;
	case 0:
		break;
	}
	return c;
}

/* Hash an array of u32 words. */
static inline u32 jhash2(const u32 *k, u32 length, u32 initval)
{
	u32 a, b, c;

	a = b = c = JHASH_INITVAL + (length << 2) + initval;
	while (length > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		__jhash_mix(a, b, c);
		length -= 3;
		k += 3;
	}
	switch (length) {
	case 3: c += k[2];	/* fall through */
	case 2: b += k[1];	/* fall through */
	case 1: a += k[0];
		__jhash_final(a, b, c);
		break;
	case 0:
		break;
	}
	return c;
}

static inline u32 __jhash_nwords(u32 a, u32 b, u32 c, u32 initval)
{
	a += initval;
	b += initval;
	c += initval;
	__jhash_final(a, b, c);
	return c;
}

static inline u32 jhash_3words(u32 a, u32 b, u32 c, u32 initval)
{
	return __jhash_nwords(a, b, c, initval + JHASH_INITVAL + (3 << 2));
}

static inline u32 jhash_2words(u32 a, u32 b, u32 initval)
{
	return __jhash_nwords(a, b, 0, initval + JHASH_INITVAL + (2 << 2));
}

static inline u32 jhash_1word(u32 a, u32 initval)
{
	return __jhash_nwords(a, 0, 0, initval + JHASH_INITVAL + (1 << 2));
}

#endif
