/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard rangeset: the interface between the two halves of the core,
 * the interval core (rangeset_core.c: array, tree, control plane) and the
 * dynamic entries (rangeset_dyn_core.c: the packet path's hash and its
 * fold into the array, by a merge or through the tree). Only those two
 * files include it; both are also compiled by the userspace unit harness
 * (tests/unit).
 */
#ifndef _NFG_RANGESET_DYN_CORE_H
#define _NFG_RANGESET_DYN_CORE_H

#include <linux/compiler.h>
#include <linux/rbtree.h>
#include <linux/types.h>

#include "rangeset_core.h"

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

/*
 * One dynamic entry as the merge fold sees it: the prefix [start, end],
 * its expiry (adds), its place in the order of changes, add or marker.
 */
struct nfg_rs_mop {
	struct nfg_rs_key	start;
	struct nfg_rs_key	end;
	u64			expires;
	u64			seq;
	u8			del;
};

/* Keys and expiries: the two halves' shared arithmetic. */

static inline int rs_key_cmp(const struct nfg_rs_key *a, const struct nfg_rs_key *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

static inline bool rs_key_le(const struct nfg_rs_key *a, const struct nfg_rs_key *b)
{
	return a->hi < b->hi || (a->hi == b->hi && a->lo <= b->lo);
}

static inline bool rs_key_is_min(const struct nfg_rs_key *k)
{
	return !k->hi && !k->lo;
}

static inline bool rs_key_is_max(const struct nfg_rs_key *k, bool v6)
{
	if (v6)
		return k->hi == U64_MAX && k->lo == U64_MAX;
	return k->lo == U32_MAX;
}

/* Callers make sure the key is not the maximum. */
static inline void rs_key_inc(struct nfg_rs_key *k)
{
	if (++k->lo == 0)
		k->hi++;
}

/* Callers make sure the key is not zero. */
static inline void rs_key_dec(struct nfg_rs_key *k)
{
	if (k->lo-- == 0)
		k->hi--;
}

/* Does expiry a come no earlier than b? 0 (never) is the latest. */
static inline bool rs_exp_ge(u64 a, u64 b)
{
	return !a || (b && a >= b);
}

/* The later of two expiries (0: never, the latest). */
static inline u64 rs_exp_later(u64 a, u64 b)
{
	return rs_exp_ge(a, b) ? a : b;
}

/*
 * The overlay of a fold's entries (sorted by address; prefixes, so two
 * of them are nested or disjoint): its pieces, in ascending order, are
 * the addresses covered by one chain of nested entries, and what that
 * chain makes of them. nfg_rs_overlay_next() (rangeset_dyn_core.c) walks
 * it for the merge pass (rangeset_core.c).
 */
struct nfg_rs_piece {
	struct nfg_rs_key	s;
	struct nfg_rs_key	e;
	u64			exp;	/* the adds' latest expiry, if @add */
	bool			add;	/* adds cover it */
	bool			kill;	/* a marker covers it: old ranges go */
};

struct nfg_rs_overlay {
	struct nfg_rs_mop *const	*ops;
	u32				n;
	bool				v6;
	bool				bad;	/* entries not nested */
	/* next entry, position, chain of nested entries */
	u32				i;
	struct nfg_rs_key		x;
	u32				depth;
	struct nfg_rs_mop		*stack[NFG_RS_DYN_PLENS];
};

void nfg_rs_overlay_start(struct nfg_rs_overlay *ov,
			  struct nfg_rs_mop *const *ops, u32 n, bool v6);
bool nfg_rs_overlay_next(struct nfg_rs_overlay *ov, struct nfg_rs_piece *p);

/*
 * rangeset_core.c, for the fold: the merge into a new array, the tree
 * (rebuilt from the array, then the fallback's operations), publication
 * and the array's searches.
 */
int nfg_rs_merge_publish(struct nfg_rs_core *core,
			 struct nfg_rs_mop *const *ops, u32 n, u64 now,
			 bool expire, u32 allow, u32 *expired);
int nfg_rs_tree_sync(struct nfg_rs_core *core);
int nfg_rs_tree_add(struct nfg_rs_update *u, const struct nfg_rs_range *r);
int nfg_rs_tree_del(struct nfg_rs_update *u, const struct nfg_rs_range *r);
u32 nfg_rs_tree_expire(struct nfg_rs_update *u, u64 now);
void nfg_rs_tree_rollback(struct nfg_rs_update *u);
void nfg_rs_update_end(struct nfg_rs_update *u);
int nfg_rs_publish(struct nfg_rs_core *core, u32 allow, bool force);
bool nfg_rs_array_covers(const struct nfg_rs_array *arr,
			 const struct nfg_rs_key *start,
			 const struct nfg_rs_key *end, u64 now);
bool nfg_rs_array_overlaps(const struct nfg_rs_array *arr,
			   const struct nfg_rs_key *start,
			   const struct nfg_rs_key *end);

/* rangeset_dyn_core.c: for the control plane */
int nfg_rs_fold_locked(struct nfg_rs_core *core, u64 now, u32 *expired);
void nfg_rs_dyn_clear(struct nfg_rs_dyn *dyn);
void nfg_rs_dyn_free(struct nfg_rs_core *core);

/*
 * Generation read before the array: with nfg_rs_gen_changed() after the
 * hash, it brackets a reader's view of the set (see nfg_rs_core.gen).
 */
static inline u32 nfg_rs_gen_begin(const struct nfg_rs_core *core)
{
	u32 gen = READ_ONCE(core->gen);

	smp_rmb();	/* gen before arr; pairs with nfg_rs_gen_bump() */
	return gen;
}

static inline bool nfg_rs_gen_changed(const struct nfg_rs_core *core, u32 gen)
{
	smp_rmb();	/* the hash before gen; pairs with nfg_rs_gen_bump() */
	return READ_ONCE(core->gen) != gen;
}

/*
 * After publishing @arr, before unlinking what it holds. Under core->lock.
 * The unlinks' rcu_assign_pointer() orders the bump before them.
 */
static inline void nfg_rs_gen_bump(struct nfg_rs_core *core)
{
	smp_wmb();	/* arr before gen */
	WRITE_ONCE(core->gen, core->gen + 1);
}

#endif /* _NFG_RANGESET_DYN_CORE_H */
