/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: RCU as plain pointer accesses with release/acquire
 * ordering. There are no concurrent readers in the harness, so a grace
 * period is empty: call_rcu() and kvfree_rcu() run or free at once (which
 * lets ASan catch any use after the last reference is dropped).
 */
#ifndef _SHIM_LINUX_RCUPDATE_H
#define _SHIM_LINUX_RCUPDATE_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/bug.h>
#include <linux/slab.h>

#define rcu_read_lock()			do { } while (0)
#define rcu_read_unlock()		do { } while (0)
#define rcu_read_lock_bh()		do { } while (0)
#define rcu_read_unlock_bh()		do { } while (0)
#define synchronize_rcu()		do { } while (0)
#define synchronize_net()		do { } while (0)
#define rcu_barrier()			do { } while (0)

#define rcu_dereference(p)		__atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define rcu_dereference_bh(p)		rcu_dereference(p)
#define rcu_dereference_raw(p)		rcu_dereference(p)
#define rcu_access_pointer(p)		READ_ONCE(p)
/* The condition is checked: it names the lock the caller must hold. */
#define rcu_dereference_protected(p, c)	({ WARN_ON(!(c)); (p); })
#define rcu_dereference_check(p, c)	rcu_dereference(p)
#define rcu_assign_pointer(p, v)	__atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define RCU_INIT_POINTER(p, v)		WRITE_ONCE(p, v)

#define call_rcu(head, fn)		(fn)(head)
#define kfree_rcu(p, field)		kfree(p)
#define kvfree_rcu(p, field)		kvfree(p)

#endif
