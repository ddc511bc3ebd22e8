// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the RTCACHE core (kernel/rtcache_core.c), compiled in
 * userspace against tests/unit/shim with ASan and UBSan: hash keys per
 * (conntrack, direction), entry validation (conntrack id, every key
 * field), the table bound, GC eviction under pressure with a wrapping
 * clock, counter sums, the door that delays learning to a
 * direction's learn_after-th packet, the IPv6 cookie check against the
 * serial noted before a packet's lookup, and the table walk in bounded
 * read sections.
 */
#include "rtcache_core.c"
#include "utest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void run(const char *name, void (*fn)(void))
{
	struct utest_mark m = utest_begin(name);

	fn();
	utest_end(&m);
}

static struct nfg_rtc_keys keys4(u32 s, u32 d, u32 mark, s32 iif, u8 dscp)
{
	struct nfg_rtc_keys k;

	memset(&k, 0, sizeof(k));
	k.saddr[0] = s;
	k.daddr[0] = d;
	k.mark = mark;
	k.iif = iif;
	k.dscp = dscp;
	k.family = 2;
	return k;
}

static void test_keys_no_padding(void)
{
	/* memcmp() compares every byte: the struct must have no holes. */
	CHECK_EQ(sizeof(struct nfg_rtc_keys), 16 + 16 + 4 + 4 + 1 + 1 + 2);
}

static void test_hkey(void)
{
	static long objs[4];	/* 8-byte aligned like nf_conn */
	unsigned long a0 = nfg_rtc_hkey(&objs[0], 0);
	unsigned long a1 = nfg_rtc_hkey(&objs[0], 1);
	unsigned long b0 = nfg_rtc_hkey(&objs[1], 0);

	CHECK(a0 != a1);
	CHECK(a0 != b0);
	CHECK(a1 != b0);
	CHECK_EQ(a0, (unsigned long)&objs[0]);
	CHECK_EQ(a1 & ~1UL, a0);
	/* Only the direction bit is used. */
	CHECK_EQ(nfg_rtc_hkey(&objs[0], 3), a1);
}

static void test_validate_hit(void)
{
	struct nfg_rtc_learnt l = { .ct_id = 42, .cookie = 7 };
	struct nfg_rtc_keys pkt;

	l.keys = keys4(0x0a000101, 0x0a000202, 0, 3, 0);
	pkt = l.keys;
	CHECK_EQ(nfg_rtc_validate(&l, 42, &pkt), NFG_RTC_HIT);
}

static void test_validate_stale_ct(void)
{
	struct nfg_rtc_learnt l = { .ct_id = 42 };
	struct nfg_rtc_keys pkt;

	l.keys = keys4(1, 2, 0, 3, 0);
	pkt = l.keys;
	CHECK_EQ(nfg_rtc_validate(&l, 43, &pkt), NFG_RTC_STALE_CT);
	CHECK_EQ(nfg_rtc_validate(&l, 0, &pkt), NFG_RTC_STALE_CT);
}

static void test_validate_each_key(void)
{
	struct nfg_rtc_learnt l = { .ct_id = 1 };
	struct nfg_rtc_keys pkt;
	int i;

	l.keys = keys4(1, 2, 0x10, 3, 0x20);

	pkt = l.keys;
	pkt.mark = 0x11;
	CHECK_EQ(nfg_rtc_validate(&l, 1, &pkt), NFG_RTC_STALE_KEYS);
	pkt = l.keys;
	pkt.mark = 0;
	CHECK_EQ(nfg_rtc_validate(&l, 1, &pkt), NFG_RTC_STALE_KEYS);
	pkt = l.keys;
	pkt.iif = 4;
	CHECK_EQ(nfg_rtc_validate(&l, 1, &pkt), NFG_RTC_STALE_KEYS);
	pkt = l.keys;
	pkt.dscp = 0x28;
	CHECK_EQ(nfg_rtc_validate(&l, 1, &pkt), NFG_RTC_STALE_KEYS);
	pkt = l.keys;
	pkt.family = 10;
	CHECK_EQ(nfg_rtc_validate(&l, 1, &pkt), NFG_RTC_STALE_KEYS);
	for (i = 0; i < 4; i++) {
		pkt = l.keys;
		pkt.saddr[i] ^= 1;
		CHECK_EQ(nfg_rtc_validate(&l, 1, &pkt), NFG_RTC_STALE_KEYS);
		pkt = l.keys;
		pkt.daddr[i] ^= 0x80000000;
		CHECK_EQ(nfg_rtc_validate(&l, 1, &pkt), NFG_RTC_STALE_KEYS);
	}
	/* The conntrack id is checked first. */
	pkt = l.keys;
	pkt.mark = 5;
	CHECK_EQ(nfg_rtc_validate(&l, 2, &pkt), NFG_RTC_STALE_CT);
}

static void test_dscp_mask(void)
{
	/* ECN bits are outside the mask: CE marking must not invalidate. */
	CHECK_EQ(0x2e & NFG_RTC_DSCP_MASK, 0x2c);
	CHECK_EQ(0x03 & NFG_RTC_DSCP_MASK, 0);
	CHECK_EQ(0xb8 & NFG_RTC_DSCP_MASK, 0xb8);
}

static void test_admit_bound(void)
{
	CHECK(nfg_rtc_admit(0, 16));
	CHECK(nfg_rtc_admit(15, 16));
	CHECK(!nfg_rtc_admit(16, 16));
	CHECK(!nfg_rtc_admit(17, 16));
	CHECK(!nfg_rtc_admit(0, 0));
}

static void test_clamp(void)
{
	CHECK_EQ(nfg_rtc_clamp_max(0), NFG_RTC_MAX_ENTRIES_MIN);
	CHECK_EQ(nfg_rtc_clamp_max(1), NFG_RTC_MAX_ENTRIES_MIN);
	CHECK_EQ(nfg_rtc_clamp_max(1000), 1000);
	CHECK_EQ(nfg_rtc_clamp_max(~0U), NFG_RTC_MAX_ENTRIES_MAX);
	CHECK_EQ(nfg_rtc_clamp_max(NFG_RTC_DEFAULT_MAX_ENTRIES),
		 NFG_RTC_DEFAULT_MAX_ENTRIES);
}

static void test_gc_evict(void)
{
	unsigned int max = 64, hw = nfg_rtc_high_water(64);

	CHECK_EQ(hw, 56);
	/* Below the high-water mark nothing live is evicted, however idle. */
	CHECK(!nfg_rtc_gc_evict(hw - 1, max, 1000000, 0, 10));
	/* Under pressure: only entries idle for at least idle_min. */
	CHECK(nfg_rtc_gc_evict(hw, max, 1000, 990, 10));
	CHECK(!nfg_rtc_gc_evict(hw, max, 1000, 991, 10));
	CHECK(nfg_rtc_gc_evict(max, max, 1000, 0, 10));
	/* The clock wraps. */
	CHECK(nfg_rtc_gc_evict(max, max, 5, 0xfffffff0U, 10));
	CHECK(!nfg_rtc_gc_evict(max, max, 5, 0xfffffffeU, 10));
	/* Smallest table: the high-water mark still leaves room. */
	CHECK(nfg_rtc_high_water(NFG_RTC_MAX_ENTRIES_MIN) <
	      NFG_RTC_MAX_ENTRIES_MIN);
}

/*
 * A table model driven by the core's decisions: fill past the bound, then
 * let the GC run under pressure; the bound holds and every refusal and
 * eviction is counted exactly once.
 */
static void test_table_model(void)
{
	enum { MAX = 32, FLOWS = 100 };
	u32 last_used[MAX];
	struct nfg_rtc_stats st = { 0 };
	unsigned int count = 0, i, j;
	u32 now = 0;

	for (i = 0; i < FLOWS; i++) {
		now++;
		if (!nfg_rtc_admit(count, MAX)) {
			st.evict++;
			continue;
		}
		last_used[count++] = now;
		st.learn++;
	}
	CHECK_EQ(count, MAX);
	CHECK_EQ(st.learn, MAX);
	CHECK_EQ(st.evict, FLOWS - MAX);

	/* Entries 0..7 stay busy; the GC evicts the idle ones down to the mark. */
	now += 100;
	for (j = 0; j < 8; j++)
		last_used[j] = now;
	for (j = count; j-- > 0;) {
		if (nfg_rtc_gc_evict(count, MAX, now, last_used[j], 50)) {
			last_used[j] = last_used[--count];
			st.evict++;
		}
	}
	CHECK_EQ(count, nfg_rtc_high_water(MAX) - 1);
	CHECK_EQ(st.evict, FLOWS - MAX + MAX - count);
	CHECK(nfg_rtc_admit(count, MAX));
}

static void test_stats_add(void)
{
	struct nfg_rtc_stats sum = { 0 };
	struct nfg_rtc_stats a = { 1, 2, 3, 4, 5 };
	struct nfg_rtc_stats b = { 10, 20, 30, 40, 50 };

	nfg_rtc_stats_add(&sum, &a);
	nfg_rtc_stats_add(&sum, &b);
	CHECK_EQ(sum.hit, 11);
	CHECK_EQ(sum.miss, 22);
	CHECK_EQ(sum.learn, 33);
	CHECK_EQ(sum.invalid, 44);
	CHECK_EQ(sum.evict, 55);
}

static void test_clamp_learn_after(void)
{
	CHECK_EQ(nfg_rtc_clamp_learn_after(0), 1);
	CHECK_EQ(nfg_rtc_clamp_learn_after(1), 1);
	CHECK_EQ(nfg_rtc_clamp_learn_after(2), 2);
	CHECK_EQ(nfg_rtc_clamp_learn_after(~0U), NFG_RTC_LEARN_AFTER_MAX);
	CHECK_EQ(nfg_rtc_clamp_learn_after(NFG_RTC_DEFAULT_LEARN_AFTER), 2);
}

/* Packets of one direction until the door says learn (1-based). */
static unsigned int door_learns_at(u64 *slot, u64 hash, u32 known,
				   unsigned int n)
{
	unsigned int pkt;

	for (pkt = 1; pkt <= 4000; pkt++)
		if (nfg_rtc_door_pass(slot, hash, known, n))
			return pkt;
	return 0;
}

static void test_door_counts(void)
{
	u64 h = nfg_rtc_door_hash(0x1000, 7), slot;
	unsigned int n;

	/* learn_after 1: the first packet, the slot is never written. */
	slot = 0;
	CHECK(nfg_rtc_door_pass(&slot, h, 0, 1));
	CHECK_EQ(slot, 0);
	/* Reply direction (nothing known): learnt on packet n. */
	for (n = 1; n <= 5; n++) {
		slot = 0;
		CHECK_EQ(door_learns_at(&slot, h, 0, n), n);
	}
	/*
	 * Original direction of a confirmed conntrack: the creating packet
	 * went by without the door, so with the default the first packet
	 * the door sees is learnt, and with 3 the second.
	 */
	slot = 0;
	CHECK_EQ(door_learns_at(&slot, h, 1, 2), 1);
	CHECK_EQ(slot, 0);
	slot = 0;
	CHECK_EQ(door_learns_at(&slot, h, 1, 3), 2);
	/* The largest bound is reached too. */
	slot = 0;
	CHECK_EQ(door_learns_at(&slot, h, 0, NFG_RTC_LEARN_AFTER_MAX),
		 NFG_RTC_LEARN_AFTER_MAX);
}

static void test_door_relearn(void)
{
	u64 h = nfg_rtc_door_hash(0x2001, 9), slot = 0;

	CHECK_EQ(door_learns_at(&slot, h, 0, 4), 4);
	/* The entry went stale: the count is still there, learnt at once. */
	CHECK(nfg_rtc_door_pass(&slot, h, 0, 4));
	CHECK(nfg_rtc_door_pass(&slot, h, 0, 4));
}

static void test_door_collision(void)
{
	u64 a = nfg_rtc_door_hash(0x3000, 1);
	u64 b = nfg_rtc_door_hash(0x3000, 2), slot = 0;

	/* Same slot, other tag: a count restarts, it is only delayed. */
	CHECK((u32)(a >> 32) != (u32)(b >> 32));
	CHECK(!nfg_rtc_door_pass(&slot, a, 0, 3));
	CHECK(!nfg_rtc_door_pass(&slot, a, 0, 3));
	CHECK(!nfg_rtc_door_pass(&slot, b, 0, 3));
	CHECK(!nfg_rtc_door_pass(&slot, a, 0, 3));
	CHECK(!nfg_rtc_door_pass(&slot, a, 0, 3));
	CHECK(nfg_rtc_door_pass(&slot, a, 0, 3));
}

static void test_door_strikes(void)
{
	u64 h = nfg_rtc_door_hash(0x4001, 3), o = nfg_rtc_door_hash(0x5001, 3);
	u64 slot = 0;
	unsigned int s;

	/* learn_after 2, reply direction: learnt on its 2nd packet. */
	CHECK_EQ(door_learns_at(&slot, h, 0, 2), 2);
	/* Each unused drop doubles the packets before learning again. */
	for (s = 1; s <= NFG_RTC_DOOR_STRIKES_MAX; s++) {
		nfg_rtc_door_strike(&slot, h, false);
		CHECK_EQ(door_learns_at(&slot, h, 0, 2), (1U << s) + 2);
	}
	/* Capped. */
	nfg_rtc_door_strike(&slot, h, false);
	CHECK_EQ(door_learns_at(&slot, h, 0, 2),
		 (1U << NFG_RTC_DOOR_STRIKES_MAX) + 2);
	/* An entry that served: strikes forgotten, learnt at once. */
	nfg_rtc_door_strike(&slot, h, true);
	CHECK(nfg_rtc_door_pass(&slot, h, 0, 2));
	CHECK(nfg_rtc_door_pass(&slot, h, 0, NFG_RTC_LEARN_AFTER_MAX));
	/* A strike after that starts from one again. */
	nfg_rtc_door_strike(&slot, h, false);
	CHECK_EQ(door_learns_at(&slot, h, 1, 2), 3);
	/* Another tag's strike does not count for this one. */
	slot = 0;
	nfg_rtc_door_strike(&slot, o, false);
	nfg_rtc_door_strike(&slot, h, false);
	CHECK_EQ(door_learns_at(&slot, h, 0, 2), 4);
}

static void test_door_hash(void)
{
	static long objs[2];
	unsigned long k0 = nfg_rtc_hkey(&objs[0], 0);
	unsigned long k1 = nfg_rtc_hkey(&objs[0], 1);
	unsigned int slots[NFG_RTC_DOOR_SLOTS] = { 0 };
	unsigned int i, used = 0;

	/* Direction, conntrack and id each change the tag. */
	CHECK(nfg_rtc_door_hash(k0, 5) >> 32 != nfg_rtc_door_hash(k1, 5) >> 32);
	CHECK(nfg_rtc_door_hash(k0, 5) >> 32 != nfg_rtc_door_hash(k0, 6) >> 32);
	CHECK(nfg_rtc_door_hash(k0, 5) >> 32 !=
	      nfg_rtc_door_hash(nfg_rtc_hkey(&objs[1], 0), 5) >> 32);
	/* Conntracks 256 bytes apart spread over the slots. */
	for (i = 0; i < NFG_RTC_DOOR_SLOTS; i++)
		slots[nfg_rtc_door_hash(0xffff888000000000UL + i * 256UL, i) &
		      (NFG_RTC_DOOR_SLOTS - 1)]++;
	for (i = 0; i < NFG_RTC_DOOR_SLOTS; i++)
		used += slots[i] != 0;
	CHECK(used > NFG_RTC_DOOR_SLOTS / 2);
}

/*
 * A route may be learnt only if its IPv6 cookie is not newer than the
 * serial noted before the packet's lookup, on the circle 1..2^31-1.
 */
static void test_cookie_fresh(void)
{
	const u32 max = NFG_RTC_SERIAL_MAX;

	/* Unchanged since the note, or older. */
	CHECK(nfg_rtc_cookie_fresh(7, 7));
	CHECK(nfg_rtc_cookie_fresh(6, 7));
	CHECK(nfg_rtc_cookie_fresh(1, 1000000));
	/* Changed after the note: the lookup may have missed it. */
	CHECK(!nfg_rtc_cookie_fresh(8, 7));
	CHECK(!nfg_rtc_cookie_fresh(1000000, 1));
	/* No serial: a route unlinked from the FIB, or nothing noted. */
	CHECK(!nfg_rtc_cookie_fresh(0, 7));
	CHECK(!nfg_rtc_cookie_fresh(7, 0));
	CHECK(!nfg_rtc_cookie_fresh(0, 0));
	/* Not serial numbers at all. */
	CHECK(!nfg_rtc_cookie_fresh(max + 1, 7));
	CHECK(!nfg_rtc_cookie_fresh(7, max + 1));
	CHECK(!nfg_rtc_cookie_fresh(0xffffffffU, 0xffffffffU));
	/* The counter wraps from max to 1. */
	CHECK(nfg_rtc_cookie_fresh(max, max));
	CHECK(nfg_rtc_cookie_fresh(max - 1, max));
	CHECK(!nfg_rtc_cookie_fresh(1, max));
	CHECK(!nfg_rtc_cookie_fresh(3, max - 1));
	CHECK(nfg_rtc_cookie_fresh(max, 1));
	CHECK(nfg_rtc_cookie_fresh(max - 5, 2));
	/* Newer means up to half the circle ahead. */
	CHECK(!nfg_rtc_cookie_fresh(1 + max / 2, 1));
	CHECK(nfg_rtc_cookie_fresh(2 + max / 2, 1));
}

/* A table of n entries for nfg_rtc_walk(), counting what each hold does. */
struct walk_model {
	unsigned long n, pos, visited, holds, pauses;
	unsigned int in_hold, max_hold;
	bool held;
	unsigned char *seen;
};

static void walk_start(void *arg)
{
	struct walk_model *m = arg;

	CHECK(!m->held);
	m->held = true;
	m->in_hold = 0;
	m->holds++;
}

static void *walk_next(void *arg)
{
	struct walk_model *m = arg;

	CHECK(m->held);
	if (m->pos == m->n)
		return NULL;
	return &m->seen[m->pos++];
}

static void walk_visit(void *entry, void *arg)
{
	struct walk_model *m = arg;
	unsigned char *e = entry;

	CHECK(m->held);
	(*e)++;
	m->visited++;
	if (++m->in_hold > m->max_hold)
		m->max_hold = m->in_hold;
}

static void walk_stop(void *arg)
{
	struct walk_model *m = arg;

	CHECK(m->held);
	m->held = false;
}

static void walk_pause(void *arg)
{
	struct walk_model *m = arg;

	/* Between read sections only: this is where the kernel may sleep. */
	CHECK(!m->held);
	m->pauses++;
}

static const struct nfg_rtc_walk_ops walk_ops = {
	.start	= walk_start,
	.next	= walk_next,
	.visit	= walk_visit,
	.stop	= walk_stop,
	.pause	= walk_pause,
};

static void walk_run(unsigned long n, unsigned int batch)
{
	struct walk_model m = { .n = n };
	unsigned long i, once = 0;

	m.seen = calloc(n ? n : 1, 1);
	CHECK(m.seen != NULL);
	if (!m.seen)
		return;
	CHECK_EQ(nfg_rtc_walk(&walk_ops, &m, batch), n);
	CHECK(!m.held);
	CHECK_EQ(m.visited, n);
	for (i = 0; i < n; i++)
		once += m.seen[i] == 1;
	CHECK_EQ(once, n);
	CHECK(m.max_hold <= (batch ? batch : 1));
	/* Every hold but the last is a full batch, and a pause follows it. */
	CHECK_EQ(m.holds, n / (batch ? batch : 1) + 1);
	CHECK_EQ(m.pauses, m.holds - 1);
	free(m.seen);
}

/*
 * The purge of a 1M-entry table (the netdev notifier's work) never
 * handles more than NFG_RTC_WALK_BATCH entries in one read section, and
 * visits every entry once.
 */
static void test_walk_batch(void)
{
	struct walk_model m = { .n = 1UL << 20 };

	m.seen = calloc(m.n, 1);
	CHECK(m.seen != NULL);
	if (!m.seen)
		return;
	CHECK_EQ(nfg_rtc_walk(&walk_ops, &m, NFG_RTC_WALK_BATCH), m.n);
	CHECK(m.max_hold <= NFG_RTC_WALK_BATCH);
	CHECK_EQ(m.max_hold, NFG_RTC_WALK_BATCH);
	CHECK(m.holds >= m.n / NFG_RTC_WALK_BATCH);
	CHECK_EQ(m.visited, m.n);
	free(m.seen);
	/* Edges: empty, smaller than a batch, exact multiples, batch 0 and 1. */
	walk_run(0, NFG_RTC_WALK_BATCH);
	walk_run(5, NFG_RTC_WALK_BATCH);
	walk_run(NFG_RTC_WALK_BATCH, NFG_RTC_WALK_BATCH);
	walk_run(3 * NFG_RTC_WALK_BATCH + 1, NFG_RTC_WALK_BATCH);
	walk_run(10, 1);
	walk_run(10, 0);
}

int main(void)
{
	run("keys_no_padding", test_keys_no_padding);
	run("hkey", test_hkey);
	run("validate_hit", test_validate_hit);
	run("validate_stale_ct", test_validate_stale_ct);
	run("validate_each_key", test_validate_each_key);
	run("dscp_mask", test_dscp_mask);
	run("admit_bound", test_admit_bound);
	run("clamp", test_clamp);
	run("gc_evict", test_gc_evict);
	run("table_model", test_table_model);
	run("stats_add", test_stats_add);
	run("clamp_learn_after", test_clamp_learn_after);
	run("door_counts", test_door_counts);
	run("door_relearn", test_door_relearn);
	run("door_collision", test_door_collision);
	run("door_strikes", test_door_strikes);
	run("door_hash", test_door_hash);
	run("cookie_fresh", test_cookie_fresh);
	run("walk_batch", test_walk_batch);
	return utest_summary();
}
