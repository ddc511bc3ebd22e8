// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard kconnlimit: keyed connection-count table.
 *
 * Theory of operation
 * -------------------
 *
 * Problem: connlimit counts, per masked address (the "key"), how many
 * tracked connections exist, and compares with a limit on every packet it
 * sees. Mainline's nf_conncount shares one array of 256 locks between all
 * rules, keeps an rbtree per lock, and validates each remembered connection
 * by looking its tuple up again in the conntrack hash: a SYN flood from many
 * sources turns into a stream of hash lookups under contended locks.
 *
 * Data layout: every rule instance has a table, which named rules share
 * (below). The table is an array of @slots chains indexed by jhash(key)
 * and an array of @locks spinlocks;
 * slot i is protected by lock i & (locks - 1). A key is a masked address
 * and a conntrack zone id (zones have separate budgets, as in connlimit).
 * A chain links one node per key present; a node holds the key's count and
 * the list of its remembered connections (struct nfg_kcl_conn, 80 bytes on
 * 64-bit).
 *
 *	slots[]:  [0] -> node(10.0.1.0) -> node(10.7.3.0) -> NULL
 *	          [1] -> NULL
 *	          ...
 *	node:     key | count | conns: conn -> conn -> conn (oldest first)
 *
 * Reads: counting a key (every packet that does not create a connection)
 * walks the chain under RCU and reads node->count with READ_ONCE(): no
 * lock, no atomic write, unless that count is above the rule's limit
 * (below: Exact counts). Chains are singly linked RCU lists; a node is
 * unlinked under its slot lock and freed after a grace period, so a
 * reader holding a pointer to it can still follow ->next.
 *
 * Writes: the packet that creates a connection (conntrack not yet
 * confirmed) inserts it under the slot lock: find or create the node,
 * collect a bounded number of dead entries (below), check that no pending
 * entry stands for it already (Duplicates, below), check the budget's cap,
 * append, count. Removal
 * happens under the same lock: the insert-time GC, a verdict's check of a
 * key above its limit (nfg_kcl_count_check(), which forgets the ended
 * entries it meets), the periodic worker (nfg_kcl_gc), or
 * nfg_kcl_remove(). A node whose count reaches zero is unlinked.
 *
 * What a remembered connection is: it starts "pending", as the identity
 * the environment gives (the kernel: original tuple and zone) and the time
 * it was remembered, with no reference on the conntrack. A reference on an
 * unconfirmed conntrack is not harmless: nfnetlink_queue (6.11, and the
 * stable kernels it was backported to, Debian's 6.1 and 6.12 included)
 * drops a queued packet whose unconfirmed conntrack has another reference
 * than the packet's, so a rule followed by NFQUEUE dropped every new
 * connection. When the entry is next checked (a verdict's check above the
 * limit, insert-time GC of its key once its grace may have run out, or the
 * sweep) the environment looks the identity up in the conntrack hash,
 * which holds confirmed entries only; found, the entry is "resolved" and
 * from then on holds a reference to that conntrack; not found, it still
 * counts while its packet may be on its way to confirmation, and is then
 * taken as dropped and forgotten. Without a reference, "on its way" (a
 * queue reader may hold the packet for as long as it likes) and "dropped"
 * look the same, so that is a grace, decided by the environment: two
 * jiffies for a connection the rule refused (count over its limit: its
 * packet is almost always dropped at once; as nf_conncount, which gives
 * every one two jiffies), pending_ms (default one second) for one it let
 * through, so a SYN held in NFQUEUE counts all the while (nf_conncount
 * forgets it after two jiffies, for good). Lookups of a pending entry back
 * off (the next no sooner than it had been pending at the last), so a
 * flood's SYNs dropped after the rule cost a few each, not one per walk.
 *
 * Why a resolved entry holds a reference rather than a bare (ct pointer,
 * nf_ct_get_id()) pair validated under RCU: SLAB_TYPESAFE_BY_RCU only keeps
 * the memory an nf_conn for the RCU read-side section in which the pointer
 * was found. Our pointer is kept across sections, so once the conntrack is
 * freed its slab page may go back to the page allocator and be reused for
 * anything; reading it to compute the id would read foreign memory. Holding
 * a reference keeps the object (and its ->status, timeout and TCP state)
 * readable until we let go; it never keeps a connection alive, because
 * conntrack kills confirmed entries (timeout, conntrack -D/-F, netns exit)
 * regardless of references, and a killed entry is seen as dead here and
 * released. Why not look every entry up at every check, as nf_conncount:
 * that is a hash lookup per remembered connection per check; resolving once
 * makes later checks a few loads. The cost: a killed conntrack's memory
 * lives until our next GC pass over its key (at most one worker period),
 * which netns teardown waits for.
 *
 * Death (decided by the environment, nfg_kcl_conn_dead(); kernel version in
 * kconnlimit_ct.c): pending and not in the hash after the grace; resolved
 * and dying (killed or timed out), expired, or TCP in TIME_WAIT or CLOSE
 * (as nf_conncount: closed connections do not count).
 *
 * Exact counts: a verdict compares the key's count of live connections,
 * at this packet, with the rule's limit. node->count holds every
 * connection remembered, live or ended but not yet forgotten: an upper
 * bound of the live ones (every connection of the key that the rule saw
 * created is remembered until it is seen dead). At or under the limit, the
 * verdict is therefore certain from that lockless read. Above it
 * (nfg_kcl_verify(), under the slot lock, always taken: a verdict never
 * settles for a stale count), the entries are checked from the head and
 * those that ended forgotten, until limit + 1 live ones are found (over
 * the limit, whatever the rest are) or the list ends (the exact count).
 * A packet thus pays at most limit + 1 checks of live entries (a few
 * loads each: resolved entries hold their conntrack), and each ended
 * entry is forgotten once; one packet forgets at most NFG_KCL_GC_BATCH
 * of them, then counts the rest as they are (still an upper bound, over
 * the limit), so when more than that many connections of a key end at
 * once (conntrack -F) the next packets of the key pay for them in turn.
 * The live checks are bounded the same way (BHs off, the slot's packets
 * waiting, whatever limit the rule gives): past NFG_KCL_GC_BATCH live
 * entries the remembered count is the answer, so with a limit of
 * NFG_KCL_GC_BATCH or more, connections that ended behind the first
 * NFG_KCL_GC_BATCH live ones still count until the sweep forgets them.
 * nf_conncount checks a key's list at most once a jiffy, with a trylock,
 * and a count between two checks still holds connections that ended:
 * kconnlimit gives its verdicts at every packet, with no settle time
 * (test: kconnlimit_exact, against the client's own count, with two CPUs
 * on one slot lock).
 *
 * GC: memory, not counts, in bounded steps on the packet path and complete
 * in a worker.
 * - On insert, the key's list is checked from the tail (the newest
 *   entries: the most likely to be abandoned unconfirmed connections whose
 *   SYN the rule dropped) for up to NFG_KCL_GC_TAIL entries, then
 *   NFG_KCL_GC_HEAD entries from the head (rotated to the tail when live,
 *   so successive inserts cover the key). An entry it forgets that holds
 *   no reference (pending: never confirmed) becomes the new connection's,
 *   so under a flood of SYNs that a later rule drops, where the key's
 *   previous SYN is what the GC forgets, an insert allocates and frees
 *   nothing and leaves the shared counts (table, budget, live objects)
 *   untouched: an allocation and a free per SYN were about a quarter of the
 *   match's cost there (perf in a 6.12 guest). A second such entry is
 *   kept as the node's spare (one at most, not counted in the budget,
 *   freed with the node) for the key's next insert, whose previous SYN may
 *   still be in its grace: then nothing is forgotten, and the spare is
 *   taken instead of an allocation.
 * - A verdict's check above the limit forgets the ended entries it meets.
 * - The worker (kconnlimit_mt.c) sweeps every slot of every table each
 *   gc_interval_ms, so memory (and references) of keys that see no more
 *   packets are given back, and the CLI's counts drop. Keys whose every
 *   entry a packet checked within the last period are skipped: checking
 *   them again would only hold their slot locks against the packets. It
 *   checks at most
 *   NFG_KCL_GC_BATCH entries per hold of a slot lock (BHs off, packets of
 *   the slot waiting): a longer key is continued after letting go, its
 *   unchecked entries being at the head (checked ones are rotated).
 * References are released after the slot lock is dropped.
 *
 * Memory bound: a cap (nfg_kcl_max_conns, compared unsigned: a huge value
 * is no cap) on the remembered connections of a budget, which the
 * environment shares between the tables of one netns, so one netns at its
 * cap does not stop the others (besides, each key present holds its node
 * and at most one spare entry). An insert at the cap, or one whose
 * allocation fails, returns an error and the match drops the packet, as
 * mainline does when nf_conncount cannot allocate. Both are counted per
 * table. Allocations are charged to the memory cgroup of the context (the
 * process adding the rule; for inserts, nothing in softirq).
 *
 * Listing: nfg_kcl_top() walks every chain under RCU without slot locks and
 * keeps the n largest counts in a min-heap; the result is a snapshot that
 * may be a little stale, never torn (each count is one READ_ONCE()).
 *
 * Sharing: a table counts for every rule that uses it (@users). The
 * environment gives the table of a named rule to the other rules of its
 * netns with equal nfg_kcl_params (nfg_kcl_shareable(): name, family,
 * mask, direction), so that replacing a legacy xtables table, which
 * creates the new rules before it destroys the old ones, keeps the counts;
 * each rule compares the shared count with its own limit. An unnamed rule
 * never shares.
 *
 * Duplicates: the creating packet passes a given rule once; if the same
 * unconfirmed conntrack comes back to the rule (a chain jumped to twice),
 * a pending entry of its key has its identity (usually the newest,
 * node->newest, not the tail: walks rotate older entries behind it) and it
 * is not added again. A pending entry with the identity may also be an
 * older conntrack of the same tuple, never resolved: a client reset its
 * connection and reopened the tuple at once (conntrack replaces the closed
 * entry), or a SYN was dropped and this is its retransmission; since a
 * pending entry finds its conntrack by the tuple, it stands for the new one
 * from then on (the search goes from the newest entry back and stops at
 * the key's last pending one: node->pending counts them). A resolved entry
 * with the identity holds the older conntrack, confirmed, never the
 * packet's: the new connection is counted and the old entry forgotten once
 * its conntrack is seen dead (a client that reopened its own tuples used
 * to be counted once for all of them).
 */
#include "nfg_compat.h"

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "kconnlimit_core.h"

unsigned long nfg_kcl_max_conns = NFG_KCL_DEFAULT_MAX_CONNS;
atomic_t nfg_kcl_live_objects;

static struct kmem_cache *nfg_kcl_conn_cache __read_mostly;

int nfg_kcl_core_init(void)
{
	nfg_kcl_conn_cache = kmem_cache_create("nfg_kcl_conn",
					       sizeof(struct nfg_kcl_conn),
					       0, 0, NULL);
	return nfg_kcl_conn_cache ? 0 : -ENOMEM;
}

/* Every table destroyed and an RCU barrier passed (nodes freed). */
void nfg_kcl_core_exit(void)
{
	kmem_cache_destroy(nfg_kcl_conn_cache);
}

static bool nfg_kcl_pow2(u32 x)
{
	return x && !(x & (x - 1));
}

int nfg_kcl_table_init(struct nfg_kcl_table *t, u32 slots, u32 locks,
		       u32 seed, bool v6, struct nfg_kcl_budget *budget)
{
	u32 i;

	if (!nfg_kcl_pow2(slots) || slots > NFG_KCL_SLOTS_MAX ||
	    !nfg_kcl_pow2(locks) || locks > NFG_KCL_LOCKS_MAX)
		return -EINVAL;

	memset(t, 0, sizeof(*t));
	/* Charged to the memcg of the process that adds the rule. */
	t->slots = kvcalloc(slots, sizeof(*t->slots), GFP_KERNEL_ACCOUNT);
	if (!t->slots)
		goto err_out;
	t->locks = kvmalloc_array(locks, sizeof(*t->locks), GFP_KERNEL_ACCOUNT);
	if (!t->locks)
		goto err_slots;
	t->stats = alloc_percpu_gfp(struct nfg_kcl_stats, GFP_KERNEL_ACCOUNT);
	if (!t->stats)
		goto err_locks;
	for (i = 0; i < locks; i++)
		spin_lock_init(&t->locks[i]);
	t->slot_mask = slots - 1;
	t->lock_mask = locks - 1;
	t->seed = seed;
	t->key_words = v6 ? 4 : 1;
	t->budget = budget;
	atomic_set(&t->keys, 0);
	atomic_set(&t->conns, 0);
	refcount_set(&t->users, 1);
	atomic_inc(&nfg_kcl_live_objects);
	return 0;

err_locks:
	kvfree(t->locks);
err_slots:
	kvfree(t->slots);
err_out:
	t->slots = NULL;
	t->locks = NULL;
	return -ENOMEM;
}

bool nfg_kcl_shareable(const struct nfg_kcl_params *a,
		       const struct nfg_kcl_params *b)
{
	return a->name[0] && !strncmp(a->name, b->name, sizeof(a->name)) &&
	       a->family == b->family && a->prefix == b->prefix &&
	       a->daddr == b->daddr;
}

void nfg_kcl_table_get(struct nfg_kcl_table *t)
{
	refcount_inc(&t->users);
}

bool nfg_kcl_table_put(struct nfg_kcl_table *t)
{
	return refcount_dec_and_test(&t->users);
}

static u32 nfg_kcl_hash(const struct nfg_kcl_table *t,
			const struct nfg_kcl_key *key)
{
	return jhash2(key->w, t->key_words, t->seed + key->zone) & t->slot_mask;
}

static spinlock_t *nfg_kcl_lock(const struct nfg_kcl_table *t, u32 slot)
{
	return &t->locks[slot & t->lock_mask];
}

static bool nfg_kcl_key_eq(const struct nfg_kcl_key *a,
			   const struct nfg_kcl_key *b)
{
	return ((a->w[0] ^ b->w[0]) | (a->w[1] ^ b->w[1]) |
		(a->w[2] ^ b->w[2]) | (a->w[3] ^ b->w[3]) |
		(a->zone ^ b->zone)) == 0;
}

static void nfg_kcl_conn_free(struct nfg_kcl_conn *c)
{
	kmem_cache_free(nfg_kcl_conn_cache, c);
	atomic_dec(&nfg_kcl_live_objects);
}

/* A node unlinked (or its table gone) and its spare entry. */
static void nfg_kcl_node_free(struct nfg_kcl_node *n)
{
	if (n->spare)
		nfg_kcl_conn_free(n->spare);
	kfree(n);
	atomic_dec(&nfg_kcl_live_objects);
}

static void nfg_kcl_node_free_rcu(struct rcu_head *head)
{
	nfg_kcl_node_free(container_of(head, struct nfg_kcl_node, rcu));
}

/* Release and free connections collected under a slot lock, after it. */
static void nfg_kcl_release_list(struct list_head *dead)
{
	struct nfg_kcl_conn *c, *tmp;

	list_for_each_entry_safe(c, tmp, dead, node) {
		list_del(&c->node);
		nfg_kcl_conn_release(c);
		nfg_kcl_conn_free(c);
	}
}

/*
 * Slot lock held: has @c (on @n) ended? The environment may resolve it
 * (see nfg_kcl_conn_dead()): then it is no longer one of @n's pending.
 */
static bool nfg_kcl_dead(struct nfg_kcl_node *n, struct nfg_kcl_conn *c,
			 const void *env)
{
	bool pending = !c->ct, dead = nfg_kcl_conn_dead(c, env);

	if (pending && c->ct)
		n->pending--;
	return dead;
}

/*
 * Slot lock held: move @c from its node to @dead; the table's and the
 * budget's counts are the caller's (nfg_kcl_forgotten()).
 */
static void nfg_kcl_unlist(struct nfg_kcl_node *n, struct nfg_kcl_conn *c,
			   struct list_head *dead)
{
	if (!c->ct)
		n->pending--;
	list_move_tail(&c->node, dead);
	if (n->newest == c)
		n->newest = NULL;
	WRITE_ONCE(n->count, n->count - 1);
}

/*
 * Slot lock held: @k entries were unlisted. Now, not at the free: an
 * insert after us in this lock sees the room.
 */
static void nfg_kcl_forgotten(struct nfg_kcl_table *t, unsigned int k)
{
	atomic_sub(k, &t->conns);
	atomic_long_sub(k, &t->budget->conns);
}

/* Slot lock held: move @c from its node to @dead, and count it gone. */
static void nfg_kcl_evict(struct nfg_kcl_table *t, struct nfg_kcl_node *n,
			  struct nfg_kcl_conn *c, struct list_head *dead)
{
	nfg_kcl_unlist(n, c, dead);
	nfg_kcl_forgotten(t, 1);
}

/*
 * Slot lock held: unlink @n (whose count is zero) from the chain, given the
 * link that points to it; freed after a grace period.
 */
static void nfg_kcl_unlink(struct nfg_kcl_table *t,
			   struct nfg_kcl_node __rcu **link,
			   struct nfg_kcl_node *n, spinlock_t *lock)
{
	rcu_assign_pointer(*link,
			   rcu_dereference_protected(n->next,
						     lockdep_is_held(lock)));
	atomic_dec(&t->keys);
	call_rcu(&n->rcu, nfg_kcl_node_free_rcu);
}

/*
 * Slot lock held: for the insert's GC (memory), has @c ended? A pending
 * entry within its grace is left alone without a lookup: it cannot be
 * forgotten yet, and under a flood of SYNs that a later rule drops, the
 * lookups of the fresh entries (never found) were most of an insert's cost.
 * Its conntrack is found later, by a verdict's check, the sweep, or the GC
 * once the grace is over.
 */
static bool nfg_kcl_gc_dead(struct nfg_kcl_node *n, struct nfg_kcl_conn *c,
			    const void *env)
{
	return !nfg_kcl_conn_young(c, env) && nfg_kcl_dead(n, c, env);
}

/*
 * Slot lock held: check up to @head entries of @n from its head and forget
 * those that ended; live ones are rotated to the tail, so that successive
 * calls cover a long key. The insert's bounded GC (memory, not counts: the
 * count a verdict needs comes from nfg_kcl_verify()). Returns how many were
 * unlisted (the caller counts them gone).
 */
static unsigned int nfg_kcl_walk(struct nfg_kcl_node *n, unsigned int head,
				 struct list_head *dead, const void *env)
{
	unsigned int evicted = 0, i;
	struct nfg_kcl_conn *c, *tmp;

	if (head >= n->count) {
		/* In place: rotating would only check them again. */
		list_for_each_entry_safe(c, tmp, &n->conns, node) {
			if (nfg_kcl_gc_dead(n, c, env)) {
				nfg_kcl_unlist(n, c, dead);
				evicted++;
			}
		}
		return evicted;
	}
	for (i = 0; i < head; i++) {
		c = list_first_entry(&n->conns, struct nfg_kcl_conn, node);
		if (nfg_kcl_gc_dead(n, c, env)) {
			nfg_kcl_unlist(n, c, dead);
			evicted++;
		} else {
			list_move_tail(&c->node, &n->conns);
		}
	}
	return evicted;
}

/*
 * Slot lock held: GC of one node before an insert. Returns how many entries
 * were unlisted onto @dead; the caller counts them gone (it may reuse one).
 */
static unsigned int nfg_kcl_gc_insert(struct nfg_kcl_node *n,
				      struct list_head *dead, const void *env)
{
	struct nfg_kcl_conn *c;
	unsigned int evicted = 0, i;

	/* Newest first: abandoned unconfirmed entries sit at the tail. */
	for (i = 0; i < NFG_KCL_GC_TAIL && !list_empty(&n->conns); i++) {
		c = list_entry(n->conns.prev, struct nfg_kcl_conn, node);
		if (!nfg_kcl_gc_dead(n, c, env))
			break;
		nfg_kcl_unlist(n, c, dead);
		evicted++;
	}
	/* Then the oldest few, which move on. */
	return evicted + nfg_kcl_walk(n, NFG_KCL_GC_HEAD, dead, env);
}

/*
 * Slot lock held: @n's count for a verdict against @limit, exact at this
 * packet. @n->count (every connection remembered, live or not) is an upper
 * bound of the live ones, so the caller asks only when it is above @limit:
 * then the entries are checked from the head, those that ended forgotten,
 * until @limit + 1 live ones are found (the count is then over the limit,
 * whatever the others are: returned as @limit + 1) or the list ends (the
 * count is exact: @n->count). @self (the packet's own entry, or NULL) is
 * live without a check. A walk to the end records @now for the sweep.
 * Cost: at most @limit + 1 live entries (a few loads each), and never
 * more than NFG_KCL_GC_BATCH of them, plus at most NFG_KCL_GC_BATCH ended
 * ones (each forgotten once).
 */
static unsigned int nfg_kcl_verify(struct nfg_kcl_table *t,
				   struct nfg_kcl_node *n, u32 limit,
				   const struct nfg_kcl_conn *self,
				   struct list_head *dead, const void *env,
				   u32 now, unsigned int *evicted)
{
	unsigned int live = 0, here = 0;
	struct nfg_kcl_conn *c, *tmp;

	list_for_each_entry_safe(c, tmp, &n->conns, node) {
		if (c != self && nfg_kcl_dead(n, c, env)) {
			nfg_kcl_evict(t, n, c, dead);
			(*evicted)++;
			/*
			 * Bound one packet's work (BHs off, the slot's other
			 * packets waiting): past NFG_KCL_GC_BATCH ended entries,
			 * the remembered count is the answer (an upper bound:
			 * exact enough at or under the limit, taken as over
			 * above it), the key's next packets go on from there.
			 */
			if (++here == NFG_KCL_GC_BATCH && live < n->count)
				return n->count;
			continue;
		}
		if (++live > limit)
			return live;
		/*
		 * A limit of NFG_KCL_GC_BATCH or more: bound the live checks
		 * too; the rest count as remembered (the sweep forgets them).
		 */
		if (live == NFG_KCL_GC_BATCH && &tmp->node != &n->conns)
			return n->count;
	}
	WRITE_ONCE(n->walked, now);
	return live;
}

/*
 * Slot lock held: the pending entry of @n with identity @id, if any. The
 * same unconfirmed connection comes back (a chain jumped to twice: then it
 * is usually the newest entry; not the tail, walks rotate live entries
 * behind it), or a new conntrack took the tuple of one that was never
 * resolved (a client reset its connection and reopened the tuple at once,
 * conntrack replaced the closed entry; or the first SYN was dropped and
 * this is its retransmission): either way the entry, which would resolve
 * to this conntrack by its tuple, stands for it. A resolved entry with
 * @id is never this packet's: it holds another conntrack, confirmed, that
 * had the tuple before, and is forgotten once that one is dead.
 */
static struct nfg_kcl_conn *nfg_kcl_find_pending(struct nfg_kcl_node *n,
						 const struct nfg_kcl_ident *id)
{
	struct nfg_kcl_conn *c = n->newest;
	unsigned int left = n->pending;

	if (!left)
		return NULL;
	if (c && !c->ct && !memcmp(&c->id, id, sizeof(*id)))
		return c;
	/*
	 * Newest first, and no further than the last pending one: those
	 * are recent, near the tail, and a key's entries are mostly resolved.
	 */
	for (c = list_entry(n->conns.prev, struct nfg_kcl_conn, node);
	     &c->node != &n->conns;
	     c = list_entry(c->node.prev, struct nfg_kcl_conn, node)) {
		if (c->ct)
			continue;
		if (!memcmp(&c->id, id, sizeof(*id)))
			return c;
		if (!--left)
			break;
	}
	return NULL;
}

/*
 * Slot lock held: an entry on @dead that holds no reference (pending when
 * it was forgotten: its SYN was dropped), taken off @dead, or NULL. The
 * insert reuses it: no allocation, no free, and the counts of the table,
 * the budget and live_objects stay as they are.
 */
static struct nfg_kcl_conn *nfg_kcl_reusable(struct list_head *dead)
{
	struct nfg_kcl_conn *c;

	list_for_each_entry(c, dead, node) {
		if (!c->ct) {
			list_del(&c->node);
			return c;
		}
	}
	return NULL;
}

int nfg_kcl_add(struct nfg_kcl_table *t, const struct nfg_kcl_key *key,
		const struct nfg_kcl_ident *id, u32 stamp, u32 limit,
		const void *env, unsigned int *count)
{
	u32 slot = nfg_kcl_hash(t, key);
	spinlock_t *lock = nfg_kcl_lock(t, slot);
	struct nfg_kcl_node __rcu **link;
	unsigned int evicted = 0, gone = 0;
	struct nfg_kcl_conn *c = NULL;
	struct nfg_kcl_node *n;
	LIST_HEAD(dead);
	int ret = 0;

	spin_lock_bh(lock);
	for (link = &t->slots[slot];
	     (n = rcu_dereference_protected(*link, lockdep_is_held(lock)));
	     link = &n->next)
		if (nfg_kcl_key_eq(&n->key, key))
			break;

	if (n) {
		/* First: entries with this identity may have ended. */
		evicted = nfg_kcl_gc_insert(n, &dead, env);
		c = nfg_kcl_find_pending(n, id);
		if (c) {
			if (evicted)
				nfg_kcl_forgotten(t, evicted);
			/* From now on it stands for this packet's conntrack. */
			c->stamp = stamp;
			c->checked = stamp;
			ret = 1;
			goto counted;
		}
		/*
		 * Under a flood of SYNs dropped after the rule, the GC has just
		 * forgotten the key's previous one: it becomes this one (still
		 * counted: not gone). When it forgot two, one is kept for the
		 * next insert, whose GC may find nothing to forget (its
		 * previous SYN still in its grace); the spare is not counted.
		 */
		gone = evicted;
		if (evicted) {
			c = nfg_kcl_reusable(&dead);
			if (c)
				gone--;
		}
		if (!n->spare && gone)
			n->spare = nfg_kcl_reusable(&dead);
	}
	if (gone)
		nfg_kcl_forgotten(t, gone);

	if (c) {
		/*
		 * Still counted in the budget, as the new entry is: over the
		 * cap only when the cap was lowered below the count.
		 */
		if ((unsigned long)atomic_long_read(&t->budget->conns) >
		    READ_ONCE(nfg_kcl_max_conns)) {
			list_add(&c->node, &dead);
			nfg_kcl_forgotten(t, 1);
			this_cpu_inc(t->stats->cap_hits);
			ret = -ENOSPC;
			goto out_empty;
		}
		goto fill;
	}
	/* Unsigned: a cap above LONG_MAX is no cap, not a negative one. */
	if ((unsigned long)atomic_long_inc_return(&t->budget->conns) >
	    READ_ONCE(nfg_kcl_max_conns)) {
		atomic_long_dec(&t->budget->conns);
		this_cpu_inc(t->stats->cap_hits);
		ret = -ENOSPC;
		goto out_empty;
	}
	if (n && n->spare) {
		c = n->spare;
		n->spare = NULL;
		goto spare;
	}
	c = kmem_cache_alloc(nfg_kcl_conn_cache,
			     GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!c)
		goto err_nomem;
	if (!n) {
		n = kmalloc(sizeof(*n), GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
		if (!n) {
			kmem_cache_free(nfg_kcl_conn_cache, c);
			goto err_nomem;
		}
		n->key = *key;
		n->count = 0;
		/*
		 * Taken as walked when created: the sweep checks it from
		 * the next period on (its entries are at most a period old).
		 */
		n->walked = stamp - 1;
		n->pending = 0;
		n->newest = NULL;
		n->spare = NULL;
		INIT_LIST_HEAD(&n->conns);
		RCU_INIT_POINTER(n->next, rcu_dereference_protected(t->slots[slot],
								    lockdep_is_held(lock)));
		/* Publishes key, count and next to lockless readers. */
		rcu_assign_pointer(t->slots[slot], n);
		link = &t->slots[slot];
		atomic_inc(&t->keys);
		atomic_inc(&nfg_kcl_live_objects);
	}
	atomic_inc(&nfg_kcl_live_objects);
spare:
	atomic_inc(&t->conns);
	c->ct = NULL;
fill:
	c->stamp = stamp;
	c->checked = stamp;
	c->id = *id;
	list_add_tail(&c->node, &n->conns);
	n->newest = c;
	n->pending++;
	WRITE_ONCE(n->count, n->count + 1);
	this_cpu_inc(t->stats->inserts);
counted:
	/* Exact at this packet: the bound is checked when it is over. */
	*count = n->count;
	if (*count > limit)
		*count = nfg_kcl_verify(t, n, limit, c, &dead, env, stamp,
					&evicted);
	c->refused = *count > limit;
	goto out_unlock;

err_nomem:
	atomic_long_dec(&t->budget->conns);
	this_cpu_inc(t->stats->alloc_fail);
	ret = -ENOMEM;
out_empty:
	/* The bounded GC may have emptied an existing node. */
	if (n && !n->count)
		nfg_kcl_unlink(t, link, n, lock);
out_unlock:
	spin_unlock_bh(lock);
	if (evicted) {
		this_cpu_add(t->stats->gc_evictions, evicted);
		nfg_kcl_release_list(&dead);
	}
	return ret;
}

unsigned int nfg_kcl_count(const struct nfg_kcl_table *t,
			   const struct nfg_kcl_key *key)
{
	const struct nfg_kcl_node *n;
	unsigned int count = 0;

	rcu_read_lock();
	for (n = rcu_dereference(t->slots[nfg_kcl_hash(t, key)]); n;
	     n = rcu_dereference(n->next)) {
		if (nfg_kcl_key_eq(&n->key, key)) {
			count = READ_ONCE(n->count);
			break;
		}
	}
	rcu_read_unlock();
	return count;
}

/*
 * Slot lock held: unlink @n (count zero) from the chain of @slot, finding
 * the link that points to it.
 */
static void nfg_kcl_unlink_node(struct nfg_kcl_table *t, u32 slot,
				struct nfg_kcl_node *n, spinlock_t *lock)
{
	struct nfg_kcl_node __rcu **link = &t->slots[slot];
	struct nfg_kcl_node *p;

	while ((p = rcu_dereference_protected(*link, lockdep_is_held(lock)))) {
		if (p == n) {
			nfg_kcl_unlink(t, link, n, lock);
			return;
		}
		link = &p->next;
	}
	/* A node with connections is on its chain. */
	WARN_ON_ONCE(1);
}

unsigned int nfg_kcl_count_check(struct nfg_kcl_table *t,
				 const struct nfg_kcl_key *key, u32 limit,
				 u32 now, const void *env)
{
	u32 slot = nfg_kcl_hash(t, key);
	spinlock_t *lock = nfg_kcl_lock(t, slot);
	unsigned int count = 0, evicted = 0;
	struct nfg_kcl_node *n;
	LIST_HEAD(dead);

	rcu_read_lock();
	for (n = rcu_dereference(t->slots[slot]); n;
	     n = rcu_dereference(n->next)) {
		if (!nfg_kcl_key_eq(&n->key, key))
			continue;
		count = READ_ONCE(n->count);
		/* An upper bound: at or under the limit, the verdict stands. */
		if (count <= limit)
			break;
		spin_lock_bh(lock);
		/* Zero: unlinked since we found it (nodes never refill). */
		count = n->count;
		if (count > limit) {
			count = nfg_kcl_verify(t, n, limit, NULL, &dead, env,
					       now, &evicted);
			if (!n->count)
				nfg_kcl_unlink_node(t, slot, n, lock);
		}
		spin_unlock_bh(lock);
		break;
	}
	rcu_read_unlock();
	if (evicted) {
		this_cpu_add(t->stats->gc_evictions, evicted);
		nfg_kcl_release_list(&dead);
	}
	return count;
}

bool nfg_kcl_remove(struct nfg_kcl_table *t, const struct nfg_kcl_key *key,
		    const struct nfg_kcl_ident *id)
{
	u32 slot = nfg_kcl_hash(t, key);
	spinlock_t *lock = nfg_kcl_lock(t, slot);
	struct nfg_kcl_node __rcu **link;
	struct nfg_kcl_conn *c, *found = NULL;
	struct nfg_kcl_node *n;
	LIST_HEAD(dead);

	spin_lock_bh(lock);
	for (link = &t->slots[slot];
	     (n = rcu_dereference_protected(*link, lockdep_is_held(lock)));
	     link = &n->next)
		if (nfg_kcl_key_eq(&n->key, key))
			break;
	if (n) {
		list_for_each_entry(c, &n->conns, node) {
			if (!memcmp(&c->id, id, sizeof(*id))) {
				found = c;
				break;
			}
		}
		if (found) {
			nfg_kcl_evict(t, n, found, &dead);
			if (!n->count)
				nfg_kcl_unlink(t, link, n, lock);
		}
	}
	spin_unlock_bh(lock);
	nfg_kcl_release_list(&dead);
	return found;
}

/*
 * Slot @slot's lock held: find @key's node on the chain; @link is set to
 * the link that points to it.
 */
static struct nfg_kcl_node *
nfg_kcl_find_locked(struct nfg_kcl_table *t, u32 slot,
		    const struct nfg_kcl_key *key, spinlock_t *lock,
		    struct nfg_kcl_node __rcu ***link)
{
	struct nfg_kcl_node *n;

	for (*link = &t->slots[slot];
	     (n = rcu_dereference_protected(**link, lockdep_is_held(lock)));
	     *link = &n->next)
		if (nfg_kcl_key_eq(&n->key, key))
			return n;
	return NULL;
}

/*
 * Slot lock held: a packet checked every entry of @n less than @fresh
 * ticks before @now.
 */
static bool nfg_kcl_fresh(const struct nfg_kcl_node *n, u32 now, u32 fresh)
{
	return now - n->walked < fresh;
}

unsigned int nfg_kcl_gc(struct nfg_kcl_table *t, u32 first, u32 n,
			const void *env, u32 now, u32 fresh)
{
	unsigned int evicted = 0, here, held, todo;
	struct nfg_kcl_node __rcu **link;
	struct nfg_kcl_node *node;
	struct nfg_kcl_key key;
	struct nfg_kcl_conn *c;
	spinlock_t *lock;	/* the current slot's lock */
	LIST_HEAD(dead);
	u32 slot, end;

	end = min_t(u32, first + n, nfg_kcl_slots(t));
	for (slot = first; slot < end; slot++) {
		if (!rcu_access_pointer(t->slots[slot]))
			continue;
		lock = nfg_kcl_lock(t, slot);
		here = 0;
		held = 0;	/* entries checked in this lock hold */
		spin_lock_bh(lock);
		link = &t->slots[slot];
		while ((node = rcu_dereference_protected(*link,
							 lockdep_is_held(lock)))) {
			/*
			 * From the head, live ones rotated to the tail: after
			 * a break, the entries not checked yet are at the head.
			 */
			todo = nfg_kcl_fresh(node, now, fresh) ? 0 : node->count;
			while (todo) {
				if (held == NFG_KCL_GC_BATCH) {
					/*
					 * Bound the time packets of this slot
					 * wait for the lock (and BHs are off):
					 * let go, then find the node again.
					 */
					key = node->key;
					spin_unlock_bh(lock);
					nfg_kcl_release_list(&dead);
					cond_resched();
					held = 0;
					spin_lock_bh(lock);
					node = nfg_kcl_find_locked(t, slot, &key,
								   lock, &link);
					if (!node)
						goto next_slot;
					todo = min(todo, node->count);
					continue;
				}
				c = list_first_entry(&node->conns,
						     struct nfg_kcl_conn, node);
				if (nfg_kcl_dead(node, c, env)) {
					nfg_kcl_evict(t, node, c, &dead);
					here++;
				} else {
					list_move_tail(&c->node, &node->conns);
				}
				todo--;
				held++;
			}
			if (!node->count)
				nfg_kcl_unlink(t, link, node, lock);
			else
				link = &node->next;
		}
next_slot:
		spin_unlock_bh(lock);
		if (here) {
			this_cpu_add(t->stats->gc_evictions, here);
			evicted += here;
		}
		nfg_kcl_release_list(&dead);
	}
	return evicted;
}

void nfg_kcl_table_destroy(struct nfg_kcl_table *t)
{
	struct nfg_kcl_node *n, *next;
	struct nfg_kcl_conn *c, *tmp;
	u32 slot;

	if (!t->slots)
		return;
	for (slot = 0; slot < nfg_kcl_slots(t); slot++) {
		/* No reader and no writer is left: plain accesses. */
		for (n = rcu_dereference_raw(t->slots[slot]); n; n = next) {
			next = rcu_dereference_raw(n->next);
			list_for_each_entry_safe(c, tmp, &n->conns, node) {
				list_del(&c->node);
				atomic_long_dec(&t->budget->conns);
				nfg_kcl_conn_release(c);
				nfg_kcl_conn_free(c);
			}
			nfg_kcl_node_free(n);
		}
		if ((slot & 1023) == 1023)
			cond_resched();
	}
	free_percpu(t->stats);
	kvfree(t->locks);
	kvfree(t->slots);
	t->slots = NULL;
	atomic_dec(&nfg_kcl_live_objects);
}

/* ---- top-n ---- */

/* Heap order: a below b when a has fewer connections (ties: higher key). */
static bool nfg_kcl_below(const struct nfg_kcl_top_ent *a,
			  const struct nfg_kcl_top_ent *b)
{
	if (a->count != b->count)
		return a->count < b->count;
	return memcmp(&a->key, &b->key, sizeof(a->key)) > 0;
}

static void nfg_kcl_sift_down(struct nfg_kcl_top_ent *h, unsigned int len,
			      unsigned int i)
{
	struct nfg_kcl_top_ent tmp;
	unsigned int l, m;

	for (;;) {
		l = 2 * i + 1;
		if (l >= len)
			return;
		m = l;
		if (l + 1 < len && nfg_kcl_below(&h[l + 1], &h[l]))
			m = l + 1;
		if (!nfg_kcl_below(&h[m], &h[i]))
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void nfg_kcl_sift_up(struct nfg_kcl_top_ent *h, unsigned int i)
{
	struct nfg_kcl_top_ent tmp;
	unsigned int p;

	while (i) {
		p = (i - 1) / 2;
		if (!nfg_kcl_below(&h[i], &h[p]))
			return;
		tmp = h[i];
		h[i] = h[p];
		h[p] = tmp;
		i = p;
	}
}

unsigned int nfg_kcl_top(const struct nfg_kcl_table *t,
			 struct nfg_kcl_top_ent *out, unsigned int n)
{
	const struct nfg_kcl_node *node;
	struct nfg_kcl_top_ent e, tmp;
	unsigned int len = 0, i;
	u32 slot;

	if (!n)
		return 0;
	for (slot = 0; slot < nfg_kcl_slots(t); slot++) {
		if (!rcu_access_pointer(t->slots[slot]))
			continue;
		rcu_read_lock();
		for (node = rcu_dereference(t->slots[slot]); node;
		     node = rcu_dereference(node->next)) {
			e.key = node->key;
			e.count = READ_ONCE(node->count);
			if (!e.count)
				continue;
			if (len < n) {
				out[len] = e;
				nfg_kcl_sift_up(out, len++);
			} else if (nfg_kcl_below(&out[0], &e)) {
				out[0] = e;
				nfg_kcl_sift_down(out, len, 0);
			}
		}
		rcu_read_unlock();
		if ((slot & 1023) == 1023)
			cond_resched();
	}
	/* Heap sort: repeatedly move the smallest to the end. */
	for (i = len; i > 1; i--) {
		tmp = out[0];
		out[0] = out[i - 1];
		out[i - 1] = tmp;
		nfg_kcl_sift_down(out, i - 1, 0);
	}
	return len;
}

void nfg_kcl_table_info(const struct nfg_kcl_table *t, struct nfg_kcl_info *ci)
{
	const struct nfg_kcl_stats *s;
	int cpu;

	memset(ci, 0, sizeof(*ci));
	ci->keys = atomic_read(&t->keys);
	ci->conns = atomic_read(&t->conns);
	ci->memsize = (u64)nfg_kcl_slots(t) * sizeof(*t->slots) +
		      (u64)(t->lock_mask + 1) * sizeof(*t->locks) +
		      (u64)ci->keys * sizeof(struct nfg_kcl_node) +
		      (u64)ci->conns * sizeof(struct nfg_kcl_conn);
	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(t->stats, cpu);
		ci->stats.matched += READ_ONCE(s->matched);
		ci->stats.over_limit += READ_ONCE(s->over_limit);
		ci->stats.inserts += READ_ONCE(s->inserts);
		ci->stats.gc_evictions += READ_ONCE(s->gc_evictions);
		ci->stats.cap_hits += READ_ONCE(s->cap_hits);
		ci->stats.alloc_fail += READ_ONCE(s->alloc_fail);
	}
}
