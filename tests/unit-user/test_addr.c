// SPDX-License-Identifier: GPL-2.0-or-later
/* nfg_addr: parsing, canonical formatting, normalization. */
#define _GNU_SOURCE	/* POSIX/GNU APIs also under -std=c11 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfg_addr.h"
#include "tap.h"

/* parse s (family fam) and format it again: must give want */
static void canon(const char *s, uint8_t fam, const char *want)
{
	char err[256] = "", out[NFG_RANGE_STRLEN];
	struct nfg_range r;
	int ret = nfg_range_parse(s, fam, &r, err, sizeof(err));

	CHECK(ret == 0, "parse \"%s\": %s", s, err);
	if (ret)
		return;
	ret = nfg_range_format(&r, out, sizeof(out));
	CHECK(ret > 0 && ret < NFG_RANGE_STRLEN, "format \"%s\" -> %d", s, ret);
	CHECK_STR(out, want);
}

/* must be refused, with a message containing part */
static void bad(const char *s, uint8_t fam, const char *part)
{
	char err[256] = "";
	struct nfg_range r;
	int ret = nfg_range_parse(s, fam, &r, err, sizeof(err));

	CHECK(ret == -1, "\"%s\" accepted", s);
	CHECK(err[0] != '\0', "\"%s\": empty message", s);
	CHECK(!strchr(err, '\n'), "\"%s\": newline in message", s);
	if (part)
		CHECK_HAS(err, part);
}

static void test_canonical(void)
{
	/* single addresses stay bare */
	canon("10.0.0.1", NFPROTO_IPV4, "10.0.0.1");
	canon("10.0.0.1", 0, "10.0.0.1");
	canon("10.0.0.1/32", NFPROTO_IPV4, "10.0.0.1");
	canon("10.0.0.7-10.0.0.7", NFPROTO_IPV4, "10.0.0.7");
	canon("2001:db8::1", NFPROTO_IPV6, "2001:db8::1");
	canon("2001:DB8:0:0::1", NFPROTO_IPV6, "2001:db8::1");
	canon("2001:db8::1/128", NFPROTO_IPV6, "2001:db8::1");
	canon("::ffff:1.2.3.4", NFPROTO_IPV6, "::ffff:1.2.3.4");
	/* exact prefixes become CIDR */
	canon("10.0.0.0/8", NFPROTO_IPV4, "10.0.0.0/8");
	canon("10.0.0.0-10.0.0.255", NFPROTO_IPV4, "10.0.0.0/24");
	canon("10.0.0.0-10.0.1.255", NFPROTO_IPV4, "10.0.0.0/23");
	canon("10.0.0.0/31", NFPROTO_IPV4, "10.0.0.0/31");
	canon("10.0.0.2-10.0.0.3", NFPROTO_IPV4, "10.0.0.2/31");
	canon("2001:db8::-2001:db8::ffff", NFPROTO_IPV6, "2001:db8::/112");
	canon("2001:db8::/32", NFPROTO_IPV6, "2001:db8::/32");
	canon("2001:db8:8000::/33", NFPROTO_IPV6, "2001:db8:8000::/33");
	/* other ranges stay a-b */
	canon("10.0.0.1-10.0.0.2", NFPROTO_IPV4, "10.0.0.1-10.0.0.2");
	canon("10.0.0.0-10.0.2.255", NFPROTO_IPV4, "10.0.0.0-10.0.2.255");
	canon("10.0.0.1-10.0.0.255", NFPROTO_IPV4, "10.0.0.1-10.0.0.255");
	canon("2001:db8::1-2001:db8::5", NFPROTO_IPV6, "2001:db8::1-2001:db8::5");
	/* full-space edges */
	canon("0.0.0.0/0", NFPROTO_IPV4, "0.0.0.0/0");
	canon("0.0.0.0-255.255.255.255", NFPROTO_IPV4, "0.0.0.0/0");
	canon("0.0.0.0", NFPROTO_IPV4, "0.0.0.0");
	canon("255.255.255.255", NFPROTO_IPV4, "255.255.255.255");
	canon("255.255.255.255/32", NFPROTO_IPV4, "255.255.255.255");
	canon("128.0.0.0/1", NFPROTO_IPV4, "128.0.0.0/1");
	canon("255.255.255.254-255.255.255.255", NFPROTO_IPV4, "255.255.255.254/31");
	canon("0.0.0.1-255.255.255.255", NFPROTO_IPV4, "0.0.0.1-255.255.255.255");
	canon("0.0.0.0-255.255.255.254", NFPROTO_IPV4, "0.0.0.0-255.255.255.254");
	canon("::/0", NFPROTO_IPV6, "::/0");
	canon("::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NFPROTO_IPV6, "::/0");
	canon("::", NFPROTO_IPV6, "::");
	canon("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NFPROTO_IPV6,
	      "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	canon("8000::/1", NFPROTO_IPV6, "8000::/1");
	canon("::1-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NFPROTO_IPV6,
	      "::1-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
	/* family auto-detection */
	{
		struct nfg_range r;

		CHECK(nfg_range_parse("::1", 0, &r, NULL, 0) == 0 &&
		      r.family == NFPROTO_IPV6, "auto v6");
		CHECK(nfg_range_parse("1.2.3.4/30", 0, &r, NULL, 0) == 0 &&
		      r.family == NFPROTO_IPV4, "auto v4");
	}
}

static void test_errors(void)
{
	char long_elem[200];

	bad("", NFPROTO_IPV4, "empty");
	bad("foo", NFPROTO_IPV4, "host names");
	bad("example.com", NFPROTO_IPV4, "invalid");
	bad("10.0.0", NFPROTO_IPV4, "invalid IPv4 address");
	bad("10.0.0.256", NFPROTO_IPV4, "invalid IPv4 address \"10.0.0.256\"");
	bad("010.0.0.1", NFPROTO_IPV4, "invalid");
	bad("1.2.3.4 ", NFPROTO_IPV4, "invalid");
	bad(" 1.2.3.4", NFPROTO_IPV4, "invalid");
	bad("2001:db8::g", NFPROTO_IPV6, "invalid IPv6 address");
	bad("fe80::1%eth0", NFPROTO_IPV6, "invalid IPv6");
	bad("1:2:3:4:5:6:7:8:9", NFPROTO_IPV6, "invalid IPv6");
	/* wrong family */
	bad("::1", NFPROTO_IPV4, "is an IPv6 address, expected IPv4");
	bad("10.0.0.1", NFPROTO_IPV6, "is an IPv4 address, expected IPv6");
	bad("10.0.0.0/8", NFPROTO_IPV6, "expected IPv6");
	bad("2001:db8::/32", NFPROTO_IPV4, "expected IPv4");
	bad("10.0.0.1-10.0.0.5", NFPROTO_IPV6, "expected IPv6");
	bad("10.0.0.1-::1", 0, "mixes IPv4 and IPv6");
	bad("::1-10.0.0.1", 0, "mixes IPv4 and IPv6");
	/* prefixes */
	bad("10.0.0.0/33", NFPROTO_IPV4, "out of range");
	bad("::/129", NFPROTO_IPV6, "out of range");
	bad("10.0.0.0/", NFPROTO_IPV4, "prefix length");
	bad("10.0.0.0/-1", NFPROTO_IPV4, "prefix length");
	bad("10.0.0.0/+8", NFPROTO_IPV4, "prefix length");
	bad("10.0.0.0/8x", NFPROTO_IPV4, "prefix length");
	bad("10.0.0.0/1000", NFPROTO_IPV4, "prefix length");
	bad("10.0.0.0/8/8", NFPROTO_IPV4, "prefix length");
	bad("/8", NFPROTO_IPV4, "missing address");
	bad("10.0.0.1/24", NFPROTO_IPV4, "host bits set (the network is 10.0.0.0/24)");
	bad("2001:db8::1/64", NFPROTO_IPV6, "the network is 2001:db8::/64");
	bad("0.0.0.1/0", NFPROTO_IPV4, "the network is 0.0.0.0/0");
	/* ranges */
	bad("10.0.0.9-10.0.0.1", NFPROTO_IPV4, "start > end");
	bad("2001:db8::9-2001:db8::1", NFPROTO_IPV6, "start > end");
	bad("255.255.255.255-0.0.0.0", NFPROTO_IPV4, "start > end");
	bad("10.0.0.1-", NFPROTO_IPV4, "missing range end");
	bad("-10.0.0.1", NFPROTO_IPV4, "missing range start");
	bad("-", NFPROTO_IPV4, "missing range");
	bad("1.1.1.1-2.2.2.2-3.3.3.3", NFPROTO_IPV4, "invalid range");
	bad("10.0.0.0/8-10.1.0.0", NFPROTO_IPV4, "mixes a prefix length and a range");
	bad("10.0.0.1-10.0.0.x", NFPROTO_IPV4, "invalid");
	memset(long_elem, '1', sizeof(long_elem) - 1);
	long_elem[sizeof(long_elem) - 1] = '\0';
	bad(long_elem, NFPROTO_IPV4, "too long");
	{
		/* errlen 0 and NULL err must be safe */
		struct nfg_range r;

		CHECK(nfg_range_parse("x", 4, &r, NULL, 0) == -1, "bad family");
		CHECK(nfg_range_parse("junk", NFPROTO_IPV4, &r, NULL, 0) == -1,
		      "NULL err");
		CHECK(nfg_range_parse("junk", NFPROTO_IPV4, &r, long_elem, 0) == -1,
		      "errlen 0");
	}
}

static uint32_t rnd32(void)
{
	return ((uint32_t)random() << 16) ^ (uint32_t)random();
}

static void v4(struct nfg_range *r, uint32_t a, uint32_t b)
{
	memset(r, 0, sizeof(*r));
	r->family = NFPROTO_IPV4;
	a = htonl(a);
	b = htonl(b);
	memcpy(r->start, &a, 4);
	memcpy(r->end, &b, 4);
}

/* format -> parse gives the same range back; prefixes print as CIDR */
static void test_roundtrip(void)
{
	unsigned int i, bad_rt = 0, bad_cidr = 0, bad_plen = 0;

	for (i = 0; i < 20000; i++) {
		char out[NFG_RANGE_STRLEN], err[256];
		struct nfg_range r, back;
		unsigned int alen, j;

		memset(&r, 0, sizeof(r));
		r.family = (i & 1) ? NFPROTO_IPV6 : NFPROTO_IPV4;
		alen = nfg_addr_len(r.family);
		for (j = 0; j < alen; j++) {
			r.start[j] = (uint8_t)random();
			r.end[j] = (uint8_t)random();
		}
		if (i % 3 == 0) {
			/* a random prefix */
			unsigned int plen = (unsigned int)random() % (alen * 8 + 1);

			memcpy(r.end, r.start, 16);
			nfg_range_widen(&r, plen);
			if (nfg_range_prefixlen(&r) != (int)plen)
				bad_plen++;
			nfg_range_format(&r, out, sizeof(out));
			if (plen < alen * 8 && !strchr(out, '/'))
				bad_cidr++;
		} else if (memcmp(r.start, r.end, alen) > 0) {
			uint8_t t[16];

			memcpy(t, r.start, 16);
			memcpy(r.start, r.end, 16);
			memcpy(r.end, t, 16);
		}
		if (nfg_range_format(&r, out, sizeof(out)) <= 0 ||
		    nfg_range_parse(out, r.family, &back, err, sizeof(err)) ||
		    memcmp(&r, &back, sizeof(r)))
			bad_rt++;
	}
	CHECK(bad_rt == 0, "%u format/parse round trips differ", bad_rt);
	CHECK(bad_cidr == 0, "%u prefixes not printed as CIDR", bad_cidr);
	CHECK(bad_plen == 0, "%u wrong prefix lengths", bad_plen);
	{
		struct nfg_range r;
		char out[8];

		v4(&r, 5, 4);
		CHECK(nfg_range_format(&r, out, sizeof(out)) == -1,
		      "start > end formatted");
		v4(&r, 0x0a000001, 0x0a000009);
		/* truncation reported like snprintf */
		CHECK(nfg_range_format(&r, out, sizeof(out)) ==
		      (int)strlen("10.0.0.1-10.0.0.9"), "snprintf length");
		r.family = 0;
		CHECK(nfg_range_prefixlen(&r) == -1, "bad family plen");
	}
}

static void test_widen(void)
{
	struct nfg_range r;
	char out[NFG_RANGE_STRLEN];

	nfg_range_parse("10.1.2.3", NFPROTO_IPV4, &r, NULL, 0);
	nfg_range_widen(&r, 24);
	nfg_range_format(&r, out, sizeof(out));
	CHECK_STR(out, "10.1.2.0/24");
	nfg_range_parse("10.1.2.3-10.1.5.1", NFPROTO_IPV4, &r, NULL, 0);
	nfg_range_widen(&r, 24);
	nfg_range_format(&r, out, sizeof(out));
	CHECK_STR(out, "10.1.2.0-10.1.5.255");
	nfg_range_parse("2001:db8::1", NFPROTO_IPV6, &r, NULL, 0);
	nfg_range_widen(&r, 64);
	nfg_range_format(&r, out, sizeof(out));
	CHECK_STR(out, "2001:db8::/64");
	nfg_range_widen(&r, 0);
	nfg_range_format(&r, out, sizeof(out));
	CHECK_STR(out, "::/0");
}

/*
 * normalize() against a bitmap model: random ranges in a 4096-address
 * universe at the top of the IPv4 space (so the all-ones edge is hit).
 */
#define U	4096u
#define UBASE	(0xffffffffu - U + 1)

static void test_normalize(void)
{
	static uint8_t model[U], got[U];
	struct nfg_range r[64];
	unsigned int iter, bad_union = 0, bad_order = 0;

	for (iter = 0; iter < 3000; iter++) {
		size_t n = 1 + (size_t)random() % 64, m, i;
		uint32_t prev_end = 0;

		memset(model, 0, sizeof(model));
		memset(got, 0, sizeof(got));
		for (i = 0; i < n; i++) {
			uint32_t a = rnd32() % U, len = rnd32() % (iter % 2 ? 64 : 600);
			uint32_t b = a + len >= U ? U - 1 : a + len, x;

			v4(&r[i], UBASE + a, UBASE + b);
			for (x = a; x <= b; x++)
				model[x] = 1;
		}
		m = nfg_ranges_normalize(r, n);
		for (i = 0; i < m; i++) {
			uint32_t a, b, x;

			memcpy(&a, r[i].start, 4);
			memcpy(&b, r[i].end, 4);
			a = ntohl(a) - UBASE;
			b = ntohl(b) - UBASE;
			if (a > b || (i && a <= prev_end + 1))
				bad_order++;	/* overlap or adjacency left */
			prev_end = b;
			for (x = a; x <= b; x++)
				got[x] = 1;
		}
		if (memcmp(model, got, U))
			bad_union++;
	}
	CHECK(bad_union == 0, "%u normalizations changed the union", bad_union);
	CHECK(bad_order == 0, "%u results not sorted/disjoint/non-adjacent",
	      bad_order);

	/* edges: adjacency across the all-ones end and from zero */
	v4(&r[0], 0xfffffff0, 0xffffffff);
	v4(&r[1], 0xffffffff, 0xffffffff);
	v4(&r[2], 0, 0);
	v4(&r[3], 1, 0xffffffef);
	CHECK(nfg_ranges_normalize(r, 4) == 1, "full v4 space merges to one");
	{
		char out[NFG_RANGE_STRLEN];

		nfg_range_format(&r[0], out, sizeof(out));
		CHECK_STR(out, "0.0.0.0/0");
	}
	CHECK(nfg_ranges_normalize(r, 0) == 0, "empty");
	{
		struct nfg_range s[3];
		char out[NFG_RANGE_STRLEN];

		nfg_range_parse("2001:db8::/33", NFPROTO_IPV6, &s[0], NULL, 0);
		nfg_range_parse("2001:db8:8000::/33", NFPROTO_IPV6, &s[1], NULL, 0);
		nfg_range_parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
				NFPROTO_IPV6, &s[2], NULL, 0);
		CHECK(nfg_ranges_normalize(s, 3) == 2, "v6 adjacent halves");
		nfg_range_format(&s[0], out, sizeof(out));
		CHECK_STR(out, "2001:db8::/32");
	}
}

static void test_family_names(void)
{
	CHECK(nfg_family_parse("ipv4") == NFPROTO_IPV4, "ipv4");
	CHECK(nfg_family_parse("ipv6") == NFPROTO_IPV6, "ipv6");
	CHECK(nfg_family_parse("inet") == NFPROTO_IPV4, "inet (ipset's word)");
	CHECK(nfg_family_parse("inet6") == NFPROTO_IPV6, "inet6 (ipset's word)");
	CHECK(nfg_family_parse("inet4") == 0, "inet4");
	CHECK(nfg_family_parse("IPV4") == 0, "case");
	CHECK_STR(nfg_family_name(NFPROTO_IPV4), "ipv4");
	CHECK_STR(nfg_family_name(NFPROTO_IPV6), "ipv6");
	CHECK_STR(nfg_family_name(7), "unknown");
	CHECK(nfg_addr_len(NFPROTO_IPV4) == 4 && nfg_addr_len(NFPROTO_IPV6) == 16 &&
	      nfg_addr_len(0) == 0, "lengths");
}

void test_addr(void)
{
	srandom(12345);
	test_family_names();
	test_canonical();
	test_errors();
	test_roundtrip();
	test_widen();
	test_normalize();
}
