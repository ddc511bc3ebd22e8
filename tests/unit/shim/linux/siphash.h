/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012), written from the paper's description: 64-bit
 * little-endian message words, two compression rounds per word, the
 * length in the top byte of the last word, four finalization rounds.
 * Same interface as the kernel's <linux/siphash.h>.
 */
#ifndef _SHIM_LINUX_SIPHASH_H
#define _SHIM_LINUX_SIPHASH_H

#include <string.h>
#include <linux/types.h>

typedef struct {
	u64 key[2];
} siphash_key_t;

#define SHIM_ROTL64(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

#define SHIM_SIPROUND(v0, v1, v2, v3) do {				\
	v0 += v1; v1 = SHIM_ROTL64(v1, 13); v1 ^= v0;			\
	v0 = SHIM_ROTL64(v0, 32);					\
	v2 += v3; v3 = SHIM_ROTL64(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = SHIM_ROTL64(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = SHIM_ROTL64(v1, 17); v1 ^= v2;			\
	v2 = SHIM_ROTL64(v2, 32);					\
} while (0)

static inline u64 shim_le64(const u8 *p, size_t n)
{
	u64 v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (u64)p[i] << (8 * i);
	return v;
}

static inline u64 siphash(const void *data, size_t len, const siphash_key_t *key)
{
	u64 v0 = 0x736f6d6570736575ULL ^ key->key[0];
	u64 v1 = 0x646f72616e646f6dULL ^ key->key[1];
	u64 v2 = 0x6c7967656e657261ULL ^ key->key[0];
	u64 v3 = 0x7465646279746573ULL ^ key->key[1];
	const u8 *p = data;
	size_t left = len;
	u64 m;

	for (; left >= 8; left -= 8, p += 8) {
		m = shim_le64(p, 8);
		v3 ^= m;
		SHIM_SIPROUND(v0, v1, v2, v3);
		SHIM_SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	m = shim_le64(p, left) | (u64)(len & 0xff) << 56;
	v3 ^= m;
	SHIM_SIPROUND(v0, v1, v2, v3);
	SHIM_SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= 0xff;
	SHIM_SIPROUND(v0, v1, v2, v3);
	SHIM_SIPROUND(v0, v1, v2, v3);
	SHIM_SIPROUND(v0, v1, v2, v3);
	SHIM_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

#endif
