/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: rw_semaphore on a pthread rwlock. */
#ifndef _SHIM_LINUX_RWSEM_H
#define _SHIM_LINUX_RWSEM_H

#include <pthread.h>
#include <linux/lockdep.h>

struct rw_semaphore {
	pthread_rwlock_t	l;
	int			shim_held;
};

#define init_rwsem(s)	do {						\
	pthread_rwlock_init(&(s)->l, NULL);				\
	(s)->shim_held = 0;						\
} while (0)

static inline void down_read(struct rw_semaphore *s)
{
	pthread_rwlock_rdlock(&s->l);
	__atomic_fetch_add(&s->shim_held, 1, __ATOMIC_RELAXED);
}

static inline void up_read(struct rw_semaphore *s)
{
	__atomic_fetch_sub(&s->shim_held, 1, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&s->l);
}

static inline void down_write(struct rw_semaphore *s)
{
	pthread_rwlock_wrlock(&s->l);
	__atomic_fetch_add(&s->shim_held, 1, __ATOMIC_RELAXED);
}

static inline void up_write(struct rw_semaphore *s)
{
	__atomic_fetch_sub(&s->shim_held, 1, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&s->l);
}

#define down_write_nested(s, subclass)	down_write(s)
#define down_read_nested(s, subclass)	down_read(s)

#endif
