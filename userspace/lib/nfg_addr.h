/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard (internal): address helpers beyond the public ones declared in
 * libnfguard.h (struct nfg_range, nfg_range_parse/format, ...). No netlink
 * here: pure functions, unit-tested in tests/unit-user.
 */
#ifndef NFG_ADDR_H
#define NFG_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netfilter.h>	/* NFPROTO_IPV4, NFPROTO_IPV6 */

#include "libnfguard.h"

_Static_assert(NFG_FAMILY_IPV4 == NFPROTO_IPV4, "NFG_FAMILY_IPV4 is NFPROTO_IPV4");
_Static_assert(NFG_FAMILY_IPV6 == NFPROTO_IPV6, "NFG_FAMILY_IPV6 is NFPROTO_IPV6");

/* Prefix length if the range is exactly one prefix, else -1. */
int nfg_range_prefixlen(const struct nfg_range *r);

/* Widen the range to whole /plen blocks (ipset hash:ip "netmask"). */
void nfg_range_widen(struct nfg_range *r, unsigned int plen);

/* memcmp-style comparison of two addresses of the given length. */
int nfg_addr_cmp(const uint8_t *a, const uint8_t *b, unsigned int len);

/* printf into err[errlen] (nothing when err is NULL): the error reporting
 * convention of every libnfguard parser. */
void nfg_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* NFG_ADDR_H */
