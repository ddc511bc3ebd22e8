// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard rangeset: interval set core.
 *
 * Theory of operation
 * -------------------
 *
 * A set is a list of disjoint, non-adjacent, inclusive ranges of addresses.
 * Addresses are handled as 128-bit host-order keys (struct nfg_rs_key);
 * IPv4 addresses live in the low 32 bits. Every set has two copies of its
 * ranges, one for each side of the house:
 *
 *  - The control plane works on an rbtree of ranges (core->root), ordered
 *    by start. Adding merges overlapping and adjacent ranges; deleting
 *    trims, removes or splits ranges. The tree, its node count and maxelem
 *    are guarded by a per-set rw_semaphore (core->lock): writers (add, del,
 *    flush, swap) take it for writing, readers of the tree (test, taking a
 *    snapshot of the array) for reading. The lock exists so that control
 *    plane operations on one set see each other's results whole; it is
 *    never taken on the packet path, so it cannot stall a lookup.
 *
 *  - The packet path searches an immutable sorted array (struct
 *    nfg_rs_array) published with rcu_assign_pointer(). IPv4 sets store
 *    u32 starts[] and ends[] (a binary search over starts[] touches few
 *    cache lines), IPv6 sets 128-bit keys. A lookup is a binary search
 *    under RCU: no lock, no atomic write; only per-CPU counters change.
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
 * Swapping two sets exchanges their trees, counts, maxelem, default
 * timeouts, next expiries and array pointers under both sets' locks,
 * taken in address order. Each lookup
 * loads the array pointer once, so it sees either the old or the new
 * contents, never a mix.
 *
 * Dynamic entries (packet-path adds: the RANGESET target). Rebuilding the
 * array costs O(ranges) and the tree needs the set's rw_semaphore, so the
 * packet path does neither. A set used by a RANGESET rule has a bounded
 * hash of dynamic entries (struct nfg_rs_dyn, allocated by the rule's
 * checkentry): masked address + prefix length + expiry, or a delete
 * marker, and a sequence number (seq, from one per-set atomic64) giving
 * the order of the packet-path changes. Chains are RCU singly linked
 * lists; writers of a chain (the packet path, the fold, flush) take its
 * bucket's lock, one of at most 256 hashed spinlocks, so CPUs adding
 * different addresses rarely meet and no lock is shared by all CPUs.
 *
 * Every entry in the hash is a change made after the array it lies over
 * was built, so a lookup consults the hash after the array, while a
 * bitmap of the prefix lengths in use is not empty: it probes only those
 * lengths, and among the entries covering the address the latest (highest
 * seq) decides: a live entry matches, a delete marker does not, an expired
 * entry counts as absent; with none, the array decides. The bit of a
 * length is set before its first entry is linked (rcu_assign_pointer()
 * orders the two), so an entry is visible to every lookup that starts
 * after its add returned, on any CPU; it is cleared when the length's
 * per-length count drops to 0 (test_and_clear_bit() then a re-check, so a
 * racing add puts it back).
 *
 * Room. Adds take a slot of maxelem (dyn->count) with a compare-and-swap
 * loop against the published array's count, so that ranges plus pending
 * adds never exceed maxelem (a full set refuses and counts it). A control
 * plane publication that grows the array charges its growth to the same
 * counter while it publishes, and a packet-path reservation checks the
 * array again after its (fully ordered) cmpxchg: one of the two always
 * sees the other, so they never overshoot together. Delete markers never
 * take a slot: they have their own budget (maxelem markers pending), a
 * full set takes them, and the fold always applies them; a delete that
 * splits a range may leave the set over maxelem by that split (adds are
 * refused until it is back under). An add whose fold would split a range
 * of another expiry in three (two slots for the one it reserved) is
 * dropped and counted as a refusal when the set has no room for that.
 *
 * A packet-path add of what the array already holds (unexpired) does
 * nothing while no delete marker is pending (one could lie inside the
 * prefix), unless --exist; re-adding a live dynamic entry leaves its
 * expiry alone unless --exist or it has expired (ipset's semantics). A
 * packet-path delete turns a dynamic entry of exactly that prefix into a
 * delete marker; with no entry, it links a marker if the array holds any
 * part of the prefix or any add is pending (it may lie inside). Either
 * way the marker is the latest change: lookups miss inside it at once,
 * whatever the lengths of the entries under it.
 *
 * Folding moves the hash into the tree: copy the entries (each bucket
 * under its lock), sort them by seq, apply them in that order as adds
 * with their expiries (the later expiry wins, as for the control plane)
 * and markers as deletes, so the tree ends where the lookups were; entries
 * expired by then are dropped (counted as expiries). Then publish once,
 * bump the set's generation (core->gen), and unlink the copied entries
 * unless the packet path changed them meanwhile (a new seq: folded again
 * next time). A lookup, and the packet path's reads of the array, read the
 * generation before the array and again after the hash and retry if it
 * moved: a reader that loaded the old array and then probed the hash
 * after the unlink would see neither the old entry nor its folded range.
 * If the adds would overflow maxelem, the batch is applied again with
 * only the adds whose worst case still fits, and then with the markers
 * alone: a full set never wedges its fold, its expiry or the control
 * plane. On -ENOMEM nothing changes and the entries keep deciding from the
 * hash; the expiry work then expires the tree's ranges without the fold.
 * The set's fold work (rangeset_nl.c) runs a tick after the first
 * packet-path change, so a flood costs one publication per tick at most;
 * the expiry work folds too, into the same publication as the ranges it
 * expires. ADD, DEL, TEST, SWAP and LIST's snapshot fold first (at the
 * current jiffies64, so expired entries are dropped, not brought back),
 * under the set's lock, so they see and act on the whole set; FLUSH and
 * the set's release drop the entries. The hash stays with the set (its
 * name, which the RANGESET rules use): SWAP folds both sets first, so the
 * entries travel with the contents.
 *
 * Entries are allocated with GFP_NOWAIT in softirq, not charged to a
 * memcg (there is no process to charge in softirq; the hash itself is
 * GFP_KERNEL_ACCOUNT, and maxelem bounds the entries); freed with
 * call_rcu(). The fold's and the expiry's allocations are
 * GFP_KERNEL_ACCOUNT: rangeset_nl.c runs those works with the set
 * creator's memcg active. Each entry and each hash counts in
 * nfg_rs_live_objects.
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
#include <linux/jhash.h>
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
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "rangeset_core.h"

/*
 * Points where the unit tests (tests/unit) force an interleaving: they run
 * a control-plane operation there, as another CPU could. Nothing in the
 * kernel.
 */
enum { RS_RACE_LOOKUP, RS_RACE_ADD, RS_RACE_RESERVE };
#ifndef NFG_RS_RACE_POINT
#define NFG_RS_RACE_POINT(core, where)	do { (void)(core); (void)(where); } while (0)
#endif

/* Long control-plane loops give the CPU away this often. */
#define NFG_RS_RESCHED_EVERY	1024

struct nfg_rs_node {
	struct rb_node		rb;
	/* Spare list of the running request (nodes not in the tree). */
	struct nfg_rs_node	*next;
	struct nfg_rs_range	r;
};

/* State of one add/del request. */
struct nfg_rs_update {
	struct nfg_rs_core	*core;
	struct nfg_rs_node	*spare;
	bool			changed;
};

static int rs_key_cmp(const struct nfg_rs_key *a, const struct nfg_rs_key *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

static bool rs_key_le(const struct nfg_rs_key *a, const struct nfg_rs_key *b)
{
	return a->hi < b->hi || (a->hi == b->hi && a->lo <= b->lo);
}

static bool rs_key_is_min(const struct nfg_rs_key *k)
{
	return !k->hi && !k->lo;
}

static bool rs_key_is_max(const struct nfg_rs_key *k, bool v6)
{
	if (v6)
		return k->hi == U64_MAX && k->lo == U64_MAX;
	return k->lo == U32_MAX;
}

/* Callers make sure the key is not the maximum. */
static void rs_key_inc(struct nfg_rs_key *k)
{
	if (++k->lo == 0)
		k->hi++;
}

/* Callers make sure the key is not zero. */
static void rs_key_dec(struct nfg_rs_key *k)
{
	if (k->lo-- == 0)
		k->hi--;
}

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

static struct nfg_rs_array *rs_array_alloc(u32 count, bool v6, bool timed)
{
	size_t esz = v6 ? sizeof(struct nfg_rs_key) : sizeof(u32);
	struct nfg_rs_array *arr;
	size_t size;

	size = size_add(sizeof(*arr), array3_size(2, esz, count));
	if (timed)
		size = size_add(size, array_size(sizeof(u64), count));
	arr = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!arr)
		return NULL;
	atomic_inc(&nfg_rs_live_objects);
	refcount_set(&arr->ref, 1);
	arr->count = count;
	arr->v6 = v6;
	arr->timed = timed;
	arr->memsize = size;
	return arr;
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
 * Binary search for the last range whose start is <= the address, then
 * check its end. The loop keeps the candidate window [base, base + n):
 * everything before base starts at or below the address, so the answer
 * is never left of base. No early exit, so the loop runs log2(count)
 * times and the compiler can make the step branch-free.
 */
bool nfg_rs_array_lookup4(const struct nfg_rs_array *arr, u32 addr)
{
	const u32 *start, *base;
	u32 n, half;

	if (!arr || !arr->count)
		return false;
	start = rs_cstarts4(arr);
	base = start;
	n = arr->count;
	while (n > 1) {
		half = n / 2;
		if (base[half] <= addr)
			base += half;
		n -= half;
	}
	return *base <= addr && addr <= rs_cends4(arr)[base - start];
}

bool nfg_rs_array_lookup6(const struct nfg_rs_array *arr,
			  const struct nfg_rs_key *key)
{
	const struct nfg_rs_key *start, *base;
	u32 n, half;

	if (!arr || !arr->count)
		return false;
	start = rs_cstarts6(arr);
	base = start;
	n = arr->count;
	while (n > 1) {
		half = n / 2;
		if (rs_key_le(&base[half], key))
			base += half;
		n -= half;
	}
	return rs_key_le(base, key) && rs_key_le(key, &rs_cends6(arr)[base - start]);
}

/* ---- dynamic entries: packet-path side --------------------------------- */

/* Keep the first @plen bits of @key (the family's length for full). */
void nfg_rs_key_mask(struct nfg_rs_key *key, u8 plen, bool v6)
{
	if (!v6) {
		key->hi = 0;
		key->lo &= plen ? (u32)(U32_MAX << (32 - min_t(u8, plen, 32))) : 0;
		return;
	}
	if (plen <= 64) {
		key->hi &= plen ? U64_MAX << (64 - plen) : 0;
		key->lo = 0;
	} else {
		key->lo &= U64_MAX << (128 - min_t(u8, plen, 128));
	}
}

/* Last address of the prefix that starts at the masked @key. */
static void rs_key_prefix_end(struct nfg_rs_key *end,
			      const struct nfg_rs_key *key, u8 plen, bool v6)
{
	*end = *key;
	if (!v6) {
		end->lo |= plen >= 32 ? 0 : U32_MAX >> plen;
		return;
	}
	if (plen <= 64) {
		end->hi |= plen >= 64 ? 0 : U64_MAX >> plen;
		end->lo = U64_MAX;
	} else {
		end->lo |= plen >= 128 ? 0 : U64_MAX >> (plen - 64);
	}
}

static u32 rs_dyn_bucket(const struct nfg_rs_dyn *dyn,
			 const struct nfg_rs_key *key, u8 plen)
{
	u32 w[5] = {
		upper_32_bits(key->hi), lower_32_bits(key->hi),
		upper_32_bits(key->lo), lower_32_bits(key->lo), plen,
	};

	return jhash2(w, ARRAY_SIZE(w), dyn->seed) & dyn->hmask;
}

static bool rs_dyn_any(const struct nfg_rs_dyn *dyn)
{
	unsigned int i;

	for (i = 0; i < BITS_TO_LONGS(NFG_RS_DYN_PLENS); i++)
		if (READ_ONCE(dyn->pfx[i]))
			return true;
	return false;
}

/* The entry for exactly (@key, @plen) in bucket @b; under RCU or its lock. */
static struct nfg_rs_dent *rs_dyn_find(const struct nfg_rs_dyn *dyn, u32 b,
				       const struct nfg_rs_key *key, u8 plen)
{
	struct nfg_rs_dent *e;

	for (e = rcu_dereference(dyn->buckets[b]); e;
	     e = rcu_dereference(e->next))
		if (e->plen == plen && e->key.hi == key->hi &&
		    e->key.lo == key->lo)
			return e;
	return NULL;
}

/*
 * Probe of the dynamic entries for @addr, under RCU: 1 if the latest
 * (highest seq) entry covering it adds, 0 if it is a delete marker, -1 if
 * none covers it (the array decides). Expired entries count as absent.
 */
static int rs_dyn_probe(const struct nfg_rs_dyn *dyn,
			const struct nfg_rs_key *addr, bool v6, u64 now)
{
	u64 best = 0;
	int ret = -1;
	int w;

	for (w = BITS_TO_LONGS(NFG_RS_DYN_PLENS) - 1; w >= 0; w--) {
		unsigned long bits = READ_ONCE(dyn->pfx[w]);

		while (bits) {
			unsigned int bit = __fls(bits);
			u8 plen = w * BITS_PER_LONG + bit;
			struct nfg_rs_key key = *addr;
			struct nfg_rs_dent *e;
			u64 seq, exp;
			u8 del;

			bits &= ~BIT(bit);
			nfg_rs_key_mask(&key, plen, v6);
			e = rs_dyn_find(dyn, rs_dyn_bucket(dyn, &key, plen),
					&key, plen);
			if (!e)
				continue;
			seq = READ_ONCE(e->seq);
			if (seq <= best)
				continue;
			del = READ_ONCE(e->del);
			exp = READ_ONCE(e->expires);
			if (!del && exp && exp <= now)
				continue;
			best = seq;
			ret = !del;
		}
	}
	return ret;
}

/*
 * Generation read before the array: with rs_gen_changed() after the
 * hash, it brackets a reader's view of the set (see nfg_rs_core.gen).
 */
static u32 rs_gen_begin(const struct nfg_rs_core *core)
{
	u32 gen = READ_ONCE(core->gen);

	smp_rmb();	/* gen before arr; pairs with rs_gen_bump() */
	return gen;
}

static bool rs_gen_changed(const struct nfg_rs_core *core, u32 gen)
{
	smp_rmb();	/* the hash before gen; pairs with rs_gen_bump() */
	return READ_ONCE(core->gen) != gen;
}

/*
 * After publishing @arr, before unlinking what it holds. Under core->lock.
 * The unlinks' rcu_assign_pointer() orders the bump before them.
 */
static void rs_gen_bump(struct nfg_rs_core *core)
{
	smp_wmb();	/* arr before gen */
	WRITE_ONCE(core->gen, core->gen + 1);
}

static bool rs_core_lookup(struct nfg_rs_core *core,
			   const struct nfg_rs_key *key, u64 now)
{
	const struct nfg_rs_dyn *dyn;
	bool hit;
	u32 gen;
	int d;

	rcu_read_lock();
	do {
		gen = rs_gen_begin(core);
		if (core->v6)
			hit = nfg_rs_array_lookup6(rcu_dereference(core->arr),
						   key);
		else
			hit = nfg_rs_array_lookup4(rcu_dereference(core->arr),
						   (u32)key->lo);
		NFG_RS_RACE_POINT(core, RS_RACE_LOOKUP);
		dyn = rcu_dereference(core->dyn);
		if (dyn && rs_dyn_any(dyn)) {
			d = rs_dyn_probe(dyn, key, core->v6, now);
			if (d >= 0)
				hit = d;
		}
	} while (dyn && rs_gen_changed(core, gen));
	rcu_read_unlock();

	this_cpu_inc(core->stats->lookups);
	if (hit)
		this_cpu_inc(core->stats->hits);
	return hit;
}

bool nfg_rs_core_match4(struct nfg_rs_core *core, u32 addr, u64 now)
{
	struct nfg_rs_key key = { .hi = 0, .lo = addr };

	return rs_core_lookup(core, &key, now);
}

bool nfg_rs_core_match6(struct nfg_rs_core *core, const struct nfg_rs_key *key,
			u64 now)
{
	return rs_core_lookup(core, key, now);
}

/* Index of the last range of @arr starting at or below @key, or -1. */
static s64 rs_array_find(const struct nfg_rs_array *arr,
			 const struct nfg_rs_key *key)
{
	struct nfg_rs_range r;
	s64 lo = 0, hi, best = -1;

	if (!arr)
		return -1;
	hi = (s64)arr->count - 1;
	while (lo <= hi) {
		s64 mid = lo + (hi - lo) / 2;

		nfg_rs_array_range(arr, mid, &r);
		if (rs_key_le(&r.start, key)) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

/* Is all of [start, end] in one unexpired range of @arr? */
static bool rs_array_covers(const struct nfg_rs_array *arr,
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
static bool rs_array_overlaps(const struct nfg_rs_array *arr,
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

static void rs_dyn_pfx_get(struct nfg_rs_dyn *dyn, u8 plen)
{
	/* Fully ordered: the count is up before the bit is looked at. */
	if (atomic_inc_return(&dyn->pfx_cnt[plen]) == 1 ||
	    !test_bit(plen, dyn->pfx))
		set_bit(plen, dyn->pfx);
}

static void rs_dyn_pfx_put(struct nfg_rs_dyn *dyn, u8 plen)
{
	if (atomic_dec_return(&dyn->pfx_cnt[plen]))
		return;
	/*
	 * Last entry of this length gone. test_and_clear_bit() is fully
	 * ordered: an add that raced (count up, bit seen set before we
	 * cleared it) is seen here and the bit goes back.
	 */
	if (test_and_clear_bit(plen, dyn->pfx) &&
	    atomic_read(&dyn->pfx_cnt[plen]))
		set_bit(plen, dyn->pfx);
}

/*
 * Reserve a slot of maxelem for one entry: ranges in the published array
 * plus @count stay <= maxelem. A compare-and-swap loop, so that adds on
 * several CPUs never overshoot together; the array is read again after
 * the (fully ordered) cmpxchg, because a control-plane publication may
 * have grown it and given its charge back meanwhile (rs_room_charge()):
 * the reservation stands only if it still fits.
 */
static bool rs_dyn_reserve(struct nfg_rs_core *core, struct nfg_rs_dyn *dyn)
{
	u32 max = READ_ONCE(core->maxelem);
	const struct nfg_rs_array *arr;
	int c, old;
	u64 used;

	c = atomic_read(&dyn->count);
	for (;;) {
		arr = rcu_dereference(core->arr);
		used = arr ? arr->count : 0;
		NFG_RS_RACE_POINT(core, RS_RACE_RESERVE);
		if (used + (u32)c >= max)
			return false;
		old = atomic_cmpxchg(&dyn->count, c, c + 1);
		if (old == c)
			break;
		c = old;
	}
	arr = rcu_dereference(core->arr);
	if ((u64)(arr ? arr->count : 0) + (u32)c + 1 > max) {
		atomic_dec(&dyn->count);
		return false;
	}
	return true;
}

/* A delete marker's own budget: at most maxelem of them. */
static bool rs_dyn_mark_room(struct nfg_rs_core *core, struct nfg_rs_dyn *dyn)
{
	if ((u32)atomic_inc_return(&dyn->marks) <= READ_ONCE(core->maxelem))
		return true;
	atomic_dec(&dyn->marks);
	return false;
}

static void rs_dent_free_rcu(struct rcu_head *head)
{
	kfree(container_of(head, struct nfg_rs_dent, rcu));
	atomic_dec(&nfg_rs_live_objects);
}

/*
 * Link a new entry in bucket @b; under the bucket's lock, its slot (add)
 * or mark (marker) taken, and given back here on failure.
 */
static int rs_dyn_link(struct nfg_rs_dyn *dyn, u32 b,
		       const struct nfg_rs_key *key, u8 plen, u64 expires,
		       bool del)
{
	struct nfg_rs_dent *e;

	/*
	 * Softirq: no reclaim. Not charged to a memcg (no process to take
	 * it from); the set's maxelem bounds the total.
	 */
	e = kmalloc(sizeof(*e), GFP_NOWAIT | __GFP_NOWARN);
	if (!e) {
		atomic_dec(del ? &dyn->marks : &dyn->count);
		return -ENOMEM;
	}
	atomic_inc(&nfg_rs_live_objects);
	atomic_inc(&dyn->entries);
	e->key = *key;
	e->plen = plen;
	e->expires = expires;
	e->del = del;
	e->charged = !del;
	e->seq = atomic64_inc_return(&dyn->seq);
	/* The bit goes up first: a lookup that finds the entry probes it. */
	rs_dyn_pfx_get(dyn, plen);
	RCU_INIT_POINTER(e->next, rcu_dereference(dyn->buckets[b]));
	rcu_assign_pointer(dyn->buckets[b], e);
	return 0;
}

/* Unlink @e from bucket @b (under its lock) and free it after a grace period. */
static void rs_dyn_unlink(struct nfg_rs_dyn *dyn, u32 b, struct nfg_rs_dent *e)
{
	struct nfg_rs_dent __rcu **pp = &dyn->buckets[b];
	struct nfg_rs_dent *cur;

	while ((cur = rcu_dereference(*pp))) {
		if (cur == e) {
			rcu_assign_pointer(*pp, rcu_dereference(e->next));
			rs_dyn_pfx_put(dyn, e->plen);
			if (e->charged)
				atomic_dec(&dyn->count);
			if (e->del)
				atomic_dec(&dyn->marks);
			atomic_dec(&dyn->entries);
			call_rcu(&e->rcu, rs_dent_free_rcu);
			return;
		}
		pp = &cur->next;
	}
	WARN_ON_ONCE(1);
}

/* Give the entry a new place in the order of changes; under its lock. */
static void rs_dent_touch(struct nfg_rs_dyn *dyn, struct nfg_rs_dent *e)
{
	WRITE_ONCE(e->seq, atomic64_inc_return(&dyn->seq));
}

/* Look up the set's hash and the bucket lock of (@key, @plen); under RCU. */
static struct nfg_rs_dyn *rs_dyn_get(struct nfg_rs_core *core,
				     const struct nfg_rs_key *key, u8 plen,
				     u32 *b, spinlock_t **lock)
{
	struct nfg_rs_dyn *dyn = rcu_dereference(core->dyn);

	if (WARN_ON_ONCE(!dyn))
		return NULL;
	*b = rs_dyn_bucket(dyn, key, plen);
	*lock = &dyn->locks[*b & dyn->lmask];
	return dyn;
}

/**
 * nfg_rs_dyn_add - packet-path add of the prefix of @addr
 * @core: the set (its dynamic hash enabled)
 * @addr: the packet's address
 * @plen: prefix length kept (the family's length for the address itself)
 * @expires: expiry of the entry (0 = never)
 * @exist: refresh the expiry of an entry already present
 * @now: the current time, on the clock of @expires
 *
 * Any context with BH disabled or process context. Never takes the set's
 * lock nor rebuilds the array: the entry waits in the hash, where every
 * lookup sees it, until nfg_rs_core_fold() moves it into the array.
 *
 * Return: NFG_RS_DYN_DONE, NFG_RS_DYN_NOOP (present and not @exist),
 * -ENOSPC (the set is full, counted as a refusal) or -ENOMEM (ditto).
 */
int nfg_rs_dyn_add(struct nfg_rs_core *core, const struct nfg_rs_key *addr,
		   u8 plen, u64 expires, bool exist, u64 now)
{
	struct nfg_rs_key key = *addr, end;
	int ret = NFG_RS_DYN_NOOP;
	spinlock_t *lock;	/* the bucket's lock: see struct nfg_rs_dyn */
	struct nfg_rs_dent *e;
	struct nfg_rs_dyn *dyn;
	bool covered;
	u32 b, gen;

	nfg_rs_key_mask(&key, plen, core->v6);
	rs_key_prefix_end(&end, &key, plen, core->v6);
	rcu_read_lock();
	dyn = rs_dyn_get(core, &key, plen, &b, &lock);
	if (!dyn) {
		rcu_read_unlock();
		return -EINVAL;
	}
	spin_lock_bh(lock);
	e = rs_dyn_find(dyn, b, &key, plen);
	if (e) {
		u64 exp = e->expires;

		/*
		 * Live and no marker anywhere that could be later than it:
		 * present. Otherwise the add becomes the latest change.
		 */
		if (!e->del && !exist && !(exp && exp <= now) &&
		    !atomic_read(&dyn->marks))
			goto out;
		if (e->del && !e->charged) {
			if (!rs_dyn_reserve(core, dyn)) {
				ret = -ENOSPC;
				goto out;
			}
			WRITE_ONCE(e->charged, 1);
		}
		if (e->del || exist || (exp && exp <= now))
			WRITE_ONCE(e->expires, expires);
		if (e->del) {
			WRITE_ONCE(e->del, 0);
			atomic_dec(&dyn->marks);
		}
		rs_dent_touch(dyn, e);
		ret = NFG_RS_DYN_DONE;
		goto out;
	}
	/*
	 * Already in the array, unexpired, and no delete marker anywhere
	 * (one could be inside the prefix): nothing to add. The generation
	 * brackets the reads: a fold that published the array and unlinked
	 * a marker meanwhile makes us look again.
	 */
	do {
		gen = rs_gen_begin(core);
		covered = !exist && !atomic_read(&dyn->marks) &&
			  rs_array_covers(rcu_dereference(core->arr), &key,
					  &end, now);
		NFG_RS_RACE_POINT(core, RS_RACE_ADD);
	} while (rs_gen_changed(core, gen));
	if (covered)
		goto out;
	if (!rs_dyn_reserve(core, dyn)) {
		ret = -ENOSPC;
		goto out;
	}
	ret = rs_dyn_link(dyn, b, &key, plen, expires, false);
	if (!ret)
		ret = NFG_RS_DYN_DONE;
out:
	spin_unlock_bh(lock);
	rcu_read_unlock();
	if (ret == NFG_RS_DYN_DONE)
		this_cpu_inc(core->stats->dyn_adds);
	else if (ret < 0)
		this_cpu_inc(core->stats->dyn_refused);
	return ret;
}

/**
 * nfg_rs_dyn_del - packet-path delete of the prefix of @addr
 * @core: the set (its dynamic hash enabled)
 * @addr: the packet's address
 * @plen: prefix length
 *
 * A dynamic entry of exactly that prefix becomes a delete marker (the
 * fold that copied it may have published it already); without one, a
 * marker is linked if the array holds any part of the prefix or any add
 * is pending (it may be inside). The marker is the latest change: lookups
 * miss inside it from now on, entries of other prefix lengths included,
 * and the next fold deletes the prefix from the tree (and drops the
 * marker). Deletes never take a slot of maxelem: a full set takes them.
 *
 * Return: NFG_RS_DYN_DONE, NFG_RS_DYN_NOOP (not in the set), -ENOSPC
 * (maxelem markers pending) or -ENOMEM (counted as refusals).
 */
int nfg_rs_dyn_del(struct nfg_rs_core *core, const struct nfg_rs_key *addr,
		   u8 plen)
{
	struct nfg_rs_key key = *addr, end;
	int ret = NFG_RS_DYN_NOOP;
	spinlock_t *lock;	/* the bucket's lock: see struct nfg_rs_dyn */
	struct nfg_rs_dent *e;
	struct nfg_rs_dyn *dyn;
	bool some;
	u32 b, gen;

	nfg_rs_key_mask(&key, plen, core->v6);
	rs_key_prefix_end(&end, &key, plen, core->v6);
	rcu_read_lock();
	dyn = rs_dyn_get(core, &key, plen, &b, &lock);
	if (!dyn) {
		rcu_read_unlock();
		return -EINVAL;
	}
	spin_lock_bh(lock);
	e = rs_dyn_find(dyn, b, &key, plen);
	if (e) {
		/* A marker that is still the latest change: nothing to do. */
		if (e->del && e->seq == (u64)atomic64_read(&dyn->seq))
			goto out;
		if (!e->del) {
			/* it keeps its slot (if charged): no room needed */
			atomic_inc(&dyn->marks);
			WRITE_ONCE(e->del, 1);
			WRITE_ONCE(e->expires, 0);
		}
		rs_dent_touch(dyn, e);
		ret = NFG_RS_DYN_DONE;
		goto out;
	}
	do {
		gen = rs_gen_begin(core);
		some = atomic_read(&dyn->count) ||
		       rs_array_overlaps(rcu_dereference(core->arr), &key, &end);
	} while (rs_gen_changed(core, gen));
	if (!some)
		goto out;
	if (!rs_dyn_mark_room(core, dyn)) {
		ret = -ENOSPC;
		goto out;
	}
	ret = rs_dyn_link(dyn, b, &key, plen, 0, true);
	if (!ret)
		ret = NFG_RS_DYN_DONE;
out:
	spin_unlock_bh(lock);
	rcu_read_unlock();
	if (ret == NFG_RS_DYN_DONE)
		this_cpu_inc(core->stats->dyn_dels);
	else if (ret < 0)
		this_cpu_inc(core->stats->dyn_refused);
	return ret;
}

/* Are there dynamic entries waiting to be folded? Any context. */
bool nfg_rs_dyn_pending(struct nfg_rs_core *core)
{
	const struct nfg_rs_dyn *dyn;
	bool ret;

	rcu_read_lock();
	dyn = rcu_dereference(core->dyn);
	ret = dyn && atomic_read(&dyn->entries);
	rcu_read_unlock();
	return ret;
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

static void rs_spare_free(struct nfg_rs_update *u)
{
	struct nfg_rs_node *n;

	while ((n = u->spare)) {
		u->spare = n->next;
		kfree(n);
	}
}

/* Does expiry a come no earlier than b? 0 (never) is the latest. */
static bool rs_exp_ge(u64 a, u64 b)
{
	return !a || (b && a >= b);
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
static int rs_add(struct nfg_rs_update *u, const struct nfg_rs_range *r)
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

static int rs_del(struct nfg_rs_update *u, const struct nfg_rs_range *r)
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

static void rs_array_fill(struct nfg_rs_array *arr, const struct rb_root *root)
{
	struct rb_node *rb;
	u32 i = 0;

	for (rb = rb_first(root); rb; rb = rb_next(rb), i++) {
		const struct nfg_rs_node *n = rs_node(rb);

		if (arr->v6) {
			rs_starts6(arr)[i] = n->r.start;
			rs_ends6(arr)[i] = n->r.end;
		} else {
			rs_starts4(arr)[i] = lower_32_bits(n->r.start.lo);
			rs_ends4(arr)[i] = lower_32_bits(n->r.end.lo);
		}
		if (arr->timed)
			rs_expires(arr)[i] = n->r.expires;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
}

/* Earliest expiry in the tree, 0 if no range expires. */
static u64 rs_tree_next_expiry(const struct rb_root *root)
{
	struct rb_node *rb;
	u64 next = 0;
	u32 i = 0;

	for (rb = rb_first(root); rb; rb = rb_next(rb)) {
		u64 e = rs_node(rb)->r.expires;

		if (e && (!next || e < next))
			next = e;
		if (++i % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	return next;
}

/*
 * Rebuild the packet-path array from the tree and publish it, then bump
 * the generation (see nfg_rs_core.gen).
 */
static int rs_publish(struct nfg_rs_core *core)
{
	struct nfg_rs_array *new = NULL, *old;
	u64 next = 0;

	if (core->count) {
		next = rs_tree_next_expiry(&core->root);
		new = rs_array_alloc(core->count, core->v6, next != 0);
		if (!new)
			return -ENOMEM;
		rs_array_fill(new, &core->root);
	}
	old = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	rcu_assign_pointer(core->arr, new);
	rs_gen_bump(core);
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
static int rs_publish_charged(struct nfg_rs_core *core, u32 allow, bool force)
{
	const struct nfg_rs_array *arr;
	struct nfg_rs_dyn *dyn;
	s64 grow;
	int c, old, err;

	arr = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	grow = (s64)core->count - (arr ? arr->count : 0);
	dyn = rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock));
	if (!dyn || grow <= 0) {
		if (!force && grow > 0 && core->count > (u64)core->maxelem + allow)
			return -ENOSPC;
		return rs_publish(core);
	}
	c = atomic_read(&dyn->count);
	for (;;) {
		if (!force && (u64)core->count + (u32)c >
		    (u64)core->maxelem + allow)
			return -ENOSPC;
		old = atomic_cmpxchg(&dyn->count, c, c + (int)grow);
		if (old == c)
			break;
		c = old;
	}
	err = rs_publish(core);
	smp_mb();	/* the new array before the charge goes back */
	atomic_sub((int)grow, &dyn->count);
	return err;
}

/*
 * Put the tree back into the state of the published array, reusing the
 * nodes of the tree and of the spare list: there are at least as many of
 * them as the array has ranges (see the top of this file), so this cannot
 * fail. Ranges come in ascending order, so each one becomes the right
 * child of the previous (the maximum of a tree has no right child).
 */
static void rs_rollback(struct nfg_rs_update *u)
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

/* ---- dynamic entries: folding into the tree ---------------------------- */

/* A copy of a dynamic entry taken by a fold. */
struct rs_fold_ent {
	struct nfg_rs_key	key;
	u64			expires;
	u64			seq;
	u8			plen;
	u8			del;
	u8			charged;
};

struct rs_fold {
	struct rs_fold_ent	*ents;
	u32			n;
	u32			charged;	/* copies holding a slot */
	u32			splits;		/* ranges added by deletes */
	u32			expired;	/* entries dropped as expired */
	u32			refused;	/* entries dropped: no room */
};

/* How much of the batch a fold applies: see "Dynamic entries" above. */
enum rs_fold_mode {
	RS_FOLD_ALL,
	RS_FOLD_FITTING,	/* markers, and adds whose worst case fits */
	RS_FOLD_MARKERS,	/* markers only: every add refused */
};

static int rs_fold_ent_cmp(const void *a, const void *b)
{
	u64 x = ((const struct rs_fold_ent *)a)->seq;
	u64 y = ((const struct rs_fold_ent *)b)->seq;

	return x < y ? -1 : x > y;
}

/*
 * Copy the dynamic entries into @f, in the order of their changes. Under
 * core->lock for writing; each bucket under its lock, so that an entry's
 * fields are copied whole. The hash is left as it is: rs_fold_finish()
 * removes the copied entries once the caller has published the result.
 */
static int rs_fold_copy(struct nfg_rs_core *core, struct rs_fold *f)
{
	struct nfg_rs_dyn *dyn;
	struct nfg_rs_dent *e;
	u32 cap, b;

	memset(f, 0, sizeof(*f));
	dyn = rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock));
	if (!dyn || !atomic_read(&dyn->entries))
		return 0;
	/* Entries added while we copy wait for the next fold. */
	cap = atomic_read(&dyn->entries);
	f->ents = kvmalloc_array(cap, sizeof(*f->ents), GFP_KERNEL_ACCOUNT);
	if (!f->ents)
		return -ENOMEM;
	for (b = 0; b <= dyn->hmask && f->n < cap; b++) {
		spinlock_t *lock = &dyn->locks[b & dyn->lmask];

		if (!rcu_access_pointer(dyn->buckets[b]))
			continue;
		rcu_read_lock();
		spin_lock_bh(lock);
		for (e = rcu_dereference(dyn->buckets[b]); e && f->n < cap;
		     e = rcu_dereference(e->next)) {
			struct rs_fold_ent *c = &f->ents[f->n++];

			c->key = e->key;
			c->plen = e->plen;
			c->expires = e->expires;
			c->seq = e->seq;
			c->del = e->del;
			c->charged = e->charged;
			f->charged += e->charged;
		}
		spin_unlock_bh(lock);
		rcu_read_unlock();
		if ((b + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	sort(f->ents, f->n, sizeof(*f->ents), rs_fold_ent_cmp, NULL);
	return 0;
}

/*
 * Apply the copied entries to the tree in the request @u, in the order
 * of their changes, so that the latest change wins where two overlap, as
 * it does in rs_dyn_probe(). Entries expired at @now (0: none is) are
 * dropped, not folded. @mode: which adds are applied, the others are
 * counted as refused; markers always are. Under core->lock for writing.
 */
static int rs_fold_apply(struct nfg_rs_update *u, struct rs_fold *f, u64 now,
			 enum rs_fold_mode mode)
{
	struct nfg_rs_core *core = u->core;
	const struct nfg_rs_dyn *dyn;
	struct nfg_rs_range r;
	u32 others, before, i;
	int err;

	dyn = rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock));
	/* slots held by entries this fold does not apply */
	others = dyn ? (u32)atomic_read(&dyn->count) : 0;
	others = others > f->charged ? others - f->charged : 0;
	f->splits = 0;
	f->expired = 0;
	f->refused = 0;
	for (i = 0; i < f->n; i++) {
		const struct rs_fold_ent *c = &f->ents[i];

		if (!c->del && now && c->expires && c->expires <= now) {
			f->expired++;
			continue;
		}
		/* An add may split a range of another expiry in three. */
		if (!c->del && (mode == RS_FOLD_MARKERS ||
				(mode == RS_FOLD_FITTING &&
				 (u64)core->count + 2 + others >
				 (u64)core->maxelem + f->splits))) {
			f->refused++;
			continue;
		}
		r.start = c->key;
		rs_key_prefix_end(&r.end, &c->key, c->plen, core->v6);
		r.expires = c->expires;
		before = core->count;
		err = c->del ? rs_del(u, &r) : rs_add(u, &r);
		if (err)
			return err;
		if (c->del && core->count > before)
			f->splits += core->count - before;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	return 0;
}

/*
 * After the caller published the tree with the fold applied (@ok), remove
 * from the hash each entry the fold copied, unless the packet path changed
 * it meanwhile (a later seq): that one is folded again next time.
 */
static void rs_fold_finish(struct nfg_rs_core *core, struct rs_fold *f,
			   bool ok)
{
	struct nfg_rs_dyn *dyn;
	struct nfg_rs_dent *e;
	u32 i, b;

	dyn = rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock));
	for (i = 0; ok && dyn && i < f->n; i++) {
		const struct rs_fold_ent *c = &f->ents[i];
		spinlock_t *lock;	/* the bucket's lock: see struct nfg_rs_dyn */

		b = rs_dyn_bucket(dyn, &c->key, c->plen);
		lock = &dyn->locks[b & dyn->lmask];
		rcu_read_lock();
		spin_lock_bh(lock);
		e = rs_dyn_find(dyn, b, &c->key, c->plen);
		if (e && e->seq == c->seq)
			rs_dyn_unlink(dyn, b, e);
		spin_unlock_bh(lock);
		rcu_read_unlock();
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	if (ok && f->expired)
		WRITE_ONCE(core->expiries, core->expiries + f->expired);
	if (ok && f->refused)
		this_cpu_add(core->stats->dyn_refused, f->refused);
	kvfree(f->ents);
	f->ents = NULL;
}

/* Take the ranges expired at @now out of the tree; returns how many. */
static u32 rs_expire_nodes(struct nfg_rs_update *u, u64 now)
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
 * Fold and publish, in one publication with the expiry of the ranges
 * expired at @now if @expired is given (set to the ranges and entries
 * expired). Under core->lock for writing. A batch whose adds would
 * overflow maxelem is applied again with fewer of them (enum
 * rs_fold_mode); markers are always applied, so only -ENOMEM leaves the
 * set and the hash as they were.
 */
static int rs_fold_locked(struct nfg_rs_core *core, u64 now, u32 *expired)
{
	struct nfg_rs_update u = { .core = core };
	enum rs_fold_mode mode = RS_FOLD_ALL;
	u32 count = 0;
	struct rs_fold f;
	int err;

	if (expired)
		*expired = 0;
	err = rs_fold_copy(core, &f);
	if (err)
		return err;
	for (;;) {
		err = rs_fold_apply(&u, &f, now, mode);
		count = !err && expired ? rs_expire_nodes(&u, now) : 0;
		if (!err && (u.changed || count))
			err = rs_publish_charged(core, f.charged + f.splits,
						 mode == RS_FOLD_MARKERS);
		if (err && (u.changed || count)) {
			rs_rollback(&u);
			u.changed = false;
		}
		if (err != -ENOSPC || mode == RS_FOLD_MARKERS)
			break;
		mode = mode == RS_FOLD_ALL ? RS_FOLD_FITTING : RS_FOLD_MARKERS;
	}
	if (!err && count)
		WRITE_ONCE(core->expiries, core->expiries + count);
	if (!err && expired)
		*expired = count + f.expired;
	rs_spare_free(&u);
	rs_fold_finish(core, &f, !err);
	return err;
}

/*
 * Expire without folding: take the ranges expired at @now out and publish.
 * Under core->lock for writing. On -ENOMEM the tree is rolled back.
 */
static int rs_expire_locked(struct nfg_rs_core *core, u64 now, u32 *expired)
{
	struct nfg_rs_update u = { .core = core };
	u32 count = rs_expire_nodes(&u, now);
	int err = 0;

	if (count) {
		/* the array only shrinks: no room to charge */
		err = rs_publish_charged(core, 0, true);
		if (err)
			rs_rollback(&u);
		else
			WRITE_ONCE(core->expiries, core->expiries + count);
	}
	*expired = err ? 0 : count;
	rs_spare_free(&u);
	return err;
}

/**
 * nfg_rs_core_fold - move the dynamic entries into the tree and the array
 * @core: the set
 * @now: the current time; entries expired by then are dropped (counted as
 *	 expiries), not folded
 *
 * One publication for all of them. Entries that no longer fit in maxelem
 * are dropped and counted as refusals. Process context.
 *
 * Return: 0 or -ENOMEM: then nothing changed, and the entries keep
 * matching from the hash.
 */
int nfg_rs_core_fold(struct nfg_rs_core *core, u64 now)
{
	int err;

	if (!nfg_rs_dyn_pending(core))
		return 0;
	down_write(&core->lock);
	err = rs_fold_locked(core, now, NULL);
	up_write(&core->lock);
	return err;
}

/* Drop every dynamic entry; under core->lock for writing (or last user). */
static void rs_dyn_clear(struct nfg_rs_dyn *dyn)
{
	struct nfg_rs_dent *e;
	u32 b;

	if (!dyn)
		return;
	for (b = 0; b <= dyn->hmask; b++) {
		spinlock_t *lock = &dyn->locks[b & dyn->lmask];

		rcu_read_lock();
		spin_lock_bh(lock);
		while ((e = rcu_dereference(dyn->buckets[b])))
			rs_dyn_unlink(dyn, b, e);
		spin_unlock_bh(lock);
		rcu_read_unlock();
		if ((b + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
}

/**
 * nfg_rs_dyn_enable - give the set its hash of dynamic entries
 * @core: the set
 * @seed: hash seed (random in the kernel)
 *
 * Called by each RANGESET rule's checkentry; the first one allocates.
 * Buckets: maxelem rounded up to a power of two, within [64, 16384]
 * (longer chains only in sets over 16k entries); bucket locks: at most 256.
 *
 * Return: 0 or -ENOMEM.
 */
int nfg_rs_dyn_enable(struct nfg_rs_core *core, u32 seed)
{
	struct nfg_rs_dyn *dyn;
	u32 nb = 64, nl, i;
	size_t size;
	int err = 0;

	down_write(&core->lock);
	if (rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock)))
		goto out;
	while (nb < core->maxelem && nb < 16384)
		nb *= 2;
	nl = min_t(u32, nb, 256);
	size = struct_size(dyn, buckets, nb);
	dyn = kvzalloc(size, GFP_KERNEL_ACCOUNT);
	if (!dyn) {
		err = -ENOMEM;
		goto out;
	}
	dyn->locks = kcalloc(nl, sizeof(*dyn->locks), GFP_KERNEL_ACCOUNT);
	if (!dyn->locks) {
		err = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < nl; i++)
		spin_lock_init(&dyn->locks[i]);
	dyn->hmask = nb - 1;
	dyn->lmask = nl - 1;
	dyn->seed = seed;
	dyn->memsize = size + nl * sizeof(*dyn->locks);
	atomic_inc(&nfg_rs_live_objects);
	rcu_assign_pointer(core->dyn, dyn);
	goto out;

err_free:
	kvfree(dyn);
out:
	up_write(&core->lock);
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
	err = rs_fold_locked(core, get_jiffies_64(), NULL);
	if (err)
		goto out;
	for (i = 0; i < n && !err; i++) {
		if (op == NFG_RS_OP_ADD)
			err = rs_add(&u, &r[i]);
		else
			err = rs_del(&u, &r[i]);
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	if (!err && u.changed)
		err = rs_publish_charged(core, 0, false);
	if (err && u.changed)
		rs_rollback(&u);
	rs_spare_free(&u);
out:
	up_write(&core->lock);
	return err;
}

void nfg_rs_core_flush(struct nfg_rs_core *core)
{
	struct nfg_rs_array *old;
	struct rb_root root;

	down_write(&core->lock);
	rs_dyn_clear(rcu_dereference_protected(core->dyn,
					       lockdep_is_held(&core->lock)));
	old = rcu_dereference_protected(core->arr, lockdep_is_held(&core->lock));
	RCU_INIT_POINTER(core->arr, NULL);
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
	err = rs_fold_locked(core, now, expired);
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
	const struct nfg_rs_node *n;
	bool hit;

	if (!nfg_rs_range_valid(r, core->v6))
		return false;

	down_write(&core->lock);
	/* On failure the entries stay dynamic: the answer leaves them out. */
	rs_fold_locked(core, get_jiffies_64(), NULL);
	n = rs_first_end_ge(&core->root, &r->start);
	hit = n && rs_key_le(&n->r.start, &r->start) &&
	      rs_key_le(&r->end, &n->r.end);
	up_write(&core->lock);
	return hit;
}

/* Exchange the contents (ranges and maxelem) of two sets of one family. */
int nfg_rs_core_swap(struct nfg_rs_core *a, struct nfg_rs_core *b)
{
	struct nfg_rs_array *arr_a, *arr_b;
	u32 maxelem;
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
	err = rs_fold_locked(a, get_jiffies_64(), NULL);
	if (!err)
		err = rs_fold_locked(b, get_jiffies_64(), NULL);
	if (err)
		goto out;

	arr_a = rcu_dereference_protected(a->arr, lockdep_is_held(&a->lock));
	arr_b = rcu_dereference_protected(b->arr, lockdep_is_held(&b->lock));
	rcu_assign_pointer(a->arr, arr_b);
	rcu_assign_pointer(b->arr, arr_a);

	swap(a->root, b->root);
	swap(a->count, b->count);
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
	rs_fold_locked(core, get_jiffies_64(), NULL);
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
	rs_dyn_clear(rcu_dereference_protected(core->dyn, 1));
	rs_tree_free(&core->root);
	core->count = 0;
	nfg_rs_array_put(rcu_dereference_protected(core->arr, 1));
	RCU_INIT_POINTER(core->arr, NULL);
}

/* Free what a lookup may still touch; after a grace period. */
void nfg_rs_core_free(struct nfg_rs_core *core)
{
	struct nfg_rs_dyn *dyn = rcu_dereference_protected(core->dyn, 1);

	if (dyn) {
		kfree(dyn->locks);
		kvfree(dyn);
		atomic_dec(&nfg_rs_live_objects);
		RCU_INIT_POINTER(core->dyn, NULL);
	}
	free_percpu(core->stats);
	core->stats = NULL;
}
