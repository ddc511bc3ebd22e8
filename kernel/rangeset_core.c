// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard rangeset: interval set core.
 *
 * Theory of operation
 * -------------------
 *
 * A set is a list of disjoint, non-adjacent, inclusive ranges of addresses.
 * Addresses are handled as 128-bit host-order keys (struct nfg_rs_key);
 * IPv4 addresses live in the low 32 bits. The published array holds the
 * set; the control plane's batch updates work on a tree derived from it,
 * which may be stale:
 *
 *  - Batch updates work on an rbtree of ranges (core->root), ordered by
 *    start. Adding merges overlapping and adjacent ranges; deleting
 *    trims, removes or splits ranges. A merge fold of the dynamic entries
 *    publishes a new array without the tree and leaves the tree empty and
 *    stale (core->tree_stale); nfg_rs_tree_sync() rebuilds it from the
 *    array on demand, before a batch ADD/DEL (or a fold that falls back
 *    to the tree) applies anything. The tree, tree_stale, the range count
 *    and maxelem are guarded by a per-set rw_semaphore (core->lock),
 *    which every control plane operation takes for writing: add, del,
 *    flush, swap and expiry, and also TEST (which reads the array) and
 *    taking a snapshot of the array, since both fold the dynamic entries
 *    first. The lock exists so that control plane operations on one set
 *    see each other's results whole; it is never taken on the packet
 *    path, so it cannot stall a lookup.
 *
 *  - The packet path searches an immutable sorted array (struct
 *    nfg_rs_array) published with rcu_assign_pointer(). IPv4 sets store
 *    u32 starts[] and ends[] (a binary search over starts[] touches few
 *    cache lines), IPv6 sets 128-bit keys. Arrays of NFG_RS_IDX_MIN
 *    ranges or more carry an index built with them before they are
 *    published: for each value of the top bits of an address (as many
 *    bits as log2 of the ranges, 16 at most), the ranges starting there,
 *    so that a search looks at the one or two ranges of its slot (and the
 *    last one before it) instead of log2(count) cache lines of the
 *    starts; ranges crowded into a few slots cost a binary search of
 *    their slot, never more than without the index. A lookup is that
 *    search under RCU: no lock, no atomic write; only per-CPU counters
 *    change. The packet path's adds and deletes ("already present?")
 *    search the same way.
 *
 * One request carries a batch of ranges. All of them are validated first,
 * then applied to the tree one by one, and the array is rebuilt from the
 * tree and published once. If the result would exceed maxelem, or an
 * allocation fails, the tree is rebuilt from the array that is still
 * published: it is exactly the state before the request. To make that
 * rollback unable to fail, no node is freed while a request runs: nodes
 * removed from the tree wait on a spare list (and are reused for new
 * ranges), so the tree and the spare list together always hold at least
 * as many nodes as the old array has ranges.
 *
 * Arrays are refcounted: the set holds one reference on its published
 * array, and a listing holds another on the snapshot it walks, across as
 * many netlink dump callbacks as it takes, without holding any lock. When
 * the last reference goes, the array is freed after an RCU grace period
 * (kvfree_rcu: large arrays come from kvmalloc), so a lookup that loaded
 * the old pointer can finish its search.
 *
 * Timeouts. Every range carries an expiry (0 = never; otherwise an
 * absolute time on the caller's clock, jiffies64 in the kernel). Ranges
 * are merged only with neighbours of the same expiry: adjacent ranges
 * with different expiries stay separate ranges (each counts against
 * maxelem), so that each part keeps its own expiry. Adding a range over
 * parts that are already in the set gives every overlapped part the
 * LATER of its own expiry and the new one ("never" is the latest): adding
 * again refreshes or extends, it never shortens a range nor makes a
 * permanent one temporary (delete it first to shorten). Parts of the new
 * range that were not in the set take its expiry. The result does not
 * depend on the order of the ranges in a batch. Deleting ignores
 * expiries; the parts that stay keep theirs.
 *
 * Expiry is collected in batches: nfg_rs_core_expire() removes every
 * range whose expiry has passed and publishes one new array for all of
 * them (the caller, rangeset_nl.c, runs it from a per-set delayed work at
 * the earliest expiry, rounded up to a tick). core->next_expiry, the
 * earliest expiry in the published array, is recomputed at every
 * publication. Until the work has run, the packet path still matches an
 * expired range. The array carries the expiries after its ranges (only
 * when some range has one), for dumps and rollbacks; lookups never read
 * them.
 *
 * Swapping two sets exchanges their trees (and whether each is stale),
 * counts, maxelem, default timeouts, next expiries and array pointers
 * under both sets' locks, taken in address order; the dynamic entries
 * stay with the names, folded into the contents first. Each lookup
 * loads the array pointer once, so it sees either the old or the new
 * contents, never a mix.
 *
 * Dynamic entries (packet-path adds and deletes, the RANGESET target):
 * the hash beside the array and its fold live in rangeset_dyn_core.c
 * (theory of operation there); this file publishes what the fold
 * applies (nfg_rs_publish()), or merges the entries straight into a new
 * array (nfg_rs_merge_publish()), and folds first wherever the control
 * plane needs the whole set. A merge leaves the tree stale
 * (core->tree_stale: empty, the array alone holds the set):
 * nfg_rs_tree_sync() builds it again from the array before a tree
 * operation; TEST and the expiry read or rebuild the array alone.
 *
 * Full-space edges: "+ 1" and "- 1" on keys are only done where the
 * comparison before them proves they cannot wrap (0.0.0.0/0, ::/0,
 * 255.255.255.255 and ffff:...:ffff all work).
 *
 * This file is also compiled by the userspace unit harness (tests/unit)
 * against a shim of the kernel headers it includes.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/rbtree.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "rangeset_core.h"
#include "rangeset_dyn_core.h"

void nfg_rs_key_from_be(struct nfg_rs_key *key, const void *p, bool v6)
{
	__be32 w[4];

	if (v6) {
		memcpy(w, p, sizeof(w));
		key->hi = (u64)be32_to_cpu(w[0]) << 32 | be32_to_cpu(w[1]);
		key->lo = (u64)be32_to_cpu(w[2]) << 32 | be32_to_cpu(w[3]);
	} else {
		memcpy(w, p, sizeof(w[0]));
		key->hi = 0;
		key->lo = be32_to_cpu(w[0]);
	}
}

void nfg_rs_key_to_be(void *p, const struct nfg_rs_key *key, bool v6)
{
	__be32 w[4];

	if (v6) {
		w[0] = cpu_to_be32(upper_32_bits(key->hi));
		w[1] = cpu_to_be32(lower_32_bits(key->hi));
		w[2] = cpu_to_be32(upper_32_bits(key->lo));
		w[3] = cpu_to_be32(lower_32_bits(key->lo));
		memcpy(p, w, sizeof(w));
	} else {
		w[0] = cpu_to_be32(lower_32_bits(key->lo));
		memcpy(p, w, sizeof(w[0]));
	}
}

bool nfg_rs_range_valid(const struct nfg_rs_range *r, bool v6)
{
	if (!v6 && (r->start.hi || r->end.hi ||
		    r->start.lo > U32_MAX || r->end.lo > U32_MAX))
		return false;
	return rs_key_le(&r->start, &r->end);
}

/* ---- packet-path array ------------------------------------------------ */

static u32 *rs_starts4(struct nfg_rs_array *arr)
{
	return (u32 *)arr->data;
}

static u32 *rs_ends4(struct nfg_rs_array *arr)
{
	return (u32 *)arr->data + arr->count;
}

static struct nfg_rs_key *rs_starts6(struct nfg_rs_array *arr)
{
	return (struct nfg_rs_key *)arr->data;
}

static struct nfg_rs_key *rs_ends6(struct nfg_rs_array *arr)
{
	return (struct nfg_rs_key *)arr->data + arr->count;
}

/* The lookups only read; casting const away keeps one set of accessors. */
#define rs_cstarts4(a)	((const u32 *)rs_starts4((struct nfg_rs_array *)(a)))
#define rs_cends4(a)	((const u32 *)rs_ends4((struct nfg_rs_array *)(a)))
#define rs_cstarts6(a)	((const struct nfg_rs_key *)rs_starts6((struct nfg_rs_array *)(a)))
#define rs_cends6(a)	((const struct nfg_rs_key *)rs_ends6((struct nfg_rs_array *)(a)))

atomic_t nfg_rs_live_objects = ATOMIC_INIT(0);

/* After the ends: 2 * count u32 (IPv4) or keys (IPv6) are whole u64s. */
static u64 *rs_expires(struct nfg_rs_array *arr)
{
	return arr->data + (arr->v6 ? 4 : 1) * (size_t)arr->count;
}

/* Bits of the index of @count ranges: 2^bits <= count, 0 for none. */
static u8 rs_idx_bits(u32 count)
{
	if (count < NFG_RS_IDX_MIN)
		return 0;
	return min_t(u32, fls(count) - 1, NFG_RS_IDX_MAX_BITS);
}

/* Top @bits bits of a start: its slot of the index. */
static u32 rs_idx_slot4(u32 addr, u8 bits)
{
	return addr >> (32 - bits);
}

static u32 rs_idx_slot6(const struct nfg_rs_key *key, u8 bits)
{
	return key->hi >> (64 - bits);
}

static struct nfg_rs_array *rs_array_alloc(u32 count, bool v6, bool timed)
{
	size_t esz = v6 ? sizeof(struct nfg_rs_key) : sizeof(u32);
	u8 ibits = rs_idx_bits(count);
	struct nfg_rs_array *arr;
	size_t size, ioff;

	size = size_add(sizeof(*arr), array3_size(2, esz, count));
	if (timed)
		size = size_add(size, array_size(sizeof(u64), count));
	ioff = size;
	if (ibits)
		size = size_add(size, array_size(sizeof(u32), BIT(ibits) + 1));
	arr = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!arr)
		return NULL;
	atomic_inc(&nfg_rs_live_objects);
	refcount_set(&arr->ref, 1);
	arr->count = count;
	arr->v6 = v6;
	arr->timed = timed;
	arr->ibits = ibits;
	arr->idx = ibits ? (const u32 *)((const char *)arr + ioff) : NULL;
	arr->memsize = size;
	return arr;
}

/*
 * Fill the index of a new array from its starts (before it is published):
 * idx[h] = the ranges whose start's top bits are below h. Process context.
 */
static void rs_array_index(struct nfg_rs_array *arr)
{
	u32 *idx = (u32 *)arr->idx, nb, h = 0, i, t;

	if (!arr->ibits)
		return;
	nb = BIT(arr->ibits);
	for (i = 0; i < arr->count; i++) {
		t = arr->v6 ? rs_idx_slot6(&rs_starts6(arr)[i], arr->ibits) :
			      rs_idx_slot4(rs_starts4(arr)[i], arr->ibits);
		while (h <= t)
			idx[h++] = i;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	while (h <= nb)
		idx[h++] = arr->count;
}

/*
 * The window of ranges a search for @slot's addresses needs: from the
 * last range starting in an earlier slot to the last one in @slot, as
 * *@base and the count returned (0: no range starts at or before @slot's
 * end). Without an index, the whole array.
 */
static u32 rs_idx_window(const struct nfg_rs_array *arr, u32 slot, u32 *base)
{
	u32 lo, hi;

	if (!arr->ibits) {
		*base = 0;
		return arr->count;
	}
	lo = arr->idx[slot];
	hi = arr->idx[slot + 1];
	*base = lo ? lo - 1 : 0;
	return hi - *base;
}

void nfg_rs_array_put(struct nfg_rs_array *arr)
{
	if (arr && refcount_dec_and_test(&arr->ref)) {
		atomic_dec(&nfg_rs_live_objects);
		kvfree_rcu(arr, rcu);
	}
}

void nfg_rs_array_range(const struct nfg_rs_array *arr, u32 i,
			struct nfg_rs_range *r)
{
	if (arr->v6) {
		r->start = rs_cstarts6(arr)[i];
		r->end = rs_cends6(arr)[i];
	} else {
		r->start.hi = 0;
		r->start.lo = rs_cstarts4(arr)[i];
		r->end.hi = 0;
		r->end.lo = rs_cends4(arr)[i];
	}
	r->expires = arr->timed ? rs_expires((struct nfg_rs_array *)arr)[i] : 0;
}

/*
 * Index of the last range of @arr starting at or below the address, or
 * -1: a binary search of the window the index gives (the whole array
 * without an index) for the last start <= the address. The loop keeps the
 * candidate window [base, base + n): everything before base starts at or
 * below the address, so the answer is never left of base. No early exit,
 * so the loop runs log2(n) times and the compiler can make the step
 * branch-free. Reads the starts alone (one cache line per step), then the
 * caller the one range.
 */
static s64 rs_array_find4(const struct nfg_rs_array *arr, u32 addr)
{
	const u32 *start, *base;
	u32 b, n, half;

	if (!arr || !arr->count)
		return -1;
	n = rs_idx_window(arr, arr->ibits ? rs_idx_slot4(addr, arr->ibits) : 0,
			  &b);
	if (!n)
		return -1;
	start = rs_cstarts4(arr);
	base = start + b;
	while (n > 1) {
		half = n / 2;
		if (base[half] <= addr)
			base += half;
		n -= half;
	}
	return *base <= addr ? base - start : -1;
}

static s64 rs_array_find6(const struct nfg_rs_array *arr,
			  const struct nfg_rs_key *key)
{
	const struct nfg_rs_key *start, *base;
	u32 b, n, half;

	if (!arr || !arr->count)
		return -1;
	n = rs_idx_window(arr, arr->ibits ? rs_idx_slot6(key, arr->ibits) : 0,
			  &b);
	if (!n)
		return -1;
	start = rs_cstarts6(arr);
	base = start + b;
	while (n > 1) {
		half = n / 2;
		if (rs_key_le(&base[half], key))
			base += half;
		n -= half;
	}
	return rs_key_le(base, key) ? base - start : -1;
}

bool nfg_rs_array_lookup4(const struct nfg_rs_array *arr, u32 addr)
{
	s64 i = rs_array_find4(arr, addr);

	return i >= 0 && addr <= rs_cends4(arr)[i];
}

bool nfg_rs_array_lookup6(const struct nfg_rs_array *arr,
			  const struct nfg_rs_key *key)
{
	s64 i = rs_array_find6(arr, key);

	return i >= 0 && rs_key_le(key, &rs_cends6(arr)[i]);
}

/*
 * Index of the last range of @arr starting at or below @key, or -1: for
 * the packet path's adds and deletes.
 */
static s64 rs_array_find(const struct nfg_rs_array *arr,
			 const struct nfg_rs_key *key)
{
	if (!arr)
		return -1;
	/* an IPv4 set's keys are below 2^32 */
	return arr->v6 ? rs_array_find6(arr, key) :
			 rs_array_find4(arr, lower_32_bits(key->lo));
}

/* Is all of [start, end] in one unexpired range of @arr? */
bool nfg_rs_array_covers(const struct nfg_rs_array *arr,
			 const struct nfg_rs_key *start,
			 const struct nfg_rs_key *end, u64 now)
{
	struct nfg_rs_range r;
	s64 i = rs_array_find(arr, start);

	if (i < 0)
		return false;
	nfg_rs_array_range(arr, i, &r);
	return rs_key_le(end, &r.end) && (!r.expires || r.expires > now);
}

/* Does any range of @arr meet [start, end]? */
bool nfg_rs_array_overlaps(const struct nfg_rs_array *arr,
			   const struct nfg_rs_key *start,
			   const struct nfg_rs_key *end)
{
	struct nfg_rs_range r;
	s64 i = rs_array_find(arr, end);

	if (i < 0)
		return false;
	nfg_rs_array_range(arr, i, &r);
	return rs_key_le(start, &r.end);
}

/* ---- control-plane tree ----------------------------------------------- */

static struct nfg_rs_node *rs_node(struct rb_node *rb)
{
	return rb ? rb_entry(rb, struct nfg_rs_node, rb) : NULL;
}

/* First range whose end is >= key (ends ascend like starts). */
static struct nfg_rs_node *rs_first_end_ge(const struct rb_root *root,
					   const struct nfg_rs_key *key)
{
	struct rb_node *rb = root->rb_node;
	struct nfg_rs_node *best = NULL;

	while (rb) {
		struct nfg_rs_node *n = rs_node(rb);

		if (rs_key_le(key, &n->r.end)) {
			best = n;
			rb = rb->rb_left;
		} else {
			rb = rb->rb_right;
		}
	}
	return best;
}

static void rs_insert(struct rb_root *root, struct nfg_rs_node *new)
{
	struct rb_node **link = &root->rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (rs_key_cmp(&new->r.start, &rs_node(parent)->r.start) < 0)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&new->rb, parent, link);
	rb_insert_color(&new->rb, root);
}

static void rs_tree_free(struct rb_root *root)
{
	struct nfg_rs_node *n, *tmp;
	unsigned int i = 0;

	rbtree_postorder_for_each_entry_safe(n, tmp, root, rb) {
		kfree(n);
		if (++i % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	*root = RB_ROOT;
}

static struct nfg_rs_node *rs_node_alloc(struct nfg_rs_update *u)
{
	struct nfg_rs_node *n = u->spare;

	if (n) {
		u->spare = n->next;
		return n;
	}
	return kmalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
}

/* Take a node out of the tree; it is freed when the request ends. */
static void rs_node_drop(struct nfg_rs_update *u, struct nfg_rs_node *n)
{
	rb_erase(&n->rb, &u->core->root);
	u->core->count--;
	n->next = u->spare;
	u->spare = n;
}

void nfg_rs_update_end(struct nfg_rs_update *u)
{
	struct nfg_rs_node *n;

	while ((n = u->spare)) {
		u->spare = n->next;
		kfree(n);
	}
}

/* Insert a new node [*start, *end] with expiry @expires. */
static int rs_node_new(struct nfg_rs_update *u, const struct nfg_rs_key *start,
		       const struct nfg_rs_key *end, u64 expires)
{
	struct nfg_rs_node *n = rs_node_alloc(u);

	if (!n)
		return -ENOMEM;
	n->r.start = *start;
	n->r.end = *end;
	n->r.expires = expires;
	rs_insert(&u->core->root, n);
	u->core->count++;
	u->changed = true;
	return 0;
}

/*
 * Merge the ranges touching [lo, hi] with their neighbours where they are
 * adjacent and expire together.
 */
static void rs_coalesce(struct nfg_rs_update *u, const struct nfg_rs_key *lo,
			const struct nfg_rs_key *hi)
{
	struct nfg_rs_node *n, *next;
	struct nfg_rs_key after;

	n = rs_first_end_ge(&u->core->root, lo);
	while (n && (next = rs_node(rb_next(&n->rb))) &&
	       rs_key_le(&next->r.start, hi)) {
		/* next exists, so n's end is not the maximum */
		after = n->r.end;
		rs_key_inc(&after);
		if (n->r.expires == next->r.expires &&
		    !rs_key_cmp(&after, &next->r.start)) {
			n->r.end = next->r.end;
			rs_node_drop(u, next);
			u->changed = true;
		} else {
			n = next;
		}
	}
}

/*
 * Add r: the parts not yet in the set take r's expiry, the parts already
 * in it the later of theirs and r's (see the top of this file); then
 * neighbours that are adjacent and expire together merge.
 */
int nfg_rs_tree_add(struct nfg_rs_update *u, const struct nfg_rs_range *r)
{
	struct nfg_rs_core *core = u->core;
	struct nfg_rs_key pos = r->start, lo = r->start, hi = r->end;
	struct nfg_rs_key gap_end, ov_end, tail;
	struct nfg_rs_node *n, *next;
	u64 exp = r->expires;
	int err;

	n = rs_first_end_ge(&core->root, &r->start);
	for (;;) {
		if (!n || rs_key_cmp(&n->r.start, &r->end) > 0) {
			/* [pos, r->end] is not in the set */
			err = rs_node_new(u, &pos, &r->end, exp);
			if (err)
				return err;
			break;
		}
		if (rs_key_cmp(&n->r.start, &pos) > 0) {
			/* the gap before n; n's start > pos >= 0 */
			gap_end = n->r.start;
			rs_key_dec(&gap_end);
			err = rs_node_new(u, &pos, &gap_end, exp);
			if (err)
				return err;
			pos = n->r.start;
		}
		/* Now n->r.start <= pos <= n->r.end: [pos, ov_end] overlaps. */
		next = rs_node(rb_next(&n->rb));
		ov_end = rs_key_le(&n->r.end, &r->end) ? n->r.end : r->end;
		if (!rs_exp_ge(n->r.expires, exp)) {
			/* The overlap takes exp: split n in up to three. */
			if (rs_key_cmp(&ov_end, &n->r.end) < 0) {
				tail = ov_end;
				rs_key_inc(&tail);
				err = rs_node_new(u, &tail, &n->r.end,
						  n->r.expires);
				if (err)
					return err;
				n->r.end = ov_end;
			}
			if (rs_key_cmp(&n->r.start, &pos) < 0) {
				err = rs_node_new(u, &pos, &n->r.end, exp);
				if (err)
					return err;
				n->r.end = pos;
				rs_key_dec(&n->r.end);
			} else {
				n->r.expires = exp;
			}
			u->changed = true;
		}
		if (!rs_key_cmp(&ov_end, &r->end))
			break;
		/* ov_end == n's end < r->end: go on after n */
		pos = ov_end;
		rs_key_inc(&pos);
		n = next;
	}

	/* [lo, hi] is r widened by one on each side: adjacent ranges merge. */
	if (!rs_key_is_min(&lo))
		rs_key_dec(&lo);
	if (!rs_key_is_max(&hi, core->v6))
		rs_key_inc(&hi);
	rs_coalesce(u, &lo, &hi);
	return 0;
}

int nfg_rs_tree_del(struct nfg_rs_update *u, const struct nfg_rs_range *r)
{
	struct nfg_rs_core *core = u->core;
	struct nfg_rs_node *n, *next, *tail_node;
	bool head, tail;

	n = rs_first_end_ge(&core->root, &r->start);
	while (n && rs_key_le(&n->r.start, &r->end)) {
		next = rs_node(rb_next(&n->rb));
		/* head: part of n below r survives; tail: part above r. */
		head = rs_key_cmp(&n->r.start, &r->start) < 0;
		tail = rs_key_cmp(&n->r.end, &r->end) > 0;

		if (head && tail) {
			/* Split. r->start > n's start >= 0 and r->end < max. */
			tail_node = rs_node_alloc(u);
			if (!tail_node)
				return -ENOMEM;
			tail_node->r.start = r->end;
			rs_key_inc(&tail_node->r.start);
			tail_node->r.end = n->r.end;
			tail_node->r.expires = n->r.expires;
			n->r.end = r->start;
			rs_key_dec(&n->r.end);
			rs_insert(&core->root, tail_node);
			core->count++;
		} else if (head) {
			n->r.end = r->start;
			rs_key_dec(&n->r.end);
		} else if (tail) {
			n->r.start = r->end;
			rs_key_inc(&n->r.start);
		} else {
			rs_node_drop(u, n);
		}
		u->changed = true;
		n = next;
	}
	return 0;
}

/*
 * Fill @arr from the tree in one walk (the walk is most of a publication's
 * cost: one cache miss per node of a large tree). Return the earliest
 * expiry, 0 if no range expires; *@missed: a range expires but @arr has
 * no room for expiries (it stops there).
 */
static u64 rs_array_fill(struct nfg_rs_array *arr, const struct rb_root *root,
			 bool *missed)
{
	struct rb_node *rb;
	u64 next = 0;
	u32 i = 0;

	*missed = false;
	for (rb = rb_first(root); rb; rb = rb_next(rb), i++) {
		const struct nfg_rs_node *n = rs_node(rb);
		u64 e = n->r.expires;

		if (arr->v6) {
			rs_starts6(arr)[i] = n->r.start;
			rs_ends6(arr)[i] = n->r.end;
		} else {
			rs_starts4(arr)[i] = lower_32_bits(n->r.start.lo);
			rs_ends4(arr)[i] = lower_32_bits(n->r.end.lo);
		}
		if (e && !arr->timed) {
			*missed = true;
			return 0;
		}
		if (arr->timed)
			rs_expires(arr)[i] = e;
		if (e && (!next || e < next))
			next = e;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	return next;
}

/* ---- merge fold: dynamic entries straight into a new array ------------ */

/*
 * The merge fold (see "Merge fold" in rangeset_dyn_core.c) computes, in
 * one pass over the published array and the entries sorted by address,
 * what applying the entries to the tree in the order of their changes
 * would give: at an address, the old range counts unless a marker covers
 * it, and the adds covering it that came after the latest such marker
 * give it the latest of their expiries (and of the old one's, if it
 * counts). The entries are prefixes, so two of them are nested or
 * disjoint: the ones covering an address are a chain, kept on a stack
 * (a prefix length each at most) by the overlay walk of
 * rangeset_dyn_core.c (nfg_rs_overlay_next()). The output is built as the tree would
 * hold it: parts merged where they touch with the same expiry (the tree
 * keeps that form after every operation, so the result is the same set
 * of ranges, not only the same addresses). It runs once, filling an array
 * of the result's most ranges (the old ones plus two per entry: every
 * range of the result starts at an old range's start or at an entry's
 * first address or the one after its last), which is then compacted in
 * place (rs_array_compact()); it also tells whether anything changes at
 * all. Above NFG_RS_MERGE_ONCE_MAX ranges of room, or if that room were
 * ever short, it runs twice instead: once to count, once to fill an
 * array of exactly that many.
 */
#define NFG_RS_MERGE_ONCE_MAX	(2 * NFG_RS_MAXELEM_LIMIT)
/* Room per entry: 2; a variable for the unit tests, which make it short. */
static u32 nfg_rs_merge_room = 2;

struct rs_merge {
	struct nfg_rs_core		*core;
	const struct nfg_rs_array	*old;
	struct nfg_rs_mop *const	*ops;
	u32				n;
	u64				now;
	bool				expire;	/* drop ranges expired at @now */
	/* the pass's output: the array being filled (NULL: counting) */
	struct nfg_rs_array		*arr;
	/* @arr is the room for the most ranges; it was short */
	bool				room;
	bool				short_room;
	u32				count;
	u32				expired;
	u64				next;	/* earliest expiry kept */
	bool				same;	/* the old array so far */
	bool				have;	/* @cur is being built */
	struct nfg_rs_range		cur;
	/* the entries' overlay (rangeset_dyn_core.c) */
	struct nfg_rs_overlay		ov;
};

/* Range @cur is complete: count it, and in the filling pass store it. */
static void rs_merge_flush(struct rs_merge *m)
{
	const struct nfg_rs_range *r = &m->cur;
	struct nfg_rs_array *arr = m->arr;
	struct nfg_rs_range o;
	u32 i = m->count;

	if (!m->have)
		return;
	m->have = false;
	if (m->expire && r->expires && r->expires <= m->now) {
		m->expired++;
		m->same = false;
		return;
	}
	if (m->same) {
		m->same = m->old && i < m->old->count;
		if (m->same) {
			nfg_rs_array_range(m->old, i, &o);
			m->same = !rs_key_cmp(&o.start, &r->start) &&
				  !rs_key_cmp(&o.end, &r->end) &&
				  o.expires == r->expires;
		}
	}
	if (arr && i >= arr->count) {
		/* only the room for the most ranges may be short (a bug) */
		WARN_ON_ONCE(!m->room);
		m->short_room = true;
	} else if (arr) {
		if (arr->v6) {
			rs_starts6(arr)[i] = r->start;
			rs_ends6(arr)[i] = r->end;
		} else {
			rs_starts4(arr)[i] = lower_32_bits(r->start.lo);
			rs_ends4(arr)[i] = lower_32_bits(r->end.lo);
		}
		if (arr->timed)
			rs_expires(arr)[i] = r->expires;
	}
	if (r->expires && (!m->next || r->expires < m->next))
		m->next = r->expires;
	m->count++;
}

/* [*s, *e] (after everything emitted so far) is in the set until @exp. */
static void rs_merge_emit(struct rs_merge *m, const struct nfg_rs_key *s,
			  const struct nfg_rs_key *e, u64 exp)
{
	struct nfg_rs_key after;

	if (m->have && m->cur.expires == exp) {
		/* cur ends before s: not the maximum */
		after = m->cur.end;
		rs_key_inc(&after);
		if (!rs_key_cmp(&after, s)) {
			m->cur.end = *e;
			return;
		}
	}
	rs_merge_flush(m);
	m->have = true;
	m->cur.start = *s;
	m->cur.end = *e;
	m->cur.expires = exp;
}

/*
 * The old ranges from @from on that end before @limit - 1 (all of them
 * when @limit is NULL): no entry touches them, so they go out as they are
 * (or expire), without the pass's piecewise work; a run of a large array
 * between two entries costs a copy. They merge with nothing: the old
 * array has the tree's form, and the last of them does not touch @limit.
 * Returns the first old range not taken.
 */
static u32 rs_merge_bulk(struct rs_merge *m, u32 from,
			 const struct nfg_rs_key *limit)
{
	const struct nfg_rs_array *old = m->old;
	struct nfg_rs_array *arr = m->arr;
	u32 on = old->count, to = from, i, c;
	const u64 *oexp;
	u64 exp;

	if (old->v6) {
		const struct nfg_rs_key *ends = rs_cends6(old);
		struct nfg_rs_key after;

		while (to < on) {
			if (limit) {
				if (rs_key_is_max(&ends[to], true))
					break;
				after = ends[to];
				rs_key_inc(&after);
				if (rs_key_cmp(&after, limit) >= 0)
					break;
			}
			to++;
		}
	} else {
		const u32 *ends = rs_cends4(old);

		while (to < on && (!limit || (u64)ends[to] + 1 < limit->lo))
			to++;
	}
	if (to == from)
		return from;
	rs_merge_flush(m);
	if (m->count != from)
		m->same = false;
	oexp = old->timed ? rs_expires((struct nfg_rs_array *)old) : NULL;
	for (i = from; i < to; i++) {
		exp = oexp ? oexp[i] : 0;
		if (m->expire && exp && exp <= m->now) {
			m->expired++;
			m->same = false;
			continue;
		}
		c = m->count;
		if (arr && c >= arr->count) {
			WARN_ON_ONCE(!m->room);
			m->short_room = true;
		} else if (arr) {
			if (arr->v6) {
				rs_starts6(arr)[c] = rs_cstarts6(old)[i];
				rs_ends6(arr)[c] = rs_cends6(old)[i];
			} else {
				rs_starts4(arr)[c] = rs_cstarts4(old)[i];
				rs_ends4(arr)[c] = rs_cends4(old)[i];
			}
			if (arr->timed)
				rs_expires(arr)[c] = exp;
		}
		if (exp && (!m->next || exp < m->next))
			m->next = exp;
		m->count++;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	return to;
}

/*
 * One pass: the old array's ranges and the overlay's pieces, in address
 * order; each part where they meet takes what the chain makes of it.
 */
static int rs_merge_pass(struct rs_merge *m)
{
	u32 oi = 0, on = m->old ? m->old->count : 0, steps = 0;
	struct nfg_rs_range o;
	struct nfg_rs_key e;
	struct nfg_rs_piece p;
	bool ho, hp;
	u64 exp;

	nfg_rs_overlay_start(&m->ov, m->ops, m->n, m->core->v6);
	m->count = 0;
	m->expired = 0;
	m->next = 0;
	m->same = true;
	m->have = false;
	ho = oi < on;
	if (ho)
		nfg_rs_array_range(m->old, oi, &o);
	hp = nfg_rs_overlay_next(&m->ov, &p);
	while (ho || hp) {
		bool alone = false;

		if (hp && (!ho || rs_key_cmp(&p.s, &o.start) < 0)) {
			/* the overlay alone, up to the next old range */
			e = p.e;
			if (ho && rs_key_le(&o.start, &p.e)) {
				e = o.start;	/* > p.s >= 0 */
				rs_key_dec(&e);
			}
			if (p.add)
				rs_merge_emit(m, &p.s, &e, p.exp);
		} else if (!hp || rs_key_cmp(&o.start, &p.s) < 0) {
			/* an old range alone, up to the next piece */
			e = o.end;
			if (hp && rs_key_le(&p.s, &o.end)) {
				e = p.s;	/* > o.start >= 0 */
				rs_key_dec(&e);
			}
			rs_merge_emit(m, &o.start, &e, o.expires);
			alone = true;
		} else {
			/* both, from the same address */
			e = rs_key_le(&o.end, &p.e) ? o.end : p.e;
			if (p.add || !p.kill) {
				exp = p.add ? p.exp : o.expires;
				if (p.add && !p.kill)
					exp = rs_exp_later(exp, o.expires);
				rs_merge_emit(m, &o.start, &e, exp);
			}
		}
		/* move past e: whatever ends there is done */
		if (ho && rs_key_le(&o.start, &e)) {
			if (!rs_key_cmp(&o.end, &e)) {
				oi++;
				/* after an old range alone: those up to p too */
				if (alone)
					oi = rs_merge_bulk(m, oi, hp ? &p.s : NULL);
				ho = oi < on;
				if (ho)
					nfg_rs_array_range(m->old, oi, &o);
			} else {
				o.start = e;
				rs_key_inc(&o.start);
			}
		}
		if (hp && rs_key_le(&p.s, &e)) {
			if (!rs_key_cmp(&p.e, &e)) {
				hp = nfg_rs_overlay_next(&m->ov, &p);
			} else {
				p.s = e;
				rs_key_inc(&p.s);
			}
		}
		if (++steps % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	rs_merge_flush(m);
	if (m->count != on)
		m->same = false;
	return m->ov.bad ? -EINVAL : 0;
}

/*
 * An array filled with room for more (allocated timed, for @cap ranges)
 * holds @count: move its ends and expiries down behind its starts, and
 * put the index (its room is there: the index of @count ranges is no
 * larger) right after them. Nothing published reads it yet.
 */
static void rs_array_compact(struct nfg_rs_array *arr, u32 count, u64 next)
{
	size_t esz = arr->v6 ? sizeof(struct nfg_rs_key) : sizeof(u32);
	size_t cap = arr->count;
	char *d = (char *)arr->data;

	memmove(d + count * esz, d + cap * esz, count * esz);
	if (next)
		memmove(d + 2 * count * esz, d + 2 * cap * esz,
			count * sizeof(u64));
	arr->count = count;
	arr->timed = next != 0;
	arr->ibits = rs_idx_bits(count);
	arr->idx = arr->ibits ? (const u32 *)(d + 2 * count * esz +
					      (next ? count * sizeof(u64) : 0)) :
				NULL;
}

/* The new array (NULL when the set ends empty), filled by the pass. */
static int rs_merge_fill(struct rs_merge *m, struct nfg_rs_array **new)
{
	u32 count = m->count;
	u64 next = m->next;

	*new = NULL;
	if (m->arr) {
		/* the one pass filled it */
		if (count)
			rs_array_compact(m->arr, count, next);
		else
			nfg_rs_array_put(m->arr);
		*new = count ? m->arr : NULL;
		m->arr = NULL;
		return 0;
	}
	if (!count)
		return 0;
	m->arr = rs_array_alloc(count, m->core->v6, next != 0);
	if (!m->arr)
		return -ENOMEM;
	rs_merge_pass(m);
	*new = m->arr;
	m->arr = NULL;
	if (WARN_ON_ONCE(m->count != count || m->next != next)) {
		nfg_rs_array_put(*new);
		*new = NULL;
		return -EINVAL;
	}
	return 0;
}

/*
 * Rebuild the packet-path array from the tree (or from the merge @m)
 * and publish it, then bump the generation (see nfg_rs_core.gen). The
 * array has room for expiries if the old one had (a second walk only
 * when a set gets its first expiring range); when none is left, the room
 * stays unused until the next publication and lookups and dumps know it
 * (timed is cleared).
 */
static int rs_publish(struct nfg_rs_core *core, struct rs_merge *m)
{
	struct nfg_rs_array *new = NULL, *old;
	bool timed, missed;
	u64 next = 0;
	int err;

	old = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	timed = old && old->timed;
	if (m) {
		err = rs_merge_fill(m, &new);
		if (err)
			return err;
		next = m->next;
	}
	while (!m && core->count) {
		new = rs_array_alloc(core->count, core->v6, timed);
		if (!new)
			return -ENOMEM;
		next = rs_array_fill(new, &core->root, &missed);
		if (!missed)
			break;
		nfg_rs_array_put(new);
		new = NULL;
		timed = true;
	}
	if (new && !next)
		new->timed = false;
	if (new)
		rs_array_index(new);
	rcu_assign_pointer(core->arr, new);
	nfg_rs_gen_bump(core);
	WRITE_ONCE(core->next_expiry, next);
	nfg_rs_array_put(old);
	return 0;
}

/*
 * Publish the tree if its count fits: published ranges + the slots the
 * dynamic entries hold (less @allow: slots of entries this publication
 * folds, and splits made by deletes, which never need room) within
 * maxelem; @force publishes regardless (a fold of deletes only). The
 * array's growth is charged to dyn->count while it is published (a
 * compare-and-swap, as rs_dyn_reserve() does), so that a packet-path
 * reservation that read the old array cannot take the same room. Under
 * core->lock for writing.
 *
 * Return: 0, -ENOSPC or -ENOMEM (nothing published).
 */
static int rs_publish_count(struct nfg_rs_core *core, u32 count, u32 allow,
			    bool force, struct rs_merge *m)
{
	const struct nfg_rs_array *arr;
	struct nfg_rs_dyn *dyn;
	s64 grow;
	int c, old, err;

	arr = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	grow = (s64)count - (arr ? arr->count : 0);
	dyn = rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock));
	if (!dyn || grow <= 0) {
		if (!force && grow > 0 && count > (u64)core->maxelem + allow)
			return -ENOSPC;
		return rs_publish(core, m);
	}
	c = atomic_read(&dyn->count);
	for (;;) {
		if (!force && (u64)count + (u32)c > (u64)core->maxelem + allow)
			return -ENOSPC;
		old = atomic_cmpxchg(&dyn->count, c, c + (int)grow);
		if (old == c)
			break;
		c = old;
	}
	err = rs_publish(core, m);
	smp_mb();	/* the new array before the charge goes back */
	atomic_sub((int)grow, &dyn->count);
	return err;
}

int nfg_rs_publish(struct nfg_rs_core *core, u32 allow, bool force)
{
	return rs_publish_count(core, core->count, allow, force, NULL);
}

/**
 * nfg_rs_merge_publish - the merge fold: entries straight into a new array
 * @core: the set
 * @ops: the entries, sorted by start, then the shorter prefix (the
 *	 enclosing one) first (prefixes: nested or disjoint)
 * @n: how many
 * @now: the current time (0: nothing has expired)
 * @expire: also drop the ranges expired at @now
 * @allow: slots of maxelem held by these entries (see nfg_rs_publish())
 * @expired: set to the ranges dropped as expired
 *
 * What applying the entries to the tree in the order of their seq (adds
 * with their expiries, markers as deletes) and expiring at @now would
 * publish, in two linear passes over the array and the entries, without
 * the tree: the tree is left empty and marked stale (nfg_rs_tree_sync()
 * rebuilds it). Nothing is published if nothing changes. Under
 * core->lock for writing.
 *
 * Return: 0; -ENOSPC (the result does not fit maxelem with @allow: the
 * caller folds through the tree, which knows the splits that deletes may
 * make) or -ENOMEM, -EINVAL (entries not nested): nothing changed.
 */
int nfg_rs_merge_publish(struct nfg_rs_core *core,
			 struct nfg_rs_mop *const *ops, u32 n, u64 now,
			 bool expire, u32 allow, u32 *expired)
{
	struct rs_merge *m;
	u64 room;
	int err;

	*expired = 0;
	m = kmalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	m->core = core;
	m->old = rcu_dereference_protected(core->arr,
					   lockdep_is_held(&core->lock));
	m->ops = ops;
	m->n = n;
	m->now = now;
	m->expire = expire;
	m->arr = NULL;
	m->short_room = false;
	/* one pass into room for the most ranges (see struct rs_merge) */
	room = (u64)(m->old ? m->old->count : 0) + nfg_rs_merge_room * (u64)n;
	m->room = room <= NFG_RS_MERGE_ONCE_MAX;
	if (m->room && room) {
		m->arr = rs_array_alloc(room, core->v6, true);
		if (!m->arr) {
			err = -ENOMEM;
			goto out;
		}
	}
	err = rs_merge_pass(m);
	if (!err && m->short_room) {
		/* count, then fill an array of that many */
		nfg_rs_array_put(m->arr);
		m->arr = NULL;
		m->room = false;
		err = rs_merge_pass(m);
	}
	if (err || m->same)
		goto out;
	err = rs_publish_count(core, m->count, allow, false, m);
	if (err)
		goto out;
	*expired = m->expired;
	core->count = m->count;
	if (!core->tree_stale) {
		rs_tree_free(&core->root);
		WRITE_ONCE(core->tree_stale, true);
	}
out:
	/* not published: nothing changes, or it does not fit */
	nfg_rs_array_put(m->arr);
	kfree(m);
	return err;
}

/**
 * nfg_rs_tree_sync - give the control plane its tree back
 * @core: the set
 *
 * After a merge fold the published array alone holds the set: build the
 * tree from it (in order, each node the right child of the previous, as
 * a rollback does). Under core->lock for writing.
 *
 * Return: 0 or -ENOMEM (the tree stays stale, nothing changed).
 */
int nfg_rs_tree_sync(struct nfg_rs_core *core)
{
	struct nfg_rs_update u = { .core = core };
	const struct nfg_rs_array *arr;
	struct nfg_rs_node *n;
	u32 i, count;

	if (!core->tree_stale)
		return 0;
	arr = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	count = arr ? arr->count : 0;
	for (i = 0; i < count; i++) {
		n = kmalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
		if (!n) {
			nfg_rs_update_end(&u);
			return -ENOMEM;
		}
		n->next = u.spare;
		u.spare = n;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	/* the tree is empty: the rollback builds it from the spare nodes */
	nfg_rs_tree_rollback(&u);
	nfg_rs_update_end(&u);
	WRITE_ONCE(core->tree_stale, false);
	return 0;
}

/*
 * Put the tree back into the state of the published array, reusing the
 * nodes of the tree and of the spare list: there are at least as many of
 * them as the array has ranges (see the top of this file), so this cannot
 * fail. Ranges come in ascending order, so each one becomes the right
 * child of the previous (the maximum of a tree has no right child).
 */
void nfg_rs_tree_rollback(struct nfg_rs_update *u)
{
	struct nfg_rs_core *core = u->core;
	const struct nfg_rs_array *arr;
	struct rb_node **link, *parent = NULL;
	struct nfg_rs_node *n, *tmp;
	u32 i, count;

	arr = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	count = arr ? arr->count : 0;

	rbtree_postorder_for_each_entry_safe(n, tmp, &core->root, rb) {
		n->next = u->spare;
		u->spare = n;
	}
	core->root = RB_ROOT;
	core->count = 0;

	link = &core->root.rb_node;
	for (i = 0; i < count; i++) {
		n = u->spare;
		if (WARN_ON_ONCE(!n))
			break;
		u->spare = n->next;
		nfg_rs_array_range(arr, i, &n->r);
		rb_link_node(&n->rb, parent, link);
		rb_insert_color(&n->rb, &core->root);
		parent = &n->rb;
		link = &n->rb.rb_right;
		core->count++;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
}

/* Take the ranges expired at @now out of the tree; returns how many. */
u32 nfg_rs_tree_expire(struct nfg_rs_update *u, u64 now)
{
	struct nfg_rs_core *core = u->core;
	struct nfg_rs_node *n, *next;
	u32 count = 0, i = 0;

	if (!core->next_expiry || core->next_expiry > now)
		return 0;
	for (n = rs_node(rb_first(&core->root)); n; n = next) {
		next = rs_node(rb_next(&n->rb));
		if (n->r.expires && n->r.expires <= now) {
			rs_node_drop(u, n);
			count++;
		}
		if (++i % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	return count;
}

/*
 * Expire without folding: publish the array without the ranges expired
 * at @now (a merge of no entries: the array only shrinks, no room to
 * charge, no tree needed). Under core->lock for writing. On -ENOMEM
 * nothing changed.
 */
static int rs_expire_locked(struct nfg_rs_core *core, u64 now, u32 *expired)
{
	int err;

	*expired = 0;
	if (!core->next_expiry || core->next_expiry > now)
		return 0;
	err = nfg_rs_merge_publish(core, NULL, 0, now, true, 0, expired);
	if (!err)
		WRITE_ONCE(core->expiries, core->expiries + *expired);
	return err;
}

/**
 * nfg_rs_core_update - add or delete a batch of ranges
 * @core: the set
 * @r: ranges, each START <= END (and within 32 bits for IPv4 sets)
 * @n: number of ranges
 * @op: NFG_RS_OP_ADD merges, NFG_RS_OP_DEL subtracts
 *
 * Whole batch or nothing: on error the set is unchanged.
 *
 * Return: 0, -EINVAL (an invalid range; nothing was looked at), -ENOSPC
 * (the result would hold more than maxelem ranges) or -ENOMEM.
 */
int nfg_rs_core_update(struct nfg_rs_core *core, const struct nfg_rs_range *r,
		       unsigned int n, enum nfg_rs_op op)
{
	struct nfg_rs_update u = { .core = core };
	unsigned int i;
	int err = 0;

	for (i = 0; i < n; i++)
		if (!nfg_rs_range_valid(&r[i], core->v6))
			return -EINVAL;

	down_write(&core->lock);
	/* Dynamic entries first: the request applies to the whole set. */
	err = nfg_rs_fold_locked(core, get_jiffies_64(), NULL);
	if (!err)
		err = nfg_rs_tree_sync(core);
	if (err)
		goto out;
	for (i = 0; i < n && !err; i++) {
		if (op == NFG_RS_OP_ADD)
			err = nfg_rs_tree_add(&u, &r[i]);
		else
			err = nfg_rs_tree_del(&u, &r[i]);
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	if (!err && u.changed)
		err = nfg_rs_publish(core, 0, false);
	if (err && u.changed)
		nfg_rs_tree_rollback(&u);
	nfg_rs_update_end(&u);
out:
	up_write(&core->lock);
	return err;
}

void nfg_rs_core_flush(struct nfg_rs_core *core)
{
	struct nfg_rs_array *old;
	struct rb_root root;

	down_write(&core->lock);
	/*
	 * As a fold does: the empty array first, then the generation, then
	 * the entries, so no reader sees the old array without them.
	 */
	old = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	rcu_assign_pointer(core->arr, NULL);
	nfg_rs_gen_bump(core);
	WRITE_ONCE(core->tree_stale, false);
	nfg_rs_dyn_clear(rcu_dereference_protected(core->dyn,
						   lockdep_is_held(&core->lock)));
	root = core->root;
	core->root = RB_ROOT;
	core->count = 0;
	WRITE_ONCE(core->next_expiry, 0);
	up_write(&core->lock);

	rs_tree_free(&root);
	nfg_rs_array_put(old);
}

/**
 * nfg_rs_core_expire - remove the ranges that have expired
 * @core: the set
 * @now: the current time, on the clock of the ranges' expiries
 * @expired: set to the number of ranges removed
 *
 * All of them leave in one publication. On -ENOMEM nothing changed (the
 * caller tries again later).
 *
 * Return: 0 or -ENOMEM.
 */
int nfg_rs_core_expire(struct nfg_rs_core *core, u64 now, u32 *expired)
{
	int err;

	down_write(&core->lock);
	/* Dynamic entries go into the same publication. */
	err = nfg_rs_fold_locked(core, now, expired);
	/*
	 * Without memory for the fold, the ranges still expire: the entries
	 * wait in the hash (where they decide over the array anyway) for
	 * the fold work's next try.
	 */
	if (err && nfg_rs_dyn_pending(core))
		err = rs_expire_locked(core, now, expired);
	up_write(&core->lock);
	return err;
}

/* Earliest expiry in the set (0: none); without the lock, may be stale. */
u64 nfg_rs_core_next_expiry(const struct nfg_rs_core *core)
{
	return READ_ONCE(core->next_expiry);
}

/* True if the whole range @r is in the set. */
bool nfg_rs_core_test(struct nfg_rs_core *core, const struct nfg_rs_range *r)
{
	const struct nfg_rs_array *arr;
	bool hit;

	if (!nfg_rs_range_valid(r, core->v6))
		return false;

	down_write(&core->lock);
	/* On failure the entries stay dynamic: the answer leaves them out. */
	nfg_rs_fold_locked(core, get_jiffies_64(), NULL);
	/* the array holds the set (the tree may be stale); expiry aside */
	arr = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	hit = nfg_rs_array_covers(arr, &r->start, &r->end, 0);
	up_write(&core->lock);
	return hit;
}

/* Exchange the contents (ranges and maxelem) of two sets of one family. */
int nfg_rs_core_swap(struct nfg_rs_core *a, struct nfg_rs_core *b)
{
	struct nfg_rs_array *arr_a, *arr_b;
	u32 maxelem;
	bool stale;
	int err;
	u64 next;

	if (a->v6 != b->v6)
		return -EINVAL;
	if (a == b)
		return 0;
	/* Lock order: lower address first. */
	if (a > b)
		swap(a, b);

	down_write(&a->lock);
	down_write_nested(&b->lock, SINGLE_DEPTH_NESTING);
	/*
	 * The hashes stay with the sets' names (the RANGESET rules that
	 * made them point at the names): fold them first, so their entries
	 * go with the contents. If that fails (-ENOMEM), the swap does not
	 * happen. Entries the packet path adds meanwhile were checked
	 * against the old contents' room: they fold into the new ones, or
	 * are refused there if they no longer fit.
	 */
	err = nfg_rs_fold_locked(a, get_jiffies_64(), NULL);
	if (!err)
		err = nfg_rs_fold_locked(b, get_jiffies_64(), NULL);
	if (err)
		goto out;

	arr_a = rcu_dereference_protected(a->arr, lockdep_is_held(&a->lock));
	arr_b = rcu_dereference_protected(b->arr, lockdep_is_held(&b->lock));
	rcu_assign_pointer(a->arr, arr_b);
	rcu_assign_pointer(b->arr, arr_a);

	swap(a->root, b->root);
	swap(a->count, b->count);
	/* read locklessly by nfg_rs_core_info() */
	stale = a->tree_stale;
	WRITE_ONCE(a->tree_stale, b->tree_stale);
	WRITE_ONCE(b->tree_stale, stale);
	swap(a->timeout, b->timeout);
	next = a->next_expiry;
	WRITE_ONCE(a->next_expiry, b->next_expiry);
	WRITE_ONCE(b->next_expiry, next);
	maxelem = a->maxelem;
	WRITE_ONCE(a->maxelem, b->maxelem);
	WRITE_ONCE(b->maxelem, maxelem);
out:
	up_write(&b->lock);
	up_write(&a->lock);
	return err;
}

/*
 * Take a reference on the published array (NULL for an empty set), and
 * the maxelem that goes with it. Release with nfg_rs_array_put().
 */
struct nfg_rs_array *nfg_rs_core_snapshot(struct nfg_rs_core *core,
					  u32 *maxelem)
{
	struct nfg_rs_array *arr;

	down_write(&core->lock);
	/* Listings show dynamic entries folded (on failure: left out). */
	nfg_rs_fold_locked(core, get_jiffies_64(), NULL);
	arr = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	if (arr)
		refcount_inc(&arr->ref);
	if (maxelem)
		*maxelem = core->maxelem;
	up_write(&core->lock);
	return arr;
}

/* Lockless summary for listings: counts from the published array. */
void nfg_rs_core_info(struct nfg_rs_core *core, struct nfg_rs_core_info *info)
{
	const struct nfg_rs_array *arr;
	const struct nfg_rs_dyn *dyn;
	int cpu;

	memset(info, 0, sizeof(*info));
	rcu_read_lock();
	arr = rcu_dereference(core->arr);
	if (arr) {
		info->count = arr->count;
		info->memsize = arr->memsize;
	}
	dyn = rcu_dereference(core->dyn);
	if (dyn) {
		info->dyn_count = atomic_read(&dyn->entries);
		info->memsize += dyn->memsize +
			(u64)info->dyn_count * sizeof(struct nfg_rs_dent);
	}
	rcu_read_unlock();
	info->maxelem = READ_ONCE(core->maxelem);
	info->timeout = READ_ONCE(core->timeout);
	info->expiries = READ_ONCE(core->expiries);
	if (!READ_ONCE(core->tree_stale))
		info->memsize += (u64)info->count * sizeof(struct nfg_rs_node);

	for_each_possible_cpu(cpu) {
		const struct nfg_rs_stats *s = per_cpu_ptr(core->stats, cpu);

		info->lookups += READ_ONCE(s->lookups);
		info->hits += READ_ONCE(s->hits);
		info->dyn_adds += READ_ONCE(s->dyn_adds);
		info->dyn_dels += READ_ONCE(s->dyn_dels);
		info->dyn_refused += READ_ONCE(s->dyn_refused);
	}
}

int nfg_rs_core_init(struct nfg_rs_core *core, bool v6, u32 maxelem)
{
	core->stats = alloc_percpu_gfp(struct nfg_rs_stats, GFP_KERNEL_ACCOUNT);
	if (!core->stats)
		return -ENOMEM;
	init_rwsem(&core->lock);
	core->root = RB_ROOT;
	core->count = 0;
	core->maxelem = maxelem;
	core->timeout = 0;
	core->expiries = 0;
	core->next_expiry = 0;
	core->gen = 0;
	core->v6 = v6;
	core->tree_stale = false;
	RCU_INIT_POINTER(core->arr, NULL);
	RCU_INIT_POINTER(core->dyn, NULL);
	return 0;
}

/*
 * Free the tree and drop the set's array reference (the array itself goes
 * after a grace period). Process context; the caller holds the last
 * reference to the set.
 */
void nfg_rs_core_release(struct nfg_rs_core *core)
{
	nfg_rs_dyn_clear(rcu_dereference_protected(core->dyn, 1));
	rs_tree_free(&core->root);
	core->count = 0;
	nfg_rs_array_put(rcu_dereference_protected(core->arr, 1));
	RCU_INIT_POINTER(core->arr, NULL);
}

/* Free what a lookup may still touch; after a grace period. */
void nfg_rs_core_free(struct nfg_rs_core *core)
{
	nfg_rs_dyn_free(core);
	free_percpu(core->stats);
	core->stats = NULL;
}
