/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: compiler attributes, sparse annotations, ONCE accessors. */
#ifndef _SHIM_LINUX_COMPILER_H
#define _SHIM_LINUX_COMPILER_H

#define __rcu
#define __percpu
#define __force
#define __bitwise
#define __user
#define __iomem
#define __init
#define __exit
#define __net_init
#define __net_exit
#define __read_mostly
#define __ro_after_init
#define __cacheline_aligned
#undef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#define noinline		__attribute__((__noinline__))
#define __maybe_unused		__attribute__((__unused__))
#define __always_unused		__attribute__((__unused__))
#define __must_check		__attribute__((__warn_unused_result__))
#define __packed		__attribute__((__packed__))
#define __aligned(x)		__attribute__((__aligned__(x)))
#define fallthrough		__attribute__((__fallthrough__))

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define barrier()		__asm__ __volatile__("" ::: "memory")

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)	do { *(volatile __typeof__(x) *)&(x) = (val); } while (0)

#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)

#endif
