/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard: client of the nfguard_rangeset generic netlink family
 * (include/uapi/linux/netfilter/nfguard_genl.h). Used by the nfguard CLI
 * and by the iptables plugin libxt_rangeset.
 *
 * All functions return 0 or -errno and fill *e (may be NULL) with the
 * errno and a one-line reason: the kernel's extack message when it sent
 * one, else a libnfguard message for the common cases (unknown set, ...).
 *
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
#ifndef NFG_RANGESET_H
#define NFG_RANGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_rangeset.h>

#include "nfg_addr.h"
#include "nfg_genl.h"

/* Largest maxelem the kernel accepts (HACKING.md: 0 or > 16M refused). */
#define NFG_RS_MAXELEM_LIMIT	(16U * 1024 * 1024)
/* Default elements per ADD/DEL request. */
#define NFG_RS_BATCH_DEFAULT	1024U

/* One set as LIST reports it. */
struct nfg_rs_info {
	char name[XT_RANGESET_MAXNAMELEN];
	uint8_t family;		/* NFPROTO_IPV4 / NFPROTO_IPV6 */
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
 * Open a handle. e->code == ENOENT: the nfguard_rangeset family is not
 * registered (xt_rangeset not loaded and not autoloadable).
 */
struct nfg_rs *nfg_rs_open(struct nfg_err *e);
void nfg_rs_close(struct nfg_rs *h);

/*
 * Force splitting into requests of @elems elements (0 = back to one request
 * per call when possible). Clamped to what one message holds.
 */
void nfg_rs_set_batch(struct nfg_rs *h, size_t elems);
size_t nfg_rs_batch_size(const struct nfg_rs *h, uint8_t family);

/*
 * Name check. Kernel limit: 1..XT_RANGESET_MAXNAMELEN-1 bytes. strict
 * (used for names the CLI creates) also requires [A-Za-z0-9_.:+-] and no
 * leading '-', so names survive save/restore and shell scripts unquoted.
 */
int nfg_rs_name_check(const char *name, bool strict, struct nfg_err *e);

int nfg_rs_create(struct nfg_rs *h, const char *name, uint8_t family,
		  uint32_t maxelem /* 0 = kernel default */, struct nfg_err *e);
int nfg_rs_destroy(struct nfg_rs *h, const char *name, struct nfg_err *e);
int nfg_rs_flush(struct nfg_rs *h, const char *name, struct nfg_err *e);
int nfg_rs_swap(struct nfg_rs *h, const char *a, const char *b,
		struct nfg_err *e);
int nfg_rs_rename(struct nfg_rs *h, const char *from, const char *to,
		  struct nfg_err *e);

/* LIST doit: one set's header. -ENOENT if there is no such set. */
int nfg_rs_get(struct nfg_rs *h, const char *name, struct nfg_rs_info *out,
	       struct nfg_err *e);

/* TEST: *in = whole range inside the set. r->family must match the set. */
int nfg_rs_test(struct nfg_rs *h, const char *name,
		const struct nfg_range *r, bool *in, struct nfg_err *e);

/*
 * Batched ADD / DEL. r[] (all of one family) is sorted and merged IN
 * PLACE. b (may be NULL) reports progress, see the top of this file.
 */
int nfg_rs_add(struct nfg_rs *h, const char *name, struct nfg_range *r,
	       size_t n, struct nfg_rs_batch *b, struct nfg_err *e);
int nfg_rs_del(struct nfg_rs *h, const char *name, struct nfg_range *r,
	       size_t n, struct nfg_rs_batch *b, struct nfg_err *e);

/*
 * Callbacks return 0 to go on, anything else to stop (the call then
 * returns that value if negative, -ECANCELED otherwise).
 */
typedef int (*nfg_rs_set_cb)(const struct nfg_rs_info *set, void *data);
typedef int (*nfg_rs_range_cb)(const struct nfg_range *r, void *data);

/* LIST dump of all sets in the caller's netns (headers only). */
int nfg_rs_list(struct nfg_rs *h, nfg_rs_set_cb cb, void *data,
		struct nfg_err *e);

/*
 * LIST dump of one set: its header into *hdr (may be NULL), then every
 * range in ascending order, from one consistent kernel snapshot.
 */
int nfg_rs_dump(struct nfg_rs *h, const char *name, struct nfg_rs_info *hdr,
		nfg_rs_range_cb cb, void *data, struct nfg_err *e);

#endif /* NFG_RANGESET_H */
