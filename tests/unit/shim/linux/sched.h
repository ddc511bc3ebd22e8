/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: scheduling points are no-ops. */
#ifndef _SHIM_LINUX_SCHED_H
#define _SHIM_LINUX_SCHED_H
#define cond_resched()	do { } while (0)
#endif
