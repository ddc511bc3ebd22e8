/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the kernel's errno values are Linux's own. glibc's
 * <errno.h> reaches this file through <bits/errno.h>, so take the numbers
 * from <asm/errno.h> like the real <linux/errno.h> does.
 */
#ifndef _SHIM_LINUX_ERRNO_H
#define _SHIM_LINUX_ERRNO_H
#include <asm/errno.h>

/* Kernel-internal codes, never seen by userspace. */
#define ERESTARTSYS	512
#define ENOTSUPP	524
#endif
