/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard: the public interface of the nfguard control-plane library,
 * installed as <libnfguard.h> (pkg-config: libnfguard). Clients of the four
 * generic netlink families of the nfguard kernel modules:
 *
 *   nfg_rs_*   nfg_rangeset    named IPv4/IPv6 range sets (-m rangeset)
 *   nfg_kcl_*  nfg_kconnlimit  the per-rule tables of -m kconnlimit
 *   nfg_sc_*   nfg_syncookie   the SYNCOOKIE target's allowlist, counters, secret
 *   nfg_rtc_*  nfg_rtcache     the RTCACHE target's route cache
 *
 * plus address/range parsing and formatting, libnftnl expressions of the
 * extensions (nfg_nft_*) and protection profiles (nfg_profile_*,
 * nfg_protect_*: what `nfguard protect` installs, built, applied, checked
 * and rendered by the library). Everything applies to the caller's network
 * namespace and needs CAP_NET_ADMIN there (the kernel answers EPERM
 * otherwise).
 *
 * Errors: functions return 0 (or a handle) on success, -errno (or NULL) on
 * failure, and fill the struct nfg_err they were given (may be NULL) with
 * the positive errno and a one-line message: the kernel's extack message
 * when it sent one, else libnfguard's. The library never prints, never
 * exits and keeps no global state; a handle is one netlink socket, use one
 * per thread. Self-contained: only standard C headers are included, the
 * kernel ABI headers stay private to the library.
 *
 * Shared library soname libnfguard.so.1: only what this header declares is
 * exported.
 */
#ifndef LIBNFGUARD_H
#define LIBNFGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NFG_BUILDING_LIB) && defined(__GNUC__)
#define NFG_API __attribute__((visibility("default")))
#else
#define NFG_API
#endif

/* The nfguard release this library belongs to, e.g. "0.1.0". */
NFG_API const char *nfg_version(void);

/* ---- errors ------------------------------------------------------------ */

/*
 * Error report. code is a positive errno (0 = no error). msg is a one-line
 * reason: the kernel's extack message when it sent one, otherwise text
 * from libnfguard, otherwise empty (then use strerror(code)).
 */
struct nfg_err {
	int code;
	bool kernel_msg;	/* msg is the kernel's extack message */
	char msg[256];
};

NFG_API void nfg_err_clear(struct nfg_err *e);
/* msg if set, else strerror(code). */
NFG_API const char *nfg_err_str(const struct nfg_err *e);

/* ---- extensions ---------------------------------------------------------- */

enum nfg_ext {
	NFG_EXT_RANGESET,	/* xt_rangeset.ko,  family nfg_rangeset */
	NFG_EXT_KCONNLIMIT,	/* xt_kconnlimit.ko, family nfg_kconnlimit */
	NFG_EXT_SYNCOOKIE,	/* xt_SYNCOOKIE.ko, family nfg_syncookie */
	NFG_EXT_RTCACHE,	/* xt_RTCACHE.ko,   family nfg_rtcache */
	NFG_EXT_COUNT
};

/* "rangeset", "kconnlimit", "syncookie", "rtcache"; NULL if out of range. */
NFG_API const char *nfg_ext_name(enum nfg_ext ext);
/* Its kernel module: "xt_rangeset", ...; NULL if out of range. */
NFG_API const char *nfg_ext_module(enum nfg_ext ext);

/*
 * Is the extension's kernel module loaded (its generic netlink family
 * registered)? 1 yes, 0 no, -errno on failure. Unlike the nfg_*_open()
 * functions (whose family lookup makes the kernel try to load the module),
 * this never loads anything, and needs no privilege.
 */
NFG_API int nfg_ext_loaded(enum nfg_ext ext, struct nfg_err *e);

/* ---- addresses and ranges ---------------------------------------------- */

/* Address families, as the kernel's NFPROTO_IPV4 / NFPROTO_IPV6. */
#define NFG_FAMILY_IPV4		2
#define NFG_FAMILY_IPV6		10

/*
 * An inclusive range of addresses of one family, in network byte order
 * (big endian, so memcmp() orders addresses). IPv4 uses the first 4 bytes;
 * the other 12 are zero.
 */
struct nfg_range {
	uint8_t family;		/* NFG_FAMILY_IPV4 or NFG_FAMILY_IPV6 */
	uint8_t start[16];
	uint8_t end[16];	/* inclusive, start <= end */
};

/* Enough for "a-b" with two full-length IPv6 addresses, plus NUL. */
#define NFG_RANGE_STRLEN	96
/* Longest element text nfg_range_parse() accepts. */
#define NFG_ELEM_MAXLEN		(NFG_RANGE_STRLEN - 1)

/* 4 for IPv4, 16 for IPv6, 0 otherwise. */
NFG_API unsigned int nfg_addr_len(uint8_t family);
/* "ipv4", "ipv6" or "unknown". */
NFG_API const char *nfg_family_name(uint8_t family);
/* "ipv4"/"ipv6" (also "inet"/"inet6") -> NFG_FAMILY_*; anything else -> 0. */
NFG_API uint8_t nfg_family_parse(const char *s);

/*
 * Parse one element: a single address ("10.0.0.1", "2001:db8::1"), a
 * CIDR ("10.0.0.0/8", "::/0") or a range "a-b" of two addresses of the
 * same family (start <= end). No host names, no whitespace. A CIDR must
 * not have host bits set ("10.0.0.1/8" is refused and the message names
 * the network that was probably meant).
 *
 * @family: NFG_FAMILY_IPV4 or NFG_FAMILY_IPV6 to require that family, 0 to
 *          accept either (r->family tells which).
 * Returns 0, or -1 with a one-line reason (no trailing newline) in err.
 */
NFG_API int nfg_range_parse(const char *s, uint8_t family, struct nfg_range *r,
			    char *err, size_t errlen);

/*
 * Canonical text: a single address bare, an exact prefix as CIDR
 * (including "0.0.0.0/0", "::/0"), anything else as "start-end".
 * Returns what snprintf() would (length without NUL), -1 on a bad range.
 * NFG_RANGE_STRLEN bytes are always enough.
 */
NFG_API int nfg_range_format(const struct nfg_range *r, char *buf, size_t len);

/*
 * Sort ranges of one family by start and merge overlapping and adjacent
 * ones, in place. Returns the new count. The union of the ranges is
 * unchanged, so sending the result to ADD or DEL has the same effect as
 * sending the input.
 */
NFG_API size_t nfg_ranges_normalize(struct nfg_range *r, size_t n);

/* ---- rangeset (nfg_rangeset) --------------------------------------------- */

/*
 * Batches. nfg_rs_add()/nfg_rs_del() send all elements in ONE netlink
 * request (several 64 KiB ELEMS nests) when the socket can send it: the
 * send buffer is raised with SO_SNDBUFFORCE (CAP_NET_ADMIN in the initial
 * user namespace) or SO_SNDBUF (up to net.core.wmem_max), up to 64 MiB.
 * The kernel applies one request completely or not at all and republishes
 * the packet-path array once, so such a call is all-or-nothing. Only when
 * the message cannot be sent (or nfg_rs_set_batch() asked for it) is the
 * call split into requests of nfg_rs_batch_size() elements; then, if
 * request k fails, requests 1..k-1 stay applied, and struct nfg_rs_batch
 * tells the caller exactly what happened. Inputs are sorted and merged
 * first (same union, fewer elements).
 */

/* Set names: 1..NFG_RS_NAMELEN-1 bytes. */
#define NFG_RS_NAMELEN		32
/* Largest maxelem the kernel accepts (0 or more is refused). */
#define NFG_RS_MAXELEM_LIMIT	(16U * 1024 * 1024)
/* Default elements per ADD/DEL request. */
#define NFG_RS_BATCH_DEFAULT	1024U

/* One set as LIST reports it. */
struct nfg_rs_info {
	char name[NFG_RS_NAMELEN];
	uint8_t family;		/* NFG_FAMILY_IPV4 / NFG_FAMILY_IPV6 */
	uint32_t maxelem;
	uint32_t count;		/* ranges in the set */
	uint32_t refs;		/* rules using the set */
	uint64_t lookups;
	uint64_t hits;
	uint64_t memsize;	/* bytes */
};

/* What a batched add/del did (filled also on failure). */
struct nfg_rs_batch {
	size_t elems;		/* elements sent after normalization */
	size_t requests;	/* requests needed for all of them */
	size_t requests_done;	/* requests the kernel applied */
	size_t elems_done;	/* elements in those requests */
};

struct nfg_rs;

/*
 * Open a handle. e->code == ENOENT: the nfg_rangeset family is not
 * registered (xt_rangeset not loaded and not autoloadable).
 */
NFG_API struct nfg_rs *nfg_rs_open(struct nfg_err *e);
NFG_API void nfg_rs_close(struct nfg_rs *h);

/*
 * Force splitting into requests of @elems elements (0 = back to one request
 * per call when possible). Clamped to what one message holds.
 */
NFG_API void nfg_rs_set_batch(struct nfg_rs *h, size_t elems);
NFG_API size_t nfg_rs_batch_size(const struct nfg_rs *h, uint8_t family);

/*
 * Name check. Kernel limit: 1..NFG_RS_NAMELEN-1 bytes. strict (used for
 * names the CLI creates) also requires [A-Za-z0-9_.:+-] and no leading
 * '-', so names survive save/restore and shell scripts unquoted.
 */
NFG_API int nfg_rs_name_check(const char *name, bool strict, struct nfg_err *e);

NFG_API int nfg_rs_create(struct nfg_rs *h, const char *name, uint8_t family,
			  uint32_t maxelem /* 0 = kernel default */,
			  struct nfg_err *e);
NFG_API int nfg_rs_destroy(struct nfg_rs *h, const char *name, struct nfg_err *e);
NFG_API int nfg_rs_flush(struct nfg_rs *h, const char *name, struct nfg_err *e);
NFG_API int nfg_rs_swap(struct nfg_rs *h, const char *a, const char *b,
			struct nfg_err *e);
NFG_API int nfg_rs_rename(struct nfg_rs *h, const char *from, const char *to,
			  struct nfg_err *e);

/* LIST doit: one set's header. -ENOENT if there is no such set. */
NFG_API int nfg_rs_get(struct nfg_rs *h, const char *name,
		       struct nfg_rs_info *out, struct nfg_err *e);

/* TEST: *in = whole range inside the set. r->family must match the set. */
NFG_API int nfg_rs_test(struct nfg_rs *h, const char *name,
			const struct nfg_range *r, bool *in, struct nfg_err *e);

/*
 * Batched ADD / DEL. r[] (all of one family) is sorted and merged IN
 * PLACE. b (may be NULL) reports progress, see "Batches" above.
 */
NFG_API int nfg_rs_add(struct nfg_rs *h, const char *name, struct nfg_range *r,
		       size_t n, struct nfg_rs_batch *b, struct nfg_err *e);
NFG_API int nfg_rs_del(struct nfg_rs *h, const char *name, struct nfg_range *r,
		       size_t n, struct nfg_rs_batch *b, struct nfg_err *e);

/*
 * Callbacks return 0 to go on, anything else to stop (the call then
 * returns that value if negative, -ECANCELED otherwise).
 */
typedef int (*nfg_rs_set_cb)(const struct nfg_rs_info *set, void *data);
typedef int (*nfg_rs_range_cb)(const struct nfg_range *r, void *data);

/* LIST dump of all sets in the caller's netns (headers only). */
NFG_API int nfg_rs_list(struct nfg_rs *h, nfg_rs_set_cb cb, void *data,
			struct nfg_err *e);
/*
 * The same into an array sorted by name: *sets (release with free(); NULL
 * when there is no set) and *n.
 */
NFG_API int nfg_rs_list_all(struct nfg_rs *h, struct nfg_rs_info **sets,
			    size_t *n, struct nfg_err *e);

/*
 * LIST dump of one set: its header into *hdr (may be NULL), then every
 * range in ascending order, from one consistent kernel snapshot.
 */
NFG_API int nfg_rs_dump(struct nfg_rs *h, const char *name,
			struct nfg_rs_info *hdr, nfg_rs_range_cb cb, void *data,
			struct nfg_err *e);

/*
 * Timeouts, in seconds (0 = permanent, at most NFG_RS_TIMEOUT_MAX). A set
 * has a default timeout for elements added without one. Adding a range
 * again gives each part already in the set the later of its expiry and
 * the new one (permanent is the latest), so re-adding refreshes; adjacent
 * ranges with different expiries stay separate ranges. Expired ranges
 * leave the set within a second. Kernels without timeouts refuse these
 * calls (an "unknown attribute" error); the calls above never send one.
 */
#define NFG_RS_TIMEOUT_MAX	2147483U
/* Per element of nfg_rs_add_timeout(): use the set's default timeout. */
#define NFG_RS_TIMEOUT_SET	UINT32_MAX

/* Timeout facts of a set (LIST header). */
struct nfg_rs_tinfo {
	uint32_t timeout;	/* the set's default, 0 = none */
	uint64_t expiries;	/* ranges removed on expiry so far */
};

/* CREATE with a default timeout. */
NFG_API int nfg_rs_create_timeout(struct nfg_rs *h, const char *name,
				  uint8_t family, uint32_t maxelem,
				  uint32_t timeout, struct nfg_err *e);
/* LIST doit: one set's timeout facts. */
NFG_API int nfg_rs_get_timeout(struct nfg_rs *h, const char *name,
			       struct nfg_rs_tinfo *out, struct nfg_err *e);
/*
 * ADD with timeouts: timeouts[i] (seconds, 0 = permanent, or
 * NFG_RS_TIMEOUT_SET) for r[i]. timeouts == NULL is nfg_rs_add(). With
 * timeouts, r[] is sent as it is (not merged; the kernel's result does
 * not depend on the order).
 */
NFG_API int nfg_rs_add_timeout(struct nfg_rs *h, const char *name,
			       struct nfg_range *r, const uint32_t *timeouts,
			       size_t n, struct nfg_rs_batch *b,
			       struct nfg_err *e);
/* Dump callback with each range's seconds left (0 = permanent). */
typedef int (*nfg_rs_trange_cb)(const struct nfg_range *r, uint32_t timeout,
				void *data);
/* nfg_rs_dump() with the timeout facts (thdr may be NULL) and seconds left. */
NFG_API int nfg_rs_dump_timeout(struct nfg_rs *h, const char *name,
				struct nfg_rs_info *hdr,
				struct nfg_rs_tinfo *thdr, nfg_rs_trange_cb cb,
				void *data, struct nfg_err *e);

/*
 * Packet-path updates of a set by -j RANGESET rules (LIST header; a kernel
 * without the target sends none: zeros).
 */
struct nfg_rs_dinfo {
	uint32_t dynamic;	/* entries added by packets, not yet folded */
	uint64_t adds;		/* packet-path adds (and refreshes) */
	uint64_t dels;		/* packet-path deletes */
	uint64_t refused;	/* adds/deletes refused: set full, no memory */
};

/* LIST doit: one set's packet-path counters. */
NFG_API int nfg_rs_get_dynamic(struct nfg_rs *h, const char *name,
			       struct nfg_rs_dinfo *out, struct nfg_err *e);

/* ---- kconnlimit (nfg_kconnlimit) ----------------------------------------- */

/* --kconnlimit-name labels: at most NFG_KCL_NAMELEN-1 bytes. */
#define NFG_KCL_NAMELEN		32
/* Flags of a rule (struct nfg_kcl_inst.flags), as the match's. */
#define NFG_KCL_F_UPTO		0x01	/* match while count <= limit */
#define NFG_KCL_F_DADDR		0x02	/* key on the destination address */
#define NFG_KCL_F_ABOVE		0x04	/* match while count > limit */

/* One rule instance of the caller's netns, with its counters. */
struct nfg_kcl_inst {
	uint32_t id;
	char name[NFG_KCL_NAMELEN];	/* "" = no --kconnlimit-name */
	uint8_t family;		/* NFG_FAMILY_IPV4 or NFG_FAMILY_IPV6 */
	uint8_t prefix;
	uint8_t flags;		/* NFG_KCL_F_* */
	uint32_t limit;
	uint32_t keys;
	uint32_t conns;
	uint32_t slots;
	uint32_t locks;
	uint64_t memsize;
	uint64_t matched;
	uint64_t over_limit;
	uint64_t inserts;
	uint64_t gc_evictions;
	uint64_t cap_hits;
	uint64_t alloc_fail;
	uint64_t total_conns;	/* remembered by all rules of the netns */
	uint64_t max_conns;	/* the per-netns cap */
};

struct nfg_kcl_key {
	uint8_t addr[16];	/* masked key, network order, 4 or 16 bytes used */
	uint32_t count;
};

/*
 * Called once per instance (@keys NULL for list) and, for top, once per
 * instance with all its keys, by count descending. Return 0 to go on.
 */
typedef int (*nfg_kcl_cb)(const struct nfg_kcl_inst *inst,
			  const struct nfg_kcl_key *keys, size_t nkeys,
			  void *data);

struct nfg_kcl;

/* ENOENT in e: the module is not loaded (and could not be autoloaded). */
NFG_API struct nfg_kcl *nfg_kcl_open(struct nfg_err *e);
NFG_API void nfg_kcl_close(struct nfg_kcl *h);

/* Instances, optionally only those labelled @name (NULL = all). */
NFG_API int nfg_kcl_list(struct nfg_kcl *h, const char *name, nfg_kcl_cb cb,
			 void *data, struct nfg_err *e);
/*
 * All instances into an array in the kernel's order (by id): *insts
 * (release with free(); NULL when there is none) and *n.
 */
NFG_API int nfg_kcl_list_all(struct nfg_kcl *h, struct nfg_kcl_inst **insts,
			     size_t *n, struct nfg_err *e);
/* Like list, with the @n (1..10000) keys with most connections. */
NFG_API int nfg_kcl_top(struct nfg_kcl *h, const char *name, uint32_t n,
			nfg_kcl_cb cb, void *data, struct nfg_err *e);

/*
 * A key with its conntrack zone: a key is a masked address in one zone
 * (each zone has its own count), so one address may come in several.
 */
struct nfg_kcl_zkey {
	uint8_t addr[16];	/* masked key, network order, 4 or 16 bytes used */
	uint32_t count;
	uint16_t zone;		/* conntrack zone id (0: the default zone) */
};

typedef int (*nfg_kcl_zcb)(const struct nfg_kcl_inst *inst,
			   const struct nfg_kcl_zkey *keys, size_t nkeys,
			   void *data);

/* Like nfg_kcl_top(), each key with its zone (0 from kernels without). */
NFG_API int nfg_kcl_top_zones(struct nfg_kcl *h, const char *name,
			      uint32_t n, nfg_kcl_zcb cb, void *data,
			      struct nfg_err *e);

/* ---- SYNCOOKIE (nfg_syncookie) ------------------------------------------- */

struct nfg_sc;

struct nfg_sc_counters {
	uint32_t entries, max_entries;
	uint64_t syn_seen, cookie_sent, ack_valid, ack_invalid;
	uint64_t allowlist_hit, allowlist_add, allowlist_evict, proxied;
	uint64_t malformed, send_fail, sent_inplace, syn_resent;
};

/* An allowlist entry: family NFG_FAMILY_*, addr in network order. */
struct nfg_sc_entry {
	uint8_t family;
	uint8_t prefix;
	uint8_t addr[16];
	uint32_t timeout;	/* seconds left (list) / lifetime (add; 0 = default) */
};

/* ENOENT in e: the module is not loaded (and could not be autoloaded). */
NFG_API struct nfg_sc *nfg_sc_open(struct nfg_err *e);
NFG_API void nfg_sc_close(struct nfg_sc *h);

NFG_API int nfg_sc_stats(struct nfg_sc *h, struct nfg_sc_counters *out,
			 struct nfg_err *e);
/*
 * Counters newer than struct nfg_sc_counters (which stays as it is): 0 from
 * a module without them.
 */
struct nfg_sc_counters_ext {
	uint64_t after_conntrack;	/* passed: conntrack ran before the rule */
};
/* nfg_sc_stats, and with @ext (may be NULL) the newer counters too. */
NFG_API int nfg_sc_stats_ext(struct nfg_sc *h, struct nfg_sc_counters *out,
			     struct nfg_sc_counters_ext *ext, struct nfg_err *e);
typedef int (*nfg_sc_entry_cb)(const struct nfg_sc_entry *ent, void *data);
NFG_API int nfg_sc_list(struct nfg_sc *h, nfg_sc_entry_cb cb, void *data,
			struct nfg_err *e);
NFG_API int nfg_sc_add(struct nfg_sc *h, const struct nfg_sc_entry *ent,
		       struct nfg_err *e);
NFG_API int nfg_sc_del(struct nfg_sc *h, const struct nfg_sc_entry *ent,
		       struct nfg_err *e);
/* *removed: entries flushed (may be NULL). */
NFG_API int nfg_sc_flush(struct nfg_sc *h, uint32_t *removed, struct nfg_err *e);
NFG_API int nfg_sc_secret_set(struct nfg_sc *h, const uint8_t key[16],
			      struct nfg_err *e);
NFG_API int nfg_sc_secret_rotate(struct nfg_sc *h, struct nfg_err *e);

/* ---- RTCACHE (nfg_rtcache) ----------------------------------------------- */

struct nfg_rtc_stats {
	uint32_t entries;
	uint32_t max_entries;
	uint64_t hit, miss, learn, invalid, evict;
};

struct nfg_rtc_route {
	uint8_t family;		/* NFG_FAMILY_IPV4 or NFG_FAMILY_IPV6 */
	uint8_t dir;		/* 0 original, 1 reply */
	uint8_t src[16];	/* network order, 4 or 16 bytes used */
	uint8_t dst[16];
	uint32_t iif, oif, mark;
	uint8_t dscp;
	uint32_t age_ms, idle_ms;
};

/* Return 0 to go on. */
typedef int (*nfg_rtc_cb)(const struct nfg_rtc_route *r, void *data);

struct nfg_rtc;

/* ENOENT in e: the module is not loaded (and could not be autoloaded). */
NFG_API struct nfg_rtc *nfg_rtc_open(struct nfg_err *e);
NFG_API void nfg_rtc_close(struct nfg_rtc *h);

NFG_API int nfg_rtc_stats(struct nfg_rtc *h, struct nfg_rtc_stats *s,
			  struct nfg_err *e);
NFG_API int nfg_rtc_list(struct nfg_rtc *h, nfg_rtc_cb cb, void *data,
			 struct nfg_err *e);
/* @family 0 = all; *dropped = entries dropped. */
NFG_API int nfg_rtc_flush(struct nfg_rtc *h, uint8_t family, uint32_t *dropped,
			  struct nfg_err *e);

/* ---- nftables expressions (nft_compat) ----------------------------------- */

/*
 * Encoders of libnftnl "match"/"target" expressions (nft_compat) for the
 * four extensions: the same name, revision and info bytes as iptables-nft
 * sends for the equivalent iptables rule (the info is the whole
 * XT_ALIGN()ed ABI struct of include/uapi/linux/netfilter/xt_*.h, the
 * kernel-only tail zeroed). Add the expression to an nftnl_rule with
 * nftnl_rule_add_expr() (the rule then owns it), or release it with
 * nftnl_expr_free(). nft_compat only knows these extensions in tables of
 * family ip or ip6 (@family NFG_FAMILY_IPV4 / NFG_FAMILY_IPV6), and the
 * targets check the table's name as in iptables: SYNCOOKIE "raw" (base chain
 * hook prerouting, rule with NFTNL_RULE_COMPAT_PROTO 6), RTCACHE "mangle" or
 * "filter" (hook forward or input), kconnlimit anything but "raw".
 * Parameters are checked as the iptables plugins check them: EINVAL (or
 * ERANGE for a number out of range) with a message; ENOMEM.
 */
struct nftnl_expr;

/* -m rangeset [!] --match-set SET src|dst */
struct nfg_nft_rangeset {
	const char *set;	/* set name (the set must exist when the rule is added) */
	bool dst;		/* match the destination address, else the source */
	bool invert;		/* ! --match-set */
};
NFG_API struct nftnl_expr *nfg_nft_rangeset(uint8_t family,
					    const struct nfg_nft_rangeset *p,
					    struct nfg_err *e);

/* -m kconnlimit --kconnlimit-above|upto N --kconnlimit-mask P --kconnlimit-saddr|daddr [--kconnlimit-name X] */
struct nfg_nft_kconnlimit {
	uint32_t limit;
	int prefix;		/* 0..32 / 0..128; -1 = the whole address */
	bool upto;		/* match while count <= limit, else when count > limit */
	bool daddr;		/* key on the destination address */
	const char *name;	/* label (NULL or "" = none), [A-Za-z0-9_.:-], < 32 bytes */
};
NFG_API struct nftnl_expr *nfg_nft_kconnlimit(uint8_t family,
					      const struct nfg_nft_kconnlimit *p,
					      struct nfg_err *e);

#define NFG_SC_MODE_PROXY	0
#define NFG_SC_MODE_LOCAL	1

/* -j SYNCOOKIE [--mode proxy|local] [--mss N] [--wscale N] [--sack-perm] [--timestamp] ... */
struct nfg_nft_syncookie {
	uint8_t mode;		/* NFG_SC_MODE_* */
	uint16_t mss;		/* 0 = from the device MTU, else 88..65535 */
	int wscale;		/* -1 = as the kernel, else 0..14 */
	bool sack_perm;		/* (local mode: needs timestamp) */
	bool timestamp;
	uint32_t timeout;	/* allowlist lifetime, s; 0 = 300 */
	int prefix;		/* allowlist mask 1..32 / 1..128; 0 = whole address */
};
NFG_API struct nftnl_expr *nfg_nft_syncookie(uint8_t family,
					     const struct nfg_nft_syncookie *p,
					     struct nfg_err *e);

/* -j RTCACHE (no options) */
NFG_API struct nftnl_expr *nfg_nft_rtcache(uint8_t family, struct nfg_err *e);

/*
 * Decoder: if @expr is a match/target expression of one of the four
 * extensions, write its iptables form with every option into @buf
 * ("-m kconnlimit --kconnlimit-above 64 --kconnlimit-mask 24
 * --kconnlimit-saddr", "-j SYNCOOKIE --mode proxy ...", as iptables-save
 * prints it, except that every option is shown, defaults included) and
 * return its length. -ENOENT: another expression (not an error: no message);
 * -EINVAL: ours but malformed (wrong revision or info size); -ENOSPC: @buf
 * too small.
 */
NFG_API int nfg_nft_expr_format(const struct nftnl_expr *expr, uint8_t family,
				char *buf, size_t len, struct nfg_err *e);

/* ---- protection profiles (nftables, nfguard protect) ---------------------- */

/*
 * A protection profile: what `nfguard protect` installs, for programs. The
 * profile is nftables rules of the four extensions (through nft_compat) in
 * tables "nfguard" of families ip and ip6 that the library creates and marks
 * as its own (comment "managed by nfguard protect"); a table "nfguard"
 * without that comment is the user's and is never changed or deleted
 * (nfg_protect_plan_foreign()). Base chains, at the priorities iptables
 * gives its tables: "blocklist" prerouting -310 (one rule per set:
 * -m rangeset --match-set SET src -j DROP), "syncookie" prerouting -300
 * (before conntrack; one rule per port: -p tcp --dport PORT -j SYNCOOKIE),
 * "rtcache" forward -150 (-j RTCACHE), "input" and "forward" at 0 jumping
 * per port to the regular chain of each kconnlimit limit ("kconnlimit",
 * "kconnlimit-2", ...: -m kconnlimit --kconnlimit-above LIMIT -j REJECT,
 * tcp-reset for TCP, port-unreachable for UDP).
 *
 * Use: fill a struct nfg_profile (nfg_profile_init() first), build a plan
 * with nfg_protect_build() (the ruleset is read: the plan removes what an
 * earlier profile installed, then adds this one, in one batch), then
 * nfg_protect_apply() it, nfg_protect_check() it against the live ruleset,
 * or nfg_protect_render() it (what would be done, as text or JSON). A plan
 * is a list of operations, one line of text each ("add table ip nfguard
 * ...", "add chain ...", "add rule ip nfguard syncookie -p tcp --dport 80
 * -j SYNCOOKIE --mode proxy ...": rules in iptables syntax with every
 * option, "delete table ..."); nfg_protect_read() gives the same for what
 * is installed. Nothing here needs the rangeset/kconnlimit/SYNCOOKIE/RTCACHE
 * generic netlink families: nf_tables loads the modules (nft_compat) when
 * the batch is applied.
 */
#define NFG_PROFILE_MAX_PORTS	64	/* per port list */
#define NFG_PROFILE_MAX_KCL	16	/* kconnlimit limits */
#define NFG_PROFILE_MAX_BL	16	/* blocklist sets */
/* struct nfg_profile.families and nfg_protect_plan_foreign(): bits */
#define NFG_PROFILE_IP		0x1u	/* table ip nfguard */
#define NFG_PROFILE_IP6		0x2u	/* table ip6 nfguard */

/* PROTO/PORT,PORT,...: the ports are distinct, 1..65535, n >= 1 when used. */
struct nfg_profile_ports {
	uint8_t proto;		/* 6 (TCP) or 17 (UDP: kconnlimit only) */
	unsigned int n;
	uint16_t port[NFG_PROFILE_MAX_PORTS];	/* host order */
};

/* One kconnlimit limit: more than @limit connections per key are rejected. */
struct nfg_profile_kcl {
	uint32_t limit;
	int prefix;		/* IPv4 key mask 0..32; -1 = the whole address */
	int prefix6;		/* IPv6 key mask 0..128; -1 = the whole address
				 * (nfguard protect's default is 64) */
	struct nfg_profile_ports ports;	/* TCP or UDP destination ports */
};

struct nfg_profile {
	unsigned int families;	/* NFG_PROFILE_IP | NFG_PROFILE_IP6, not 0 */
	/* SYNCOOKIE on these TCP ports (n == 0: none), with these options
	 * (sc.prefix is the IPv4 allowlist mask; see struct nfg_nft_syncookie) */
	struct nfg_profile_ports syncookie;
	struct nfg_nft_syncookie sc;
	int sc_prefix6;		/* IPv6 allowlist mask 1..128; 0 = whole address */
	unsigned int nkcl;
	struct nfg_profile_kcl kcl[NFG_PROFILE_MAX_KCL];
	unsigned int nbl;	/* blocklist sets (they must exist at apply time) */
	char bl[NFG_PROFILE_MAX_BL][NFG_RS_NAMELEN];
	uint8_t bl_family[NFG_PROFILE_MAX_BL];	/* each set's NFG_FAMILY_*:
						 * its rule goes in that family only */
	bool rtcache;		/* RTCACHE on forwarded packets */
};

/* Empty profile: both families, SYNCOOKIE defaults (proxy, wscale -1). */
NFG_API void nfg_profile_init(struct nfg_profile *p);
/*
 * Is @p a profile the library installs? 0, or -EINVAL/-ERANGE with the
 * reason (no family, nothing to install, a port list that is empty or too
 * long or has port 0 or a repeated port, a bad protocol, mask or SYNCOOKIE
 * option, a set name, a set of a family the profile does not install).
 */
NFG_API int nfg_profile_check(const struct nfg_profile *p, struct nfg_err *e);

struct nfg_protect;		/* a handle: one NETLINK_NETFILTER socket */
struct nfg_protect_plan;	/* operations (built or read back) */

/* Open a handle; e: "netlink socket: ..." on failure. */
NFG_API struct nfg_protect *nfg_protect_open(struct nfg_err *e);
NFG_API void nfg_protect_close(struct nfg_protect *h);

/*
 * Plan the batch that installs @p (NULL: that removes the profile, as
 * unprotect), after reading the ruleset through @h (its generation id goes
 * into the batch). @h NULL: plan for an empty ruleset, offline (nothing is
 * read; such a plan cannot be applied or checked). The plan deletes the
 * tables nfguard of earlier profiles (and an older nfguard's chains
 * "nfguard-syncookie" in raw and "nfguard-rtcache" in mangle), never a
 * foreign table. A dump that a concurrent change interrupted is read again.
 * Errors: those of nfg_profile_check() (EINVAL, ERANGE;
 * nothing is read then), ENOMEM, or the errno of reading the ruleset with
 * the message "reading the nftables ruleset: ..." (EPERM: CAP_NET_ADMIN
 * is needed in the network namespace).
 */
NFG_API int nfg_protect_build(struct nfg_protect *h, const struct nfg_profile *p,
			      struct nfg_protect_plan **plan, struct nfg_err *e);
/*
 * The profile installed now, read back from the kernel, as a plan of "add"
 * operations (none when nothing is installed). Errors: -errno, the message
 * "reading the nftables ruleset: ..." or "FAMILY TABLE: ...".
 */
NFG_API int nfg_protect_read(struct nfg_protect *h, struct nfg_protect_plan **plan,
			     struct nfg_err *e);
NFG_API void nfg_protect_plan_free(struct nfg_protect_plan *plan);

/* The operations, in batch order; NULL past the end. */
NFG_API size_t nfg_protect_plan_count(const struct nfg_protect_plan *plan);
NFG_API const char *nfg_protect_plan_op(const struct nfg_protect_plan *plan, size_t i);
/*
 * NFG_PROFILE_IP/IP6 bits of the families whose table "nfguard" is not one
 * nfguard created (found by the read): the plan leaves those alone, and
 * nfg_protect_apply() refuses (EEXIST) a plan that installs into one.
 */
NFG_API unsigned int nfg_protect_plan_foreign(const struct nfg_protect_plan *plan);

/*
 * Apply a plan in one atomic nf_tables batch. It carries the generation id
 * of the read (a change in between makes nf_tables refuse it: the ruleset
 * is read again and the batch sent again with the new generation, rebuilt
 * only if the tables of ours changed, up to 20 times, then ERESTART), asks for no ACK but errors (answers cannot overflow the
 * receive buffer; if some are lost anyway that is ENOBUFS, an error), and
 * success needs no error and a new generation (else EPROTO, "the ruleset's
 * generation did not change"). A plan with nothing to do sends nothing.
 * Errors: -errno, e's message the kernel's extack message (kernel_msg) or
 * empty; nfg_protect_plan_refused() names the operation refused. Nothing
 * is changed on error. After a retry the plan's operations are the ones
 * sent.
 */
NFG_API int nfg_protect_apply(struct nfg_protect *h, struct nfg_protect_plan *plan,
			      struct nfg_err *e);
/*
 * The operation nf_tables refused in the last nfg_protect_apply() (one of
 * the plan's lines, or "(batch begin)" when it refused the batch as a
 * whole: then EPERM means no CAP_NET_ADMIN), NULL when it named none.
 */
NFG_API const char *nfg_protect_plan_refused(const struct nfg_protect_plan *plan);

/* A difference found by nfg_protect_check(); return 0 to go on. */
enum nfg_protect_diff {
	NFG_PROTECT_MISSING,	/* planned, not installed */
	NFG_PROTECT_UNEXPECTED,	/* installed, not planned */
	NFG_PROTECT_REORDERED,	/* the same lines, this one the first out of order */
};
typedef int (*nfg_protect_diff_cb)(enum nfg_protect_diff kind, const char *op,
				   void *data);
/*
 * Compare the profile a plan installs (its "add" operations) with what is
 * installed (nfg_protect_read()), line for line in order: every missing
 * line, then every unexpected one, then (when neither) the first one out
 * of order, each to @cb (may be NULL). Returns the number of differences
 * (0: the live ruleset holds exactly the profile), or -errno.
 */
NFG_API int nfg_protect_check(struct nfg_protect *h, const struct nfg_protect_plan *plan,
			      nfg_protect_diff_cb cb, void *data, struct nfg_err *e);

enum nfg_protect_fmt {
	/*
	 * The `nfguard protect` command that gives the plan's profile, as read
	 * back from its "add" operations (so it says what the rules do),
	 * one line, preceded by a "# warning: ..." line when some operation
	 * is not one nfguard writes; "" when the plan installs no profile.
	 */
	NFG_PROTECT_FMT_COMMAND,
	/* A shell script: that command, then "# OPERATION" per operation. */
	NFG_PROTECT_FMT_SCRIPT,
	/*
	 * One JSON object and a newline: "installed", "families", "exact"
	 * (false when some operation is not one nfguard writes), "syncookie"
	 * (null or an object with every option), "kconnlimit" (array),
	 * "blocklist" (set names), "rtcache", "operations" (the lines).
	 */
	NFG_PROTECT_FMT_JSON,
};
/*
 * Render @plan into *out (NUL-terminated, release with free()). Returns its
 * length, or -EINVAL (bad format), -ENOMEM.
 */
NFG_API int nfg_protect_render(const struct nfg_protect_plan *plan,
			       enum nfg_protect_fmt fmt, char **out,
			       struct nfg_err *e);

#ifdef __cplusplus
}
#endif

#endif /* LIBNFGUARD_H */
