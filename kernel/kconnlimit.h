/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard kconnlimit: rule instances and per-netns state, shared by the
 * xt match (kconnlimit_mt.c) and the genetlink control plane
 * (kconnlimit_nl.c). The instance list and the per-netns state are
 * defined by the control plane, below the match: the match calls down
 * into it, never the reverse (tests/layering.sh).
 */
#ifndef _NFG_KCONNLIMIT_H
#define _NFG_KCONNLIMIT_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/netfilter/xt_kconnlimit.h>
#include <linux/types.h>
#include <net/net_namespace.h>

#include "kconnlimit_core.h"

/*
 * One per table: an unnamed xt rule has its own, named rules of one netns
 * with equal @params share one (table.users counts them, see
 * kconnlimit_mt_check()). The first rule's checkentry creates it, the last
 * rule's destroy frees it. Linked on nfg_kcl_instances so the worker and
 * the control plane find it; @net is compared, and dereferenced only while
 * @net_alive (a rule may outlive its netns). @budget is the netns's (see
 * nfg_kcl_netbudget).
 */
struct nfg_kcl_instance {
	struct list_head	list;	/* nfg_kcl_instances, under nfg_kcl_mutex */
	/*
	 * Named instances: the netns's list (nfg_kcl_net.named) that
	 * checkentry searches, under nfg_kcl_mutex; unlinked (empty) once the
	 * netns exits. Unnamed ones: always empty.
	 */
	struct list_head	net_list;
	possible_net_t		net;
	/*
	 * Written under nfg_kcl_mutex: cleared by the netns's pre_exit, after
	 * which the worker no longer passes @net to conntrack lookups; read
	 * by the packet path under a slot lock (READ_ONCE), which then
	 * resolves nothing (no new reference once pre_exit drained the slot).
	 */
	bool			net_alive;
	u32			id;
	/* Immutable: name, family (NFPROTO_IPV4 or _IPV6), mask, direction. */
	struct nfg_kcl_params	params;
	/*
	 * Shown by the control plane: the flags and limit of the rule checked
	 * last (a legacy table replacement checks all of its rules again), under
	 * nfg_kcl_mutex. Verdicts use each rule's own.
	 */
	u8			flags;
	u32			limit;
	__be32			mask[4];
	struct nfg_kcl_table	table;
};

/*
 * The remembered connections of one netns, capped by max_conns. Shared by
 * the netns and each of its rule instances, freed by the last of them:
 * a rule may be destroyed after its netns.
 */
struct nfg_kcl_netbudget {
	struct nfg_kcl_budget	b;
	refcount_t		ref;
};

/* Per netns (net_generic, registered by kconnlimit_mt.c). */
struct nfg_kcl_net {
	struct nfg_kcl_netbudget *budget;
	/* Last instance id given in this netns, under nfg_kcl_mutex. */
	u32			next_id;
	/* Named instances of this netns (nfg_kcl_instance.net_list), ditto. */
	struct list_head	named;
};

/* ---- kconnlimit_nl.c ---- */

/* Control plane only: instance list (link/unlink), ids, the GC walk. */
extern struct mutex nfg_kcl_mutex;
extern struct list_head nfg_kcl_instances;

extern unsigned int nfg_kcl_net_id;
struct nfg_kcl_net *nfg_kcl_pernet(struct net *net);

int nfg_kcl_nl_init(void);
void nfg_kcl_nl_exit(void);

#endif /* _NFG_KCONNLIMIT_H */
