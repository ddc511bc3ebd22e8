/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard kconnlimit: keyed connection-count table (see the theory of
 * operation at the top of kconnlimit_core.c). This header is also compiled
 * by the userspace unit harness in tests/unit against a thin shim of
 * kernel headers: nothing here knows about conntrack.
 */
#ifndef _NFG_KCONNLIMIT_CORE_H
#define _NFG_KCONNLIMIT_CORE_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* Table geometry limits (module parameters are checked against these). */
#define NFG_KCL_SLOTS_MAX	BIT(20)
#define NFG_KCL_LOCKS_MAX	BIT(16)
#define NFG_KCL_DEFAULT_SLOTS	8192U
#define NFG_KCL_DEFAULT_LOCKS	256U
#define NFG_KCL_DEFAULT_MAX_CONNS	1048576UL

/*
 * Per insert (memory, not counts): entries checked from the tail, and from
 * the head (rotated); pending ones within their grace are skipped.
 */
#define NFG_KCL_GC_TAIL		2
#define NFG_KCL_GC_HEAD		4
/* Sweep: entries checked per hold of a slot lock, at most. */
#define NFG_KCL_GC_BATCH	1024

/*
 * A masked address: IPv4 in w[0] (w[1..3] zero), IPv6 in w[0..3], both in
 * network byte order as the packet carries them. Only compared and hashed.
 */
struct nfg_kcl_key {
	u32	w[4];
	u32	zone;	/* conntrack zone id: zones have separate budgets */
};

/*
 * Who a remembered connection is, in the environment's words (the kernel:
 * original tuple and zone). Opaque to the core, which only compares it
 * byte for byte: the environment zeroes unused bytes.
 */
struct nfg_kcl_ident {
	u32	w[11];
};

/*
 * Remembered connections of one accounting domain (the kernel: a netns),
 * shared by its tables and capped by nfg_kcl_max_conns. The environment
 * owns it and keeps it alive as long as a table points to it.
 */
struct nfg_kcl_budget {
	atomic_long_t	conns;
};

/*
 * A remembered connection. It starts "pending" (@ct NULL: only @id is
 * known, nothing is referenced) and the environment may resolve it to a
 * counted reference in @ct when it checks it (nfg_kcl_conn_dead(), under
 * the slot lock). @ct is opaque to the core: the environment (the xt
 * match, or the unit harness's fake conntrack) owns what it points to.
 */
struct nfg_kcl_conn {
	struct list_head	node;	/* nfg_kcl_node.conns, under the slot lock */
	void			*ct;	/* NULL, or a counted reference */
	u32			stamp;	/* environment's clock when remembered */
	/*
	 * Pending: the environment's clock when it last looked for the
	 * conntrack and did not find it (@stamp before), under the slot lock.
	 */
	u32			checked;
	struct nfg_kcl_ident	id;	/* set at insert, under the slot lock */
	/*
	 * The count with this connection was over the limit of the rule that
	 * remembered it: that rule refused it (its packet is most likely
	 * dropped at once). Set at insert, under the slot lock (again when
	 * an insert finds this pending entry by @id).
	 */
	bool			refused;
};

/*
 * All connections of one key. Linked into its slot's chain, which RCU
 * readers walk without a lock; @count is written under the slot lock and
 * read with READ_ONCE() by anyone. Freed after an RCU grace period.
 */
struct nfg_kcl_node {
	struct nfg_kcl_node __rcu *next;	/* slot chain */
	struct nfg_kcl_key	key;		/* immutable */
	u32			count;		/* entries on @conns */
	/*
	 * Clock of the last check of every entry (by a packet, for its
	 * verdict); written under the slot lock, read by anyone.
	 */
	u32			walked;
	u32			pending;	/* entries with no ct; ditto */
	struct list_head	conns;		/* under the slot lock */
	/* The entry inserted last, NULL once forgotten; under the slot lock. */
	struct nfg_kcl_conn	*newest;
	/*
	 * A forgotten entry kept for the key's next insert (no reference, not
	 * counted), or NULL; under the slot lock, freed with the node.
	 */
	struct nfg_kcl_conn	*spare;
	struct rcu_head		rcu;
};

/*
 * What a rule's table is keyed by, in the eyes of other rules. Two rules
 * of one accounting domain (the environment keeps domains apart) may
 * share a table when nfg_kcl_shareable() says so: the same non-empty name,
 * family, mask and direction. The limit is not part of it: each rule
 * compares the shared count with its own.
 */
#define NFG_KCL_NAMELEN		32	/* including the trailing NUL */

struct nfg_kcl_params {
	char	name[NFG_KCL_NAMELEN];	/* NUL-terminated; "" = never shared */
	u8	family;			/* the environment's (NFPROTO_*) */
	u8	prefix;			/* mask length */
	bool	daddr;			/* keyed on the destination address */
};

struct nfg_kcl_stats {
	u64	matched;	/* packets the rule matched (verdict true) */
	u64	over_limit;	/* packets whose key was over the limit */
	u64	inserts;	/* connections remembered */
	u64	gc_evictions;	/* connections forgotten because they ended */
	u64	cap_hits;	/* inserts refused: budget's cap reached (dropped) */
	u64	alloc_fail;	/* inserts refused: no memory (dropped) */
};

struct nfg_kcl_table {
	struct nfg_kcl_node __rcu **slots;	/* chains, by hash of the key */
	/*
	 * Keyed locks: locks[i & lock_mask] protects the chain of slots[i]
	 * (linking and unlinking nodes) and, for every node on it, count and
	 * conns. Taken (BH-safe) only to insert and to remove; counting keys
	 * never takes them.
	 */
	spinlock_t		*locks;
	u32			slot_mask;	/* slots - 1 */
	u32			lock_mask;	/* locks - 1 */
	u32			seed;		/* hash seed */
	u32			key_words;	/* 1 (IPv4) or 4 (IPv6): words hashed */
	atomic_t		keys;		/* nodes in the table */
	atomic_t		conns;		/* remembered connections */
	struct nfg_kcl_budget	*budget;	/* shared, capped (environment's) */
	struct nfg_kcl_stats __percpu *stats;
	/*
	 * Rules using the table: 1 from nfg_kcl_table_init(). The environment
	 * takes and drops users under its own lock, the one it finds shared
	 * tables under, so that a table found there cannot be going away.
	 */
	refcount_t		users;
};

struct nfg_kcl_info {
	u32			keys;
	u32			conns;
	u64			memsize;	/* bytes held by the table */
	struct nfg_kcl_stats	stats;		/* sum over CPUs */
};

struct nfg_kcl_top_ent {
	struct nfg_kcl_key	key;
	u32			count;
};

/* Cap on the remembered connections of one budget (0 = no insert). */
extern unsigned long nfg_kcl_max_conns;
/* Tables, nodes and remembered connections alive (leak checks in tests). */
extern atomic_t nfg_kcl_live_objects;

/*
 * ---- provided by the layer below the core ----
 * The kernel: kconnlimit_ct.c (conntrack); the unit harness: its fake
 * conntrack. Never by the match or the control plane, which sit above.
 */

/*
 * True when @c no longer counts: closed, timed out, deleted, abandoned.
 * May resolve a pending @c (set c->ct to a counted reference). @env is
 * what the caller of nfg_kcl_add() / nfg_kcl_gc() passed. Slot lock held.
 */
bool nfg_kcl_conn_dead(struct nfg_kcl_conn *c, const void *env);
/*
 * True when @c is pending and within its grace: it counts unless a lookup
 * finds its conntrack ended (only nfg_kcl_conn_dead() can tell), and it
 * cannot be forgotten yet, so a GC that only frees memory skips it without
 * a lookup. No side effect. Slot lock held.
 */
bool nfg_kcl_conn_young(const struct nfg_kcl_conn *c, const void *env);
/* Drop the reference in c->ct, if any. After the slot lock. */
void nfg_kcl_conn_release(struct nfg_kcl_conn *c);

/* ---- core ---- */

int nfg_kcl_core_init(void);
void nfg_kcl_core_exit(void);

/* @slots and @locks: powers of two within the limits above. */
int nfg_kcl_table_init(struct nfg_kcl_table *t, u32 slots, u32 locks,
		       u32 seed, bool v6, struct nfg_kcl_budget *budget);
/* No reader may be left: forgets (releases) everything and frees. */
void nfg_kcl_table_destroy(struct nfg_kcl_table *t);

/* May rules with @a and @b count in one table? Never when unnamed. */
bool nfg_kcl_shareable(const struct nfg_kcl_params *a,
		       const struct nfg_kcl_params *b);

/* One more rule uses @t (which has a user already). */
void nfg_kcl_table_get(struct nfg_kcl_table *t);

/*
 * A rule stops using @t. Returns true when it was the last one: the caller
 * then destroys the table once no reader is left; the counts live on as
 * long as another rule uses it.
 */
bool nfg_kcl_table_put(struct nfg_kcl_table *t);

/*
 * Remember the connection @id under @key (pending: nothing referenced) and
 * store the key's count for a verdict against @limit in *@count: exact at
 * this packet (this connection included) when it is at most @limit, else
 * some number above @limit (nfg_kcl_count_check()); the entry is marked
 * refused when it is above. Returns 0 when
 * remembered, 1 when a pending entry of the key has @id already (the same
 * unconfirmed connection again, or a new conntrack for the tuple of one
 * never resolved: not added again, that entry stands for it), -ENOSPC at
 * the budget's cap, -ENOMEM. An entry with the same identity that is
 * resolved is another connection (an older one, for the same tuple): the
 * new one is remembered. @env is passed to nfg_kcl_conn_dead(). Atomic
 * context; takes the key's slot lock.
 */
int nfg_kcl_add(struct nfg_kcl_table *t, const struct nfg_kcl_key *key,
		const struct nfg_kcl_ident *id, u32 stamp, u32 limit,
		const void *env, unsigned int *count);

/* The key's count; no lock taken. Caller in an RCU read-side section or not. */
unsigned int nfg_kcl_count(const struct nfg_kcl_table *t,
			   const struct nfg_kcl_key *key);

/*
 * The key's count for a verdict against @limit at clock @now, exact at
 * this packet: connections that ended no longer count. The remembered
 * count (an upper bound) is read without a lock; only when it is above
 * @limit are the key's connections checked, under its slot lock, until
 * @limit + 1 live ones are found (then that is returned: over the limit,
 * whatever the others are) or none is left to check (the exact count).
 * Atomic context; @env as for nfg_kcl_add().
 */
unsigned int nfg_kcl_count_check(struct nfg_kcl_table *t,
				 const struct nfg_kcl_key *key, u32 limit,
				 u32 now, const void *env);

/* Forget @id under @key (releases it). Returns true when it was found. */
bool nfg_kcl_remove(struct nfg_kcl_table *t, const struct nfg_kcl_key *key,
		    const struct nfg_kcl_ident *id);

/*
 * Check every connection in slots [@first, @first + @n) and forget those
 * that ended (@env as for nfg_kcl_add()), letting go of the slot lock
 * every NFG_KCL_GC_BATCH entries. A key whose every entry a packet checked
 * less than @fresh ticks before @now is skipped: checking it again would
 * only take its lock from the packets (@fresh 0: check every key).
 * Returns how many were forgotten. Process context (may reschedule).
 */
unsigned int nfg_kcl_gc(struct nfg_kcl_table *t, u32 first, u32 n,
			const void *env, u32 now, u32 fresh);

/*
 * Up to @n keys with the most connections, in @out by count descending
 * (ties: lower key first). Walks without slot locks. Returns how many.
 */
unsigned int nfg_kcl_top(const struct nfg_kcl_table *t,
			 struct nfg_kcl_top_ent *out, unsigned int n);

void nfg_kcl_table_info(const struct nfg_kcl_table *t,
			struct nfg_kcl_info *ci);

static inline u32 nfg_kcl_slots(const struct nfg_kcl_table *t)
{
	return t->slot_mask + 1;
}

#endif /* _NFG_KCONNLIMIT_CORE_H */
