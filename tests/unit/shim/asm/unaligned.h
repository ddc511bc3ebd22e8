/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: unaligned big/little-endian loads and stores. */
#ifndef _SHIM_ASM_UNALIGNED_H
#define _SHIM_ASM_UNALIGNED_H

#include <string.h>
#include <asm/byteorder.h>

#define __shim_unaligned(bits)						\
static inline u##bits get_unaligned_be##bits(const void *p)		\
{									\
	u##bits v;							\
	memcpy(&v, p, sizeof(v));					\
	return be##bits##_to_cpu(v);					\
}									\
static inline void put_unaligned_be##bits(u##bits v, void *p)		\
{									\
	v = cpu_to_be##bits(v);						\
	memcpy(p, &v, sizeof(v));					\
}									\
static inline u##bits get_unaligned_le##bits(const void *p)		\
{									\
	u##bits v;							\
	memcpy(&v, p, sizeof(v));					\
	return le##bits##_to_cpu(v);					\
}									\
static inline void put_unaligned_le##bits(u##bits v, void *p)		\
{									\
	v = cpu_to_le##bits(v);						\
	memcpy(p, &v, sizeof(v));					\
}

__shim_unaligned(16)
__shim_unaligned(32)
__shim_unaligned(64)

#endif
