// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard's nft_compat encoders (nfg_nft.c): each expression carries the
 * name, revision 0 and exactly the info bytes of the ABI struct the iptables
 * plugin fills for the equivalent option string (the plugins' defaults:
 * kconnlimit mask = whole address, SYNCOOKIE timeout 300 and mask = whole
 * address), survives a netlink round trip through an nftnl rule, and decodes
 * back to the options. Parameter errors are refused with a message. The
 * comparison with what iptables-nft itself installs is made inside a VM
 * (tests/vm/cases/cli_protect.sh), where the kernel can take the rules.
 * The decoder is also fed what no encoder makes (test_decoder).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_RTCACHE.h>
#include <linux/netfilter/xt_SYNCOOKIE.h>
#include <linux/netfilter/xt_kconnlimit.h>
#include <linux/netfilter/xt_rangeset.h>

#include "libnfguard.h"
#include "tap.h"

/* Rule holding @ex, built into a netlink message and parsed back. */
static struct nftnl_expr *roundtrip(struct nftnl_expr *ex, uint8_t family)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_rule *r = nftnl_rule_alloc(), *r2 = nftnl_rule_alloc();
	struct nftnl_expr_iter *it;
	struct nftnl_expr *got, *copy = NULL;
	struct nlmsghdr *nlh;

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, "t");
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "c");
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, family);
	nftnl_rule_add_expr(r, ex);
	nlh = nftnl_rule_nlmsg_build_hdr(buf, NFT_MSG_NEWRULE, family, 0, 1);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	CHECK(nftnl_rule_nlmsg_parse(nlh, r2) == 0, "parse back");
	it = nftnl_expr_iter_create(r2);
	got = it ? nftnl_expr_iter_next(it) : NULL;
	if (got) {
		/* the caller gets a standalone copy: the rule frees its own */
		const char *kind = nftnl_expr_get_str(got, NFTNL_EXPR_NAME);
		bool tg = !strcmp(kind, "target");
		uint32_t len;
		const void *d = nftnl_expr_get(got, tg ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO, &len);
		void *blob = malloc(len);

		copy = nftnl_expr_alloc(kind);
		memcpy(blob, d, len);
		nftnl_expr_set_str(copy, tg ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME,
				   nftnl_expr_get_str(got, tg ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME));
		nftnl_expr_set_u32(copy, tg ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV,
				   nftnl_expr_get_u32(got, tg ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV));
		nftnl_expr_set(copy, tg ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO, blob, len);
	}
	nftnl_expr_iter_destroy(it);
	nftnl_rule_free(r);
	nftnl_rule_free(r2);
	return copy;
}

/* @ex (consumed) is @kind/@name rev 0 with exactly @want (@len bytes), decodes to @text */
static void expect(struct nftnl_expr *ex, uint8_t family, const char *kind,
		   const char *name, const void *want, size_t len, const char *text)
{
	bool tg = !strcmp(kind, "target");
	struct nftnl_expr *rt;
	const void *d;
	uint32_t dlen = 0;
	char buf[256];
	int n;

	CHECK(ex != NULL, "%s: encoder failed", name);
	if (!ex)
		return;
	rt = roundtrip(ex, family);
	CHECK(rt != NULL, "%s: no expression after the round trip", name);
	if (!rt)
		return;
	CHECK_STR(nftnl_expr_get_str(rt, NFTNL_EXPR_NAME), kind);
	CHECK_STR(nftnl_expr_get_str(rt, tg ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME), name);
	CHECK(nftnl_expr_get_u32(rt, tg ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV) == 0,
	      "%s: revision", name);
	d = nftnl_expr_get(rt, tg ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO, &dlen);
	CHECK(dlen == len && d && !memcmp(d, want, len), "%s: info bytes (%u, want %zu)",
	      name, dlen, len);
	n = nfg_nft_expr_format(rt, family, buf, sizeof(buf), NULL);
	CHECK(n == (int)strlen(text), "%s: format returned %d", name, n);
	CHECK_STR(buf, text);
	nftnl_expr_free(rt);
}

static void bad(struct nftnl_expr *ex, const struct nfg_err *e, int code,
		const char *part)
{
	CHECK(ex == NULL, "accepted, wanted \"%s\"", part);
	if (ex)
		nftnl_expr_free(ex);
	CHECK(e->code == code, "errno %d, want %d (%s)", e->code, code, e->msg);
	CHECK_HAS(e->msg, part);
}

static void test_encoders(void)
{
	struct xt_rangeset_mtinfo rs;
	struct xt_kconnlimit_mtinfo kcl;
	struct xt_syncookie_tginfo sc;
	struct xt_rtcache_tginfo rtc;
	struct nfg_err e;
	char buf[16];

	/* -m rangeset ! --match-set bl dst */
	memset(&rs, 0, sizeof(rs));
	strcpy(rs.name, "bl");
	rs.flags = XT_RANGESET_DST | XT_RANGESET_INV;
	expect(nfg_nft_rangeset(NFG_FAMILY_IPV4, &(struct nfg_nft_rangeset){
			.set = "bl", .dst = true, .invert = true }, NULL),
	       NFG_FAMILY_IPV4, "match", "rangeset", &rs, XT_ALIGN(sizeof(rs)),
	       "-m rangeset ! --match-set bl dst");
	CHECK(XT_ALIGN(sizeof(rs)) == 48, "rangeset info size %zu", XT_ALIGN(sizeof(rs)));

	/* -m kconnlimit --kconnlimit-above 64 --kconnlimit-mask 24 */
	memset(&kcl, 0, sizeof(kcl));
	kcl.limit = 64;
	kcl.prefix = 24;
	kcl.flags = XT_KCONNLIMIT_ABOVE;
	expect(nfg_nft_kconnlimit(NFG_FAMILY_IPV4, &(struct nfg_nft_kconnlimit){
			.limit = 64, .prefix = 24 }, NULL),
	       NFG_FAMILY_IPV4, "match", "kconnlimit", &kcl, XT_ALIGN(sizeof(kcl)),
	       "-m kconnlimit --kconnlimit-above 64 --kconnlimit-mask 24 --kconnlimit-saddr");
	/* ip6tables ... --kconnlimit-upto 3 --kconnlimit-daddr --kconnlimit-name web (mask default 128) */
	kcl.limit = 3;
	kcl.prefix = 128;
	kcl.flags = XT_KCONNLIMIT_UPTO | XT_KCONNLIMIT_DADDR;
	strcpy(kcl.name, "web");
	expect(nfg_nft_kconnlimit(NFG_FAMILY_IPV6, &(struct nfg_nft_kconnlimit){
			.limit = 3, .prefix = -1, .upto = true, .daddr = true, .name = "web" }, NULL),
	       NFG_FAMILY_IPV6, "match", "kconnlimit", &kcl, XT_ALIGN(sizeof(kcl)),
	       "-m kconnlimit --kconnlimit-upto 3 --kconnlimit-mask 128 --kconnlimit-daddr --kconnlimit-name web");

	/* -j SYNCOOKIE (defaults) */
	memset(&sc, 0, sizeof(sc));
	sc.mode = XT_SYNCOOKIE_MODE_PROXY;
	sc.timeout = 300;
	sc.prefix = 32;
	expect(nfg_nft_syncookie(NFG_FAMILY_IPV4, &(struct nfg_nft_syncookie){
			.wscale = -1 }, NULL),
	       NFG_FAMILY_IPV4, "target", "SYNCOOKIE", &sc, XT_ALIGN(sizeof(sc)),
	       "-j SYNCOOKIE --mode proxy --allowlist-timeout 300 --allowlist-mask 32");
	/* ip6tables -j SYNCOOKIE --mode local --mss 1400 --wscale 7 --sack-perm --timestamp
	 *   --allowlist-timeout 60 --allowlist-mask 64 */
	sc.mode = XT_SYNCOOKIE_MODE_LOCAL;
	sc.mss = 1400;
	sc.wscale = 7;
	sc.flags = XT_SYNCOOKIE_MSS | XT_SYNCOOKIE_WSCALE | XT_SYNCOOKIE_SACK_PERM |
		   XT_SYNCOOKIE_TIMESTAMP;
	sc.timeout = 60;
	sc.prefix = 64;
	expect(nfg_nft_syncookie(NFG_FAMILY_IPV6, &(struct nfg_nft_syncookie){
			.mode = NFG_SC_MODE_LOCAL, .mss = 1400, .wscale = 7,
			.sack_perm = true, .timestamp = true, .timeout = 60, .prefix = 64 }, NULL),
	       NFG_FAMILY_IPV6, "target", "SYNCOOKIE", &sc, XT_ALIGN(sizeof(sc)),
	       "-j SYNCOOKIE --mode local --mss 1400 --wscale 7 --sack-perm --timestamp "
	       "--allowlist-timeout 60 --allowlist-mask 64");

	/* -j RTCACHE */
	memset(&rtc, 0, sizeof(rtc));
	expect(nfg_nft_rtcache(NFG_FAMILY_IPV6, NULL), NFG_FAMILY_IPV6, "target",
	       "RTCACHE", &rtc, XT_ALIGN(sizeof(rtc)), "-j RTCACHE");

	/* errors, as the plugins refuse them */
	bad(nfg_nft_rtcache(1 /* inet */, &e), &e, EINVAL, "ip and ip6");
	bad(nfg_nft_rangeset(NFG_FAMILY_IPV4, &(struct nfg_nft_rangeset){ .set = "" }, &e),
	    &e, EINVAL, "rangeset");
	bad(nfg_nft_rangeset(NFG_FAMILY_IPV4, &(struct nfg_nft_rangeset){
		.set = "0123456789012345678901234567890123" }, &e), &e, EINVAL, "rangeset");
	bad(nfg_nft_kconnlimit(NFG_FAMILY_IPV4, &(struct nfg_nft_kconnlimit){
		.limit = 1, .prefix = 33 }, &e), &e, ERANGE, "mask 33 out of range 0-32");
	bad(nfg_nft_kconnlimit(NFG_FAMILY_IPV4, &(struct nfg_nft_kconnlimit){
		.limit = 1, .prefix = -1, .name = "a b" }, &e), &e, EINVAL, "name \"a b\"");
	bad(nfg_nft_syncookie(NFG_FAMILY_IPV4, &(struct nfg_nft_syncookie){
		.wscale = 15 }, &e), &e, ERANGE, "wscale 15");
	bad(nfg_nft_syncookie(NFG_FAMILY_IPV4, &(struct nfg_nft_syncookie){
		.wscale = -1, .mss = 40 }, &e), &e, ERANGE, "mss 40");
	bad(nfg_nft_syncookie(NFG_FAMILY_IPV4, &(struct nfg_nft_syncookie){
		.wscale = -1, .prefix = 33 }, &e), &e, ERANGE, "allowlist mask 33");
	bad(nfg_nft_syncookie(NFG_FAMILY_IPV4, &(struct nfg_nft_syncookie){
		.wscale = -1, .mode = NFG_SC_MODE_LOCAL, .sack_perm = true }, &e),
	    &e, EINVAL, "needs --timestamp");

	/* decoder: other expressions, malformed ones, short buffers */
	{
		struct nftnl_expr *x = nftnl_expr_alloc("counter");

		CHECK(nfg_nft_expr_format(x, NFG_FAMILY_IPV4, buf, sizeof(buf), &e) == -ENOENT,
		      "counter is not ours");
		nftnl_expr_free(x);
		x = nftnl_expr_alloc("match");
		nftnl_expr_set_str(x, NFTNL_EXPR_MT_NAME, "kconnlimit");
		nftnl_expr_set_u32(x, NFTNL_EXPR_MT_REV, 0);
		nftnl_expr_set(x, NFTNL_EXPR_MT_INFO, calloc(1, 8), 8);
		nfg_err_clear(&e);
		CHECK(nfg_nft_expr_format(x, NFG_FAMILY_IPV4, buf, sizeof(buf), &e) == -EINVAL,
		      "short kconnlimit info refused");
		CHECK_HAS(e.msg, "8 info bytes");
		nftnl_expr_free(x);
		x = nfg_nft_kconnlimit(NFG_FAMILY_IPV4, &(struct nfg_nft_kconnlimit){
			.limit = 1, .prefix = 24 }, NULL);
		CHECK(nfg_nft_expr_format(x, NFG_FAMILY_IPV4, buf, sizeof(buf), &e) == -ENOSPC,
		      "short buffer");
		nftnl_expr_free(x);
	}
}

/* A match/target expression @name rev @rev carrying a copy of @info (@len bytes). */
static struct nftnl_expr *raw_expr(bool tg, const char *name, uint32_t rev,
				   const void *info, size_t len)
{
	struct nftnl_expr *x = nftnl_expr_alloc(tg ? "target" : "match");
	void *blob = calloc(1, len ? len : 1);

	memcpy(blob, info, len);
	nftnl_expr_set_str(x, tg ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME, name);
	nftnl_expr_set_u32(x, tg ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV, rev);
	nftnl_expr_set(x, tg ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO, blob, len);
	return x;
}

/* nfg_nft_expr_format(@x) (consumed) returns @want; on -EINVAL the message has @part */
static void decode(struct nftnl_expr *x, int want, const char *part)
{
	struct nfg_err e;
	char buf[256];
	int n;

	nfg_err_clear(&e);
	n = nfg_nft_expr_format(x, NFG_FAMILY_IPV4, buf, sizeof(buf), &e);
	if (want >= 0) {
		CHECK(n == (int)strlen(part), "decoded %d bytes: \"%s\" (%s)", n, buf,
		      n < 0 ? e.msg : "");
		if (n >= 0)
			CHECK_STR(buf, part);
	} else {
		CHECK(n == want, "returned %d, want %d (%s)", n, want, part);
		if (want == -EINVAL)
			CHECK_HAS(e.msg, part);
	}
	nftnl_expr_free(x);
}

/*
 * The decoder on what a kernel or another tool could hand back: every
 * revision but 0, every size but the ABI struct's, names that are not
 * printable, our names on the wrong expression kind, each SYNCOOKIE option
 * alone, and the buffer size limit exactly.
 */
static void test_decoder(void)
{
	static const char *const mt[] = { "rangeset", "kconnlimit" };
	static const char *const tg[] = { "SYNCOOKIE", "RTCACHE" };
	static const size_t mt_size[] = { XT_ALIGN(sizeof(struct xt_rangeset_mtinfo)),
					  XT_ALIGN(sizeof(struct xt_kconnlimit_mtinfo)) };
	static const size_t tg_size[] = { XT_ALIGN(sizeof(struct xt_syncookie_tginfo)),
					  XT_ALIGN(sizeof(struct xt_rtcache_tginfo)) };
	char zero[256] = { 0 }, buf[128];
	struct xt_rangeset_mtinfo rs;
	struct xt_kconnlimit_mtinfo kcl;
	struct xt_syncookie_tginfo sc;
	struct nftnl_expr *x;
	struct nfg_err e;
	unsigned int i;
	int n;

	for (i = 0; i < 2; i++) {
		decode(raw_expr(false, mt[i], 1, zero, mt_size[i]), -EINVAL, "revision 1");
		decode(raw_expr(false, mt[i], 0, zero, mt_size[i] + 8), -EINVAL, "info bytes");
		decode(raw_expr(false, mt[i], 0, zero, mt_size[i] - 8), -EINVAL, "info bytes");
		decode(raw_expr(true, mt[i], 0, zero, mt_size[i]), -ENOENT, "a target of a match's name");
		decode(raw_expr(true, tg[i], 1, zero, tg_size[i]), -EINVAL, "revision 1");
		decode(raw_expr(true, tg[i], 0, zero, tg_size[i] + 8), -EINVAL, "info bytes");
		decode(raw_expr(false, tg[i], 0, zero, tg_size[i]), -ENOENT, "a match of a target's name");
	}
	decode(raw_expr(false, "connlimit", 0, zero, 32), -ENOENT, "another extension");

	/* names: printable, a full 31-byte one, none unterminated or odd */
	memset(&rs, 0, sizeof(rs));
	memset(rs.name, 'a', sizeof(rs.name) - 1);
	decode(raw_expr(false, "rangeset", 0, &rs, sizeof(rs)), 0,
	       "-m rangeset --match-set aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa src");
	strcpy(rs.name, "a b");
	decode(raw_expr(false, "rangeset", 0, &rs, sizeof(rs)), -EINVAL, "not printable");
	strcpy(rs.name, "bl\x01");
	decode(raw_expr(false, "rangeset", 0, &rs, sizeof(rs)), -EINVAL, "not printable");
	memset(&kcl, 0, sizeof(kcl));
	kcl.limit = 4294967295u;
	kcl.prefix = 0;
	kcl.flags = XT_KCONNLIMIT_ABOVE | XT_KCONNLIMIT_DADDR;
	decode(raw_expr(false, "kconnlimit", 0, &kcl, sizeof(kcl)), 0,
	       "-m kconnlimit --kconnlimit-above 4294967295 --kconnlimit-mask 0 --kconnlimit-daddr");
	strcpy(kcl.name, "we\"b");
	decode(raw_expr(false, "kconnlimit", 0, &kcl, sizeof(kcl)), -EINVAL, "name not printable");

	/* each SYNCOOKIE option alone */
	memset(&sc, 0, sizeof(sc));
	sc.timeout = 1;
	sc.prefix = 1;
	sc.mss = 536;
	sc.flags = XT_SYNCOOKIE_MSS;
	decode(raw_expr(true, "SYNCOOKIE", 0, &sc, sizeof(sc)), 0,
	       "-j SYNCOOKIE --mode proxy --mss 536 --allowlist-timeout 1 --allowlist-mask 1");
	sc.flags = XT_SYNCOOKIE_WSCALE;	/* wscale 0 given: printed */
	decode(raw_expr(true, "SYNCOOKIE", 0, &sc, sizeof(sc)), 0,
	       "-j SYNCOOKIE --mode proxy --wscale 0 --allowlist-timeout 1 --allowlist-mask 1");
	sc.flags = XT_SYNCOOKIE_SACK_PERM;
	sc.mode = XT_SYNCOOKIE_MODE_LOCAL;
	decode(raw_expr(true, "SYNCOOKIE", 0, &sc, sizeof(sc)), 0,
	       "-j SYNCOOKIE --mode local --sack-perm --allowlist-timeout 1 --allowlist-mask 1");
	sc.flags = XT_SYNCOOKIE_TIMESTAMP;
	sc.timeout = XT_SYNCOOKIE_TIMEOUT_MAX;
	sc.prefix = 128;
	decode(raw_expr(true, "SYNCOOKIE", 0, &sc, sizeof(sc)), 0,
	       "-j SYNCOOKIE --mode local --timestamp --allowlist-timeout 604800 --allowlist-mask 128");

	/* the buffer: exactly the text and its NUL fits, one byte less does not */
	x = nfg_nft_rtcache(NFG_FAMILY_IPV4, NULL);
	n = nfg_nft_expr_format(x, NFG_FAMILY_IPV4, buf, sizeof("-j RTCACHE"), &e);
	CHECK(n == (int)strlen("-j RTCACHE"), "exact buffer: %d", n);
	nfg_err_clear(&e);
	n = nfg_nft_expr_format(x, NFG_FAMILY_IPV4, buf, sizeof("-j RTCACHE") - 1, &e);
	CHECK(n == -ENOSPC && e.code == ENOSPC, "one byte short: %d", n);
	CHECK(strlen(buf) < sizeof("-j RTCACHE") - 1, "truncated output terminated");
	CHECK(nfg_nft_expr_format(x, NFG_FAMILY_IPV4, buf, 0, &e) == -EINVAL, "no buffer");
	CHECK(nfg_nft_expr_format(NULL, NFG_FAMILY_IPV4, buf, sizeof(buf), &e) == -EINVAL,
	      "no expression");
	nftnl_expr_free(x);
}

void test_nft(void)
{
	test_encoders();
	test_decoder();
}
