/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: atomic_t / atomic64_t on compiler builtins. */
#ifndef _SHIM_LINUX_ATOMIC_H
#define _SHIM_LINUX_ATOMIC_H

#include <linux/types.h>

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	s64 counter;
} atomic64_t;

typedef struct {
	long counter;
} atomic_long_t;

#define ATOMIC_INIT(i)		{ (i) }

#define __shim_atomic_ops(pfx, v_t)					\
static inline v_t pfx##_read(const pfx##_t *v)				\
{									\
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_set(pfx##_t *v, v_t i)				\
{									\
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_add(v_t i, pfx##_t *v)				\
{									\
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_sub(v_t i, pfx##_t *v)				\
{									\
	__atomic_fetch_sub(&v->counter, i, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_inc(pfx##_t *v)				\
{									\
	pfx##_add(1, v);						\
}									\
static inline void pfx##_dec(pfx##_t *v)				\
{									\
	pfx##_sub(1, v);						\
}									\
static inline v_t pfx##_add_return(v_t i, pfx##_t *v)			\
{									\
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST);	\
}									\
static inline v_t pfx##_sub_return(v_t i, pfx##_t *v)			\
{									\
	return __atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST);	\
}									\
static inline v_t pfx##_inc_return(pfx##_t *v)				\
{									\
	return pfx##_add_return(1, v);					\
}									\
static inline v_t pfx##_dec_return(pfx##_t *v)				\
{									\
	return pfx##_sub_return(1, v);					\
}									\
static inline bool pfx##_dec_and_test(pfx##_t *v)			\
{									\
	return pfx##_sub_return(1, v) == 0;				\
}									\
static inline v_t pfx##_cmpxchg(pfx##_t *v, v_t old, v_t new)		\
{									\
	__atomic_compare_exchange_n(&v->counter, &old, new, false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	return old;							\
}									\
static inline v_t pfx##_xchg(pfx##_t *v, v_t new)			\
{									\
	return __atomic_exchange_n(&v->counter, new, __ATOMIC_SEQ_CST);	\
}

__shim_atomic_ops(atomic, int)
__shim_atomic_ops(atomic64, s64)
__shim_atomic_ops(atomic_long, long)

#endif
