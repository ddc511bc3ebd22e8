/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard kconnlimit: rule instances, shared by the xt match
 * (kconnlimit_mt.c) and the genetlink control plane (kconnlimit_nl.c).
 */
#ifndef _NFG_KCONNLIMIT_H
#define _NFG_KCONNLIMIT_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netfilter/xt_kconnlimit.h>
#include <linux/types.h>
#include <net/net_namespace.h>

#include "kconnlimit_core.h"

/*
 * One per xt rule (checkentry creates it, destroy frees it). Linked on
 * nfg_kcl_instances so the worker and the control plane find it; @net is
 * compared, and dereferenced only while @net_alive (a rule may outlive its
 * netns). @budget is the netns's (see nfg_kcl_netbudget in kconnlimit_mt.c).
 */
struct nfg_kcl_instance {
	struct list_head	list;	/* nfg_kcl_instances, under nfg_kcl_mutex */
	possible_net_t		net;
	/*
	 * Written under nfg_kcl_mutex: cleared by the netns's pre_exit, after
	 * which the worker no longer passes @net to conntrack lookups; read
	 * by the packet path under a slot lock (READ_ONCE), which then
	 * resolves nothing (no new reference once pre_exit drained the slot).
	 */
	bool			net_alive;
	u32			id;
	char			name[XT_KCONNLIMIT_MAXNAMELEN];
	u8			family;	/* NFPROTO_IPV4 or NFPROTO_IPV6 */
	u8			prefix;
	u8			flags;
	u32			limit;
	__be32			mask[4];
	struct nfg_kcl_table	table;
};

/* Control plane only: instance list (link/unlink), ids, the GC walk. */
extern struct mutex nfg_kcl_mutex;
extern struct list_head nfg_kcl_instances;

/* kconnlimit_mt.c: connections remembered by the rules of @net (its budget). */
unsigned long nfg_kcl_net_conns(struct net *net);

/* kconnlimit_nl.c */
int nfg_kcl_nl_init(void);
void nfg_kcl_nl_exit(void);

#endif /* _NFG_KCONNLIMIT_H */
