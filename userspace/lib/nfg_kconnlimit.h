/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard: client of the kconnlimit control plane (genetlink family
 * "nfg_kconnlimit", see nfguard_genl.h): the rule instances of the
 * caller's netns with their counters, and the keys with the most
 * connections per instance.
 */
#ifndef NFG_KCONNLIMIT_H
#define NFG_KCONNLIMIT_H

#include <stdint.h>

#include <linux/netfilter/xt_kconnlimit.h>

#include "nfg_genl.h"

struct nfg_kcl_inst {
	uint32_t id;
	char name[XT_KCONNLIMIT_MAXNAMELEN];	/* "" = no --kconnlimit-name */
	uint8_t family;		/* NFPROTO_IPV4 or NFPROTO_IPV6 */
	uint8_t prefix;
	uint8_t flags;		/* XT_KCONNLIMIT_* */
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
	uint64_t total_conns;	/* all instances, all netns */
	uint64_t max_conns;	/* the global cap */
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
struct nfg_kcl *nfg_kcl_open(struct nfg_err *e);
void nfg_kcl_close(struct nfg_kcl *h);

/* Instances, optionally only those labelled @name (NULL = all). */
int nfg_kcl_list(struct nfg_kcl *h, const char *name, nfg_kcl_cb cb,
		 void *data, struct nfg_err *e);
/* Same, with the @n (1..NFG_KCL_TOP_MAX) keys with most connections. */
int nfg_kcl_top(struct nfg_kcl *h, const char *name, uint32_t n,
		nfg_kcl_cb cb, void *data, struct nfg_err *e);

#endif /* NFG_KCONNLIMIT_H */
