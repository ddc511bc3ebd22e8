// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard RTCACHE: the per-netns state (struct nfg_rtc_net, rtcache.h)
 * that the packet paths and the control plane share: the table of entries
 * and their lifetime (free after RCU, drop, bulk purge and flush), the
 * per-CPU counters and their sums, the table's bound (module parameter
 * max_entries) and the count of entries alive in all netns.
 *
 * Layering (tests/layering.sh): above the pure core (rtcache_core.c, whose
 * theory of operation covers all of this), below the genetlink control
 * plane (rtcache_nl.c) and the target, hooks, GC and netdev notifier
 * (rtcache_tg.c), which both call into it. Nothing here calls either.
 *
 * Locks: none of its own. The table has rhashtable's per-bucket locks
 * (inserts and removals) and is read under RCU; counters are per-CPU; the
 * per-netns mutex (nfg_rtc_net.lock) belongs to the target's rule
 * counting and is not taken here.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <net/dst.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "rtcache.h"

static unsigned int max_entries = NFG_RTC_DEFAULT_MAX_ENTRIES;
module_param(max_entries, uint, 0644);
MODULE_PARM_DESC(max_entries, "bound of each netns's route cache (16..16777216, default 65536)");

/* Entries alive (each holding one route reference), all netns. */
atomic_t nfg_rtc_live_entries = ATOMIC_INIT(0);

/* Read-only: entries (each holding one route reference) in all netns. */
static int nfg_rtc_live_entries_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&nfg_rtc_live_entries));
}

static const struct kernel_param_ops nfg_rtc_live_entries_ops = {
	.get	= nfg_rtc_live_entries_get,
};
module_param_cb(live_entries, &nfg_rtc_live_entries_ops, NULL, 0444);
MODULE_PARM_DESC(live_entries, "cached routes currently held, all netns (each holds one dst reference)");

/* net_generic() slot of struct nfg_rtc_net (rtcache_tg.c registers it). */
unsigned int nfg_rtc_net_id __read_mostly;

struct nfg_rtc_net *nfg_rtc_pernet(struct net *net)
{
	return net_generic(net, nfg_rtc_net_id);
}

unsigned int nfg_rtc_max_entries(void)
{
	return nfg_rtc_clamp_max(READ_ONCE(max_entries));
}

/* ---- entries ----------------------------------------------------------- */

/* Release an entry nobody can see any more (never published, or after RCU). */
void nfg_rtc_entry_free(struct nfg_rtc_entry *e)
{
	dst_release(e->dst);
	kfree(e);
	atomic_dec(&nfg_rtc_live_entries);
}

void nfg_rtc_entry_free_rcu(struct rcu_head *head)
{
	nfg_rtc_entry_free(container_of(head, struct nfg_rtc_entry, rcu));
}

/*
 * Remove @e if it is still in the table; whoever removes it frees it.
 * Packet paths and walkers alike: the removal takes only @e's bucket lock
 * (rhashtable's own), and the free waits for an RCU grace period.
 */
bool nfg_rtc_entry_drop(struct nfg_rtc_net *rn, struct nfg_rtc_entry *e)
{
	if (rhashtable_remove_fast(&rn->table, &e->node, nfg_rtc_params))
		return false;
	call_rcu(&e->rcu, nfg_rtc_entry_free_rcu);
	return true;
}

static u8 nfg_rtc_entry_family(const struct nfg_rtc_entry *e)
{
	return e->l.keys.family;
}

/* A purge in progress: nfg_rtc_walk() drives it through nfg_rtc_purge_ops. */
struct nfg_rtc_purge_ctx {
	struct nfg_rtc_net	*rn;
	struct rhashtable_iter	iter;
	bool			(*pred)(const struct nfg_rtc_entry *e,
					const void *arg);
	const void		*arg;
	unsigned int		dropped;
};

static void nfg_rtc_purge_start(void *arg)
	__acquires(RCU)
{
	struct nfg_rtc_purge_ctx *c = arg;

	rhashtable_walk_start(&c->iter);
}

static void *nfg_rtc_purge_next(void *arg)
{
	struct nfg_rtc_purge_ctx *c = arg;
	struct nfg_rtc_entry *e;

	/* -EAGAIN: the table was resized, the walk goes on in the new one. */
	do {
		e = rhashtable_walk_next(&c->iter);
	} while (IS_ERR(e) && PTR_ERR(e) == -EAGAIN);
	return IS_ERR(e) ? NULL : e;
}

static void nfg_rtc_purge_visit(void *entry, void *arg)
{
	struct nfg_rtc_purge_ctx *c = arg;
	struct nfg_rtc_entry *e = entry;

	if ((!c->pred || c->pred(e, c->arg)) && nfg_rtc_entry_drop(c->rn, e))
		c->dropped++;
}

static void nfg_rtc_purge_stop(void *arg)
	__releases(RCU)
{
	struct nfg_rtc_purge_ctx *c = arg;

	rhashtable_walk_stop(&c->iter);
}

static void nfg_rtc_purge_pause(void *arg)
{
	cond_resched();
}

static const struct nfg_rtc_walk_ops nfg_rtc_purge_ops = {
	.start	= nfg_rtc_purge_start,
	.next	= nfg_rtc_purge_next,
	.visit	= nfg_rtc_purge_visit,
	.stop	= nfg_rtc_purge_stop,
	.pause	= nfg_rtc_purge_pause,
};

/*
 * Drop every entry for which @pred says so (NULL: all). Any context that
 * may sleep: the walk holds RCU for at most NFG_RTC_WALK_BATCH entries at
 * a time and reschedules between (a table may hold 16M entries).
 * Concurrent walkers and packet paths are fine (removal is decided by
 * rhashtable_remove_fast()).
 */
unsigned int nfg_rtc_purge(struct nfg_rtc_net *rn,
			   bool (*pred)(const struct nfg_rtc_entry *e,
					const void *arg),
			   const void *arg)
{
	struct nfg_rtc_purge_ctx c = {
		.rn	= rn,
		.pred	= pred,
		.arg	= arg,
	};

	might_sleep();
	rhashtable_walk_enter(&rn->table, &c.iter);
	nfg_rtc_walk(&nfg_rtc_purge_ops, &c, NFG_RTC_WALK_BATCH);
	rhashtable_walk_exit(&c.iter);
	return c.dropped;
}

static bool nfg_rtc_is_family(const struct nfg_rtc_entry *e, const void *arg)
{
	return nfg_rtc_entry_family(e) == *(const u8 *)arg;
}

/* Drop all entries of @family (0: every family); returns how many. */
unsigned int nfg_rtc_flush(struct nfg_rtc_net *rn, u8 family)
{
	if (!family)
		return nfg_rtc_purge(rn, NULL, NULL);
	return nfg_rtc_purge(rn, nfg_rtc_is_family, &family);
}

/* The per-CPU counters of @rn, summed over every possible CPU. */
void nfg_rtc_stats_sum(struct nfg_rtc_net *rn, struct nfg_rtc_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu)
		nfg_rtc_stats_add(sum, per_cpu_ptr(rn->stats, cpu));
}

/* ---- the table and the counters of a netns ------------------------------ */

/* At netns init, before anything else can see @rn's table. */
int nfg_rtc_net_state_init(struct nfg_rtc_net *rn)
{
	int err;

	rn->stats = alloc_percpu(struct nfg_rtc_stats);
	if (!rn->stats)
		return -ENOMEM;
	err = rhashtable_init(&rn->table, &nfg_rtc_params);
	if (err) {
		free_percpu(rn->stats);
		return err;
	}
	return 0;
}

/*
 * At netns exit, once no hook, work or walker of the table is left: drop
 * every entry (each frees itself after a grace period), then the table
 * and the counters.
 */
void nfg_rtc_net_state_exit(struct nfg_rtc_net *rn)
{
	nfg_rtc_flush(rn, 0);
	rhashtable_destroy(&rn->table);
	free_percpu(rn->stats);
}
