/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: workqueues, enough for queue_rcu_work(). A grace period
 * is empty in the harness (see rcupdate.h), so a queued rcu_work runs at
 * once, unless a test holds them back (shim_rcu_work_hold(true)) to look
 * between the queueing and the grace period's end; shim_rcu_work_run()
 * (and releasing the hold) then runs them in order.
 */
#ifndef _SHIM_LINUX_WORKQUEUE_H
#define _SHIM_LINUX_WORKQUEUE_H

#include <linux/types.h>
#include <linux/kernel.h>

struct work_struct;
typedef void (*work_func_t)(struct work_struct *work);

struct work_struct {
	work_func_t		func;
	struct work_struct	*shim_next;
};

struct rcu_work {
	struct work_struct	work;
};

struct workqueue_struct {
	int	shim_unused;
};

#define WQ_UNBOUND	0x2u

struct workqueue_struct *shim_alloc_workqueue(const char *name);
void shim_destroy_workqueue(struct workqueue_struct *wq);
bool shim_queue_rcu_work(struct workqueue_struct *wq, struct rcu_work *rwork);
/* Hold queued rcu_works (true) or run them as they come (false). */
void shim_rcu_work_hold(bool hold);
/* Run the held rcu_works; returns how many ran. */
unsigned long shim_rcu_work_run(void);
/* rcu_works queued so far (a test counts batches with it). */
extern unsigned long shim_rcu_work_queued;

#define alloc_workqueue(name, flags, max) \
	((void)(flags), (void)(max), shim_alloc_workqueue(name))
#define destroy_workqueue(wq)		shim_destroy_workqueue(wq)
#define INIT_RCU_WORK(rw, fn)		((rw)->work.func = (fn))
#define to_rcu_work(w)			container_of((w), struct rcu_work, work)
#define queue_rcu_work(wq, rw)		shim_queue_rcu_work((wq), (rw))

#endif
