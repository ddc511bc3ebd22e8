/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nfguard generic netlink control plane: one family per extension.
 * Shared by the kernel modules, the iptables plugins and libnfguard.
 */
#ifndef _UAPI_NFGUARD_GENL_H
#define _UAPI_NFGUARD_GENL_H

#include <linux/types.h>

/*
 * Family names are "nfg_<extension>": GENL_NAMSIZ is 16 including the NUL,
 * too short for "nfguard_rangeset" (the kernel's genl_ctrl fortify check
 * panics on a 16-character name).
 */

/* ---- rangeset ---------------------------------------------------------- */

#define NFG_RANGESET_GENL_NAME		"nfg_rangeset"
#define NFG_RANGESET_GENL_VERSION	1
#define NFG_RANGESET_DEFAULT_MAXELEM	1048576U
/* Largest timeout in seconds (ipset's): about 24.8 days. 0 = permanent. */
#define NFG_RANGESET_TIMEOUT_MAX	2147483U

/*
 * Commands. Every command except LIST is a doit; LIST is a dump when no
 * NFG_RS_A_NAME is given (one message per set, header only) and a dump of
 * one set's ranges (many messages, each with an NFG_RS_A_ELEMS nest) when
 * NFG_RS_A_NAME is given.
 */
enum nfg_rangeset_cmd {
	NFG_RS_CMD_UNSPEC,
	NFG_RS_CMD_CREATE,	/* NAME, FAMILY, [MAXELEM], [TIMEOUT] */
	NFG_RS_CMD_DESTROY,	/* NAME; -EBUSY when referenced by a rule */
	NFG_RS_CMD_ADD,		/* NAME, ELEMS, [TIMEOUT]: merged; whole batch or nothing */
	NFG_RS_CMD_DEL,		/* NAME, ELEMS: subtracted; whole batch or nothing */
	NFG_RS_CMD_FLUSH,	/* NAME */
	NFG_RS_CMD_TEST,	/* NAME, ELEMS with one ELEM -> reply with RESULT */
	NFG_RS_CMD_SWAP,	/* NAME, NAME2: exchange contents (same family) */
	NFG_RS_CMD_RENAME,	/* NAME, NAME2: new name; -EBUSY when referenced */
	NFG_RS_CMD_LIST,	/* dump, see above; also a doit with NAME -> header */
	__NFG_RS_CMD_MAX,
};
#define NFG_RS_CMD_MAX (__NFG_RS_CMD_MAX - 1)

enum nfg_rangeset_attr {
	NFG_RS_A_UNSPEC,
	NFG_RS_A_NAME,		/* NUL-terminated string, < XT_RANGESET_MAXNAMELEN */
	NFG_RS_A_NAME2,		/* string: the other set (swap) or the new name (rename) */
	NFG_RS_A_FAMILY,	/* u8: NFPROTO_IPV4 or NFPROTO_IPV6 */
	NFG_RS_A_MAXELEM,	/* u32: maximum number of ranges */
	NFG_RS_A_COUNT,		/* u32: current number of ranges (reply) */
	NFG_RS_A_REFS,		/* u32: rules referencing the set (reply) */
	NFG_RS_A_LOOKUPS,	/* u64: packet lookups (reply, per-CPU sum) */
	NFG_RS_A_HITS,		/* u64: lookups that found an address (reply) */
	NFG_RS_A_ELEMS,		/* nest of NFG_RS_A_ELEM */
	NFG_RS_A_ELEM,		/* nest of NFG_RS_E_* */
	NFG_RS_A_PAD,
	NFG_RS_A_MEMSIZE,	/* u64: bytes used by the set (reply) */
	NFG_RS_A_RESULT,	/* u8: TEST reply, 1 = range fully inside the set, 0 = not */
	/*
	 * u32 seconds, 0..NFG_RANGESET_TIMEOUT_MAX (0 = permanent). CREATE:
	 * the set's default timeout (default 0). ADD: the timeout of the
	 * request's elements that carry no NFG_RS_E_TIMEOUT (default: the
	 * set's). LIST reply: the set's default. Kernels before it reject it.
	 */
	NFG_RS_A_TIMEOUT,
	NFG_RS_A_EXPIRIES,	/* u64: ranges removed on expiry (reply) */
	/*
	 * Replies only (LIST). Packet-path updates by -j RANGESET: entries
	 * waiting in the set's hash to be folded into its ranges, adds and
	 * deletes made, and those refused (set full or no memory).
	 */
	NFG_RS_A_DYN_COUNT,	/* u32 */
	NFG_RS_A_PKT_ADDS,	/* u64 */
	NFG_RS_A_PKT_DELS,	/* u64 */
	NFG_RS_A_PKT_REFUSED,	/* u64 */
	__NFG_RS_A_MAX,
};
#define NFG_RS_A_MAX (__NFG_RS_A_MAX - 1)

enum nfg_rangeset_elem_attr {
	NFG_RS_E_UNSPEC,
	NFG_RS_E_START,		/* binary, network byte order, 4 (ipv4) or 16 (ipv6) bytes */
	NFG_RS_E_END,		/* same length as START; inclusive; START <= END */
	/*
	 * u32 seconds. ADD: this element's timeout (0 = permanent), over
	 * NFG_RS_A_TIMEOUT and the set's default. LIST dump: seconds left,
	 * rounded up; absent for a permanent range.
	 */
	NFG_RS_E_TIMEOUT,
	__NFG_RS_E_MAX,
};
#define NFG_RS_E_MAX (__NFG_RS_E_MAX - 1)

/* ---- kconnlimit -------------------------------------------------------- */

#define NFG_KCONNLIMIT_GENL_NAME	"nfg_kconnlimit"
#define NFG_KCONNLIMIT_GENL_VERSION	1
#define NFG_KCL_TOP_DEFAULT		10U	/* keys per instance in TOP */
#define NFG_KCL_TOP_MAX			10000U

/*
 * Both commands are dumps over the rule instances of the caller's netns,
 * optionally only those whose label is NFG_KCL_A_NAME. Every instance is
 * described by one message with the instance attributes (ID .. MAX_CONNS).
 * TOP follows each with messages carrying NFG_KCL_A_ID and an
 * NFG_KCL_A_ENTRIES nest: the NFG_KCL_A_COUNT (default 10) keys with the
 * most connections, by count descending. Taken as a snapshot when the dump
 * starts; no lock is held between messages.
 */
enum nfg_kconnlimit_cmd {
	NFG_KCL_CMD_UNSPEC,
	NFG_KCL_CMD_LIST,	/* dump: [NAME] */
	NFG_KCL_CMD_TOP,	/* dump: [NAME] [COUNT] */
	__NFG_KCL_CMD_MAX,
};
#define NFG_KCL_CMD_MAX (__NFG_KCL_CMD_MAX - 1)

enum nfg_kconnlimit_attr {
	NFG_KCL_A_UNSPEC,
	NFG_KCL_A_ID,		/* u32: instance id, unique while the module is loaded */
	NFG_KCL_A_NAME,		/* string: --kconnlimit-name ("" = none), < XT_KCONNLIMIT_MAXNAMELEN */
	NFG_KCL_A_FAMILY,	/* u8: NFPROTO_IPV4 or NFPROTO_IPV6 */
	NFG_KCL_A_PREFIX,	/* u8: mask length */
	NFG_KCL_A_FLAGS,	/* u8: XT_KCONNLIMIT_* */
	NFG_KCL_A_LIMIT,	/* u32 */
	NFG_KCL_A_KEYS,		/* u32: masked addresses with connections */
	NFG_KCL_A_CONNS,	/* u32: remembered connections */
	NFG_KCL_A_SLOTS,	/* u32: hash slots of the instance's table */
	NFG_KCL_A_LOCKS,	/* u32: keyed locks of the instance's table */
	NFG_KCL_A_MEMSIZE,	/* u64: bytes held by the table */
	NFG_KCL_A_MATCHED,	/* u64: packets matched (per-CPU sum) */
	NFG_KCL_A_OVER_LIMIT,	/* u64: packets whose key was over the limit */
	NFG_KCL_A_INSERTS,	/* u64: connections remembered */
	NFG_KCL_A_GC_EVICTIONS,	/* u64: connections forgotten because they ended */
	NFG_KCL_A_CAP_HITS,	/* u64: packets dropped at the global cap */
	NFG_KCL_A_ALLOC_FAIL,	/* u64: packets dropped on allocation failure */
	NFG_KCL_A_TOTAL_CONNS,	/* u64: remembered connections, all instances */
	NFG_KCL_A_MAX_CONNS,	/* u64: the global cap (module parameter max_conns) */
	NFG_KCL_A_COUNT,	/* u32: TOP request, keys per instance (1..NFG_KCL_TOP_MAX) */
	NFG_KCL_A_ENTRIES,	/* nest of NFG_KCL_A_ENTRY */
	NFG_KCL_A_ENTRY,	/* nest of NFG_KCL_E_* */
	NFG_KCL_A_PAD,
	__NFG_KCL_A_MAX,
};
#define NFG_KCL_A_MAX (__NFG_KCL_A_MAX - 1)

enum nfg_kconnlimit_entry_attr {
	NFG_KCL_E_UNSPEC,
	NFG_KCL_E_ADDR,		/* binary, network byte order, 4 or 16 bytes: the masked key */
	NFG_KCL_E_COUNT,	/* u32: its connections */
	NFG_KCL_E_ZONE,		/* u16: its conntrack zone id (each zone counts apart) */
	__NFG_KCL_E_MAX,
};
#define NFG_KCL_E_MAX (__NFG_KCL_E_MAX - 1)

/* ---- syncookie --------------------------------------------------------- */

#define NFG_SYNCOOKIE_GENL_NAME		"nfg_syncookie"
#define NFG_SYNCOOKIE_GENL_VERSION	1
#define NFG_SC_SECRET_LEN		16	/* SipHash key */

/*
 * Everything applies to the caller's netns. AL_LIST is a dump: one message
 * per live allowlist entry (FAMILY, ADDR, PREFIX, TIMEOUT = seconds left).
 * AL_ADD refreshes an entry that exists. STATS replies with one message
 * carrying every counter (per-CPU sums) and the allowlist's size.
 */
enum nfg_syncookie_cmd {
	NFG_SC_CMD_UNSPEC,
	NFG_SC_CMD_STATS,	/* doit -> reply */
	NFG_SC_CMD_AL_LIST,	/* dump */
	NFG_SC_CMD_AL_ADD,	/* ADDR, [PREFIX], [TIMEOUT] */
	NFG_SC_CMD_AL_DEL,	/* ADDR, [PREFIX]; -ENOENT when absent */
	NFG_SC_CMD_AL_FLUSH,	/* -> reply with COUNT (entries removed) */
	NFG_SC_CMD_SECRET_SET,	/* SECRET: becomes current, no previous */
	NFG_SC_CMD_SECRET_ROTATE, /* new random current; the old one stays previous */
	__NFG_SC_CMD_MAX,
};
#define NFG_SC_CMD_MAX (__NFG_SC_CMD_MAX - 1)

enum nfg_syncookie_attr {
	NFG_SC_A_UNSPEC,
	NFG_SC_A_FAMILY,	/* u8: NFPROTO_IPV4 or NFPROTO_IPV6 (replies) */
	NFG_SC_A_ADDR,		/* binary, network byte order, 4 or 16 bytes */
	NFG_SC_A_PREFIX,	/* u8: 1-32 / 1-128 (default: full length) */
	NFG_SC_A_TIMEOUT,	/* u32: seconds, 1..7 days (default 300) */
	NFG_SC_A_SECRET,	/* binary, NFG_SC_SECRET_LEN bytes */
	NFG_SC_A_COUNT,		/* u32: entries (STATS: on the allowlist) */
	NFG_SC_A_MAX_ENTRIES,	/* u32: the allowlist's bound (STATS) */
	NFG_SC_A_PAD,
	NFG_SC_A_SYN_SEEN,	/* u64 counters (STATS), see /proc/net/stat/nfguard_syncookie */
	NFG_SC_A_COOKIE_SENT,
	NFG_SC_A_ACK_VALID,
	NFG_SC_A_ACK_INVALID,
	NFG_SC_A_ALLOWLIST_HIT,
	NFG_SC_A_ALLOWLIST_ADD,
	NFG_SC_A_ALLOWLIST_EVICT,
	NFG_SC_A_PROXIED,
	NFG_SC_A_MALFORMED,
	NFG_SC_A_SEND_FAIL,
	NFG_SC_A_SENT_INPLACE,	/* u64: of COOKIE_SENT, SYNs answered in place */
	NFG_SC_A_SYN_RESENT,	/* u64: proxy mode, SYNs to the server sent again */
	NFG_SC_A_AFTER_CONNTRACK, /* u64: passed, conntrack ran before the rule */
	__NFG_SC_A_MAX,
};
#define NFG_SC_A_MAX (__NFG_SC_A_MAX - 1)

/* ---- rtcache ----------------------------------------------------------- */

#define NFG_RTCACHE_GENL_NAME		"nfg_rtcache"
#define NFG_RTCACHE_GENL_VERSION	1

/*
 * Everything applies to the caller's netns. STATS replies with one message
 * (COUNT, MAX_ENTRIES and the per-CPU counter sums, as in
 * /proc/net/stat/nfguard_rtcache). LIST is a dump: one message per cached
 * route (FAMILY, DIR, SRC, DST, IIF, OIF, MARK, DSCP, AGE_MS, IDLE_MS);
 * entries added or removed during the dump may or may not be seen. FLUSH
 * drops every cached route ([FAMILY]: only that family) and replies with
 * COUNT (entries dropped).
 */
enum nfg_rtcache_cmd {
	NFG_RTC_CMD_UNSPEC,
	NFG_RTC_CMD_STATS,	/* doit -> reply */
	NFG_RTC_CMD_LIST,	/* dump */
	NFG_RTC_CMD_FLUSH,	/* [FAMILY] -> reply with COUNT */
	__NFG_RTC_CMD_MAX,
};
#define NFG_RTC_CMD_MAX (__NFG_RTC_CMD_MAX - 1)

enum nfg_rtcache_attr {
	NFG_RTC_A_UNSPEC,
	NFG_RTC_A_FAMILY,	/* u8: NFPROTO_IPV4 or NFPROTO_IPV6 */
	NFG_RTC_A_DIR,		/* u8: 0 original, 1 reply (conntrack direction) */
	NFG_RTC_A_SRC,		/* binary, network byte order, 4 or 16 bytes */
	NFG_RTC_A_DST,		/* binary, network byte order, 4 or 16 bytes */
	NFG_RTC_A_IIF,		/* u32: input interface index the route was learnt on */
	NFG_RTC_A_OIF,		/* u32: the route's device index */
	NFG_RTC_A_MARK,		/* u32: skb mark when learnt */
	NFG_RTC_A_DSCP,		/* u8: TOS/traffic class without ECN bits */
	NFG_RTC_A_AGE_MS,	/* u32: since learnt */
	NFG_RTC_A_IDLE_MS,	/* u32: since last used */
	NFG_RTC_A_COUNT,	/* u32: entries (STATS), entries dropped (FLUSH) */
	NFG_RTC_A_MAX_ENTRIES,	/* u32: the table's bound (module parameter) */
	NFG_RTC_A_PAD,
	NFG_RTC_A_HIT,		/* u64 counters (STATS), per-CPU sums */
	NFG_RTC_A_MISS,
	NFG_RTC_A_LEARN,
	NFG_RTC_A_INVALID,
	NFG_RTC_A_EVICT,
	__NFG_RTC_A_MAX,
};
#define NFG_RTC_A_MAX (__NFG_RTC_A_MAX - 1)

#endif /* _UAPI_NFGUARD_GENL_H */
