/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: WARN_ON*() report and count (tests assert the count
 * stays zero); BUILD_BUG_ON() is a static assertion.
 */
#ifndef _SHIM_LINUX_BUG_H
#define _SHIM_LINUX_BUG_H

#include <stdio.h>

extern unsigned long shim_warn_count;

#define WARN_ON(cond) ({						\
	int __c = !!(cond);						\
	if (__c) {							\
		shim_warn_count++;					\
		fprintf(stderr, "WARNING: %s:%d: %s\n",			\
			__FILE__, __LINE__, #cond);			\
	}								\
	__c;								\
})
#define WARN_ON_ONCE(cond)	WARN_ON(cond)
#define WARN(cond, fmt, ...)	WARN_ON(cond)
#define WARN_ONCE(cond, fmt, ...) WARN_ON(cond)

#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), #cond)

#endif
