// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the rangeset core (kernel/rangeset_core.c, the interval
 * core, and kernel/rangeset_dyn_core.c, the packet path's dynamic entries),
 * compiled in userspace against tests/unit/shim with ASan and UBSan.
 *
 * The core is included as a source file so that the tests can also walk
 * its private rbtree and check the invariants after every operation:
 * ranges sorted, disjoint and non-adjacent; tree and published array
 * identical; count within maxelem (sets without packet-path deletes:
 * their splits may go past it); no lock left held; no WARN.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Forced interleavings: see race_point() below. */
static void race_point(void *core, int where);
#define NFG_RS_RACE_POINT(core, where)	race_point(core, where)
/* The set that folds through the tree alone (the merge fold's reference). */
static const void *tree_only_core;
#define NFG_RS_FOLD_TREE_ONLY(core)	((const void *)(core) == tree_only_core)

#include <linux/jiffies.h>
#include "rangeset_core.c"
#include "rangeset_dyn_core.c"
#include "utest.h"
#include "../include/nfg_rng.h"

/* ---- harness ---------------------------------------------------------- */

static void run(const char *name, void (*fn)(void))
{
	struct utest_mark m = utest_begin(name);

	fn();
	utest_end(&m);
}

/* ---- helpers ---------------------------------------------------------- */

static const struct nfg_rs_key KMAX6 = { U64_MAX, U64_MAX };

static struct nfg_rs_key k4(u32 a)
{
	return (struct nfg_rs_key){ 0, a };
}

static struct nfg_rs_key k6(u64 hi, u64 lo)
{
	return (struct nfg_rs_key){ hi, lo };
}

static struct nfg_rs_range r4(u32 s, u32 e)
{
	return (struct nfg_rs_range){ k4(s), k4(e), 0 };
}

static struct nfg_rs_range r6(struct nfg_rs_key s, struct nfg_rs_key e)
{
	return (struct nfg_rs_range){ s, e, 0 };
}

static struct nfg_rs_key kadd(struct nfg_rs_key k, u64 v)
{
	u64 lo = k.lo + v;

	if (lo < k.lo)
		k.hi++;
	k.lo = lo;
	return k;
}

static bool key_eq(const struct nfg_rs_key *a, const struct nfg_rs_key *b)
{
	return a->hi == b->hi && a->lo == b->lo;
}

static bool range_eq(const struct nfg_rs_range *a, const struct nfg_rs_range *b)
{
	return key_eq(&a->start, &b->start) && key_eq(&a->end, &b->end);
}

static void set_init(struct nfg_rs_core *c, bool v6, u32 maxelem)
{
	if (nfg_rs_core_init(c, v6, maxelem)) {
		fprintf(stderr, "nfg_rs_core_init failed\n");
		exit(2);
	}
}

static void set_fini(struct nfg_rs_core *c)
{
	nfg_rs_core_release(c);
	nfg_rs_core_free(c);
}

static int add1(struct nfg_rs_core *c, struct nfg_rs_range r)
{
	return nfg_rs_core_update(c, &r, 1, NFG_RS_OP_ADD);
}

static int del1(struct nfg_rs_core *c, struct nfg_rs_range r)
{
	return nfg_rs_core_update(c, &r, 1, NFG_RS_OP_DEL);
}

static const struct nfg_rs_array *published(struct nfg_rs_core *c)
{
	return rcu_dereference(c->arr);
}

/*
 * The array's index (see struct nfg_rs_array), recomputed from its starts
 * the slow way: idx[h] = how many starts lie below slot h's first address.
 */
static bool check_index_at(const struct nfg_rs_array *arr, const char *file,
			   int line)
{
	struct nfg_rs_range r;
	u32 h, i = 0, nb, want;

	if (!arr)
		return true;
	want = arr->count < NFG_RS_IDX_MIN ? 0 :
	       fls(arr->count) - 1 > NFG_RS_IDX_MAX_BITS ? NFG_RS_IDX_MAX_BITS :
	       fls(arr->count) - 1;
	if (arr->ibits != want || !arr->idx != !want) {
		fail_at(file, line, "%u ranges: index of %u bits (%s), want %u",
			arr->count, arr->ibits, arr->idx ? "present" : "none", want);
		return false;
	}
	if (!arr->ibits)
		return true;
	nb = 1u << arr->ibits;
	for (h = 0; h <= nb; h++) {
		/* starts whose top bits are below h */
		while (i < arr->count) {
			u64 top;

			nfg_rs_array_range(arr, i, &r);
			top = arr->v6 ? r.start.hi >> (64 - arr->ibits) :
				        r.start.lo >> (32 - arr->ibits);
			if (top >= h)
				break;
			i++;
		}
		if (arr->idx[h] != i) {
			fail_at(file, line, "index slot %u: %u, want %u", h,
				arr->idx[h], i);
			return false;
		}
	}
	return true;
}

/*
 * Check every invariant of the core; returns false (after reporting) if
 * one is broken.
 */
static bool check_core_at(struct nfg_rs_core *c, const char *file, int line)
{
	const struct nfg_rs_array *arr = published(c);
	const struct nfg_rs_node *n, *prev = NULL;
	struct nfg_rs_range ar, prev_r = { 0 };
	struct rb_node *rb;
	u64 next = 0;
	long nodes;
	u32 i = 0;

	if (c->lock.shim_held) {
		fail_at(file, line, "set lock left held");
		return false;
	}
	nodes = shim_rb_check(&c->root);
	if (c->tree_stale && nodes) {
		fail_at(file, line, "stale tree has %ld nodes", nodes);
		return false;
	}
	if (!c->tree_stale && nodes != (long)c->count) {
		fail_at(file, line, "tree has %ld nodes, count is %u", nodes, c->count);
		return false;
	}
	if (c->count > c->maxelem && !rcu_dereference(c->dyn)) {
		fail_at(file, line, "count %u > maxelem %u", c->count, c->maxelem);
		return false;
	}
	if ((arr ? arr->count : 0) != c->count) {
		fail_at(file, line, "array has %u ranges, tree %u",
			arr ? arr->count : 0, c->count);
		return false;
	}
	if (arr && (arr->v6 != c->v6 || !arr->count)) {
		fail_at(file, line, "bad array header");
		return false;
	}
	/* the array's form: what the tree keeps (also when it is stale) */
	for (i = 0; arr && i < arr->count; i++) {
		nfg_rs_array_range(arr, i, &ar);
		if (!nfg_rs_range_valid(&ar, c->v6)) {
			fail_at(file, line, "invalid range %u in the array", i);
			return false;
		}
		if (i) {
			struct nfg_rs_key gap = prev_r.end;

			/* prev_r.end is not the maximum: ar comes after it */
			rs_key_inc(&gap);
			/* touching is fine only between different expiries */
			if (rs_key_cmp(&gap, &ar.start) > 0 ||
			    (!rs_key_cmp(&gap, &ar.start) &&
			     prev_r.expires == ar.expires)) {
				fail_at(file, line, "ranges %u and %u overlap or touch",
					i - 1, i);
				return false;
			}
		}
		if (ar.expires && (!next || ar.expires < next))
			next = ar.expires;
		prev_r = ar;
	}
	i = 0;
	for (rb = rb_first(&c->root); rb; rb = rb_next(rb), i++) {
		n = rs_node(rb);
		nfg_rs_array_range(arr, i, &ar);
		if (!range_eq(&ar, &n->r) || ar.expires != n->r.expires) {
			fail_at(file, line, "array range %u differs from the tree", i);
			return false;
		}
		prev = n;
	}
	(void)prev;
	if (next != c->next_expiry) {
		fail_at(file, line, "next_expiry %" PRIu64 ", tree says %" PRIu64,
			c->next_expiry, next);
		return false;
	}
	if (arr && arr->timed != (next != 0)) {
		fail_at(file, line, "array timed %d with next expiry %" PRIu64,
			arr->timed, next);
		return false;
	}
	return check_index_at(arr, file, line);
}

#define check_core(c)	check_core_at((c), __FILE__, __LINE__)

/* The set holds exactly these ranges (checked in the tree and the array). */
static bool expect_at(struct nfg_rs_core *c, const struct nfg_rs_range *exp,
		      u32 n, const char *file, int line)
{
	const struct nfg_rs_array *arr;
	struct nfg_rs_range r;
	u32 i;

	if (!check_core_at(c, file, line))
		return false;
	arr = published(c);
	if (c->count != n) {
		fail_at(file, line, "set has %u ranges, expected %u", c->count, n);
		return false;
	}
	for (i = 0; i < n; i++) {
		nfg_rs_array_range(arr, i, &r);
		if (!range_eq(&r, &exp[i])) {
			fail_at(file, line,
				"range %u is [%" PRIx64 ":%" PRIx64 ", %" PRIx64 ":%" PRIx64
				"], expected [%" PRIx64 ":%" PRIx64 ", %" PRIx64 ":%" PRIx64 "]",
				i, r.start.hi, r.start.lo, r.end.hi, r.end.lo,
				exp[i].start.hi, exp[i].start.lo,
				exp[i].end.hi, exp[i].end.lo);
			return false;
		}
	}
	return true;
}

#define EXPECT(c, ...) do {						\
	const struct nfg_rs_range __e[] = { __VA_ARGS__ };		\
	expect_at((c), __e, ARRAY_SIZE(__e), __FILE__, __LINE__);	\
} while (0)

#define EXPECT_EMPTY(c) do {						\
	expect_at((c), NULL, 0, __FILE__, __LINE__);			\
	CHECK(published(c) == NULL);					\
} while (0)

/* Copy of the ranges of a set, to compare a later state with. */
struct ranges {
	u32			n;
	struct nfg_rs_range	*r;
};

static struct ranges ranges_of(struct nfg_rs_core *c)
{
	const struct nfg_rs_array *arr = published(c);
	struct ranges s = { arr ? arr->count : 0, NULL };
	u32 i;

	s.r = calloc(s.n ? s.n : 1, sizeof(*s.r));
	for (i = 0; i < s.n; i++)
		nfg_rs_array_range(arr, i, &s.r[i]);
	return s;
}

/* ---- deterministic tests ---------------------------------------------- */

static void test_add_merge(void)
{
	struct nfg_rs_core c;
	const struct nfg_rs_array *before;

	set_init(&c, false, 100);
	EXPECT_EMPTY(&c);
	CHECK_EQ(add1(&c, r4(10, 20)), 0);
	CHECK_EQ(add1(&c, r4(30, 40)), 0);
	EXPECT(&c, r4(10, 20), r4(30, 40));
	/* fills the gap exactly: three ranges become one */
	CHECK_EQ(add1(&c, r4(21, 29)), 0);
	EXPECT(&c, r4(10, 40));
	/* adjacent on either side */
	CHECK_EQ(add1(&c, r4(5, 9)), 0);
	CHECK_EQ(add1(&c, r4(41, 41)), 0);
	EXPECT(&c, r4(5, 41));
	/* one gap short of adjacent: stays apart */
	CHECK_EQ(add1(&c, r4(43, 43)), 0);
	EXPECT(&c, r4(5, 41), r4(43, 43));
	CHECK_EQ(add1(&c, r4(50, 60)), 0);
	CHECK_EQ(add1(&c, r4(70, 80)), 0);
	CHECK_EQ(add1(&c, r4(90, 100)), 0);
	/* overlaps several, extends the last */
	CHECK_EQ(add1(&c, r4(45, 95)), 0);
	EXPECT(&c, r4(5, 41), r4(43, 43), r4(45, 100));
	CHECK_EQ(add1(&c, r4(0, 200)), 0);
	EXPECT(&c, r4(0, 200));
	/* already covered: no change, no new array published */
	before = published(&c);
	CHECK_EQ(add1(&c, r4(60, 70)), 0);
	CHECK_EQ(add1(&c, r4(0, 200)), 0);
	CHECK(published(&c) == before);
	EXPECT(&c, r4(0, 200));
	set_fini(&c);
}

static void test_add_batch(void)
{
	const struct nfg_rs_range b[] = {
		r4(100, 200), r4(50, 60), r4(150, 300), r4(61, 99),
		r4(1000, 1000), r4(998, 998), r4(999, 999), r4(5000, 6000),
		r4(5500, 5600),
	};
	struct nfg_rs_core c;

	set_init(&c, false, 100);
	CHECK_EQ(nfg_rs_core_update(&c, b, ARRAY_SIZE(b), NFG_RS_OP_ADD), 0);
	EXPECT(&c, r4(50, 300), r4(998, 1000), r4(5000, 6000));
	/* an empty batch changes nothing */
	CHECK_EQ(nfg_rs_core_update(&c, NULL, 0, NFG_RS_OP_ADD), 0);
	CHECK_EQ(nfg_rs_core_update(&c, NULL, 0, NFG_RS_OP_DEL), 0);
	EXPECT(&c, r4(50, 300), r4(998, 1000), r4(5000, 6000));
	set_fini(&c);
}

static void test_del_split(void)
{
	struct nfg_rs_core c;

	set_init(&c, false, 100);
	CHECK_EQ(add1(&c, r4(10, 100)), 0);
	CHECK_EQ(del1(&c, r4(20, 30)), 0);
	EXPECT(&c, r4(10, 19), r4(31, 100));
	CHECK_EQ(del1(&c, r4(10, 10)), 0);
	CHECK_EQ(del1(&c, r4(100, 100)), 0);
	EXPECT(&c, r4(11, 19), r4(31, 99));
	/* trims both neighbours of a gap */
	CHECK_EQ(del1(&c, r4(15, 40)), 0);
	EXPECT(&c, r4(11, 14), r4(41, 99));
	/* absent: not an error, no change */
	CHECK_EQ(del1(&c, r4(0, 10)), 0);
	CHECK_EQ(del1(&c, r4(15, 40)), 0);
	CHECK_EQ(del1(&c, r4(1000, 2000)), 0);
	EXPECT(&c, r4(11, 14), r4(41, 99));
	CHECK_EQ(del1(&c, r4(0, 1000)), 0);
	EXPECT_EMPTY(&c);
	CHECK_EQ(del1(&c, r4(0, 1000)), 0);
	EXPECT_EMPTY(&c);
	set_fini(&c);
}

static void test_del_multi(void)
{
	const struct nfg_rs_range b[] = {
		r4(0, 9), r4(20, 29), r4(40, 49), r4(60, 69),
	};
	const struct nfg_rs_range d[] = { r4(5, 45), r4(62, 62), r4(65, 66) };
	struct nfg_rs_core c;

	set_init(&c, false, 100);
	CHECK_EQ(nfg_rs_core_update(&c, b, ARRAY_SIZE(b), NFG_RS_OP_ADD), 0);
	CHECK_EQ(nfg_rs_core_update(&c, d, ARRAY_SIZE(d), NFG_RS_OP_DEL), 0);
	EXPECT(&c, r4(0, 4), r4(46, 49), r4(60, 61), r4(63, 64), r4(67, 69));
	set_fini(&c);
}

static void test_edges_v4(void)
{
	struct nfg_rs_core c;

	set_init(&c, false, 100);
	/* 0.0.0.0/0 */
	CHECK_EQ(add1(&c, r4(0, U32_MAX)), 0);
	EXPECT(&c, r4(0, U32_MAX));
	CHECK(nfg_rs_core_match4(&c, 0, 0));
	CHECK(nfg_rs_core_match4(&c, U32_MAX, 0));
	CHECK(nfg_rs_core_test(&c, &(struct nfg_rs_range){ k4(0), k4(U32_MAX), 0 }));
	/* adding anything to the full space changes nothing */
	CHECK_EQ(add1(&c, r4(U32_MAX, U32_MAX)), 0);
	CHECK_EQ(add1(&c, r4(0, 0)), 0);
	EXPECT(&c, r4(0, U32_MAX));
	/* 255.255.255.255 and 0.0.0.0 off the ends */
	CHECK_EQ(del1(&c, r4(U32_MAX, U32_MAX)), 0);
	EXPECT(&c, r4(0, U32_MAX - 1));
	CHECK(!nfg_rs_core_match4(&c, U32_MAX, 0));
	CHECK_EQ(del1(&c, r4(0, 0)), 0);
	EXPECT(&c, r4(1, U32_MAX - 1));
	CHECK(!nfg_rs_core_match4(&c, 0, 0));
	CHECK(nfg_rs_core_match4(&c, 1, 0));
	/* and back: adjacency at both ends */
	CHECK_EQ(add1(&c, r4(U32_MAX, U32_MAX)), 0);
	EXPECT(&c, r4(1, U32_MAX));
	CHECK_EQ(add1(&c, r4(0, 0)), 0);
	EXPECT(&c, r4(0, U32_MAX));
	/* split into the two extreme single addresses */
	CHECK_EQ(del1(&c, r4(1, U32_MAX - 1)), 0);
	EXPECT(&c, r4(0, 0), r4(U32_MAX, U32_MAX));
	CHECK(nfg_rs_core_match4(&c, 0, 0));
	CHECK(!nfg_rs_core_match4(&c, 1, 0));
	CHECK(!nfg_rs_core_match4(&c, U32_MAX - 1, 0));
	CHECK(nfg_rs_core_match4(&c, U32_MAX, 0));
	CHECK_EQ(add1(&c, r4(U32_MAX - 1, U32_MAX - 1)), 0);
	EXPECT(&c, r4(0, 0), r4(U32_MAX - 1, U32_MAX));
	CHECK_EQ(add1(&c, r4(1, 1)), 0);
	EXPECT(&c, r4(0, 1), r4(U32_MAX - 1, U32_MAX));
	/* the whole space minus everything */
	CHECK_EQ(del1(&c, r4(0, U32_MAX)), 0);
	EXPECT_EMPTY(&c);
	/* the maximum alone in an empty set */
	CHECK_EQ(add1(&c, r4(U32_MAX, U32_MAX)), 0);
	EXPECT(&c, r4(U32_MAX, U32_MAX));
	CHECK(nfg_rs_core_match4(&c, U32_MAX, 0));
	CHECK(!nfg_rs_core_match4(&c, 0, 0));
	set_fini(&c);
}

static void test_edges_v6(void)
{
	const struct nfg_rs_key zero = k6(0, 0);
	struct nfg_rs_core c;

	set_init(&c, true, 100);
	/* ::/0 */
	CHECK_EQ(add1(&c, r6(zero, KMAX6)), 0);
	EXPECT(&c, r6(zero, KMAX6));
	CHECK(nfg_rs_core_match6(&c, &zero, 0));
	CHECK(nfg_rs_core_match6(&c, &KMAX6, 0));
	CHECK_EQ(del1(&c, r6(KMAX6, KMAX6)), 0);
	EXPECT(&c, r6(zero, k6(U64_MAX, U64_MAX - 1)));
	CHECK(!nfg_rs_core_match6(&c, &KMAX6, 0));
	CHECK_EQ(del1(&c, r6(zero, zero)), 0);
	EXPECT(&c, r6(k6(0, 1), k6(U64_MAX, U64_MAX - 1)));
	CHECK_EQ(add1(&c, r6(KMAX6, KMAX6)), 0);
	CHECK_EQ(add1(&c, r6(zero, zero)), 0);
	EXPECT(&c, r6(zero, KMAX6));
	CHECK_EQ(del1(&c, r6(k6(0, 1), k6(U64_MAX, U64_MAX - 1))), 0);
	EXPECT(&c, r6(zero, zero), r6(KMAX6, KMAX6));
	nfg_rs_core_flush(&c);
	EXPECT_EMPTY(&c);

	/* adjacency across the 64-bit carry: 0:ffff.. and 1:0 touch */
	CHECK_EQ(add1(&c, r6(k6(0, U64_MAX), k6(0, U64_MAX))), 0);
	CHECK_EQ(add1(&c, r6(k6(1, 0), k6(1, 0))), 0);
	EXPECT(&c, r6(k6(0, U64_MAX), k6(1, 0)));
	CHECK_EQ(add1(&c, r6(k6(0, U64_MAX - 5), k6(0, U64_MAX - 2))), 0);
	EXPECT(&c, r6(k6(0, U64_MAX - 5), k6(0, U64_MAX - 2)),
	       r6(k6(0, U64_MAX), k6(1, 0)));
	CHECK_EQ(add1(&c, r6(k6(0, U64_MAX - 1), k6(0, U64_MAX - 1))), 0);
	EXPECT(&c, r6(k6(0, U64_MAX - 5), k6(1, 0)));
	/* split across the carry */
	CHECK_EQ(del1(&c, r6(k6(0, U64_MAX), k6(0, U64_MAX))), 0);
	EXPECT(&c, r6(k6(0, U64_MAX - 5), k6(0, U64_MAX - 1)),
	       r6(k6(1, 0), k6(1, 0)));
	CHECK_EQ(add1(&c, r6(k6(0, U64_MAX), k6(0, U64_MAX))), 0);
	CHECK_EQ(del1(&c, r6(k6(0, U64_MAX - 1), k6(1, 0))), 0);
	EXPECT(&c, r6(k6(0, U64_MAX - 5), k6(0, U64_MAX - 2)));
	/* lookups near the carry */
	CHECK(nfg_rs_core_match6(&c, &(struct nfg_rs_key){ 0, U64_MAX - 2 }, 0));
	CHECK(!nfg_rs_core_match6(&c, &(struct nfg_rs_key){ 0, U64_MAX - 1 }, 0));
	CHECK(!nfg_rs_core_match6(&c, &(struct nfg_rs_key){ 1, U64_MAX - 2 }, 0));
	set_fini(&c);
}

static void test_invalid(void)
{
	const struct nfg_rs_range bad_batch[] = {
		r4(1, 2), r4(10, 20), r4(30, 29),
	};
	struct nfg_rs_core c4, c6;
	long live;

	set_init(&c4, false, 100);
	set_init(&c6, true, 100);
	CHECK_EQ(add1(&c4, r4(100, 200)), 0);
	live = shim_alloc_live;
	CHECK_EQ(add1(&c4, r4(5, 4)), -EINVAL);
	CHECK_EQ(del1(&c4, r4(150, 149)), -EINVAL);
	/* IPv4 keys must fit in 32 bits */
	CHECK_EQ(add1(&c4, r6(k6(0, 1), k6(0, (u64)U32_MAX + 1))), -EINVAL);
	CHECK_EQ(add1(&c4, r6(k6(1, 1), k6(1, 2))), -EINVAL);
	CHECK_EQ(add1(&c4, r6(k6(0, 1), k6(1, 0))), -EINVAL);
	/* one bad element anywhere: nothing applied, nothing allocated */
	CHECK_EQ(nfg_rs_core_update(&c4, bad_batch, ARRAY_SIZE(bad_batch),
				    NFG_RS_OP_ADD), -EINVAL);
	CHECK_EQ(nfg_rs_core_update(&c4, bad_batch, ARRAY_SIZE(bad_batch),
				    NFG_RS_OP_DEL), -EINVAL);
	CHECK_EQ(shim_alloc_live, live);
	EXPECT(&c4, r4(100, 200));
	CHECK(!nfg_rs_core_test(&c4, &(struct nfg_rs_range){ k4(150), k4(149), 0 }));

	CHECK_EQ(add1(&c6, r6(k6(1, 0), k6(0, U64_MAX))), -EINVAL);
	CHECK_EQ(add1(&c6, r6(k6(0, 5), k6(0, 4))), -EINVAL);
	EXPECT_EMPTY(&c6);

	CHECK(nfg_rs_range_valid(&(struct nfg_rs_range){ k4(0), k4(U32_MAX), 0 }, false));
	CHECK(nfg_rs_range_valid(&(struct nfg_rs_range){ k6(0, 0), KMAX6, 0 }, true));
	CHECK(!nfg_rs_range_valid(&(struct nfg_rs_range){ k6(0, 0), KMAX6, 0 }, false));
	set_fini(&c4);
	set_fini(&c6);
}

static void test_maxelem(void)
{
	const struct nfg_rs_range over[] = { r4(11, 12), r4(100, 100) };
	const struct nfg_rs_range transient[] = {
		r4(100, 100), r4(200, 200), r4(0, 1000),
	};
	const struct nfg_rs_range split[] = { r4(500, 500) };
	struct nfg_rs_core c;

	set_init(&c, false, 3);
	CHECK_EQ(add1(&c, r4(10, 10)), 0);
	CHECK_EQ(add1(&c, r4(20, 20)), 0);
	CHECK_EQ(add1(&c, r4(30, 30)), 0);
	/* merges one and adds one: 4 > 3, the whole batch is refused */
	CHECK_EQ(nfg_rs_core_update(&c, over, 2, NFG_RS_OP_ADD), -ENOSPC);
	EXPECT(&c, r4(10, 10), r4(20, 20), r4(30, 30));
	CHECK(!nfg_rs_core_match4(&c, 11, 0));
	CHECK_EQ(add1(&c, r4(40, 40)), -ENOSPC);
	EXPECT(&c, r4(10, 10), r4(20, 20), r4(30, 30));
	/* only the result counts: 5 ranges on the way, 1 at the end */
	CHECK_EQ(nfg_rs_core_update(&c, transient, 3, NFG_RS_OP_ADD), 0);
	EXPECT(&c, r4(0, 1000));
	nfg_rs_core_flush(&c);
	set_fini(&c);

	/* a delete that splits can overflow too */
	set_init(&c, false, 1);
	CHECK_EQ(add1(&c, r4(0, 1000)), 0);
	CHECK_EQ(nfg_rs_core_update(&c, split, 1, NFG_RS_OP_DEL), -ENOSPC);
	EXPECT(&c, r4(0, 1000));
	CHECK(nfg_rs_core_match4(&c, 500, 0));
	CHECK_EQ(del1(&c, r4(0, 0)), 0);
	EXPECT(&c, r4(1, 1000));
	set_fini(&c);
}

/*
 * Make each allocation of a request fail in turn: every time, the result
 * is -ENOMEM and the set is exactly as before; then the request succeeds.
 */
static void enomem_walk(struct nfg_rs_core *c, const struct nfg_rs_range *b,
			unsigned int n, enum nfg_rs_op op,
			const struct nfg_rs_range *exp, u32 nexp)
{
	struct ranges before = ranges_of(c);
	unsigned long k;
	int err;

	for (k = 1; k < 1000; k++) {
		shim_fail_alloc_in(k);
		err = nfg_rs_core_update(c, b, n, op);
		if (!shim_alloc_failed()) {
			shim_fail_alloc_in(0);
			CHECK_EQ(err, 0);
			break;
		}
		CHECK_EQ(err, -ENOMEM);
		expect_at(c, before.r, before.n, __FILE__, __LINE__);
	}
	CHECK(k > 1);	/* at least one failure point was exercised */
	expect_at(c, exp, nexp, __FILE__, __LINE__);
	free(before.r);
}

static void test_enomem_rollback(void)
{
	const struct nfg_rs_range base[] = {
		r4(10, 19), r4(30, 39), r4(50, 59), r4(70, 79), r4(90, 99),
	};
	const struct nfg_rs_range adds[] = {
		r4(0, 1), r4(15, 55), r4(200, 210), r4(220, 230), r4(100, 100),
		r4(240, 250),
	};
	const struct nfg_rs_range after_add[] = {
		r4(0, 1), r4(10, 59), r4(70, 79), r4(90, 100), r4(200, 210),
		r4(220, 230), r4(240, 250),
	};
	const struct nfg_rs_range dels[] = {
		r4(20, 20), r4(40, 40), r4(75, 75), r4(205, 205), r4(225, 225),
	};
	const struct nfg_rs_range after_del[] = {
		r4(0, 1), r4(10, 19), r4(21, 39), r4(41, 59), r4(70, 74),
		r4(76, 79), r4(90, 100), r4(200, 204), r4(206, 210),
		r4(220, 224), r4(226, 230), r4(240, 250),
	};
	struct nfg_rs_core c;

	set_init(&c, false, 1000);
	CHECK_EQ(nfg_rs_core_update(&c, base, ARRAY_SIZE(base), NFG_RS_OP_ADD), 0);
	enomem_walk(&c, adds, ARRAY_SIZE(adds), NFG_RS_OP_ADD,
		    after_add, ARRAY_SIZE(after_add));
	enomem_walk(&c, dels, ARRAY_SIZE(dels), NFG_RS_OP_DEL,
		    after_del, ARRAY_SIZE(after_del));
	/* from empty, and back to empty (publishing NULL needs no memory) */
	nfg_rs_core_flush(&c);
	enomem_walk(&c, base, ARRAY_SIZE(base), NFG_RS_OP_ADD,
		    base, ARRAY_SIZE(base));
	CHECK_EQ(del1(&c, r4(0, 1000)), 0);
	EXPECT_EMPTY(&c);
	set_fini(&c);
}

static void test_swap(void)
{
	struct nfg_rs_core a, b, v6;
	struct nfg_rs_core_info ia, ib;

	set_init(&a, false, 10);
	set_init(&b, false, 20);
	set_init(&v6, true, 30);
	CHECK_EQ(add1(&a, r4(1, 2)), 0);
	CHECK_EQ(add1(&b, r4(5, 6)), 0);
	CHECK_EQ(add1(&b, r4(8, 9)), 0);
	CHECK_EQ(add1(&v6, r6(k6(0, 1), k6(0, 2))), 0);

	CHECK_EQ(nfg_rs_core_swap(&a, &b), 0);
	EXPECT(&a, r4(5, 6), r4(8, 9));
	EXPECT(&b, r4(1, 2));
	CHECK_EQ(a.maxelem, 20);
	CHECK_EQ(b.maxelem, 10);
	CHECK(nfg_rs_core_match4(&a, 8, 0));
	CHECK(!nfg_rs_core_match4(&a, 1, 0));
	CHECK(nfg_rs_core_match4(&b, 1, 0));
	nfg_rs_core_info(&a, &ia);
	nfg_rs_core_info(&b, &ib);
	CHECK_EQ(ia.count, 2);
	CHECK_EQ(ia.maxelem, 20);
	CHECK_EQ(ib.count, 1);
	/* counters stay with the set, not with the contents */
	CHECK_EQ(ia.lookups, 2);
	CHECK_EQ(ia.hits, 1);
	CHECK_EQ(ib.lookups, 1);

	/* the swapped trees keep working */
	CHECK_EQ(add1(&a, r4(7, 7)), 0);
	EXPECT(&a, r4(5, 9));
	CHECK_EQ(del1(&b, r4(2, 2)), 0);
	EXPECT(&b, r4(1, 1));

	/* argument order does not matter; self is a no-op */
	CHECK_EQ(nfg_rs_core_swap(&b, &a), 0);
	EXPECT(&a, r4(1, 1));
	EXPECT(&b, r4(5, 9));
	CHECK_EQ(nfg_rs_core_swap(&a, &a), 0);
	EXPECT(&a, r4(1, 1));

	/* families must match */
	CHECK_EQ(nfg_rs_core_swap(&a, &v6), -EINVAL);
	EXPECT(&a, r4(1, 1));
	EXPECT(&v6, r6(k6(0, 1), k6(0, 2)));

	/* with an empty set */
	nfg_rs_core_flush(&a);
	CHECK_EQ(nfg_rs_core_swap(&a, &b), 0);
	EXPECT(&a, r4(5, 9));
	EXPECT_EMPTY(&b);
	set_fini(&a);
	set_fini(&b);
	set_fini(&v6);
}

static void test_snapshot(void)
{
	struct nfg_rs_core c;
	struct nfg_rs_array *s1, *s2;
	struct nfg_rs_range r;
	u32 maxelem = 0;
	long live;

	set_init(&c, false, 50);
	CHECK(nfg_rs_core_snapshot(&c, &maxelem) == NULL);
	CHECK_EQ(maxelem, 50);
	CHECK_EQ(add1(&c, r4(1, 5)), 0);
	CHECK_EQ(add1(&c, r4(10, 15)), 0);
	s1 = nfg_rs_core_snapshot(&c, NULL);
	CHECK(s1 && refcount_read(&s1->ref) == 2);
	/* the set moves on; the snapshot does not */
	CHECK_EQ(add1(&c, r4(6, 9)), 0);
	s2 = nfg_rs_core_snapshot(&c, NULL);
	nfg_rs_core_flush(&c);
	CHECK(s1 && refcount_read(&s1->ref) == 1);
	if (s1 && s2) {
		CHECK_EQ(s1->count, 2);
		nfg_rs_array_range(s1, 1, &r);
		CHECK(r.start.lo == 10 && r.end.lo == 15 && !r.start.hi);
		CHECK(nfg_rs_array_lookup4(s1, 3));
		CHECK(!nfg_rs_array_lookup4(s1, 7));
		CHECK_EQ(s2->count, 1);
		CHECK(nfg_rs_array_lookup4(s2, 7));
	}
	live = shim_alloc_live;
	nfg_rs_array_put(s1);
	CHECK_EQ(shim_alloc_live, live - 1);
	nfg_rs_array_put(s2);
	CHECK_EQ(shim_alloc_live, live - 2);
	nfg_rs_array_put(NULL);
	set_fini(&c);
}

static void test_test_op(void)
{
	struct nfg_rs_core c;

#define T(s, e)	nfg_rs_core_test(&c, &(struct nfg_rs_range){ k4(s), k4(e), 0 })
	set_init(&c, false, 50);
	CHECK(!T(0, 0));
	CHECK_EQ(add1(&c, r4(10, 20)), 0);
	CHECK_EQ(add1(&c, r4(22, 30)), 0);
	CHECK(T(10, 20));
	CHECK(T(10, 10));
	CHECK(T(20, 20));
	CHECK(T(22, 30));
	CHECK(T(25, 26));
	CHECK(!T(9, 10));
	CHECK(!T(20, 22));	/* spans the gap at 21 */
	CHECK(!T(21, 21));
	CHECK(!T(10, 30));
	CHECK(!T(31, 31));
	CHECK(!T(30, 31));
	CHECK(!T(U32_MAX, U32_MAX));
#undef T
	set_fini(&c);
}

/* Sets of 1..70 ranges: every address of the universe against a model. */
static void test_lookup_exhaustive(void)
{
	u32 n, i, a;

	for (n = 1; n <= 70; n++) {
		struct nfg_rs_core c4, c6;
		unsigned char model[64 * 72];
		const struct nfg_rs_key base6 = { 0x20010db800000000ULL, U64_MAX - 100 };

		memset(model, 0, sizeof(model));
		set_init(&c4, false, 1000);
		set_init(&c6, true, 1000);
		for (i = 0; i < n; i++) {
			/* ranges of varying width with gaps of varying width */
			u32 s = i * 64 + (i % 7) + 1, e = s + (i * 13) % 50;

			memset(model + s, 1, e - s + 1);
			CHECK_EQ(add1(&c4, r4(s, e)), 0);
			CHECK_EQ(add1(&c6, r6(kadd(base6, s), kadd(base6, e))), 0);
		}
		CHECK_EQ(c4.count, n);
		CHECK_EQ(c6.count, n);
		for (a = 0; a < sizeof(model); a++) {
			struct nfg_rs_key k = kadd(base6, a);

			if (nfg_rs_array_lookup4(published(&c4), a) != model[a]) {
				fail_at(__FILE__, __LINE__, "v4 n=%u addr %u", n, a);
				break;
			}
			if (nfg_rs_array_lookup6(published(&c6), &k) != model[a]) {
				fail_at(__FILE__, __LINE__, "v6 n=%u addr %u", n, a);
				break;
			}
		}
		CHECK(!nfg_rs_array_lookup4(published(&c4), U32_MAX));
		CHECK(!nfg_rs_array_lookup6(published(&c6), &KMAX6));
		set_fini(&c4);
		set_fini(&c6);
	}
	CHECK(!nfg_rs_array_lookup4(NULL, 0));
	CHECK(!nfg_rs_array_lookup6(NULL, &KMAX6));
}

static void test_key_conversion(void)
{
	const u8 v4[4] = { 10, 1, 2, 3 };
	const u8 v6[16] = {
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1,
		0x80, 0, 0, 0, 0, 0, 0xab, 0xcd,
	};
	struct nfg_rs_key k;
	u8 out[16];

	nfg_rs_key_from_be(&k, v4, false);
	CHECK(k.hi == 0 && k.lo == 0x0a010203);
	memset(out, 0xee, sizeof(out));
	nfg_rs_key_to_be(out, &k, false);
	CHECK(!memcmp(out, v4, 4));
	CHECK(out[4] == 0xee);	/* writes 4 bytes only */

	nfg_rs_key_from_be(&k, v6, true);
	CHECK(k.hi == 0x20010db800000001ULL && k.lo == 0x800000000000abcdULL);
	nfg_rs_key_to_be(out, &k, true);
	CHECK(!memcmp(out, v6, 16));
}

static void test_stats_info(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;

	set_init(&c, false, 1234);
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.count, 0);
	CHECK_EQ(info.maxelem, 1234);
	CHECK_EQ(info.memsize, 0);
	CHECK_EQ(info.lookups, 0);
	CHECK_EQ(add1(&c, r4(100, 199)), 0);
	CHECK_EQ(add1(&c, r4(300, 399)), 0);
	CHECK(nfg_rs_core_match4(&c, 100, 0));
	CHECK(nfg_rs_core_match4(&c, 399, 0));
	CHECK(!nfg_rs_core_match4(&c, 200, 0));
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.count, 2);
	CHECK_EQ(info.lookups, 3);
	CHECK_EQ(info.hits, 2);
	CHECK(info.memsize >= sizeof(struct nfg_rs_array) + 4 * sizeof(u32) +
			      2 * sizeof(struct nfg_rs_node));
	set_fini(&c);
}

/* ---- random operations against a bitmap model ------------------------- */

#define UNIVERSE	65536U

static uint64_t rng_state;

static u64 rng(void)
{
	return nfg_xorshift64s(&rng_state);
}

static u32 rnd(u32 n)
{
	return (u32)(rng() % n);
}

struct model {
	unsigned char	bit[UNIVERSE];
	u32		maxelem;
};

static u32 model_runs(const struct model *m)
{
	u32 i, runs = 0;

	for (i = 0; i < UNIVERSE; i++)
		if (m->bit[i] && (i == 0 || !m->bit[i - 1]))
			runs++;
	return runs;
}

struct universe {
	bool			v6;
	struct nfg_rs_key	base;	/* key of bit 0 */
};

static struct nfg_rs_key ukey(const struct universe *u, u32 i)
{
	return kadd(u->base, i);
}

/* The set holds exactly the runs of the model. */
static void compare_model(struct nfg_rs_core *c, const struct model *m,
			  const struct universe *u, unsigned int step)
{
	const struct nfg_rs_array *arr = published(c);
	struct nfg_rs_range r, want;
	u32 i = 0, j, s;

	if (!check_core(c)) {
		fail_at(__FILE__, __LINE__, "step %u: invariants", step);
		return;
	}
	for (j = 0; j < UNIVERSE; j++) {
		if (!m->bit[j])
			continue;
		for (s = j; j + 1 < UNIVERSE && m->bit[j + 1]; j++)
			;
		want = r6(ukey(u, s), ukey(u, j));
		if (!arr || i >= arr->count) {
			fail_at(__FILE__, __LINE__, "step %u: missing range %u", step, i);
			return;
		}
		nfg_rs_array_range(arr, i, &r);
		if (!range_eq(&r, &want)) {
			fail_at(__FILE__, __LINE__,
				"step %u: range %u is [+%" PRIu64 ", +%" PRIu64 "], model [+%u, +%u]",
				step, i, r.start.lo - u->base.lo, r.end.lo - u->base.lo, s, j);
			return;
		}
		i++;
	}
	if ((arr ? arr->count : 0) != i)
		fail_at(__FILE__, __LINE__, "step %u: %u ranges, model has %u",
			step, arr ? arr->count : 0, i);
	if (c->maxelem != m->maxelem)
		fail_at(__FILE__, __LINE__, "step %u: maxelem %u, model %u",
			step, c->maxelem, m->maxelem);
}

static bool lookup(struct nfg_rs_core *c, const struct universe *u,
		   struct nfg_rs_key k, unsigned long *lookups,
		   unsigned long *hits)
{
	bool hit = u->v6 ? nfg_rs_core_match6(c, &k, 0) :
			   nfg_rs_core_match4(c, (u32)k.lo, 0);

	(*lookups)++;
	*hits += hit;
	return hit;
}

static void check_lookups(struct nfg_rs_core *c, const struct model *m,
			  const struct universe *u, bool all, unsigned int step,
			  unsigned long *lookups, unsigned long *hits)
{
	u32 i, n = all ? UNIVERSE : 64;
	struct nfg_rs_key below = u->base, above = ukey(u, UNIVERSE - 1);
	bool edge_lo, edge_hi;

	for (i = 0; i < n; i++) {
		u32 a = all ? i : rnd(UNIVERSE);

		if (lookup(c, u, ukey(u, a), lookups, hits) != m->bit[a]) {
			fail_at(__FILE__, __LINE__, "step %u: lookup of +%u", step, a);
			return;
		}
	}
	/* just outside the universe nothing is ever added */
	edge_lo = rs_key_is_min(&below);
	edge_hi = rs_key_is_max(&above, u->v6);
	if (!edge_lo) {
		rs_key_dec(&below);
		CHECK(!lookup(c, u, below, lookups, hits));
	}
	if (!edge_hi) {
		rs_key_inc(&above);
		CHECK(!lookup(c, u, above, lookups, hits));
	}
}

static void check_tests(struct nfg_rs_core *c, const struct model *m,
			const struct universe *u, unsigned int step)
{
	struct nfg_rs_range r;
	u32 t, s, e, i;
	bool want;

	for (t = 0; t < 8; t++) {
		s = rnd(UNIVERSE);
		e = min(UNIVERSE - 1, s + rnd(t < 4 ? 4 : 300));
		want = true;
		for (i = s; i <= e; i++)
			want &= m->bit[i];
		r = r6(ukey(u, s), ukey(u, e));
		if (nfg_rs_core_test(c, &r) != want) {
			fail_at(__FILE__, __LINE__, "step %u: test [+%u, +%u]", step, s, e);
			return;
		}
	}
}

static struct nfg_rs_range random_range(const struct universe *u, u32 *s, u32 *e)
{
	u32 p = rnd(100), len;

	if (p < 60)
		len = 1 + rnd(16);
	else if (p < 85)
		len = 1 + rnd(512);
	else if (p < 98)
		len = 1 + rnd(8192);
	else
		len = 1 + rnd(UNIVERSE);
	*s = rnd(UNIVERSE);
	if (p < 3)	/* hug the universe's edges */
		*s = rnd(2) ? 0 : UNIVERSE - len;
	*e = min(UNIVERSE - 1, *s + len - 1);
	return r6(ukey(u, *s), ukey(u, *e));
}

struct rand_set {
	struct nfg_rs_core	c;
	struct model		m;
	unsigned long		lookups, hits;
};

static void random_ops(u64 seed, const struct universe *u, unsigned int steps,
		       u32 maxelem_a, u32 maxelem_b)
{
	struct rand_set *sets = calloc(2, sizeof(*sets));
	struct nfg_rs_range batch[64];
	struct model *next = malloc(sizeof(*next));
	struct nfg_rs_array *snap = NULL;
	struct model *snap_model = malloc(sizeof(*snap_model));
	unsigned int step, i, nr_enomem = 0, nr_enospc = 0, nr_einval = 0;
	struct nfg_rs_core_info info;

	rng_state = seed;
	sets[0].m.maxelem = maxelem_a;
	sets[1].m.maxelem = maxelem_b;
	set_init(&sets[0].c, u->v6, maxelem_a);
	set_init(&sets[1].c, u->v6, maxelem_b);

	for (step = 0; step < steps && cur_failures < 5; step++) {
		struct rand_set *rs = &sets[rnd(4) == 0];	/* mostly set 0 */
		u32 p = rnd(1000), n, s, e;
		enum nfg_rs_op op;
		bool invalid = false, want_enospc;
		int err, want;

		if (p < 5) {
			nfg_rs_core_flush(&rs->c);
			memset(rs->m.bit, 0, UNIVERSE);
			compare_model(&rs->c, &rs->m, u, step);
			continue;
		}
		if (p < 25) {
			struct model tmp;

			CHECK_EQ(nfg_rs_core_swap(&sets[0].c, &sets[1].c), 0);
			tmp = sets[0].m;
			sets[0].m = sets[1].m;
			sets[1].m = tmp;
			compare_model(&sets[0].c, &sets[0].m, u, step);
			compare_model(&sets[1].c, &sets[1].m, u, step);
			continue;
		}
		if (p < 40) {
			/* take or check and drop a snapshot of set 0 */
			if (!snap) {
				snap = nfg_rs_core_snapshot(&sets[0].c, NULL);
				*snap_model = sets[0].m;
			} else {
				for (i = 0; i < 256; i++) {
					u32 a = rnd(UNIVERSE);
					struct nfg_rs_key k = ukey(u, a);
					bool hit = u->v6 ? nfg_rs_array_lookup6(snap, &k) :
							   nfg_rs_array_lookup4(snap, (u32)k.lo);

					if (hit != snap_model->bit[a]) {
						fail_at(__FILE__, __LINE__,
							"step %u: snapshot lookup +%u", step, a);
						break;
					}
				}
				nfg_rs_array_put(snap);
				snap = NULL;
			}
			continue;
		}

		op = p < 600 ? NFG_RS_OP_ADD : NFG_RS_OP_DEL;
		n = rnd(10) ? 1 + rnd(8) : 1 + rnd(ARRAY_SIZE(batch));
		*next = rs->m;
		for (i = 0; i < n; i++) {
			batch[i] = random_range(u, &s, &e);
			memset(next->bit + s, op == NFG_RS_OP_ADD, e - s + 1);
		}
		if (rnd(50) == 0) {
			/* one reversed range spoils the batch */
			i = rnd(n);
			if (!key_eq(&batch[i].start, &batch[i].end)) {
				swap(batch[i].start, batch[i].end);
				invalid = true;
			}
		}
		if (rnd(20) == 0)
			shim_fail_alloc_in(1 + rnd(6));

		err = nfg_rs_core_update(&rs->c, batch, n, op);

		want_enospc = model_runs(next) > rs->m.maxelem;
		if (invalid)
			want = -EINVAL;
		else if (shim_alloc_failed())
			want = -ENOMEM;
		else if (want_enospc)
			want = -ENOSPC;
		else
			want = 0;
		shim_fail_alloc_in(0);
		if (err != want) {
			fail_at(__FILE__, __LINE__, "step %u: update returned %d, expected %d",
				step, err, want);
			break;
		}
		if (!err)
			rs->m = *next;
		nr_enomem += err == -ENOMEM;
		nr_enospc += err == -ENOSPC;
		nr_einval += err == -EINVAL;

		compare_model(&rs->c, &rs->m, u, step);
		check_lookups(&rs->c, &rs->m, u, step % 500 == 0, step,
			      &rs->lookups, &rs->hits);
		check_tests(&rs->c, &rs->m, u, step);
	}

	for (i = 0; i < 2; i++) {
		compare_model(&sets[i].c, &sets[i].m, u, step);
		check_lookups(&sets[i].c, &sets[i].m, u, true, step,
			      &sets[i].lookups, &sets[i].hits);
		nfg_rs_core_info(&sets[i].c, &info);
		CHECK_EQ(info.lookups, sets[i].lookups);
		CHECK_EQ(info.hits, sets[i].hits);
		CHECK_EQ(info.count, model_runs(&sets[i].m));
		set_fini(&sets[i].c);
	}
	nfg_rs_array_put(snap);
	/* the interesting paths were taken */
	CHECK(nr_enomem > 0);
	CHECK(nr_einval > 0);
	if (maxelem_a < 1000)
		CHECK(nr_enospc > 0);
	free(snap_model);
	free(next);
	free(sets);
}


/* ---- timeouts --------------------------------------------------------- */

static struct nfg_rs_range rt4(u32 s, u32 e, u64 exp)
{
	return (struct nfg_rs_range){ k4(s), k4(e), exp };
}

/* expect_at() compares ranges only: this also compares the expiries. */
static bool expect_exp_at(struct nfg_rs_core *c, const struct nfg_rs_range *exp,
			  u32 n, const char *file, int line)
{
	const struct nfg_rs_array *arr;
	struct nfg_rs_range r;
	u32 i;

	if (!expect_at(c, exp, n, file, line))
		return false;
	arr = published(c);
	for (i = 0; i < n; i++) {
		nfg_rs_array_range(arr, i, &r);
		if (r.expires != exp[i].expires) {
			fail_at(file, line, "range %u expires at %" PRIu64
				", expected %" PRIu64, i, r.expires,
				exp[i].expires);
			return false;
		}
	}
	return true;
}

#define EXPECT_EXP(c, ...) do {						\
	const struct nfg_rs_range __e[] = { __VA_ARGS__ };		\
	expect_exp_at((c), __e, ARRAY_SIZE(__e), __FILE__, __LINE__);	\
} while (0)

static void test_timeout_merge(void)
{
	struct nfg_rs_core c;

	set_init(&c, false, 1000);
	/* adjacent with different expiries: not merged */
	CHECK_EQ(add1(&c, rt4(10, 20, 100)), 0);
	CHECK_EQ(add1(&c, rt4(21, 30, 200)), 0);
	EXPECT_EXP(&c, rt4(10, 20, 100), rt4(21, 30, 200));
	CHECK_EQ(c.next_expiry, 100);
	/* an earlier expiry never shortens */
	CHECK_EQ(add1(&c, rt4(21, 30, 150)), 0);
	EXPECT_EXP(&c, rt4(10, 20, 100), rt4(21, 30, 200));
	/* overlap takes the later expiry, the rest keeps its own */
	CHECK_EQ(add1(&c, rt4(15, 25, 300)), 0);
	EXPECT_EXP(&c, rt4(10, 14, 100), rt4(15, 25, 300), rt4(26, 30, 200));
	/* refresh of a part in the middle of a range: split in three */
	CHECK_EQ(add1(&c, rt4(18, 19, 400)), 0);
	EXPECT_EXP(&c, rt4(10, 14, 100), rt4(15, 17, 300), rt4(18, 19, 400),
		   rt4(20, 25, 300), rt4(26, 30, 200));
	/* gaps take the new expiry, and equal neighbours merge */
	CHECK_EQ(add1(&c, rt4(31, 40, 200)), 0);
	EXPECT_EXP(&c, rt4(10, 14, 100), rt4(15, 17, 300), rt4(18, 19, 400),
		   rt4(20, 25, 300), rt4(26, 40, 200));
	CHECK_EQ(add1(&c, rt4(0, 9, 100)), 0);
	EXPECT_EXP(&c, rt4(0, 14, 100), rt4(15, 17, 300), rt4(18, 19, 400),
		   rt4(20, 25, 300), rt4(26, 40, 200));
	/* permanent (0) is the latest: swallows everything */
	CHECK_EQ(add1(&c, rt4(5, 35, 0)), 0);
	EXPECT_EXP(&c, rt4(0, 4, 100), rt4(5, 35, 0), rt4(36, 40, 200));
	/* ... and a timed add over a permanent range changes nothing */
	CHECK_EQ(add1(&c, rt4(6, 7, 1000)), 0);
	EXPECT_EXP(&c, rt4(0, 4, 100), rt4(5, 35, 0), rt4(36, 40, 200));
	/* a timed add across gaps and ranges */
	CHECK_EQ(add1(&c, rt4(38, 50, 150)), 0);
	EXPECT_EXP(&c, rt4(0, 4, 100), rt4(5, 35, 0), rt4(36, 40, 200),
		   rt4(41, 50, 150));
	/* delete splits keep the expiry on both sides */
	CHECK_EQ(del1(&c, rt4(45, 45, 0)), 0);
	EXPECT_EXP(&c, rt4(0, 4, 100), rt4(5, 35, 0), rt4(36, 40, 200),
		   rt4(41, 44, 150), rt4(46, 50, 150));
	CHECK_EQ(c.next_expiry, 100);
	/* lookups do not care about expiries */
	CHECK(nfg_rs_array_lookup4(published(&c), 2));
	CHECK(nfg_rs_array_lookup4(published(&c), 37));
	CHECK(!nfg_rs_array_lookup4(published(&c), 45));
	set_fini(&c);
}

static void test_timeout_expire(void)
{
	const struct nfg_rs_array *before;
	struct nfg_rs_core_info ci;
	struct nfg_rs_core c;
	u32 n;

	set_init(&c, false, 1000);
	CHECK_EQ(nfg_rs_core_expire(&c, 1000, &n), 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(add1(&c, rt4(0, 9, 100)), 0);
	CHECK_EQ(add1(&c, rt4(10, 19, 0)), 0);
	CHECK_EQ(add1(&c, rt4(20, 29, 100)), 0);
	CHECK_EQ(add1(&c, rt4(30, 39, 200)), 0);
	CHECK_EQ(add1(&c, rt4(50, 59, 101)), 0);
	CHECK_EQ(c.next_expiry, 100);

	/* nothing due: no new array */
	before = published(&c);
	CHECK_EQ(nfg_rs_core_expire(&c, 99, &n), 0);
	CHECK_EQ(n, 0);
	CHECK(published(&c) == before);

	/* two due at once: one publication */
	CHECK_EQ(nfg_rs_core_expire(&c, 100, &n), 0);
	CHECK_EQ(n, 2);
	EXPECT_EXP(&c, rt4(10, 19, 0), rt4(30, 39, 200), rt4(50, 59, 101));
	CHECK_EQ(c.next_expiry, 101);
	CHECK(!nfg_rs_array_lookup4(published(&c), 5));
	CHECK(nfg_rs_array_lookup4(published(&c), 15));

	/* an allocation failure changes nothing; the next try works */
	shim_fail_alloc_in(1);
	CHECK_EQ(nfg_rs_core_expire(&c, 500, &n), -ENOMEM);
	shim_fail_alloc_in(0);
	CHECK_EQ(n, 0);
	EXPECT_EXP(&c, rt4(10, 19, 0), rt4(30, 39, 200), rt4(50, 59, 101));
	CHECK_EQ(nfg_rs_core_expire(&c, 500, &n), 0);
	CHECK_EQ(n, 2);
	EXPECT_EXP(&c, rt4(10, 19, 0));
	CHECK_EQ(c.next_expiry, 0);
	CHECK(!published(&c)->timed);
	nfg_rs_core_info(&c, &ci);
	CHECK_EQ(ci.expiries, 4);

	/* the last range expiring publishes the empty set */
	CHECK_EQ(add1(&c, rt4(10, 19, 600)), 0);	/* permanent stays */
	CHECK_EQ(del1(&c, r4(10, 19)), 0);
	CHECK_EQ(add1(&c, rt4(10, 19, 600)), 0);
	CHECK_EQ(nfg_rs_core_expire(&c, 600, &n), 0);
	CHECK_EQ(n, 1);
	EXPECT_EMPTY(&c);
	set_fini(&c);
}

/* ENOSPC and ENOMEM keep the expiries of the state before. */
static void test_timeout_rollback(void)
{
	const struct nfg_rs_range base[] = {
		rt4(10, 19, 100), rt4(20, 29, 200), rt4(40, 49, 0),
	};
	const struct nfg_rs_range adds[] = {
		rt4(15, 45, 150), rt4(60, 61, 0), rt4(0, 1, 50),
	};
	const struct nfg_rs_range after[] = {
		rt4(0, 1, 50), rt4(10, 14, 100), rt4(15, 19, 150),
		rt4(20, 29, 200), rt4(30, 39, 150), rt4(40, 49, 0),
		rt4(60, 61, 0),
	};
	struct nfg_rs_core c;

	set_init(&c, false, 6);
	CHECK_EQ(nfg_rs_core_update(&c, base, ARRAY_SIZE(base), NFG_RS_OP_ADD), 0);
	CHECK_EQ(nfg_rs_core_update(&c, adds, ARRAY_SIZE(adds), NFG_RS_OP_ADD),
		 -ENOSPC);
	expect_exp_at(&c, base, ARRAY_SIZE(base), __FILE__, __LINE__);
	c.maxelem = 7;
	enomem_walk(&c, adds, ARRAY_SIZE(adds), NFG_RS_OP_ADD,
		    after, ARRAY_SIZE(after));
	expect_exp_at(&c, after, ARRAY_SIZE(after), __FILE__, __LINE__);
	set_fini(&c);
}

/*
 * Random adds (with random expiries), deletes and expiry runs on a small
 * universe against a model of each address's expiry; the same batches in
 * reverse order give the same set.
 */
#define TM_SIZE	160
#define TM_NONE	UINT64_MAX

static void timeout_model_check(struct nfg_rs_core *c, const u64 *model,
				int line)
{
	const struct nfg_rs_array *arr = published(c);
	struct nfg_rs_range r;
	u64 got[TM_SIZE];
	u32 i, a;

	for (a = 0; a < TM_SIZE; a++)
		got[a] = TM_NONE;
	for (i = 0; arr && i < arr->count; i++) {
		nfg_rs_array_range(arr, i, &r);
		for (a = (u32)r.start.lo; a <= r.end.lo && a < TM_SIZE; a++)
			got[a] = r.expires;
	}
	for (a = 0; a < TM_SIZE; a++)
		if (got[a] != model[a]) {
			fail_at(__FILE__, line, "address %u expires %" PRIu64
				", model %" PRIu64, a, got[a], model[a]);
			return;
		}
}

static void test_timeout_random(void)
{
	struct nfg_rs_core c, rev;
	u64 model[TM_SIZE], now = 1, st = 0x7157;
	struct nfg_rs_range b[8], rb[8];
	unsigned int round, i, nb;
	u32 a, n;

	set_init(&c, false, 100000);
	set_init(&rev, false, 100000);
	for (a = 0; a < TM_SIZE; a++)
		model[a] = TM_NONE;
	for (round = 0; round < 4000; round++) {
		u64 op = nfg_xorshift64s(&st) % 10;

		if (op < 6) {
			nb = 1 + nfg_xorshift64s(&st) % 8;
			for (i = 0; i < nb; i++) {
				u32 s0 = nfg_xorshift64s(&st) % TM_SIZE;
				u32 len = nfg_xorshift64s(&st) % 20;
				u64 e = nfg_xorshift64s(&st) % 4;
				u32 e0 = s0 + len < TM_SIZE ? s0 + len : TM_SIZE - 1;

				/* 0 = permanent, else now + 1..30 */
				e = e ? now + 1 + nfg_xorshift64s(&st) % 30 : 0;
				b[i] = rt4(s0, e0, e);
				rb[nb - 1 - i] = b[i];
				for (a = s0; a <= e0; a++)
					if (model[a] == TM_NONE ||
					    !rs_exp_ge(model[a], e))
						model[a] = e;
			}
			CHECK_EQ(nfg_rs_core_update(&c, b, nb, NFG_RS_OP_ADD), 0);
			CHECK_EQ(nfg_rs_core_update(&rev, rb, nb, NFG_RS_OP_ADD), 0);
		} else if (op < 8) {
			u32 s0 = nfg_xorshift64s(&st) % TM_SIZE;
			u32 len = nfg_xorshift64s(&st) % 10;
			u32 e0 = s0 + len < TM_SIZE ? s0 + len : TM_SIZE - 1;

			for (a = s0; a <= e0; a++)
				model[a] = TM_NONE;
			CHECK_EQ(del1(&c, r4(s0, e0)), 0);
			CHECK_EQ(del1(&rev, r4(s0, e0)), 0);
		} else {
			now += 1 + nfg_xorshift64s(&st) % 5;
			for (a = 0; a < TM_SIZE; a++)
				if (model[a] != TM_NONE && model[a] &&
				    model[a] <= now)
					model[a] = TM_NONE;
			CHECK_EQ(nfg_rs_core_expire(&c, now, &n), 0);
			CHECK_EQ(nfg_rs_core_expire(&rev, now, &n), 0);
		}
		if (!check_core(&c) || !check_core(&rev))
			break;
		timeout_model_check(&c, model, __LINE__);
		timeout_model_check(&rev, model, __LINE__);
		if (cur_failures)
			break;
	}
	set_fini(&c);
	set_fini(&rev);
}

static const struct universe U4_ZERO = { false, { 0, 0 } };
static const struct universe U4_MID = { false, { 0, 0x0a000000 } };
static const struct universe U4_TOP = { false, { 0, 0xffff0000 } };
static const struct universe U6_MID = { true, { 0x20010db800000000ULL, 0x10000 } };
static const struct universe U6_CARRY = { true, { 7, U64_MAX - 32767 } };
static const struct universe U6_TOP = { true, { U64_MAX, U64_MAX - 65535 } };
static const struct universe U6_ZERO = { true, { 0, 0 } };

static void test_random_v4_zero(void)	{ random_ops(1, &U4_ZERO, 3000, 1000000, 1000000); }
static void test_random_v4_mid(void)	{ random_ops(2, &U4_MID, 3000, 1000000, 64); }
static void test_random_v4_top(void)	{ random_ops(3, &U4_TOP, 3000, 1000000, 1000000); }
static void test_random_v4_small(void)	{ random_ops(4, &U4_MID, 3000, 40, 1000000); }
static void test_random_v4_seed5(void)	{ random_ops(0x5eed5, &U4_TOP, 3000, 60, 25); }
static void test_random_v6_mid(void)	{ random_ops(6, &U6_MID, 2000, 1000000, 1000000); }
static void test_random_v6_carry(void)	{ random_ops(7, &U6_CARRY, 2000, 1000000, 50); }
static void test_random_v6_top(void)	{ random_ops(8, &U6_TOP, 2000, 1000000, 1000000); }
static void test_random_v6_zero(void)	{ random_ops(9, &U6_ZERO, 2000, 30, 1000000); }


/* ---- dynamic entries (packet-path adds, the RANGESET target) ---------- */

static void dyn_set(struct nfg_rs_core *c, bool v6, u32 maxelem)
{
	set_init(c, v6, maxelem);
	if (nfg_rs_dyn_enable(c, 0x1234) || nfg_rs_dyn_enable(c, 1)) {
		fprintf(stderr, "nfg_rs_dyn_enable failed\n");
		exit(2);
	}
}

static u32 dyn_count(struct nfg_rs_core *c)
{
	return atomic_read(&rcu_dereference(c->dyn)->entries);
}

static int dadd4(struct nfg_rs_core *c, u32 a, u8 plen, u64 exp, bool exist,
		 u64 now)
{
	struct nfg_rs_key k = k4(a);

	return nfg_rs_dyn_add(c, &k, plen, exp, exist, now);
}

static int ddel4(struct nfg_rs_core *c, u32 a, u8 plen)
{
	struct nfg_rs_key k = k4(a);

	return nfg_rs_dyn_del(c, &k, plen);
}

static void test_dyn_basic(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;

	dyn_set(&c, false, 100);
	CHECK_EQ(add1(&c, r4(100, 200)), 0);
	CHECK(!nfg_rs_core_match4(&c, 5, 0));
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 0), NFG_RS_DYN_DONE);
	/* visible to the next lookup, before any fold */
	CHECK(nfg_rs_core_match4(&c, 5, 0));
	CHECK(!nfg_rs_core_match4(&c, 6, 0));
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 0), NFG_RS_DYN_NOOP);
	CHECK_EQ(dadd4(&c, 5, 32, 0, true, 0), NFG_RS_DYN_DONE);
	/* covered by the array: nothing to add (unless --exist) */
	CHECK_EQ(dadd4(&c, 150, 32, 0, false, 0), NFG_RS_DYN_NOOP);
	CHECK_EQ(dyn_count(&c), 1);
	/*
	 * delete of a dynamic entry: it becomes a marker (a fold may have
	 * published it already), lookups miss at once
	 */
	CHECK_EQ(ddel4(&c, 5, 32), NFG_RS_DYN_DONE);
	CHECK(!nfg_rs_core_match4(&c, 5, 0));
	CHECK_EQ(dyn_count(&c), 1);
	CHECK_EQ(ddel4(&c, 5, 32), NFG_RS_DYN_NOOP);
	/* nothing of it in the array: the fold drops the marker */
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK_EQ(dyn_count(&c), 0);
	CHECK(!nfg_rs_core_match4(&c, 5, 0));
	/* a delete of what is neither in the hash nor the array: nothing */
	CHECK_EQ(ddel4(&c, 5, 32), NFG_RS_DYN_NOOP);
	/* delete inside the array: a marker, lookups miss at once */
	CHECK_EQ(ddel4(&c, 150, 32), NFG_RS_DYN_DONE);
	CHECK(!nfg_rs_core_match4(&c, 150, 0));
	CHECK(nfg_rs_core_match4(&c, 151, 0));
	CHECK_EQ(ddel4(&c, 150, 32), NFG_RS_DYN_NOOP);
	/* re-adding turns the marker back into an entry */
	CHECK_EQ(dadd4(&c, 150, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 150, 0));
	CHECK_EQ(ddel4(&c, 150, 32), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 7, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK_EQ(dyn_count(&c), 0);
	EXPECT(&c, r4(7, 7), r4(100, 149), r4(151, 200));
	CHECK(!nfg_rs_core_match4(&c, 150, 0));
	CHECK(nfg_rs_core_match4(&c, 7, 0));
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_adds, 4);
	CHECK_EQ(info.dyn_dels, 3);
	CHECK_EQ(info.dyn_refused, 0);
	CHECK_EQ(info.dyn_count, 0);
	set_fini(&c);
}

static void test_dyn_prefix(void)
{
	struct nfg_rs_key a6 = k6(0x20010db800010002ULL, 0x1234), m;
	struct nfg_rs_core c, c6;

	dyn_set(&c, false, 100);
	CHECK_EQ(dadd4(&c, 0x0a010203, 24, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 0x0a0102c8, 0));
	CHECK(nfg_rs_core_match4(&c, 0x0a010200, 0));
	CHECK(!nfg_rs_core_match4(&c, 0x0a010300, 0));
	CHECK(!nfg_rs_core_match4(&c, 0x0a0101ff, 0));
	/* same prefix from another address of it: already there */
	CHECK_EQ(dadd4(&c, 0x0a0102ff, 24, 0, false, 0), NFG_RS_DYN_NOOP);
	CHECK_EQ(dadd4(&c, 0, 0, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, U32_MAX, 0));
	/* the latest change decides: deleting 0/0 deletes the /24 too */
	CHECK_EQ(ddel4(&c, 0x01020304, 0), NFG_RS_DYN_DONE);
	CHECK(!nfg_rs_core_match4(&c, U32_MAX, 0));
	CHECK(!nfg_rs_core_match4(&c, 0x0a0102c8, 0));
	CHECK_EQ(dadd4(&c, 0x0a010203, 24, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 0x0a0102c8, 0));
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	EXPECT(&c, r4(0x0a010200, 0x0a0102ff));
	set_fini(&c);

	dyn_set(&c6, true, 100);
	CHECK_EQ(nfg_rs_dyn_add(&c6, &a6, 64, 0, false, 0), NFG_RS_DYN_DONE);
	m = k6(0x20010db800010002ULL, U64_MAX);
	CHECK(nfg_rs_core_match6(&c6, &m, 0));
	m = k6(0x20010db800010003ULL, 0);
	CHECK(!nfg_rs_core_match6(&c6, &m, 0));
	CHECK_EQ(nfg_rs_dyn_add(&c6, &KMAX6, 128, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_dyn_add(&c6, &a6, 72, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match6(&c6, &KMAX6, 0));
	CHECK_EQ(nfg_rs_core_fold(&c6, 0), 0);
	EXPECT(&c6, r6(k6(0x20010db800010002ULL, 0),
		       k6(0x20010db800010002ULL, U64_MAX)),
	       r6(KMAX6, KMAX6));
	set_fini(&c6);
}

static void test_dyn_expiry(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;
	u32 n;

	dyn_set(&c, false, 100);
	CHECK_EQ(dadd4(&c, 9, 32, 100, false, 50), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 9, 99));
	CHECK(!nfg_rs_core_match4(&c, 9, 100));
	/* without --exist a live entry keeps its expiry ... */
	CHECK_EQ(dadd4(&c, 9, 32, 300, false, 60), NFG_RS_DYN_NOOP);
	CHECK(!nfg_rs_core_match4(&c, 9, 100));
	/* ... with it, or once expired, it is refreshed */
	CHECK_EQ(dadd4(&c, 9, 32, 300, true, 60), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 9, 299));
	CHECK_EQ(dadd4(&c, 11, 32, 100, false, 50), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 11, 32, 400, false, 150), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 11, 399));
	CHECK_EQ(dadd4(&c, 13, 32, 120, false, 50), NFG_RS_DYN_DONE);
	/* the expiry work folds, dropping what expired */
	CHECK_EQ(nfg_rs_core_expire(&c, 200, &n), 0);
	CHECK_EQ(n, 1);
	EXPECT(&c, r4(9, 9), r4(11, 11));
	CHECK_EQ(c.next_expiry, 300);
	CHECK_EQ(dyn_count(&c), 0);
	/* folded: covered by the array now, re-adding is a no-op ... */
	CHECK_EQ(dadd4(&c, 9, 32, 900, false, 200), NFG_RS_DYN_NOOP);
	/* ... unless --exist, which extends it at the next fold */
	CHECK_EQ(dadd4(&c, 9, 32, 900, true, 200), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_core_expire(&c, 350, &n), 0);
	CHECK_EQ(n, 0);
	EXPECT(&c, r4(9, 9), r4(11, 11));
	CHECK_EQ(c.next_expiry, 400);
	/* a folded range past its expiry does not count as present */
	CHECK_EQ(dadd4(&c, 9, 32, 1900, false, 1000), NFG_RS_DYN_DONE);
	/* the fold comes first: 9 takes the later expiry, only 11 goes */
	CHECK_EQ(nfg_rs_core_expire(&c, 1000, &n), 0);
	CHECK_EQ(n, 1);
	EXPECT(&c, r4(9, 9));
	CHECK_EQ(c.next_expiry, 1900);
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.expiries, 2);
	set_fini(&c);
}

static void test_dyn_maxelem(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;
	u32 i, done = 0, full = 0;
	int ret;

	dyn_set(&c, false, 10);
	CHECK_EQ(add1(&c, r4(0, 0)), 0);
	CHECK_EQ(add1(&c, r4(2, 2)), 0);
	CHECK_EQ(add1(&c, r4(4, 4)), 0);
	for (i = 0; i < 20; i++) {
		ret = dadd4(&c, 1000 + 2 * i, 32, 0, false, 0);
		if (ret == NFG_RS_DYN_DONE)
			done++;
		else if (ret == -ENOSPC)
			full++;
	}
	CHECK_EQ(done, 7);
	CHECK_EQ(full, 13);
	CHECK_EQ(add1(&c, r4(50, 50)), -ENOSPC);
	/* the control plane folds first: the set is whole */
	EXPECT(&c, r4(0, 0), r4(2, 2), r4(4, 4), r4(1000, 1000),
	       r4(1002, 1002), r4(1004, 1004), r4(1006, 1006),
	       r4(1008, 1008), r4(1010, 1010), r4(1012, 1012));
	CHECK_EQ(dadd4(&c, 77, 32, 0, false, 0), -ENOSPC);
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_refused, 14);
	CHECK_EQ(info.dyn_adds, 7);
	CHECK_EQ(del1(&c, r4(1000, 1012)), 0);
	CHECK_EQ(dadd4(&c, 77, 32, 0, false, 0), NFG_RS_DYN_DONE);
	/* flush drops dynamic entries too */
	nfg_rs_core_flush(&c);
	CHECK_EQ(dyn_count(&c), 0);
	CHECK(!nfg_rs_core_match4(&c, 77, 0));
	set_fini(&c);
}

/*
 * Entries that would split ranges past maxelem when folded: the fold
 * drops them (refusals) instead of failing for ever, so expiry and the
 * control plane go on.
 */
static void two_timed(struct nfg_rs_core *c, u32 maxelem)
{
	struct nfg_rs_range r = r4(100, 199);

	dyn_set(c, false, maxelem);
	r.expires = 1000;
	CHECK_EQ(nfg_rs_core_update(c, &r, 1, NFG_RS_OP_ADD), 0);
	r = r4(300, 399);
	r.expires = 50;
	CHECK_EQ(nfg_rs_core_update(c, &r, 1, NFG_RS_OP_ADD), 0);
}

static void test_dyn_fold_full(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;
	u32 n;

	/* two timed ranges, room for one more */
	two_timed(&c, 3);
	/* permanent, inside a timed range: reserves 1, splits it in three */
	CHECK_EQ(dadd4(&c, 150, 32, 0, true, 10), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 150, 2000));
	CHECK_EQ(nfg_rs_core_fold(&c, 10), 0);
	CHECK_EQ(dyn_count(&c), 0);
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_refused, 1);
	EXPECT(&c, r4(100, 199), r4(300, 399));
	/* the control plane is not blocked by it */
	CHECK_EQ(dadd4(&c, 150, 32, 0, true, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(del1(&c, r4(100, 110)), 0);
	EXPECT(&c, r4(111, 199), r4(300, 399));
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_refused, 2);
	set_fini(&c);

	/* expiry is not either: what fits folds, the rest is refused */
	two_timed(&c, 4);
	CHECK_EQ(dadd4(&c, 150, 32, 0, true, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 160, 32, 0, true, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_core_expire(&c, 60, &n), 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(dyn_count(&c), 0);
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.count, 3);
	CHECK_EQ(info.dyn_refused, 1);
	/* 300-399 expired; 100-199 split in three by one of the two */
	CHECK(!nfg_rs_core_match4(&c, 350, 60));
	set_fini(&c);

	/*
	 * a marker is never refused and takes no room: the add fits in
	 * maxelem, the delete's split goes past it
	 */
	two_timed(&c, 4);
	CHECK_EQ(dadd4(&c, 150, 32, 0, true, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(ddel4(&c, 350, 32), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_core_fold(&c, 10), 0);
	EXPECT(&c, r4(100, 149), r4(150, 150), r4(151, 199), r4(300, 349),
	       r4(351, 399));
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_refused, 0);
	CHECK_EQ(info.dyn_dels, 1);
	set_fini(&c);

	/* full: the add is refused, the delete is applied */
	two_timed(&c, 3);
	CHECK_EQ(dadd4(&c, 150, 32, 0, true, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(ddel4(&c, 350, 32), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_core_fold(&c, 10), 0);
	EXPECT(&c, r4(100, 199), r4(300, 349), r4(351, 399));
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_refused, 1);
	CHECK_EQ(info.dyn_dels, 1);
	CHECK_EQ(dyn_count(&c), 0);
	set_fini(&c);
}

/* Where prefixes overlap, the latest change decides, before and after a fold. */
static void test_dyn_longest(void)
{
	struct nfg_rs_core c;

	dyn_set(&c, false, 100);
	CHECK_EQ(dadd4(&c, 0x100, 24, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(add1(&c, r4(0x180, 0x180)), 0);	/* folds the /24 */
	CHECK_EQ(ddel4(&c, 0x180, 32), NFG_RS_DYN_DONE);
	CHECK(!nfg_rs_core_match4(&c, 0x180, 0));
	CHECK(nfg_rs_core_match4(&c, 0x181, 0));
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	EXPECT(&c, r4(0x100, 0x17f), r4(0x181, 0x1ff));

	CHECK_EQ(add1(&c, r4(0x180, 0x180)), 0);
	CHECK_EQ(ddel4(&c, 0x100, 24), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 0x142, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK(!nfg_rs_core_match4(&c, 0x141, 0));
	CHECK(nfg_rs_core_match4(&c, 0x142, 0));
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	EXPECT(&c, r4(0x142, 0x142));
	set_fini(&c);
}

/* A failed fold changes nothing; the entries keep matching from the hash. */
static void test_dyn_fold_enomem(void)
{
	struct nfg_rs_core c;
	unsigned long k;
	bool done = false;

	dyn_set(&c, false, 100);
	CHECK_EQ(add1(&c, r4(10, 20)), 0);
	for (k = 1; !done && k < 50; k++) {
		CHECK_EQ(dadd4(&c, 40, 32, 0, false, 0) >= 0, 1);
		CHECK_EQ(ddel4(&c, 15, 32) >= 0, 1);
		shim_fail_alloc_in(k);
		if (!nfg_rs_core_fold(&c, 0)) {
			done = !shim_alloc_failed();
			shim_fail_alloc_in(0);
			CHECK_EQ(dyn_count(&c), 0);
			EXPECT(&c, r4(10, 14), r4(16, 20), r4(40, 40));
			CHECK_EQ(add1(&c, r4(10, 20)), 0);
			CHECK_EQ(del1(&c, r4(40, 40)), 0);
			continue;
		}
		shim_fail_alloc_in(0);
		EXPECT(&c, r4(10, 20));
		CHECK_EQ(dyn_count(&c), 2);
		CHECK(nfg_rs_core_match4(&c, 40, 0));
		CHECK(!nfg_rs_core_match4(&c, 15, 0));
		CHECK(nfg_rs_core_match4(&c, 14, 0));
	}
	CHECK(done);
	set_fini(&c);
}

/*
 * A fold frees the entries it unlinked in one batch, after one grace
 * period (one rcu_work), each exactly once (ASan: no double free; the
 * live count: none left); a flush does the same; without memory for the
 * batch, each entry goes on its own and nothing is lost.
 */
static void test_dyn_gc_batch(void)
{
	unsigned long q, k;
	bool fallback = false;
	struct nfg_rs_core c;
	long live;
	u32 i;

	dyn_set(&c, false, 100000);
	CHECK_EQ(add1(&c, r4(1, 1)), 0);
	for (i = 0; i < 1000; i++)
		CHECK_EQ(dadd4(&c, 0x0a000000 + i * 7, 32, 0, false, 0),
			 NFG_RS_DYN_DONE);
	for (i = 0; i < 10; i++)
		CHECK_EQ(ddel4(&c, 0x0a000000 + i * 14, 32), NFG_RS_DYN_DONE);
	live = nfg_rs_live_count();
	shim_rcu_work_hold(true);
	q = shim_rcu_work_queued;
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	/* one batch; the hash's counters back at once, the memory later */
	CHECK_EQ(shim_rcu_work_queued, q + 1);
	CHECK_EQ(dyn_count(&c), 0);
	CHECK_EQ(atomic_read(&rcu_dereference(c.dyn)->count), 0);
	CHECK_EQ(atomic_read(&rcu_dereference(c.dyn)->marks), 0);
	CHECK_EQ(atomic_read(&rcu_dereference(c.dyn)->pfx_cnt[32]), 0);
	CHECK(!test_bit(32, rcu_dereference(c.dyn)->pfx));
	CHECK_EQ(nfg_rs_live_count(), live);
	CHECK_EQ(shim_rcu_work_run(), 1);
	CHECK_EQ(nfg_rs_live_count(), live - 1000);
	CHECK(nfg_rs_core_match4(&c, 0x0a000000 + 7, 0));
	CHECK(!nfg_rs_core_match4(&c, 0x0a000000 + 14, 0));

	/* flush: one batch too */
	for (i = 0; i < 100; i++)
		CHECK_EQ(dadd4(&c, 0x0b000000 + i, 32, 0, false, 0),
			 NFG_RS_DYN_DONE);
	q = shim_rcu_work_queued;
	down_write(&c.lock);
	nfg_rs_core_flush(&c);
	up_write(&c.lock);
	CHECK_EQ(shim_rcu_work_queued, q + 1);
	CHECK_EQ(dyn_count(&c), 0);
	live = nfg_rs_live_count();
	CHECK_EQ(shim_rcu_work_run(), 1);
	CHECK_EQ(nfg_rs_live_count(), live - 100);
	shim_rcu_work_hold(false);
	set_fini(&c);

	/* every allocation of a fold failing in turn, the batch's included */
	for (k = 1; k < 20; k++) {
		dyn_set(&c, false, 1000);
		CHECK_EQ(add1(&c, r4(1, 1)), 0);
		for (i = 0; i < 50; i++)
			CHECK_EQ(dadd4(&c, 100 + i, 32, 0, false, 0),
				 NFG_RS_DYN_DONE);
		live = nfg_rs_live_count();
		q = shim_rcu_work_queued;
		shim_fail_alloc_in(k);
		if (!nfg_rs_core_fold(&c, 0)) {
			if (shim_alloc_failed() && shim_rcu_work_queued == q)
				fallback = true;
			CHECK_EQ(dyn_count(&c), 0);
			CHECK_EQ(nfg_rs_live_count(), live - 50);
		} else {
			CHECK_EQ(dyn_count(&c), 50);
			CHECK_EQ(nfg_rs_live_count(), live);
		}
		shim_fail_alloc_in(0);
		for (i = 0; i < 50; i++)
			CHECK(nfg_rs_core_match4(&c, 100 + i, 0));
		set_fini(&c);
	}
	CHECK(fallback);
}

/*
 * Random packet-path adds and deletes (mixed prefix lengths) over a small
 * universe with control-plane ranges: every lookup agrees with a model
 * before a fold, and the fold changes no answer.
 */
static void test_dyn_model(void)
{
	enum { U = 512 };
	static signed char pos[U];	/* per address: model verdict */
	struct nfg_rs_core c;
	u64 st = 0xd1ce;
	int i, a, round;

	for (round = 0; round < 20; round++) {
		dyn_set(&c, false, 100000);
		memset(pos, 0, sizeof(pos));
		for (i = 0; i < 8; i++) {
			u32 s = nfg_xorshift64s(&st) % U, e = s + nfg_xorshift64s(&st) % 40;

			if (e >= U)
				e = U - 1;
			CHECK_EQ(add1(&c, r4(s, e)), 0);
			for (a = s; a <= (int)e; a++)
				pos[a] = 1;
		}
		for (i = 0; i < 300; i++) {
			u32 addr = nfg_xorshift64s(&st) % U;
			u64 r = nfg_xorshift64s(&st);
			/*
			 * odd rounds: one length; even rounds: three mixed
			 * (the latest change decides, as in the model)
			 */
			u8 plen = round % 2 ? 32 : (u8[]){ 24, 28, 32 }[(r >> 8) % 3];
			u32 lo = addr & ~((1U << (32 - plen)) - 1);
			u32 hi = lo | ((1U << (32 - plen)) - 1);

			if (r % 3) {
				CHECK(dadd4(&c, addr, plen, 0, r & 8, 0) >= 0);
				for (a = lo; a <= (int)hi && a < U; a++)
					pos[a] = 1;
			} else {
				CHECK(ddel4(&c, addr, plen) >= 0);
				for (a = lo; a <= (int)hi && a < U; a++)
					pos[a] = 0;
			}
			if (r % 97 == 0)
				CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		}
		for (a = 0; a < U; a++)
			if (nfg_rs_core_match4(&c, a, 0) != pos[a]) {
				fail_at(__FILE__, __LINE__, "round %d addr %d: %d", round, a, pos[a]);
				break;
			}
		CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		CHECK_EQ(dyn_count(&c), 0);
		for (a = 0; a < U; a++)
			if (nfg_rs_core_match4(&c, a, 0) != pos[a]) {
				fail_at(__FILE__, __LINE__, "folded: round %d addr %d", round, a);
				break;
			}
		check_core(&c);
		set_fini(&c);
	}
}

struct dyn_thread_arg {
	struct nfg_rs_core	*c;
	u32			base;
	u32			done;
	u32			full;
};

static void *dyn_thread(void *p)
{
	struct dyn_thread_arg *t = p;
	u32 i;
	int ret;

	for (i = 0; i < 1000; i++) {
		ret = dadd4(t->c, t->base + 2 * i, 32, 0, false, 0);
		if (ret == NFG_RS_DYN_DONE)
			t->done++;
		else if (ret == -ENOSPC)
			t->full++;
	}
	return NULL;
}

/* Concurrent packet-path adds never take the set past maxelem. */
static void test_dyn_threads(void)
{
	struct dyn_thread_arg t[4];
	pthread_t th[4];
	struct nfg_rs_core c;
	u32 i, done = 0, full = 0;

	dyn_set(&c, false, 2000);
	CHECK_EQ(add1(&c, r4(1, 1)), 0);
	for (i = 0; i < 4; i++) {
		t[i] = (struct dyn_thread_arg){ &c, 100000 * (i + 1), 0, 0 };
		pthread_create(&th[i], NULL, dyn_thread, &t[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		done += t[i].done;
		full += t[i].full;
	}
	CHECK_EQ(done, 1999);
	CHECK_EQ(full, 2001);
	CHECK_EQ(dyn_count(&c), 1999);
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK_EQ(c.count, 2000);
	check_core(&c);
	set_fini(&c);
}

/*
 * Forced interleavings. race_arm(c, where, fn) makes the next pass of
 * @c's packet path through @where run fn(c) there once, as a
 * control-plane operation on another CPU could.
 */
static struct {
	void	*core;
	int	where;
	void	(*fn)(struct nfg_rs_core *c);
	int	ran;
} race;

static u32 race_copy_addr;

static void race_point(void *core, int where)
{
	void (*fn)(struct nfg_rs_core *c) = race.fn;

	if (!fn || core != race.core || where != race.where)
		return;
	race.fn = NULL;
	race.ran++;
	fn(core);
}

static void race_arm(struct nfg_rs_core *c, int where,
		     void (*fn)(struct nfg_rs_core *c))
{
	race.core = c;
	race.where = where;
	race.fn = fn;
	race.ran = 0;
}

static void race_fold(struct nfg_rs_core *c)
{
	CHECK_EQ(nfg_rs_core_fold(c, 0), 0);
}

/*
 * A lookup that loaded the array before a fold published it and probes
 * the hash after the fold unlinked the folded entries sees the state
 * before or after the fold, never neither.
 */
static void test_dyn_race_publish(void)
{
	struct nfg_rs_core c;

	dyn_set(&c, false, 100);
	CHECK_EQ(add1(&c, r4(100, 200)), 0);
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 0), NFG_RS_DYN_DONE);
	race_arm(&c, RS_RACE_LOOKUP, race_fold);
	CHECK(nfg_rs_core_match4(&c, 5, 0));
	CHECK_EQ(race.ran, 1);
	CHECK(nfg_rs_core_match4(&c, 5, 0));
	/* a delete marker: the lookup must not see the old array alone */
	CHECK_EQ(ddel4(&c, 150, 32), NFG_RS_DYN_DONE);
	race_arm(&c, RS_RACE_LOOKUP, race_fold);
	CHECK(!nfg_rs_core_match4(&c, 150, 0));
	CHECK_EQ(race.ran, 1);
	CHECK(!nfg_rs_core_match4(&c, 150, 0));
	set_fini(&c);
}

/*
 * --del-set --prefix 24, then --add-set of an address inside it while the
 * fold of the delete runs: the add is not lost.
 */
static void test_dyn_race_del_add(void)
{
	struct nfg_rs_dyn *dyn;
	struct nfg_rs_key a = k4(0x0a000005), p = k4(0x0a000000);
	struct nfg_rs_core c;

	dyn_set(&c, false, 100);
	dyn = rcu_dereference(c.dyn);
	/* the two entries' buckets have different locks (the shim's are not recursive) */
	CHECK((rs_dyn_bucket(dyn, &a, 32) & dyn->lmask) !=
	      (rs_dyn_bucket(dyn, &p, 24) & dyn->lmask));
	CHECK_EQ(add1(&c, r4(0x0a000000, 0x0a0000ff)), 0);
	CHECK_EQ(ddel4(&c, 0x0a000000, 24), NFG_RS_DYN_DONE);
	CHECK(!nfg_rs_core_match4(&c, 0x0a000005, 0));
	race_arm(&c, RS_RACE_ADD, race_fold);
	CHECK_EQ(dadd4(&c, 0x0a000005, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(race.ran, 1);
	CHECK(nfg_rs_core_match4(&c, 0x0a000005, 0));
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK(nfg_rs_core_match4(&c, 0x0a000005, 0));
	CHECK(!nfg_rs_core_match4(&c, 0x0a000006, 0));
	EXPECT(&c, r4(0x0a000005, 0x0a000005));
	set_fini(&c);
}

/*
 * Deletes never need room: a set at maxelem takes them, and every fold
 * applies them (a split may leave the set over maxelem; adds wait until
 * it is back under).
 */
static void test_dyn_del_full(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;

	dyn_set(&c, false, 2);
	CHECK_EQ(add1(&c, r4(100, 199)), 0);
	CHECK_EQ(add1(&c, r4(300, 399)), 0);
	CHECK_EQ(dadd4(&c, 500, 32, 0, false, 0), -ENOSPC);
	CHECK_EQ(ddel4(&c, 350, 32), NFG_RS_DYN_DONE);
	CHECK_EQ(ddel4(&c, 150, 32), NFG_RS_DYN_DONE);
	CHECK(!nfg_rs_core_match4(&c, 350, 0));
	CHECK(!nfg_rs_core_match4(&c, 150, 0));
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK_EQ(dyn_count(&c), 0);
	CHECK(!nfg_rs_core_match4(&c, 350, 0));
	CHECK(!nfg_rs_core_match4(&c, 150, 0));
	CHECK(nfg_rs_core_match4(&c, 351, 0));
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_dels, 2);
	CHECK_EQ(info.dyn_refused, 1);
	CHECK_EQ(info.count, 4);
	/* over maxelem: adds are refused until deletes bring it back */
	CHECK_EQ(dadd4(&c, 500, 32, 0, false, 0), -ENOSPC);
	CHECK_EQ(ddel4(&c, 100, 24), NFG_RS_DYN_DONE);
	CHECK_EQ(ddel4(&c, 300, 24), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK_EQ(dadd4(&c, 500, 32, 0, false, 0), NFG_RS_DYN_DONE);
	set_fini(&c);
}

/*
 * A delete of a prefix removes what the set holds inside it, pending
 * entries of other prefix lengths included: the same answer whether a
 * fold ran in between or not.
 */
static void test_dyn_del_covers(void)
{
	struct nfg_rs_core c;
	int fold;

	for (fold = 0; fold < 2; fold++) {
		dyn_set(&c, false, 100);
		CHECK_EQ(dadd4(&c, 0x0a000005, 32, 0, false, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x0b000000, 24, 0, false, 0), NFG_RS_DYN_DONE);
		if (fold)
			CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		/* a shorter prefix over a pending /32 */
		CHECK_EQ(ddel4(&c, 0x0a000000, 24), NFG_RS_DYN_DONE);
		CHECK(!nfg_rs_core_match4(&c, 0x0a000005, 0));
		/* a longer prefix inside a pending /24 */
		CHECK_EQ(ddel4(&c, 0x0b000007, 32), NFG_RS_DYN_DONE);
		CHECK(!nfg_rs_core_match4(&c, 0x0b000007, 0));
		CHECK(nfg_rs_core_match4(&c, 0x0b000008, 0));
		CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		CHECK(!nfg_rs_core_match4(&c, 0x0a000005, 0));
		CHECK(!nfg_rs_core_match4(&c, 0x0b000007, 0));
		EXPECT(&c, r4(0x0b000000, 0x0b000006), r4(0x0b000008, 0x0b0000ff));
		/* and an add after the delete wins again */
		CHECK_EQ(dadd4(&c, 0x0a000005, 32, 0, false, 0), NFG_RS_DYN_DONE);
		CHECK(nfg_rs_core_match4(&c, 0x0a000005, 0));
		CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		CHECK(nfg_rs_core_match4(&c, 0x0a000005, 0));
		set_fini(&c);
	}
}

static void race_grow(struct nfg_rs_core *c)
{
	struct nfg_rs_range r[3] = { r4(10, 10), r4(20, 20), r4(30, 30) };

	CHECK_EQ(nfg_rs_core_update(c, r, 3, NFG_RS_OP_ADD), 0);
}

/*
 * A packet-path reservation racing with a control-plane publish that
 * grows the array: never past maxelem, and an accepted add is never
 * dropped by the fold.
 */
static void test_dyn_race_maxelem(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;
	int ret;

	dyn_set(&c, false, 4);
	CHECK_EQ(add1(&c, r4(1, 1)), 0);
	race_arm(&c, RS_RACE_RESERVE, race_grow);
	ret = dadd4(&c, 500, 32, 0, false, 0);
	CHECK_EQ(race.ran, 1);
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	nfg_rs_core_info(&c, &info);
	CHECK(info.count <= 4);
	if (ret == NFG_RS_DYN_DONE) {
		CHECK(nfg_rs_core_match4(&c, 500, 0));
		CHECK_EQ(info.dyn_refused, 0);
	} else {
		CHECK_EQ(ret, -ENOSPC);
		CHECK_EQ(info.dyn_refused, 1);
	}
	set_fini(&c);
}

/* A control-plane fold drops the entries that expired, as the expiry work does. */
static void test_dyn_cp_fold_now(void)
{
	struct nfg_rs_core c;

	dyn_set(&c, false, 100);
	shim_jiffies64 = 50;
	CHECK_EQ(dadd4(&c, 9, 32, 100, false, 50), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 11, 32, 300, false, 50), NFG_RS_DYN_DONE);
	shim_jiffies64 = 200;
	CHECK(!nfg_rs_core_match4(&c, 9, 200));
	CHECK_EQ(add1(&c, r4(40, 40)), 0);
	CHECK(!nfg_rs_core_match4(&c, 9, 200));
	CHECK(nfg_rs_core_match4(&c, 11, 200));
	EXPECT(&c, r4(11, 11), r4(40, 40));
	shim_jiffies64 = 0;
	set_fini(&c);
}

/* ---- lazy folds: the fold work folds only when it pays --------------- */

/* @n ranges 1000, 1010, ... (single addresses), permanent */
static void lazy_set(struct nfg_rs_core *c, u32 n, u32 maxelem)
{
	u32 i;

	dyn_set(c, false, maxelem);
	for (i = 0; i < n; i++)
		CHECK_EQ(add1(c, r4(1000 + 10 * i, 1000 + 10 * i)), 0);
}

/* One run of the fold work at @now: did it publish? */
static bool lazy_fold(struct nfg_rs_core *c, u64 now, bool *again)
{
	const struct nfg_rs_array *arr = rcu_dereference(c->arr);
	u32 gen = c->gen;

	CHECK_EQ(nfg_rs_core_fold_lazy(c, now, again), 0);
	return rcu_dereference(c->arr) != arr || c->gen != gen;
}

/*
 * Adds below the hash's bound (two entries per bucket) never rebuild the
 * array, however many ticks the work looks at them while they come and
 * however small the array is next to them (a share of the array's size is
 * no reason: the rebuild is spread over a whole hashful of adds); they
 * match from the hash. The add that reaches the bound folds them all.
 */
static void test_dyn_lazy_threshold(void)
{
	struct nfg_rs_core c;
	bool again;
	u32 i, bound;
	u64 now = 1;

	lazy_set(&c, 100, 1000);
	/* 64 buckets (still empty: no entry hashed with the old mask) */
	rcu_dereference(c.dyn)->hmask = 63;
	bound = NFG_RS_FOLD_LOAD * 64;
	for (i = 0; i + 1 < bound; i++) {
		CHECK_EQ(dadd4(&c, 1 + 2 * i, 32, 0, false, now),
			 NFG_RS_DYN_DONE);
		/* the work looks after every add, never quiet for a second */
		if (lazy_fold(&c, now, &again)) {
			fail_at(__FILE__, __LINE__,
				"folded at %u pending, 100 ranges, bound %u",
				i + 1, bound);
			break;
		}
		CHECK(again);
		now++;
	}
	CHECK_EQ(dyn_count(&c), bound - 1);
	CHECK_EQ(c.count, 100);
	for (i = 0; i + 1 < bound; i++)
		CHECK(nfg_rs_core_match4(&c, 1 + 2 * i, now));
	CHECK(!nfg_rs_core_match4(&c, 2 * bound - 1, now));
	CHECK_EQ(dadd4(&c, 2 * bound - 1, 32, 0, false, now), NFG_RS_DYN_DONE);
	CHECK(lazy_fold(&c, now, &again));
	CHECK(!again);
	CHECK_EQ(dyn_count(&c), 0);
	CHECK_EQ(c.count, 100 + bound);
	for (i = 0; i < bound; i++)
		CHECK(nfg_rs_core_match4(&c, 1 + 2 * i, now));
	/* nothing pending: nothing to do, no rebuild */
	CHECK(!lazy_fold(&c, now, &again));
	CHECK(!again);
	set_fini(&c);

	/* an empty set: the entry waits like any other, for a quiet second */
	dyn_set(&c, false, 1000);
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 1), NFG_RS_DYN_DONE);
	CHECK(!lazy_fold(&c, 1, &again));
	CHECK(again);
	CHECK(nfg_rs_core_match4(&c, 5, 1));
	CHECK(lazy_fold(&c, 1 + HZ, &again));
	CHECK(!again);
	EXPECT(&c, r4(5, 5));
	set_fini(&c);
}

/* The hash's bound: two entries per bucket fold whatever the array's size. */
static void test_dyn_lazy_bound(void)
{
	struct nfg_rs_dyn *dyn;
	struct nfg_rs_core c;
	bool again;
	u32 i, bound;

	/* buckets: maxelem's power of two, 64..65536 */
	dyn_set(&c, false, 100);
	CHECK_EQ(rcu_dereference(c.dyn)->hmask, 127);
	set_fini(&c);
	dyn_set(&c, false, NFG_RS_MAXELEM_LIMIT);
	CHECK_EQ(rcu_dereference(c.dyn)->hmask, 65535);
	CHECK_EQ(rcu_dereference(c.dyn)->lmask, 255);
	set_fini(&c);

	lazy_set(&c, 100, 1000);
	dyn = rcu_dereference(c.dyn);
	/* 4 buckets (still empty: no entry hashed with the old mask) */
	dyn->hmask = 3;
	bound = NFG_RS_FOLD_LOAD * 4;
	for (i = 0; i + 1 < bound; i++) {
		CHECK_EQ(dadd4(&c, 1 + 2 * i, 32, 0, false, 1),
			 NFG_RS_DYN_DONE);
		CHECK(!lazy_fold(&c, 1, &again));
		CHECK(again);
	}
	CHECK_EQ(dadd4(&c, 1 + 2 * i, 32, 0, false, 1), NFG_RS_DYN_DONE);
	CHECK(lazy_fold(&c, 1, &again));
	CHECK(!again);
	CHECK_EQ(dyn_count(&c), 0);
	CHECK_EQ(c.count, 100 + bound);
	set_fini(&c);
}

/*
 * A pending entry that expires goes at its time (its slot of maxelem
 * with it); a quiet set folds after a second; a steady trickle after 5 s.
 */
static void test_dyn_lazy_when(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;
	bool again;
	u64 now;

	/* expiry: a set at maxelem takes adds again at the entry's expiry */
	lazy_set(&c, 100, 102);
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 6, 32, 50, false, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 7, 32, 0, false, 10), -ENOSPC);
	CHECK(!lazy_fold(&c, 10, &again));
	CHECK(!lazy_fold(&c, 49, &again));
	CHECK(again);
	CHECK(!nfg_rs_core_match4(&c, 6, 50));
	CHECK(lazy_fold(&c, 50, &again));
	CHECK(!again);
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.expiries, 1);
	CHECK_EQ(c.count, 101);
	CHECK_EQ(dadd4(&c, 7, 32, 0, false, 50), NFG_RS_DYN_DONE);
	set_fini(&c);

	/* quiet: a second without a new change */
	lazy_set(&c, 100, 1000);
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 1), NFG_RS_DYN_DONE);
	CHECK(!lazy_fold(&c, 1, &again));
	CHECK(!lazy_fold(&c, 1 + HZ / 2, &again));
	/* a change restarts the second, from the work's next look */
	CHECK_EQ(dadd4(&c, 7, 32, 0, false, 1 + HZ / 2), NFG_RS_DYN_DONE);
	CHECK(!lazy_fold(&c, 1 + HZ, &again));
	CHECK(!lazy_fold(&c, 2 * HZ, &again));
	CHECK(again);
	CHECK(lazy_fold(&c, 1 + 2 * HZ, &again));
	CHECK(!again);
	CHECK_EQ(c.count, 102);
	set_fini(&c);

	/* a trickle, never quiet for a second: folded after 5 s */
	lazy_set(&c, 100, 1000);
	for (now = 1; now < 1 + NFG_RS_FOLD_WAIT; now += HZ / 2) {
		CHECK_EQ(dadd4(&c, 2 * (u32)now, 32, 0, false, now),
			 NFG_RS_DYN_DONE);
		CHECK(!lazy_fold(&c, now, &again));
		CHECK(again);
	}
	CHECK(lazy_fold(&c, now, &again));
	CHECK(!again);
	CHECK_EQ(dyn_count(&c), 0);
	set_fini(&c);
}

static void race_add_delete(struct nfg_rs_core *c)
{
	/* between the work's decision and its fold, on another CPU */
	CHECK_EQ(dadd4(c, 3, 32, 0, false, 1), NFG_RS_DYN_DONE);
	CHECK_EQ(ddel4(c, 1000, 32), NFG_RS_DYN_DONE);
}

static u32 race_gen;

static void race_cp_add(struct nfg_rs_core *c)
{
	/* the control plane folds everything first */
	CHECK_EQ(add1(c, r4(2, 2)), 0);
	race_gen = c->gen;
}

/*
 * Changes that come between the fold work's decision and its fold are
 * folded with the rest, in order; a control-plane fold meanwhile leaves
 * the work nothing to do and it publishes nothing more.
 */
static void test_dyn_race_lazy(void)
{
	struct nfg_rs_core c;
	bool again;
	u32 gen;

	dyn_set(&c, false, 1000);
	CHECK_EQ(add1(&c, r4(1000, 1000)), 0);
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 1), NFG_RS_DYN_DONE);
	/* due after a quiet second (the work's first look starts it) */
	CHECK(!lazy_fold(&c, 1, &again));
	race_arm(&c, RS_RACE_FOLD, race_add_delete);
	CHECK(lazy_fold(&c, 1 + HZ, &again));
	CHECK_EQ(race.ran, 1);
	CHECK(!again);
	CHECK_EQ(dyn_count(&c), 0);
	EXPECT(&c, r4(3, 3), r4(5, 5));

	CHECK_EQ(dadd4(&c, 7, 32, 0, false, 1), NFG_RS_DYN_DONE);
	CHECK(!lazy_fold(&c, 1 + HZ, &again));
	race_arm(&c, RS_RACE_FOLD, race_cp_add);
	gen = c.gen;
	CHECK_EQ(nfg_rs_core_fold_lazy(&c, 1 + 2 * HZ, &again), 0);
	CHECK_EQ(race.ran, 1);
	CHECK(!again);
	/* the control plane's publication only */
	CHECK(race_gen != gen);
	CHECK_EQ(c.gen, race_gen);
	EXPECT(&c, r4(2, 3), r4(5, 5), r4(7, 7));
	set_fini(&c);
}

/*
 * No memory for the fold: the expiry goes on without it, the entries
 * keep deciding from the hash and fold later.
 */
static void test_dyn_expire_nofold(void)
{
	struct nfg_rs_range r = r4(100, 199);
	struct nfg_rs_core c;
	u32 n = 99;

	dyn_set(&c, false, 100);
	r.expires = 100;
	CHECK_EQ(nfg_rs_core_update(&c, &r, 1, NFG_RS_OP_ADD), 0);
	CHECK_EQ(add1(&c, r4(300, 399)), 0);
	CHECK_EQ(dadd4(&c, 5, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(ddel4(&c, 350, 32), NFG_RS_DYN_DONE);
	shim_fail_alloc_in(1);		/* the fold's copy */
	CHECK_EQ(nfg_rs_core_expire(&c, 200, &n), 0);
	CHECK(shim_alloc_failed());
	shim_fail_alloc_in(0);
	CHECK_EQ(n, 1);
	CHECK(!nfg_rs_core_match4(&c, 150, 200));
	CHECK(nfg_rs_core_match4(&c, 5, 200));
	CHECK(!nfg_rs_core_match4(&c, 350, 200));
	CHECK_EQ(dyn_count(&c), 2);
	CHECK_EQ(nfg_rs_core_fold(&c, 200), 0);
	EXPECT(&c, r4(5, 5), r4(300, 349), r4(351, 399));
	set_fini(&c);
}

/* --exist refreshes a live entry, but never shortens it (man page). */
static void test_dyn_exist_later(void)
{
	struct nfg_rs_core c;

	dyn_set(&c, false, 100);
	CHECK_EQ(dadd4(&c, 9, 32, 1000, false, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 9, 32, 500, true, 20), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 9, 700));
	CHECK_EQ(dadd4(&c, 9, 32, 0, true, 30), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 9, 5000));
	CHECK_EQ(dadd4(&c, 9, 32, 600, true, 40), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 9, 5000));
	CHECK_EQ(nfg_rs_core_fold(&c, 50), 0);
	CHECK(nfg_rs_core_match4(&c, 9, 5000));
	/* expired: the add starts afresh */
	CHECK_EQ(dadd4(&c, 11, 32, 100, false, 10), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 11, 32, 300, true, 200), NFG_RS_DYN_DONE);
	CHECK(nfg_rs_core_match4(&c, 11, 250));
	CHECK(!nfg_rs_core_match4(&c, 11, 300));
	set_fini(&c);
}

/*
 * One prefix from the control plane through the hash
 * (nfg_rs_core_update1()) does what nfg_rs_core_update() does with it:
 * random adds (with expiries) and deletes of prefixes on two twin sets,
 * same lookups before and after folds, same ranges once folded; what is
 * not one prefix is left to the whole path.
 */
static void test_dyn_update1(void)
{
	enum { U = 1024 };
	struct nfg_rs_core a, b;
	struct nfg_rs_core_info info;
	struct nfg_rs_range r;
	u64 st = 0x5eed1, now = 100;
	int i, x, hashed = 0;

	dyn_set(&a, false, 100000);
	set_init(&b, false, 100000);
	r = r4(4, 5);
	/* no hash, not a prefix: the whole path's */
	CHECK_EQ(nfg_rs_core_update1(&b, &r, NFG_RS_OP_ADD, now), -EAGAIN);
	r = r4(3, 5);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_ADD, now), -EAGAIN);
	r = r4(4, 5);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_ADD, now), 0);
	CHECK_EQ(nfg_rs_core_update(&b, &r, 1, NFG_RS_OP_ADD), 0);
	for (i = 0; i < 3000; i++) {
		u64 rnd = nfg_xorshift64s(&st);
		u32 plen = 32 - rnd % 6, addr = (rnd >> 8) % U;
		enum nfg_rs_op op = (rnd >> 20) % 3 ? NFG_RS_OP_ADD : NFG_RS_OP_DEL;

		addr &= ~((1U << (32 - plen)) - 1);
		r = r4(addr, addr | ((1U << (32 - plen)) - 1));
		r.expires = op == NFG_RS_OP_ADD && (rnd >> 24) % 2 ?
			    now + 1 + (rnd >> 28) % 400 : 0;
		/* as rangeset_nl.c does: the whole path when it says so */
		if (nfg_rs_core_update1(&a, &r, op, now))
			CHECK_EQ(nfg_rs_core_update(&a, &r, 1, op), 0);
		else
			hashed++;
		CHECK_EQ(nfg_rs_core_update(&b, &r, 1, op), 0);
		if ((rnd >> 40) % 50 == 0)
			CHECK_EQ(nfg_rs_core_fold(&a, now), 0);
		if ((rnd >> 40) % 97 == 0) {
			for (x = 0; x < U; x++)
				if (nfg_rs_core_match4(&a, x, 0) !=
				    nfg_rs_core_match4(&b, x, 0)) {
					fail_at(__FILE__, __LINE__, "step %d addr %d", i, x);
					break;
				}
		}
	}
	CHECK_EQ(nfg_rs_core_fold(&a, now), 0);
	CHECK_EQ(dyn_count(&a), 0);
	CHECK_EQ(a.count, b.count);
	CHECK(hashed > 2000);
	for (x = 0; x < (int)a.count && a.count == b.count; x++) {
		struct nfg_rs_range ra, rb;

		nfg_rs_array_range(published(&a), x, &ra);
		nfg_rs_array_range(published(&b), x, &rb);
		if (!range_eq(&ra, &rb) || ra.expires != rb.expires) {
			fail_at(__FILE__, __LINE__, "range %d differs", x);
			break;
		}
	}
	for (x = 0; x < U; x++)
		if (nfg_rs_core_match4(&a, x, 0) != nfg_rs_core_match4(&b, x, 0)) {
			fail_at(__FILE__, __LINE__, "folded: addr %d", x);
			break;
		}
	check_core(&a);
	/* not counted as packet-path updates */
	nfg_rs_core_info(&a, &info);
	CHECK_EQ(info.dyn_adds, 0);
	CHECK_EQ(info.dyn_dels, 0);
	set_fini(&a);
	set_fini(&b);

	/*
	 * the control plane's DEL never splits past maxelem: its marker takes
	 * a slot, and without one the whole path answers (-ENOSPC)
	 */
	dyn_set(&a, false, 3);
	r = r4(1, 3);
	CHECK_EQ(nfg_rs_core_update(&a, &r, 1, NFG_RS_OP_ADD), 0);
	r = r4(5, 5);
	CHECK_EQ(nfg_rs_core_update(&a, &r, 1, NFG_RS_OP_ADD), 0);
	r = r4(2, 2);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_DEL, now), 0);
	CHECK(!nfg_rs_core_match4(&a, 2, 0));
	r = r4(5, 5);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_DEL, now), -EAGAIN);
	CHECK_EQ(nfg_rs_core_update(&a, &r, 1, NFG_RS_OP_DEL), 0);
	EXPECT(&a, r4(1, 1), r4(3, 3));
	r = r4(7, 7);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_ADD, now), 0);
	r = r4(1, 1);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_DEL, now), -EAGAIN);
	r = r4(3, 3);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_DEL, now), -EAGAIN);
	CHECK_EQ(nfg_rs_core_fold(&a, now), 0);
	EXPECT(&a, r4(1, 1), r4(3, 3), r4(7, 7));
	r = r4(1, 3);
	CHECK_EQ(nfg_rs_core_update(&a, &r, 1, NFG_RS_OP_ADD), 0);
	r = r4(9, 9);
	CHECK_EQ(nfg_rs_core_update(&a, &r, 1, NFG_RS_OP_ADD), 0);
	r = r4(2, 2);
	CHECK_EQ(nfg_rs_core_update1(&a, &r, NFG_RS_OP_DEL, now), -EAGAIN);
	CHECK_EQ(nfg_rs_core_update(&a, &r, 1, NFG_RS_OP_DEL), -ENOSPC);
	EXPECT(&a, r4(1, 3), r4(7, 7), r4(9, 9));
	set_fini(&a);
}

/* ---- the merge fold (entries merged straight into the array) ---------- */

static void cp_add(struct nfg_rs_core *c, u32 s, u32 e, u64 exp)
{
	struct nfg_rs_range r = rt4(s, e, exp);

	CHECK_EQ(nfg_rs_core_update(c, &r, 1, NFG_RS_OP_ADD), 0);
}

/*
 * Overlapping and adjacent: an add inside a range of an earlier expiry
 * splits it, one of a later expiry changes nothing, adjacent parts of the
 * same expiry merge (with the array's ranges and with each other). Both
 * folds (the merge, and the tree as the reference) give the same ranges.
 */
static void test_dyn_merge_overlap(void)
{
	struct nfg_rs_core c;
	int tree;

	for (tree = 0; tree < 2; tree++) {
		dyn_set(&c, false, 100);
		tree_only_core = tree ? &c : NULL;
		cp_add(&c, 0x100, 0x1ff, 1000);
		cp_add(&c, 0x200, 0x2ff, 2000);
		CHECK_EQ(dadd4(&c, 0x300, 24, 2000, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x180, 25, 3000, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x1c0, 26, 500, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x400, 32, 2000, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x401, 32, 2001, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0, 32, 0, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 1, 32, 0, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(nfg_rs_core_fold(&c, 10), 0);
		CHECK_EQ(dyn_count(&c), 0);
		CHECK_EQ(c.tree_stale, !tree);
		EXPECT_EXP(&c, rt4(0, 1, 0), rt4(0x100, 0x17f, 1000),
			   rt4(0x180, 0x1ff, 3000), rt4(0x200, 0x400, 2000),
			   rt4(0x401, 0x401, 2001));
		/* the control plane gets its tree back and goes on from it */
		cp_add(&c, 0x402, 0x402, 2001);
		EXPECT_EXP(&c, rt4(0, 1, 0), rt4(0x100, 0x17f, 1000),
			   rt4(0x180, 0x1ff, 3000), rt4(0x200, 0x400, 2000),
			   rt4(0x401, 0x402, 2001));
		CHECK(!c.tree_stale);
		/* the whole space, and its last address */
		CHECK_EQ(dadd4(&c, U32_MAX, 32, 0, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0, 1, 5000, true, 10), NFG_RS_DYN_DONE);
		CHECK_EQ(nfg_rs_core_fold(&c, 10), 0);
		EXPECT_EXP(&c, rt4(0, 1, 0), rt4(2, 0x7fffffff, 5000),
			   rt4(U32_MAX, U32_MAX, 0));
		CHECK_EQ(c.next_expiry, 5000);
		tree_only_core = NULL;
		set_fini(&c);
	}
}

/*
 * Markers over pending adds: the latest change decides, whatever the
 * prefix lengths: a marker deletes the array's part and the adds before
 * it, adds after it come back inside it.
 */
static void test_dyn_merge_markers(void)
{
	struct nfg_rs_core c;
	int tree;

	for (tree = 0; tree < 2; tree++) {
		dyn_set(&c, false, 100);
		tree_only_core = tree ? &c : NULL;
		cp_add(&c, 0x100, 0x1ff, 0);
		CHECK_EQ(dadd4(&c, 0x150, 32, 0, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(ddel4(&c, 0x100, 24), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x1a0, 28, 0, true, 0), NFG_RS_DYN_DONE);
		/* a marker inside an add that came before it */
		CHECK_EQ(dadd4(&c, 0x500, 24, 0, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(ddel4(&c, 0x580, 25), NFG_RS_DYN_DONE);
		/* a marker, then the same prefix added again */
		CHECK_EQ(ddel4(&c, 0x600, 24), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x600, 24, 0, true, 0), NFG_RS_DYN_DONE);
		/* nested: add /24, marker /26 inside, add /28 inside that */
		CHECK_EQ(dadd4(&c, 0x700, 24, 0, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(ddel4(&c, 0x740, 26), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 0x750, 28, 0, true, 0), NFG_RS_DYN_DONE);
		/* a marker over nothing */
		CHECK_EQ(ddel4(&c, 0x900, 24), NFG_RS_DYN_DONE);
		CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		CHECK_EQ(dyn_count(&c), 0);
		EXPECT(&c, r4(0x1a0, 0x1af), r4(0x500, 0x57f), r4(0x600, 0x73f),
		       r4(0x750, 0x75f), r4(0x780, 0x7ff));
		/* a marker alone splits an array range */
		CHECK_EQ(ddel4(&c, 0x650, 28), NFG_RS_DYN_DONE);
		CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		EXPECT(&c, r4(0x1a0, 0x1af), r4(0x500, 0x57f), r4(0x600, 0x64f),
		       r4(0x660, 0x73f), r4(0x750, 0x75f), r4(0x780, 0x7ff));
		tree_only_core = NULL;
		set_fini(&c);
	}
}

/*
 * Expiry in the merge: adds expired by the fold's time are dropped and
 * counted; with the expiry work's fold, ranges expired then go too, each
 * counted once as the tree would hold it.
 */
static void test_dyn_merge_expiry(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;
	int tree;
	u32 n;

	for (tree = 0; tree < 2; tree++) {
		dyn_set(&c, false, 100);
		tree_only_core = tree ? &c : NULL;
		cp_add(&c, 10, 19, 100);
		cp_add(&c, 30, 39, 500);
		CHECK_EQ(dadd4(&c, 20, 32, 100, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 35, 32, 150, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 50, 32, 150, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 60, 31, 0, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(nfg_rs_core_expire(&c, 200, &n), 0);
		/* [10, 19], and the entries 20, 35, 50 (expired themselves) */
		CHECK_EQ(n, 4);
		EXPECT_EXP(&c, rt4(30, 39, 500), rt4(60, 61, 0));
		CHECK_EQ(c.next_expiry, 500);
		/* a fold (not the expiry work) drops only expired entries */
		CHECK_EQ(dadd4(&c, 70, 32, 250, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(dadd4(&c, 71, 32, 900, true, 0), NFG_RS_DYN_DONE);
		CHECK_EQ(nfg_rs_core_fold(&c, 600), 0);
		EXPECT_EXP(&c, rt4(30, 39, 500), rt4(60, 61, 0),
			   rt4(71, 71, 900));
		nfg_rs_core_info(&c, &info);
		CHECK_EQ(info.expiries, 5);
		/* the expiry work alone, no entry pending */
		CHECK_EQ(nfg_rs_core_expire(&c, 600, &n), 0);
		CHECK_EQ(n, 1);
		EXPECT_EXP(&c, rt4(60, 61, 0), rt4(71, 71, 900));
		CHECK_EQ(nfg_rs_core_expire(&c, 600, &n), 0);
		CHECK_EQ(n, 0);
		CHECK_EQ(nfg_rs_core_expire(&c, 900, &n), 0);
		CHECK_EQ(n, 1);
		EXPECT_EXP(&c, rt4(60, 61, 0));
		CHECK_EQ(c.next_expiry, 0);
		CHECK(!published(&c)->timed);
		tree_only_core = NULL;
		set_fini(&c);
	}
}

/*
 * maxelem at the boundary: the merge publishes a set exactly full; an
 * add it cannot fit falls back to the tree's fold (which refuses it), a
 * delete's split still goes in; the control plane sees the exact room.
 */
static void test_dyn_merge_maxelem(void)
{
	struct nfg_rs_core_info info;
	struct nfg_rs_core c;

	dyn_set(&c, false, 5);
	cp_add(&c, 0, 0, 0);
	cp_add(&c, 2, 2, 0);
	cp_add(&c, 4, 4, 0);
	CHECK_EQ(dadd4(&c, 6, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 8, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(dadd4(&c, 10, 32, 0, false, 0), -ENOSPC);
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK(c.tree_stale);
	EXPECT(&c, r4(0, 0), r4(2, 2), r4(4, 4), r4(6, 6), r4(8, 8));
	CHECK_EQ(add1(&c, r4(10, 10)), -ENOSPC);
	EXPECT(&c, r4(0, 0), r4(2, 2), r4(4, 4), r4(6, 6), r4(8, 8));
	/* adjacent: merges, takes no room */
	CHECK_EQ(add1(&c, r4(1, 1)), 0);
	EXPECT(&c, r4(0, 2), r4(4, 4), r4(6, 6), r4(8, 8));
	/* one slot: the add takes it, the marker splits past maxelem */
	CHECK_EQ(dadd4(&c, 20, 32, 0, false, 0), NFG_RS_DYN_DONE);
	CHECK_EQ(ddel4(&c, 1, 32), NFG_RS_DYN_DONE);
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	EXPECT(&c, r4(0, 0), r4(2, 2), r4(4, 4), r4(6, 6), r4(8, 8),
	       r4(20, 20));
	nfg_rs_core_info(&c, &info);
	CHECK_EQ(info.dyn_refused, 1);
	CHECK_EQ(info.count, 6);
	CHECK_EQ(dadd4(&c, 30, 32, 0, false, 0), -ENOSPC);
	set_fini(&c);
}

static u32 merge_ranges_differ(struct nfg_rs_core *a, struct nfg_rs_core *b)
{
	const struct nfg_rs_array *x = published(a), *y = published(b);
	struct nfg_rs_range p, q;
	u32 i;

	if ((x ? x->count : 0) != (y ? y->count : 0))
		return 1;
	for (i = 0; x && i < x->count; i++) {
		nfg_rs_array_range(x, i, &p);
		nfg_rs_array_range(y, i, &q);
		if (!range_eq(&p, &q) || p.expires != q.expires)
			return i + 2;
	}
	return 0;
}

/*
 * What merge_random() draws from: @u addresses; IPv6 in one /118 (@wide
 * false) or spread over the two halves of the key (@wide: address a is
 * base + a / 32 in the high half, (a % 32) << 59 in the low one, and the
 * prefix lengths are around 64, on both sides); @inject: a fold of the
 * merge set may fail an allocation (the merge's or the fallback's).
 */
struct merge_cfg {
	bool	v6;
	bool	wide;
	bool	inject;
	u32	u;
};

static struct nfg_rs_key merge_key(const struct merge_cfg *cfg, u64 base,
				   u32 a)
{
	if (!cfg->v6)
		return k4(a);
	if (cfg->wide)
		return k6(base + (a >> 5), (u64)(a & 31) << 59);
	return k6(base, a);
}

static u8 merge_plen(const struct merge_cfg *cfg, u64 r)
{
	static const u8 narrow[] = { 0, 0, 0, 1, 2, 4, 6, 8 };
	static const u8 wide[] = { 128, 128, 72, 66, 65, 64, 63, 59 };

	if (cfg->v6 && cfg->wide)
		return wide[(r >> 4) % 8];
	return (cfg->v6 ? 128 : 32) - narrow[(r >> 4) % 8];
}

/* Do the two sets answer every address of the universe alike? */
static bool merge_lookups_agree(const struct merge_cfg *cfg, u64 base,
				struct nfg_rs_core *a, struct nfg_rs_core *b,
				u64 now)
{
	u32 i;

	for (i = 0; i < cfg->u + 40; i++) {
		struct nfg_rs_key k = merge_key(cfg, base, i);

		if (nfg_rs_core_match6(a, &k, now) !=
		    nfg_rs_core_match6(b, &k, now))
			return false;
	}
	return true;
}

/*
 * Random packet-path adds (mixed prefix lengths, expiries, --exist) and
 * deletes, control-plane adds and deletes, folds and expiries at a moving
 * time, small and large maxelem: a set folding by merge and its twin
 * folding through the tree (the fold before the merge) answer every
 * operation alike and end with the same ranges, expiries and counters.
 * A fold that fails an allocation (@cfg->inject) changes no answer.
 */
static void merge_random(u64 seed, const struct merge_cfg *cfg, u32 rounds)
{
	struct nfg_rs_core_info ia, ib;
	struct nfg_rs_core a, b;
	u64 st = seed, now;
	u32 round, i, na, nb, failed = 0;
	bool v6 = cfg->v6;
	int ra, rb;

	for (round = 0; round < rounds; round++) {
		u32 maxelem = round % 3 ? 100000 : 20 + nfg_xorshift64s(&st) % 60;
		u64 base = v6 ? 0x20010db800000000ULL : 0;

		dyn_set(&a, v6, maxelem);
		dyn_set(&b, v6, maxelem);
		tree_only_core = &b;
		now = 1;
		for (i = 0; i < 600; i++) {
			u64 r = nfg_xorshift64s(&st);
			u32 addr = nfg_xorshift64s(&st) % cfg->u;
			u8 plen = merge_plen(cfg, r);
			u64 exp = (r >> 8) % 4 ? now + 1 + (r >> 12) % 400 : 0;
			struct nfg_rs_key k = merge_key(cfg, base, addr);
			struct nfg_rs_range cr;

			switch (r % 16) {
			case 0 ... 8:
				ra = nfg_rs_dyn_add(&a, &k, plen, exp, r & 0x10000, now);
				rb = nfg_rs_dyn_add(&b, &k, plen, exp, r & 0x10000, now);
				CHECK_EQ(ra, rb);
				break;
			case 9 ... 11:
				ra = nfg_rs_dyn_del(&a, &k, plen);
				rb = nfg_rs_dyn_del(&b, &k, plen);
				CHECK_EQ(ra, rb);
				break;
			case 12:
				cr.start = k;
				cr.end = merge_key(cfg, base, addr + (r >> 20) % 30);
				cr.expires = exp;
				ra = nfg_rs_core_update(&a, &cr, 1, (r >> 30) & 1);
				rb = nfg_rs_core_update(&b, &cr, 1, (r >> 30) & 1);
				CHECK_EQ(ra, rb);
				break;
			case 13:
			case 14:
				if (cfg->inject && (r & 0x20000)) {
					shim_fail_alloc_in(1 + (r >> 44) % 8);
					ra = nfg_rs_core_fold(&a, now);
					CHECK(!ra || (ra == -ENOMEM && shim_alloc_failed()));
					shim_fail_alloc_in(0);
					if (ra) {
						failed++;
						/* nothing changed: the hash still decides */
						CHECK(merge_lookups_agree(cfg, base, &a, &b, now));
					}
				}
				CHECK_EQ(nfg_rs_core_fold(&a, now), 0);
				CHECK_EQ(nfg_rs_core_fold(&b, now), 0);
				break;
			default:
				CHECK_EQ(nfg_rs_core_expire(&a, now, &na), 0);
				CHECK_EQ(nfg_rs_core_expire(&b, now, &nb), 0);
				CHECK_EQ(na, nb);
				break;
			}
			if (r % 3 == 0)
				now += 1 + (r >> 40) % 40;
			if (merge_ranges_differ(&a, &b)) {
				fail_at(__FILE__, __LINE__,
					"seed %" PRIx64 " round %u step %u: ranges differ (%u)",
					seed, round, i, merge_ranges_differ(&a, &b));
				break;
			}
		}
		CHECK(merge_lookups_agree(cfg, base, &a, &b, now));
		CHECK_EQ(nfg_rs_core_expire(&a, now, &na), 0);
		CHECK_EQ(nfg_rs_core_expire(&b, now, &nb), 0);
		CHECK_EQ(na, nb);
		CHECK_EQ(merge_ranges_differ(&a, &b), 0);
		CHECK_EQ(a.next_expiry, b.next_expiry);
		nfg_rs_core_info(&a, &ia);
		nfg_rs_core_info(&b, &ib);
		CHECK_EQ(ia.count, ib.count);
		CHECK_EQ(ia.expiries, ib.expiries);
		CHECK_EQ(ia.dyn_adds, ib.dyn_adds);
		CHECK_EQ(ia.dyn_dels, ib.dyn_dels);
		CHECK_EQ(ia.dyn_refused, ib.dyn_refused);
		CHECK_EQ(ia.dyn_count, 0);
		CHECK_EQ(ib.dyn_count, 0);
		check_core(&a);
		check_core(&b);
		tree_only_core = NULL;
		set_fini(&a);
		set_fini(&b);
	}
	/* the injection reached the folds */
	CHECK(!cfg->inject || failed > 0);
}

static void test_dyn_merge_random_v4(void)
{
	merge_random(0x3e76e, &(struct merge_cfg){ .u = 1024 }, 60);
}

static void test_dyn_merge_random_v6(void)
{
	merge_random(0x3e766, &(struct merge_cfg){ .v6 = true, .u = 1024 }, 30);
}

/* IPv6 prefixes of 59 to 128 bits, across the two halves of the key. */
static void test_dyn_merge_random_v6_wide(void)
{
	merge_random(0x3e7a1, &(struct merge_cfg){ .v6 = true, .wide = true,
						  .u = 1024 }, 30);
}

/* Small IPv4 sets: 64 addresses, the entries nest and overlap often. */
static void test_dyn_merge_random_v4_small(void)
{
	merge_random(0x3e7b2, &(struct merge_cfg){ .u = 64 }, 60);
}

/*
 * The merge's one pass with too little room (never with the room it
 * takes, old ranges + 2 per entry): it counts and fills an exact array
 * in a second pass instead, with the same result.
 */
static void test_dyn_merge_short_room(void)
{
	nfg_rs_merge_room = 0;
	merge_random(0x3e7c3, &(struct merge_cfg){ .u = 1024 }, 20);
	merge_random(0x3e7c4, &(struct merge_cfg){ .v6 = true, .u = 1024 }, 10);
	nfg_rs_merge_room = 1;
	merge_random(0x3e7c5, &(struct merge_cfg){ .u = 64 }, 20);
	nfg_rs_merge_room = 2;
}

/* Allocation failures in the merge and in the fallback through the tree. */
static void test_dyn_merge_random_enomem(void)
{
	merge_random(0x3e7c3, &(struct merge_cfg){ .inject = true, .u = 128 },
		     60);
	merge_random(0x3e7c4, &(struct merge_cfg){ .v6 = true, .wide = true,
						  .inject = true, .u = 128 }, 30);
}

/*
 * A fold takes the changes made before it started: an add made while it
 * copies (into a bucket it has yet to copy) waits for the next fold, so
 * an older delete marker over it is never left in the hash, deciding,
 * while the add is folded into the array.
 */
static void race_copy_add(struct nfg_rs_core *c)
{
	CHECK_EQ(dadd4(c, race_copy_addr, 32, 0, false, 0), NFG_RS_DYN_DONE);
}

static void test_dyn_race_copy(void)
{
	struct nfg_rs_key p = k4(0x0a000000), a;
	struct nfg_rs_dyn *dyn;
	struct nfg_rs_core c;
	u32 bm, i;

	dyn_set(&c, false, 100);
	dyn = rcu_dereference(c.dyn);
	bm = rs_dyn_bucket(dyn, &p, 24);
	/* an address of the /24 hashed before the marker's bucket */
	for (i = 1; i < 256; i++) {
		a = k4(0x0a000000 + i);
		if (rs_dyn_bucket(dyn, &a, 32) < bm)
			break;
	}
	CHECK(i < 256);
	race_copy_addr = 0x0a000000 + i;
	CHECK_EQ(add1(&c, r4(0x0a000000, 0x0a0000ff)), 0);
	CHECK_EQ(ddel4(&c, 0x0a000000, 24), NFG_RS_DYN_DONE);
	race_arm(&c, RS_RACE_COPY, race_copy_add);
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK_EQ(race.ran, 1);
	/* the add came after the delete: it holds */
	CHECK(nfg_rs_core_match4(&c, race_copy_addr, 0));
	CHECK(!nfg_rs_core_match4(&c, race_copy_addr ^ 1, 0));
	CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
	CHECK(nfg_rs_core_match4(&c, race_copy_addr, 0));
	EXPECT(&c, r4(race_copy_addr, race_copy_addr));
	set_fini(&c);
}

/*
 * More entries pending than one fold takes (nfg_rs_fold_max, lowered
 * here): each fold takes the oldest changes, no answer changes at any
 * step, and the folds in a row end where one fold would.
 */
static void test_dyn_fold_cap(void)
{
	enum { U = 256 };
	static signed char want[U];
	struct nfg_rs_core c;
	u64 st = 0xcab;
	u32 i, a, folds = 0;

	dyn_set(&c, false, 100000);
	CHECK_EQ(add1(&c, r4(0, 99)), 0);
	for (a = 0; a < U; a++)
		want[a] = a <= 99;
	for (i = 0; i < 300; i++) {
		u64 r = nfg_xorshift64s(&st);
		u8 plen = (u8[]){ 32, 32, 32, 31, 30, 28 }[r % 6];
		u32 addr = (r >> 8) % U, lo, hi;

		lo = addr & ~((1U << (32 - plen)) - 1);
		hi = lo + (1U << (32 - plen)) - 1;
		if ((r >> 20) % 3) {
			if (dadd4(&c, addr, plen, 0, false, 0) < 0)
				continue;
			for (a = lo; a <= hi && a < U; a++)
				want[a] = 1;
		} else {
			if (ddel4(&c, addr, plen) < 0)
				continue;
			for (a = lo; a <= hi && a < U; a++)
				want[a] = 0;
		}
	}
	CHECK(dyn_count(&c) > 40);
	nfg_rs_fold_max = 16;
	while (dyn_count(&c) && folds < 100) {
		u32 before = dyn_count(&c);

		CHECK_EQ(nfg_rs_core_fold(&c, 0), 0);
		folds++;
		CHECK(dyn_count(&c) < before);
		CHECK(before - dyn_count(&c) <= 16);
		for (a = 0; a < U; a++)
			if (nfg_rs_core_match4(&c, a, 0) != want[a]) {
				fail_at(__FILE__, __LINE__,
					"fold %u: %u answers %d", folds, a,
					!want[a]);
				break;
			}
	}
	nfg_rs_fold_max = NFG_RS_FOLD_MAX;
	CHECK_EQ(dyn_count(&c), 0);
	CHECK(folds > 2);
	check_core(&c);
	set_fini(&c);
}

/* ---- the array's index ------------------------------------------------ */

/* Last range starting at or below @k: a plain binary search, no index. */
static s64 ref_find(const struct nfg_rs_array *arr, const struct nfg_rs_key *k)
{
	struct nfg_rs_range r;
	u32 lo = 0, hi = arr ? arr->count : 0, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		nfg_rs_array_range(arr, mid, &r);
		if (rs_key_le(&r.start, k))
			lo = mid + 1;
		else
			hi = mid;
	}
	return (s64)lo - 1;
}

/*
 * Every search of the array (lookup, the adds' find, covers, overlaps)
 * against the reference at @k; false after reporting a difference.
 */
static bool index_probe(const struct nfg_rs_array *arr, struct nfg_rs_key k,
			const char *what)
{
	s64 want = ref_find(arr, &k), got = rs_array_find(arr, &k);
	struct nfg_rs_key e = k;
	struct nfg_rs_range r;
	bool in = false, hit;

	if (want >= 0) {
		nfg_rs_array_range(arr, want, &r);
		in = rs_key_le(&k, &r.end);
	}
	hit = arr->v6 ? nfg_rs_array_lookup6(arr, &k) :
			nfg_rs_array_lookup4(arr, (u32)k.lo);
	if (got != want || hit != in ||
	    nfg_rs_array_covers(arr, &k, &e, 0) != in ||
	    nfg_rs_array_overlaps(arr, &k, &e) != in) {
		fail_at(__FILE__, __LINE__,
			"%s: %u ranges, %u index bits, key %" PRIx64 ":%" PRIx64
			": find %" PRId64 " (want %" PRId64 "), lookup %d (want %d)",
			what, arr->count, arr->ibits, k.hi, k.lo, got, want, hit, in);
		return false;
	}
	return true;
}

/*
 * Probe @arr at every range's edges and their neighbours, at the first
 * and last address of every slot of the index, at 0, the maximum and
 * @n random keys.
 */
static bool index_probe_all(const struct nfg_rs_array *arr, u64 *rng, u32 n,
			    const char *what)
{
	const struct nfg_rs_key kmax = arr->v6 ? KMAX6 : k4(U32_MAX);
	struct nfg_rs_range r;
	struct nfg_rs_key k;
	u32 i, h;

	if (!index_probe(arr, k4(0), what) || !index_probe(arr, kmax, what))
		return false;
	for (i = 0; i < arr->count; i++) {
		nfg_rs_array_range(arr, i, &r);
		if (!index_probe(arr, r.start, what) ||
		    !index_probe(arr, r.end, what))
			return false;
		if (!rs_key_is_min(&r.start)) {
			k = r.start;
			rs_key_dec(&k);
			if (!index_probe(arr, k, what))
				return false;
		}
		if (!rs_key_is_max(&r.end, arr->v6)) {
			k = r.end;
			rs_key_inc(&k);
			if (!index_probe(arr, k, what))
				return false;
		}
	}
	for (h = 0; arr->ibits && h < (1u << arr->ibits); h++) {
		if (arr->v6) {
			k = k6((u64)h << (64 - arr->ibits), 0);
			if (!index_probe(arr, k, what))
				return false;
			k.hi |= U64_MAX >> arr->ibits;
			k.lo = U64_MAX;
		} else {
			k = k4(h << (32 - arr->ibits));
			if (!index_probe(arr, k, what))
				return false;
			k.lo |= U32_MAX >> arr->ibits;
		}
		if (!index_probe(arr, k, what))
			return false;
	}
	for (i = 0; i < n; i++) {
		u64 x = nfg_xorshift64s(rng);

		k = arr->v6 ? k6(x, nfg_xorshift64s(rng)) : k4((u32)x);
		if (!index_probe(arr, k, what))
			return false;
	}
	return true;
}

/*
 * A random IPv4 key: spread over the whole space (@shape 0), inside one
 * slot of the largest index (1: 10.1.0.0/16), in the first and last slot
 * (2), or anywhere but with a wide range now and then (3).
 */
static u32 index_key4(u64 *rng, int shape)
{
	u32 x = (u32)nfg_xorshift64s(rng);

	switch (shape) {
	case 1:
		return 0x0a010000u | (x & 0xffff);
	case 2:
		return x & 0x80000000u ? 0xffff0000u | (x & 0xffff) : x & 0xffff;
	default:
		return x;
	}
}

/* Range @i of an index test's random set of @shape (see index_key4()). */
static struct nfg_rs_range index_range(bool v6, u64 *rng, int shape, u32 i)
{
	u64 hi, lo;
	u32 s4, len;
	struct nfg_rs_key s, e;

	if (!v6) {
		s4 = index_key4(rng, shape);
		len = shape == 3 && i % 97 == 0 ?
		      (u32)nfg_xorshift64s(rng) >> 4 :
		      (u32)nfg_xorshift64s(rng) % 16;
		return r4(s4, len > U32_MAX - s4 ? U32_MAX : s4 + len);
	}
	hi = nfg_xorshift64s(rng);
	lo = nfg_xorshift64s(rng);
	/* shapes as index_key4(), on the key's top bits */
	if (shape == 1)
		hi = 0x20010db800000000ULL | (hi & 0xffffffffffffULL);
	else if (shape == 2)
		hi = hi & 1 ? hi | 0xffff000000000000ULL :
			      hi & 0xffffffffffffULL;
	s = k6(hi, lo);
	if (shape == 3 && i % 97 == 0)
		e = k6(hi > U64_MAX - (1ULL << 58) ?
		       U64_MAX : hi + (1ULL << 58), 0);
	else if (hi == U64_MAX && lo > U64_MAX - 16)
		e = KMAX6;
	else
		e = kadd(s, lo % 16);
	return r6(s, e);
}

/*
 * Sets of each size in @sizes and each shape, plus ranges at the space's
 * edges (0 and the maximum): the published array's index must agree with
 * a plain binary search everywhere (index_probe_all()).
 */
static void index_run(bool v6, const u32 *sizes, unsigned int nsizes, u64 rng)
{
	unsigned int si;
	int shape;

	for (shape = 0; shape < 4; shape++) {
		for (si = 0; si < nsizes; si++) {
			u32 n = sizes[si], i;
			struct nfg_rs_range *r = calloc(n + 2, sizeof(*r));
			struct nfg_rs_core c;

			if (!r)
				exit(2);
			set_init(&c, v6, 4 * n + 8);
			for (i = 0; i < n; i++)
				r[i] = index_range(v6, &rng, shape, i);
			if (v6) {
				r[n] = r6(k6(0, 0), k6(0, 2));
				r[n + 1] = r6(k6(U64_MAX, U64_MAX - 1), KMAX6);
			} else {
				r[n] = r4(0, 2);
				r[n + 1] = r4(U32_MAX - 1, U32_MAX);
			}
			CHECK_EQ(nfg_rs_core_update(&c, r, n + 2, NFG_RS_OP_ADD), 0);
			CHECK(check_core(&c));
			if (published(&c))
				CHECK(index_probe_all(published(&c), &rng, 4096,
						      v6 ? "v6" : "v4"));
			set_fini(&c);
			free(r);
		}
	}
}

static void test_index_v4(void)
{
	static const u32 sizes[] = { 1, 63, 64, 65, 127, 128, 1000, 10000, 100000 };

	index_run(false, sizes, ARRAY_SIZE(sizes), 0x1d3c5e7f9a0b2c4dULL);
}

static void test_index_v6(void)
{
	static const u32 sizes[] = { 1, 63, 64, 65, 1000, 10000, 70000 };

	index_run(true, sizes, ARRAY_SIZE(sizes), 0x5a5a0f0f3c3c9696ULL);
}

int main(void)
{
	if (nfg_rs_dyn_init()) {
		fprintf(stderr, "nfg_rs_dyn_init failed\n");
		return 2;
	}
	run("add_merge", test_add_merge);
	run("add_batch", test_add_batch);
	run("del_split", test_del_split);
	run("del_multi", test_del_multi);
	run("edges_v4", test_edges_v4);
	run("edges_v6", test_edges_v6);
	run("invalid", test_invalid);
	run("maxelem", test_maxelem);
	run("enomem_rollback", test_enomem_rollback);
	run("swap", test_swap);
	run("snapshot", test_snapshot);
	run("test_op", test_test_op);
	run("lookup_exhaustive", test_lookup_exhaustive);
	run("index_v4", test_index_v4);
	run("index_v6", test_index_v6);
	run("key_conversion", test_key_conversion);
	run("stats_info", test_stats_info);
	run("timeout_merge", test_timeout_merge);
	run("timeout_expire", test_timeout_expire);
	run("timeout_rollback", test_timeout_rollback);
	run("timeout_random", test_timeout_random);
	run("random_v4_zero", test_random_v4_zero);
	run("random_v4_mid", test_random_v4_mid);
	run("random_v4_top", test_random_v4_top);
	run("random_v4_small", test_random_v4_small);
	run("random_v4_seed5", test_random_v4_seed5);
	run("random_v6_mid", test_random_v6_mid);
	run("random_v6_carry", test_random_v6_carry);
	run("random_v6_top", test_random_v6_top);
	run("random_v6_zero", test_random_v6_zero);
	run("dyn_basic", test_dyn_basic);
	run("dyn_prefix", test_dyn_prefix);
	run("dyn_expiry", test_dyn_expiry);
	run("dyn_maxelem", test_dyn_maxelem);
	run("dyn_fold_full", test_dyn_fold_full);
	run("dyn_longest", test_dyn_longest);
	run("dyn_fold_enomem", test_dyn_fold_enomem);
	run("dyn_model", test_dyn_model);
	run("dyn_threads", test_dyn_threads);
	run("dyn_race_publish", test_dyn_race_publish);
	run("dyn_race_del_add", test_dyn_race_del_add);
	run("dyn_del_full", test_dyn_del_full);
	run("dyn_del_covers", test_dyn_del_covers);
	run("dyn_race_maxelem", test_dyn_race_maxelem);
	run("dyn_cp_fold_now", test_dyn_cp_fold_now);
	run("dyn_expire_nofold", test_dyn_expire_nofold);
	run("dyn_exist_later", test_dyn_exist_later);
	run("dyn_update1", test_dyn_update1);
	run("dyn_lazy_threshold", test_dyn_lazy_threshold);
	run("dyn_lazy_bound", test_dyn_lazy_bound);
	run("dyn_lazy_when", test_dyn_lazy_when);
	run("dyn_race_lazy", test_dyn_race_lazy);
	run("dyn_merge_overlap", test_dyn_merge_overlap);
	run("dyn_merge_markers", test_dyn_merge_markers);
	run("dyn_merge_expiry", test_dyn_merge_expiry);
	run("dyn_merge_maxelem", test_dyn_merge_maxelem);
	run("dyn_merge_random_v4", test_dyn_merge_random_v4);
	run("dyn_merge_random_v6", test_dyn_merge_random_v6);
	run("dyn_merge_random_v6_wide", test_dyn_merge_random_v6_wide);
	run("dyn_merge_random_v4_small", test_dyn_merge_random_v4_small);
	run("dyn_merge_random_enomem", test_dyn_merge_random_enomem);
	run("dyn_merge_short_room", test_dyn_merge_short_room);
	run("dyn_race_copy", test_dyn_race_copy);
	run("dyn_fold_cap", test_dyn_fold_cap);
	run("dyn_gc_batch", test_dyn_gc_batch);

	nfg_rs_dyn_exit();
	return utest_summary();
}
