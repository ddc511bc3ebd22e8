/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard: IPv4/IPv6 address, CIDR and range parsing and canonical
 * formatting. No netlink here: pure functions, unit-tested in
 * tests/unit-user.
 */
#ifndef NFG_ADDR_H
#define NFG_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netfilter.h>	/* NFPROTO_IPV4, NFPROTO_IPV6 */

/*
 * An inclusive range of addresses of one family, in network byte order
 * (big endian, so memcmp() orders addresses). IPv4 uses the first 4 bytes;
 * the other 12 are zero.
 */
struct nfg_range {
	uint8_t family;		/* NFPROTO_IPV4 or NFPROTO_IPV6 */
	uint8_t start[16];
	uint8_t end[16];	/* inclusive, start <= end */
};

/* Enough for "a-b" with two full-length IPv6 addresses, plus NUL. */
#define NFG_RANGE_STRLEN	96
/* Longest element text nfg_range_parse() accepts. */
#define NFG_ELEM_MAXLEN		(NFG_RANGE_STRLEN - 1)

/* 4 for NFPROTO_IPV4, 16 for NFPROTO_IPV6, 0 otherwise. */
unsigned int nfg_addr_len(uint8_t family);
/* "ipv4", "ipv6" or "unknown". */
const char *nfg_family_name(uint8_t family);
/* "ipv4"/"ipv6" -> NFPROTO_IPV4/NFPROTO_IPV6; anything else -> 0. */
uint8_t nfg_family_parse(const char *s);

/*
 * Parse one element: a single address ("10.0.0.1", "2001:db8::1"), a
 * CIDR ("10.0.0.0/8", "::/0") or a range "a-b" of two addresses of the
 * same family (start <= end). No host names, no whitespace. A CIDR must
 * not have host bits set ("10.0.0.1/8" is refused and the message names
 * the network that was probably meant).
 *
 * @family: NFPROTO_IPV4 or NFPROTO_IPV6 to require that family, 0 to
 *          accept either (r->family tells which).
 * Returns 0, or -1 with a one-line reason (no trailing newline) in err.
 */
int nfg_range_parse(const char *s, uint8_t family, struct nfg_range *r,
		    char *err, size_t errlen);

/*
 * Canonical text: a single address bare, an exact prefix as CIDR
 * (including "0.0.0.0/0", "::/0"), anything else as "start-end".
 * Returns what snprintf() would (length without NUL), -1 on a bad range.
 * NFG_RANGE_STRLEN bytes are always enough.
 */
int nfg_range_format(const struct nfg_range *r, char *buf, size_t len);

/* Prefix length if the range is exactly one prefix, else -1. */
int nfg_range_prefixlen(const struct nfg_range *r);

/* Widen the range to whole /plen blocks (ipset hash:ip "netmask"). */
void nfg_range_widen(struct nfg_range *r, unsigned int plen);

/* memcmp-style comparison of two addresses of the given length. */
int nfg_addr_cmp(const uint8_t *a, const uint8_t *b, unsigned int len);

/*
 * Sort ranges of one family by start and merge overlapping and adjacent
 * ones, in place. Returns the new count. The union of the ranges is
 * unchanged, so sending the result to ADD or DEL has the same effect as
 * sending the input.
 */
size_t nfg_ranges_normalize(struct nfg_range *r, size_t n);

/* printf into err[errlen] (nothing when err is NULL): the error reporting
 * convention of every libnfguard parser. */
void nfg_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* NFG_ADDR_H */
