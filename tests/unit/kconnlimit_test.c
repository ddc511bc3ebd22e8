// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the kconnlimit keyed count table (kernel/kconnlimit_core.c),
 * compiled in userspace against tests/unit/shim with ASan and UBSan, and
 * with SHIM_RCU_DEFER: RCU read-side sections are real (an rwlock) and
 * call_rcu() waits for them, so lockless readers running next to writers
 * are checked for use-after-free.
 *
 * The environment's conntrack is faked: a refcounted object the test
 * "kills" (dead flag + drop of the conntrack table's reference), freed on
 * its last put, so a table that keeps using a connection it released is
 * caught by ASan, and one that never releases it is caught by the live
 * counter. As in the kernel, the table remembers a new connection by its
 * identity only (here a serial number) and takes a reference when it
 * resolves it through a fake conntrack hash (confirmed, live objects),
 * with a fake clock for the grace of connections not confirmed yet.
 * After every test: no WARN, no leaked allocation, no fake conntrack
 * left, live_objects and the budgets back to zero.
 */
/* The core first: the shim's bitops.h defines ffs() as libc's strings.h does. */
#include "kconnlimit_core.c"
#include "utest.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- RCU for SHIM_RCU_DEFER ------------------------------------------- */

static pthread_rwlock_t rcu_lock;
static pthread_mutex_t rcu_queue_lock = PTHREAD_MUTEX_INITIALIZER;
static struct callback_head *rcu_queue;

void shim_rcu_read_lock(void)
{
	pthread_rwlock_rdlock(&rcu_lock);
}

void shim_rcu_read_unlock(void)
{
	pthread_rwlock_unlock(&rcu_lock);
}

void shim_call_rcu(struct callback_head *head,
		   void (*fn)(struct callback_head *head))
{
	head->func = fn;
	pthread_mutex_lock(&rcu_queue_lock);
	head->next = rcu_queue;
	rcu_queue = head;
	pthread_mutex_unlock(&rcu_queue_lock);
}

void shim_synchronize_rcu(void)
{
	struct callback_head *q, *next;

	pthread_mutex_lock(&rcu_queue_lock);
	q = rcu_queue;
	rcu_queue = NULL;
	pthread_mutex_unlock(&rcu_queue_lock);
	/* Every reader that could have seen a queued object leaves first. */
	pthread_rwlock_wrlock(&rcu_lock);
	pthread_rwlock_unlock(&rcu_lock);
	for (; q; q = next) {
		next = q->next;
		q->func(q);
	}
}

/* ---- fake conntrack --------------------------------------------------- */

struct fake_ct {
	int		refs;		/* atomic */
	int		dead;		/* atomic: killed, as nf_ct_is_dying() */
	int		confirmed;	/* atomic: in the fake hash */
	unsigned long	serial;		/* unique */
	/*
	 * Its identity (the kernel's tuple + zone): the serial, or an older
	 * conntrack's when it reopens that one's tuple (ct_reopen()).
	 */
	unsigned long	tuple;
	struct fake_ct	*next;		/* fake hash, under hash_lock */
};

static long fake_live;	/* atomic */
static unsigned long fake_lookups;	/* atomic: ct_find_get() calls */
static unsigned long fake_serial;	/* atomic */
static u32 fake_now;	/* the environment's clock (stamps, grace) */
/* The fake conntrack hash: every object not yet freed. */
static pthread_mutex_t hash_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_ct *hash_head;	/* under hash_lock */

/*
 * What the tests pass as env: the grace of unconfirmed entries, as the
 * kernel's (kconnlimit_ct.c): @refused for those the rule refused, @grace
 * for the others.
 */
struct fake_env {
	u32	grace;
	u32	refused;
};

static const struct fake_env env0 = { .grace = 0 };
/* A queue may hold a new connection 10 ticks; a refused one goes after 2. */
static const struct fake_env pend = { .grace = 10, .refused = 2 };

static struct fake_ct *ct_new_state(int confirmed)
{
	struct fake_ct *ct = calloc(1, sizeof(*ct));

	if (!ct)
		abort();
	ct->refs = 1;	/* the conntrack table's reference */
	ct->confirmed = confirmed;
	ct->serial = __atomic_add_fetch(&fake_serial, 1, __ATOMIC_RELAXED);
	ct->tuple = ct->serial;
	pthread_mutex_lock(&hash_lock);
	ct->next = hash_head;
	hash_head = ct;
	pthread_mutex_unlock(&hash_lock);
	__atomic_fetch_add(&fake_live, 1, __ATOMIC_RELAXED);
	return ct;
}

static struct fake_ct *ct_new(void)
{
	return ct_new_state(1);
}

static void ct_put(struct fake_ct *ct)
{
	struct fake_ct **p;

	if (__atomic_sub_fetch(&ct->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		pthread_mutex_lock(&hash_lock);
		for (p = &hash_head; *p != ct; p = &(*p)->next)
			;
		*p = ct->next;
		pthread_mutex_unlock(&hash_lock);
		free(ct);
		__atomic_fetch_sub(&fake_live, 1, __ATOMIC_RELAXED);
	}
}

/* conntrack deletes it: no longer counts, table reference dropped */
static void ct_kill(struct fake_ct *ct)
{
	__atomic_store_n(&ct->dead, 1, __ATOMIC_RELEASE);
	ct_put(ct);
}

/*
 * A client resets @old and at once reopens its tuple: conntrack kills @old
 * (its reference on it dropped, as ct_kill()) and makes a new, unconfirmed
 * conntrack for the same tuple.
 */
static struct fake_ct *ct_reopen(struct fake_ct *old)
{
	struct fake_ct *ct = ct_new_state(0);

	ct->tuple = old->tuple;
	ct_kill(old);
	return ct;
}

static struct nfg_kcl_ident ct_id(const struct fake_ct *ct)
{
	struct nfg_kcl_ident id;

	memset(&id, 0, sizeof(id));
	memcpy(id.w, &ct->tuple, sizeof(ct->tuple));
	return id;
}

/* nf_conntrack_find_get(): a confirmed, live object, with a reference. */
static struct fake_ct *ct_find_get(const struct nfg_kcl_ident *id)
{
	struct fake_ct *ct, *found = NULL;
	int r;

	__atomic_fetch_add(&fake_lookups, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&hash_lock);
	for (ct = hash_head; ct; ct = ct->next) {
		/* the one confirmed, live conntrack of the tuple, if any */
		if (memcmp(&ct->tuple, id->w, sizeof(ct->tuple)) ||
		    !__atomic_load_n(&ct->confirmed, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&ct->dead, __ATOMIC_ACQUIRE))
			continue;
		/* refcount_inc_not_zero(): a put to zero may be waiting for us */
		r = __atomic_load_n(&ct->refs, __ATOMIC_RELAXED);
		while (r && !__atomic_compare_exchange_n(&ct->refs, &r, r + 1, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			;
		if (r)
			found = ct;
		break;
	}
	pthread_mutex_unlock(&hash_lock);
	return found;
}

/* Checks made in one hold of a slot lock: the latest run, the longest. */
static unsigned long hold_unlocks, hold_run, hold_max;

bool nfg_kcl_conn_dead(struct nfg_kcl_conn *c, const void *arg)
{
	const struct fake_env *env = arg;
	const struct fake_ct *ct;

	if (__atomic_load_n(&shim_unlocks, __ATOMIC_RELAXED) != hold_unlocks) {
		hold_unlocks = __atomic_load_n(&shim_unlocks, __ATOMIC_RELAXED);
		hold_run = 0;
	}
	if (++hold_run > hold_max)
		hold_max = hold_run;

	if (!c->ct) {
		u32 grace = c->refused ? env->refused : env->grace;
		u32 age = fake_now - c->stamp;

		/* the kernel's back-off between lookups of a pending entry */
		if (age < grace && fake_now - c->checked < c->checked - c->stamp)
			return false;
		c->ct = ct_find_get(&c->id);
		if (!c->ct) {
			c->checked = fake_now;
			return age >= grace;
		}
	}
	ct = c->ct;
	return __atomic_load_n(&ct->dead, __ATOMIC_ACQUIRE);
}

bool nfg_kcl_conn_young(const struct nfg_kcl_conn *c, const void *arg)
{
	const struct fake_env *env = arg;
	u32 grace = c->refused ? env->refused : env->grace;

	return !c->ct && fake_now - c->stamp < grace;
}

void nfg_kcl_conn_release(struct nfg_kcl_conn *c)
{
	if (c->ct)
		ct_put(c->ct);
}

/* ---- harness ---------------------------------------------------------- */

/* Tables share @budget (one netns) unless a test says otherwise. */
static struct nfg_kcl_budget budget, budget2;
/* A sweep runs concurrently with conn() (test_concurrent). */
static bool conc_sweep;

static void run(const char *name, void (*fn)(void))
{
	struct utest_mark m = utest_begin(name);

	nfg_kcl_max_conns = NFG_KCL_DEFAULT_MAX_CONNS;
	fake_now = 0;
	fn();
	shim_fail_alloc_in(0);
	shim_synchronize_rcu();
	if (fake_live)
		fail_at(__FILE__, __LINE__, "%ld fake conntrack(s) never released",
			fake_live);
	if (atomic_read(&nfg_kcl_live_objects))
		fail_at(__FILE__, __LINE__, "live_objects %d after the test",
			atomic_read(&nfg_kcl_live_objects));
	if (atomic_long_read(&budget.conns) || atomic_long_read(&budget2.conns))
		fail_at(__FILE__, __LINE__, "budgets %ld %ld after the test",
			atomic_long_read(&budget.conns),
			atomic_long_read(&budget2.conns));
	utest_end(&m);
}

/* ---- helpers ---------------------------------------------------------- */

static struct nfg_kcl_key k4(u32 a)
{
	return (struct nfg_kcl_key){ { a, 0, 0, 0 }, 0 };
}

static struct nfg_kcl_key k6(u32 a, u32 d)
{
	return (struct nfg_kcl_key){ { a, 0, 0, d }, 0 };
}

/*
 * A new connection through the "match" of a rule with @limit, with @env:
 * returns add()'s result.
 */
static int conn_lim(struct nfg_kcl_table *t, struct nfg_kcl_key k,
		    struct fake_ct *ct, u32 limit, const struct fake_env *env,
		    unsigned int *count)
{
	struct nfg_kcl_ident id = ct_id(ct);
	int refs = __atomic_load_n(&ct->refs, __ATOMIC_RELAXED);
	int ret;

	ret = nfg_kcl_add(t, &k, &id, fake_now, limit, env, count);
	/*
	 * No reference taken on the new connection (NFQUEUE drops those);
	 * with a concurrent sweep, that sweep may already have resolved it.
	 */
	if (!conc_sweep)
		CHECK_EQ(__atomic_load_n(&ct->refs, __ATOMIC_RELAXED), refs);
	return ret;
}

static int conn(struct nfg_kcl_table *t, struct nfg_kcl_key k,
		struct fake_ct *ct, unsigned int *count)
{
	return conn_lim(t, k, ct, U32_MAX, &env0, count);
}

/* An unconfirmed connection (as every new one in the kernel), no limit. */
static int conn_new(struct nfg_kcl_table *t, struct nfg_kcl_key k,
		    struct fake_ct *ct, unsigned int *count)
{
	return conn_lim(t, k, ct, U32_MAX, &pend, count);
}

static bool rm(struct nfg_kcl_table *t, struct nfg_kcl_key k,
	       struct fake_ct *ct)
{
	struct nfg_kcl_ident id = ct_id(ct);

	return nfg_kcl_remove(t, &k, &id);
}

/* Count list entries and chain nodes by walking the table (quiescent). */
static void walk(const struct nfg_kcl_table *t, u32 *keys, u32 *conns)
{
	const struct nfg_kcl_node *n;
	const struct nfg_kcl_conn *c;
	u32 slot, len, pending;

	*keys = *conns = 0;
	for (slot = 0; slot < nfg_kcl_slots(t); slot++) {
		for (n = rcu_dereference_raw(t->slots[slot]); n;
		     n = rcu_dereference_raw(n->next)) {
			len = 0;
			pending = 0;
			list_for_each_entry(c, &n->conns, node) {
				len++;
				pending += !c->ct;
			}
			CHECK_EQ(len, n->count);
			CHECK_EQ(pending, n->pending);
			CHECK(n->count > 0);
			CHECK_EQ(nfg_kcl_hash(t, &n->key), slot);
			(*keys)++;
			*conns += len;
		}
	}
	CHECK_EQ(*keys, atomic_read(&t->keys));
	CHECK_EQ(*conns, atomic_read(&t->conns));
}

static void info(const struct nfg_kcl_table *t, struct nfg_kcl_info *ci)
{
	u32 keys, conns;

	walk(t, &keys, &conns);
	nfg_kcl_table_info(t, ci);
	CHECK_EQ(ci->keys, keys);
	CHECK_EQ(ci->conns, conns);
}

/* ---- tests ------------------------------------------------------------ */

static void test_init_checks(void)
{
	struct nfg_kcl_table t;

	CHECK_EQ(nfg_kcl_table_init(&t, 1000, 16, 1, false, &budget), -EINVAL);
	CHECK_EQ(nfg_kcl_table_init(&t, 1024, 3, 1, false, &budget), -EINVAL);
	CHECK_EQ(nfg_kcl_table_init(&t, 0, 16, 1, false, &budget), -EINVAL);
	CHECK_EQ(nfg_kcl_table_init(&t, NFG_KCL_SLOTS_MAX * 2, 16, 1, false, &budget), -EINVAL);
	CHECK_EQ(nfg_kcl_table_init(&t, 16, NFG_KCL_LOCKS_MAX * 2, 1, false, &budget), -EINVAL);
	CHECK_EQ(nfg_kcl_table_init(&t, 1, 1, 1, true, &budget), 0);
	CHECK_EQ(atomic_read(&nfg_kcl_live_objects), 1);
	nfg_kcl_table_destroy(&t);
	/* every allocation failure unwinds */
	for (unsigned long i = 1; i <= 3; i++) {
		shim_fail_alloc_in(i);
		CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 1, false, &budget), -ENOMEM);
		CHECK(shim_alloc_failed());
	}
}

static void test_count_basic(void)
{
	struct fake_ct *a[3], *b;
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	unsigned int cnt = 0;
	int i;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 7, false, &budget), 0);
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 1 }, 0 }), 0);
	for (i = 0; i < 3; i++) {
		a[i] = ct_new();
		CHECK_EQ(conn(&t, k4(0x0a000100), a[i], &cnt), 0);
		CHECK_EQ(cnt, i + 1);
	}
	b = ct_new_state(0);
	CHECK_EQ(conn_new(&t, k4(0x0a000200), b, &cnt), 0);
	CHECK_EQ(cnt, 1);
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 0x0a000100 }, 0 }), 3);
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 0x0a000200 }, 0 }), 1);
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 0x0a000300 }, 0 }), 0);
	info(&t, &ci);
	CHECK_EQ(ci.keys, 2);
	CHECK_EQ(ci.conns, 4);
	CHECK_EQ(ci.stats.inserts, 4);
	CHECK_EQ(atomic_long_read(&budget.conns), 4);
	/* the same unconfirmed conntrack again: not counted twice */
	CHECK_EQ(conn_new(&t, k4(0x0a000200), b, &cnt), 1);
	CHECK_EQ(cnt, 1);
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 0x0a000200 }, 0 }), 1);
	for (i = 0; i < 3; i++)
		ct_put(a[i]);	/* still alive in conntrack: the table holds refs */
	ct_put(b);	/* never confirmed: dropped with its packet */
	nfg_kcl_table_destroy(&t);
}

static void test_remove(void)
{
	struct nfg_kcl_table t;
	struct fake_ct *a, *b;
	struct nfg_kcl_info ci;
	unsigned int cnt;

	CHECK_EQ(nfg_kcl_table_init(&t, 16, 4, 3, true, &budget), 0);
	a = ct_new();
	b = ct_new();
	CHECK_EQ(conn(&t, k6(0x20010db8, 1), a, &cnt), 0);
	CHECK_EQ(conn(&t, k6(0x20010db8, 1), b, &cnt), 0);
	CHECK_EQ(cnt, 2);
	CHECK(!rm(&t, (struct nfg_kcl_key){ { 0x20010db8, 0, 0, 2 }, 0 }, a));
	CHECK(rm(&t, (struct nfg_kcl_key){ { 0x20010db8, 0, 0, 1 }, 0 }, a));
	CHECK(!rm(&t, (struct nfg_kcl_key){ { 0x20010db8, 0, 0, 1 }, 0 }, a));
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 0x20010db8, 0, 0, 1 }, 0 }), 1);
	CHECK(rm(&t, (struct nfg_kcl_key){ { 0x20010db8, 0, 0, 1 }, 0 }, b));
	info(&t, &ci);
	CHECK_EQ(ci.keys, 0);
	CHECK_EQ(ci.conns, 0);
	ct_put(a);
	ct_put(b);
	nfg_kcl_table_destroy(&t);
}

/* Many keys in one slot (1 slot, 1 lock): chains link and unlink right. */
static void test_chain(void)
{
	struct fake_ct *ct[40];
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	unsigned int cnt;
	int i;

	CHECK_EQ(nfg_kcl_table_init(&t, 1, 1, 9, false, &budget), 0);
	for (i = 0; i < 40; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, k4(i % 10), ct[i], &cnt), 0);
		CHECK_EQ(cnt, i / 10 + 1);
	}
	info(&t, &ci);
	CHECK_EQ(ci.keys, 10);
	/* kill every connection of keys 0, 5 and 9 (head, middle, tail of the chain) */
	for (i = 0; i < 40; i++)
		if (i % 10 == 0 || i % 10 == 5 || i % 10 == 9)
			ct_kill(ct[i]);
	CHECK_EQ(nfg_kcl_gc(&t, 0, 1, &env0, fake_now, 0), 12);
	info(&t, &ci);
	CHECK_EQ(ci.keys, 7);
	CHECK_EQ(ci.conns, 28);
	CHECK_EQ(ci.stats.gc_evictions, 12);
	for (i = 0; i < 10; i++)
		CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { i }, 0 }),
			 (i == 0 || i == 5 || i == 9) ? 0 : 4);
	for (i = 0; i < 40; i++)
		if (!(i % 10 == 0 || i % 10 == 5 || i % 10 == 9))
			ct_kill(ct[i]);
	CHECK_EQ(nfg_kcl_gc(&t, 0, 1, &env0, fake_now, 0), 28);
	info(&t, &ci);
	CHECK_EQ(ci.keys, 0);
	nfg_kcl_table_destroy(&t);
}

/* Insert-time GC: the newest dead entries and, rotating, the oldest. */
static void test_gc_on_insert(void)
{
	struct fake_ct *ct[20], *x;
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	unsigned int cnt;
	int i;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	/* an abandoned newest entry is forgotten by the next insert */
	for (i = 0; i < 10; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, k4(42), ct[i], &cnt), 0);
	}
	ct_kill(ct[9]);
	x = ct_new();
	CHECK_EQ(conn(&t, k4(42), x, &cnt), 0);
	CHECK_EQ(cnt, 10);
	/* a flood of refused connections never grows the list */
	for (i = 0; i < 1000; i++) {
		struct fake_ct *f = ct_new();

		CHECK_EQ(conn(&t, k4(42), f, &cnt), 0);
		CHECK_EQ(cnt, 11);
		ct_kill(f);
	}
	/* dead old entries are all found by successive inserts */
	for (i = 0; i < 9; i++)
		ct_kill(ct[i]);
	for (i = 10; i < 20; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, k4(42), ct[i], &cnt), 0);
	}
	info(&t, &ci);
	/* x and the 10 new ones; the last flood entry went with ct[10]'s insert */
	CHECK_EQ(ci.conns, 11);
	CHECK_EQ(ci.stats.gc_evictions, 1 + 999 + 1 + 9);
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0), 0);
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 42 }, 0 }), 11);
	ct_put(x);
	for (i = 10; i < 20; i++)
		ct_put(ct[i]);
	nfg_kcl_table_destroy(&t);
}

static void test_cap(void)
{
	struct nfg_kcl_table t, u;
	struct nfg_kcl_info ci;
	struct fake_ct *ct[6];
	unsigned int cnt;
	int i;

	nfg_kcl_max_conns = 5;
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	CHECK_EQ(nfg_kcl_table_init(&u, 64, 8, 6, false, &budget), 0);
	for (i = 0; i < 3; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, k4(i), ct[i], &cnt), 0);
	}
	for (i = 3; i < 5; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&u, k4(i), ct[i], &cnt), 0);
	}
	/* the cap is the budget's: the 6th in either table is refused */
	ct[5] = ct_new();
	CHECK_EQ(conn(&t, k4(100), ct[5], &cnt), -ENOSPC);
	CHECK_EQ(conn(&u, k4(3), ct[5], &cnt), -ENOSPC);
	info(&t, &ci);
	CHECK_EQ(ci.stats.cap_hits, 1);
	CHECK_EQ(ci.keys, 3);	/* no empty node left behind */
	info(&u, &ci);
	CHECK_EQ(ci.stats.cap_hits, 1);
	CHECK_EQ(nfg_kcl_count(&u, &(struct nfg_kcl_key){ { 3 }, 0 }), 1);
	/* insert-time GC of the same key makes room */
	ct_kill(ct[3]);
	CHECK_EQ(conn(&u, k4(3), ct[5], &cnt), 0);
	CHECK_EQ(cnt, 1);
	CHECK_EQ(atomic_long_read(&budget.conns), 5);
	/* a node emptied by the GC, then refused at the cap, is unlinked */
	ct_kill(ct[4]);
	ct_kill(ct[5]);
	nfg_kcl_max_conns = 0;
	{
		struct fake_ct *y = ct_new();

		CHECK_EQ(conn(&u, k4(4), y, &cnt), -ENOSPC);
		ct_put(y);
	}
	info(&u, &ci);
	CHECK_EQ(ci.keys, 1);
	for (i = 0; i < 3; i++)
		ct_put(ct[i]);
	nfg_kcl_table_destroy(&t);
	nfg_kcl_table_destroy(&u);
}

/*
 * One budget per netns: a full one refuses only its own tables; a cap
 * above LONG_MAX (a huge module parameter) is no cap at all.
 */
static void test_budgets(void)
{
	struct fake_ct *a[3], *b;
	struct nfg_kcl_table t, u;
	unsigned int cnt;
	int i;

	nfg_kcl_max_conns = 2;
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	CHECK_EQ(nfg_kcl_table_init(&u, 64, 8, 6, false, &budget2), 0);
	for (i = 0; i < 3; i++)
		a[i] = ct_new();
	b = ct_new();
	CHECK_EQ(conn(&t, k4(1), a[0], &cnt), 0);
	CHECK_EQ(conn(&t, k4(2), a[1], &cnt), 0);
	CHECK_EQ(conn(&t, k4(3), a[2], &cnt), -ENOSPC);
	CHECK_EQ(conn(&u, k4(1), b, &cnt), 0);
	CHECK_EQ(atomic_long_read(&budget.conns), 2);
	CHECK_EQ(atomic_long_read(&budget2.conns), 1);
	nfg_kcl_max_conns = ~0UL;
	CHECK_EQ(conn(&t, k4(3), a[2], &cnt), 0);
	nfg_kcl_max_conns = (unsigned long)LONG_MAX + 1;
	CHECK_EQ(conn(&t, k4(4), b, &cnt), 0);
	for (i = 0; i < 3; i++)
		ct_put(a[i]);
	ct_put(b);
	nfg_kcl_table_destroy(&t);
	nfg_kcl_table_destroy(&u);
}

/*
 * The creating packet passes the rule again (a chain jumped to twice)
 * while its key holds more entries than the insert-time GC rotates: it is
 * still recognised as the newest entry and not counted twice.
 */
static void test_dup_many(void)
{
	struct fake_ct *ct[8];
	struct nfg_kcl_table t;
	unsigned int cnt;
	int i;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	for (i = 0; i < 8; i++) {
		ct[i] = ct_new_state(0);
		CHECK_EQ(conn_new(&t, k4(7), ct[i], &cnt), 0);
		CHECK_EQ(cnt, i + 1);
		CHECK_EQ(conn_new(&t, k4(7), ct[i], &cnt), 1);
		CHECK_EQ(cnt, i + 1);
		CHECK_EQ(conn_new(&t, k4(7), ct[i], &cnt), 1);
		CHECK_EQ(cnt, i + 1);
	}
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 7 }, 0 }), 8);
	for (i = 0; i < 8; i++)
		ct_put(ct[i]);
	nfg_kcl_table_destroy(&t);
}

/*
 * Issue 28: counts are exact at every packet, with no clock tick between
 * events. At or under the limit the remembered count (an upper bound)
 * decides without a check; above it the key is checked until limit + 1
 * live entries are found (over) or none is left (exact), however long the
 * key, and a connection that ended no longer counts for the very next
 * packet. The last check unlinks the key. Duplicates are still seen after
 * checks.
 */
static void test_count_check(void)
{
	const unsigned int n = 300;
	struct nfg_kcl_key key = k4(9);
	struct fake_ct *ct[300], *x, *y;
	struct nfg_kcl_table t;
	unsigned int i, cnt;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	for (i = 0; i < n; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, key, ct[i], &cnt), 0);
	}
	CHECK_EQ(cnt, n);
	fake_now = 1;
	/* over a limit of 10: 11 live ones are enough to know */
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 10, fake_now, &env0), 11);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 1000, fake_now, &env0), n);
	/* the first 250 end: the very next packet (same tick) counts 50 */
	for (i = 0; i < 250; i++)
		ct_kill(ct[i]);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 60, fake_now, &env0), 50);
	CHECK_EQ(nfg_kcl_count(&t, &key), 50);
	/* at or under the limit: the bound stands, nothing is checked */
	ct_kill(ct[250]);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 50, fake_now, &env0), 50);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 49, fake_now, &env0), 49);
	CHECK_EQ(nfg_kcl_count(&t, &key), 49);
	/* all end, same tick: the next packet counts none, the key goes */
	for (i = 251; i < n; i++)
		ct_kill(ct[i]);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &env0), 0);
	CHECK_EQ(nfg_kcl_count(&t, &key), 0);

	/* a new key: its first entry's end counts at once */
	x = ct_new_state(0);
	y = ct_new_state(0);
	CHECK_EQ(conn_new(&t, key, x, &cnt), 0);
	CHECK_EQ(conn_new(&t, key, y, &cnt), 0);
	CHECK_EQ(cnt, 2);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 1, fake_now, &pend), 2);
	/* after the check, y (unconfirmed) is still known as the newest */
	CHECK_EQ(conn_new(&t, key, y, &cnt), 1);
	CHECK_EQ(cnt, 2);
	/* both confirmed: the next check finds them */
	__atomic_store_n(&x->confirmed, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&y->confirmed, 1, __ATOMIC_RELEASE);
	fake_now = 4;
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &pend), 1);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 1, fake_now, &pend), 2);
	CHECK_EQ(x->refs, 2);
	CHECK_EQ(y->refs, 2);
	ct_kill(x);
	/* same tick: x no longer counts */
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &pend), 1);
	CHECK_EQ(nfg_kcl_count(&t, &key), 1);
	ct_kill(y);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &pend), 0);
	nfg_kcl_table_destroy(&t);
}

/*
 * Issue 28: the insert's count is exact too. A key at its limit whose
 * connections end lets the next new connection in at once (same tick); a
 * key over it checks only up to limit + 1 live entries.
 */
static void test_add_exact(void)
{
	struct nfg_kcl_key key = k4(0x0a000103);
	struct fake_ct *ct[20], *x;
	struct nfg_kcl_table t;
	unsigned int i, cnt;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	fake_now = 50;
	for (i = 0; i < 20; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn_lim(&t, key, ct[i], 3, &pend, &cnt), 0);
		CHECK_EQ(cnt, i < 3 ? i + 1 : 4);
	}
	/* the sweep found them confirmed; all but two end */
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &pend, fake_now, 0), 0);
	for (i = 0; i < 18; i++)
		ct_kill(ct[i]);
	x = ct_new();
	/* a new one is the third, under a limit of 3 */
	CHECK_EQ(conn_lim(&t, key, x, 3, &pend, &cnt), 0);
	CHECK_EQ(cnt, 3);
	CHECK(!t.slots[nfg_kcl_hash(&t, &key)]->newest->refused);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 2, fake_now, &pend), 3);
	CHECK_EQ(nfg_kcl_count(&t, &key), 3);
	ct_kill(x);
	ct_kill(ct[18]);
	ct_kill(ct[19]);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &pend), 0);
	nfg_kcl_table_destroy(&t);
}

/*
 * Issue 28 (flood cost): SYNs that pass the rule and are dropped after it
 * (never confirmed) cost one conntrack lookup each, when their grace is
 * over and the insert's GC forgets them: none while they are young.
 */
static void test_flood_lookups(void)
{
	const struct fake_env flood = { .grace = 2, .refused = 2 };
	const struct nfg_kcl_key key = k4(0x0a000105);
	struct nfg_kcl_table t;
	unsigned long lookups;
	unsigned int i, cnt;
	struct fake_ct *x;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	lookups = fake_lookups;
	for (i = 0; i < 1000; i++) {
		fake_now = 1000 + i / 3;	/* three SYNs of the key a tick */
		x = ct_new_state(0);
		CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
		CHECK(cnt <= 9);
		ct_put(x);	/* dropped after the rule */
	}
	CHECK(fake_lookups - lookups <= 1000);
	CHECK(nfg_kcl_count(&t, &key) <= 9);
	fake_now += 10;
	cnt = nfg_kcl_count(&t, &key);
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &flood, fake_now, 0), cnt);
	CHECK_EQ(nfg_kcl_count(&t, &key), 0);
	nfg_kcl_table_destroy(&t);
}

/*
 * A flood of SYNs dropped after the rule, one per grace: each insert's GC
 * forgets the key's previous SYN, whose entry (no reference held) becomes
 * the new one. No allocation after the first (an armed allocation failure
 * would refuse the insert), the budget and live_objects stay put.
 */
static void test_flood_reuse(void)
{
	const struct fake_env flood = { .grace = 2, .refused = 2 };
	const struct nfg_kcl_key key = k4(0x0a000107);
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	unsigned int i, cnt;
	struct fake_ct *x;
	int live;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	fake_now = 500;
	x = ct_new_state(0);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
	ct_put(x);
	live = atomic_read(&nfg_kcl_live_objects);
	for (i = 1; i < 1000; i++) {
		fake_now += 2;	/* the previous SYN's grace is over */
		x = ct_new_state(0);
		shim_fail_alloc_in(1);
		CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
		CHECK(!shim_alloc_failed());
		shim_fail_alloc_in(0);
		CHECK_EQ(cnt, 1);
		ct_put(x);
	}
	CHECK_EQ(atomic_read(&nfg_kcl_live_objects), live);
	CHECK_EQ(atomic_long_read(&budget.conns), 1);
	info(&t, &ci);
	CHECK_EQ(ci.conns, 1);
	CHECK_EQ(ci.stats.inserts, 1000);
	CHECK_EQ(ci.stats.gc_evictions, 999);
	/* a connection that is confirmed is not taken for a dropped one */
	fake_now += 2;
	x = ct_new();
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
	CHECK_EQ(cnt, 1);
	fake_now += 2;
	{
		struct fake_ct *y = ct_new_state(0);

		CHECK_EQ(conn_lim(&t, key, y, 100, &flood, &cnt), 0);
		CHECK_EQ(cnt, 2);
		ct_put(y);
	}
	ct_put(x);
	nfg_kcl_table_destroy(&t);

	/*
	 * Two SYNs a grace: the second finds the first in its grace (nothing
	 * to forget), the next one forgets both: one becomes it, the other
	 * is kept for the one after. Still no allocation.
	 */
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	fake_now = 2000;
	for (i = 0; i < 1000; i++) {
		fake_now += i & 1 ? 1 : 3;
		x = ct_new_state(0);
		if (i >= 4) {
			shim_fail_alloc_in(1);
			CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
			CHECK(!shim_alloc_failed());
			shim_fail_alloc_in(0);
		} else {
			CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
		}
		CHECK(cnt <= 2);
		ct_put(x);
		if (i == 3)
			live = atomic_read(&nfg_kcl_live_objects);
	}
	CHECK_EQ(atomic_read(&nfg_kcl_live_objects), live);
	info(&t, &ci);
	CHECK_EQ(ci.stats.inserts, 1000);
	CHECK_EQ(atomic_long_read(&budget.conns), ci.conns);
	/* the sweep forgets the key: its node goes with the spare entry */
	fake_now += 10;
	nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &flood, fake_now, 0);
	CHECK_EQ(nfg_kcl_count(&t, &key), 0);
	nfg_kcl_table_destroy(&t);
}

/* The node of @key in @t (quiescent), or NULL. */
static struct nfg_kcl_node *node_of(struct nfg_kcl_table *t,
				    const struct nfg_kcl_key *key)
{
	struct nfg_kcl_node *n;

	for (n = rcu_dereference_raw(t->slots[nfg_kcl_hash(t, key)]); n;
	     n = rcu_dereference_raw(n->next))
		if (nfg_kcl_key_eq(&n->key, key))
			return n;
	return NULL;
}

/*
 * A key whose node holds a spare entry and one pending SYN within its
 * grace (the flood of test_flood_reuse, two SYNs a grace): SYNs at
 * fake_now 1000, 1001 (nothing to forget: the first is young) and 1004
 * (both forgotten: one becomes it, the other the spare). Returns the
 * last SYN's conntrack (unconfirmed, the caller puts it).
 */
static struct fake_ct *spare_key(struct nfg_kcl_table *t,
				 const struct nfg_kcl_key *key,
				 const struct fake_env *env)
{
	static const u32 at[] = { 1000, 1001, 1004 };
	struct fake_ct *x = NULL;
	unsigned int i, cnt;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		if (x)
			ct_put(x);	/* its SYN dropped after the rule */
		fake_now = at[i];
		x = ct_new_state(0);
		CHECK_EQ(conn_lim(t, *key, x, 100, env, &cnt), 0);
	}
	CHECK_EQ(cnt, 1);
	CHECK(node_of(t, key) && node_of(t, key)->spare);
	return x;
}

/*
 * Leave @key with one entry its next insert's GC forgets: a SYN counted at
 * time 100 whose conntrack was dropped after the rule, two jiffies ago.
 */
static void forgotten_key(struct nfg_kcl_table *t,
			  const struct nfg_kcl_key *key,
			  const struct fake_env *env)
{
	struct fake_ct *x;
	unsigned int cnt;

	fake_now = 100;
	x = ct_new_state(0);
	CHECK_EQ(conn_lim(t, *key, x, 100, env, &cnt), 0);
	ct_put(x);
	fake_now += 2;
}

/*
 * The entry an insert reuses (one its GC just forgot, or the node's spare)
 * does not get past the cap: with the cap lowered under the count, the
 * insert is refused (-ENOSPC, counted as a cap hit) and leaves the counts,
 * the budget and the spare as they were.
 */
static void test_reuse_cap(void)
{
	const struct fake_env flood = { .grace = 2, .refused = 2 };
	const struct nfg_kcl_key key = k4(0x0a000108);
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	struct fake_ct *x;
	unsigned int cnt;

	/* the entry the GC forgets (the previous, dropped SYN) */
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	forgotten_key(&t, &key, &flood);
	nfg_kcl_max_conns = 0;
	x = ct_new_state(0);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), -ENOSPC);
	CHECK_EQ(nfg_kcl_count(&t, &key), 0);
	CHECK_EQ(atomic_long_read(&budget.conns), 0);
	info(&t, &ci);
	CHECK_EQ(ci.stats.cap_hits, 1);
	CHECK_EQ(ci.keys, 0);
	/* back under the cap: counted again */
	nfg_kcl_max_conns = NFG_KCL_DEFAULT_MAX_CONNS;
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
	CHECK_EQ(cnt, 1);
	ct_put(x);
	nfg_kcl_table_destroy(&t);

	/* the node's spare (nothing forgotten: the previous SYN is young) */
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	ct_put(spare_key(&t, &key, &flood));
	fake_now++;
	nfg_kcl_max_conns = 1;
	x = ct_new_state(0);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), -ENOSPC);
	CHECK_EQ(nfg_kcl_count(&t, &key), 1);
	CHECK_EQ(atomic_long_read(&budget.conns), 1);
	CHECK(node_of(&t, &key)->spare);
	info(&t, &ci);
	CHECK_EQ(ci.stats.cap_hits, 1);
	/* under a raised cap the spare is taken: no allocation */
	nfg_kcl_max_conns = 2;
	shim_fail_alloc_in(1);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
	CHECK(!shim_alloc_failed());
	shim_fail_alloc_in(0);
	CHECK_EQ(cnt, 2);
	CHECK(!node_of(&t, &key)->spare);
	ct_put(x);
	nfg_kcl_table_destroy(&t);
}

/*
 * The same unconfirmed conntrack inserted again (its packet passes the
 * rule twice) is not counted twice when its entry was a reused one: the
 * entry the GC forgot, or the node's spare.
 */
static void test_reinsert_reused(void)
{
	const struct fake_env flood = { .grace = 2, .refused = 2 };
	const struct nfg_kcl_key key = k4(0x0a000109);
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	struct fake_ct *x;
	unsigned int cnt;

	/* a forgotten entry reused */
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	forgotten_key(&t, &key, &flood);
	x = ct_new_state(0);
	shim_fail_alloc_in(1);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
	CHECK(!shim_alloc_failed());
	shim_fail_alloc_in(0);
	CHECK_EQ(cnt, 1);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 1);
	CHECK_EQ(cnt, 1);
	fake_now++;
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 1);
	CHECK_EQ(cnt, 1);
	CHECK_EQ(atomic_long_read(&budget.conns), 1);
	info(&t, &ci);
	CHECK_EQ(ci.conns, 1);
	CHECK_EQ(ci.stats.inserts, 2);
	ct_put(x);
	nfg_kcl_table_destroy(&t);

	/* the spare taken */
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	ct_put(spare_key(&t, &key, &flood));
	fake_now++;
	x = ct_new_state(0);
	shim_fail_alloc_in(1);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 0);
	CHECK(!shim_alloc_failed());
	shim_fail_alloc_in(0);
	CHECK_EQ(cnt, 2);
	CHECK(!node_of(&t, &key)->spare);
	CHECK_EQ(conn_lim(&t, key, x, 100, &flood, &cnt), 1);
	CHECK_EQ(cnt, 2);
	CHECK_EQ(atomic_long_read(&budget.conns), 2);
	/* confirmed and kept: still one entry for it */
	__atomic_store_n(&x->confirmed, 1, __ATOMIC_RELEASE);
	fake_now += 3;
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &flood), 1);
	ct_put(x);
	nfg_kcl_table_destroy(&t);
}

/*
 * One packet forgets at most NFG_KCL_GC_BATCH ended entries: when more of a
 * key end at once, the rest count (an upper bound, over the limit) until
 * the key's next packets have forgotten them too.
 */
static void test_verify_batch(void)
{
	const unsigned int n = NFG_KCL_GC_BATCH + 500;
	struct nfg_kcl_key key = k4(0x0a000104);
	struct fake_ct **ct = calloc(n, sizeof(*ct));
	struct nfg_kcl_table t;
	unsigned int i, cnt;

	CHECK(ct);
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	for (i = 0; i < n; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, key, ct[i], &cnt), 0);
	}
	/* all but the newest three end at once */
	for (i = 0; i < n - 3; i++)
		ct_kill(ct[i]);
	fake_now = 60;
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 2, fake_now, &env0), n - NFG_KCL_GC_BATCH);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 2, fake_now, &env0), 3);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 3, fake_now, &env0), 3);
	for (i = n - 3; i < n; i++)
		ct_kill(ct[i]);
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &env0), 0);
	free(ct);
	nfg_kcl_table_destroy(&t);
}

/*
 * A limit of NFG_KCL_GC_BATCH or more: one packet checks at most
 * NFG_KCL_GC_BATCH live entries under the slot lock (BHs off), then takes
 * the remembered count, an upper bound (before: limit + 1 checks, 2501
 * here, whatever the rule's limit).
 */
static void test_verify_live_cap(void)
{
	const unsigned int n = 3 * NFG_KCL_GC_BATCH, limit = n - 500;
	struct nfg_kcl_key key = k4(0x0a000105);
	struct fake_ct **ct = calloc(n, sizeof(*ct));
	struct nfg_kcl_table t;
	unsigned int i, cnt;

	CHECK(ct);
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	for (i = 0; i < n; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, key, ct[i], &cnt), 0);
	}
	fake_now = 70;
	hold_max = 0;
	/* every entry live: over the limit, either way */
	CHECK_EQ(nfg_kcl_count_check(&t, &key, limit, fake_now, &env0), n);
	CHECK(hold_max <= NFG_KCL_GC_BATCH);
	/* a limit under the cap is still exact, whatever the list's length */
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 100, fake_now, &env0), 101);
	for (i = 0; i < n; i++)
		ct_kill(ct[i]);
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0), n);
	CHECK_EQ(nfg_kcl_count(&t, &key), 0);
	free(ct);
	nfg_kcl_table_destroy(&t);
}

/*
 * The sweep leaves a key whose every entry a packet checked within the last
 * period (@fresh ticks) to the packets, and checks it once the period has
 * passed, a key no packet checked, or every key when @fresh is 0.
 */
static void test_gc_fresh(void)
{
	const unsigned int n = 300;
	struct fake_ct *a, *b, *c, *ct[300];
	struct nfg_kcl_key ka = k4(21), kb = k4(22);
	struct nfg_kcl_table t;
	unsigned int i, cnt;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	a = ct_new();
	b = ct_new();
	c = ct_new();
	CHECK_EQ(conn(&t, ka, a, &cnt), 0);
	CHECK_EQ(conn(&t, ka, b, &cnt), 0);
	CHECK_EQ(conn(&t, ka, c, &cnt), 0);
	for (i = 0; i < n; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, kb, ct[i], &cnt), 0);
	}
	fake_now = 100;
	/* a packet of ka checks all of it at tick 100 (c ended) */
	ct_kill(c);
	CHECK_EQ(nfg_kcl_count_check(&t, &ka, 2, fake_now, &env0), 2);
	ct_kill(a);
	ct_kill(ct[0]);
	ct_kill(ct[n - 1]);
	/* within the period: ka is left alone, kb (never checked) is not */
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, 109, 10), 2);
	CHECK_EQ(nfg_kcl_count(&t, &ka), 2);
	CHECK_EQ(nfg_kcl_count(&t, &kb), n - 2);
	/* the period passed with no packet of ka: the sweep forgets a */
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, 110, 10), 1);
	CHECK_EQ(nfg_kcl_count(&t, &ka), 1);
	/* fresh 0: every key, checked or not */
	fake_now = 111;
	CHECK_EQ(nfg_kcl_count_check(&t, &ka, 0, fake_now, &env0), 1);
	ct_kill(b);
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0), 1);
	CHECK_EQ(nfg_kcl_count(&t, &ka), 0);
	for (i = 1; i < n - 1; i++)
		ct_kill(ct[i]);
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0), n - 2);
	CHECK_EQ(fake_live, 0);
	nfg_kcl_table_destroy(&t);
}

/*
 * The sweep of one huge key (mask 0, 10^5 connections) lets go of the slot
 * lock every NFG_KCL_GC_BATCH checks, and still checks every entry once:
 * the dead ones (every third) go, the count is right, a second sweep
 * finds nothing.
 */
static void test_gc_batch(void)
{
	const unsigned int n = 100000;
	struct fake_ct **ct = calloc(n, sizeof(*ct));
	struct nfg_kcl_key key = k4(0);
	struct nfg_kcl_table t;
	unsigned int i, cnt;

	if (!ct)
		abort();
	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	for (i = 0; i < n; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, key, ct[i], &cnt), 0);
	}
	for (i = 0; i < n; i += 3)
		ct_kill(ct[i]);
	hold_max = 0;
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0), (n + 2) / 3);
	CHECK(hold_max <= NFG_KCL_GC_BATCH);
	CHECK(hold_max >= NFG_KCL_GC_BATCH / 2);
	CHECK_EQ(nfg_kcl_count(&t, &key), n - (n + 2) / 3);
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0), 0);
	CHECK_EQ(nfg_kcl_count(&t, &key), n - (n + 2) / 3);
	for (i = 1; i < n; i++)
		if (i % 3)
			ct_put(ct[i]);
	nfg_kcl_table_destroy(&t);
	free(ct);
}

/*
 * A connection not confirmed yet is remembered without a reference: it
 * counts while it may still be on its way (the grace), is resolved to a
 * reference once confirmed, and is forgotten when it never was.
 */
static void test_pending(void)
{
	const struct fake_env slow = { .grace = 10 };
	const struct nfg_kcl_key key1 = k4(1);
	struct nfg_kcl_ident id;
	struct fake_ct *a, *b, *c;
	struct nfg_kcl_table t;
	unsigned int cnt;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	a = ct_new_state(0);
	b = ct_new_state(0);
	c = ct_new_state(0);
	id = ct_id(a);
	CHECK_EQ(nfg_kcl_add(&t, &key1, &id, fake_now, U32_MAX, &slow, &cnt), 0);
	CHECK_EQ(a->refs, 1);	/* no reference on an unconfirmed conntrack */
	id = ct_id(b);
	CHECK_EQ(nfg_kcl_add(&t, &key1, &id, fake_now, U32_MAX, &slow, &cnt), 0);
	CHECK_EQ(cnt, 2);
	/* within the grace, unconfirmed entries count */
	fake_now += 9;
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &slow, fake_now, 0), 0);
	CHECK_EQ(nfg_kcl_count(&t, &key1), 2);
	CHECK_EQ(a->refs, 1);
	/* a is confirmed (resolved: referenced), b was dropped (freed) */
	__atomic_store_n(&a->confirmed, 1, __ATOMIC_RELEASE);
	ct_put(b);
	fake_now += 1;
	id = ct_id(c);
	CHECK_EQ(nfg_kcl_add(&t, &key1, &id, fake_now, U32_MAX, &slow, &cnt), 0);
	CHECK_EQ(cnt, 2);	/* a and c: b forgotten by the insert */
	CHECK_EQ(a->refs, 2);
	/* c never confirmed: forgotten by the sweep after the grace */
	fake_now += 10;
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &slow, fake_now, 0), 1);
	CHECK_EQ(nfg_kcl_count(&t, &key1), 1);
	ct_put(c);
	ct_kill(a);
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &slow, fake_now, 0), 1);
	CHECK_EQ(fake_live, 0);
	nfg_kcl_table_destroy(&t);
}

/*
 * Issue 28: a client resets its newest connection and at once reopens the
 * same tuple; conntrack replaces the closed entry by a new, unconfirmed one.
 * The new connection counts and the old entry goes, whether the old one
 * had been resolved (a reference: another conntrack, not a duplicate) or
 * was still pending (then its tuple is the new connection's). The
 * reopened one is the newest entry, so the next round resets and reopens
 * it again: the key never counts fewer than the connections alive.
 */
static void test_reopen(void)
{
	const struct nfg_kcl_key key = k4(0x0a000101);
	struct fake_ct *a, *b, *x;
	struct nfg_kcl_table t;
	unsigned int cnt;
	int round;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	a = ct_new_state(0);
	b = ct_new_state(0);
	CHECK_EQ(conn_lim(&t, key, a, 2, &pend, &cnt), 0);
	CHECK_EQ(conn_lim(&t, key, b, 2, &pend, &cnt), 0);
	CHECK_EQ(cnt, 2);
	__atomic_store_n(&a->confirmed, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&b->confirmed, 1, __ATOMIC_RELEASE);
	for (round = 0; round < 4; round++) {
		/* past the back-off of the last lookup (b's, not found) */
		fake_now += 3;
		/*
		 * Rounds 0 and 2: the sweep resolved b before the reset (a
		 * reference on the old conntrack: the reopened one is another);
		 * 1 and 3: b is still pending (its entry, which is not the
		 * newest, stands for the reopened one).
		 */
		if (!(round & 1)) {
			CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &pend, fake_now, 0), 0);
			CHECK_EQ(b->refs, 2);
		}
		b = ct_reopen(b);
		CHECK_EQ(conn_lim(&t, key, b, 2, &pend, &cnt), round & 1 ? 1 : 0);
		CHECK_EQ(cnt, 2);
		/* a third connection is over the limit */
		x = ct_new_state(0);
		CHECK_EQ(conn_lim(&t, key, x, 2, &pend, &cnt), 0);
		CHECK_EQ(cnt, 3);
		CHECK(t.slots[nfg_kcl_hash(&t, &key)]->newest->refused);
		ct_put(x);	/* refused: dropped with its packet */
		/* x goes two ticks later; a and the reopened b (pending) count */
		fake_now += 2;
		CHECK_EQ(nfg_kcl_count_check(&t, &key, 2, fake_now, &pend), 2);
		/* confirmed after that walk: not resolved until the next */
		__atomic_store_n(&b->confirmed, 1, __ATOMIC_RELEASE);
		CHECK_EQ(b->refs, 1);
	}
	fake_now += 3;
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 1, fake_now, &pend), 2);
	CHECK_EQ(b->refs, 2);
	ct_kill(a);
	ct_kill(b);
	fake_now++;
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &pend), 0);
	nfg_kcl_table_destroy(&t);
}

/*
 * Issue 28: a new connection the rule let through counts while it is not
 * confirmed (a queue holds its packet) for the whole grace, whatever
 * walks, inserts and sweeps come meanwhile, and counts on once confirmed;
 * one the rule refused goes two ticks later. Lookups of a pending entry
 * back off: an entry never confirmed is looked up a few times in its
 * grace, not once per walk.
 */
static void test_pending_grace(void)
{
	const struct fake_env queue = { .grace = 100, .refused = 2 };
	const struct nfg_kcl_key key = k4(0x0a000102);
	struct fake_ct *held, *r, *late;
	struct nfg_kcl_table t;
	unsigned long lookups;
	unsigned int cnt;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	held = ct_new_state(0);
	CHECK_EQ(conn_lim(&t, key, held, 1, &queue, &cnt), 0);
	CHECK_EQ(cnt, 1);
	CHECK(!t.slots[nfg_kcl_hash(&t, &key)]->newest->refused);
	/* a second new connection while the first is held: over the limit */
	fake_now = 5;
	r = ct_new_state(0);
	CHECK_EQ(conn_lim(&t, key, r, 1, &queue, &cnt), 0);
	CHECK_EQ(cnt, 2);
	ct_put(r);
	/* packets and sweeps in every tick of the hold: one lookup a doubling */
	lookups = fake_lookups;
	for (fake_now = 6; fake_now < 100; fake_now++) {
		CHECK_EQ(nfg_kcl_count_check(&t, &key, 1, fake_now, &queue),
			 fake_now < 7 ? 2 : 1);
		CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &queue, fake_now, 0), 0);
	}
	CHECK(fake_lookups - lookups <= 16);
	/* confirmed at last: resolved, still counts */
	__atomic_store_n(&held->confirmed, 1, __ATOMIC_RELEASE);
	fake_now = 200;
	CHECK_EQ(nfg_kcl_count_check(&t, &key, 0, fake_now, &queue), 1);
	CHECK_EQ(held->refs, 2);
	/* one never confirmed goes after the grace */
	late = ct_new_state(0);
	CHECK_EQ(conn_lim(&t, key, late, 5, &queue, &cnt), 0);
	CHECK_EQ(cnt, 2);
	ct_put(late);
	fake_now = 299;
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &queue, fake_now, 0), 0);
	fake_now = 300;
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &queue, fake_now, 0), 1);
	CHECK_EQ(nfg_kcl_count(&t, &key), 1);
	ct_kill(held);
	nfg_kcl_table_destroy(&t);
}

static void test_enomem(void)
{
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	struct fake_ct *a, *b;
	unsigned int cnt;

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	a = ct_new();
	/* connection entry, then node allocation fails */
	shim_fail_alloc_in(1);
	CHECK_EQ(conn(&t, k4(1), a, &cnt), -ENOMEM);
	shim_fail_alloc_in(2);
	CHECK_EQ(conn(&t, k4(1), a, &cnt), -ENOMEM);
	info(&t, &ci);
	CHECK_EQ(ci.keys, 0);
	CHECK_EQ(ci.conns, 0);
	CHECK_EQ(ci.stats.alloc_fail, 2);
	CHECK_EQ(atomic_long_read(&budget.conns), 0);
	CHECK_EQ(conn(&t, k4(1), a, &cnt), 0);
	b = ct_new();
	shim_fail_alloc_in(1);
	CHECK_EQ(conn(&t, k4(1), b, &cnt), -ENOMEM);
	CHECK_EQ(nfg_kcl_count(&t, &(struct nfg_kcl_key){ { 1 }, 0 }), 1);
	ct_put(a);
	ct_put(b);
	nfg_kcl_table_destroy(&t);
}

static void test_top(void)
{
	struct nfg_kcl_top_ent top[8];
	struct fake_ct *ct[64];
	struct nfg_kcl_table t;
	unsigned int cnt, n, i, k;
	int used = 0;

	CHECK_EQ(nfg_kcl_table_init(&t, 4, 2, 5, false, &budget), 0);
	CHECK_EQ(nfg_kcl_top(&t, top, 8), 0);
	/* key k gets k connections, keys 1..9; key 20 ties with key 9 */
	for (k = 1; k <= 9; k++)
		for (i = 0; i < k && used < 64; i++) {
			ct[used] = ct_new();
			CHECK_EQ(conn(&t, k4(k), ct[used++], &cnt), 0);
		}
	for (i = 0; i < 9 && used < 64; i++) {
		ct[used] = ct_new();
		CHECK_EQ(conn(&t, k4(20), ct[used++], &cnt), 0);
	}
	CHECK_EQ(used, 54);
	n = nfg_kcl_top(&t, top, 3);
	CHECK_EQ(n, 3);
	CHECK_EQ(top[0].key.w[0], 9);
	CHECK_EQ(top[0].count, 9);
	CHECK_EQ(top[1].key.w[0], 20);
	CHECK_EQ(top[1].count, 9);
	CHECK_EQ(top[2].key.w[0], 8);
	CHECK_EQ(top[2].count, 8);
	n = nfg_kcl_top(&t, top, 8);
	CHECK_EQ(n, 8);
	for (i = 1; i < n; i++)
		CHECK(top[i].count <= top[i - 1].count);
	CHECK_EQ(top[7].count, 3);
	CHECK_EQ(nfg_kcl_top(&t, top, 0), 0);
	for (i = 0; i < (unsigned int)used; i++)
		ct_kill(ct[i]);
	nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0);
	CHECK_EQ(nfg_kcl_top(&t, top, 8), 0);
	nfg_kcl_table_destroy(&t);
}

/* Destroy with connections still remembered releases every one. */
static void test_destroy_releases(void)
{
	static struct fake_ct *ct[500];
	struct nfg_kcl_table t;
	unsigned int cnt, i;

	CHECK_EQ(nfg_kcl_table_init(&t, 256, 16, 11, true, &budget), 0);
	for (i = 0; i < 500; i++) {
		ct[i] = ct_new();
		CHECK_EQ(conn(&t, k6(i % 37, i % 3), ct[i], &cnt), 0);
	}
	/* the sweep resolves every entry: the table holds references */
	CHECK_EQ(nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0), 0);
	for (i = 0; i < 500; i++)
		ct_kill(ct[i]);	/* only the table keeps it now */
	CHECK_EQ(fake_live, 500);
	nfg_kcl_table_destroy(&t);
	CHECK_EQ(fake_live, 0);
}

/* ---- concurrency ------------------------------------------------------ */

#define CONC_WRITERS	4
#define CONC_ROUNDS	3000
#define CONC_KEYS	24

struct conc {
	struct nfg_kcl_table	*t;
	int			id;
	int			stop;	/* atomic */
};

static void *conc_writer(void *arg)
{
	struct conc *c = arg;
	struct fake_ct *held[16] = { NULL };
	unsigned int cnt, seed = 77 + c->id;
	int i, slot, ret;

	for (i = 0; i < CONC_ROUNDS; i++) {
		struct nfg_kcl_key k = k4(rand_r(&seed) % CONC_KEYS);
		struct fake_ct *ct = ct_new();

		ret = conn(c->t, k, ct, &cnt);
		if (ret == 0 && cnt == 0)
			fail_at(__FILE__, __LINE__, "count 0 after insert");
		if (ret < 0 && ret != -ENOSPC)
			fail_at(__FILE__, __LINE__, "add: %d", ret);
		slot = rand_r(&seed) % 16;
		if (held[slot])
			ct_kill(held[slot]);
		held[slot] = ct;
		if (rand_r(&seed) % 8 == 0)
			rm(c->t, k, ct);
	}
	for (slot = 0; slot < 16; slot++)
		if (held[slot])
			ct_kill(held[slot]);
	return NULL;
}

static void *conc_reader(void *arg)
{
	struct nfg_kcl_top_ent top[5];
	struct conc *c = arg;
	unsigned int n, i;
	u32 k = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		struct nfg_kcl_key key = k4(k++ % CONC_KEYS);

		/* remembered connections never exceed the cap */
		if (nfg_kcl_count(c->t, &key) > nfg_kcl_max_conns)
			fail_at(__FILE__, __LINE__, "count above the cap");
		n = nfg_kcl_top(c->t, top, 5);
		for (i = 1; i < n; i++)
			if (top[i].count > top[i - 1].count)
				fail_at(__FILE__, __LINE__, "top not sorted");
	}
	return NULL;
}

static void *conc_gc(void *arg)
{
	struct conc *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		nfg_kcl_gc(c->t, 0, nfg_kcl_slots(c->t), &env0, fake_now, 0);
		shim_synchronize_rcu();
	}
	return NULL;
}

static void test_concurrent(void)
{
	pthread_t w[CONC_WRITERS], r[2], g;
	struct conc cw[CONC_WRITERS], cr = { 0 };
	struct nfg_kcl_table t;
	struct nfg_kcl_info ci;
	int i;

	nfg_kcl_max_conns = CONC_WRITERS * 12;	/* also exercises the cap */
	CHECK_EQ(nfg_kcl_table_init(&t, 8, 2, 13, false, &budget), 0);
	cr.t = &t;
	for (i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, conc_reader, &cr);
	conc_sweep = true;
	pthread_create(&g, NULL, conc_gc, &cr);
	for (i = 0; i < CONC_WRITERS; i++) {
		cw[i] = (struct conc){ .t = &t, .id = i };
		pthread_create(&w[i], NULL, conc_writer, &cw[i]);
	}
	for (i = 0; i < CONC_WRITERS; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&cr.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	pthread_join(g, NULL);
	conc_sweep = false;
	/* everything was killed: one sweep forgets it all */
	nfg_kcl_gc(&t, 0, nfg_kcl_slots(&t), &env0, fake_now, 0);
	info(&t, &ci);
	CHECK_EQ(ci.keys, 0);
	CHECK_EQ(ci.conns, 0);
	CHECK_EQ(fake_live, 0);
	CHECK(ci.stats.inserts > 0);
	nfg_kcl_table_destroy(&t);
}

/*
 * Shared tables: which rules may share (a name, and equal family, mask and
 * direction; never unnamed rules; the limit plays no part), and a table
 * with two users keeps its counts when one of them goes, as across a
 * legacy table replacement (new rule first, old one destroyed after).
 */
static void test_shared(void)
{
	const struct nfg_kcl_params web = { "web", 2, 24, false };
	struct nfg_kcl_params p = web, anon = { "", 2, 24, false };
	struct nfg_kcl_key k = k4(0x0a000100);
	struct nfg_kcl_table t;
	struct fake_ct *a[3];
	unsigned int cnt;
	int i;

	CHECK(nfg_kcl_shareable(&web, &p));
	p.prefix = 16;
	CHECK(!nfg_kcl_shareable(&web, &p));
	p = web;
	p.daddr = true;
	CHECK(!nfg_kcl_shareable(&web, &p));
	p = web;
	p.family = 10;
	CHECK(!nfg_kcl_shareable(&web, &p));
	p = web;
	p.name[2] = 'B';
	CHECK(!nfg_kcl_shareable(&web, &p));
	strcpy(p.name, "web2");
	CHECK(!nfg_kcl_shareable(&web, &p));
	CHECK(!nfg_kcl_shareable(&p, &web));
	CHECK(!nfg_kcl_shareable(&anon, &anon));

	CHECK_EQ(nfg_kcl_table_init(&t, 64, 8, 5, false, &budget), 0);
	for (i = 0; i < 3; i++) {
		a[i] = ct_new();
		CHECK_EQ(conn(&t, k, a[i], &cnt), 0);
	}
	/* the new rule takes the table, then the old one lets go */
	nfg_kcl_table_get(&t);
	CHECK(!nfg_kcl_table_put(&t));
	CHECK_EQ(nfg_kcl_count(&t, &k), 3);
	CHECK_EQ(atomic_long_read(&budget.conns), 3);
	CHECK_EQ(atomic_read(&nfg_kcl_live_objects), 5);
	/* the last user */
	CHECK(nfg_kcl_table_put(&t));
	for (i = 0; i < 3; i++)
		ct_put(a[i]);
	nfg_kcl_table_destroy(&t);
}

int main(void)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&rcu_lock, &a);
	if (nfg_kcl_core_init())
		return 1;

	run("init_checks", test_init_checks);
	run("count_basic", test_count_basic);
	run("remove", test_remove);
	run("chain", test_chain);
	run("gc_on_insert", test_gc_on_insert);
	run("cap", test_cap);
	run("budgets", test_budgets);
	run("dup_many", test_dup_many);
	run("count_check", test_count_check);
	run("add_exact", test_add_exact);
	run("verify_batch", test_verify_batch);
	run("verify_live_cap", test_verify_live_cap);
	run("flood_lookups", test_flood_lookups);
	run("flood_reuse", test_flood_reuse);
	run("reuse_cap", test_reuse_cap);
	run("reinsert_reused", test_reinsert_reused);
	run("gc_batch", test_gc_batch);
	run("gc_fresh", test_gc_fresh);
	run("pending", test_pending);
	run("reopen", test_reopen);
	run("pending_grace", test_pending_grace);
	run("enomem", test_enomem);
	run("top", test_top);
	run("destroy_releases", test_destroy_releases);
	run("concurrent", test_concurrent);
	run("shared", test_shared);

	nfg_kcl_core_exit();
	return utest_summary();
}
