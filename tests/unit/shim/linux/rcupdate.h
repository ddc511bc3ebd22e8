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

#ifdef SHIM_RCU_DEFER
/*
 * Opt-in (tests with concurrent lockless readers): read-side sections hold
 * a process-wide rwlock for reading, call_rcu() queues the callback, and
 * synchronize_rcu()/rcu_barrier() (called outside read-side sections) take
 * the lock for writing, so every reader that could see the object has
 * left, then run the queue. The test provides these functions.
 */
void shim_rcu_read_lock(void);
void shim_rcu_read_unlock(void);
void shim_call_rcu(struct callback_head *head,
		   void (*fn)(struct callback_head *head));
void shim_synchronize_rcu(void);
#define rcu_read_lock()			shim_rcu_read_lock()
#define rcu_read_unlock()		shim_rcu_read_unlock()
#define rcu_read_lock_bh()		shim_rcu_read_lock()
#define rcu_read_unlock_bh()		shim_rcu_read_unlock()
#define synchronize_rcu()		shim_synchronize_rcu()
#define synchronize_net()		shim_synchronize_rcu()
#define rcu_barrier()			shim_synchronize_rcu()
#define call_rcu(head, fn)		shim_call_rcu((head), (fn))
#else
#define rcu_read_lock()			do { } while (0)
#define rcu_read_unlock()		do { } while (0)
#define rcu_read_lock_bh()		do { } while (0)
#define rcu_read_unlock_bh()		do { } while (0)
#define synchronize_rcu()		do { } while (0)
#define synchronize_net()		do { } while (0)
#define rcu_barrier()			do { } while (0)
#define call_rcu(head, fn)		(fn)(head)
#endif

#define rcu_dereference(p)		__atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define rcu_dereference_bh(p)		rcu_dereference(p)
#define rcu_dereference_raw(p)		rcu_dereference(p)
#define rcu_access_pointer(p)		READ_ONCE(p)
/* The condition is checked: it names the lock the caller must hold. */
#define rcu_dereference_protected(p, c)	({ WARN_ON(!(c)); (p); })
#define rcu_dereference_check(p, c)	rcu_dereference(p)
#define rcu_assign_pointer(p, v)	__atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define RCU_INIT_POINTER(p, v)		WRITE_ONCE(p, v)

#define kfree_rcu(p, field)		kfree(p)
#define kvfree_rcu(p, field)		kvfree(p)

#endif
