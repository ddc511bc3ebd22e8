// SPDX-License-Identifier: GPL-2.0
/*
 * WQ_PERCPU: a workqueue says whether it is per-CPU or unbound (7.x warns
 * when a workqueue names neither; per-CPU was the silent default before).
 */
#include <linux/workqueue.h>

unsigned int probe = WQ_PERCPU;
