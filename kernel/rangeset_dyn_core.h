/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard rangeset: the interface between the two halves of the core,
 * the interval core (rangeset_core.c: array, tree, control plane) and the
 * dynamic entries (rangeset_dyn_core.c: the packet path's hash and its
 * fold into the tree). Only those two files include it; both are also
 * compiled by the userspace unit harness (tests/unit).
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

/* rangeset_core.c: the tree and the array, for the fold */
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
