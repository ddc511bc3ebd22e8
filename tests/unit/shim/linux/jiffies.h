/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: a clock the tests set (shim_jiffies64, 0 at start). */
#ifndef _SHIM_LINUX_JIFFIES_H
#define _SHIM_LINUX_JIFFIES_H

#include <linux/types.h>

#define HZ	250

extern u64 shim_jiffies64;

static inline u64 get_jiffies_64(void)
{
	return __atomic_load_n(&shim_jiffies64, __ATOMIC_RELAXED);
}

#endif
