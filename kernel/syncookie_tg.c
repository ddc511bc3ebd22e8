// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard SYNCOOKIE: xtables target "SYNCOOKIE" (IPv4 and IPv6), raw
 * PREROUTING, TCP; and module init/exit.
 *
 * Packet path (see man/syncookie.man for the verdict of every case):
 *  - source (masked) on the allowlist: XT_CONTINUE, untouched;
 *  - SYN: answered with a SYN-ACK carrying a cookie, then NF_DROP. No
 *    conntrack entry (raw runs before conntrack; the reply is marked
 *    untracked), no socket, no per-SYN memory;
 *  - ACK without SYN/RST: a valid cookie allowlists the source and, in
 *    local mode, marks the listener's SYN queue as recently overflowed so
 *    the kernel's own cookie check creates the socket (XT_CONTINUE). An
 *    invalid cookie on a segment of no existing socket: NF_DROP, counted.
 *
 * Reply path: a new skb (IP + TCP + options, about 80 bytes) is built,
 * routed with ip_route_output_key() / ip6_route_output(), marked untracked
 * and sent with ip_local_out() / ip6_local_out(). The received SYN is
 * dropped. One allocation and one route lookup per SYN; no lock.
 *
 * Local mode uses the KERNEL's cookie (__cookie_v4/v6_init_sequence) and
 * its timestamp option encoding, so the listener validates the ACK itself.
 * Proxy mode (nfguard's SipHash cookie and a SYNPROXY-style connection to
 * the server) is not implemented yet: checkentry refuses it.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/netfilter/x_tables.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/route.h>
#include <net/secure_seq.h>
#include <net/tcp.h>
#include <net/genetlink.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_SYNCOOKIE.h>

#include "syncookie.h"

/* Window of the SYN-ACK (unscaled, as in any SYN-ACK). */
#define NFG_SC_SYNACK_WINDOW	65535

/* What one packet needs from its headers, whatever the family. */
struct nfg_sc_pkt {
	const struct tcphdr	*th;
	struct tcphdr		_th;
	unsigned int		thoff;
	unsigned int		doff;	/* TCP header length, bytes */
	unsigned int		payload;
	u32			saddr[4];
	u8			family;
};

/*
 * Malformed: not a whole TCP header, data offset < 5 or past the packet,
 * a fragment, or (IPv6) extension headers before TCP.
 */
static bool nfg_sc_pkt_get(const struct sk_buff *skb,
			   const struct xt_action_param *par,
			   struct nfg_sc_pkt *p)
{
	if (par->fragoff)
		return false;
	p->thoff = par->thoff;
	p->th = skb_header_pointer(skb, p->thoff, sizeof(p->_th), &p->_th);
	if (!p->th)
		return false;
	p->doff = p->th->doff * 4;
	if (p->doff < sizeof(struct tcphdr) || p->thoff + p->doff > skb->len)
		return false;
	p->payload = skb->len - p->thoff - p->doff;
	return true;
}

/* Read and parse the options of the packet's TCP header. */
static int nfg_sc_get_opts(const struct sk_buff *skb,
			   const struct nfg_sc_pkt *p, struct nfg_sc_opts *o)
{
	u8 buf[NFG_SC_OPTS_MAXLEN];
	unsigned int len = p->doff - sizeof(struct tcphdr);
	const u8 *opt;

	opt = len ? skb_header_pointer(skb, p->thoff + sizeof(struct tcphdr),
				       len, buf) : NULL;
	if (len && !opt)
		return -EINVAL;
	return nfg_sc_parse_opts(opt, len, o);
}

/* Window scale the kernel will choose for a cookie child (tcp_select_initial_window). */
static u8 nfg_sc_kernel_wscale(const struct net *net)
{
	u32 space = max_t(u32, READ_ONCE(net->ipv4.sysctl_tcp_rmem[2]),
			  READ_ONCE(sysctl_rmem_max));

	return clamp_t(int, ilog2(space) - 15, 0, XT_SYNCOOKIE_WSCALE_MAX);
}

/*
 * Options of the SYN-ACK from the client's SYN (@c) and the rule. As the
 * kernel's own cookie SYN-ACK: window scale and SACK only travel inside
 * the timestamp, so without timestamps neither is offered.
 */
static void nfg_sc_synack_opts(const struct net *net,
			       const struct xt_syncookie_tginfo *info,
			       const struct net_device *in, u8 family,
			       const struct nfg_sc_opts *c, u32 tsoff,
			       struct nfg_sc_opts *s)
{
	memset(s, 0, sizeof(*s));
	s->wscale = NFG_SC_WSCALE_NONE;
	if (info->flags & XT_SYNCOOKIE_MSS)
		s->mss = info->mss;
	else
		s->mss = in->mtu - (family == NFPROTO_IPV6 ? 60 : 40);

	if (!c->ts || !(info->flags & XT_SYNCOOKIE_TIMESTAMP) ||
	    !READ_ONCE(net->ipv4.sysctl_tcp_timestamps))
		return;
	s->ts = true;
	s->tsecr = c->tsval;
	s->sack = c->sack && (info->flags & XT_SYNCOOKIE_SACK_PERM) &&
		  READ_ONCE(net->ipv4.sysctl_tcp_sack);
	if (c->wscale != NFG_SC_WSCALE_NONE &&
	    READ_ONCE(net->ipv4.sysctl_tcp_window_scaling))
		s->wscale = info->flags & XT_SYNCOOKIE_WSCALE ?
			    info->wscale : nfg_sc_kernel_wscale(net);
	/* the client's window scale and SACK, for the kernel to decode */
	s->tsval = nfg_sc_ts_encode((u32)div_u64(ktime_get_ns(), NSEC_PER_MSEC),
				    s->wscale == NFG_SC_WSCALE_NONE ?
				    NFG_SC_WSCALE_NONE : c->wscale,
				    s->sack) + tsoff;
}

/* Fill the TCP header of a SYN-ACK answering @oth; checksum left to the caller. */
static struct tcphdr *nfg_sc_put_tcp(struct sk_buff *nskb,
				     const struct tcphdr *oth, u32 isn,
				     const struct nfg_sc_opts *s)
{
	u8 opts[NFG_SC_SYNACK_OPTLEN];
	unsigned int optlen = nfg_sc_build_opts(opts, s);
	struct tcphdr *nth;

	skb_reset_transport_header(nskb);
	nth = skb_put_zero(nskb, sizeof(*nth) + optlen);
	nth->source = oth->dest;
	nth->dest = oth->source;
	nth->seq = htonl(isn);
	nth->ack_seq = htonl(ntohl(oth->seq) + 1);
	nth->doff = (sizeof(*nth) + optlen) / 4;
	nth->syn = 1;
	nth->ack = 1;
	nth->window = htons(NFG_SC_SYNACK_WINDOW);
	memcpy(nth + 1, opts, optlen);
	return nth;
}

static struct sk_buff *nfg_sc_alloc(unsigned int nhlen)
{
	struct sk_buff *nskb;

	nskb = alloc_skb(LL_MAX_HEADER + nhlen + sizeof(struct tcphdr) +
			 NFG_SC_SYNACK_OPTLEN, GFP_ATOMIC);
	if (!nskb)
		return NULL;
	skb_reserve(nskb, LL_MAX_HEADER);
	skb_reset_network_header(nskb);
	/* the reply is ours: conntrack must not track it */
	nf_ct_set(nskb, NULL, IP_CT_UNTRACKED);
	return nskb;
}

static int nfg_sc_send_synack4(struct net *net, const struct iphdr *oiph,
			       const struct tcphdr *oth, u32 isn,
			       const struct nfg_sc_opts *s)
{
	struct flowi4 fl4 = {};
	struct sk_buff *nskb;
	struct tcphdr *nth;
	struct iphdr *niph;
	unsigned int tcplen;
	struct rtable *rt;

	fl4.flowi4_proto = IPPROTO_TCP;
	fl4.saddr = oiph->daddr;
	fl4.daddr = oiph->saddr;
	fl4.fl4_sport = oth->dest;
	fl4.fl4_dport = oth->source;
	/* the SYN's destination need not be ours (a router answering) */
	fl4.flowi4_flags = FLOWI_FLAG_ANYSRC;
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return PTR_ERR(rt);

	nskb = nfg_sc_alloc(sizeof(*niph));
	if (!nskb) {
		ip_rt_put(rt);
		return -ENOMEM;
	}
	skb_dst_set(nskb, &rt->dst);
	niph = skb_put_zero(nskb, sizeof(*niph));
	niph->version = 4;
	niph->ihl = sizeof(*niph) / 4;
	niph->frag_off = htons(IP_DF);
	niph->ttl = READ_ONCE(net->ipv4.sysctl_ip_default_ttl);
	niph->protocol = IPPROTO_TCP;
	niph->saddr = oiph->daddr;
	niph->daddr = oiph->saddr;
	nth = nfg_sc_put_tcp(nskb, oth, isn, s);
	tcplen = nskb->len - sizeof(*niph);
	niph->tot_len = htons(nskb->len);
	ip_send_check(niph);
	nth->check = tcp_v4_check(tcplen, niph->saddr, niph->daddr,
				  csum_partial(nth, tcplen, 0));
	nskb->ip_summed = CHECKSUM_NONE;
	nskb->protocol = htons(ETH_P_IP);
	return ip_local_out(net, NULL, nskb) < 0 ? -EIO : 0;
}

static int nfg_sc_send_synack6(struct net *net, const struct net_device *in,
			       const struct ipv6hdr *oip6h,
			       const struct tcphdr *oth, u32 isn,
			       const struct nfg_sc_opts *s)
{
	struct flowi6 fl6 = {};
	struct dst_entry *dst;
	struct ipv6hdr *nip6h;
	struct sk_buff *nskb;
	struct tcphdr *nth;
	unsigned int tcplen;

	fl6.flowi6_proto = IPPROTO_TCP;
	fl6.saddr = oip6h->daddr;
	fl6.daddr = oip6h->saddr;
	fl6.fl6_sport = oth->dest;
	fl6.fl6_dport = oth->source;
	/* a link-local or multicast-scoped peer is reached where it came from */
	if (ipv6_addr_type(&fl6.daddr) & (IPV6_ADDR_LINKLOCAL | IPV6_ADDR_MULTICAST))
		fl6.flowi6_oif = in->ifindex;
	dst = ip6_route_output(net, NULL, &fl6);
	if (dst->error) {
		dst_release(dst);
		return -EHOSTUNREACH;
	}

	nskb = nfg_sc_alloc(sizeof(*nip6h));
	if (!nskb) {
		dst_release(dst);
		return -ENOMEM;
	}
	skb_dst_set(nskb, dst);
	nip6h = skb_put_zero(nskb, sizeof(*nip6h));
	ip6_flow_hdr(nip6h, 0, 0);
	nip6h->nexthdr = IPPROTO_TCP;
	nip6h->hop_limit = ip6_dst_hoplimit(dst);
	nip6h->saddr = oip6h->daddr;
	nip6h->daddr = oip6h->saddr;
	nth = nfg_sc_put_tcp(nskb, oth, isn, s);
	tcplen = nskb->len - sizeof(*nip6h);
	nip6h->payload_len = htons(tcplen);
	nth->check = csum_ipv6_magic(&nip6h->saddr, &nip6h->daddr, tcplen,
				     IPPROTO_TCP, csum_partial(nth, tcplen, 0));
	nskb->ip_summed = CHECKSUM_NONE;
	nskb->protocol = htons(ETH_P_IPV6);
	return ip6_local_out(net, NULL, nskb) < 0 ? -EIO : 0;
}

/* Give the listener of this ACK a recent SYN-queue overflow mark. */
static void nfg_sc_mark_listener4(struct net *net, const struct net_device *in,
				  const struct iphdr *iph,
				  const struct tcphdr *th)
{
	struct sock *sk;

	/* RCU (the hook's): listeners are SOCK_RCU_FREE, no reference taken */
	sk = inet_lookup_listener(net, net->ipv4.tcp_death_row.hashinfo, NULL, 0,
				  iph->saddr, th->source, iph->daddr, th->dest,
				  in->ifindex, 0);
	if (sk && sk->sk_state == TCP_LISTEN)
		tcp_synq_overflow(sk);
}

static void nfg_sc_mark_listener6(struct net *net, const struct net_device *in,
				  const struct ipv6hdr *ip6h,
				  const struct tcphdr *th)
{
	struct sock *sk;

	sk = inet6_lookup_listener(net, net->ipv4.tcp_death_row.hashinfo, NULL, 0,
				   &ip6h->saddr, th->source, &ip6h->daddr,
				   ntohs(th->dest), in->ifindex, 0);
	if (sk && sk->sk_state == TCP_LISTEN)
		tcp_synq_overflow(sk);
}

/* Is there a socket (established or time-wait) for this segment? */
static bool nfg_sc_known4(struct net *net, const struct net_device *in,
			  const struct iphdr *iph, const struct tcphdr *th)
{
	struct sock *sk;

	sk = __inet_lookup_established(net, net->ipv4.tcp_death_row.hashinfo,
				       iph->saddr, th->source, iph->daddr,
				       ntohs(th->dest), in->ifindex, 0);
	if (!sk)
		return false;
	sock_gen_put(sk);
	return true;
}

static bool nfg_sc_known6(struct net *net, const struct net_device *in,
			  const struct ipv6hdr *ip6h, const struct tcphdr *th)
{
	struct sock *sk;

	sk = __inet6_lookup_established(net, net->ipv4.tcp_death_row.hashinfo,
					&ip6h->saddr, th->source, &ip6h->daddr,
					ntohs(th->dest), in->ifindex, 0);
	if (!sk)
		return false;
	sock_gen_put(sk);
	return true;
}

static void nfg_sc_allowlist_add(struct nfg_sc_net *sn,
				 const struct xt_syncookie_tginfo *info,
				 const struct nfg_sc_pkt *p)
{
	unsigned int evicted;
	struct nfg_sc_key k;
	int ret;

	nfg_sc_key_make(&k, p->saddr, p->family, info->mask);
	k.prefix = info->prefix;
	ret = nfg_sc_al_add(&sn->al, &k, nfg_sc_now(), info->timeout, &evicted);
	if (ret == 0)
		this_cpu_inc(sn->stats->allowlist_add);
	if (evicted)
		this_cpu_add(sn->stats->allowlist_evict, evicted);
}

/*
 * Common part of both families. Returns NF_DROP, XT_CONTINUE, or
 * NF_MAX_VERDICT + 1 for "SYN to answer" / + 2 for "ACK to check".
 */
#define NFG_SC_DO_SYN	(NF_MAX_VERDICT + 1)
#define NFG_SC_DO_ACK	(NF_MAX_VERDICT + 2)

static unsigned int nfg_sc_classify(struct nfg_sc_net *sn,
				    const struct xt_syncookie_tginfo *info,
				    const struct sk_buff *skb,
				    const struct xt_action_param *par,
				    struct nfg_sc_pkt *p)
{
	const struct tcphdr *th;
	struct nfg_sc_key k;

	if (!nfg_sc_pkt_get(skb, par, p)) {
		this_cpu_inc(sn->stats->malformed);
		return NF_DROP;
	}
	th = p->th;
	nfg_sc_key_make(&k, p->saddr, p->family, info->mask);
	if (nfg_sc_al_lookup(&sn->al, &k, nfg_sc_now())) {
		if (th->syn && !th->ack)
			this_cpu_inc(sn->stats->allowlist_hit);
		return XT_CONTINUE;
	}
	if (th->syn) {
		if (th->ack)
			return XT_CONTINUE;	/* a reply to our own connection */
		this_cpu_inc(sn->stats->syn_seen);
		if (th->fin || th->rst || p->payload) {
			this_cpu_inc(sn->stats->malformed);
			return NF_DROP;
		}
		return NFG_SC_DO_SYN;
	}
	if (th->ack && !th->rst)
		return NFG_SC_DO_ACK;
	return XT_CONTINUE;
}

static unsigned int syncookie_tg4(struct sk_buff *skb,
				  const struct xt_action_param *par)
{
	const struct xt_syncookie_tginfo *info = par->targinfo;
	const struct net_device *in = xt_in(par);
	struct net *net = xt_net(par);
	struct nfg_sc_net *sn = nfg_sc_pernet(net);
	const struct iphdr *iph = ip_hdr(skb);
	struct nfg_sc_opts c, s;
	union tcp_seq_and_ts_off st;
	struct nfg_sc_pkt p;
	unsigned int v;
	u16 mss;
	u32 isn;

	if (READ_ONCE(sn->dying))
		return XT_CONTINUE;
	if (iph->frag_off & htons(IP_MF | IP_OFFSET)) {
		this_cpu_inc(sn->stats->malformed);
		return NF_DROP;
	}
	memset(p.saddr, 0, sizeof(p.saddr));
	p.saddr[0] = (__force u32)iph->saddr;
	p.family = NFPROTO_IPV4;
	v = nfg_sc_classify(sn, info, skb, par, &p);
	if (v == NFG_SC_DO_SYN) {
		if (nfg_sc_get_opts(skb, &p, &c)) {
			this_cpu_inc(sn->stats->malformed);
			return NF_DROP;
		}
		mss = c.mss ? c.mss : TCP_MSS_DEFAULT;
		isn = __cookie_v4_init_sequence(iph, p.th, &mss);
		st = secure_tcp_seq_and_ts_off(net, iph->daddr, iph->saddr,
					       p.th->dest, p.th->source);
		nfg_sc_synack_opts(net, info, in, NFPROTO_IPV4, &c, st.ts_off, &s);
		if (nfg_sc_send_synack4(net, iph, p.th, isn, &s))
			this_cpu_inc(sn->stats->send_fail);
		else
			this_cpu_inc(sn->stats->cookie_sent);
		return NF_DROP;
	}
	if (v == NFG_SC_DO_ACK) {
		if (nfg_cookie_v4_check(iph, p.th)) {
			this_cpu_inc(sn->stats->ack_valid);
			nfg_sc_allowlist_add(sn, info, &p);
			nfg_sc_mark_listener4(net, in, iph, p.th);
			return XT_CONTINUE;
		}
		if (nfg_sc_known4(net, in, iph, p.th))
			return XT_CONTINUE;
		this_cpu_inc(sn->stats->ack_invalid);
		return NF_DROP;
	}
	return v;
}

static unsigned int syncookie_tg6(struct sk_buff *skb,
				  const struct xt_action_param *par)
{
	const struct xt_syncookie_tginfo *info = par->targinfo;
	const struct net_device *in = xt_in(par);
	struct net *net = xt_net(par);
	struct nfg_sc_net *sn = nfg_sc_pernet(net);
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct nfg_sc_opts c, s;
	union tcp_seq_and_ts_off st;
	struct nfg_sc_pkt p;
	unsigned int v;
	u16 mss;
	u32 isn;

	if (READ_ONCE(sn->dying))
		return XT_CONTINUE;
	/* extension headers (fragment header included): see the man page */
	if (ip6h->nexthdr != IPPROTO_TCP) {
		this_cpu_inc(sn->stats->malformed);
		return NF_DROP;
	}
	memcpy(p.saddr, &ip6h->saddr, sizeof(p.saddr));
	p.family = NFPROTO_IPV6;
	v = nfg_sc_classify(sn, info, skb, par, &p);
	if (v == NFG_SC_DO_SYN) {
		if (nfg_sc_get_opts(skb, &p, &c)) {
			this_cpu_inc(sn->stats->malformed);
			return NF_DROP;
		}
		mss = c.mss ? c.mss : IPV6_MIN_MTU - 60;
		isn = __cookie_v6_init_sequence(ip6h, p.th, &mss);
		st = secure_tcpv6_seq_and_ts_off(net, ip6h->daddr.s6_addr32,
						 ip6h->saddr.s6_addr32,
						 p.th->dest, p.th->source);
		nfg_sc_synack_opts(net, info, in, NFPROTO_IPV6, &c, st.ts_off, &s);
		if (nfg_sc_send_synack6(net, in, ip6h, p.th, isn, &s))
			this_cpu_inc(sn->stats->send_fail);
		else
			this_cpu_inc(sn->stats->cookie_sent);
		return NF_DROP;
	}
	if (v == NFG_SC_DO_ACK) {
		if (nfg_cookie_v6_check(ip6h, p.th)) {
			this_cpu_inc(sn->stats->ack_valid);
			nfg_sc_allowlist_add(sn, info, &p);
			nfg_sc_mark_listener6(net, in, ip6h, p.th);
			return XT_CONTINUE;
		}
		if (nfg_sc_known6(net, in, ip6h, p.th))
			return XT_CONTINUE;
		this_cpu_inc(sn->stats->ack_invalid);
		return NF_DROP;
	}
	return v;
}

static int syncookie_tg_check(const struct xt_tgchk_param *par)
{
	struct xt_syncookie_tginfo *info = par->targinfo;
	unsigned int maxlen = par->family == NFPROTO_IPV6 ? 128 : 32;

	if (strcmp(par->table, "raw")) {
		pr_info_ratelimited("SYNCOOKIE: only valid in the raw table, not %s\n",
				    par->table);
		return -EINVAL;
	}
	if (par->hook_mask & ~(1 << NF_INET_PRE_ROUTING)) {
		pr_info_ratelimited("SYNCOOKIE: only valid in PREROUTING\n");
		return -EINVAL;
	}
	if (info->flags & ~XT_SYNCOOKIE_FLAGS_ALL) {
		pr_info_ratelimited("SYNCOOKIE: unknown flags 0x%x\n", info->flags);
		return -EINVAL;
	}
	if (info->mode == XT_SYNCOOKIE_MODE_PROXY) {
		pr_info_ratelimited("SYNCOOKIE: --mode proxy is not implemented yet; use --mode local\n");
		return -EOPNOTSUPP;
	}
	if (info->mode != XT_SYNCOOKIE_MODE_LOCAL) {
		pr_info_ratelimited("SYNCOOKIE: unknown mode %u\n", info->mode);
		return -EINVAL;
	}
	if ((info->flags & XT_SYNCOOKIE_MSS) && info->mss < XT_SYNCOOKIE_MSS_MIN) {
		pr_info_ratelimited("SYNCOOKIE: --mss %u is below %u\n", info->mss,
				    XT_SYNCOOKIE_MSS_MIN);
		return -EINVAL;
	}
	if ((info->flags & XT_SYNCOOKIE_WSCALE) &&
	    info->wscale > XT_SYNCOOKIE_WSCALE_MAX) {
		pr_info_ratelimited("SYNCOOKIE: --wscale %u is above %u\n",
				    info->wscale, XT_SYNCOOKIE_WSCALE_MAX);
		return -EINVAL;
	}
	if (!info->timeout || info->timeout > XT_SYNCOOKIE_TIMEOUT_MAX) {
		pr_info_ratelimited("SYNCOOKIE: --allowlist-timeout must be 1..%u\n",
				    XT_SYNCOOKIE_TIMEOUT_MAX);
		return -EINVAL;
	}
	if (!info->prefix || info->prefix > maxlen) {
		pr_info_ratelimited("SYNCOOKIE: --allowlist-mask must be 1..%u\n",
				    maxlen);
		return -EINVAL;
	}
	nfg_sc_prefix_mask(info->mask, info->prefix);
	return 0;
}

static struct xt_target syncookie_tg_reg[] __read_mostly = {
	{
		.name		= "SYNCOOKIE",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.table		= "raw",
		.hooks		= 1 << NF_INET_PRE_ROUTING,
		.proto		= IPPROTO_TCP,
		.checkentry	= syncookie_tg_check,
		.target		= syncookie_tg4,
		.targetsize	= sizeof(struct xt_syncookie_tginfo),
		.usersize	= offsetof(struct xt_syncookie_tginfo, mask),
		.me		= THIS_MODULE,
	},
	{
		.name		= "SYNCOOKIE",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.table		= "raw",
		.hooks		= 1 << NF_INET_PRE_ROUTING,
		.proto		= IPPROTO_TCP,
		.checkentry	= syncookie_tg_check,
		.target		= syncookie_tg6,
		.targetsize	= sizeof(struct xt_syncookie_tginfo),
		.usersize	= offsetof(struct xt_syncookie_tginfo, mask),
		.me		= THIS_MODULE,
	},
};

static int __init syncookie_tg_init(void)
{
	int err;

	err = nfg_sc_nl_init();
	if (err)
		goto err_out;
	err = xt_register_targets(syncookie_tg_reg, ARRAY_SIZE(syncookie_tg_reg));
	if (err)
		goto err_nl;
	return 0;

err_nl:
	nfg_sc_nl_exit();
err_out:
	return err;
}

static void __exit syncookie_tg_exit(void)
{
	xt_unregister_targets(syncookie_tg_reg, ARRAY_SIZE(syncookie_tg_reg));
	nfg_sc_nl_exit();
}

/* Read-only: allowlist tables and entries alive (leak checks in tests). */
static int syncookie_live_objects_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&nfg_sc_live_objects));
}

static const struct kernel_param_ops syncookie_live_objects_ops = {
	.get	= syncookie_live_objects_get,
};
module_param_cb(live_objects, &syncookie_live_objects_ops, NULL, 0444);
MODULE_PARM_DESC(live_objects, "allowlist tables and entries currently allocated");

module_init(syncookie_tg_init);
module_exit(syncookie_tg_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nfguard: answer SYNs with cookies before conntrack, allowlist proven sources");
MODULE_ALIAS("ipt_SYNCOOKIE");
MODULE_ALIAS("ip6t_SYNCOOKIE");
MODULE_ALIAS_GENL_FAMILY(NFG_SYNCOOKIE_GENL_NAME);
