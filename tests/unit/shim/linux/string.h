/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: libc string functions plus strscpy(). */
#ifndef _SHIM_LINUX_STRING_H
#define _SHIM_LINUX_STRING_H

#include <string.h>
#include <sys/types.h>

static inline ssize_t strscpy(char *dst, const char *src, size_t size)
{
	size_t len;

	if (!size)
		return -7;	/* -E2BIG */
	len = strnlen(src, size);
	if (len == size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return -7;
	}
	memcpy(dst, src, len + 1);
	return (ssize_t)len;
}

#endif
