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
 * Reply path: in place where it is the same as routing the reply back
 * (nfg_sc_reply_inplace(): a unicast Ethernet frame for this host, no IP
 * options, no VLAN tag, tunnel metadata or IPsec; not a bridge port): the
 * SYN's own skb becomes the SYN-ACK, its MAC and IP addresses swapped, and
 * leaves by the device it came in on (dev_queue_xmit) - no allocation, no
 * route lookup, no OUTPUT/POSTROUTING hooks. Otherwise a new skb (IP + TCP
 * + options, about 80 bytes) is built, routed with ip_route_output_key() /
 * ip6_route_output() + xfrm_lookup() (IPsec policy applies to it), marked
 * untracked and sent with ip_local_out() /
 * ip6_local_out(), and the SYN is dropped. No lock either way.
 *
 * Local mode uses the KERNEL's cookie (__cookie_v4/v6_init_sequence) and
 * its timestamp option encoding, so the listener validates the ACK itself.
 *
 * Proxy mode (the default) uses nfguard's SipHash cookie and opens the
 * connection to the server on the client's behalf: the valid cookie ACK is
 * consumed and a SYN in the client's name goes to the server carrying
 * nf_synproxy_core's conntrack template, whose hooks then run the
 * connection SYNPROXY-style (see "Theory of operation", 5., in
 * syncookie_core.c).
 *
 * Where: legacy iptables' raw table (checked by name), or any nft base
 * chain at PREROUTING (nft_compat: the table's name says nothing, and
 * checkentry sees neither the chain nor its priority). The target must run
 * before conntrack: a packet that already carries a conntrack entry
 * passes untouched (looped back by this host, e.g. its own SYN to a local
 * server; or the rule sits in a chain after conntrack, priority above -200,
 * counted in after_conntrack).
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
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
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/xfrm.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_seqadj.h>
#include <net/netfilter/nf_conntrack_synproxy.h>
#include <net/netfilter/nf_conntrack_zones.h>
#include <net/netfilter/nf_synproxy.h>
#include <net/route.h>
#include <net/secure_seq.h>
#include <net/tcp.h>
#include <net/genetlink.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_SYNCOOKIE.h>

#include "syncookie.h"

/*
 * Window of the SYN-ACK (unscaled, as in any SYN-ACK). Proxy mode offers
 * none: the client waits for the server's window (the window update sent
 * once the server's connection exists) before sending data.
 */
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

/*
 * A TCP segment this target sends, built before any skb is touched: a
 * cookie SYN-ACK, or (proxy mode) the SYN to the server. Holds values, not
 * pointers into the received packet: in place the two share memory.
 */
struct nfg_sc_seg {
	__be16		sport;
	__be16		dport;
	__be32		seq;
	__be32		ack_seq;
	__be16		window;
	bool		ack;		/* SYN-ACK; else a SYN */
	unsigned int	optlen;
	u8		opts[NFG_SC_SYNACK_OPTLEN];
};

/* The SYN-ACK with cookie @isn answering the SYN @oth. */
static void nfg_sc_seg_synack(struct nfg_sc_seg *g, const struct tcphdr *oth,
			      u32 isn, const struct nfg_sc_opts *s, u16 window)
{
	g->sport = oth->dest;
	g->dport = oth->source;
	g->seq = htonl(isn);
	g->ack_seq = htonl(ntohl(oth->seq) + 1);
	g->window = htons(window);
	g->ack = true;
	g->optlen = nfg_sc_build_opts(g->opts, s);
}

/*
 * The SYN to the server for the client's cookie ACK (or zero-window probe)
 * @oth from a client whose ISN is @isn.
 */
static void nfg_sc_seg_syn(struct nfg_sc_seg *g, const struct tcphdr *oth,
			   u32 isn, const struct nfg_sc_opts *syn)
{
	g->sport = oth->source;
	g->dport = oth->dest;
	g->seq = htonl(isn);
	/* relays the cookie (the client's idea of the server's ISN) */
	g->ack_seq = htonl(ntohl(oth->ack_seq) - 1);
	g->window = oth->window;
	g->ack = false;
	g->optlen = nfg_sc_build_opts(g->opts, syn);
}

static unsigned int nfg_sc_seg_len(const struct nfg_sc_seg *g)
{
	return sizeof(struct tcphdr) + g->optlen;
}

/* Write @g's TCP header and options at @nth; checksum left to the caller. */
static void nfg_sc_fill_tcp(struct tcphdr *nth, const struct nfg_sc_seg *g)
{
	memset(nth, 0, sizeof(*nth));
	nth->source = g->sport;
	nth->dest = g->dport;
	nth->seq = g->seq;
	nth->ack_seq = g->ack_seq;
	nth->doff = nfg_sc_seg_len(g) / 4;
	nth->syn = 1;
	nth->ack = g->ack;
	nth->window = g->window;
	memcpy(nth + 1, g->opts, g->optlen);
}

/*
 * A new skb for @g with room for an @nhlen network header. Untracked, or
 * (@tmpl: proxy mode's SYN to the server) with nf_synproxy_core's
 * template, so that the connection's conntrack entry gets its extensions.
 */
static struct sk_buff *nfg_sc_alloc(struct net *net, unsigned int nhlen,
				    bool tmpl)
{
	struct synproxy_net *snet;
	struct sk_buff *nskb;

	nskb = alloc_skb(LL_MAX_HEADER + nhlen + sizeof(struct tcphdr) +
			 NFG_SC_SYNACK_OPTLEN, GFP_ATOMIC);
	if (!nskb)
		return NULL;
	skb_reserve(nskb, LL_MAX_HEADER);
	skb_reset_network_header(nskb);
	if (tmpl) {
		snet = synproxy_pernet(net);
		nf_ct_set(nskb, snet->tmpl, IP_CT_NEW);
		nf_conntrack_get(&snet->tmpl->ct_general);
	} else {
		/* a reply of ours: conntrack must not track it */
		nf_ct_set(nskb, NULL, IP_CT_UNTRACKED);
	}
	return nskb;
}

/*
 * May a SYN-ACK (not @tmpl) take this route? Only to a unicast address of
 * another host, or of this one when the SYN came in on a loopback device
 * (a local client): never to a broadcast, anycast or multicast address,
 * nor back into this host for a SYN that claimed one of its addresses
 * from outside (a reflector towards groups or this host, for spoofed SYNs
 * - those the martian check cannot see without a route lookup).
 */
static bool nfg_sc_reply_route_ok(const struct net_device *in, bool loop,
				  bool bad_type)
{
	return !bad_type && (!loop || (in && (in->flags & IFF_LOOPBACK)));
}

/*
 * Route @g from @saddr (not necessarily ours: a router answering, or the
 * client's name) to @daddr and send it in a new skb (see nfg_sc_alloc()).
 * *@loop: the route is local (the server is this host). A SYN-ACK (not
 * @tmpl; the SYN came in on @in) on a route nfg_sc_reply_route_ok()
 * refuses is not sent: -EADDRNOTAVAIL.
 */
static int nfg_sc_xmit4(struct net *net, const struct net_device *in,
			__be32 saddr, __be32 daddr,
			const struct nfg_sc_seg *g, bool tmpl, bool *loop)
{
	struct flowi4 fl4 = {};
	struct sk_buff *nskb;
	struct tcphdr *nth;
	struct iphdr *niph;
	unsigned int tcplen;
	struct rtable *rt;

	fl4.flowi4_proto = IPPROTO_TCP;
	fl4.saddr = saddr;
	fl4.daddr = daddr;
	fl4.fl4_sport = g->sport;
	fl4.fl4_dport = g->dport;
	fl4.flowi4_flags = FLOWI_FLAG_ANYSRC;
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	*loop = rt->dst.dev->flags & IFF_LOOPBACK;
	if (!tmpl &&
	    !nfg_sc_reply_route_ok(in, *loop, rt->rt_type != RTN_UNICAST &&
				   rt->rt_type != RTN_LOCAL)) {
		ip_rt_put(rt);
		return -EADDRNOTAVAIL;
	}

	nskb = nfg_sc_alloc(net, sizeof(*niph), tmpl);
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
	niph->saddr = saddr;
	niph->daddr = daddr;
	skb_reset_transport_header(nskb);
	tcplen = nfg_sc_seg_len(g);
	nth = skb_put(nskb, tcplen);
	nfg_sc_fill_tcp(nth, g);
	niph->tot_len = htons(nskb->len);
	ip_send_check(niph);
	nth->check = tcp_v4_check(tcplen, niph->saddr, niph->daddr,
				  csum_partial(nth, tcplen, 0));
	nskb->ip_summed = CHECKSUM_NONE;
	nskb->protocol = htons(ETH_P_IP);
	return ip_local_out(net, NULL, nskb) < 0 ? -EIO : 0;
}

/* IPv6 nfg_sc_xmit4(); @in: where a link-local peer is reached (or NULL). */
static int nfg_sc_xmit6(struct net *net, const struct net_device *in,
			const struct in6_addr *saddr,
			const struct in6_addr *daddr,
			const struct nfg_sc_seg *g, bool tmpl, bool *loop)
{
	struct flowi6 fl6 = {};
	struct dst_entry *dst;
	struct ipv6hdr *nip6h;
	struct sk_buff *nskb;
	struct tcphdr *nth;
	unsigned int tcplen;

	fl6.flowi6_proto = IPPROTO_TCP;
	fl6.saddr = *saddr;
	fl6.daddr = *daddr;
	fl6.fl6_sport = g->sport;
	fl6.fl6_dport = g->dport;
	/* a link-local or multicast-scoped peer is reached where it came from */
	if (in && (ipv6_addr_type(daddr) &
		   (IPV6_ADDR_LINKLOCAL | IPV6_ADDR_MULTICAST)))
		fl6.flowi6_oif = in->ifindex;
	dst = ip6_route_output(net, NULL, &fl6);
	if (dst->error) {
		dst_release(dst);
		return -EHOSTUNREACH;
	}
	*loop = dst->dev->flags & IFF_LOOPBACK;
	if (!tmpl &&
	    !nfg_sc_reply_route_ok(in, *loop,
				   dst_rt6_info(dst)->rt6i_flags & RTF_ANYCAST)) {
		dst_release(dst);
		return -EADDRNOTAVAIL;
	}
	/*
	 * IPsec policy: ip_route_output_key() applies it for IPv4,
	 * ip6_route_output() does not (as in nf_send_reset6()). Releases
	 * the route on error.
	 */
	dst = xfrm_lookup(net, dst, flowi6_to_flowi(&fl6), NULL, 0);
	if (IS_ERR(dst))
		return PTR_ERR(dst);

	nskb = nfg_sc_alloc(net, sizeof(*nip6h), tmpl);
	if (!nskb) {
		dst_release(dst);
		return -ENOMEM;
	}
	skb_dst_set(nskb, dst);
	nip6h = skb_put_zero(nskb, sizeof(*nip6h));
	ip6_flow_hdr(nip6h, 0, 0);
	nip6h->nexthdr = IPPROTO_TCP;
	nip6h->hop_limit = ip6_dst_hoplimit(dst);
	nip6h->saddr = *saddr;
	nip6h->daddr = *daddr;
	skb_reset_transport_header(nskb);
	tcplen = nfg_sc_seg_len(g);
	nth = skb_put(nskb, tcplen);
	nfg_sc_fill_tcp(nth, g);
	nip6h->payload_len = htons(tcplen);
	nth->check = csum_ipv6_magic(&nip6h->saddr, &nip6h->daddr, tcplen,
				     IPPROTO_TCP, csum_partial(nth, tcplen, 0));
	nskb->ip_summed = CHECKSUM_NONE;
	nskb->protocol = htons(ETH_P_IPV6);
	return ip6_local_out(net, NULL, nskb) < 0 ? -EIO : 0;
}

/*
 * In-place reply, the fast path (as XDP synproxy does it): the received SYN
 * itself is rewritten into the SYN-ACK and sent back out the device it came
 * in on, to the MAC address it came from, with dev_queue_xmit(): no
 * allocation, no route lookup, no OUTPUT/POSTROUTING hooks (the reply is
 * untracked anyway). Taken only where that is the same as routing the
 * reply back: a unicast frame for this host (PACKET_HOST) with a plain
 * Ethernet header, on an Ethernet device that is not a bridge port, with
 * no VLAN tag left in the skb, no route or tunnel metadata attached, not
 * decrypted by IPsec, not GSO, and (IPv4) no IP options. Anything else
 * gets -EOPNOTSUPP with the skb untouched, and the caller routes a new
 * skb instead (nfg_sc_xmit4/6). Once the skb is changed, a failure returns -ENOMEM and the
 * SYN is dropped. Returns 0 when the skb was sent (consumed).
 */
static int nfg_sc_reply_inplace(struct net *net, struct sk_buff *skb,
				const struct nfg_sc_pkt *p,
				const struct nfg_sc_seg *g)
{
	unsigned int tcplen = nfg_sc_seg_len(g), len = p->thoff + tcplen;
	struct net_device *dev = skb->dev;
	struct tcphdr *nth;
	struct ethhdr *eth;

	if (!dev || dev->type != ARPHRD_ETHER || netif_is_bridge_port(dev) ||
	    skb->pkt_type != PACKET_HOST || !skb_mac_header_was_set(skb) ||
	    skb->mac_len != ETH_HLEN || skb_network_offset(skb) ||
	    skb_vlan_tag_present(skb) || skb_dst(skb) ||
	    secpath_exists(skb) || skb_is_gso(skb) ||
	    skb_headroom(skb) < ETH_HLEN)
		return -EOPNOTSUPP;
	/* the reply goes to the frame's source: a host's, not a group's or zero */
	if (!is_valid_ether_addr(eth_hdr(skb)->h_source))
		return -EOPNOTSUPP;
	if (p->family == NFPROTO_IPV4 ? p->thoff != sizeof(struct iphdr) :
					p->thoff != sizeof(struct ipv6hdr))
		return -EOPNOTSUPP;
	/* growing (a SYN shorter than the reply) writes past its end: only
	 * into a linear buffer of our own, never into a clone's
	 */
	if (skb->len < len &&
	    (skb_is_nonlinear(skb) || skb_cloned(skb) ||
	     skb_tailroom(skb) < len - skb->len))
		return -EOPNOTSUPP;

	/* From here on the SYN is changed: a failure drops it. */
	if (skb->len > len && pskb_trim(skb, len))
		return -ENOMEM;
	/* a private copy of the head if it is shared (a tap's clone) */
	if (skb_ensure_writable(skb, skb->len))
		return -ENOMEM;
	if (skb->len < len) {
		if (skb_tailroom(skb) < len - skb->len)
			return -ENOMEM;
		__skb_put(skb, len - skb->len);
	}

	nth = (struct tcphdr *)(skb_network_header(skb) + p->thoff);
	nfg_sc_fill_tcp(nth, g);
	if (p->family == NFPROTO_IPV4) {
		struct iphdr *iph = ip_hdr(skb);

		swap(iph->saddr, iph->daddr);
		iph->tos = 0;
		iph->tot_len = htons(len);
		iph->id = 0;
		iph->frag_off = htons(IP_DF);
		iph->ttl = READ_ONCE(net->ipv4.sysctl_ip_default_ttl);
		ip_send_check(iph);
		nth->check = tcp_v4_check(tcplen, iph->saddr, iph->daddr,
					  csum_partial(nth, tcplen, 0));
	} else {
		struct ipv6hdr *ip6h = ipv6_hdr(skb);
		struct inet6_dev *idev = __in6_dev_get(dev);

		swap(ip6h->saddr, ip6h->daddr);
		ip6_flow_hdr(ip6h, 0, 0);
		ip6h->payload_len = htons(tcplen);
		ip6h->hop_limit = idev ? READ_ONCE(idev->cnf.hop_limit) :
			READ_ONCE(net->ipv6.devconf_all->hop_limit);
		nth->check = csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, tcplen,
					     IPPROTO_TCP,
					     csum_partial(nth, tcplen, 0));
	}

	eth = (struct ethhdr *)skb_mac_header(skb);
	ether_addr_copy(eth->h_dest, eth->h_source);
	ether_addr_copy(eth->h_source, dev->dev_addr);
	__skb_push(skb, ETH_HLEN);
	skb->ip_summed = CHECKSUM_NONE;
	skb->mark = 0;
	skb->priority = 0;
	skb_clear_tstamp(skb);
	nf_reset_ct(skb);
	nf_ct_set(skb, NULL, IP_CT_UNTRACKED);
	dev_queue_xmit(skb);
	return 0;
}

/*
 * Answer a SYN with a cookie SYN-ACK (sequence number @isn): in place when
 * nfg_sc_reply_inplace() can, else a new routed skb. Returns the verdict:
 * NF_STOLEN when the SYN became the reply, NF_DROP otherwise.
 */
static unsigned int nfg_sc_answer(struct nfg_sc_net *sn, struct net *net,
				  const struct net_device *in,
				  struct sk_buff *skb,
				  const struct nfg_sc_pkt *p, u32 isn,
				  const struct nfg_sc_opts *s, u16 window)
{
	struct nfg_sc_seg g;
	bool loop;
	int err;

	nfg_sc_seg_synack(&g, p->th, isn, s, window);
	err = nfg_sc_reply_inplace(net, skb, p, &g);
	if (!err) {
		this_cpu_inc(sn->stats->cookie_sent);
		this_cpu_inc(sn->stats->sent_inplace);
		return NF_STOLEN;
	}
	if (err == -EOPNOTSUPP) {
		if (p->family == NFPROTO_IPV6)
			err = nfg_sc_xmit6(net, in, &ipv6_hdr(skb)->daddr,
					   &ipv6_hdr(skb)->saddr, &g, false,
					   &loop);
		else
			err = nfg_sc_xmit4(net, in, ip_hdr(skb)->daddr,
					   ip_hdr(skb)->saddr, &g, false, &loop);
	}
	if (err)
		this_cpu_inc(sn->stats->send_fail);
	else
		this_cpu_inc(sn->stats->cookie_sent);
	return NF_DROP;
}

/* Give the listener of this ACK a recent SYN-queue overflow mark. */
static void nfg_sc_mark_listener4(struct net *net, const struct net_device *in,
				  const struct iphdr *iph,
				  const struct tcphdr *th)
{
	struct sock *sk;

	/* RCU (the hook's): listeners are SOCK_RCU_FREE, no reference taken */
	sk = nfg_inet_lookup_listener(net, NULL, 0,
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

	sk = nfg_inet6_lookup_listener(net, NULL, 0,
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

	sk = nfg_inet_lookup_established(net,
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

	sk = nfg_inet6_lookup_established(net,
					  &ip6h->saddr, th->source, &ip6h->daddr,
					  ntohs(th->dest), in->ifindex, 0);
	if (!sk)
		return false;
	sock_gen_put(sk);
	return true;
}

/*
 * Local mode: may a valid kernel cookie ACK put its source on the
 * allowlist? Only with the echo of a SYN-ACK timestamp of the last 64 s
 * (nfg_sc_local_echo_fresh(): the TSval carries the kernel's secret offset
 * @ts_off of the address pair): the kernel's cookie alone, about 2^-29 per
 * forged ACK, is a minute of a 10 Mpps flood; with the echo, 2^-45.
 * The connection itself is the listener's to accept either way.
 */
static bool nfg_sc_local_admit_ok(const struct sk_buff *skb,
				  const struct nfg_sc_pkt *p, u32 ts_off)
{
	struct nfg_sc_opts o;

	if (nfg_sc_get_opts(skb, p, &o) || !o.ts)
		return false;
	return nfg_sc_local_echo_fresh(o.tsecr, ts_off,
				       (u32)div_u64(ktime_get_ns(), NSEC_PER_MSEC));
}

static void nfg_sc_admit(struct nfg_sc_net *sn,
			 const struct xt_syncookie_tginfo *info,
			 const struct nfg_sc_pkt *p)
{
	struct nfg_sc_key k;

	nfg_sc_key_make(&k, p->saddr, p->family, info->mask, info->prefix);
	nfg_sc_allowlist_add(sn, &k, info->timeout);
}

/*
 * A SYN no host sends: from a multicast, broadcast or unspecified address
 * (or a loopback one, on a device that is not loopback), to a multicast or
 * broadcast address, or in a link-layer broadcast or multicast frame. The
 * target runs before routing's martian checks, and answering such a SYN
 * would send a SYN-ACK to a group or to the whole link (a reflector for
 * spoofed SYNs): dropped and counted as malformed instead.
 */
static bool nfg_sc_martian(const struct sk_buff *skb, u8 family)
{
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;
	bool lo;

	if (skb->pkt_type == PACKET_BROADCAST ||
	    skb->pkt_type == PACKET_MULTICAST)
		return true;
	/* a loopback source is only real on a loopback device */
	lo = skb->dev && (skb->dev->flags & IFF_LOOPBACK);
	if (family == NFPROTO_IPV6) {
		ip6h = ipv6_hdr(skb);
		return ipv6_addr_is_multicast(&ip6h->saddr) ||
		       ipv6_addr_any(&ip6h->saddr) ||
		       (!lo && ipv6_addr_loopback(&ip6h->saddr)) ||
		       ipv6_addr_is_multicast(&ip6h->daddr);
	}
	iph = ip_hdr(skb);
	return ipv4_is_multicast(iph->saddr) || ipv4_is_lbcast(iph->saddr) ||
	       ipv4_is_zeronet(iph->saddr) ||
	       (!lo && ipv4_is_loopback(iph->saddr)) ||
	       ipv4_is_multicast(iph->daddr) || ipv4_is_lbcast(iph->daddr);
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
	nfg_sc_key_make(&k, p->saddr, p->family, info->mask, info->prefix);
	if (nfg_sc_al_lookup(&sn->al, &k, nfg_sc_now())) {
		if (th->syn && !th->ack)
			this_cpu_inc(sn->stats->allowlist_hit);
		return XT_CONTINUE;
	}
	if (th->syn) {
		if (th->ack)
			return XT_CONTINUE;	/* a reply to our own connection */
		this_cpu_inc(sn->stats->syn_seen);
		if (th->fin || th->rst || p->payload ||
		    nfg_sc_martian(skb, p->family)) {
			this_cpu_inc(sn->stats->malformed);
			return NF_DROP;
		}
		return NFG_SC_DO_SYN;
	}
	if (th->ack && !th->rst)
		return NFG_SC_DO_ACK;
	return XT_CONTINUE;
}

/* ---- proxy mode ---- */

/*
 * A packet that already has a conntrack entry ran conntrack before this
 * target: looped back by this host (e.g. its own SYN to a local server,
 * in on loopback), or the rule is in an nft chain after conntrack (only
 * the priority tells, which checkentry cannot see). Either way it passes
 * untouched; the second is counted (after_conntrack), not answered: a
 * cookie there would not save the conntrack entry it exists to save.
 */
static bool nfg_sc_after_ct(struct nfg_sc_net *sn, const struct sk_buff *skb,
			    const struct net_device *in)
{
	enum ip_conntrack_info ctinfo;
	struct nf_conn *ct = nf_ct_get(skb, &ctinfo);

	if (!ct || nf_ct_is_template(ct))
		return false;
	if (!in || !(in->flags & IFF_LOOPBACK))
		this_cpu_inc(sn->stats->after_conntrack);
	return true;
}

/* The flow of a client's packet, as the cookie hashes it. */
static void nfg_sc_flow4(struct nfg_sc_flow *f, const struct iphdr *iph,
			 const struct tcphdr *th)
{
	memset(f, 0, sizeof(*f));
	f->saddr[0] = (__force u32)iph->saddr;
	f->daddr[0] = (__force u32)iph->daddr;
	f->sport = (__force u16)th->source;
	f->dport = (__force u16)th->dest;
	f->family = NFPROTO_IPV4;
}

static void nfg_sc_flow6(struct nfg_sc_flow *f, const struct ipv6hdr *ip6h,
			 const struct tcphdr *th)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->saddr, &ip6h->saddr, sizeof(f->saddr));
	memcpy(f->daddr, &ip6h->daddr, sizeof(f->daddr));
	f->sport = (__force u16)th->source;
	f->dport = (__force u16)th->dest;
	f->family = NFPROTO_IPV6;
}

static u32 nfg_sc_proxy_counter(void)
{
	return nfg_sc_counter(ktime_get_real_seconds());
}

/* The SYN-ACK's options and the cookie for a client's SYN (@c). */
static u32 nfg_sc_proxy_answer(struct nfg_sc_net *sn,
			       const struct xt_syncookie_tginfo *info,
			       const struct net *net,
			       const struct net_device *in,
			       const struct nfg_sc_flow *f, u32 client_isn,
			       const struct nfg_sc_opts *c,
			       struct nfg_sc_opts *synack)
{
	const struct nfg_sc_secret_rcu *sec;
	struct nfg_sc_proxy_cfg cfg;
	struct nfg_sc_opts enc;
	u32 cookie, tsmac;

	cfg.mss = info->flags & XT_SYNCOOKIE_MSS ? info->mss :
		  in->mtu - (f->family == NFPROTO_IPV6 ? 60 : 40);
	cfg.wscale = info->flags & XT_SYNCOOKIE_WSCALE ? info->wscale :
		     nfg_sc_kernel_wscale(net);
	cfg.sack = info->flags & XT_SYNCOOKIE_SACK_PERM;
	cfg.ts = info->flags & XT_SYNCOOKIE_TIMESTAMP;
	nfg_sc_proxy_synack(c, &cfg,
			    (u32)div_u64(ktime_get_ns(), NSEC_PER_MSEC),
			    synack, &enc);
	sec = rcu_dereference(sn->secret);
	cookie = nfg_sc_cookie_make(&sec->s.key[0], f, client_isn,
				    nfg_sc_proxy_counter(), &enc, &tsmac);
	/* the echo of this TSval is 32 more bits of proof (allowlisting) */
	if (synack->ts)
		synack->tsval = tsmac;
	return cookie;
}

/*
 * Does the client's ACK carry a valid cookie, for a client whose ISN is
 * @isn (the ACK's seq - 1; a zero-window probe's seq)? Returns -EINVAL if
 * not, else NFG_SC_COOKIE_ADMIT (its timestamp echo was checked too: the
 * source may be allowlisted) or 0 (the cookie alone), and @syn holds the
 * options of the SYN to send to the server.
 */
static int nfg_sc_proxy_valid(struct nfg_sc_net *sn,
			      const struct sk_buff *skb,
			      const struct nfg_sc_pkt *p,
			      const struct nfg_sc_flow *f, u32 isn,
			      struct nfg_sc_opts *syn)
{
	const struct nfg_sc_secret_rcu *sec;
	struct nfg_sc_opts dec, ack;
	int ret;

	if (nfg_sc_get_opts(skb, p, &ack))
		memset(&ack, 0, sizeof(ack));	/* no TS: no admission */
	sec = rcu_dereference(sn->secret);
	ret = nfg_sc_cookie_check(&sec->s, f, isn, ntohl(p->th->ack_seq) - 1,
				  nfg_sc_proxy_counter(), &ack, &dec);
	if (ret < 0)
		return ret;
	nfg_sc_proxy_syn(&dec, &ack, syn);
	return ret;
}

/* The conntrack entry of this flow (original direction), referenced, or NULL. */
static struct nf_conn *nfg_sc_ct_find(struct net *net,
				      const struct nfg_sc_flow *f)
{
	struct nf_conntrack_tuple_hash *h;
	struct nf_conntrack_tuple t;

	memset(&t, 0, sizeof(t));
	t.src.l3num = f->family == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
	memcpy(&t.src.u3, f->saddr, sizeof(t.src.u3));
	memcpy(&t.dst.u3, f->daddr, sizeof(t.dst.u3));
	t.src.u.tcp.port = (__force __be16)f->sport;
	t.dst.u.tcp.port = (__force __be16)f->dport;
	t.dst.protonum = IPPROTO_TCP;
	t.dst.dir = IP_CT_DIR_ORIGINAL;
	h = nf_conntrack_find_get(net, &nf_ct_zone_dflt, &t);
	return h ? nf_ct_tuplehash_to_ctrack(h) : NULL;
}

/*
 * nf_synproxy_core's hooks record the ISN relayed in the SYN's ack_seq
 * (and the timestamp it echoes) when they see the SYN leave; they skip
 * loopback packets, so for a server on this host the entry is completed
 * here, after the SYN went out. Only while it is still in SYN_SENT.
 */
static void nfg_sc_proxy_record(struct net *net, const struct nfg_sc_flow *f,
				u32 cookie, const struct nfg_sc_opts *syn)
{
	struct nf_conn_synproxy *sp;
	struct nf_conn *ct;

	ct = nfg_sc_ct_find(net, f);
	if (!ct)
		return;
	sp = nfct_synproxy(ct);
	if (sp && READ_ONCE(ct->proto.tcp.state) == TCP_CONNTRACK_SYN_SENT) {
		WRITE_ONCE(sp->isn, cookie);
		if (syn->ts)
			WRITE_ONCE(sp->its, syn->tsecr);
	}
	nf_ct_put(ct);
}

/*
 * Send the server's SYN for the client's ACK (client ISN @isn); record the
 * ISN if it looped.
 */
static int nfg_sc_proxy_connect(struct net *net, const struct sk_buff *skb,
				const struct nfg_sc_pkt *p,
				const struct nfg_sc_flow *f, u32 isn,
				const struct nfg_sc_opts *syn)
{
	struct nfg_sc_seg g;
	bool loop = false;
	int err;

	nfg_sc_seg_syn(&g, p->th, isn, syn);
	if (f->family == NFPROTO_IPV6)
		err = nfg_sc_xmit6(net, NULL, &ipv6_hdr(skb)->saddr,
				   &ipv6_hdr(skb)->daddr, &g, true, &loop);
	else
		err = nfg_sc_xmit4(net, NULL, ip_hdr(skb)->saddr, ip_hdr(skb)->daddr,
				   &g, true, &loop);
	if (!err && loop)
		nfg_sc_proxy_record(net, f, ntohl(p->th->ack_seq) - 1, syn);
	return err;
}

/*
 * Is @ct's connection closed (TIME_WAIT, CLOSE)? A SYN of its ports would
 * reopen it (conntrack reuses a closed entry unless the close was a FIN or
 * the last packet the sender's RST).
 */
static bool nfg_sc_ct_closed(const struct nf_conn *ct)
{
	u8 state = READ_ONCE(ct->proto.tcp.state);

	return state == TCP_CONNTRACK_TIME_WAIT || state == TCP_CONNTRACK_CLOSE;
}

/* Is @ct a proxied connection whose server has not answered yet? */
static bool nfg_sc_ct_syn_sent(const struct nf_conn *ct)
{
	return nfct_synproxy(ct) &&
	       READ_ONCE(ct->proto.tcp.state) == TCP_CONNTRACK_SYN_SENT;
}

/*
 * An invalid cookie ACK for a flow that has a conntrack entry @ct: while
 * the server has not answered the SYN sent on the client's behalf
 * (SYN_SENT), a client that got our zero-window SYN-ACK sends window
 * probes, whose seq is its ISN (not ISN + 1): if the cookie is valid for
 * that, the SYN was lost (e.g. the server's accept queue dropped it) and
 * is sent again, the probe dropped. Any other ACK then is no client's:
 * dropped too, before nf_synproxy_core's hook would check it as a cookie
 * of the kernel's (and open the server connection for one that matched).
 */
static unsigned int nfg_sc_proxy_tracked(struct nfg_sc_net *sn, struct net *net,
					 const struct sk_buff *skb,
					 const struct nfg_sc_pkt *p,
					 const struct nfg_sc_flow *f,
					 const struct nf_conn *ct)
{
	struct nfg_sc_opts syn;
	u32 isn = ntohl(p->th->seq);

	if (!nfg_sc_ct_syn_sent(ct))
		return XT_CONTINUE;
	if (nfg_sc_proxy_valid(sn, skb, p, f, isn, &syn) < 0) {
		this_cpu_inc(sn->stats->ack_invalid);
		return NF_DROP;
	}
	if (nfg_sc_proxy_connect(net, skb, p, f, isn, &syn))
		this_cpu_inc(sn->stats->send_fail);
	else
		this_cpu_inc(sn->stats->syn_resent);
	return NF_DROP;
}

/*
 * A valid cookie ACK whose flow has a closed conntrack entry @ct. The
 * same cookie as the closed proxied connection's (nf_synproxy_core keeps
 * it as the ISN relayed to the server) is that handshake's ACK again, a
 * retransmission or a replay: its client is gone, no server connection
 * for it (dropped). A new handshake of the same ports (a new client ISN,
 * so a new cookie) gets a fresh entry: the old one is removed first, so
 * that the SYN to the server makes a new one from the synproxy template
 * instead of reopening this one (which may lack the extension). Returns
 * false for a repeat.
 */
static bool nfg_sc_proxy_reopen(struct nf_conn *ct, u32 cookie)
{
	const struct nf_conn_synproxy *sp = nfct_synproxy(ct);

	if (sp && READ_ONCE(sp->isn) == cookie)
		return false;
	nf_ct_kill(ct);
	return true;
}

/*
 * An ACK (no SYN, no RST) in proxy mode:
 *  - valid cookie, no conntrack entry (or a closed one: see
 *    nfg_sc_proxy_reopen()): the handshake's ACK. Open the server's
 *    connection, consume the ACK; allowlist the source only if the ACK
 *    echoed our timestamp MAC (a 24-bit cookie alone is forgeable by a
 *    few million spoofed ACKs; with the echo, 2^-54);
 *  - valid cookie (or a zero-window probe's: nfg_sc_proxy_tracked()),
 *    entry still in SYN_SENT: the server has not answered yet (or its SYN
 *    was lost): send the SYN again, drop the ACK;
 *  - an entry past SYN_SENT and not closed: an ordinary segment, passed
 *    without a cookie check; an invalid cookie for a closed one: passed;
 *  - otherwise (no conntrack entry, allowlisted source or not: SYNs of an
 *    allowlisted source pass, so its real connections are tracked):
 *    dropped, ack_invalid. The companion of SYNPROXY's "ctstate INVALID"
 *    drop rule, which this target does not need.
 */
static unsigned int nfg_sc_proxy_ack(struct nfg_sc_net *sn,
				     const struct xt_syncookie_tginfo *info,
				     struct net *net, const struct sk_buff *skb,
				     const struct nfg_sc_pkt *p,
				     const struct nfg_sc_flow *f)
{
	u32 isn = ntohl(p->th->seq) - 1;
	unsigned int verdict;
	struct nfg_sc_opts syn;
	struct nf_conn *ct;
	int valid;

	ct = nfg_sc_ct_find(net, f);
	/*
	 * A segment of a connection whose server handshake is over (the
	 * client's data and ACKs): passed whatever its cookie would say, so
	 * not checked - a conntrack lookup and no SipHash. Only ACKs of no
	 * tracked flow, of one in SYN_SENT or of a closed one need it.
	 */
	if (ct && !nfg_sc_ct_syn_sent(ct) && !nfg_sc_ct_closed(ct)) {
		nf_ct_put(ct);
		return XT_CONTINUE;
	}
	valid = nfg_sc_proxy_valid(sn, skb, p, f, isn, &syn);
	if (valid < 0) {
		if (!ct) {
			this_cpu_inc(sn->stats->ack_invalid);
			return NF_DROP;
		}
		verdict = nfg_sc_proxy_tracked(sn, net, skb, p, f, ct);
		goto out_put;
	}
	if (ct) {
		if (nfg_sc_ct_syn_sent(ct)) {
			if (nfg_sc_proxy_connect(net, skb, p, f, isn, &syn))
				this_cpu_inc(sn->stats->send_fail);
			else
				this_cpu_inc(sn->stats->syn_resent);
			verdict = NF_DROP;
			goto out_put;
		}
		if (!nfg_sc_proxy_reopen(ct, ntohl(p->th->ack_seq) - 1)) {
			this_cpu_inc(sn->stats->ack_invalid);
			verdict = NF_DROP;
			goto out_put;
		}
		nf_ct_put(ct);
	}
	this_cpu_inc(sn->stats->ack_valid);
	if (valid == NFG_SC_COOKIE_ADMIT)
		nfg_sc_admit(sn, info, p);
	if (nfg_sc_proxy_connect(net, skb, p, f, isn, &syn))
		this_cpu_inc(sn->stats->send_fail);
	else
		this_cpu_inc(sn->stats->proxied);
	return NF_DROP;

out_put:
	nf_ct_put(ct);
	return verdict;
}

/*
 * A SYN of an allowlisted source passes, to make a plain connection that
 * the client completes with the server itself. Not into a proxied
 * connection's conntrack entry: nf_synproxy_core's hooks would take the
 * server's SYN-ACK to it for the answer to their own SYN and send the ACK
 * to the server in the client's name - a server connection that no
 * client handshake completed (a SYN spoofing an allowlisted address would
 * be enough). A closed such entry is removed first (the SYN makes a new,
 * plain one); the SYN of a live one (the connection is proxied now, or
 * its server handshake under way) is dropped.
 */
static unsigned int nfg_sc_proxy_syn_pass(struct net *net,
					  const struct nfg_sc_flow *f)
{
	unsigned int verdict = XT_CONTINUE;
	struct nf_conn *ct;

	ct = nfg_sc_ct_find(net, f);
	if (!ct)
		return verdict;
	if (nfct_synproxy(ct)) {
		if (nfg_sc_ct_closed(ct))
			nf_ct_kill(ct);
		else
			verdict = NF_DROP;
	}
	nf_ct_put(ct);
	return verdict;
}

/* A SYN from a source not on the allowlist, proxy mode: our own cookie. */
static unsigned int nfg_sc_proxy_syn_answer(struct nfg_sc_net *sn,
					    const struct xt_syncookie_tginfo *info,
					    struct net *net,
					    const struct net_device *in,
					    struct sk_buff *skb,
					    const struct nfg_sc_pkt *p,
					    const struct nfg_sc_flow *f,
					    const struct nfg_sc_opts *c)
{
	struct nfg_sc_opts s;
	u32 cookie;

	cookie = nfg_sc_proxy_answer(sn, info, net, in, f, ntohl(p->th->seq), c,
				     &s);
	return nfg_sc_answer(sn, net, in, skb, p, cookie, &s, 0);
}

/*
 * Proxy mode, both families (verdicts in the man page). Unlike local mode
 * the cookie of every ACK is checked, allowlisted source or not: a
 * client's second connection may finish its handshake after its first one
 * put it on the allowlist, and that ACK must open a proxied connection too.
 */
static unsigned int nfg_sc_proxy(struct nfg_sc_net *sn,
				 const struct xt_syncookie_tginfo *info,
				 struct net *net, const struct net_device *in,
				 struct sk_buff *skb,
				 const struct xt_action_param *par,
				 struct nfg_sc_pkt *p)
{
	const struct tcphdr *th;
	struct nfg_sc_flow flow, *f = &flow;
	struct nfg_sc_opts c;
	struct nfg_sc_key k;

	if (!nfg_sc_pkt_get(skb, par, p)) {
		this_cpu_inc(sn->stats->malformed);
		return NF_DROP;
	}
	th = p->th;
	if (p->family == NFPROTO_IPV6)
		nfg_sc_flow6(f, ipv6_hdr(skb), th);
	else
		nfg_sc_flow4(f, ip_hdr(skb), th);
	if (th->syn) {
		if (th->ack)
			return XT_CONTINUE;	/* a reply to our own connection */
		nfg_sc_key_make(&k, p->saddr, p->family, info->mask,
				info->prefix);
		if (nfg_sc_al_lookup(&sn->al, &k, nfg_sc_now())) {
			this_cpu_inc(sn->stats->allowlist_hit);
			return nfg_sc_proxy_syn_pass(net, f);
		}
		this_cpu_inc(sn->stats->syn_seen);
		if (th->fin || th->rst || p->payload ||
		    nfg_sc_martian(skb, p->family) ||
		    nfg_sc_get_opts(skb, p, &c)) {
			this_cpu_inc(sn->stats->malformed);
			return NF_DROP;
		}
		return nfg_sc_proxy_syn_answer(sn, info, net, in, skb, p, f,
					       &c);
	}
	if (th->ack && !th->rst)
		return nfg_sc_proxy_ack(sn, info, net, skb, p, f);
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

	/* a rule made the state (checkentry) */
	if (WARN_ON_ONCE(!sn) || READ_ONCE(sn->dying))
		return XT_CONTINUE;
	if (iph->frag_off & htons(IP_MF | IP_OFFSET)) {
		this_cpu_inc(sn->stats->malformed);
		return NF_DROP;
	}
	memset(p.saddr, 0, sizeof(p.saddr));
	p.saddr[0] = (__force u32)iph->saddr;
	p.family = NFPROTO_IPV4;
	if (nfg_sc_after_ct(sn, skb, in))
		return XT_CONTINUE;
	if (info->mode == XT_SYNCOOKIE_MODE_PROXY)
		return nfg_sc_proxy(sn, info, net, in, skb, par, &p);
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
		return nfg_sc_answer(sn, net, in, skb, &p, isn, &s,
				     NFG_SC_SYNACK_WINDOW);
	}
	if (v == NFG_SC_DO_ACK) {
		if (nfg_cookie_v4_check(iph, p.th)) {
			this_cpu_inc(sn->stats->ack_valid);
			st = secure_tcp_seq_and_ts_off(net, iph->daddr, iph->saddr,
						       p.th->dest, p.th->source);
			if (nfg_sc_local_admit_ok(skb, &p, st.ts_off))
				nfg_sc_admit(sn, info, &p);
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

	/* a rule made the state (checkentry) */
	if (WARN_ON_ONCE(!sn) || READ_ONCE(sn->dying))
		return XT_CONTINUE;
	/* extension headers (fragment header included): see the man page */
	if (ip6h->nexthdr != IPPROTO_TCP) {
		this_cpu_inc(sn->stats->malformed);
		return NF_DROP;
	}
	memcpy(p.saddr, &ip6h->saddr, sizeof(p.saddr));
	p.family = NFPROTO_IPV6;
	if (nfg_sc_after_ct(sn, skb, in))
		return XT_CONTINUE;
	if (info->mode == XT_SYNCOOKIE_MODE_PROXY)
		return nfg_sc_proxy(sn, info, net, in, skb, par, &p);
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
		return nfg_sc_answer(sn, net, in, skb, &p, isn, &s,
				     NFG_SC_SYNACK_WINDOW);
	}
	if (v == NFG_SC_DO_ACK) {
		if (nfg_cookie_v6_check(ip6h, p.th)) {
			this_cpu_inc(sn->stats->ack_valid);
			st = secure_tcpv6_seq_and_ts_off(net, ip6h->daddr.s6_addr32,
							 ip6h->saddr.s6_addr32,
							 p.th->dest, p.th->source);
			if (nfg_sc_local_admit_ok(skb, &p, st.ts_off))
				nfg_sc_admit(sn, info, &p);
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

/*
 * The TSecr of nf_synproxy_core's ACK to the server. It answers the
 * server's SYN-ACK with that ACK, echoing the SYN-ACK's TSval, but it sets
 * the connection's timestamp offset (tsoff = TSval - its) before sending
 * it, so its own POST_ROUTING hook translates the echo once more, as if a
 * client had echoed our clock: the server gets TSval + tsoff. Linux 7.x's
 * tcp_check_req() drops an ACK that echoes no TSval it sent
 * (TcpExtTSEcrRejected); a real client's next segment then completes the
 * handshake, an idle or crafted client's never does. This hook takes the
 * second translation back on exactly that ACK: a pure ACK in the original
 * direction of a synproxy connection whose sequence adjustment is not set
 * yet (nf_synproxy_core sets it right after sending the ACK) and whose
 * TSecr is its + 2 * tsoff. It runs after nf_synproxy_core's POST_ROUTING
 * hook (NF_IP_PRI_CONNTRACK_CONFIRM - 1) and before conntrack's confirm
 * (NF_IP_PRI_LAST is the same priority; a hook registered later runs
 * first), which changes nothing in the packet. It is registered for the
 * netns, so while a SYNCOOKIE proxy rule exists it also corrects that ACK
 * of the mainline SYNPROXY target's connections, which have the same bug.
 */
static unsigned int nfg_sc_server_ack_hook(void *priv, struct sk_buff *skb,
					   const struct nf_hook_state *state)
{
	const struct nf_conn_synproxy *sp;
	enum ip_conntrack_info ctinfo;
	unsigned int thoff, optoff, optend;
	struct nf_conn_seqadj *seqadj;
	struct tcphdr *th, _th;
	struct nf_conn *ct;
	u32 tsecr, want;
	u8 *op;

	ct = nf_ct_get(skb, &ctinfo);
	if (!ct || CTINFO2DIR(ctinfo) != IP_CT_DIR_ORIGINAL ||
	    nf_ct_protonum(ct) != IPPROTO_TCP)
		return NF_ACCEPT;
	sp = nfct_synproxy(ct);
	seqadj = nfct_seqadj(ct);
	if (!sp || !sp->tsoff || !seqadj ||
	    seqadj->seq[IP_CT_DIR_REPLY].offset_after)
		return NF_ACCEPT;
	/* nf_synproxy_core's packets have no transport header offset set */
	if (state->pf == NFPROTO_IPV6) {
		u8 nexthdr = ipv6_hdr(skb)->nexthdr;
		__be16 frag_off;
		int off;

		off = ipv6_skip_exthdr(skb, sizeof(struct ipv6hdr), &nexthdr, &frag_off);
		/* not a TCP header in a non-first fragment */
		if (off < 0 || nexthdr != IPPROTO_TCP || (frag_off & htons(~0x7)))
			return NF_ACCEPT;
		thoff = off;
	} else {
		thoff = ip_hdrlen(skb);
	}
	th = skb_header_pointer(skb, thoff, sizeof(_th), &_th);
	if (!th || th->syn || th->rst || th->fin || !th->ack ||
	    th->doff * 4 < sizeof(*th) || skb->len != thoff + th->doff * 4)
		return NF_ACCEPT;
	optoff = thoff + sizeof(*th);
	optend = thoff + th->doff * 4;
	if (skb_ensure_writable(skb, optend))
		return NF_ACCEPT;
	th = (struct tcphdr *)(skb->data + thoff);
	want = sp->its + 2 * sp->tsoff;
	while (optoff < optend) {
		op = skb->data + optoff;
		if (op[0] == TCPOPT_EOL)
			break;
		if (op[0] == TCPOPT_NOP) {
			optoff++;
			continue;
		}
		if (optoff + 1 == optend || op[1] < 2 || optoff + op[1] > optend)
			break;
		if (op[0] == TCPOPT_TIMESTAMP && op[1] == TCPOLEN_TIMESTAMP) {
			tsecr = get_unaligned_be32(&op[6]);
			if (tsecr != want)
				break;
			put_unaligned_be32(tsecr - sp->tsoff, &op[6]);
			inet_proto_csum_replace4(&th->check, skb, cpu_to_be32(tsecr),
						 cpu_to_be32(tsecr - sp->tsoff), false);
			break;
		}
		optoff += op[1];
	}
	return NF_ACCEPT;
}

/* [0] IPv4, [1] IPv6: after nf_synproxy_core's hooks (see above) */
static const struct nf_hook_ops nfg_sc_server_ack_ops[2] = {
	{
		.hook		= nfg_sc_server_ack_hook,
		.pf		= NFPROTO_IPV4,
		.hooknum	= NF_INET_POST_ROUTING,
		.priority	= NF_IP_PRI_LAST,
	},
	{
		.hook		= nfg_sc_server_ack_hook,
		.pf		= NFPROTO_IPV6,
		.hooknum	= NF_INET_POST_ROUTING,
		.priority	= NF_IP6_PRI_LAST,
	},
};

/*
 * Proxy mode needs conntrack in this netns (reference counted by its owner,
 * one reference per rule) and nf_synproxy_core's hooks with ours after them
 * (one hold per netns and family, counted in nfg_sc_hooks under its lock:
 * see there why).
 */
static int syncookie_proxy_get(struct net *net, u8 family)
{
	struct synproxy_net *snet = synproxy_pernet(net);
	struct nfg_sc_hooks *h = nfg_sc_hooks(net);
	unsigned int *refs = &h->refs[family == NFPROTO_IPV6];
	int err;

	err = nf_ct_netns_get(net, family);
	if (err)
		goto err_out;
	mutex_lock(&h->lock);
	if (!*refs) {
		if (family == NFPROTO_IPV6)
			err = nf_synproxy_ipv6_init(snet, net);
		else
			err = nf_synproxy_ipv4_init(snet, net);
		if (err)
			goto err_unlock;
		err = nf_register_net_hook(net, &nfg_sc_server_ack_ops[family == NFPROTO_IPV6]);
		if (err) {
			if (family == NFPROTO_IPV6)
				nf_synproxy_ipv6_fini(snet, net);
			else
				nf_synproxy_ipv4_fini(snet, net);
			goto err_unlock;
		}
	}
	(*refs)++;
	mutex_unlock(&h->lock);
	return 0;

err_unlock:
	mutex_unlock(&h->lock);
	nf_ct_netns_put(net, family);
err_out:
	pr_info_ratelimited("SYNCOOKIE: proxy mode: cannot enable conntrack/synproxy hooks (%d)\n",
			    err);
	return err;
}

static void syncookie_proxy_put(struct net *net, u8 family)
{
	struct synproxy_net *snet = synproxy_pernet(net);
	struct nfg_sc_hooks *h = nfg_sc_hooks(net);
	unsigned int *refs = &h->refs[family == NFPROTO_IPV6];

	mutex_lock(&h->lock);
	if (!WARN_ON_ONCE(!*refs) && !--*refs) {
		nf_unregister_net_hook(net, &nfg_sc_server_ack_ops[family == NFPROTO_IPV6]);
		if (family == NFPROTO_IPV6)
			nf_synproxy_ipv6_fini(snet, net);
		else
			nf_synproxy_ipv4_fini(snet, net);
	}
	mutex_unlock(&h->lock);
	nf_ct_netns_put(net, family);
}

static int syncookie_tg_check(const struct xt_tgchk_param *par)
{
	struct xt_syncookie_tginfo *info = par->targinfo;
	unsigned int maxlen = par->family == NFPROTO_IPV6 ? 128 : 32;
	struct nfg_sc_net *sn;

	/*
	 * Legacy iptables: raw is the table before conntrack. nft_compat
	 * passes the nft table's name, which says nothing about where its
	 * chain runs: the packet path passes what conntrack saw first.
	 */
	if (!par->nft_compat && strcmp(par->table, "raw")) {
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
	if (info->mode != XT_SYNCOOKIE_MODE_LOCAL &&
	    info->mode != XT_SYNCOOKIE_MODE_PROXY) {
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
	/* the netns' first rule makes its state; it stays until netns exit */
	sn = nfg_sc_pernet_get(par->net);
	if (IS_ERR(sn))
		return PTR_ERR(sn);
	if (info->mode == XT_SYNCOOKIE_MODE_PROXY)
		return syncookie_proxy_get(par->net, par->family);
	return 0;
}

static void syncookie_tg_destroy(const struct xt_tgdtor_param *par)
{
	const struct xt_syncookie_tginfo *info = par->targinfo;

	if (info->mode == XT_SYNCOOKIE_MODE_PROXY)
		syncookie_proxy_put(par->net, par->family);
}

static struct xt_target syncookie_tg_reg[] __read_mostly = {
	{
		.name		= "SYNCOOKIE",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.hooks		= 1 << NF_INET_PRE_ROUTING,
		.proto		= IPPROTO_TCP,
		.checkentry	= syncookie_tg_check,
		.destroy	= syncookie_tg_destroy,
		.target		= syncookie_tg4,
		.targetsize	= sizeof(struct xt_syncookie_tginfo),
		.usersize	= offsetof(struct xt_syncookie_tginfo, mask),
		.me		= THIS_MODULE,
	},
	{
		.name		= "SYNCOOKIE",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.hooks		= 1 << NF_INET_PRE_ROUTING,
		.proto		= IPPROTO_TCP,
		.checkentry	= syncookie_tg_check,
		.destroy	= syncookie_tg_destroy,
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
