/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard RTCACHE: the pure part of the per-conntrack route cache (see the
 * theory of operation at the top of rtcache_core.c). Also compiled by the
 * userspace unit harness in tests/unit against a thin shim of kernel
 * headers: nothing here knows about sk_buffs, routes or conntrack.
 */
#ifndef _NFG_RTCACHE_CORE_H
#define _NFG_RTCACHE_CORE_H

#include <linux/bits.h>
#include <linux/types.h>

/* Table bound (module parameter max_entries) limits and default. */
#define NFG_RTC_MAX_ENTRIES_MIN		16U
#define NFG_RTC_MAX_ENTRIES_MAX		BIT(24)
#define NFG_RTC_DEFAULT_MAX_ENTRIES	65536U

/*
 * Learning starts with a direction's learn_after-th packet (module
 * parameter): a flow that never sends that many packets never pays for an
 * entry. 1 learns on the first packet.
 */
#define NFG_RTC_LEARN_AFTER_MIN		1U
#define NFG_RTC_LEARN_AFTER_MAX		255U
#define NFG_RTC_DEFAULT_LEARN_AFTER	2U

/* Slots of the per-netns door (packets seen per direction, a hint). */
#define NFG_RTC_DOOR_SLOTS		512U

/*
 * A door slot: tag (upper 32 bits of the hash), strikes (8 bits: entries
 * of the direction dropped unused because the packet's keys differed) and
 * packets seen (24 bits). Each strike doubles the packets that must pass
 * before the direction is learnt again, up to NFG_RTC_DOOR_STRIKES_MAX.
 */
#define NFG_RTC_DOOR_SEEN_MASK		0xffffffU
#define NFG_RTC_DOOR_STRIKES_SHIFT	24
#define NFG_RTC_DOOR_STRIKES_MAX	10U

/* DSCP part of the IPv4 TOS / IPv6 traffic class: ECN bits may change. */
#define NFG_RTC_DSCP_MASK		0xfc

/*
 * What a packet must carry to reuse a learnt route: the addresses of its
 * direction as seen at the end of PREROUTING (after DNAT), the input
 * interface, the skb mark and the DSCP. IPv4 addresses use a[0] only, the
 * rest is zero. Compared as a whole: keep it free of padding holes.
 */
struct nfg_rtc_keys {
	__be32	saddr[4];
	__be32	daddr[4];
	u32	mark;
	s32	iif;
	u8	dscp;
	u8	family;		/* NFPROTO_IPV4 / NFPROTO_IPV6 */
	u8	pad[2];
};

/* Why a packet is never cached (the environment sets these bits). */
enum nfg_rtc_skip {
	NFG_RTC_SKIP_UNTRACKED	= 1 << 0,	/* no conntrack, or the untracked template */
	NFG_RTC_SKIP_XFRM	= 1 << 1,	/* secpath, or an xfrm bundle as route */
	NFG_RTC_SKIP_BRIDGED	= 1 << 2,	/* came through br_netfilter */
	NFG_RTC_SKIP_METADATA	= 1 << 3,	/* metadata dst, lwt input redirect */
	NFG_RTC_SKIP_MCAST	= 1 << 4,	/* multicast/broadcast frame or route */
	NFG_RTC_SKIP_OFFLOAD	= 1 << 5,	/* flowtable-offloaded conntrack */
	NFG_RTC_SKIP_NOROUTE	= 1 << 6,	/* no dst, or not an input route */
	NFG_RTC_SKIP_L3MDEV	= 1 << 7,	/* input on a VRF device or its slave */
	NFG_RTC_SKIP_LOOPBACK	= 1 << 8,	/* input on loopback: keeps its output route */
};

/* What a lookup concluded about an entry found for the packet's conntrack. */
enum nfg_rtc_verdict {
	NFG_RTC_HIT,		/* same conntrack, same keys: use the route if dst_check passes */
	NFG_RTC_STALE_CT,	/* the conntrack slot was reused by another connection */
	NFG_RTC_STALE_KEYS,	/* input interface, mark, DSCP or address changed */
	NFG_RTC_STALE_DEV,	/* learnt before a netdev event in its netns */
};

/* The part of an entry the validation reads: immutable once published. */
struct nfg_rtc_learnt {
	struct nfg_rtc_keys	keys;
	u32			ct_id;	/* nf_ct_get_id() when learnt */
	u32			cookie;	/* dst_check() cookie (rt6 cookie for IPv6) */
};

/* Counters, one copy per CPU in the kernel; summed for reports. */
struct nfg_rtc_stats {
	u64	hit;		/* cached route used, lookup skipped */
	u64	miss;		/* cacheable packet, nothing cached for its conntrack/direction */
	u64	learn;		/* route remembered by the target */
	u64	invalid;	/* entry found but stale (route, conntrack or keys): dropped */
	u64	evict;		/* not learnt or dropped because the table was full */
};

/*
 * IPv6 serial numbers (the netns's fib6_sernum, a fib6 node's fn_sernum,
 * hence route cookies) count 1..NFG_RTC_SERIAL_MAX and wrap to 1.
 */
#define NFG_RTC_SERIAL_MAX		0x7fffffffU

/*
 * Entries a table walk handles per read section (nfg_rtc_walk()): a walk
 * of the largest table (16M entries) never holds RCU, or keeps a CPU from
 * rescheduling, for more than this many.
 */
#define NFG_RTC_WALK_BATCH		1024U

/*
 * A table walk in bounded read sections, for nfg_rtc_walk(). @start
 * enters a read section and @stop leaves it, keeping the position; @next
 * returns the next entry or NULL at the end; @visit handles one entry
 * inside the section; @pause runs between sections (it may sleep).
 */
struct nfg_rtc_walk_ops {
	void	(*start)(void *arg);
	void	*(*next)(void *arg);
	void	(*visit)(void *entry, void *arg);
	void	(*stop)(void *arg);
	void	(*pause)(void *arg);
};

unsigned long nfg_rtc_hkey(const void *ct, unsigned int dir);
bool nfg_rtc_keys_equal(const struct nfg_rtc_keys *a,
			const struct nfg_rtc_keys *b);
enum nfg_rtc_verdict nfg_rtc_validate(const struct nfg_rtc_learnt *l,
				      u32 ct_id,
				      const struct nfg_rtc_keys *pkt);
bool nfg_rtc_admit(unsigned int count, unsigned int max);
unsigned int nfg_rtc_high_water(unsigned int max);
bool nfg_rtc_gc_evict(unsigned int count, unsigned int max, u32 now,
		      u32 last_used, u32 idle_min);
unsigned int nfg_rtc_clamp_max(unsigned int max);
unsigned int nfg_rtc_clamp_learn_after(unsigned int n);
u64 nfg_rtc_door_hash(unsigned long hkey, u32 ct_id);
bool nfg_rtc_door_pass(u64 *slot, u64 hash, u32 known,
		       unsigned int learn_after);
void nfg_rtc_door_strike(u64 *slot, u64 hash, bool served);
void nfg_rtc_stats_add(struct nfg_rtc_stats *sum,
		       const struct nfg_rtc_stats *one);
bool nfg_rtc_cookie_fresh(u32 cookie, u32 noted);
unsigned long nfg_rtc_walk(const struct nfg_rtc_walk_ops *ops, void *arg,
			   unsigned int batch);

#endif /* _NFG_RTCACHE_CORE_H */
