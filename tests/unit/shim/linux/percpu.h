/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: one CPU; per-CPU data is plain memory, updated atomically. */
#ifndef _SHIM_LINUX_PERCPU_H
#define _SHIM_LINUX_PERCPU_H

#include <linux/types.h>
#include <linux/slab.h>

#define nr_cpu_ids			1U
#define smp_processor_id()		0
#define for_each_possible_cpu(cpu)	for ((cpu) = 0; (cpu) < 1; (cpu)++)
#define for_each_online_cpu(cpu)	for_each_possible_cpu(cpu)

#define alloc_percpu_gfp(type, gfp) \
	((type *)shim_alloc(sizeof(type), (gfp) | __GFP_ZERO))
#define alloc_percpu(type)		alloc_percpu_gfp(type, GFP_KERNEL)
#define free_percpu(p)			shim_free(p)
#define per_cpu_ptr(p, cpu)		((void)(cpu), (p))
#define this_cpu_ptr(p)			(p)
#define raw_cpu_ptr(p)			(p)

#define this_cpu_add(x, v)	((void)__atomic_fetch_add(&(x), (v), __ATOMIC_RELAXED))
#define this_cpu_sub(x, v)	((void)__atomic_fetch_sub(&(x), (v), __ATOMIC_RELAXED))
#define this_cpu_inc(x)		this_cpu_add(x, 1)
#define this_cpu_dec(x)		this_cpu_sub(x, 1)
#define this_cpu_read(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define this_cpu_write(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define __this_cpu_inc(x)	this_cpu_inc(x)
#define __this_cpu_add(x, v)	this_cpu_add(x, v)
#define __this_cpu_read(x)	this_cpu_read(x)

#endif
