/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard: client of the RTCACHE control plane (genetlink family
 * "nfg_rtcache", see nfguard_genl.h): counters, the cached routes and
 * flush, for the caller's netns.
 */
#ifndef NFG_RTCACHE_H
#define NFG_RTCACHE_H

#include <stdint.h>

#include "nfg_genl.h"

struct nfg_rtc_stats {
	uint32_t entries;
	uint32_t max_entries;
	uint64_t hit, miss, learn, invalid, evict;
};

struct nfg_rtc_route {
	uint8_t family;		/* NFPROTO_IPV4 or NFPROTO_IPV6 */
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
struct nfg_rtc *nfg_rtc_open(struct nfg_err *e);
void nfg_rtc_close(struct nfg_rtc *h);

int nfg_rtc_stats(struct nfg_rtc *h, struct nfg_rtc_stats *s, struct nfg_err *e);
int nfg_rtc_list(struct nfg_rtc *h, nfg_rtc_cb cb, void *data, struct nfg_err *e);
/* @family 0 = all; *dropped = entries dropped. */
int nfg_rtc_flush(struct nfg_rtc *h, uint8_t family, uint32_t *dropped,
		  struct nfg_err *e);

#endif /* NFG_RTCACHE_H */
