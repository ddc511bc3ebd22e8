/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: mutex on a pthread mutex. */
#ifndef _SHIM_LINUX_MUTEX_H
#define _SHIM_LINUX_MUTEX_H

#include <pthread.h>
#include <linux/lockdep.h>

struct mutex {
	pthread_mutex_t	m;
	int		shim_held;
};

#define DEFINE_MUTEX(name) \
	struct mutex name = { .m = PTHREAD_MUTEX_INITIALIZER, .shim_held = 0 }

#define mutex_init(x)	do {						\
	pthread_mutex_init(&(x)->m, NULL);				\
	(x)->shim_held = 0;						\
} while (0)
#define mutex_destroy(x)	pthread_mutex_destroy(&(x)->m)

static inline void mutex_lock(struct mutex *x)
{
	pthread_mutex_lock(&x->m);
	x->shim_held = 1;
}

static inline void mutex_unlock(struct mutex *x)
{
	x->shim_held = 0;
	pthread_mutex_unlock(&x->m);
}

#define mutex_lock_nested(x, subclass)	mutex_lock(x)

#endif
