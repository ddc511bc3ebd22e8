// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard RTCACHE core: entry validation, table bounds and eviction.
 *
 * Theory of operation
 * -------------------
 * A forwarded packet costs one FIB lookup in ip_rcv_finish() (IPv4) or
 * ip6_rcv_finish() (IPv6), skipped there when the packet already carries a
 * valid dst. Conntrack has already classified the packet before that
 * point, so a route remembered per (conntrack, direction) can be attached
 * by the last PREROUTING hook and the lookup is gone.
 *
 * Learning. The RTCACHE target (mangle/filter FORWARD or INPUT) sees the
 * input route the packet got. It stores, in a per-netns side table keyed by
 * nfg_rtc_hkey(ct, dir), a counted reference on that dst, its dst_check()
 * cookie and the validation keys (struct nfg_rtc_keys) taken from the
 * packet: addresses, input interface, mark and DSCP. Conntrack extensions
 * cannot be added by modules since 5.18, hence the side table; the entry
 * also holds nf_ct_get_id() of the conntrack, because nf_conn objects are
 * SLAB_TYPESAFE_BY_RCU and a freed one can come back as another connection
 * at the same address. The entry never dereferences the conntrack pointer:
 * it is only a key.
 *
 * Learning late. Learning costs an allocation, a route reference and a
 * table insert, wasted on a flow that ends before it reuses the route
 * (DNS, one-packet UDP, scans: in the worst case every packet is a new
 * conntrack). So a direction is learnt only on its learn_after-th packet
 * (module parameter, default 2). The original direction's first packet is
 * recognised for free: its conntrack is still unconfirmed (confirmation
 * happens after FORWARD/INPUT), so with the default such a packet costs the
 * target one test and nothing else. Other counts go through the door: a
 * small per-netns array of slots, each holding a hash tag of (conntrack,
 * id, direction) and the packets seen, written without locks. It is a
 * hint: a collision restarts a count and only delays learning, and a
 * direction that lost its entry (stale, purged) finds its count still
 * there and is learnt again at once. Except when it churns: an entry
 * dropped unused because the packet's keys differed (a mark that changes
 * per packet, or keys that differ between PREROUTING and the target) is a
 * strike in the slot, and each strike doubles the packets before the
 * direction is learnt again (nfg_rtc_door_strike()).
 *
 * Using. The PREROUTING hook (priority NF_IP_PRI_LAST, after conntrack,
 * mangle and DNAT) looks the packet's (ct, dir) up under RCU. The entry is
 * used only if nfg_rtc_validate() says HIT (same conntrack id, identical
 * keys: policy routing by mark, TOS or input interface stays correct) and
 * dst_check() passes (any FIB or rule change bumps the IPv4 generation
 * id or the IPv6 fib6 serial number and fails it). A stale entry is
 * removed and counted as invalid; the packet takes the normal lookup and
 * the target learns again. Packets that are untracked, xfrm, bridged,
 * carry a metadata dst, are multicast/broadcast or belong to a
 * flowtable-offloaded conntrack are never learnt nor served
 * (enum nfg_rtc_skip).
 *
 * Learning what was looked up. The IPv6 cookie that dst_check() compares
 * is the serial number of the route's fib6 node, and the target can only
 * read it when it learns, after the lookup: a route added in between (a
 * more specific prefix updates the serial numbers of every node up to the
 * root, the learnt route's included) would leave the learnt route stale
 * under a cookie that looks fresh, forever. A packet held in NFQUEUE
 * between routing and the target makes "in between" as long as anyone
 * likes. So the hook notes the netns's serial counter before the lookup,
 * and the target learns only if the route's cookie is not newer than that
 * (nfg_rtc_cookie_fresh()); otherwise a later packet learns. IPv4 needs
 * nothing of the kind: a route carries the generation it was made in.
 *
 * Lifetime. Modules get no conntrack destroy notification (ctnetlink's
 * event registration is exclusive), so entries die in three ways: on use
 * (id mismatch), in a periodic bounded GC that asks conntrack whether the
 * (tuple, zone) still resolves to the same (pointer, id), and in bulk on
 * flush, rule removal of the netns's last RTCACHE rule, netns exit and
 * module exit. A netdev event (an interface down, away or without
 * carrier) invalidates the whole netns at once: it bumps the netns's
 * generation, an entry learnt in an older one (noted before its lookup,
 * like the IPv6 serial) is never served, and a work item drops such
 * entries later. Bulk drops walk the table in read sections of at most
 * NFG_RTC_WALK_BATCH entries (nfg_rtc_walk()), never under RTNL. Every
 * entry is freed after an RCU grace period and only then drops its dst
 * reference, so an skb given the route without a reference (noref) in a
 * read-side section is safe.
 *
 * Bounds. The table holds at most max_entries (module parameter, clamped
 * by nfg_rtc_clamp_max()). nfg_rtc_admit() refuses a new entry when the
 * table is full; the refusal is counted as an eviction (of the newcomer).
 * Above the high-water mark (7/8 of the bound) the GC also evicts entries
 * not used for idle_min ticks (nfg_rtc_gc_evict()), counted likewise, so
 * long-idle flows make room for new ones.
 *
 * Where it lives. Everything in this file is pure: no locks, no
 * allocation (also compiled by tests/unit). The per-netns state built on
 * it (the table, the entries' lifetime, bulk drops and flush, the per-CPU
 * counters and their sums, the bound) is rtcache_net.c, which the
 * genetlink control plane (rtcache_nl.c) and the target, hooks, GC and
 * netdev notifier (rtcache_tg.c) share; no file calls one of a higher
 * layer (tests/layering.sh).
 */
#include "rtcache_core.h"

#include <linux/minmax.h>
#include <linux/string.h>

/*
 * Hash key of (conntrack, direction): conntrack objects are at least
 * 8-byte aligned (the skb stores ctinfo in the low bits of the pointer),
 * so bit 0 is free for the direction (0 original, 1 reply).
 */
unsigned long nfg_rtc_hkey(const void *ct, unsigned int dir)
{
	return (unsigned long)ct | (dir & 1);
}

bool nfg_rtc_keys_equal(const struct nfg_rtc_keys *a,
			const struct nfg_rtc_keys *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

enum nfg_rtc_verdict nfg_rtc_validate(const struct nfg_rtc_learnt *l,
				      u32 ct_id,
				      const struct nfg_rtc_keys *pkt)
{
	if (l->ct_id != ct_id)
		return NFG_RTC_STALE_CT;
	if (!nfg_rtc_keys_equal(&l->keys, pkt))
		return NFG_RTC_STALE_KEYS;
	return NFG_RTC_HIT;
}

bool nfg_rtc_admit(unsigned int count, unsigned int max)
{
	return count < max;
}

unsigned int nfg_rtc_high_water(unsigned int max)
{
	return max - max / 8;
}

/*
 * GC: evict a live entry only under pressure (at or above the high-water
 * mark) and only if it has not been used for @idle_min ticks of the
 * environment's wrapping 32-bit clock.
 */
bool nfg_rtc_gc_evict(unsigned int count, unsigned int max, u32 now,
		      u32 last_used, u32 idle_min)
{
	if (count < nfg_rtc_high_water(max))
		return false;
	return (u32)(now - last_used) >= idle_min;
}

unsigned int nfg_rtc_clamp_max(unsigned int max)
{
	if (max < NFG_RTC_MAX_ENTRIES_MIN)
		return NFG_RTC_MAX_ENTRIES_MIN;
	if (max > NFG_RTC_MAX_ENTRIES_MAX)
		return NFG_RTC_MAX_ENTRIES_MAX;
	return max;
}

unsigned int nfg_rtc_clamp_learn_after(unsigned int n)
{
	if (n < NFG_RTC_LEARN_AFTER_MIN)
		return NFG_RTC_LEARN_AFTER_MIN;
	if (n > NFG_RTC_LEARN_AFTER_MAX)
		return NFG_RTC_LEARN_AFTER_MAX;
	return n;
}

/*
 * The door's hash of (conntrack, direction) and conntrack id: the slot is
 * taken from the low bits, the tag is the high 32 bits (a 64-bit mixer,
 * splitmix64's finaliser).
 */
u64 nfg_rtc_door_hash(unsigned long hkey, u32 ct_id)
{
	u64 x = (u64)hkey ^ ((u64)ct_id << 32 | ct_id);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * A packet of a direction with nothing cached went through the target: is
 * it the learn_after-th? @slot is the door slot of @hash (layout above
 * NFG_RTC_DOOR_SEEN_MASK). @known is how many packets of the direction the
 * caller knows went before this one without asking the door (1 for the
 * original direction of a confirmed conntrack). Returns true to learn now;
 * otherwise the slot now counts this packet. The slot is left alone when
 * learning, so a direction that loses its entry is learnt again on its
 * next packet, unless nfg_rtc_door_strike() recorded that it churns: then
 * 2^strikes more packets must pass first.
 */
bool nfg_rtc_door_pass(u64 *slot, u64 hash, u32 known,
		       unsigned int learn_after)
{
	u32 tag = hash >> 32, seen = 0, strikes = 0, need;
	u64 old = *slot;

	if ((u32)(old >> 32) == tag) {
		seen = (u32)old & NFG_RTC_DOOR_SEEN_MASK;
		strikes = (u32)old >> NFG_RTC_DOOR_STRIKES_SHIFT;
	}
	if (seen < known)
		seen = known;
	need = learn_after - 1;
	if (strikes)
		need += 1U << min_t(u32, strikes, NFG_RTC_DOOR_STRIKES_MAX);
	if (seen >= need)
		return true;
	*slot = (u64)tag << 32 | strikes << NFG_RTC_DOOR_STRIKES_SHIFT |
		(seen + 1);
	return false;
}

/*
 * The entry of @hash's direction was dropped because a packet's keys
 * (mark, DSCP, input interface, addresses) differed from the learnt ones.
 * If it never served a packet (@served false), the keys change between
 * PREROUTING and the target or from packet to packet: learning again at
 * once would only churn, so count a strike and start counting again. If it
 * did serve, the flow simply changed: forget the strikes, learn at once.
 */
void nfg_rtc_door_strike(u64 *slot, u64 hash, bool served)
{
	u32 tag = hash >> 32, strikes = 0;
	u64 old = *slot;

	if (served) {
		*slot = (u64)tag << 32 | NFG_RTC_DOOR_SEEN_MASK;
		return;
	}
	if ((u32)(old >> 32) == tag)
		strikes = (u32)old >> NFG_RTC_DOOR_STRIKES_SHIFT;
	if (strikes < NFG_RTC_DOOR_STRIKES_MAX)
		strikes++;
	*slot = (u64)tag << 32 | strikes << NFG_RTC_DOOR_STRIKES_SHIFT;
}

void nfg_rtc_stats_add(struct nfg_rtc_stats *sum,
		       const struct nfg_rtc_stats *one)
{
	sum->hit += one->hit;
	sum->miss += one->miss;
	sum->learn += one->learn;
	sum->invalid += one->invalid;
	sum->evict += one->evict;
}

/*
 * May a route whose IPv6 cookie is @cookie be learnt for a packet whose
 * lookup came after the netns's serial counter read @noted? Only if the
 * route's fib6 node has not changed since (cookie not newer than @noted):
 * serial numbers are 1..NFG_RTC_SERIAL_MAX and wrap to 1, so "newer" is
 * up to half the circle ahead. 0 is no serial (a route unlinked from the
 * FIB, or nothing noted): never fresh.
 */
bool nfg_rtc_cookie_fresh(u32 cookie, u32 noted)
{
	u32 ahead;

	if (!cookie || !noted || cookie > NFG_RTC_SERIAL_MAX ||
	    noted > NFG_RTC_SERIAL_MAX)
		return false;
	/* How far @cookie is ahead of @noted on the circle 1..MAX. */
	if (cookie >= noted)
		ahead = cookie - noted;
	else
		ahead = NFG_RTC_SERIAL_MAX - (noted - cookie);
	return ahead == 0 || ahead > NFG_RTC_SERIAL_MAX / 2;
}

/*
 * Walk a whole table through @ops, at most @batch (at least 1) entries per
 * read section, pausing between sections. Returns the entries visited.
 */
unsigned long nfg_rtc_walk(const struct nfg_rtc_walk_ops *ops, void *arg,
			   unsigned int batch)
{
	unsigned long visited = 0;
	unsigned int i;
	void *e;

	batch = max(batch, 1U);
	for (;;) {
		e = NULL;
		ops->start(arg);
		for (i = 0; i < batch; i++) {
			e = ops->next(arg);
			if (!e)
				break;
			ops->visit(e, arg);
		}
		ops->stop(arg);
		visited += i;
		if (!e)
			return visited;
		ops->pause(arg);
	}
}
