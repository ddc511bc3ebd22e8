/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: sort() on qsort() (the swap function is not needed). */
#ifndef _SHIM_LINUX_SORT_H
#define _SHIM_LINUX_SORT_H

#include <stdlib.h>

#define sort(base, num, size, cmp, swp)	qsort((base), (num), (size), (cmp))

#endif
