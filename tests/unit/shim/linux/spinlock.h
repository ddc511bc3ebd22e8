/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: spinlocks on pthread mutexes; the _bh/_irq flavours are the same lock. */
#ifndef _SHIM_LINUX_SPINLOCK_H
#define _SHIM_LINUX_SPINLOCK_H

#include <pthread.h>
#include <linux/lockdep.h>

typedef struct {
	pthread_mutex_t	m;
	int		shim_held;
} spinlock_t;

#define DEFINE_SPINLOCK(name) \
	spinlock_t name = { .m = PTHREAD_MUTEX_INITIALIZER, .shim_held = 0 }

#define spin_lock_init(x)	do {					\
	pthread_mutex_init(&(x)->m, NULL);				\
	(x)->shim_held = 0;						\
} while (0)

static inline void spin_lock(spinlock_t *x)
{
	pthread_mutex_lock(&x->m);
	x->shim_held = 1;
}

/* Unlocks so far, all locks (tests of how long a lock is held). */
extern unsigned long shim_unlocks;

static inline void spin_unlock(spinlock_t *x)
{
	__atomic_add_fetch(&shim_unlocks, 1, __ATOMIC_RELAXED);
	x->shim_held = 0;
	pthread_mutex_unlock(&x->m);
}

static inline int spin_trylock(spinlock_t *x)
{
	if (pthread_mutex_trylock(&x->m))
		return 0;
	x->shim_held = 1;
	return 1;
}

#define spin_lock_bh(x)			spin_lock(x)
#define spin_trylock_bh(x)		spin_trylock(x)
#define spin_unlock_bh(x)		spin_unlock(x)
#define spin_lock_irq(x)		spin_lock(x)
#define spin_unlock_irq(x)		spin_unlock(x)
#define spin_lock_irqsave(x, f)		do { (f) = 0; spin_lock(x); } while (0)
#define spin_unlock_irqrestore(x, f)	do { (void)(f); spin_unlock(x); } while (0)
#define spin_lock_nested(x, subclass)	spin_lock(x)

#endif
