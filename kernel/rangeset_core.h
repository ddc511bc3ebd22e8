/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard rangeset: interval set core (see the theory of operation at the
 * top of rangeset_core.c, and of rangeset_dyn_core.c for the dynamic
 * entries). This header is also compiled by the userspace
 * unit harness in tests/unit against a thin shim of kernel headers.
 */
#ifndef _NFG_RANGESET_CORE_H
#define _NFG_RANGESET_CORE_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/types.h>
#include <linux/percpu.h>
#include <linux/rbtree.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>

/* Largest maxelem a set may be created with (inclusive). */
#define NFG_RS_MAXELEM_LIMIT	BIT(24)

/*
 * An address as a 128-bit host-order key: IPv6 as (hi, lo) 64-bit halves,
 * IPv4 in the low 32 bits of lo with hi == 0.
 */
struct nfg_rs_key {
	u64	hi;
	u64	lo;
};

/*
 * An inclusive range [start, end] and when it expires: 0 = never, else an
 * absolute time on the caller's clock (the kernel uses jiffies64; the
 * core only compares). DEL and TEST ignore @expires.
 */
struct nfg_rs_range {
	struct nfg_rs_key	start;
	struct nfg_rs_key	end;
	u64			expires;
};

/*
 * Immutable sorted array of disjoint ranges (adjacent ones only when their
 * expiries differ): what the packet path searches. Layout of data[]: IPv4:
 * u32 starts[count], u32 ends[count]; IPv6: struct nfg_rs_key
 * starts[count], ends[count]; then, if allocated timed, u64
 * expires[count] (read by dumps and rollbacks only, never by a lookup);
 * then the index (@idx), when @ibits is not 0.
 *
 * The index: the ranges whose start has the top @ibits bits h (of the
 * IPv4 address, of an IPv6 key's @hi) are idx[h] .. idx[h + 1] - 1, so a
 * search for the last start at or below an address looks only between
 * idx[h] - 1 and idx[h + 1] - 1: one or two cache lines instead of
 * log2(count) misses. 2^ibits <= count (no index below
 * NFG_RS_IDX_MIN ranges; at most 2^NFG_RS_IDX_MAX_BITS + 1 entries).
 */
#define NFG_RS_IDX_MIN		64
#define NFG_RS_IDX_MAX_BITS	16

struct nfg_rs_array {
	struct rcu_head	rcu;
	refcount_t	ref;
	u32		count;
	bool		v6;
	bool		timed;
	u8		ibits;
	const u32	*idx;
	size_t		memsize;
	u64		data[];
};

struct nfg_rs_stats {
	u64	lookups;
	u64	hits;
	/* Packet-path updates (the RANGESET target): see nfg_rs_dyn_add(). */
	u64	dyn_adds;
	u64	dyn_dels;
	u64	dyn_refused;
};

/* Prefix lengths 0..128: one bit each in struct nfg_rs_dyn.pfx. */
#define NFG_RS_DYN_PLENS	129

/*
 * A dynamic entry: the masked address of a packet-path add (or delete
 * marker), not yet folded into the set's array. See "Dynamic entries" at
 * the top of rangeset_dyn_core.c.
 */
struct nfg_rs_dent {
	/* Bucket chain: readers under RCU, writers under the bucket's lock. */
	struct nfg_rs_dent __rcu	*next;
	struct nfg_rs_key		key;	/* masked: the prefix's first address */
	/*
	 * The following are written under the bucket lock, read without it.
	 * @seq: order of the last packet-path change of the entry (from
	 * nfg_rs_dyn.seq): where entries overlap, the latest decides.
	 */
	u64				seq;
	u64				expires;	/* 0 = never */
	u32				ver;	/* bumped by every change */
	u8				plen;
	/* 1: delete marker (lookups miss inside it) */
	u8				del;
	/* 1: holds a slot of maxelem (nfg_rs_dyn.count) */
	u8				charged;
	/*
	 * Once unlinked: freed after a grace period on its own (@rcu) or
	 * with the other entries a fold unlinked (@gc_next, a batch).
	 */
	union {
		struct rcu_head			rcu;
		struct nfg_rs_dent		*gc_next;
	};
};

/*
 * The bounded hash of a set's dynamic entries; allocated by the first
 * RANGESET rule of the set (process context), freed with the set.
 */
struct nfg_rs_dyn {
	u32			hmask;	/* buckets - 1 */
	u32			lmask;	/* locks - 1 */
	u32			seed;
	/*
	 * Slots of maxelem held by entries (adds, and markers that were
	 * adds) and, while it publishes, by the control plane's growth of
	 * the array: published ranges + @count <= maxelem is kept with
	 * compare-and-swap loops (see rs_dyn_reserve()).
	 */
	atomic_t		count;
	/* Delete markers: their own budget (maxelem), never the adds' room. */
	atomic_t		marks;
	/* Entries linked (adds and markers). */
	atomic_t		entries;
	/* Source of nfg_rs_dent.seq; starts at 0, the first entry gets 1. */
	atomic64_t		seq;
	/*
	 * Earliest expiry of a pending add (0: none), a racy minimum: it
	 * may be earlier than the true one (an early fold, harmless), and
	 * is later only for entries a fold could not copy (then the
	 * longest wait folds them). See nfg_rs_core_fold_lazy().
	 */
	atomic64_t		min_exp;
	/*
	 * The fold work's view (nfg_rs_core_fold_lazy(), one work per set,
	 * so a single writer; a control-plane fold resets @since under the
	 * set's lock, which only brings the next fold earlier): since when
	 * entries are pending, @seq at its last look and since when it has
	 * not moved (jiffies64; 0: not seen yet).
	 */
	u64			since;
	u64			last_seq;
	u64			quiet_since;
	/* Entries per prefix length; a bit of @pfx is set while one is > 0. */
	atomic_t		pfx_cnt[NFG_RS_DYN_PLENS];
	/*
	 * Prefix lengths in use: a lookup probes only these, longest
	 * first, and none at all while the bitmap is empty.
	 */
	DECLARE_BITMAP(pfx, NFG_RS_DYN_PLENS);
	/*
	 * Hashed bucket locks (bucket & lmask): they serialise the writers
	 * of a chain (packet-path add/del, fold, flush) and the writes of an
	 * entry's expires/del; readers never take them. Hashed so that two
	 * CPUs adding different addresses rarely meet, and no CPU ever takes
	 * a lock that all of them share.
	 */
	spinlock_t		*locks;
	size_t			memsize;
	struct nfg_rs_dent __rcu *buckets[];
};

/* Results of nfg_rs_dyn_add() and nfg_rs_dyn_del() (or -errno). */
enum nfg_rs_dyn_result {
	NFG_RS_DYN_NOOP,	/* nothing to do (present / absent already) */
	NFG_RS_DYN_DONE,	/* added, refreshed, removed or marked */
};

struct nfg_rs_core {
	/*
	 * Control plane only (never taken on the packet path), and always
	 * for writing: add/del/flush/swap/expiry, and TEST and taking a
	 * snapshot too, since both fold the dynamic entries first (TEST then
	 * reads the array; the tree is a derived copy, which batch updates
	 * rebuild from the array when @tree_stale). It protects root, count,
	 * maxelem, timeout, expiries, next_expiry and the publishing of arr.
	 */
	struct rw_semaphore		lock;
	struct rb_root			root;
	/* Ranges of the set (in the array; in the tree unless @tree_stale). */
	u32				count;
	u32				maxelem;
	/* Default timeout of the set in seconds (0 = none): for rangeset_nl. */
	u32				timeout;
	bool				v6;
	/*
	 * The tree is empty and the published array alone holds the set:
	 * a merge fold (rangeset_dyn_core.c) published without it. Written
	 * under @lock (WRITE_ONCE), read without it by nfg_rs_core_info()
	 * (READ_ONCE); nfg_rs_tree_sync() builds the tree again where the
	 * control plane needs it.
	 */
	bool				tree_stale;
	/* Ranges removed by nfg_rs_core_expire(). */
	u64				expiries;
	/*
	 * Earliest expiry of a range in the published array, 0 if none.
	 * Written under @lock; read without it (READ_ONCE) to arm the
	 * expiry work, which takes @lock and looks again.
	 */
	u64				next_expiry;
	/* Packet path: read under RCU only. NULL when the set is empty. */
	struct nfg_rs_array __rcu	*arr;
	/*
	 * Publication generation: bumped (under @lock) after @arr is
	 * published and before a fold unlinks the entries it published. A
	 * reader that saw it change retries: it may have read the old array
	 * and the hash without the folded entries.
	 */
	u32				gen;
	struct nfg_rs_stats __percpu	*stats;
	/*
	 * Dynamic entries (packet-path adds/deletes): NULL until a RANGESET
	 * rule uses the set, then fixed until nfg_rs_core_free(). Published
	 * with rcu_assign_pointer() under @lock.
	 */
	struct nfg_rs_dyn __rcu		*dyn;
};

struct nfg_rs_core_info {
	u32	count;
	u32	maxelem;
	u32	timeout;
	u64	expiries;
	u64	memsize;
	u64	lookups;
	u64	hits;
	u32	dyn_count;	/* dynamic entries not yet folded */
	u64	dyn_adds;
	u64	dyn_dels;
	u64	dyn_refused;
};

enum nfg_rs_op {
	NFG_RS_OP_ADD,
	NFG_RS_OP_DEL,
};

/* Address <-> key conversion; p is 4 (IPv4) or 16 (IPv6) bytes, network order. */
void nfg_rs_key_from_be(struct nfg_rs_key *key, const void *p, bool v6);
void nfg_rs_key_to_be(void *p, const struct nfg_rs_key *key, bool v6);
bool nfg_rs_range_valid(const struct nfg_rs_range *r, bool v6);

int nfg_rs_core_init(struct nfg_rs_core *core, bool v6, u32 maxelem);
void nfg_rs_core_release(struct nfg_rs_core *core);
void nfg_rs_core_free(struct nfg_rs_core *core);

int nfg_rs_core_update(struct nfg_rs_core *core, const struct nfg_rs_range *r,
		       unsigned int n, enum nfg_rs_op op);
void nfg_rs_core_flush(struct nfg_rs_core *core);
int nfg_rs_core_expire(struct nfg_rs_core *core, u64 now, u32 *expired);
u64 nfg_rs_core_next_expiry(const struct nfg_rs_core *core);
bool nfg_rs_core_test(struct nfg_rs_core *core, const struct nfg_rs_range *r);
int nfg_rs_core_swap(struct nfg_rs_core *a, struct nfg_rs_core *b);
void nfg_rs_core_info(struct nfg_rs_core *core, struct nfg_rs_core_info *info);

struct nfg_rs_array *nfg_rs_core_snapshot(struct nfg_rs_core *core,
					  u32 *maxelem);
void nfg_rs_array_put(struct nfg_rs_array *arr);

/*
 * Objects alive: arrays whose last reference has not been dropped, hashes,
 * plus set objects (counted by rangeset_nl.c). Control plane only. With the
 * packet-path entries (counted per CPU: nfg_rs_live_count()), read by the
 * live_objects module parameter and checked to be 0 at module exit, so tests
 * can prove that netns teardown and rmmod leave nothing behind.
 */
extern atomic_t nfg_rs_live_objects;
long nfg_rs_live_count(void);
void nfg_rs_array_range(const struct nfg_rs_array *arr, u32 i,
			struct nfg_rs_range *r);

bool nfg_rs_array_lookup4(const struct nfg_rs_array *arr, u32 addr);
bool nfg_rs_array_lookup6(const struct nfg_rs_array *arr,
			  const struct nfg_rs_key *key);

/*
 * Packet path: RCU lookup plus per-CPU counters. @now is on the clock of
 * the expiries (jiffies64): dynamic entries past it no longer match.
 */
bool nfg_rs_core_match4(struct nfg_rs_core *core, u32 addr, u64 now);
bool nfg_rs_core_match6(struct nfg_rs_core *core, const struct nfg_rs_key *key,
			u64 now);

/* Dynamic entries; see the theory of operation in rangeset_dyn_core.c. */
int nfg_rs_dyn_init(void);
void nfg_rs_dyn_exit(void);
int nfg_rs_dyn_enable(struct nfg_rs_core *core, u32 seed);
bool nfg_rs_dyn_pending(struct nfg_rs_core *core);
void nfg_rs_key_mask(struct nfg_rs_key *key, u8 plen, bool v6);
int nfg_rs_dyn_add(struct nfg_rs_core *core, const struct nfg_rs_key *addr,
		   u8 plen, u64 expires, bool exist, u64 now);
int nfg_rs_dyn_del(struct nfg_rs_core *core, const struct nfg_rs_key *addr,
		   u8 plen);
int nfg_rs_core_fold(struct nfg_rs_core *core, u64 now);
int nfg_rs_core_fold_lazy(struct nfg_rs_core *core, u64 now, bool *again);
int nfg_rs_core_update1(struct nfg_rs_core *core, const struct nfg_rs_range *r,
			enum nfg_rs_op op, u64 now);

#endif /* _NFG_RANGESET_CORE_H */
