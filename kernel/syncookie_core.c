// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard SYNCOOKIE: the pure core.
 *
 * Theory of operation
 * -------------------
 *
 * Problem: a spoofed SYN flood makes a listener (or a router's conntrack
 * table) hold state for every SYN. SYN cookies answer a SYN without state:
 * the SYN-ACK's sequence number is a keyed hash of the flow, and the
 * client's ACK proves, by echoing it, that the source address is real.
 * The SYNCOOKIE target does this in raw PREROUTING, before conntrack, and
 * remembers the sources that proved themselves (the allowlist), whose
 * later SYNs then pass untouched.
 *
 * This file holds what does not depend on skbs, so that it compiles in
 * the kernel and in the unit harness (tests/unit):
 *
 * 1. TCP option parsing, strict: every option length is checked against
 *    the block; malformed blocks are refused (the target drops the SYN).
 *    Building the SYN-ACK's option block: MSS, SACK_PERM + TS, WS.
 *
 * 2. The kernel's timestamp encoding. In local mode the SYN-ACK carries
 *    the KERNEL's cookie (__cookie_v4/v6_init_sequence), so that the
 *    listener's own cookie check creates the socket from the ACK. That
 *    check reads the peer's window scale and SACK from the low 6 bits of
 *    the echoed timestamp (cookie_timestamp_decode), exactly as
 *    cookie_init_timestamp() wrote them: we write the same bits.
 *
 * 3. nfguard's own cookie (proxy mode; also what a cluster shares): a
 *    24-bit SipHash-2-4 MAC over the 4-tuple, the client's ISN, a coarse
 *    time counter and the 8 low bits that carry the options (MSS index,
 *    window scale, SACK). Valid for the current and previous counter, and
 *    the current and previous secret (so a rotation never breaks a
 *    handshake in flight, and boxes sharing a secret validate each
 *    other's cookies). Four tries of 24 bits: a random ACK passes with
 *    probability 2^-22, a few million spoofed ACKs. That is acceptable
 *    for one proxied connection (SYNPROXY's cookie is no stronger), not
 *    for the allowlist, which lets all of a source's SYNs past the
 *    cookies: so the SYN-ACK's TSval is the other 32 bits of the same
 *    SipHash, the client's ACK must echo it, and only an ACK whose echo
 *    was checked (2^-54) admits its source. The TSval need not be a
 *    clock: nf_synproxy_core translates the server's timestamps from
 *    whatever the client echoed.
 *
 * 4. The allowlist: masked source -> expiry. An array of buckets, each a
 *    singly linked RCU chain, hashed with jhash over the key; a power of
 *    two array of spinlocks protects the chains (keyed locks: lock
 *    i & lock_mask for bucket i). The packet path looks up under RCU
 *    without any lock or atomic write (the LRU stamp is written only when
 *    it changed second). Adding (a validated ACK) takes one bucket lock.
 *    The table is bounded: when an add pushes the count above max, the
 *    least recently used entry among NFG_SC_AL_EVICT_SCAN non-empty
 *    buckets from a rotating cursor (an approximation of LRU that needs
 *    no global list, hence no global lock) is evicted - an expired entry
 *    first. Expired entries are invisible to lookups and listings and are
 *    removed by nfg_sc_al_expire() (a worker) or when re-added. Entries
 *    are freed after an RCU grace period.
 *
 * 5. Proxy mode (the default; this file holds its option negotiation,
 *    syncookie_tg.c the packets). The SYN-ACK carries nfguard's cookie
 *    (3.) and a zero window, so the client sends no data before the
 *    server's window arrives. The cookie remembers the client's MSS
 *    (rounded down to the table), window scale and SACK itself, so they
 *    are kept with or without timestamps. On a valid cookie ACK the target
 *    (still in raw PREROUTING, before conntrack) allowlists the source,
 *    CONSUMES the ACK and sends the server a SYN in the client's name
 *    (source = client, seq = the client's ISN, ack_seq = the cookie, the
 *    client's options), through the output path with the nf_synproxy_core
 *    conntrack template attached (nf_ct_set with IP_CT_NEW). So the
 *    validated connection gets its conntrack entry - with the seqadj and
 *    synproxy extensions - from that SYN in LOCAL_OUT; the ACK itself is
 *    never seen by conntrack, hence no "--ctstate INVALID" rule and no
 *    nf_conntrack_tcp_loose=0 are needed: one rule. From there
 *    nf_synproxy_core's own hooks (registered with nf_synproxy_ipv4/6_init
 *    by checkentry) run the connection as SYNPROXY's: they record the
 *    relayed ISN from the SYN's ack_seq, answer the server's SYN-ACK with
 *    the server's ACK and the client's window update, and translate
 *    sequence numbers and timestamps for the connection's life. Those
 *    hooks skip loopback packets, so for a server on this host (the SYN
 *    goes through lo) the target records the ISN and timestamp in the new
 *    entry itself right after sending. A flood SYN never reaches
 *    conntrack; a flood ACK costs a SipHash and a conntrack lookup.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/jhash.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "syncookie_core.h"

atomic_t nfg_sc_live_objects = ATOMIC_INIT(0);

/* ---- TCP options ---- */

#define NFG_TCPOPT_EOL		0
#define NFG_TCPOPT_NOP		1
#define NFG_TCPOPT_MSS		2
#define NFG_TCPOPT_WS		3
#define NFG_TCPOPT_SACK_PERM	4
#define NFG_TCPOPT_TS		8

static u32 nfg_sc_get32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void nfg_sc_put32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

int nfg_sc_parse_opts(const u8 *p, unsigned int len, struct nfg_sc_opts *o)
{
	unsigned int i = 0, olen;

	memset(o, 0, sizeof(*o));
	o->wscale = NFG_SC_WSCALE_NONE;
	if (len > NFG_SC_OPTS_MAXLEN)
		return -EINVAL;
	while (i < len) {
		u8 kind = p[i];

		if (kind == NFG_TCPOPT_EOL)
			break;
		if (kind == NFG_TCPOPT_NOP) {
			i++;
			continue;
		}
		if (len - i < 2)
			return -EINVAL;
		olen = p[i + 1];
		if (olen < 2 || olen > len - i)
			return -EINVAL;
		switch (kind) {
		case NFG_TCPOPT_MSS:
			if (olen != 4)
				return -EINVAL;
			o->mss = (u16)(p[i + 2] << 8 | p[i + 3]);
			break;
		case NFG_TCPOPT_WS:
			if (olen != 3)
				return -EINVAL;
			o->wscale = min_t(u8, p[i + 2], NFG_SC_WSCALE_MAX);
			break;
		case NFG_TCPOPT_SACK_PERM:
			if (olen != 2)
				return -EINVAL;
			o->sack = true;
			break;
		case NFG_TCPOPT_TS:
			if (olen != 10)
				return -EINVAL;
			o->ts = true;
			o->tsval = nfg_sc_get32(p + i + 2);
			o->tsecr = nfg_sc_get32(p + i + 6);
			break;
		default:
			break;
		}
		i += olen;
	}
	return 0;
}

unsigned int nfg_sc_build_opts(u8 *buf, const struct nfg_sc_opts *o)
{
	unsigned int n = 0;

	if (o->mss) {
		buf[n++] = NFG_TCPOPT_MSS;
		buf[n++] = 4;
		buf[n++] = o->mss >> 8;
		buf[n++] = o->mss & 0xff;
	}
	if (o->ts) {
		if (o->sack) {
			buf[n++] = NFG_TCPOPT_SACK_PERM;
			buf[n++] = 2;
		} else {
			buf[n++] = NFG_TCPOPT_NOP;
			buf[n++] = NFG_TCPOPT_NOP;
		}
		buf[n++] = NFG_TCPOPT_TS;
		buf[n++] = 10;
		nfg_sc_put32(buf + n, o->tsval);
		nfg_sc_put32(buf + n + 4, o->tsecr);
		n += 8;
	} else if (o->sack) {
		buf[n++] = NFG_TCPOPT_NOP;
		buf[n++] = NFG_TCPOPT_NOP;
		buf[n++] = NFG_TCPOPT_SACK_PERM;
		buf[n++] = 2;
	}
	if (o->wscale != NFG_SC_WSCALE_NONE) {
		buf[n++] = NFG_TCPOPT_NOP;
		buf[n++] = NFG_TCPOPT_WS;
		buf[n++] = 3;
		buf[n++] = o->wscale;
	}
	return n;
}

u32 nfg_sc_ts_encode(u32 ts_now, u8 wscale, bool sack)
{
	u32 options, ts;

	options = wscale <= NFG_SC_WSCALE_MAX ? wscale : NFG_SC_TS_WSMASK;
	if (sack)
		options |= NFG_SC_TS_SACK;
	ts = (ts_now >> NFG_SC_TSBITS) << NFG_SC_TSBITS;
	ts |= options;
	/* never ahead of the clock the kernel continues with */
	if (ts > ts_now)
		ts -= 1U << NFG_SC_TSBITS;
	return ts;
}

void nfg_sc_ts_decode(u32 tsecr, u8 *wscale, bool *sack)
{
	*sack = tsecr & NFG_SC_TS_SACK;
	*wscale = tsecr & NFG_SC_TS_WSMASK;	/* 15: none */
}

bool nfg_sc_local_echo_fresh(u32 tsecr, u32 ts_off, u32 now_ms)
{
	/* nfg_sc_ts_encode() is never ahead of the clock: age >= 0 */
	return now_ms - (tsecr - ts_off) <= NFG_SC_LOCAL_TS_AGE;
}

/* ---- nfguard's own cookie ---- */

const u16 nfg_sc_mss_table[1 << NFG_SC_MSS_IDX_BITS] = {
	536, 1220, 1280, 1300, 1360, 1400, 1440, 1460,
};

u8 nfg_sc_mss_index(u16 mss)
{
	u8 i;

	for (i = ARRAY_SIZE(nfg_sc_mss_table) - 1; i > 0; i--)
		if (mss >= nfg_sc_mss_table[i])
			return i;
	return 0;
}

struct nfg_sc_hash_in {
	u32	saddr[4];
	u32	daddr[4];
	u32	ports;
	u32	isn;
	u32	counter;
	u32	bits;		/* family << 8 | option bits */
};

static u32 nfg_sc_opt_bits(const struct nfg_sc_opts *o)
{
	u32 ws = o->wscale <= NFG_SC_WSCALE_MAX ? o->wscale : NFG_SC_WSCALE_NONE;

	return nfg_sc_mss_index(o->mss) | ws << NFG_SC_MSS_IDX_BITS |
	       (o->sack ? 1U << 7 : 0);
}

/*
 * One SipHash per (key, counter): bits 8-31 of the low word are the
 * cookie's MAC, the high word is the timestamp MAC (the SYN-ACK's TSval,
 * which a client that agreed to timestamps echoes in its ACK's TSecr).
 */
static u64 nfg_sc_mac(const siphash_key_t *key, const struct nfg_sc_flow *f,
		      u32 isn, u32 counter, u32 bits)
{
	struct nfg_sc_hash_in in;

	memset(&in, 0, sizeof(in));
	memcpy(in.saddr, f->saddr, sizeof(in.saddr));
	memcpy(in.daddr, f->daddr, sizeof(in.daddr));
	in.ports = (u32)f->sport << 16 | f->dport;
	in.isn = isn;
	in.counter = counter;
	in.bits = (u32)f->family << 8 | bits;
	return siphash(&in, sizeof(in), key);
}

static u32 nfg_sc_isn_mac(u64 mac)
{
	return (u32)mac & ~0xffU;
}

u32 nfg_sc_cookie_make(const siphash_key_t *key, const struct nfg_sc_flow *f,
		       u32 client_isn, u32 counter, const struct nfg_sc_opts *o,
		       u32 *tsval)
{
	u32 bits = nfg_sc_opt_bits(o);
	u64 mac = nfg_sc_mac(key, f, client_isn, counter, bits);

	if (tsval)
		*tsval = (u32)(mac >> 32);
	return nfg_sc_isn_mac(mac) | bits;
}

int nfg_sc_cookie_check(const struct nfg_sc_secret *s,
			const struct nfg_sc_flow *f, u32 client_isn,
			u32 cookie, u32 counter, const struct nfg_sc_opts *ack,
			struct nfg_sc_opts *o)
{
	u32 bits = cookie & 0xff;
	unsigned int k, c;
	u64 mac;

	for (k = 0; k < (s->has_prev ? 2U : 1U); k++) {
		for (c = 0; c < 2; c++) {
			mac = nfg_sc_mac(&s->key[k], f, client_isn, counter - c,
					 bits);
			if (nfg_sc_isn_mac(mac) != (cookie & ~0xffU))
				continue;
			/* an echo that is not ours: not this SYN-ACK's ACK */
			if (ack && ack->ts && ack->tsecr != (u32)(mac >> 32))
				continue;
			memset(o, 0, sizeof(*o));
			o->mss = nfg_sc_mss_table[bits &
					((1U << NFG_SC_MSS_IDX_BITS) - 1)];
			o->wscale = (bits >> NFG_SC_MSS_IDX_BITS) & 0xf;
			o->sack = bits & (1U << 7);
			return ack && ack->ts ? NFG_SC_COOKIE_ADMIT : 0;
		}
	}
	return -EINVAL;
}

/* ---- proxy mode: option negotiation ---- */

void nfg_sc_proxy_synack(const struct nfg_sc_opts *c,
			 const struct nfg_sc_proxy_cfg *cfg, u32 ts_now,
			 struct nfg_sc_opts *synack, struct nfg_sc_opts *enc)
{
	memset(synack, 0, sizeof(*synack));
	memset(enc, 0, sizeof(*enc));
	synack->mss = cfg->mss;
	synack->wscale = NFG_SC_WSCALE_NONE;
	enc->mss = c->mss ? c->mss : nfg_sc_mss_table[0];
	enc->wscale = NFG_SC_WSCALE_NONE;
	if (c->wscale != NFG_SC_WSCALE_NONE) {
		synack->wscale = min_t(u8, cfg->wscale, NFG_SC_WSCALE_MAX);
		enc->wscale = c->wscale;
	}
	if (c->sack && cfg->sack) {
		synack->sack = true;
		enc->sack = true;
	}
	if (c->ts && cfg->ts) {
		synack->ts = true;
		synack->tsval = ts_now;
		synack->tsecr = c->tsval;
	}
}

void nfg_sc_proxy_syn(const struct nfg_sc_opts *dec,
		      const struct nfg_sc_opts *ack, struct nfg_sc_opts *syn)
{
	memset(syn, 0, sizeof(*syn));
	syn->mss = dec->mss;
	syn->wscale = dec->wscale;
	syn->sack = dec->sack;
	if (ack->ts) {
		syn->ts = true;
		syn->tsval = ack->tsval;
		syn->tsecr = ack->tsecr;
	}
}

/* ---- allowlist ---- */

static bool nfg_sc_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

static bool nfg_sc_live(const struct nfg_sc_entry *e, u32 now)
{
	return nfg_sc_after(READ_ONCE(e->expires), now);
}

static bool nfg_sc_key_eq(const struct nfg_sc_key *a, const struct nfg_sc_key *b)
{
	return a->family == b->family && a->prefix == b->prefix &&
	       a->w[0] == b->w[0] &&
	       a->w[1] == b->w[1] && a->w[2] == b->w[2] && a->w[3] == b->w[3];
}

static u32 nfg_sc_bucket(const struct nfg_sc_allowlist *al,
			 const struct nfg_sc_key *k)
{
	return jhash2(k->w, 4, al->seed ^ (k->family | k->prefix << 8)) &
	       al->bucket_mask;
}

static spinlock_t *nfg_sc_lock(const struct nfg_sc_allowlist *al, u32 b)
{
	return &al->locks[b & al->lock_mask];
}

void nfg_sc_prefix_mask(u32 *mask, unsigned int prefix)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		unsigned int bits = prefix > 32 * i ? prefix - 32 * i : 0;
		u32 m = bits >= 32 ? ~0U : bits ? ~0U << (32 - bits) : 0;

		mask[i] = (__force u32)cpu_to_be32(m);
	}
}

void nfg_sc_key_make(struct nfg_sc_key *k, const u32 *addr, u8 family,
		     const u32 *mask, u8 prefix)
{
	unsigned int i, n = family == 10 ? 4 : 1;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < n; i++)
		k->w[i] = addr[i] & mask[i];
	k->family = family;
	k->prefix = prefix;
}

int nfg_sc_al_init(struct nfg_sc_allowlist *al, u32 buckets, u32 max, u32 seed)
{
	u32 i, locks;

	if (!buckets || buckets > NFG_SC_AL_BUCKETS_MAX ||
	    (buckets & (buckets - 1)) || !max || max > NFG_SC_AL_MAX_MAX)
		return -EINVAL;
	memset(al, 0, sizeof(*al));
	al->buckets = kvcalloc(buckets, sizeof(*al->buckets), GFP_KERNEL_ACCOUNT);
	if (!al->buckets)
		goto err_out;
	locks = min(buckets, NFG_SC_AL_LOCKS);
	al->locks = kcalloc(locks, sizeof(*al->locks), GFP_KERNEL_ACCOUNT);
	if (!al->locks)
		goto err_buckets;
	for (i = 0; i < locks; i++)
		spin_lock_init(&al->locks[i]);
	al->bucket_mask = buckets - 1;
	al->lock_mask = locks - 1;
	al->seed = seed;
	al->max = max;
	atomic_set(&al->count, 0);
	atomic_inc(&nfg_sc_live_objects);
	return 0;

err_buckets:
	kvfree(al->buckets);
	al->buckets = NULL;
err_out:
	return -ENOMEM;
}

static void nfg_sc_entry_free(struct rcu_head *head)
{
	kfree(container_of(head, struct nfg_sc_entry, rcu));
	atomic_dec(&nfg_sc_live_objects);
}

void nfg_sc_al_destroy(struct nfg_sc_allowlist *al)
{
	if (!al->buckets)
		return;
	nfg_sc_al_flush(al);
	kfree(al->locks);
	kvfree(al->buckets);
	al->buckets = NULL;
	atomic_dec(&nfg_sc_live_objects);
}

bool nfg_sc_al_lookup(struct nfg_sc_allowlist *al, const struct nfg_sc_key *k,
		      u32 now)
{
	struct nfg_sc_entry *e;

	for (e = rcu_dereference(al->buckets[nfg_sc_bucket(al, k)]); e;
	     e = rcu_dereference(e->next)) {
		if (!nfg_sc_key_eq(&e->key, k))
			continue;
		if (!nfg_sc_live(e, now))
			return false;
		if (READ_ONCE(e->last_used) != now)
			WRITE_ONCE(e->last_used, now);
		return true;
	}
	return false;
}

/* Unlink *@pp (its bucket lock held) and free it after a grace period. */
static void nfg_sc_unlink(struct nfg_sc_allowlist *al,
			  struct nfg_sc_entry __rcu **pp, struct nfg_sc_entry *e)
{
	rcu_assign_pointer(*pp, rcu_dereference_protected(e->next, true));
	atomic_dec(&al->count);
	call_rcu(&e->rcu, nfg_sc_entry_free);
}

/* Remove @k from bucket @b if present: true when removed. */
static bool nfg_sc_remove_key(struct nfg_sc_allowlist *al, u32 b,
			      const struct nfg_sc_key *k)
{
	spinlock_t *lock = nfg_sc_lock(al, b);
	struct nfg_sc_entry __rcu **pp;
	struct nfg_sc_entry *e;
	bool found = false;

	spin_lock_bh(lock);
	for (pp = &al->buckets[b];
	     (e = rcu_dereference_protected(*pp, lockdep_is_held(lock)));
	     pp = &e->next) {
		if (nfg_sc_key_eq(&e->key, k)) {
			nfg_sc_unlink(al, pp, e);
			found = true;
			break;
		}
	}
	spin_unlock_bh(lock);
	return found;
}

/*
 * Evict one entry other than @keep: the least recently used (expired ones
 * count as oldest) among the first NFG_SC_AL_EVICT_SCAN non-empty buckets
 * from the cursor. Found under RCU, removed under its bucket's lock (if it
 * is still there).
 */
static bool nfg_sc_evict_one(struct nfg_sc_allowlist *al, u32 now,
			     const struct nfg_sc_entry *keep)
{
	u32 b, start, scanned = 0, nonempty = 0, best_b = 0;
	struct nfg_sc_key best_key;
	struct nfg_sc_entry *e;
	bool found = false;
	s64 best_age = -1;

	memset(&best_key, 0, sizeof(best_key));
	start = READ_ONCE(al->evict_cursor);
	rcu_read_lock();
	for (b = start & al->bucket_mask; scanned <= al->bucket_mask &&
	     nonempty < NFG_SC_AL_EVICT_SCAN;
	     b = (b + 1) & al->bucket_mask, scanned++) {
		e = rcu_dereference(al->buckets[b]);
		if (!e)
			continue;
		nonempty++;
		for (; e; e = rcu_dereference(e->next)) {
			s64 age = (s32)(now - READ_ONCE(e->last_used));

			if (e == keep)
				continue;
			if (!nfg_sc_live(e, now))
				age = S32_MAX;
			if (age > best_age) {
				best_age = age;
				best_key = e->key;
				best_b = b;
				found = true;
			}
		}
	}
	rcu_read_unlock();
	WRITE_ONCE(al->evict_cursor, b);
	if (!found)
		return false;
	return nfg_sc_remove_key(al, best_b, &best_key);
}

int nfg_sc_al_add(struct nfg_sc_allowlist *al, const struct nfg_sc_key *k,
		  u32 now, u32 timeout, unsigned int *evicted)
{
	u32 b = nfg_sc_bucket(al, k);
	spinlock_t *lock = nfg_sc_lock(al, b);
	struct nfg_sc_entry *e, *n;
	unsigned int tries;

	*evicted = 0;
	spin_lock_bh(lock);
	for (e = rcu_dereference_protected(al->buckets[b], lockdep_is_held(lock));
	     e; e = rcu_dereference_protected(e->next, lockdep_is_held(lock))) {
		if (nfg_sc_key_eq(&e->key, k)) {
			WRITE_ONCE(e->expires, now + timeout);
			WRITE_ONCE(e->last_used, now);
			spin_unlock_bh(lock);
			return 1;
		}
	}
	/*
	 * Charged to the active memcg (the caller sets the state's). Not
	 * GFP_ATOMIC: its __GFP_HIGH would charge past memory.max.
	 */
	n = kmalloc(sizeof(*n), GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);
	if (!n) {
		spin_unlock_bh(lock);
		return -ENOMEM;
	}
	atomic_inc(&nfg_sc_live_objects);
	n->key = *k;
	n->expires = now + timeout;
	n->last_used = now;
	e = rcu_dereference_protected(al->buckets[b], lockdep_is_held(lock));
	RCU_INIT_POINTER(n->next, e);
	rcu_assign_pointer(al->buckets[b], n);
	spin_unlock_bh(lock);

	/*
	 * Bounded: make room without holding a lock. Concurrent adds may
	 * overshoot max by at most one entry each, for an instant.
	 */
	tries = NFG_SC_AL_EVICT_SCAN;
	if ((u32)atomic_inc_return(&al->count) <= al->max)
		return 0;
	while (tries-- && (u32)atomic_read(&al->count) > al->max)
		if (nfg_sc_evict_one(al, now, n))
			(*evicted)++;
	return 0;
}

bool nfg_sc_al_del(struct nfg_sc_allowlist *al, const struct nfg_sc_key *k)
{
	return nfg_sc_remove_key(al, nfg_sc_bucket(al, k), k);
}

/* Remove entries of buckets [first, first + n) that @pred selects. */
static unsigned int nfg_sc_sweep(struct nfg_sc_allowlist *al, u32 first,
				 u32 n, bool all, u32 now)
{
	unsigned int removed = 0;
	u32 b, end;

	end = first + min(n, nfg_sc_al_buckets(al) - min(first, nfg_sc_al_buckets(al)));
	for (b = first; b < end; b++) {
		spinlock_t *lock = nfg_sc_lock(al, b);
		struct nfg_sc_entry __rcu **pp;
		struct nfg_sc_entry *e;

		if (!rcu_access_pointer(al->buckets[b]))
			continue;
		spin_lock_bh(lock);
		pp = &al->buckets[b];
		while ((e = rcu_dereference_protected(*pp, lockdep_is_held(lock)))) {
			if (all || !nfg_sc_live(e, now)) {
				nfg_sc_unlink(al, pp, e);
				removed++;
			} else {
				pp = &e->next;
			}
		}
		spin_unlock_bh(lock);
	}
	return removed;
}

unsigned int nfg_sc_al_flush(struct nfg_sc_allowlist *al)
{
	return nfg_sc_sweep(al, 0, nfg_sc_al_buckets(al), true, 0);
}

unsigned int nfg_sc_al_expire(struct nfg_sc_allowlist *al, u32 now,
			      u32 first, u32 n)
{
	return nfg_sc_sweep(al, first, n, false, now);
}

unsigned int nfg_sc_al_walk(struct nfg_sc_allowlist *al, u32 now,
			    struct nfg_sc_al_pos *pos,
			    struct nfg_sc_al_ent *out, unsigned int n)
{
	u32 b, idx, skip = pos->skip;
	unsigned int got = 0;
	struct nfg_sc_entry *e;

	rcu_read_lock();
	for (b = pos->bucket; b <= al->bucket_mask; b++, skip = 0) {
		idx = 0;
		for (e = rcu_dereference(al->buckets[b]); e;
		     e = rcu_dereference(e->next)) {
			if (!nfg_sc_live(e, now))
				continue;
			if (idx < skip) {
				idx++;
				continue;
			}
			if (got == n) {
				/* full: go on from this entry next time */
				pos->bucket = b;
				pos->skip = idx;
				goto out;
			}
			out[got].key = e->key;
			out[got].expires = READ_ONCE(e->expires);
			out[got].bucket = b;
			out[got].idx = idx++;
			got++;
		}
	}
	pos->bucket = b;
	pos->skip = 0;
out:
	rcu_read_unlock();
	return got;
}
