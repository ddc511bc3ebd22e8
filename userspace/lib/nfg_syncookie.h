/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard: client of the "nfg_syncookie" generic netlink family (the
 * SYNCOOKIE target's allowlist, counters and cookie secret; see
 * include/uapi/linux/netfilter/nfguard_genl.h). Everything applies to the
 * caller's network namespace.
 */
#ifndef NFG_SYNCOOKIE_H
#define NFG_SYNCOOKIE_H

#include <stdbool.h>
#include <stdint.h>

#include "nfg_genl.h"

struct nfg_sc;

struct nfg_sc_counters {
	uint32_t entries, max_entries;
	uint64_t syn_seen, cookie_sent, ack_valid, ack_invalid;
	uint64_t allowlist_hit, allowlist_add, allowlist_evict, proxied;
	uint64_t malformed, send_fail, sent_inplace, syn_resent;
};

/* An allowlist entry: family NFPROTO_IPV4/IPV6, addr in network order. */
struct nfg_sc_entry {
	uint8_t family;
	uint8_t prefix;
	uint8_t addr[16];
	uint32_t timeout;	/* seconds left (list) / lifetime (add; 0 = default) */
};

struct nfg_sc *nfg_sc_open(struct nfg_err *e);
void nfg_sc_close(struct nfg_sc *h);

int nfg_sc_stats(struct nfg_sc *h, struct nfg_sc_counters *out, struct nfg_err *e);
typedef int (*nfg_sc_entry_cb)(const struct nfg_sc_entry *ent, void *data);
int nfg_sc_list(struct nfg_sc *h, nfg_sc_entry_cb cb, void *data, struct nfg_err *e);
int nfg_sc_add(struct nfg_sc *h, const struct nfg_sc_entry *ent, struct nfg_err *e);
int nfg_sc_del(struct nfg_sc *h, const struct nfg_sc_entry *ent, struct nfg_err *e);
/* *removed: entries flushed (may be NULL). */
int nfg_sc_flush(struct nfg_sc *h, uint32_t *removed, struct nfg_err *e);
int nfg_sc_secret_set(struct nfg_sc *h, const uint8_t key[16], struct nfg_err *e);
int nfg_sc_secret_rotate(struct nfg_sc *h, struct nfg_err *e);

#endif /* NFG_SYNCOOKIE_H */
