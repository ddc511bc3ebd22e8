/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard rangeset: named, per-netns set objects shared by the genetlink
 * control plane (rangeset_nl.c) and the xt match (rangeset_mt.c).
 */
#ifndef _NFG_RANGESET_H
#define _NFG_RANGESET_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/netfilter/xt_rangeset.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "rangeset_core.h"

struct mem_cgroup;
struct net;

/*
 * A named set. Lifetime: refcounted. The netns list holds one reference
 * while the set is linked, every xt rule using it holds one (and counts
 * itself in @rules), and a running dump holds one. The last put frees the
 * tree at once (a dump's .done, which may run in softirq, hands that to
 * @free_work instead) and the rest after an RCU grace period; it never
 * touches the netns, so rules may be torn down after the netns is gone.
 */
struct nfg_rangeset {
	struct list_head	list;	/* nfg_rs_net.sets, under its mutex */
	char			name[XT_RANGESET_MAXNAMELEN]; /* ditto */
	u8			family;	/* NFPROTO_IPV4 or NFPROTO_IPV6 */
	refcount_t		ref;
	atomic_t		rules;	/* xt rules referencing the set */
	struct nfg_rs_core	core;
	/*
	 * Collects expired ranges (nfg_rs_core_expire()) at the set's
	 * earliest expiry, rounded up to a tick; cancelled (sync) by the
	 * last put, before the tree is freed.
	 */
	struct delayed_work	expire_work;
	/*
	 * Serialises arming expire_work: whoever arms it last has read the
	 * latest core.next_expiry, so an earlier expiry is never overwritten
	 * by a stale later one. Process context only, never on a packet path.
	 */
	spinlock_t		expire_lock;
	/*
	 * Looks at the packet path's dynamic entries a tick after the
	 * first one (nfg_rs_fold_kick()) and every tick while some are
	 * pending, and folds them into the array when it pays
	 * (nfg_rs_core_fold_lazy()): one publication per tick at most, and
	 * one per hashful of adds (NFG_RS_FOLD_LOAD per bucket) in a flood.
	 * Cancelled (sync) by the last put, before expire_work, which it
	 * arms.
	 */
	struct delayed_work	fold_work;
	struct work_struct	free_work;	/* last put from a dump's .done */
	/*
	 * The creator's memory cgroup: the fold and expiry works charge
	 * what they allocate to it (set_active_memcg()), as the control
	 * plane's requests are charged to their caller. May be NULL.
	 */
	struct mem_cgroup	*memcg;
	struct rcu_head		rcu;
};

/* rangeset_nl.c */
struct nfg_rangeset *nfg_rs_rule_get(struct net *net, const char *name,
				     u8 family);
void nfg_rs_rule_put(struct nfg_rangeset *set);
void nfg_rs_fold_kick(struct nfg_rangeset *set);
int nfg_rs_nl_init(void);
void nfg_rs_nl_exit(void);

/* rangeset_tg.c */
int nfg_rs_tg_register(void);
void nfg_rs_tg_unregister(void);

#endif /* _NFG_RANGESET_H */
