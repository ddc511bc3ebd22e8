/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard SYNCOOKIE: per-netns state shared by the xt target
 * (syncookie_tg.c) and the genetlink control plane (syncookie_nl.c).
 */
#ifndef _NFG_SYNCOOKIE_H
#define _NFG_SYNCOOKIE_H

#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <net/tcp.h>

#include "syncookie_core.h"

struct net;

/* Per-CPU counters of everything the packet path decides. */
struct nfg_sc_stats {
	u64	syn_seen;	/* SYNs from sources not on the allowlist */
	u64	cookie_sent;	/* SYN-ACKs with a cookie sent */
	u64	ack_valid;	/* ACKs with a valid cookie */
	u64	ack_invalid;	/* ACKs with a bad cookie, not of a known flow: dropped */
	u64	allowlist_hit;	/* SYNs from allowlisted sources: passed */
	u64	allowlist_add;	/* sources added (by a valid cookie ACK) */
	u64	allowlist_evict; /* entries evicted to stay within the bound */
	u64	proxied;	/* connections opened on the client's behalf */
	u64	malformed;	/* dropped: see the man page's verdict table */
	u64	send_fail;	/* SYN-ACKs that could not be built or routed */
	u64	sent_inplace;	/* of cookie_sent: the SYN rewritten in place */
	u64	syn_resent;	/* proxy: SYNs to the server sent again */
	u64	after_conntrack; /* passed: conntrack ran first (nft chain after it) */
};

#define NFG_SC_NSTATS	(sizeof(struct nfg_sc_stats) / sizeof(u64))

/*
 * A netns' SYNCOOKIE state. A netns gets one on its first use (its first
 * SYNCOOKIE rule, or an allowlist or secret command that writes), not
 * when it is created: namespaces that never use the target pay for no
 * table, counters or worker. Allocated from, and charged to, the memory
 * cgroup of the process that made that first use; so are the allowlist's
 * entries, whoever adds them (see nfg_sc_allowlist_add()). Freed at netns
 * exit.
 */
struct nfg_sc_net {
	struct nfg_sc_allowlist	al;
	struct nfg_sc_stats __percpu *stats;
	/* Immutable once published; replaced under @secret_lock, freed by RCU. */
	struct nfg_sc_secret_rcu __rcu *secret;
	struct mutex		secret_lock;	/* secret updates (control plane) */
	struct delayed_work	gc_work;	/* expiry sweep */
	struct mem_cgroup	*memcg;		/* charged for entries; may be NULL */
	/*
	 * Set by the netns' pre_exit: packets still arriving on a dying netns'
	 * devices pass untouched; exit frees the state after a grace period.
	 */
	bool			dying;
};

struct nfg_sc_secret_rcu {
	struct nfg_sc_secret	s;
	struct rcu_head		rcu;
};

/*
 * Proxy mode's hold on nf_synproxy_core's hooks in one netns, per family.
 * nf_synproxy_ipv4/6_init() and _fini() count their users in a plain int
 * (register on 0 -> 1, unregister on 1 -> 0) under no lock of their own,
 * and our rules come and go from three contexts at once: iptables-legacy's
 * checkentry and destroy (no lock), nf_tables' checkentry (its commit
 * mutex) and its destroy (a work item, after the command returned). A lost
 * update there leaves the hooks registered with no rule, or missing under
 * a rule. @lock serialises this module's calls, and @refs makes it one user
 * of each family's hooks whatever its number of rules. Lives as long as
 * the netns (net_generic), not the state above: rules of a dying netns may be
 * destroyed after nfg_sc_net has gone.
 */
struct nfg_sc_hooks {
	struct mutex	lock;		/* @refs and the synproxy init/fini calls */
	unsigned int	refs[2];	/* proxy rules: [0] IPv4, [1] IPv6 */
};

/* syncookie_nl.c */
extern unsigned int nfg_sc_allowlist_max;
struct nfg_sc_hooks *nfg_sc_hooks(const struct net *net);
/* The netns' state, NULL before its first use (never under a rule). */
struct nfg_sc_net *nfg_sc_pernet(const struct net *net);
/* The netns' state, made on first use (process context): ERR_PTR on failure. */
struct nfg_sc_net *nfg_sc_pernet_get(struct net *net);
/* Add @k (or refresh it) for @timeout s, charged to the state's memcg. */
int nfg_sc_allowlist_add(struct nfg_sc_net *sn, const struct nfg_sc_key *k,
			 u32 timeout);
int nfg_sc_nl_init(void);
void nfg_sc_nl_exit(void);
void nfg_sc_stats_sum(const struct nfg_sc_net *sn, struct nfg_sc_stats *sum);

/* Seconds on the allowlist's clock. */
static inline u32 nfg_sc_now(void)
{
	return (u32)ktime_get_seconds();
}

/*
 * __cookie_v4_check() and __cookie_v6_check() lost their cookie argument
 * in the same 6.8 change (they read th->ack_seq themselves): one probe.
 * Both return the MSS the cookie encodes, 0 when it is not valid.
 */
static inline int nfg_cookie_v4_check(const struct iphdr *iph,
				      const struct tcphdr *th)
{
#ifdef HAVE_COOKIE_V4_CHECK_U32
	return __cookie_v4_check(iph, th);
#else
	return __cookie_v4_check(iph, th, ntohl(th->ack_seq) - 1);
#endif
}

static inline int nfg_cookie_v6_check(const struct ipv6hdr *ip6h,
				      const struct tcphdr *th)
{
#ifdef HAVE_COOKIE_V4_CHECK_U32
	return __cookie_v6_check(ip6h, th);
#else
	return __cookie_v6_check(ip6h, th, ntohl(th->ack_seq) - 1);
#endif
}

#endif /* _NFG_SYNCOOKIE_H */
