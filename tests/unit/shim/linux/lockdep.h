/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: every shim lock records whether it is held, so
 * lockdep_is_held() and lockdep_assert_held() check for real (a held
 * lock, not necessarily by this thread).
 */
#ifndef _SHIM_LINUX_LOCKDEP_H
#define _SHIM_LINUX_LOCKDEP_H

#include <linux/bug.h>

struct lock_class_key {
	int unused;
};

#define SINGLE_DEPTH_NESTING		1
#define lockdep_is_held(l)		(__atomic_load_n(&(l)->shim_held, __ATOMIC_RELAXED) != 0)
#define lockdep_assert_held(l)		WARN_ON(!lockdep_is_held(l))
#define lockdep_assert_held_write(l)	WARN_ON(!lockdep_is_held(l))
#define lockdep_set_class(l, k)		do { (void)(k); } while (0)

#endif
