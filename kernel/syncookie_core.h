/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard SYNCOOKIE: the pure core (see the theory of operation at the top
 * of syncookie_core.c): TCP option parsing and building, the kernel's
 * timestamp option encoding, nfguard's own SipHash cookie, and the
 * allowlist. Also compiled by the userspace unit harness in tests/unit
 * against a thin shim of kernel headers: nothing here knows about skbs.
 */
#ifndef _NFG_SYNCOOKIE_CORE_H
#define _NFG_SYNCOOKIE_CORE_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/rcupdate.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/* ---- TCP options ---- */

#define NFG_SC_WSCALE_NONE	15	/* "no window scaling" in encodings */
#define NFG_SC_WSCALE_MAX	14
#define NFG_SC_OPTS_MAXLEN	40	/* TCP option space */
/* Longest SYN-ACK option block we build: MSS, SACK_PERM+TS, NOP+WS. */
#define NFG_SC_SYNACK_OPTLEN	20

struct nfg_sc_opts {
	u16	mss;		/* 0 = no MSS option */
	u8	wscale;		/* NFG_SC_WSCALE_NONE = no window scale option */
	bool	sack;		/* SACK permitted */
	bool	ts;		/* timestamps present */
	u32	tsval;
	u32	tsecr;
};

/*
 * Parse the option block of a TCP header (@len bytes after the fixed 20).
 * Strict: an option whose length field is < 2 or runs past @len, or a
 * known option with the wrong length, is -EINVAL. A window scale above 14
 * is read as 14 (RFC 7323). Unknown options are skipped; EOL ends.
 */
int nfg_sc_parse_opts(const u8 *p, unsigned int len, struct nfg_sc_opts *o);

/*
 * Write the SYN-ACK's options for @o into @buf (NFG_SC_SYNACK_OPTLEN
 * bytes at least): MSS if @o->mss, SACK_PERM and TS (when @o->ts), window
 * scale unless NFG_SC_WSCALE_NONE, NOP-padded to 4 bytes. Returns the
 * length, a multiple of 4.
 */
unsigned int nfg_sc_build_opts(u8 *buf, const struct nfg_sc_opts *o);

/*
 * The kernel's syncookie timestamp encoding (net/ipv4/syncookies.c): the
 * low 6 bits of the SYN-ACK's TSval carry the peer's window scale (15 =
 * none), SACK (bit 4) and ECN (bit 5, never set here); the value is never
 * above @ts_now. The peer echoes it in TSecr; the kernel decodes it when
 * it validates the cookie ACK (after subtracting its per-flow offset).
 */
#define NFG_SC_TSBITS		6
#define NFG_SC_TS_WSMASK	0xfU
#define NFG_SC_TS_SACK		0x10U
u32 nfg_sc_ts_encode(u32 ts_now, u8 wscale, bool sack);
void nfg_sc_ts_decode(u32 tsecr, u8 *wscale, bool *sack);

/*
 * Local mode's admission: the cookie ACK must also echo a SYN-ACK TSval of
 * the last NFG_SC_LOCAL_TS_AGE ms. The TSval carries the kernel's secret
 * offset per address pair, so a forged echo (@tsecr) passes with
 * probability NFG_SC_LOCAL_TS_AGE / 2^32 = 2^-16; @ts_off is that offset,
 * @now_ms the clock nfg_sc_ts_encode() was given.
 */
#define NFG_SC_LOCAL_TS_AGE	65536U
bool nfg_sc_local_echo_fresh(u32 tsecr, u32 ts_off, u32 now_ms);

/* ---- nfguard's own cookie (proxy mode, shared secret) ---- */

/*
 * Cookie layout (32 bits, the SYN-ACK's sequence number):
 *   bits 0-2   MSS index (nfg_sc_mss_table)
 *   bits 3-6   peer window scale, 15 = none
 *   bit  7     SACK permitted
 *   bits 8-31  SipHash-2-4(secret; tuple, client ISN, counter, bits 0-7),
 *              low word; its high word is the SYN-ACK's TSval (when
 *              timestamps are agreed), which the client echoes
 * The counter is coarse time (seconds / NFG_SC_COUNTER_SECS); a cookie is
 * accepted for the current and the previous counter value, under the
 * current and the previous secret.
 */
#define NFG_SC_COUNTER_SECS	64
#define NFG_SC_MSS_IDX_BITS	3

struct nfg_sc_secret {
	siphash_key_t	key[2];		/* [0] current, [1] previous */
	bool		has_prev;
};

/* A flow as the client's SYN carries it; IPv4 in saddr[0]/daddr[0]. */
struct nfg_sc_flow {
	u32	saddr[4];	/* network byte order, as in the packet */
	u32	daddr[4];
	u16	sport;		/* network byte order */
	u16	dport;
	u8	family;		/* NFPROTO_IPV4 (2) or NFPROTO_IPV6 (10) */
};

extern const u16 nfg_sc_mss_table[1 << NFG_SC_MSS_IDX_BITS];
/* Largest table entry not above @mss (the smallest if all are). */
u8 nfg_sc_mss_index(u16 mss);

/*
 * The cookie for a SYN-ACK (its sequence number) and, in *@tsval (unless
 * NULL), the timestamp MAC: the SYN-ACK's TSval when timestamps are agreed.
 */
u32 nfg_sc_cookie_make(const siphash_key_t *key, const struct nfg_sc_flow *f,
		       u32 client_isn, u32 counter, const struct nfg_sc_opts *o,
		       u32 *tsval);
/*
 * Validate @cookie (the ACK's ack_seq - 1) against the flow and the
 * client's ISN (the ACK's seq - 1); @ack: the ACK's options (NULL: none).
 * An ACK with a timestamp must echo the timestamp MAC in its TSecr.
 * Returns -EINVAL for an invalid cookie; otherwise fills @o (mss, wscale,
 * sack) and returns NFG_SC_COOKIE_ADMIT when the echo was checked too
 * (a 56-bit proof: the source may be allowlisted), or 0 for a cookie
 * checked without it (24 bits: good for this connection only).
 *
 * Forgery: a random ACK passes one (secret, counter) pair with probability
 * 2^-24 (2^-56 with a timestamp); four pairs are tried, so 2^-22 per ACK
 * for a connection and 2^-54 for an admission to the allowlist.
 */
#define NFG_SC_COOKIE_ADMIT	1
int nfg_sc_cookie_check(const struct nfg_sc_secret *s,
			const struct nfg_sc_flow *f, u32 client_isn,
			u32 cookie, u32 counter, const struct nfg_sc_opts *ack,
			struct nfg_sc_opts *o);

/*
 * Coarse time counter of the cookie from wall-clock seconds. A check
 * accepts the current and the previous counter, not the next: a cluster's
 * box whose clock is d seconds behind the box that made a cookie refuses
 * about d / NFG_SC_COUNTER_SECS of them (see the man page: keep the
 * clocks synchronised).
 */
static inline u32 nfg_sc_counter(u64 secs)
{
	return (u32)(secs / NFG_SC_COUNTER_SECS);
}

/* ---- proxy mode: option negotiation ---- */

/*
 * What the rule lets the SYN-ACK advertise: @mss (always), window scale
 * @wscale (when the client offers one), SACK and timestamps when allowed
 * and offered by the client.
 */
struct nfg_sc_proxy_cfg {
	u16	mss;
	u8	wscale;
	bool	sack;
	bool	ts;
};

/*
 * From the client's SYN options @c: the SYN-ACK's options @synack (its
 * TSval @ts_now, which proxy mode replaces with the cookie's timestamp MAC,
 * echoing the client's) and the options the cookie must
 * remember for the server's SYN, @enc: the client's MSS (536 if none),
 * its window scale if scaling is agreed (else none), SACK if agreed.
 */
void nfg_sc_proxy_synack(const struct nfg_sc_opts *c,
			 const struct nfg_sc_proxy_cfg *cfg, u32 ts_now,
			 struct nfg_sc_opts *synack, struct nfg_sc_opts *enc);

/*
 * The options of the SYN sent to the server on the client's behalf: the
 * decoded cookie @dec (MSS, window scale, SACK) and, when the client's ACK
 * @ack carries timestamps, its TSval and TSecr.
 */
void nfg_sc_proxy_syn(const struct nfg_sc_opts *dec,
		      const struct nfg_sc_opts *ack, struct nfg_sc_opts *syn);

/* ---- allowlist ---- */

/*
 * Default bound per netns. The buckets are sized from the bound (about
 * NFG_SC_AL_CHAIN entries per bucket when full), so that lookups, the
 * eviction sample and listings stay short.
 */
#define NFG_SC_AL_DEFAULT_MAX		65536U
#define NFG_SC_AL_CHAIN			4U
#define NFG_SC_AL_MAX_MAX		((u32)BIT(24))
#define NFG_SC_AL_BUCKETS_MAX		((u32)BIT(20))
#define NFG_SC_AL_LOCKS			256U
/* Buckets sampled for the least recently used entry when full. */
#define NFG_SC_AL_EVICT_SCAN		16U

/*
 * A masked source address and its prefix length; IPv4 in w[0]. Two rules
 * with different --allowlist-mask lengths have separate entries, even for
 * the same masked address (10.1.0.0/24 is not 10.1.0.0/16).
 */
struct nfg_sc_key {
	u32	w[4];
	u8	family;
	u8	prefix;
	u8	pad[2];
};

struct nfg_sc_entry {
	struct nfg_sc_entry __rcu *next;	/* bucket chain */
	struct nfg_sc_key	key;		/* immutable */
	u32			expires;	/* seconds; under the bucket lock */
	u32			last_used;	/* seconds; racy hint (LRU) */
	struct rcu_head		rcu;
};

struct nfg_sc_allowlist {
	struct nfg_sc_entry __rcu **buckets;
	/*
	 * Keyed locks: locks[i & lock_mask] protects the chain of buckets[i]
	 * (linking, unlinking) and its entries' @expires. Taken BH-safe, only
	 * to add and remove; lookups never take them.
	 */
	spinlock_t		*locks;
	u32			bucket_mask;
	u32			lock_mask;
	u32			seed;
	u32			max;		/* entries; above it, evict */
	u32			evict_cursor;	/* racy hint: next bucket sampled */
	atomic_t		count;
};

/* A walk's copy of an entry, and where the walk found it. */
struct nfg_sc_al_ent {
	struct nfg_sc_key	key;
	u32			expires;
	u32			bucket;
	u32			idx;	/* among the bucket's live entries */
};

/* Where a walk goes on: bucket, and live entries of it already copied. */
struct nfg_sc_al_pos {
	u32	bucket;
	u32	skip;
};

/* Entries and tables alive (leak checks in tests). */
extern atomic_t nfg_sc_live_objects;

int nfg_sc_al_init(struct nfg_sc_allowlist *al, u32 buckets, u32 max, u32 seed);
/* No reader may be left. */
void nfg_sc_al_destroy(struct nfg_sc_allowlist *al);
/* RCU read side (caller's); an expired entry is absent. Refreshes LRU. */
bool nfg_sc_al_lookup(struct nfg_sc_allowlist *al, const struct nfg_sc_key *k,
		      u32 now);
/*
 * Add @k (or refresh its expiry) for @timeout seconds. Returns 0 when
 * added, 1 when refreshed, -ENOMEM. *@evicted: entries evicted to stay
 * within max. Atomic context.
 */
int nfg_sc_al_add(struct nfg_sc_allowlist *al, const struct nfg_sc_key *k,
		  u32 now, u32 timeout, unsigned int *evicted);
bool nfg_sc_al_del(struct nfg_sc_allowlist *al, const struct nfg_sc_key *k);
unsigned int nfg_sc_al_flush(struct nfg_sc_allowlist *al);
/* Remove expired entries of buckets [@first, @first + @n). */
unsigned int nfg_sc_al_expire(struct nfg_sc_allowlist *al, u32 now,
			      u32 first, u32 n);
/*
 * Copy up to @n live entries from *@pos on (a chain of any length is
 * walked across calls: the cursor counts the live entries of its bucket
 * already copied). *@pos is advanced past the last one copied; its
 * bucket is past the end when the walk is done. An entry added or
 * removed between calls may be missed or seen twice, as in any dump
 * that holds no lock across calls; the others are each copied once.
 */
unsigned int nfg_sc_al_walk(struct nfg_sc_allowlist *al, u32 now,
			    struct nfg_sc_al_pos *pos,
			    struct nfg_sc_al_ent *out, unsigned int n);

static inline u32 nfg_sc_al_buckets(const struct nfg_sc_allowlist *al)
{
	return al->bucket_mask + 1;
}

/* Mask @addr (4 words, network order) with @mask, of @prefix bits, into @k. */
void nfg_sc_key_make(struct nfg_sc_key *k, const u32 *addr, u8 family,
		     const u32 *mask, u8 prefix);
/* @mask (4 words, network order) from a prefix length. */
void nfg_sc_prefix_mask(u32 *mask, unsigned int prefix);

#endif /* _NFG_SYNCOOKIE_CORE_H */
