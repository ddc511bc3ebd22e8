// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard RTCACHE: xtables target "RTCACHE" (IPv4 and IPv6), the per-netns
 * PREROUTING hooks that hand out cached routes, the GC, the netdev
 * notifier, /proc/net/stat/nfguard_rtcache and module init/exit.
 *
 *   -t mangle|filter -A FORWARD|INPUT ... -j RTCACHE
 *
 * The per-netns state it works on (the table, its entries' lifetime,
 * flush, counters, the bound) is rtcache_net.c's, below this file and the
 * control plane. See the theory of operation in rtcache_core.c.
 *
 * Packet paths: the hook reads the table under RCU (rhashtable lookup, no
 * lock); learning and dropping stale entries take only the rhashtable's
 * per-bucket lock; counters are per-CPU. The per-netns mutex is control
 * plane only.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/hash.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/netfilter_bridge.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/netfilter/x_tables.h>
#include <linux/percpu.h>
#include <linux/proc_fs.h>
#include <linux/rhashtable.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/dsfield.h>
#include <net/dst.h>
#include <net/dst_metadata.h>
#include <net/genetlink.h>
#include <net/ip6_fib.h>
#include <net/ipv6.h>
#include <net/lwtunnel.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/xfrm.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_zones.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_RTCACHE.h>

#include "rtcache.h"

#define NFG_RTC_PROC_NAME	"nfguard_rtcache"
#define NFG_RTC_GC_INTERVAL	HZ		/* between GC rounds */
#define NFG_RTC_GC_BUDGET	1024		/* entries examined per round */
#define NFG_RTC_GC_MIN_AGE	HZ		/* younger entries' conntrack may be unconfirmed */
#define NFG_RTC_IDLE_EVICT	HZ		/* idle time before eviction under pressure */

static unsigned int learn_after = NFG_RTC_DEFAULT_LEARN_AFTER;
module_param(learn_after, uint, 0644);
MODULE_PARM_DESC(learn_after, "learn a direction's route on its Nth packet (1..255, default 2)");

static unsigned int nfg_rtc_learn_after(void)
{
	return nfg_rtc_clamp_learn_after(READ_ONCE(learn_after));
}

static unsigned int nfg_rtc_fam_idx(u8 family)
{
	return family == NFPROTO_IPV6;
}

/* ---- entries ----------------------------------------------------------- */

/*
 * The entry's route if it may still be used. A device that is unregistered
 * (deleted, or moved to another netns) hands the routes still pointing at
 * it to blackhole_netdev (dst_dev_put(), rt_flush_dev(),
 * rt6_uncached_list_flush_dev()), which drops every packet: such a route
 * is stale whatever dst_check() says.
 */
static struct dst_entry *nfg_rtc_entry_dst(const struct nfg_rtc_entry *e)
{
	/* Written under readers (WRITE_ONCE() on newer kernels). */
	if (READ_ONCE(e->dst->dev) == blackhole_netdev)
		return NULL;
	return dst_check(e->dst, e->l.cookie);
}

/* ---- what is never cached ----------------------------------------------- */

/* Checks common to the hook and the target: the packet and its conntrack. */
static u32 nfg_rtc_skip_skb(const struct sk_buff *skb, const struct nf_conn *ct)
{
	u32 skip = 0;

	if (!ct || nf_ct_is_template(ct))
		return NFG_RTC_SKIP_UNTRACKED;
	if (test_bit(IPS_OFFLOAD_BIT, &ct->status))
		skip |= NFG_RTC_SKIP_OFFLOAD;
	if (skb->pkt_type != PACKET_HOST)
		skip |= NFG_RTC_SKIP_MCAST;
	if (secpath_exists(skb))
		skip |= NFG_RTC_SKIP_XFRM;
#if IS_ENABLED(CONFIG_BRIDGE_NETFILTER)
	if (nf_bridge_info_exists(skb))
		skip |= NFG_RTC_SKIP_BRIDGED;
#endif
	return skip;
}

/*
 * The input device. In a VRF, PREROUTING runs twice (with the enslaved
 * device, then with the VRF device: vrf_ip_rcv(), vrf_ip6_rcv()) and
 * FORWARD/INPUT see the VRF device, so the keys the target learns never
 * match the first pass, which would drop the entry on every packet: learn
 * and invalidate, zero hits. Neither the VRF device nor its slaves are
 * cached. Nor is traffic received on loopback.
 */
static u32 nfg_rtc_skip_dev(const struct net_device *in)
{
	if (!in)
		return 0;
	if (netif_is_l3_master(in) || netif_is_l3_slave(in))
		return NFG_RTC_SKIP_L3MDEV;
	/*
	 * A packet looped back keeps the route it was sent with, so the
	 * hook never serves it: learning it would only fill the table
	 * (IPv4 refuses output routes anyway; an IPv6 one looks the same).
	 */
	if (in->flags & IFF_LOOPBACK)
		return NFG_RTC_SKIP_LOOPBACK;
	return 0;
}

/* The target's extra checks: the route the packet got. */
static u32 nfg_rtc_skip_dst(const struct sk_buff *skb, u8 family)
{
	const struct dst_entry *dst = skb_dst(skb);
	u32 skip = 0;

	if (!dst)
		return NFG_RTC_SKIP_NOROUTE;
	if (skb_metadata_dst(skb))
		return NFG_RTC_SKIP_METADATA;
	if (dst_xfrm(dst))
		skip |= NFG_RTC_SKIP_XFRM;
	/* The route hands the packet to a tunnel that routes it again. */
	if (lwtunnel_input_redirect(dst->lwtstate))
		skip |= NFG_RTC_SKIP_METADATA;
	/*
	 * Only routes that dst_check() validates through ->check() (IPv4 and
	 * IPv6 routes are allocated so): NONE could never be found stale,
	 * DEAD/KILL already are.
	 */
	if (dst->obsolete != DST_OBSOLETE_FORCE_CHK)
		skip |= NFG_RTC_SKIP_NOROUTE;
	if (family == NFPROTO_IPV4) {
		const struct rtable *rt = skb_rtable(skb);

		if (!rt_is_input_route(rt))
			skip |= NFG_RTC_SKIP_NOROUTE;
		if (rt->rt_flags & (RTCF_MULTICAST | RTCF_BROADCAST) ||
		    rt->rt_type == RTN_MULTICAST ||
		    rt->rt_type == RTN_BROADCAST)
			skip |= NFG_RTC_SKIP_MCAST;
	} else {
		if (ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr))
			skip |= NFG_RTC_SKIP_MCAST;
	}
	return skip;
}

/* The validation keys of a packet, as its headers and skb say now. */
static bool nfg_rtc_pkt_keys(const struct sk_buff *skb, u8 family,
			     const struct net_device *in,
			     struct nfg_rtc_keys *k)
{
	memset(k, 0, sizeof(*k));
	k->family = family;
	k->mark = skb->mark;
	k->iif = in ? in->ifindex : 0;
	if (family == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		if (ipv4_is_multicast(iph->daddr) || ipv4_is_lbcast(iph->daddr))
			return false;
		k->saddr[0] = iph->saddr;
		k->daddr[0] = iph->daddr;
		k->dscp = iph->tos & NFG_RTC_DSCP_MASK;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		if (ipv6_addr_is_multicast(&ip6h->daddr))
			return false;
		memcpy(k->saddr, &ip6h->saddr, sizeof(k->saddr));
		memcpy(k->daddr, &ip6h->daddr, sizeof(k->daddr));
		k->dscp = ipv6_get_dsfield(ip6h) & NFG_RTC_DSCP_MASK;
	}
	return true;
}

/* The door slot of a direction's hash (nfg_rtc_door_hash()). */
static u64 *nfg_rtc_door_slot(struct nfg_rtc_net *rn, u64 hash)
{
	return &rn->door[hash & (NFG_RTC_DOOR_SLOTS - 1)];
}

/*
 * @e was dropped because a packet's keys differed: a strike for its
 * direction if it never served (nfg_rtc_door_strike()). Lock-free like
 * the target's use of the door: the slot is read and written whole.
 */
static void nfg_rtc_door_churn(struct nfg_rtc_net *rn,
			       const struct nfg_rtc_entry *e)
{
	u64 hash = nfg_rtc_door_hash(e->key, e->l.ct_id);
	u64 *p = nfg_rtc_door_slot(rn, hash);
	u64 slot = READ_ONCE(*p);

	nfg_rtc_door_strike(&slot, hash, READ_ONCE(e->served));
	WRITE_ONCE(*p, slot);
}

/* ---- lookup-time notes ------------------------------------------------- */

/*
 * What the PREROUTING hook noted about a packet it let go to the FIB
 * lookup: the netns's netdev generation before that lookup, which the
 * entry keeps (an event after the lookup must invalidate it), and for
 * IPv6 the serial counter, which the target compares with the cookie of
 * the route it learns (see "Learning what was looked up" in
 * rtcache_core.c). The skb has no room of its own for it, so
 * it is kept per CPU, in a few slots picked by the skb's address: the
 * hook, the lookup and the target of a packet run on one CPU with BH
 * disabled, and the list receive path runs the hook for a whole batch
 * before routing it (hence several slots). A packet that was queued in
 * between, or whose slot another packet took, finds no note of its own and
 * is not learnt: a later packet of its flow is. The pointers are compared,
 * never dereferenced; a slot left by a freed skb at the same address holds
 * an older serial, which can only refuse. No lock: a slot is read or
 * written with preemption disabled (hooks after an NFQUEUE verdict, and
 * nft_compat targets, may run in process context), and a packet path that
 * interrupts another on the CPU can only overwrite a slot, which refuses.
 */
#define NFG_RTC_NOTE_BITS	4

struct nfg_rtc_note {
	const struct sk_buff	*skb;
	const struct net	*net;
	u32			serial;		/* IPv6 only */
	u32			dev_gen;	/* nfg_rtc_net.dev_gen */
};

struct nfg_rtc_notes {
	struct nfg_rtc_note	slot[1 << NFG_RTC_NOTE_BITS];
};

static DEFINE_PER_CPU(struct nfg_rtc_notes, nfg_rtc_notes);

static unsigned int nfg_rtc_note_idx(const struct sk_buff *skb)
{
	return hash_ptr(skb, NFG_RTC_NOTE_BITS);
}

/* The hook lets @skb go to the FIB lookup: note what it is based on. */
static void nfg_rtc_note(struct nfg_rtc_net *rn, const struct sk_buff *skb,
			 const struct nf_hook_state *state)
{
	struct nfg_rtc_note *n;
	u32 serial = 0, gen;

	gen = READ_ONCE(rn->dev_gen);
	if (state->pf == NFPROTO_IPV6)
		serial = rt_genid_ipv6(state->net);
	/*
	 * A FIB change links the route, then takes a new serial (a full
	 * barrier), then writes it to the nodes; a netdev event changes the
	 * FIB before it bumps the generation (nfg_rtc_netdev_event()): what
	 * is read here and includes a change must not be followed by a
	 * lookup that misses it.
	 */
	smp_rmb();
	n = &get_cpu_ptr(&nfg_rtc_notes)->slot[nfg_rtc_note_idx(skb)];
	n->skb = skb;
	n->net = state->net;
	n->serial = serial;
	n->dev_gen = gen;
	put_cpu_ptr(&nfg_rtc_notes);
}

/* The hook's note for @skb in @net, if this CPU still has it. */
static bool nfg_rtc_noted(const struct sk_buff *skb, const struct net *net,
			  struct nfg_rtc_note *note)
{
	const struct nfg_rtc_note *n;
	bool mine;

	n = &get_cpu_ptr(&nfg_rtc_notes)->slot[nfg_rtc_note_idx(skb)];
	mine = n->skb == skb && n->net == net;
	if (mine)
		*note = *n;
	put_cpu_ptr(&nfg_rtc_notes);
	return mine;
}

/* ---- PREROUTING: hand out the cached route ------------------------------ */

static unsigned int nfg_rtc_hook(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	struct nfg_rtc_net *rn = priv;
	enum nfg_rtc_verdict verdict;
	struct nfg_rtc_entry *e;
	enum ip_conntrack_info ctinfo;
	struct nfg_rtc_keys k;
	struct dst_entry *dst;
	struct nf_conn *ct;
	unsigned long key;

	/* A tunnel's metadata dst, or a route someone already chose. */
	if (skb_dst(skb) || nfg_rtc_skip_dev(state->in))
		return NF_ACCEPT;
	ct = nf_ct_get(skb, &ctinfo);
	/*
	 * A new connection's first packet: nothing can be cached for it, but
	 * with learn_after 1 the target learns its route.
	 */
	if (ct && !nf_ct_is_confirmed(ct)) {
		nfg_rtc_note(rn, skb, state);
		return NF_ACCEPT;
	}
	if (nfg_rtc_skip_skb(skb, ct))
		return NF_ACCEPT;
	if (!nfg_rtc_pkt_keys(skb, state->pf, state->in, &k))
		return NF_ACCEPT;

	key = nfg_rtc_hkey(ct, CTINFO2DIR(ctinfo));
	e = rhashtable_lookup(&rn->table, &key, nfg_rtc_params);
	if (!e) {
		nfg_rtc_note(rn, skb, state);
		this_cpu_inc(rn->stats->miss);
		return NF_ACCEPT;
	}
	/* Learnt before a netdev event in this netns: never served. */
	if (e->dev_gen != READ_ONCE(rn->dev_gen))
		verdict = NFG_RTC_STALE_DEV;
	else
		verdict = nfg_rtc_validate(&e->l, nf_ct_get_id(ct), &k);
	if (verdict == NFG_RTC_HIT) {
		dst = nfg_rtc_entry_dst(e);
		if (dst) {
			unsigned long now = jiffies;

			skb_dst_set_noref(skb, dst);
			/*
			 * List receive (ip_list_rcv_finish, ip6_list_rcv_finish)
			 * reuses a packet's route for the next packets to the
			 * same address unless it was chosen per flow. This one
			 * was: it belongs to this conntrack (an ECMP next hop,
			 * mark, DSCP, input interface), never to its neighbours.
			 */
			if (state->pf == NFPROTO_IPV4)
				IPCB(skb)->flags |= IPSKB_MULTIPATH;
			else
				IP6CB(skb)->flags |= IP6SKB_MULTIPATH;
			/* Write only when it changes: no cache line ping-pong. */
			if (READ_ONCE(e->last_used) != now)
				WRITE_ONCE(e->last_used, now);
			if (!READ_ONCE(e->served))
				WRITE_ONCE(e->served, true);
			this_cpu_inc(rn->stats->hit);
			return NF_ACCEPT;
		}
	}
	/*
	 * Stale: the normal lookup runs and the target learns again, at once
	 * unless the keys changed under an entry that never served a packet
	 * (see nfg_rtc_door_strike()).
	 */
	if (nfg_rtc_entry_drop(rn, e) && verdict == NFG_RTC_STALE_KEYS)
		nfg_rtc_door_churn(rn, e);
	nfg_rtc_note(rn, skb, state);
	this_cpu_inc(rn->stats->invalid);
	return NF_ACCEPT;
}

/* ---- the target: learn the route the packet got ------------------------- */

/*
 * Nothing is cached for this packet's direction: is it the one to learn on
 * (learn_after; see "Learning late" in rtcache_core.c)? Lock-free: the
 * door's slots are racy hints, read and written whole.
 */
static bool nfg_rtc_door(struct nfg_rtc_net *rn, unsigned long key,
			 const struct nf_conn *ct, unsigned int dir,
			 unsigned int n)
{
	/* A confirmed conntrack's first packet went before this one. */
	u32 known = dir == IP_CT_DIR_ORIGINAL && nf_ct_is_confirmed(ct);
	u64 hash, slot, old;
	u64 *p;

	/*
	 * Even when @known alone decides (the default's original direction),
	 * the slot may hold strikes (nfg_rtc_door_strike()): always ask it.
	 */
	hash = nfg_rtc_door_hash(key, nf_ct_get_id(ct));
	p = nfg_rtc_door_slot(rn, hash);
	slot = READ_ONCE(*p);
	old = slot;
	if (nfg_rtc_door_pass(&slot, hash, known, n))
		return true;
	if (slot != old)
		WRITE_ONCE(*p, slot);
	return false;
}

static unsigned int nfg_rtc_tg(struct sk_buff *skb,
			       const struct xt_action_param *par)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(xt_net(par));
	u8 family = xt_family(par);
	struct nfg_rtc_entry *e, *old;
	enum ip_conntrack_info ctinfo;
	struct nfg_rtc_note note;
	struct dst_entry *dst;
	struct nfg_rtc_keys k;
	struct nf_conn *ct;
	unsigned long key;
	u32 cookie = 0;
	unsigned int n;

	ct = nf_ct_get(skb, &ctinfo);
	n = nfg_rtc_learn_after();
	/*
	 * The cheapest test first: a new connection's first packet (its
	 * conntrack is confirmed after this hook) is never the one to learn
	 * on unless learn_after is 1, and every packet of a flood of new
	 * connections is such a packet.
	 */
	if (n > 1 && ct && !nf_ct_is_confirmed(ct) &&
	    CTINFO2DIR(ctinfo) == IP_CT_DIR_ORIGINAL)
		return XT_CONTINUE;
	if (nfg_rtc_skip_skb(skb, ct) || nfg_rtc_skip_dev(xt_in(par)) ||
	    nfg_rtc_skip_dst(skb, family))
		return XT_CONTINUE;
	if (!nfg_rtc_pkt_keys(skb, family, xt_in(par), &k))
		return XT_CONTINUE;
	dst = skb_dst(skb);
	key = nfg_rtc_hkey(ct, CTINFO2DIR(ctinfo));

	/* The common case: this packet got its route from this very entry. */
	old = rhashtable_lookup(&rn->table, &key, nfg_rtc_params);
	if (old && old->dst == dst && nfg_rtc_keys_equal(&old->l.keys, &k))
		return XT_CONTINUE;
	if (READ_ONCE(rn->dead))
		return XT_CONTINUE;
	if (!old && !nfg_rtc_door(rn, key, ct, CTINFO2DIR(ctinfo), n))
		return XT_CONTINUE;
	if (!old && !nfg_rtc_admit(atomic_read(&rn->table.nelems),
				   nfg_rtc_max_entries())) {
		this_cpu_inc(rn->stats->evict);
		return XT_CONTINUE;
	}
	/*
	 * Only with the hook's note of this packet's lookup, and for IPv6
	 * only if the route did not change after it.
	 */
	if (!nfg_rtc_noted(skb, xt_net(par), &note))
		return XT_CONTINUE;
	if (family == NFPROTO_IPV6) {
		cookie = rt6_get_cookie(container_of(dst, struct rt6_info, dst));
		if (!nfg_rtc_cookie_fresh(cookie, note.serial))
			return XT_CONTINUE;
	}

	e = kmalloc(sizeof(*e), GFP_ATOMIC);
	if (!e)
		return XT_CONTINUE;
	if (!dst_hold_safe(dst)) {
		kfree(e);
		return XT_CONTINUE;
	}
	atomic_inc(&nfg_rtc_live_entries);
	e->key = key;
	e->dst = dst;
	e->l.keys = k;
	e->l.ct_id = nf_ct_get_id(ct);
	e->l.cookie = cookie;
	e->dev_gen = note.dev_gen;
	e->tuple = ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	e->zone = *nf_ct_zone(ct);
	e->dir = CTINFO2DIR(ctinfo);
	e->learnt = jiffies;
	e->last_used = e->learnt;
	e->served = false;

	old = rhashtable_lookup_get_insert_fast(&rn->table, &e->node,
						nfg_rtc_params);
	if (old) {
		/* A stale or different route for the same flow: replace it. */
		if (IS_ERR(old) ||
		    rhashtable_replace_fast(&rn->table, &old->node, &e->node,
					    nfg_rtc_params)) {
			nfg_rtc_entry_free(e);	/* never published */
			return XT_CONTINUE;
		}
		call_rcu(&old->rcu, nfg_rtc_entry_free_rcu);
	}
	this_cpu_inc(rn->stats->learn);
	return XT_CONTINUE;
}

/* ---- rules: hooks exist only in netns with RTCACHE rules --------------- */

static int nfg_rtc_rule_get(struct net *net, u8 family)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(net);
	unsigned int i = nfg_rtc_fam_idx(family);
	int err = 0;

	mutex_lock(&rn->lock);
	if (rn->dead) {
		err = -ENODEV;
		goto out;
	}
	if (!rn->rules[i]) {
		err = nf_register_net_hook(net, &rn->ops[i]);
		if (err)
			goto out;
		rn->hooked[i] = true;
		if (!rn->rules[!i])
			queue_delayed_work(system_power_efficient_wq, &rn->gc,
					   NFG_RTC_GC_INTERVAL);
	}
	rn->rules[i]++;
out:
	mutex_unlock(&rn->lock);
	return err;
}

static void nfg_rtc_rule_put(struct net *net, u8 family)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(net);
	unsigned int i = nfg_rtc_fam_idx(family);
	bool last;

	mutex_lock(&rn->lock);
	if (WARN_ON_ONCE(!rn->rules[i]))
		goto out;
	last = --rn->rules[i] == 0;
	if (last && rn->hooked[i]) {
		nf_unregister_net_hook(net, &rn->ops[i]);
		rn->hooked[i] = false;
	}
	/* The family's routes go with its last rule: no reference left behind. */
	if (last && !rn->dead)
		nfg_rtc_flush(rn, family);
out:
	mutex_unlock(&rn->lock);
}

static int nfg_rtc_tg_check(const struct xt_tgchk_param *par)
{
	const struct xt_rtcache_tginfo *info = par->targinfo;
	unsigned int bad_hooks = par->hook_mask &
				 ~((1 << NF_INET_FORWARD) | (1 << NF_INET_LOCAL_IN));
	int err;

	if (info->flags & ~XT_RTCACHE_FLAGS_ALL || info->pad) {
		pr_info_ratelimited("RTCACHE: unknown flags 0x%x\n", info->flags);
		return -EINVAL;
	}
	/*
	 * Legacy iptables: by the table's name. nft_compat passes the nft
	 * table's name, which says little: any nft chain at FORWARD or INPUT
	 * runs after conntrack attached the packet's entry in PREROUTING,
	 * which is all RTCACHE needs; only "nat" is refused there too
	 * (iptables-nft's nat chains see a connection's first packet alone).
	 * The chain's type is not shown to checkentry: a native nft chain of
	 * type nat in a table of another name is accepted (man page).
	 */
	if (par->nft_compat ? !strcmp(par->table, "nat") :
	    strcmp(par->table, "mangle") && strcmp(par->table, "filter")) {
		pr_info_ratelimited("RTCACHE: only valid in the mangle or filter table, not %s\n",
				    par->table);
		return -EINVAL;
	}
	/* 0: an nft non-base chain, checked against .hooks when linked. */
	if (bad_hooks) {
		pr_info_ratelimited("RTCACHE: only valid in FORWARD or INPUT (hook mask 0x%x)\n",
				    par->hook_mask);
		return -EINVAL;
	}
	err = nf_ct_netns_get(par->net, par->family);
	if (err) {
		pr_info_ratelimited("RTCACHE: cannot load conntrack for family %u\n",
				    par->family);
		return err;
	}
	err = nfg_rtc_rule_get(par->net, par->family);
	if (err) {
		nf_ct_netns_put(par->net, par->family);
		pr_info_ratelimited("RTCACHE: cannot register the PREROUTING hook: %d\n",
				    err);
		return err;
	}
	return 0;
}

static void nfg_rtc_tg_destroy(const struct xt_tgdtor_param *par)
{
	nfg_rtc_rule_put(par->net, par->family);
	nf_ct_netns_put(par->net, par->family);
}

static struct xt_target nfg_rtc_tg_reg[] __read_mostly = {
	{
		.name		= "RTCACHE",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.hooks		= (1 << NF_INET_FORWARD) | (1 << NF_INET_LOCAL_IN),
		.checkentry	= nfg_rtc_tg_check,
		.target		= nfg_rtc_tg,
		.destroy	= nfg_rtc_tg_destroy,
		.targetsize	= sizeof(struct xt_rtcache_tginfo),
		.me		= THIS_MODULE,
	},
	{
		.name		= "RTCACHE",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.hooks		= (1 << NF_INET_FORWARD) | (1 << NF_INET_LOCAL_IN),
		.checkentry	= nfg_rtc_tg_check,
		.target		= nfg_rtc_tg,
		.destroy	= nfg_rtc_tg_destroy,
		.targetsize	= sizeof(struct xt_rtcache_tginfo),
		.me		= THIS_MODULE,
	},
};

/* ---- GC: entries die with their conntrack ------------------------------ */

/* Does the entry's conntrack still exist, as the same connection? */
static bool nfg_rtc_ct_alive(struct net *net, const struct nfg_rtc_entry *e)
{
	const struct nf_conntrack_tuple_hash *h;
	struct nf_conn *ct;
	bool alive;

	h = nf_conntrack_find_get(net, &e->zone, &e->tuple);
	if (!h)
		return false;
	ct = nf_ct_tuplehash_to_ctrack(h);
	alive = nfg_rtc_hkey(ct, e->dir) == e->key && !nf_ct_is_dying(ct) &&
		nf_ct_get_id(ct) == e->l.ct_id;
	nf_ct_put(ct);
	return alive;
}

static void nfg_rtc_gc_work(struct work_struct *work)
{
	struct nfg_rtc_net *rn = container_of(to_delayed_work(work),
					      struct nfg_rtc_net, gc);
	unsigned int max = nfg_rtc_max_entries(), budget = NFG_RTC_GC_BUDGET;
	unsigned long delay = NFG_RTC_GC_INTERVAL;
	struct nfg_rtc_entry *e;
	u32 now = jiffies;
	bool drop;

	rhashtable_walk_start(&rn->gc_iter);
	while (budget) {
		e = rhashtable_walk_next(&rn->gc_iter);
		if (!e) {
			/* End of a round: rewind for the next one. */
			rhashtable_walk_stop(&rn->gc_iter);
			rhashtable_walk_exit(&rn->gc_iter);
			rhashtable_walk_enter(&rn->table, &rn->gc_iter);
			goto resched;
		}
		if (IS_ERR(e))
			continue;
		budget--;
		drop = false;
		if (nfg_rtc_gc_evict(atomic_read(&rn->table.nelems), max, now,
				     (u32)READ_ONCE(e->last_used),
				     NFG_RTC_IDLE_EVICT)) {
			if (nfg_rtc_entry_drop(rn, e))
				this_cpu_inc(rn->stats->evict);
			continue;
		}
		/* Left behind by a netdev purge that had walked past. */
		if (e->dev_gen != READ_ONCE(rn->dev_gen))
			drop = true;
		else if (time_after(jiffies, e->learnt + NFG_RTC_GC_MIN_AGE) &&
			 !nfg_rtc_ct_alive(rn->net, e))
			drop = true;
		if (drop)
			nfg_rtc_entry_drop(rn, e);
	}
	rhashtable_walk_stop(&rn->gc_iter);
	/* Budget used up before the end: more to examine soon. */
	delay = HZ / 10;
resched:
	mutex_lock(&rn->lock);
	if (!rn->dead && (rn->rules[0] || rn->rules[1] ||
			  atomic_read(&rn->table.nelems)))
		queue_delayed_work(system_power_efficient_wq, &rn->gc, delay);
	mutex_unlock(&rn->lock);
}

/* ---- netdev events: invalidate the netns's routes ---------------------- */

/*
 * An interface going down or away (deleted, moved to another netns), or
 * losing its carrier, invalidates every entry of its netns: which entries
 * it made stale is not cheap to tell (the FIB's own handlers may already
 * have pointed routes at blackhole_netdev, an entry's input device is only
 * an ifindex), and walking a table of up to 16M entries under RTNL would
 * stall every other netdev operation. So the notifier bumps the netns's
 * @dev_gen, which the hook compares with the generation an entry was
 * learnt in (a lookup-time note, as the IPv6 serial), and queues @purge,
 * which drops the entries of older generations in bounded read sections,
 * outside RTNL; the GC drops any it walked past.
 */
static bool nfg_rtc_old_gen(const struct nfg_rtc_entry *e, const void *arg)
{
	const struct nfg_rtc_net *rn = arg;

	return e->dev_gen != READ_ONCE(rn->dev_gen);
}

static void nfg_rtc_purge_work(struct work_struct *work)
{
	struct nfg_rtc_net *rn = container_of(work, struct nfg_rtc_net, purge);

	nfg_rtc_purge(rn, nfg_rtc_old_gen, rn);
}

static int nfg_rtc_netdev_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct nfg_rtc_net *rn;

	switch (event) {
	case NETDEV_CHANGE:
		/*
		 * Carrier loss. IPv6 marks the device's routes linkdown
		 * without changing the fib6 serial number, so dst_check()
		 * still passes an entry that a lookup would now avoid
		 * (ignore_routes_with_linkdown): invalidate it here. (IPv4
		 * flushes its route cache on this event, dst_check() fails
		 * anyway.)
		 */
		if (netif_carrier_ok(dev))
			break;
		fallthrough;
	case NETDEV_DOWN:
	case NETDEV_UNREGISTER:
		rn = nfg_rtc_pernet(dev_net(dev));
		/*
		 * Under RTNL, which serialises the bumps. The FIB's handlers
		 * of the event ran first (notifiers registered earlier): a
		 * hook that reads the new generation must also see their
		 * changes (pairs with the smp_rmb() in nfg_rtc_note()).
		 */
		smp_wmb();
		WRITE_ONCE(rn->dev_gen, rn->dev_gen + 1);
		if (atomic_read(&rn->table.nelems))
			queue_work(system_unbound_wq, &rn->purge);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block nfg_rtc_netdev_nb = {
	.notifier_call	= nfg_rtc_netdev_event,
};

/* ---- /proc/net/stat/nfguard_rtcache ------------------------------------ */

static int nfg_rtc_proc_show(struct seq_file *seq, void *v)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(seq_file_single_net(seq));
	const struct nfg_rtc_stats *s;
	struct nfg_rtc_stats sum;
	int cpu;

	seq_printf(seq, "entries %u max_entries %u live_entries %d\n",
		   atomic_read(&rn->table.nelems), nfg_rtc_max_entries(),
		   atomic_read(&nfg_rtc_live_entries));
	seq_puts(seq, "cpu hit miss learn invalid evict\n");
	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(rn->stats, cpu);
		seq_printf(seq, "%d %llu %llu %llu %llu %llu\n", cpu, s->hit,
			   s->miss, s->learn, s->invalid, s->evict);
	}
	nfg_rtc_stats_sum(rn, &sum);
	seq_printf(seq, "total %llu %llu %llu %llu %llu\n", sum.hit, sum.miss,
		   sum.learn, sum.invalid, sum.evict);
	return 0;
}

/* ---- per-netns state ----------------------------------------------------- */

static int __net_init nfg_rtc_net_init(struct net *net)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(net);
	unsigned int i;
	int err;

	rn->net = net;
	mutex_init(&rn->lock);
	INIT_DELAYED_WORK(&rn->gc, nfg_rtc_gc_work);
	INIT_WORK(&rn->purge, nfg_rtc_purge_work);
	for (i = 0; i < 2; i++) {
		rn->ops[i].hook = nfg_rtc_hook;
		rn->ops[i].priv = rn;
		rn->ops[i].pf = i ? NFPROTO_IPV6 : NFPROTO_IPV4;
		rn->ops[i].hooknum = NF_INET_PRE_ROUTING;
		/* After conntrack, mangle and DNAT; routing follows the hooks. */
		rn->ops[i].priority = i ? NF_IP6_PRI_LAST : NF_IP_PRI_LAST;
	}
	err = nfg_rtc_net_state_init(rn);
	if (err)
		return err;
	rhashtable_walk_enter(&rn->table, &rn->gc_iter);
	if (!proc_create_net_single(NFG_RTC_PROC_NAME, 0444, net->proc_net_stat,
				    nfg_rtc_proc_show, NULL)) {
		err = -ENOMEM;
		goto err_state;
	}
	return 0;

err_state:
	rhashtable_walk_exit(&rn->gc_iter);
	nfg_rtc_net_state_exit(rn);
	return err;
}

static void __net_exit nfg_rtc_net_exit(struct net *net)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(net);
	unsigned int i;

	remove_proc_entry(NFG_RTC_PROC_NAME, net->proc_net_stat);
	mutex_lock(&rn->lock);
	rn->dead = true;
	for (i = 0; i < 2; i++) {
		if (rn->hooked[i]) {
			nf_unregister_net_hook(net, &rn->ops[i]);
			rn->hooked[i] = false;
		}
	}
	mutex_unlock(&rn->lock);
	cancel_delayed_work_sync(&rn->gc);
	/*
	 * No event can queue the purge again: a dismantled netns's devices
	 * are gone (device exits run before ours), and module exit
	 * unregistered the notifier first.
	 */
	cancel_work_sync(&rn->purge);
	rhashtable_walk_exit(&rn->gc_iter);
	/*
	 * Rules still referencing the target are destroyed later (their
	 * tables' netns exit); they find @dead set and learn nothing more.
	 */
	nfg_rtc_net_state_exit(rn);
}

static struct pernet_operations nfg_rtc_net_ops = {
	.init	= nfg_rtc_net_init,
	.exit	= nfg_rtc_net_exit,
	.id	= &nfg_rtc_net_id,
	.size	= sizeof(struct nfg_rtc_net),
};

/* ---- module -------------------------------------------------------------- */

static int __init nfg_rtc_init(void)
{
	int err;

	err = register_pernet_subsys(&nfg_rtc_net_ops);
	if (err)
		goto err_out;
	err = register_netdevice_notifier(&nfg_rtc_netdev_nb);
	if (err)
		goto err_pernet;
	err = nfg_rtc_nl_init();
	if (err)
		goto err_notifier;
	err = xt_register_targets(nfg_rtc_tg_reg, ARRAY_SIZE(nfg_rtc_tg_reg));
	if (err)
		goto err_nl;
	return 0;

err_nl:
	nfg_rtc_nl_exit();
err_notifier:
	unregister_netdevice_notifier(&nfg_rtc_netdev_nb);
err_pernet:
	unregister_pernet_subsys(&nfg_rtc_net_ops);
err_out:
	return err;
}

static void __exit nfg_rtc_exit(void)
{
	xt_unregister_targets(nfg_rtc_tg_reg, ARRAY_SIZE(nfg_rtc_tg_reg));
	nfg_rtc_nl_exit();
	unregister_netdevice_notifier(&nfg_rtc_netdev_nb);
	unregister_pernet_subsys(&nfg_rtc_net_ops);
	/* Entries freed after a grace period run our code: wait for them. */
	rcu_barrier();
}

module_init(nfg_rtc_init);
module_exit(nfg_rtc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nfguard: per-conntrack input route cache for forwarded flows");
MODULE_ALIAS("ipt_RTCACHE");
MODULE_ALIAS("ip6t_RTCACHE");
MODULE_ALIAS_GENL_FAMILY(NFG_RTCACHE_GENL_NAME);
