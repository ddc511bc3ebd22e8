// SPDX-License-Identifier: GPL-2.0-or-later
/* nfg_rsfile: element lists, save lines, restore plans (native + ipset). */
#define _GNU_SOURCE	/* POSIX/GNU APIs also under -std=c11 */
#include <stdlib.h>
#include <string.h>

#include "nfg_rsfile.h"
#include "tap.h"

static void test_tokenize(void)
{
	char *tok[8];
	char l1[] = "  add  blk\t10.0.0.1  ";
	char l2[] = "add x 1.2.3.4 comment \"two words\" timeout 5";
	char l3[] = "# only a comment";
	char l4[] = "a \"unterminated";
	char l5[] = "1 2 3 4 5 6 7 8 9";
	char l6[] = "add blk 1.2.3.4 # trailing";
	char l7[] = "\"a\"b";
	char l8[] = "";

	CHECK(nfg_tokenize(l1, tok, 8) == 3, "3 tokens");
	CHECK_STR(tok[2], "10.0.0.1");
	CHECK(nfg_tokenize(l2, tok, 8) == 7, "quoted");
	CHECK_STR(tok[4], "two words");
	CHECK_STR(tok[6], "5");
	CHECK(nfg_tokenize(l3, tok, 8) == 0, "comment");
	CHECK(nfg_tokenize(l4, tok, 8) == -2, "unbalanced");
	CHECK(nfg_tokenize(l5, tok, 8) == -1, "too many");
	CHECK(nfg_tokenize(l6, tok, 8) == 3, "trailing comment");
	CHECK(nfg_tokenize(l7, tok, 8) == -2, "quote glued to text");
	CHECK(nfg_tokenize(l8, tok, 8) == 0, "empty");
}

static void test_elemlines(void)
{
	struct nfg_rangevec v = { 0 };
	char err[256], out[NFG_RANGE_STRLEN];
	char l1[] = "10.0.0.0/8";
	char l2[] = "  192.168.1.1 192.168.2.0-192.168.2.9\t# two";
	char l3[] = "1.10.16.0/20 ; SBL256894";
	char l4[] = "";
	char l5[] = "   # nothing";
	char l6[] = "10.0.0.1 bogus";
	char l7[] = "::1";
	char l8[] = "10.0.0.1\r";

	CHECK(nfg_elemline_parse(l1, NFPROTO_IPV4, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK(nfg_elemline_parse(l2, NFPROTO_IPV4, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK(nfg_elemline_parse(l3, NFPROTO_IPV4, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK(nfg_elemline_parse(l4, NFPROTO_IPV4, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK(nfg_elemline_parse(l5, NFPROTO_IPV4, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK(nfg_elemline_parse(l8, NFPROTO_IPV4, &v, err, sizeof(err)) == 0, "%s", err);
	CHECK(v.n == 5, "5 elements, got %zu", v.n);
	if (v.n == 5) {
		nfg_range_format(&v.r[2], out, sizeof(out));
		CHECK_STR(out, "192.168.2.0-192.168.2.9");
		nfg_range_format(&v.r[3], out, sizeof(out));
		CHECK_STR(out, "1.10.16.0/20");
	}
	CHECK(nfg_elemline_parse(l6, NFPROTO_IPV4, &v, err, sizeof(err)) == -1,
	      "garbage refused");
	CHECK_HAS(err, "bogus");
	CHECK(nfg_elemline_parse(l7, NFPROTO_IPV4, &v, err, sizeof(err)) == -1,
	      "wrong family refused");
	CHECK_HAS(err, "expected IPv4");
	nfg_rangevec_free(&v);
	CHECK(v.n == 0 && v.r == NULL, "freed");
}

static void test_names(void)
{
	char err[256];
	char longname[64];

	CHECK(nfg_rs_name_valid("blk", true, err, sizeof(err)) == 0, "%s", err);
	CHECK(nfg_rs_name_valid("a.b:c+d-e_F9", true, err, sizeof(err)) == 0, "%s", err);
	CHECK(nfg_rs_name_valid("", false, err, sizeof(err)) == -1, "empty");
	CHECK(nfg_rs_name_valid("has space", false, err, sizeof(err)) == -1, "space");
	CHECK(nfg_rs_name_valid("-f", true, err, sizeof(err)) == -1, "leading dash");
	CHECK(nfg_rs_name_valid("-f", false, err, sizeof(err)) == 0, "lenient dash");
	CHECK(nfg_rs_name_valid("a/b", true, err, sizeof(err)) == -1, "slash");
	CHECK_HAS(err, "'/'");
	CHECK(nfg_rs_name_valid("a/b", false, err, sizeof(err)) == 0, "lenient slash");
	CHECK(nfg_rs_name_valid("tab\there", false, err, sizeof(err)) == -1, "tab");
	memset(longname, 'n', 31);
	longname[31] = '\0';
	CHECK(nfg_rs_name_valid(longname, true, err, sizeof(err)) == 0, "31 ok");
	longname[31] = 'n';
	longname[32] = '\0';
	CHECK(nfg_rs_name_valid(longname, true, err, sizeof(err)) == -1, "32 too long");
	CHECK_HAS(err, "too long");
}

static void test_savelines(void)
{
	char buf[256];
	struct nfg_range r;

	nfg_rsline_create(buf, sizeof(buf), "blk", NFPROTO_IPV4, 1048576);
	CHECK_STR(buf, "create blk ipv4 maxelem 1048576\n");
	nfg_rsline_create(buf, sizeof(buf), "blk6", NFPROTO_IPV6, 10);
	CHECK_STR(buf, "create blk6 ipv6 maxelem 10\n");
	nfg_range_parse("10.0.0.0-10.0.0.255", NFPROTO_IPV4, &r, NULL, 0);
	nfg_rsline_add(buf, sizeof(buf), "blk", &r);
	CHECK_STR(buf, "add blk 10.0.0.0/24\n");
	nfg_range_parse("10.0.0.5-10.0.0.6", NFPROTO_IPV4, &r, NULL, 0);
	nfg_rsline_add(buf, sizeof(buf), "blk", &r);
	CHECK_STR(buf, "add blk 10.0.0.5-10.0.0.6\n");
	nfg_range_parse("2001:db8::1", NFPROTO_IPV6, &r, NULL, 0);
	nfg_rsline_add(buf, sizeof(buf), "blk6", &r);
	CHECK_STR(buf, "add blk6 2001:db8::1\n");
}

/* Feed lines (copied, as the parser writes into them). */
static int feed(struct nfg_rsplan *p, const char *const *lines, size_t n,
		nfg_rsplan_lookup_cb cb, char *err, size_t errlen,
		unsigned int *failed_line)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char *l = strdup(lines[i]);
		int ret = nfg_rsplan_line(p, l, (unsigned int)i + 1, cb, NULL,
					  err, errlen);

		free(l);
		if (ret < 0) {
			if (failed_line)
				*failed_line = (unsigned int)i + 1;
			return -1;
		}
	}
	return 0;
}

static const char *fmt(const struct nfg_range *r)
{
	static char out[NFG_RANGE_STRLEN];

	nfg_range_format(r, out, sizeof(out));
	return out;
}

static void test_plan_native(void)
{
	static const char *const in[] = {
		"# saved by nfguard set save",
		"create blk ipv4 maxelem 1048576",
		"add blk 10.0.0.0/8",
		"add blk 192.168.0.1",
		"add blk 172.16.0.1-172.16.0.9",
		"",
		"create blk6 ipv6",
		"add blk6 2001:db8::/32",
		"create empty ipv4 maxelem 5",
	};
	struct nfg_rsplan p = { 0 };
	char err[256] = "";

	CHECK(feed(&p, in, sizeof(in) / sizeof(in[0]), NULL, err, sizeof(err),
		   NULL) == 0, "%s", err);
	CHECK(p.n == 3, "3 sets");
	if (p.n != 3)
		goto out;
	CHECK_STR(p.sets[0].name, "blk");
	CHECK(p.sets[0].create && !p.sets[0].ipset, "native create");
	CHECK(p.sets[0].family == NFPROTO_IPV4, "v4");
	CHECK(p.sets[0].maxelem == 1048576, "maxelem");
	CHECK(p.sets[0].line == 2, "line");
	CHECK(p.sets[0].elems.n == 3, "3 elems");
	CHECK_STR(fmt(&p.sets[0].elems.r[2]), "172.16.0.1-172.16.0.9");
	CHECK(p.sets[1].family == NFPROTO_IPV6 && p.sets[1].maxelem == 0,
	      "v6 default maxelem");
	CHECK_STR(fmt(&p.sets[1].elems.r[0]), "2001:db8::/32");
	CHECK(p.sets[2].elems.n == 0 && p.sets[2].maxelem == 5, "empty set");
out:
	nfg_rsplan_free(&p);
	CHECK(p.n == 0 && p.sets == NULL, "plan freed");
}

static void test_plan_ipset(void)
{
	static const char *const in[] = {
		"create bl hash:net family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x5f3a2b1c",
		"add bl 10.0.0.0/8",
		"add bl 192.0.2.0/24 timeout 300",
		"add bl 198.51.100.0/24 comment \"from feed A\" packets 0 bytes 0",
		"create bl6 hash:net family inet6 hashsize 1024 maxelem 4294967295",
		"add bl6 2001:db8::/48",
		"create hosts hash:ip",
		"add hosts 203.0.113.7",
		"create nets24 hash:ip family inet netmask 24",
		"add nets24 198.51.100.77",
		"create h6 hash:ip family inet6 netmask 128",
		"add h6 2001:db8::5",
	};
	struct nfg_rsplan p = { 0 };
	char err[256] = "";

	CHECK(feed(&p, in, sizeof(in) / sizeof(in[0]), NULL, err, sizeof(err),
		   NULL) == 0, "%s", err);
	CHECK(p.n == 5, "5 sets, got %zu", p.n);
	if (p.n != 5)
		goto out;
	CHECK(p.sets[0].ipset && p.sets[0].family == NFPROTO_IPV4 &&
	      p.sets[0].maxelem == 65536, "hash:net inet");
	CHECK(p.sets[0].elems.n == 3, "options ignored");
	CHECK(p.sets[1].family == NFPROTO_IPV6, "inet6");
	CHECK(p.sets[1].maxelem == 16u * 1024 * 1024, "maxelem clamped, got %u",
	      p.sets[1].maxelem);
	CHECK(p.sets[2].family == NFPROTO_IPV4 && p.sets[2].maxelem == 0,
	      "ipset default family");
	CHECK_STR(fmt(&p.sets[2].elems.r[0]), "203.0.113.7");
	CHECK(p.sets[3].netmask == 24, "netmask");
	CHECK_STR(fmt(&p.sets[3].elems.r[0]), "198.51.100.0/24");
	CHECK(p.sets[4].netmask == 0, "netmask 128 = none");
	CHECK_STR(fmt(&p.sets[4].elems.r[0]), "2001:db8::5");
out:
	nfg_rsplan_free(&p);
}

static void test_plan_timeouts(void)
{
	static const char *const in[] = {
		"create t ipv4 maxelem 10 timeout 600",
		"add t 10.0.0.1 timeout 30",
		"add t 10.0.0.2",
		"add t 10.0.0.3 timeout 0",
		"create u ipv6",
		"add u 2001:db8::1",
		"create ips hash:ip family inet timeout 60 hashsize 64",
		"add ips 192.0.2.1 timeout 5 packets 1",
		"add ips 192.0.2.2",
	};
	struct nfg_rsplan p = { 0 };
	char err[256] = "", buf[256];
	struct nfg_range r;

	CHECK(feed(&p, in, sizeof(in) / sizeof(in[0]), NULL, err, sizeof(err),
		   NULL) == 0, "%s", err);
	CHECK(p.n == 3, "3 sets, got %zu", p.n);
	if (p.n != 3)
		goto out;
	CHECK(p.sets[0].timeout == 600 && p.sets[0].maxelem == 10,
	      "create timeout, got %u", p.sets[0].timeout);
	CHECK(p.sets[0].timed && p.sets[0].elems.n == 3, "element timeouts");
	CHECK(p.sets[0].tmo[0] == 30 && p.sets[0].tmo[1] == NFG_RS_TIMEOUT_SET &&
	      p.sets[0].tmo[2] == 0, "per element: %u %u %u",
	      p.sets[0].tmo[0], p.sets[0].tmo[1], p.sets[0].tmo[2]);
	CHECK(p.sets[1].timeout == 0 && !p.sets[1].timed, "no timeouts");
	CHECK(p.sets[2].ipset && p.sets[2].timeout == 60, "ipset create timeout");
	CHECK(p.sets[2].timed && p.sets[2].tmo[0] == 5 &&
	      p.sets[2].tmo[1] == NFG_RS_TIMEOUT_SET, "ipset add timeout");

	nfg_rsline_create_t(buf, sizeof(buf), "t", NFPROTO_IPV4, 10, 600);
	CHECK_STR(buf, "create t ipv4 maxelem 10 timeout 600\n");
	nfg_rsline_create_t(buf, sizeof(buf), "t", NFPROTO_IPV4, 10, 0);
	CHECK_STR(buf, "create t ipv4 maxelem 10\n");
	CHECK(nfg_range_parse("10.0.0.0/8", NFPROTO_IPV4, &r, err,
			      sizeof(err)) == 0, "%s", err);
	nfg_rsline_add_t(buf, sizeof(buf), "t", &r, 42);
	CHECK_STR(buf, "add t 10.0.0.0/8 timeout 42\n");
	nfg_rsline_add_t(buf, sizeof(buf), "t", &r, 0);
	CHECK_STR(buf, "add t 10.0.0.0/8\n");
out:
	nfg_rsplan_free(&p);
}

/* each input must fail on its last line, with msg in the error */
static void plan_bad(const char *const *in, size_t n, const char *msg)
{
	struct nfg_rsplan p = { 0 };
	char err[256] = "";
	unsigned int line = 0;

	CHECK(feed(&p, in, n, NULL, err, sizeof(err), &line) == -1,
	      "accepted: %s", in[n - 1]);
	CHECK(line == n, "failed on line %u, not %zu", line, n);
	CHECK_HAS(err, msg);
	nfg_rsplan_free(&p);
}

#define PLAN_BAD(msg, ...)						\
	do {								\
		static const char *const in_[] = { __VA_ARGS__ };	\
		plan_bad(in_, sizeof(in_) / sizeof(in_[0]), msg);	\
	} while (0)

static void test_plan_errors(void)
{
	PLAN_BAD("unknown command", "flush blk");
	PLAN_BAD("unknown command", "-A blk 1.2.3.4");
	PLAN_BAD("needs a set name", "create blk");
	PLAN_BAD("unknown family", "create blk ipv5");
	PLAN_BAD("unknown option", "create blk ipv4 hashsize 5");
	PLAN_BAD("maxelem must be", "create blk ipv4 maxelem 0");
	PLAN_BAD("maxelem must be", "create blk ipv4 maxelem 16777217");
	PLAN_BAD("maxelem must be", "create blk ipv4 maxelem");
	PLAN_BAD("maxelem must be", "create blk ipv4 maxelem -5");
	PLAN_BAD("timeout must be", "create blk ipv4 timeout 2147484");
	PLAN_BAD("timeout must be", "create blk ipv4 timeout");
	PLAN_BAD("timeout must be", "create blk ipv4", "add blk 10.0.0.1 timeout x");
	PLAN_BAD("timeout must be", "create blk ipv4", "add blk 10.0.0.1 timeout");
	PLAN_BAD("bad ipset timeout", "create x hash:ip timeout -1");
	PLAN_BAD("too long", "create aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ipv4");
	PLAN_BAD("created twice (first on line 1)", "create blk ipv4",
		 "create blk ipv6");
	PLAN_BAD("not supported (only hash:ip and hash:net)",
		 "create x hash:ip,port family inet");
	PLAN_BAD("not supported", "create x bitmap:ip range 10.0.0.0/8");
	PLAN_BAD("not supported", "create x list:set");
	PLAN_BAD("inet or inet6", "create x hash:net family ipv4");
	PLAN_BAD("bitmask", "create x hash:ip bitmask 255.255.255.0");
	PLAN_BAD("netmask", "create x hash:ip netmask 33");
	PLAN_BAD("nomatch", "create x hash:net", "add x 10.0.0.0/8 nomatch");
	PLAN_BAD("not created by this input", "add blk 10.0.0.1");
	PLAN_BAD("needs a set name and an element", "create blk ipv4", "add blk");
	PLAN_BAD("one element per add line", "create blk ipv4",
		 "add blk 10.0.0.1 10.0.0.2");
	PLAN_BAD("expected IPv4", "create blk ipv4", "add blk ::1");
	PLAN_BAD("expected IPv6", "create x hash:net family inet6",
		 "add x 10.0.0.0/8");
	PLAN_BAD("start > end", "create blk ipv4", "add blk 10.0.0.9-10.0.0.1");
	PLAN_BAD("host bits", "create blk ipv4", "add blk 10.0.0.1/8");
	PLAN_BAD("unbalanced quote", "create x hash:net comment",
		 "add x 10.0.0.0/8 comment \"oops");
}

/* lookups of sets that exist in the "kernel" */
static int fake_lookup(const char *name, uint8_t *family, void *data,
		       char *err, size_t errlen)
{
	(void)data;
	if (!strcmp(name, "live4")) {
		*family = NFPROTO_IPV4;
		return 0;
	}
	if (!strcmp(name, "live6")) {
		*family = NFPROTO_IPV6;
		return 0;
	}
	snprintf(err, errlen, "set \"%s\" does not exist", name);
	return -1;
}

static void test_plan_existing(void)
{
	static const char *const ok[] = {
		"add live4 10.0.0.1", "add live6 ::1", "add live4 10.0.0.2",
	};
	static const char *const bad_create[] = {
		"add live4 10.0.0.1", "create live4 ipv4",
	};
	struct nfg_rsplan p = { 0 };
	char err[256] = "";
	unsigned int line = 0;

	CHECK(feed(&p, ok, 3, fake_lookup, err, sizeof(err), NULL) == 0, "%s", err);
	CHECK(p.n == 2 && !p.sets[0].create && p.sets[0].elems.n == 2 &&
	      p.sets[1].family == NFPROTO_IPV6, "adds to existing sets");
	nfg_rsplan_free(&p);
	CHECK(feed(&p, bad_create, 2, fake_lookup, err, sizeof(err), &line) == -1 &&
	      line == 2, "create after add");
	CHECK_HAS(err, "created after line 1 added to it");
	nfg_rsplan_free(&p);
	{
		static const char *const gone[] = { "add nosuch 10.0.0.1" };

		CHECK(feed(&p, gone, 1, fake_lookup, err, sizeof(err), NULL) == -1,
		      "unknown set");
		CHECK_HAS(err, "does not exist");
		nfg_rsplan_free(&p);
	}
}

/*
 * save -> restore round trip: random ranges are normalized, written as
 * save lines and read back; the plan must hold exactly the same ranges.
 */
static void test_roundtrip(void)
{
	unsigned int iter, bad = 0;

	for (iter = 0; iter < 200; iter++) {
		uint8_t fam = iter & 1 ? NFPROTO_IPV6 : NFPROTO_IPV4;
		unsigned int alen = nfg_addr_len(fam);
		struct nfg_range r[100];
		struct nfg_rsplan p = { 0 };
		size_t n = 1 + (size_t)random() % 100, i, j;
		char line[256], err[256];

		for (i = 0; i < n; i++) {
			memset(&r[i], 0, sizeof(r[i]));
			r[i].family = fam;
			for (j = 0; j < alen; j++)
				r[i].start[j] = r[i].end[j] = (uint8_t)random();
			/* vary the low bytes only, so some overlap */
			r[i].end[alen - 1] = (uint8_t)(r[i].start[alen - 1] +
					(random() % (256 - r[i].start[alen - 1])));
			if (i % 4 == 0) {
				r[i].start[0] = 0x20;
				r[i].end[0] = 0x20;
				nfg_range_widen(&r[i], (unsigned int)(random() % (alen * 8)));
			}
		}
		n = nfg_ranges_normalize(r, n);
		nfg_rsline_create(line, sizeof(line), "rt", fam, 1000);
		if (nfg_rsplan_line(&p, line, 1, NULL, NULL, err, sizeof(err)))
			bad++;
		for (i = 0; i < n; i++) {
			nfg_rsline_add(line, sizeof(line), "rt", &r[i]);
			if (nfg_rsplan_line(&p, line, (unsigned int)i + 2, NULL,
					    NULL, err, sizeof(err)))
				bad++;
		}
		if (p.n != 1 || p.sets[0].elems.n != n ||
		    p.sets[0].maxelem != 1000 || p.sets[0].family != fam ||
		    memcmp(p.sets[0].elems.r, r, n * sizeof(*r)))
			bad++;
		nfg_rsplan_free(&p);
	}
	CHECK(bad == 0, "%u save/restore round trips differ", bad);
}

void test_rsfile(void)
{
	srandom(4242);
	test_tokenize();
	test_elemlines();
	test_names();
	test_savelines();
	test_plan_native();
	test_plan_ipset();
	test_plan_timeouts();
	test_plan_errors();
	test_plan_existing();
	test_roundtrip();
}
