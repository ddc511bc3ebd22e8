/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard RTCACHE: per-netns state shared by the target/hooks (rtcache_tg.c)
 * and the genetlink control plane (rtcache_nl.c), both of which call down
 * into rtcache_net.c, which defines it (tests/layering.sh).
 */
#ifndef _NFG_RTCACHE_H
#define _NFG_RTCACHE_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/stddef.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/rhashtable.h>
#include <linux/workqueue.h>
#include <net/netfilter/nf_conntrack_tuple.h>
#include <net/netfilter/nf_conntrack_zones.h>

#include "rtcache_core.h"

/*
 * One learnt route. Immutable once published in the table except
 * @last_used and @served; freed after an RCU grace period, and only then releases
 * @dst (an skb may carry it without a reference inside a read section).
 */
struct nfg_rtc_entry {
	struct rhash_head	node;
	unsigned long		key;		/* nfg_rtc_hkey(ct, dir) */
	struct dst_entry	*dst;		/* counted reference */
	struct nfg_rtc_learnt	l;
	struct nf_conntrack_tuple tuple;	/* original tuple, for the GC lookup */
	struct nf_conntrack_zone zone;
	u8			dir;		/* IP_CT_DIR_ORIGINAL / _REPLY */
	u32			dev_gen;	/* nfg_rtc_net.dev_gen before the lookup */
	unsigned long		learnt;		/* jiffies */
	unsigned long		last_used;	/* jiffies of the last hit (racy, a hint) */
	bool			served;		/* had a hit (written once, racy) */
	struct rcu_head		rcu;
};

/* Per-netns state (net_generic). */
struct nfg_rtc_net {
	struct rhashtable	table;		/* entries; rhashtable's own bucket locks */
	struct nfg_rtc_stats __percpu *stats;
	struct net		*net;
	struct nf_hook_ops	ops[2];		/* PREROUTING, IPv4 and IPv6; priv = this */
	/* Protects @rules, @hooked and @dead (control plane only). */
	struct mutex		lock;
	unsigned int		rules[2];	/* RTCACHE rules per family (0 IPv4, 1 IPv6) */
	bool			hooked[2];
	bool			dead;		/* netns exit ran: no hooks, no GC */
	struct delayed_work	gc;
	/* Only the GC work uses it (one instance at a time). */
	struct rhashtable_iter	gc_iter;
	/*
	 * Netdev generation: bumped by the netdev notifier (under RTNL) on
	 * an interface's down/unregister/carrier loss; read without a lock.
	 * An entry learnt in an older generation is never served.
	 */
	u32			dev_gen;
	/*
	 * Drops the entries of older generations: the notifier only queues
	 * it, so that no table walk runs under RTNL (nfg_rtc_netdev_event()).
	 */
	struct work_struct	purge;
	/* Packets seen per direction before learning: racy hints, no lock. */
	u64			door[NFG_RTC_DOOR_SLOTS];
};

/*
 * The table's parameters. Every user has its own copy, so that the inline
 * rhashtable lookups, inserts and removals fold them as constants (the
 * kernel's own users keep theirs static const in their file).
 */
static const struct rhashtable_params nfg_rtc_params __maybe_unused = {
	.head_offset		= offsetof(struct nfg_rtc_entry, node),
	.key_offset		= offsetof(struct nfg_rtc_entry, key),
	.key_len		= sizeof(unsigned long),
	.automatic_shrinking	= true,
};

/* rtcache_net.c */
extern atomic_t nfg_rtc_live_entries;
extern unsigned int nfg_rtc_net_id;

struct nfg_rtc_net *nfg_rtc_pernet(struct net *net);
unsigned int nfg_rtc_max_entries(void);
int nfg_rtc_net_state_init(struct nfg_rtc_net *rn);
void nfg_rtc_net_state_exit(struct nfg_rtc_net *rn);
void nfg_rtc_entry_free(struct nfg_rtc_entry *e);
void nfg_rtc_entry_free_rcu(struct rcu_head *head);
bool nfg_rtc_entry_drop(struct nfg_rtc_net *rn, struct nfg_rtc_entry *e);
unsigned int nfg_rtc_purge(struct nfg_rtc_net *rn,
			   bool (*pred)(const struct nfg_rtc_entry *e,
					const void *arg),
			   const void *arg);
unsigned int nfg_rtc_flush(struct nfg_rtc_net *rn, u8 family);
void nfg_rtc_stats_sum(struct nfg_rtc_net *rn, struct nfg_rtc_stats *sum);

/* rtcache_nl.c */
int nfg_rtc_nl_init(void);
void nfg_rtc_nl_exit(void);

#endif /* _NFG_RTCACHE_H */
