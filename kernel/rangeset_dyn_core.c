// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard rangeset: dynamic entries, the packet path's updates (the
 * RANGESET target) beside the interval core of rangeset_core.c.
 *
 * Theory of operation
 * -------------------
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
 * Folding moves the hash into the array: copy the entries (each bucket
 * under its lock) whose change came before the copy started (a later
 * change waits for the next fold: none is folded while an earlier change
 * it overrides stays in the hash), at most NFG_RS_FOLD_MAX of them, the
 * oldest (the fold's arrays stay below INT_MAX); the result is what
 * applying them to the tree in the order of their seq would give, adds
 * with their expiries (the later expiry wins, as for the control plane)
 * and markers as deletes, so the set ends where the lookups were; entries
 * expired by then are dropped (counted as expiries). Merge fold: the
 * entries are sorted by address and merged with the published array in one
 * linear pass into the new array, without the tree (nfg_rs_merge_publish()
 * in rangeset_core.c: at each address the latest marker covering it
 * decides whether the old range counts, the adds after it give the latest
 * expiry). The tree is then left empty and stale, and rebuilt from the
 * array only when the control plane needs it (a batch ADD/DEL:
 * nfg_rs_tree_sync()); so a flood costs a sort and a pass over the array
 * per fold, not three tree descents per entry and a walk of the tree per
 * publication. When the merge's result does not fit maxelem, the fold goes
 * through the tree as before (below: it knows what a delete's split may
 * take and which adds fit). Then publish once, bump the set's generation
 * (core->gen), and unlink the copied entries unless the packet path
 * changed them meanwhile (a new seq or version: folded again next time; a
 * --exist refresh with no marker pending moves only the entry's own
 * version, not the shared seq). A lookup, and the packet path's reads of
 * the array, read the generation before the array and again after the hash
 * and retry if it moved: a reader that loaded the old array and then
 * probed the hash after the unlink would see neither the old entry nor its
 * folded range. If the adds would overflow maxelem, the tree's fold
 * applies the batch in seq order, again with only the adds whose worst
 * case still fits, and then with the markers alone: a full set never
 * wedges its fold, its expiry or the control plane. On -ENOMEM nothing
 * changes and the entries keep deciding from the hash; the expiry work
 * then expires the array's ranges without the fold (a merge of no
 * entries). A fold costs O(ranges) (the array is rebuilt) plus a sort of
 * the entries, and lookups already see the entries in the hash, so they
 * may wait there: the set's fold work (rangeset_nl.c) looks a tick after
 * the first packet-path change and every tick while entries are pending,
 * and folds only when it pays (nfg_rs_core_fold_lazy(), rs_fold_due()):
 * at the hash's bound, two entries per bucket (probes stay short; a flood
 * rebuilds the array once per that many adds, 131072 in the largest
 * hash, whatever the array's size), or an entry expired, or the set has
 * been quiet for a second, or entries have waited 5 s. The expiry work
 * folds too, into the same publication as the ranges it expires. ADD, DEL,
 * TEST, SWAP and LIST's snapshot fold first (at the current jiffies64, so
 * expired entries are dropped, not brought back), under the set's lock, so
 * they see and act on the whole set; FLUSH and the set's release drop the
 * entries. The hash stays with the set (its name, which the RANGESET rules
 * use): SWAP folds both sets first, so the entries travel with the
 * contents.
 *
 * Entries come from their own cache (nfg_rs_dent_cache, SLAB_ACCOUNT)
 * with GFP_NOWAIT: charged to the memcg of the task that adds where there
 * is one (an OUTPUT hook, a control-plane single add), not in softirq,
 * where there is none (the hash itself is GFP_KERNEL_ACCOUNT, and maxelem
 * bounds the entries). A fold (or flush) frees the entries it unlinked in
 * one batch (struct rs_dent_gc: one grace period, then a work item that
 * may reschedule), and gives back their counters in the hash once per
 * batch; one by one with call_rcu() only when the batch cannot be
 * allocated. The fold's and the expiry's allocations are
 * GFP_KERNEL_ACCOUNT: rangeset_nl.c runs those works with the set
 * creator's memcg active. Each hash counts in nfg_rs_live_objects, each
 * entry in a per-CPU count (nfg_rs_live_count() sums both), so that an
 * add touches no counter shared by every set and CPU.
 *
 * This file is also compiled by the userspace unit harness (tests/unit)
 * against a shim of the kernel headers it includes.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "rangeset_core.h"
#include "rangeset_dyn_core.h"

/*
 * Points where the unit tests (tests/unit) force an interleaving: they run
 * a control-plane operation there, as another CPU could. Nothing in the
 * kernel.
 */
enum { RS_RACE_LOOKUP, RS_RACE_ADD, RS_RACE_RESERVE, RS_RACE_FOLD, RS_RACE_COPY };
#ifndef NFG_RS_RACE_POINT
#define NFG_RS_RACE_POINT(core, where)	do { (void)(core); (void)(where); } while (0)
#endif
/* The unit tests fold through the tree alone, to compare. */
#ifndef NFG_RS_FOLD_TREE_ONLY
#define NFG_RS_FOLD_TREE_ONLY(core)	((void)(core), false)
#endif

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

static bool rs_core_lookup(struct nfg_rs_core *core,
			   const struct nfg_rs_key *key, u64 now)
{
	const struct nfg_rs_dyn *dyn;
	bool hit;
	u32 gen;
	int d;

	rcu_read_lock();
	do {
		gen = nfg_rs_gen_begin(core);
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
	} while (dyn && nfg_rs_gen_changed(core, gen));
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

static void rs_dyn_pfx_get(struct nfg_rs_dyn *dyn, u8 plen)
{
	/* Fully ordered: the count is up before the bit is looked at. */
	if (atomic_inc_return(&dyn->pfx_cnt[plen]) == 1 ||
	    !test_bit(plen, dyn->pfx))
		set_bit(plen, dyn->pfx);
}

static void rs_dyn_pfx_put(struct nfg_rs_dyn *dyn, u8 plen, u32 n)
{
	if (atomic_sub_return(n, &dyn->pfx_cnt[plen]))
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
 * Packet-path entries: their own cache (SLAB_ACCOUNT: charged to the
 * memcg of the task that allocates, where there is one: an OUTPUT hook or
 * the control plane's single adds; softirq has none), counted per CPU
 * (an add touches no counter that every CPU shares; summed when read by
 * nfg_rs_live_count(): one CPU allocates, another frees), and freed in
 * batches: one per fold or flush, a grace period then a work item, not a
 * call_rcu() per entry.
 */
static struct kmem_cache *nfg_rs_dent_cache;
static int __percpu *nfg_rs_live_dents;
static struct workqueue_struct *nfg_rs_gc_wq;

/*
 * The entries one fold (or flush) unlinked, freed together after a grace
 * period (rs_dent_gc_end()); the counters they held in the hash are given
 * back once for the batch, per prefix length.
 */
struct rs_dent_gc {
	struct rcu_work		rwork;
	struct nfg_rs_dent	*first;
	u32			n;
	u32			charged;
	u32			marks;
	u32			pfx[NFG_RS_DYN_PLENS];
};

long nfg_rs_live_count(void)
{
	long sum = atomic_read(&nfg_rs_live_objects);
	int cpu;

	if (nfg_rs_live_dents)
		for_each_possible_cpu(cpu)
			sum += *per_cpu_ptr(nfg_rs_live_dents, cpu);
	return sum;
}

static void rs_dent_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(nfg_rs_dent_cache,
			container_of(head, struct nfg_rs_dent, rcu));
	this_cpu_dec(*nfg_rs_live_dents);
}

static void rs_dent_gc_work(struct work_struct *work)
{
	struct rs_dent_gc *gc = container_of(to_rcu_work(work),
					     struct rs_dent_gc, rwork);
	struct nfg_rs_dent *e, *next;
	u32 n = 0;

	for (e = gc->first; e; e = next) {
		next = e->gc_next;
		kmem_cache_free(nfg_rs_dent_cache, e);
		if (++n % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	this_cpu_sub(*nfg_rs_live_dents, n);
	kfree(gc);
}

/* A batch for the entries about to be unlinked; NULL: one by one. */
static struct rs_dent_gc *rs_dent_gc_begin(void)
{
	return kzalloc(sizeof(struct rs_dent_gc),
		       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
}

/*
 * After the unlinks (under no bucket lock): give back what the batch's
 * entries held, then free them after a grace period. Process context.
 */
static void rs_dent_gc_end(struct nfg_rs_dyn *dyn, struct rs_dent_gc *gc)
{
	unsigned int plen;

	if (!gc)
		return;
	if (!gc->n) {
		kfree(gc);
		return;
	}
	for (plen = 0; plen < NFG_RS_DYN_PLENS; plen++)
		if (gc->pfx[plen])
			rs_dyn_pfx_put(dyn, plen, gc->pfx[plen]);
	if (gc->charged)
		atomic_sub(gc->charged, &dyn->count);
	if (gc->marks)
		atomic_sub(gc->marks, &dyn->marks);
	atomic_sub(gc->n, &dyn->entries);
	INIT_RCU_WORK(&gc->rwork, rs_dent_gc_work);
	queue_rcu_work(nfg_rs_gc_wq, &gc->rwork);
}

/**
 * nfg_rs_dyn_init - the packet-path entries' cache and batch frees
 *
 * Module init, before any set exists.
 *
 * Return: 0 or -ENOMEM.
 */
int nfg_rs_dyn_init(void)
{
	nfg_rs_live_dents = alloc_percpu(int);
	if (!nfg_rs_live_dents)
		goto err;
	nfg_rs_dent_cache = kmem_cache_create("nfg_rs_dent",
					      sizeof(struct nfg_rs_dent), 0,
					      SLAB_ACCOUNT, NULL);
	if (!nfg_rs_dent_cache)
		goto err_pcpu;
	nfg_rs_gc_wq = alloc_workqueue("nfg_rs_gc", WQ_UNBOUND, 0);
	if (!nfg_rs_gc_wq)
		goto err_cache;
	return 0;

err_cache:
	kmem_cache_destroy(nfg_rs_dent_cache);
err_pcpu:
	free_percpu(nfg_rs_live_dents);
	nfg_rs_live_dents = NULL;
err:
	return -ENOMEM;
}

/**
 * nfg_rs_dyn_exit - undo nfg_rs_dyn_init()
 *
 * Module exit, after every set is gone: waits for the entries' frees.
 */
void nfg_rs_dyn_exit(void)
{
	/* the single frees, and the batches' grace periods (they queue) */
	rcu_barrier();
	/* runs the batches' frees, then goes away */
	destroy_workqueue(nfg_rs_gc_wq);
	WARN_ON_ONCE(nfg_rs_live_count());
	kmem_cache_destroy(nfg_rs_dent_cache);
	free_percpu(nfg_rs_live_dents);
	nfg_rs_live_dents = NULL;
}

/*
 * Reserve a slot of maxelem for one entry: ranges in the published array
 * plus @count stay <= maxelem. A compare-and-swap loop, so that adds on
 * several CPUs never overshoot together; the array is read again after
 * the (fully ordered) cmpxchg, because a control-plane publication may
 * have grown it and given its charge back meanwhile (nfg_rs_publish()):
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

/*
 * A pending add expires at @exp (0: never): keep dyn->min_exp at most
 * that. A compare-and-swap loop; in a flood with one timeout every new
 * expiry is later than the minimum, so it only reads the shared line.
 */
static void rs_dyn_exp_note(struct nfg_rs_dyn *dyn, u64 exp)
{
	s64 old = atomic64_read(&dyn->min_exp), prev;

	while (exp && (!old || exp < (u64)old)) {
		prev = atomic64_cmpxchg(&dyn->min_exp, old, exp);
		if (prev == old)
			break;
		old = prev;
	}
}

/*
 * Link a new entry in bucket @b; under the bucket's lock, its mark
 * (marker) and its slot (@charged: every add, a control-plane marker)
 * taken, and given back here on failure.
 */
static int rs_dyn_link(struct nfg_rs_dyn *dyn, u32 b,
		       const struct nfg_rs_key *key, u8 plen, u64 expires,
		       bool del, bool charged)
{
	struct nfg_rs_dent *e;

	/*
	 * Softirq: no reclaim. Not charged to a memcg (no process to take
	 * it from); the set's maxelem bounds the total.
	 */
	e = kmem_cache_alloc(nfg_rs_dent_cache, GFP_NOWAIT | __GFP_NOWARN);
	if (!e) {
		if (del)
			atomic_dec(&dyn->marks);
		if (charged)
			atomic_dec(&dyn->count);
		return -ENOMEM;
	}
	this_cpu_inc(*nfg_rs_live_dents);
	/* counted before it takes its seq: see rs_fold_copy() */
	atomic_inc(&dyn->entries);
	e->key = *key;
	e->plen = plen;
	e->expires = expires;
	e->del = del;
	e->charged = charged;
	e->seq = atomic64_inc_return(&dyn->seq);
	e->ver = 0;
	if (!del)
		rs_dyn_exp_note(dyn, expires);
	/* The bit goes up first: a lookup that finds the entry probes it. */
	rs_dyn_pfx_get(dyn, plen);
	RCU_INIT_POINTER(e->next, rcu_dereference(dyn->buckets[b]));
	rcu_assign_pointer(dyn->buckets[b], e);
	return 0;
}

/*
 * Unlink @e from bucket @b (under its lock) and free it after a grace
 * period: into the batch @gc, which gives back its counters later, or
 * on its own (@gc NULL).
 */
static void rs_dyn_unlink(struct nfg_rs_dyn *dyn, u32 b, struct nfg_rs_dent *e,
			  struct rs_dent_gc *gc)
{
	struct nfg_rs_dent __rcu **pp = &dyn->buckets[b];
	struct nfg_rs_dent *cur;

	while ((cur = rcu_dereference(*pp))) {
		if (cur == e && gc) {
			rcu_assign_pointer(*pp, rcu_dereference(e->next));
			gc->pfx[e->plen]++;
			gc->charged += e->charged;
			gc->marks += e->del;
			gc->n++;
			/* e->next stays for readers still on it */
			e->gc_next = gc->first;
			gc->first = e;
			return;
		}
		if (cur == e) {
			rcu_assign_pointer(*pp, rcu_dereference(e->next));
			rs_dyn_pfx_put(dyn, e->plen, 1);
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

/*
 * Record a change of the entry; under its lock. It takes a new place in
 * the order of changes (@order: it turns into or out of a marker, or
 * markers are pending that it must now come after), else only its
 * version moves: a --exist refresh of a flood's entries then touches no
 * cache line shared by all CPUs. Either tells the fold it changed.
 */
static void rs_dent_touch(struct nfg_rs_dyn *dyn, struct nfg_rs_dent *e,
			  bool order)
{
	if (order)
		WRITE_ONCE(e->seq, atomic64_inc_return(&dyn->seq));
	WRITE_ONCE(e->ver, e->ver + 1);
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

/*
 * nfg_rs_dyn_add(), counted (@count) as a packet-path add, or from the
 * control plane (nfg_rs_core_update1(): not counted, -EAGAIN if a delete
 * marker is pending).
 */
static int rs_dyn_add(struct nfg_rs_core *core, const struct nfg_rs_key *addr,
		      u8 plen, u64 expires, bool exist, u64 now, bool count)
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
	/*
	 * A control-plane add (not @count) must end as the whole path would:
	 * with a delete marker pending, folding into one entry the adds and
	 * deletes around it could give a part the wrong expiry. Leave it to
	 * the whole path then.
	 */
	if (!count && atomic_read(&dyn->marks)) {
		ret = -EAGAIN;
		goto out;
	}
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
		/* --exist refreshes; the later expiry wins (0: never) */
		if (e->del || (exp && exp <= now))
			WRITE_ONCE(e->expires, expires);
		else if (exist)
			WRITE_ONCE(e->expires,
				   exp && expires ? max(exp, expires) : 0);
		rs_dyn_exp_note(dyn, e->expires);
		rs_dent_touch(dyn, e, e->del || atomic_read(&dyn->marks));
		if (e->del) {
			WRITE_ONCE(e->del, 0);
			atomic_dec(&dyn->marks);
		}
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
		gen = nfg_rs_gen_begin(core);
		covered = !exist && !atomic_read(&dyn->marks) &&
			  nfg_rs_array_covers(rcu_dereference(core->arr), &key,
					      &end, now);
		NFG_RS_RACE_POINT(core, RS_RACE_ADD);
	} while (nfg_rs_gen_changed(core, gen));
	if (covered)
		goto out;
	if (!rs_dyn_reserve(core, dyn)) {
		ret = -ENOSPC;
		goto out;
	}
	ret = rs_dyn_link(dyn, b, &key, plen, expires, false, true);
	if (!ret)
		ret = NFG_RS_DYN_DONE;
out:
	spin_unlock_bh(lock);
	rcu_read_unlock();
	if (!count)
		return ret;
	if (ret == NFG_RS_DYN_DONE)
		this_cpu_inc(core->stats->dyn_adds);
	else if (ret < 0)
		this_cpu_inc(core->stats->dyn_refused);
	return ret;
}

/* nfg_rs_dyn_del(), counted (@count) as a packet-path delete or not. */
static int rs_dyn_del(struct nfg_rs_core *core, const struct nfg_rs_key *addr,
		      u8 plen, bool count)
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
		rs_dent_touch(dyn, e, true);
		ret = NFG_RS_DYN_DONE;
		goto out;
	}
	do {
		gen = nfg_rs_gen_begin(core);
		some = atomic_read(&dyn->count) ||
		       nfg_rs_array_overlaps(rcu_dereference(core->arr), &key, &end);
	} while (nfg_rs_gen_changed(core, gen));
	if (!some)
		goto out;
	if (!rs_dyn_mark_room(core, dyn)) {
		ret = -ENOSPC;
		goto out;
	}
	/*
	 * The control plane's DEL refuses to split past maxelem: its marker
	 * takes a slot for the split it may make (none left: the whole path
	 * answers exactly).
	 */
	if (!count && !rs_dyn_reserve(core, dyn)) {
		atomic_dec(&dyn->marks);
		ret = -ENOSPC;
		goto out;
	}
	ret = rs_dyn_link(dyn, b, &key, plen, 0, true, !count);
	if (!ret)
		ret = NFG_RS_DYN_DONE;
out:
	spin_unlock_bh(lock);
	rcu_read_unlock();
	if (!count)
		return ret;
	if (ret == NFG_RS_DYN_DONE)
		this_cpu_inc(core->stats->dyn_dels);
	else if (ret < 0)
		this_cpu_inc(core->stats->dyn_refused);
	return ret;
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
	return rs_dyn_add(core, addr, plen, expires, exist, now, true);
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
 * and the next fold deletes the prefix from the set (in the new array of
 * a merge fold, or through the tree when the fold falls back to it) and
 * drops the marker. Deletes never take a slot of maxelem: a full set
 * takes them.
 *
 * Return: NFG_RS_DYN_DONE, NFG_RS_DYN_NOOP (not in the set), -ENOSPC
 * (maxelem markers pending) or -ENOMEM (counted as refusals).
 */
int nfg_rs_dyn_del(struct nfg_rs_core *core, const struct nfg_rs_key *addr,
		   u8 plen)
{
	return rs_dyn_del(core, addr, plen, true);
}

/* Is @r exactly one prefix? Its length, or -1. */
static int rs_range_plen(const struct nfg_rs_range *r, bool v6)
{
	struct nfg_rs_key k, end;
	int plen;

	for (plen = v6 ? 128 : 32; plen >= 0; plen--) {
		k = r->start;
		nfg_rs_key_mask(&k, plen, v6);
		/* host bits at this length: at every shorter one too */
		if (k.hi != r->start.hi || k.lo != r->start.lo)
			return -1;
		rs_key_prefix_end(&end, &k, plen, v6);
		if (end.hi == r->end.hi && end.lo == r->end.lo)
			return plen;
	}
	return -1;
}

/**
 * nfg_rs_core_update1 - one prefix from the control plane, through the hash
 * @core: the set (its dynamic hash enabled, else -EAGAIN)
 * @r: the range (ADD: with its expiry)
 * @op: NFG_RS_OP_ADD or NFG_RS_OP_DEL
 * @now: the current time (jiffies64)
 *
 * What a packet-path update does (an add takes the later expiry where the
 * set holds the prefix already, as the control plane's ADD does), not
 * counted as one: the set's fold work publishes it a tick later, so one
 * address added to a large set costs a hash insert, not an array rebuild.
 * Lookups, TEST and listings see it at once. Process context.
 *
 * Return: 0 (done, or nothing to do) or -EAGAIN: not one valid prefix, no
 * hash, no room or no memory in it; nothing changed, and
 * nfg_rs_core_update() gives the exact answer.
 */
int nfg_rs_core_update1(struct nfg_rs_core *core, const struct nfg_rs_range *r,
			enum nfg_rs_op op, u64 now)
{
	int plen, ret;

	if (!nfg_rs_range_valid(r, core->v6) || !rcu_access_pointer(core->dyn))
		return -EAGAIN;
	plen = rs_range_plen(r, core->v6);
	if (plen < 0)
		return -EAGAIN;
	if (op == NFG_RS_OP_ADD)
		ret = rs_dyn_add(core, &r->start, plen, r->expires, true, now,
				 false);
	else
		ret = rs_dyn_del(core, &r->start, plen, false);
	return ret < 0 ? -EAGAIN : 0;
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

/* ---- dynamic entries: folding into the set ----------------------------- */

/* A copy of a dynamic entry taken by a fold. */
struct rs_fold_ent {
	struct nfg_rs_mop	m;	/* start = the entry's key */
	u32			ver;
	u32			b;	/* its bucket */
	u8			plen;
	u8			charged;
};

struct rs_fold {
	struct rs_fold_ent	*ents;
	u32			n;
	u32			charged;	/* copies holding a slot */
	u32			splits;		/* ranges added by deletes */
	u32			expired;	/* entries dropped as expired */
	u32			refused;	/* entries dropped: no room */
	u64			min_exp;	/* earliest expiry of a copied add */
};

/* How much of the batch a fold applies: see "Dynamic entries" above. */
enum rs_fold_mode {
	RS_FOLD_ALL,
	RS_FOLD_FITTING,	/* markers, and adds whose worst case fits */
	RS_FOLD_MARKERS,	/* markers only: every add refused */
};

static int rs_fold_ent_cmp(const void *a, const void *b)
{
	u64 x = ((const struct rs_fold_ent *)a)->m.seq;
	u64 y = ((const struct rs_fold_ent *)b)->m.seq;

	return x < y ? -1 : x > y;
}

/* Adds in address order (then longer prefixes first: they are inside). */
static int rs_fold_key_cmp(const void *a, const void *b)
{
	const struct rs_fold_ent *x = a, *y = b;

	if (x->m.start.hi != y->m.start.hi)
		return x->m.start.hi < y->m.start.hi ? -1 : 1;
	if (x->m.start.lo != y->m.start.lo)
		return x->m.start.lo < y->m.start.lo ? -1 : 1;
	return (x->plen < y->plen) - (x->plen > y->plen);
}

/*
 * Order the copies for applying: by seq (@by_key false), or with each
 * run of adds between two markers in address order. Adds commute (each
 * part ends with the latest of the expiries that cover it, see the top of
 * rangeset_core.c), so the tree ends the same; in address order each
 * insert walks down next to the previous one, through nodes still in the
 * cache, instead of through a random path of a large tree.
 */
static void rs_fold_order(struct rs_fold *f, bool by_key)
{
	u32 i = 0, j;

	if (!f->n)
		return;
	sort(f->ents, f->n, sizeof(*f->ents), rs_fold_ent_cmp, NULL);
	while (by_key && i < f->n) {
		if (f->ents[i].m.del) {
			i++;
			continue;
		}
		for (j = i; j < f->n && !f->ents[j].m.del; j++)
			;
		sort(f->ents + i, j - i, sizeof(*f->ents), rs_fold_key_cmp,
		     NULL);
		i = j;
	}
}

/*
 * Most entries one fold takes. Its arrays (the copies, 72 bytes each, and
 * rs_fold_merge()'s sort keys and pointers, 72 more) then stay far below
 * INT_MAX, the most kvmalloc() gives; more can be pending only after folds
 * failed for long (up to maxelem adds and maxelem markers, 32M): the
 * oldest changes fold first, the rest at the next fold. A variable for
 * the unit tests.
 */
#define NFG_RS_FOLD_MAX		BIT(24)
static u32 nfg_rs_fold_max = NFG_RS_FOLD_MAX;

/* Bins of a histogram pass of rs_fold_seq_limit(). */
#define RS_SEQ_SHIFT		8
#define RS_SEQ_BINS		BIT(RS_SEQ_SHIFT)

/*
 * Pass over the hash: count the entries whose seq is in [@lo, @lo +
 * RS_SEQ_BINS * @w) into @bins (bin (seq - lo) / w). Under core->lock
 * for writing; each bucket under its lock.
 */
static void rs_fold_seq_hist(struct nfg_rs_dyn *dyn, u64 lo, u64 w, u32 *bins)
{
	struct nfg_rs_dent *e;
	u32 b;

	memset(bins, 0, RS_SEQ_BINS * sizeof(*bins));
	for (b = 0; b <= dyn->hmask; b++) {
		spinlock_t *lock = &dyn->locks[b & dyn->lmask];

		if (!rcu_access_pointer(dyn->buckets[b]))
			continue;
		rcu_read_lock();
		spin_lock_bh(lock);
		for (e = rcu_dereference(dyn->buckets[b]); e;
		     e = rcu_dereference(e->next))
			if (e->seq >= lo && (e->seq - lo) / w < RS_SEQ_BINS)
				bins[(e->seq - lo) / w]++;
		spin_unlock_bh(lock);
		rcu_read_unlock();
		if ((b + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
}

/*
 * More than @max entries have a seq <= @top: the highest seq T such that
 * at most @max of them have a seq <= T (and at least one does), so that a
 * fold takes the oldest changes (a later change must never be folded
 * while an earlier one it overrides stays in the hash). seqs are unique;
 * the entries at or below @top only move above it (a change takes a new
 * seq) while the caller holds core->lock, so their count only drops
 * between passes. Histogram passes, each narrowing the range 256 times.
 *
 * Return: T, or 0 on -ENOMEM (*@err set).
 */
static u64 rs_fold_seq_limit(struct nfg_rs_dyn *dyn, u64 top, u32 max,
			     int *err)
{
	u64 lo = 1, w, below = 0, t = 0;
	u32 *bins, i;

	bins = kvmalloc_array(RS_SEQ_BINS, sizeof(*bins), GFP_KERNEL_ACCOUNT);
	if (!bins) {
		*err = -ENOMEM;
		return 0;
	}
	for (;;) {
		w = ((top - lo) >> RS_SEQ_SHIFT) + 1;
		rs_fold_seq_hist(dyn, lo, w, bins);
		for (i = 0; i < RS_SEQ_BINS && below + bins[i] <= max; i++)
			below += bins[i];
		/* all of [lo, top] fits: the count dropped meanwhile */
		if (i == RS_SEQ_BINS || lo + i * w > top) {
			t = top;
			break;
		}
		/* what is below bin i fits and holds some: take it */
		if (below) {
			t = lo + i * w - 1;
			break;
		}
		/* one seq per bin: only if @max is 0 */
		if (w == 1) {
			t = lo + i - 1;
			break;
		}
		/* look inside bin i */
		lo += i * w;
		top = min(top, lo + w - 1);
	}
	kvfree(bins);
	return t;
}

/*
 * Copy the dynamic entries into @f, bucket by bucket: those whose change
 * came before the copy started (seq at most dyn->seq then), or the
 * oldest nfg_rs_fold_max of them. Changes made while we copy take a
 * later seq: they wait for the next fold, and no later change is folded
 * while an earlier one it overrides stays in the hash. Under core->lock
 * for writing; each bucket under its lock, so that an entry's fields are
 * copied whole. The hash is left as it is: rs_fold_finish() removes the
 * copied entries once the caller has published the result.
 */
static int rs_fold_copy(struct nfg_rs_core *core, struct rs_fold *f)
{
	struct nfg_rs_dyn *dyn;
	struct nfg_rs_dent *e;
	int err = 0;
	u32 cap, b;
	u64 top;

	memset(f, 0, sizeof(*f));
	dyn = rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock));
	if (!dyn || !atomic_read(&dyn->entries))
		return 0;
	/*
	 * Entries added while we copy wait for the next fold, and note
	 * their expiries again; rs_fold_finish() notes those of the
	 * copies it leaves in the hash.
	 */
	atomic64_set(&dyn->min_exp, 0);
	/*
	 * An entry counts in dyn->entries before it takes its seq (fully
	 * ordered): read the seq first, and every entry at or below it is
	 * counted in @cap (only folds, under core->lock, unlink).
	 */
	top = atomic64_read(&dyn->seq);
	smp_rmb();	/* seq before entries; pairs with rs_dyn_link() */
	cap = atomic_read(&dyn->entries);
	if (cap > nfg_rs_fold_max) {
		top = rs_fold_seq_limit(dyn, top, nfg_rs_fold_max, &err);
		if (err)
			return err;
		cap = nfg_rs_fold_max;
	}
	f->ents = kvmalloc_array(cap, sizeof(*f->ents),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!f->ents)
		return -ENOMEM;
	for (b = 0; b <= dyn->hmask && f->n < cap; b++) {
		spinlock_t *lock = &dyn->locks[b & dyn->lmask];

		NFG_RS_RACE_POINT(core, RS_RACE_COPY);
		if (!rcu_access_pointer(dyn->buckets[b]))
			continue;
		rcu_read_lock();
		spin_lock_bh(lock);
		for (e = rcu_dereference(dyn->buckets[b]); e && f->n < cap;
		     e = rcu_dereference(e->next)) {
			struct rs_fold_ent *c;

			if (e->seq > top)
				continue;
			c = &f->ents[f->n++];
			c->m.start = e->key;
			rs_key_prefix_end(&c->m.end, &e->key, e->plen,
					  core->v6);
			c->b = b;
			c->plen = e->plen;
			c->m.expires = e->expires;
			c->m.seq = e->seq;
			c->ver = e->ver;
			c->m.del = e->del;
			c->charged = e->charged;
			f->charged += e->charged;
			if (!c->m.del && c->m.expires &&
			    (!f->min_exp || c->m.expires < f->min_exp))
				f->min_exp = c->m.expires;
		}
		spin_unlock_bh(lock);
		rcu_read_unlock();
		if ((b + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
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

		if (!c->m.del && now && c->m.expires && c->m.expires <= now) {
			f->expired++;
			continue;
		}
		/* An add may split a range of another expiry in three. */
		if (!c->m.del && (mode == RS_FOLD_MARKERS ||
				  (mode == RS_FOLD_FITTING &&
				   (u64)core->count + 2 + others >
				   (u64)core->maxelem + f->splits))) {
			f->refused++;
			continue;
		}
		r.start = c->m.start;
		rs_key_prefix_end(&r.end, &c->m.start, c->plen, core->v6);
		r.expires = c->m.expires;
		before = core->count;
		err = c->m.del ? nfg_rs_tree_del(u, &r) : nfg_rs_tree_add(u, &r);
		if (err)
			return err;
		/* a charged marker's slot covers its split */
		if (c->m.del && !c->charged && core->count > before)
			f->splits += core->count - before;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	return 0;
}

/*
 * After the fold is in the set (@ok: merged into a new array, or applied
 * to the tree and published from it by the fallback, or nothing to
 * change), remove from the hash each entry the fold copied, unless the
 * packet path changed it meanwhile (its seq or version moved): that one
 * is folded again next time.
 */
static void rs_fold_finish(struct nfg_rs_core *core, struct rs_fold *f,
			   bool ok)
{
	struct rs_dent_gc *gc = NULL;
	struct nfg_rs_dyn *dyn;
	struct nfg_rs_dent *e;
	u32 i, j, b;

	dyn = rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock));
	/* nothing folded: the copies' expiries are pending again */
	if (!ok && dyn)
		rs_dyn_exp_note(dyn, f->min_exp);
	if (ok && dyn && f->n)
		gc = rs_dent_gc_begin();
	/*
	 * The copies come bucket by bucket: one lock for each bucket's run.
	 * Except after the fallback through the tree, where rs_fold_order()
	 * re-sorted f->ents (by seq, adds by address): each entry carries
	 * its bucket (->b), so a run there is mostly one entry, one lock per
	 * entry.
	 */
	for (i = 0; ok && dyn && i < f->n; i = j) {
		spinlock_t *lock;	/* the bucket's lock: see struct nfg_rs_dyn */

		b = f->ents[i].b;
		lock = &dyn->locks[b & dyn->lmask];
		rcu_read_lock();
		spin_lock_bh(lock);
		for (j = i; j < f->n && f->ents[j].b == b; j++) {
			const struct rs_fold_ent *c = &f->ents[j];

			e = rs_dyn_find(dyn, b, &c->m.start, c->plen);
			if (e && e->seq == c->m.seq && e->ver == c->ver)
				rs_dyn_unlink(dyn, b, e, gc);
			else if (e && !e->del)
				rs_dyn_exp_note(dyn, e->expires);
		}
		spin_unlock_bh(lock);
		rcu_read_unlock();
		if (j / NFG_RS_RESCHED_EVERY != i / NFG_RS_RESCHED_EVERY)
			cond_resched();
	}
	rs_dent_gc_end(dyn, gc);
	if (ok && f->expired)
		WRITE_ONCE(core->expiries, core->expiries + f->expired);
	if (ok && f->refused)
		this_cpu_add(core->stats->dyn_refused, f->refused);
	kvfree(f->ents);
	f->ents = NULL;
}

/*
 * Sort key of a copy for the merge: its start, then its prefix length
 * (the shorter first: a prefix before those inside it), and where it is.
 * IPv4: start and length packed in @lo (start << 8 | plen), @hi 0.
 */
struct rs_sort_key {
	u64	hi;
	u64	lo;
	u32	plen;
	u32	idx;
};

static int rs_sort_key_cmp(const void *a, const void *b)
{
	const struct rs_sort_key *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->plen > y->plen) - (x->plen < y->plen);
}

/*
 * IPv4: a radix sort on the 5 bytes of the packed key (stable, least
 * significant first; a byte all keys share costs no pass), n log n
 * comparisons fewer than sort()'s heapsort for a flood's entries. @tmp
 * holds as many keys as @k, @cnt 256 counters (not on the stack); the
 * result ends in *@out (@k or @tmp). Process context.
 */
static void rs_radix_sort4(struct rs_sort_key *k, struct rs_sort_key *tmp,
			   u32 *cnt, u32 n, struct rs_sort_key **out)
{
	struct rs_sort_key *src = k, *dst = tmp, *t;
	unsigned int shift;
	u32 i, sum, c;

	for (shift = 0; shift < 40; shift += 8) {
		memset(cnt, 0, 256 * sizeof(*cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i].lo >> shift) & 0xff]++;
		if (cnt[(src[0].lo >> shift) & 0xff] == n)
			continue;
		for (i = 0, sum = 0; i < 256; i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i].lo >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
		cond_resched();
	}
	*out = src;
}

/*
 * The merge fold (see "Merge fold" above): the copies, less the adds
 * expired at @now (counted), sorted by address and merged with the
 * array into a new one (nfg_rs_merge_publish()), with the expiry of the
 * ranges expired at @now if @expired is given. Under core->lock for
 * writing.
 *
 * Return: 0, -ENOMEM (nothing changed), or -ENOSPC / -EINVAL: nothing
 * changed, the caller folds through the tree.
 */
static int rs_fold_merge(struct nfg_rs_core *core, struct rs_fold *f,
			 u64 now, u32 *expired)
{
	struct rs_sort_key *keys = NULL, *sorted;
	struct nfg_rs_mop **ops = NULL;
	u32 *cnt = NULL, i, n = 0, count;
	size_t size;
	int err;

	f->expired = 0;
	f->refused = 0;
	f->splits = 0;
	if (!f->n && (!expired || !core->next_expiry ||
		      core->next_expiry > now))
		return 0;
	if (f->n) {
		/*
		 * The keys, twice for the radix sort, the pointers, then the
		 * radix sort's counters (f->n <= nfg_rs_fold_max: far below
		 * INT_MAX).
		 */
		size = size_add(array_size(f->n, 2 * sizeof(*keys) +
					   sizeof(*ops)),
				256 * sizeof(*cnt));
		keys = kvmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!keys)
			return -ENOMEM;
		ops = (struct nfg_rs_mop **)(keys + 2 * (size_t)f->n);
		cnt = (u32 *)(ops + f->n);
	}
	for (i = 0; i < f->n; i++) {
		struct rs_fold_ent *c = &f->ents[i];
		struct rs_sort_key *k = &keys[n];

		if (!c->m.del && now && c->m.expires && c->m.expires <= now) {
			f->expired++;
			continue;
		}
		k->hi = c->m.start.hi;
		k->lo = core->v6 ? c->m.start.lo : c->m.start.lo << 8 | c->plen;
		k->plen = c->plen;
		k->idx = i;
		n++;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	sorted = keys;
	if (n > 1 && !core->v6)
		rs_radix_sort4(keys, keys + f->n, cnt, n, &sorted);
	else if (n > 1)
		sort(keys, n, sizeof(*keys), rs_sort_key_cmp, NULL);
	for (i = 0; i < n; i++) {
		ops[i] = &f->ents[sorted[i].idx].m;
		if ((i + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	err = nfg_rs_merge_publish(core, ops, n, now, !!expired, f->charged,
				   &count);
	kvfree(keys);
	if (err)
		return err;
	if (count)
		WRITE_ONCE(core->expiries, core->expiries + count);
	if (expired)
		*expired = count + f->expired;
	return 0;
}

/* ---- the merge's overlay of the entries -------------------------------- */

/**
 * nfg_rs_overlay_start - walk the overlay of a fold's entries
 * @ov: the walk
 * @ops: the entries, sorted by start (then the shorter prefix first)
 * @n: how many
 * @v6: the set's family
 */
void nfg_rs_overlay_start(struct nfg_rs_overlay *ov,
			  struct nfg_rs_mop *const *ops, u32 n, bool v6)
{
	ov->ops = ops;
	ov->n = n;
	ov->v6 = v6;
	ov->bad = false;
	ov->i = 0;
	ov->depth = 0;
}

/* What the chain of entries on the stack makes of the addresses it covers. */
static void rs_overlay_chain(const struct nfg_rs_overlay *ov,
			     struct nfg_rs_piece *p)
{
	u64 d = 0;
	u32 i;

	for (i = 0; i < ov->depth; i++)
		if (ov->stack[i]->del && ov->stack[i]->seq > d)
			d = ov->stack[i]->seq;
	p->kill = d != 0;
	p->add = false;
	for (i = 0; i < ov->depth; i++) {
		const struct nfg_rs_mop *op = ov->stack[i];

		if (op->del || op->seq < d)
			continue;
		p->exp = p->add ? rs_exp_later(p->exp, op->expires) : op->expires;
		p->add = true;
	}
}

/**
 * nfg_rs_overlay_next - the next piece of the overlay
 * @ov: the overlay (nfg_rs_overlay_start())
 * @p: set to the piece: addresses covered by the same chain of entries
 *
 * Pieces come in ascending order. Entries that do not nest (a bug) set
 * @ov->bad and end the walk.
 *
 * Return: false when none is left.
 */
bool nfg_rs_overlay_next(struct nfg_rs_overlay *ov, struct nfg_rs_piece *p)
{
	struct nfg_rs_mop *top, *nx;

	for (;;) {
		if (!ov->depth) {
			if (ov->i >= ov->n)
				return false;
			ov->stack[ov->depth++] = ov->ops[ov->i++];
			ov->x = ov->stack[0]->start;
			continue;
		}
		top = ov->stack[ov->depth - 1];
		nx = ov->i < ov->n ? ov->ops[ov->i] : NULL;
		if (nx && rs_key_le(&nx->start, &top->end)) {
			/* prefixes nest: nx lies inside top */
			if (WARN_ON_ONCE(rs_key_cmp(&nx->end, &top->end) > 0 ||
					 ov->depth >= ARRAY_SIZE(ov->stack))) {
				ov->bad = true;
				return false;
			}
			if (rs_key_cmp(&nx->start, &ov->x) > 0) {
				/* top's part before nx; nx->start > x >= 0 */
				p->s = ov->x;
				p->e = nx->start;
				rs_key_dec(&p->e);
				rs_overlay_chain(ov, p);
				ov->x = nx->start;
				ov->stack[ov->depth++] = nx;
				ov->i++;
				return true;
			}
			ov->stack[ov->depth++] = nx;
			ov->i++;
			continue;
		}
		/* top's rest: the next entry starts after it */
		if (!rs_key_le(&ov->x, &top->end)) {
			ov->depth--;
			continue;
		}
		p->s = ov->x;
		p->e = top->end;
		rs_overlay_chain(ov, p);
		ov->depth--;
		if (rs_key_is_max(&top->end, ov->v6)) {
			/* so do the entries below it, and none comes after */
			ov->depth = 0;
			ov->i = ov->n;
		} else {
			ov->x = top->end;
			rs_key_inc(&ov->x);
		}
		return true;
	}
}

/*
 * Fold and publish, in one publication with the expiry of the ranges
 * expired at @now if @expired is given (set to the ranges and entries
 * expired). Under core->lock for writing. A batch whose adds would
 * overflow maxelem is applied again with fewer of them (enum
 * rs_fold_mode); markers are always applied, so only -ENOMEM leaves the
 * set and the hash as they were.
 */
int nfg_rs_fold_locked(struct nfg_rs_core *core, u64 now, u32 *expired)
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
	err = NFG_RS_FOLD_TREE_ONLY(core) ? -EINVAL :
	      rs_fold_merge(core, &f, now, expired);
	if (err != -ENOSPC && err != -EINVAL)
		goto done;
	/* through the tree: it knows the splits, and what fits */
	err = nfg_rs_tree_sync(core);
	if (err)
		goto done;
	for (;;) {
		/* a fold short of room applies its adds in their order */
		rs_fold_order(&f, mode == RS_FOLD_ALL);
		err = rs_fold_apply(&u, &f, now, mode);
		count = !err && expired ? nfg_rs_tree_expire(&u, now) : 0;
		if (!err && (u.changed || count))
			err = nfg_rs_publish(core, f.charged + f.splits,
					     mode == RS_FOLD_MARKERS);
		if (err && (u.changed || count)) {
			nfg_rs_tree_rollback(&u);
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
	nfg_rs_update_end(&u);
done:
	rs_fold_finish(core, &f, !err);
	if (!err) {
		struct nfg_rs_dyn *dyn;

		dyn = rcu_dereference_protected(core->dyn,
						lockdep_is_held(&core->lock));
		if (dyn)
			WRITE_ONCE(dyn->since, 0);
	}
	return err;
}

/**
 * nfg_rs_core_fold - move the dynamic entries into the set's array
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
	err = nfg_rs_fold_locked(core, now, NULL);
	up_write(&core->lock);
	return err;
}

/*
 * When a fold pays (see "Folding" above): the pending entries fill the
 * hash to NFG_RS_FOLD_LOAD entries per bucket (the lookups' probe stays
 * short, and this bounds the hash; the O(ranges + entries) rebuild is
 * spread over as many adds as the hash holds, not a share of the array's
 * size: a flood into a set of 100k ranges pays one rebuild per 131072
 * adds, not per 50k); or one of them expired (its memory and its slot of
 * maxelem go back at its time, give or take a tick); or no new change came
 * for NFG_RS_FOLD_QUIET (the set is quiet: lookups go back to the array
 * alone); or entries have been pending for NFG_RS_FOLD_WAIT (a steady
 * trickle folds that often, whatever the set's size).
 */
#define NFG_RS_FOLD_LOAD	2
#define NFG_RS_FOLD_QUIET	HZ
#define NFG_RS_FOLD_WAIT	(5 * HZ)

/* Is a fold due at @now? The fold work's single caller; any context. */
static bool rs_fold_due(struct nfg_rs_dyn *dyn, u64 now)
{
	u64 seq, exp, since;
	u32 n;

	n = atomic_read(&dyn->entries);
	seq = atomic64_read(&dyn->seq);
	exp = atomic64_read(&dyn->min_exp);
	since = READ_ONCE(dyn->since);
	if (!since) {
		since = now;
		WRITE_ONCE(dyn->since, now);
	}
	if (seq != dyn->last_seq || !dyn->quiet_since) {
		dyn->last_seq = seq;
		dyn->quiet_since = now;
	}
	return (u64)n >= (u64)NFG_RS_FOLD_LOAD * (dyn->hmask + 1) ||
	       (exp && exp <= now) ||
	       now - dyn->quiet_since >= NFG_RS_FOLD_QUIET ||
	       now - since >= NFG_RS_FOLD_WAIT;
}

/**
 * nfg_rs_core_fold_lazy - the fold work's fold: only when it pays
 * @core: the set
 * @now: the current time (jiffies64)
 * @again: set when entries are still pending: call again a tick later
 *
 * Lookups probe the hash after the array, so entries may wait there: the
 * array is rebuilt only when enough of them have come to pay for it, or
 * something else needs it (see rs_fold_due()). The control plane folds
 * whatever is pending wherever it needs the whole set, and the expiry
 * work folds with the ranges it expires. One caller at a time per set
 * (the set's fold work). Process context.
 *
 * Return: 0 (folded, or not due yet) or -ENOMEM (nothing changed).
 */
int nfg_rs_core_fold_lazy(struct nfg_rs_core *core, u64 now, bool *again)
{
	/* fixed once set, freed with the set: no lock needed to use it */
	struct nfg_rs_dyn *dyn = rcu_dereference_protected(core->dyn, 1);
	int err;

	*again = false;
	if (!dyn || !atomic_read(&dyn->entries))
		return 0;
	if (!rs_fold_due(dyn, now)) {
		*again = true;
		return 0;
	}
	NFG_RS_RACE_POINT(core, RS_RACE_FOLD);
	down_write(&core->lock);
	err = nfg_rs_fold_locked(core, now, NULL);
	up_write(&core->lock);
	*again = err || atomic_read(&dyn->entries);
	return err;
}

/* Drop every dynamic entry; under core->lock for writing (or last user). */
void nfg_rs_dyn_clear(struct nfg_rs_dyn *dyn)
{
	struct rs_dent_gc *gc;
	struct nfg_rs_dent *e;
	u32 b;

	if (!dyn || !atomic_read(&dyn->entries))
		return;
	gc = rs_dent_gc_begin();
	/* entries added meanwhile note theirs again */
	atomic64_set(&dyn->min_exp, 0);
	WRITE_ONCE(dyn->since, 0);
	for (b = 0; b <= dyn->hmask; b++) {
		spinlock_t *lock = &dyn->locks[b & dyn->lmask];

		rcu_read_lock();
		spin_lock_bh(lock);
		while ((e = rcu_dereference(dyn->buckets[b])))
			rs_dyn_unlink(dyn, b, e, gc);
		spin_unlock_bh(lock);
		rcu_read_unlock();
		if ((b + 1) % NFG_RS_RESCHED_EVERY == 0)
			cond_resched();
	}
	rs_dent_gc_end(dyn, gc);
}

/**
 * nfg_rs_dyn_enable - give the set its hash of dynamic entries
 * @core: the set
 * @seed: hash seed (random in the kernel)
 *
 * Called by each RANGESET rule's checkentry; the first one allocates.
 * Buckets: maxelem rounded up to a power of two, within [64, 65536]
 * (512 KiB of bucket heads at most, as ipset's hashsize 65536): the
 * hash holds up to NFG_RS_FOLD_LOAD entries per bucket before a fold is
 * due, so a large set takes a flood of 128k new addresses before its
 * array is rebuilt; bucket locks: at most 256.
 *
 * Return: 0 or -ENOMEM.
 */
int nfg_rs_dyn_enable(struct nfg_rs_core *core, u32 seed)
{
	struct nfg_rs_dyn *dyn;
	u32 nb = 64, nl, i;
	size_t size;
	int err = 0;

	/* fixed once set: no lock needed to see it is there */
	if (rcu_access_pointer(core->dyn))
		return 0;
	down_write(&core->lock);
	if (rcu_dereference_protected(core->dyn, lockdep_is_held(&core->lock)))
		goto out;
	while (nb < core->maxelem && nb < 65536)
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

/* Free the hash; after a grace period, with the set's last reference. */
void nfg_rs_dyn_free(struct nfg_rs_core *core)
{
	struct nfg_rs_dyn *dyn = rcu_dereference_protected(core->dyn, 1);

	if (dyn) {
		kfree(dyn->locks);
		kvfree(dyn);
		atomic_dec(&nfg_rs_live_objects);
		RCU_INIT_POINTER(core->dyn, NULL);
	}
}
