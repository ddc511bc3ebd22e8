/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard (internal): small helpers of the library itself (nfg_lib.c).
 */
#ifndef NFG_LIB_H
#define NFG_LIB_H

#include <stddef.h>

/*
 * Append @size bytes at @elem to the array *arr of *n elements (capacity
 * *cap, grown by doubling). Returns 0 or -ENOMEM (the array is unchanged).
 */
int nfg_vec_push(void **arr, size_t *n, size_t *cap, const void *elem,
		 size_t size);

#endif /* NFG_LIB_H */
