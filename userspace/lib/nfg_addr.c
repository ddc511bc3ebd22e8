// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: address / CIDR / range parsing and canonical formatting.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfg_addr.h"

void nfg_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

unsigned int nfg_addr_len(uint8_t family)
{
	switch (family) {
	case NFPROTO_IPV4:
		return 4;
	case NFPROTO_IPV6:
		return 16;
	default:
		return 0;
	}
}

const char *nfg_family_name(uint8_t family)
{
	switch (family) {
	case NFPROTO_IPV4:
		return "ipv4";
	case NFPROTO_IPV6:
		return "ipv6";
	default:
		return "unknown";
	}
}

uint8_t nfg_family_parse(const char *s)
{
	/* ipv4/ipv6 are canonical (save prints them); inet/inet6 as in ipset */
	if (!strcmp(s, "ipv4") || !strcmp(s, "inet"))
		return NFPROTO_IPV4;
	if (!strcmp(s, "ipv6") || !strcmp(s, "inet6"))
		return NFPROTO_IPV6;
	return 0;
}

static const char *fam_upper(uint8_t family)
{
	return family == NFPROTO_IPV4 ? "IPv4" : "IPv6";
}

int nfg_addr_cmp(const uint8_t *a, const uint8_t *b, unsigned int len)
{
	return memcmp(a, b, len);
}

/*
 * Parse one bare address. @what is the whole element, for messages.
 * Returns 0 or -1 (err set).
 */
static int parse_addr(const char *s, const char *what, uint8_t want,
		      uint8_t out[16], uint8_t *family, char *err,
		      size_t errlen)
{
	uint8_t fam;

	memset(out, 0, 16);
	if (*s == '\0') {
		nfg_seterr(err, errlen, "missing address in \"%s\"", what);
		return -1;
	}
	if (strchr(s, ':')) {
		if (inet_pton(AF_INET6, s, out) != 1) {
			nfg_seterr(err, errlen, "invalid IPv6 address \"%s\"", s);
			return -1;
		}
		fam = NFPROTO_IPV6;
	} else if (inet_pton(AF_INET, s, out) == 1) {
		fam = NFPROTO_IPV4;
	} else {
		const char *p;
		bool alpha = false;

		for (p = s; *p; p++)
			if (isalpha((unsigned char)*p))
				alpha = true;
		if (alpha && !strchr(s, '.'))
			nfg_seterr(err, errlen,
			       "invalid address \"%s\" (host names are not accepted)",
			       s);
		else
			nfg_seterr(err, errlen, "invalid IPv4 address \"%s\"", s);
		return -1;
	}
	if (want && fam != want) {
		nfg_seterr(err, errlen, "\"%s\" is an %s address, expected %s",
		       what, fam_upper(fam), fam_upper(want));
		return -1;
	}
	*family = fam;
	return 0;
}

/* Set bits [plen, len*8) of a to 0 (ones == false) or 1 (ones == true). */
static void fill_host(uint8_t *a, unsigned int len, unsigned int plen,
		      bool ones)
{
	unsigned int i;

	for (i = 0; i < len; i++) {
		unsigned int lo = i * 8;
		uint8_t hostmask;

		if (plen >= lo + 8)
			continue;
		hostmask = plen <= lo ? 0xff : (uint8_t)(0xff >> (plen - lo));
		if (ones)
			a[i] |= hostmask;
		else
			a[i] &= (uint8_t)~hostmask;
	}
}

int nfg_range_parse(const char *s, uint8_t family, struct nfg_range *r,
		    char *err, size_t errlen)
{
	char buf[NFG_ELEM_MAXLEN + 1];
	uint8_t fam1, fam2;
	unsigned int alen;
	char *slash, *dash;
	size_t n;

	if (family && !nfg_addr_len(family)) {
		nfg_seterr(err, errlen, "bad family %u", family);
		return -1;
	}
	n = strlen(s);
	if (n == 0) {
		nfg_seterr(err, errlen, "empty element");
		return -1;
	}
	if (n > NFG_ELEM_MAXLEN) {
		nfg_seterr(err, errlen, "element too long (%zu characters, at most %d)",
		       n, NFG_ELEM_MAXLEN);
		return -1;
	}
	memcpy(buf, s, n + 1);
	memset(r, 0, sizeof(*r));

	slash = strchr(buf, '/');
	dash = strchr(buf, '-');
	if (slash && dash) {
		nfg_seterr(err, errlen,
		       "\"%s\" mixes a prefix length and a range (use either a/len or a-b)",
		       s);
		return -1;
	}

	if (dash) {
		*dash = '\0';
		if (buf[0] == '\0') {
			nfg_seterr(err, errlen, "missing range start in \"%s\"", s);
			return -1;
		}
		if (dash[1] == '\0') {
			nfg_seterr(err, errlen, "missing range end in \"%s\"", s);
			return -1;
		}
		if (strchr(dash + 1, '-')) {
			nfg_seterr(err, errlen, "invalid range \"%s\"", s);
			return -1;
		}
		if (parse_addr(buf, s, family, r->start, &fam1, err, errlen) ||
		    parse_addr(dash + 1, s, family, r->end, &fam2, err, errlen))
			return -1;
		if (fam1 != fam2) {
			nfg_seterr(err, errlen, "range \"%s\" mixes IPv4 and IPv6", s);
			return -1;
		}
		r->family = fam1;
		if (memcmp(r->start, r->end, nfg_addr_len(fam1)) > 0) {
			nfg_seterr(err, errlen, "range \"%s\" has start > end", s);
			return -1;
		}
		return 0;
	}

	if (slash) {
		const char *p = slash + 1;
		unsigned int plen = 0, maxlen;

		*slash = '\0';
		if (parse_addr(buf, s, family, r->start, &fam1, err, errlen))
			return -1;
		alen = nfg_addr_len(fam1);
		maxlen = alen * 8;
		if (*p == '\0' || strlen(p) > 3) {
			nfg_seterr(err, errlen, "invalid prefix length in \"%s\"", s);
			return -1;
		}
		for (; *p; p++) {
			if (!isdigit((unsigned char)*p)) {
				nfg_seterr(err, errlen,
				       "invalid prefix length in \"%s\"", s);
				return -1;
			}
			plen = plen * 10 + (unsigned int)(*p - '0');
		}
		if (plen > maxlen) {
			nfg_seterr(err, errlen,
			       "prefix length %u out of range in \"%s\" (0-%u for %s)",
			       plen, s, maxlen, fam_upper(fam1));
			return -1;
		}
		r->family = fam1;
		memcpy(r->end, r->start, alen);
		fill_host(r->end, alen, plen, true);
		if (memcmp(r->start, r->end, alen)) {
			uint8_t net[16];
			char nbuf[INET6_ADDRSTRLEN];

			memcpy(net, r->start, 16);
			fill_host(net, alen, plen, false);
			if (memcmp(net, r->start, alen)) {
				inet_ntop(fam1 == NFPROTO_IPV4 ? AF_INET : AF_INET6,
					  net, nbuf, sizeof(nbuf));
				nfg_seterr(err, errlen,
				       "\"%s\" has host bits set (the network is %s/%u)",
				       s, nbuf, plen);
				return -1;
			}
		}
		return 0;
	}

	if (parse_addr(buf, s, family, r->start, &fam1, err, errlen))
		return -1;
	r->family = fam1;
	memcpy(r->end, r->start, sizeof(r->end));
	return 0;
}

int nfg_range_prefixlen(const struct nfg_range *r)
{
	unsigned int alen = nfg_addr_len(r->family), i, plen = 0;
	uint8_t s[16], e[16];

	if (!alen)
		return -1;
	/* common leading bits */
	for (i = 0; i < alen; i++) {
		uint8_t x = r->start[i] ^ r->end[i];

		if (!x) {
			plen += 8;
			continue;
		}
		while (!(x & 0x80)) {
			x <<= 1;
			plen++;
		}
		break;
	}
	memcpy(s, r->start, 16);
	memcpy(e, r->end, 16);
	fill_host(s, alen, plen, false);
	fill_host(e, alen, plen, true);
	if (memcmp(s, r->start, alen) || memcmp(e, r->end, alen))
		return -1;
	return (int)plen;
}

int nfg_range_format(const struct nfg_range *r, char *buf, size_t len)
{
	unsigned int alen = nfg_addr_len(r->family);
	int af = r->family == NFPROTO_IPV4 ? AF_INET : AF_INET6;
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	int plen;

	if (!alen || memcmp(r->start, r->end, alen) > 0)
		return -1;
	if (!inet_ntop(af, r->start, a, sizeof(a)))
		return -1;
	if (!memcmp(r->start, r->end, alen))
		return snprintf(buf, len, "%s", a);
	plen = nfg_range_prefixlen(r);
	if (plen >= 0)
		return snprintf(buf, len, "%s/%d", a, plen);
	if (!inet_ntop(af, r->end, b, sizeof(b)))
		return -1;
	return snprintf(buf, len, "%s-%s", a, b);
}

void nfg_range_widen(struct nfg_range *r, unsigned int plen)
{
	unsigned int alen = nfg_addr_len(r->family);

	if (!alen || plen >= alen * 8)
		return;
	fill_host(r->start, alen, plen, false);
	fill_host(r->end, alen, plen, true);
}

static int range_cmp(const void *a, const void *b)
{
	const struct nfg_range *x = a, *y = b;
	int c = memcmp(x->start, y->start, 16);

	return c ? c : memcmp(x->end, y->end, 16);
}

/* a + 1 == b ?  (no wrap: a all-ones never precedes anything) */
static bool adjacent(const uint8_t *a, const uint8_t *b, unsigned int len)
{
	uint8_t t[16];
	int i;

	memcpy(t, a, len);
	for (i = (int)len - 1; i >= 0; i--) {
		if (++t[i] != 0)
			break;
		if (i == 0)
			return false;	/* a was all ones */
	}
	return !memcmp(t, b, len);
}

size_t nfg_ranges_normalize(struct nfg_range *r, size_t n)
{
	unsigned int alen;
	size_t i, out = 0;

	if (n == 0)
		return 0;
	alen = nfg_addr_len(r[0].family);
	qsort(r, n, sizeof(*r), range_cmp);
	for (i = 1; i < n; i++) {
		struct nfg_range *cur = &r[out];

		if (memcmp(r[i].start, cur->end, alen) <= 0 ||
		    adjacent(cur->end, r[i].start, alen)) {
			if (memcmp(r[i].end, cur->end, alen) > 0)
				memcpy(cur->end, r[i].end, 16);
			continue;
		}
		r[++out] = r[i];
	}
	return out + 1;
}
