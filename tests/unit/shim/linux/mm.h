/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: kvmalloc lives in slab.h here. */
#ifndef _SHIM_LINUX_MM_H
#define _SHIM_LINUX_MM_H
#include <linux/slab.h>
#endif
