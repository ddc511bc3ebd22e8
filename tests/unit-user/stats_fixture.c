// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard stats formatters fed with fixtures, no kernel: stats-fixture OUTDIR
 * writes OUTDIR/NAME.{txt,json,prom} for each snapshot below (check_stats.py
 * then validates the JSON against the schema, parses the Prometheus output
 * strictly and compares the two), and checks here what only the fixture
 * knows: exact values, escaping, absent and failed extensions, the text.
 * Built with ASan + UBSan by tests/unit-user/Makefile.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tap.h"

unsigned int ut_passed, ut_failed;

static const char *outdir;

/* Every number differs from the others of its set (base > 0). */
static struct stats_set set(const char *name, uint8_t fam, uint64_t base)
{
	struct stats_set s = {
		.info = {
			.family = fam, .maxelem = 1048576, .count = (uint32_t)base + 1,
			.refs = 2, .lookups = base * 10, .hits = base * 3,
			.memsize = 4096 + base,
		},
		.tinfo = { .timeout = 600 + (uint32_t)base, .expiries = base * 5 },
		.dinfo = {
			.dynamic = (uint32_t)base + 7, .adds = base * 6, .dels = base * 4,
			.refused = base * 2 + 1,
		},
	};

	snprintf(s.info.name, sizeof(s.info.name), "%s", name);
	return s;
}

static struct nfg_kcl_inst rule(uint32_t id, const char *name, uint8_t flags,
				uint64_t base)
{
	struct nfg_kcl_inst r = {
		.id = id, .family = NFG_FAMILY_IPV4, .prefix = 24, .flags = flags,
		.limit = 64, .keys = 3, .conns = 7, .slots = 8192, .locks = 256,
		.memsize = 70000, .matched = base, .over_limit = base / 2,
		.inserts = 9, .gc_evictions = 2, .cap_hits = 0, .alloc_fail = 1,
		.total_conns = 11, .max_conns = 1048576,
	};

	snprintf(r.name, sizeof(r.name), "%s", name);
	return r;
}

static void set_all(struct stats_snap *s, enum stats_state st)
{
	unsigned int x;

	for (x = 0; x < NFG_EXT_COUNT; x++)
		s->ext[x].state = st;
}

/* Render @s in the three formats into OUTDIR/@name.* and into @out[3]. */
static void render(const char *name, const struct stats_snap *s, char *out[3])
{
	static const char *const ext[3] = { "txt", "json", "prom" };
	int (*const fn[3])(FILE *, const struct stats_snap *) = {
		stats_print_text, stats_print_json, stats_print_prom,
	};
	char path[4096];
	size_t len;
	int i;

	for (i = 0; i < 3; i++) {
		FILE *m = open_memstream(&out[i], &len);
		FILE *f;

		CHECK(m && fn[i](m, s) == 0, "%s.%s: formatter failed", name, ext[i]);
		fclose(m);
		snprintf(path, sizeof(path), "%s/%s.%s", outdir, name, ext[i]);
		f = fopen(path, "w");
		CHECK(f && fputs(out[i], f) >= 0 && fclose(f) == 0, "cannot write %s", path);
	}
}

static void release(char *out[3])
{
	int i;

	for (i = 0; i < 3; i++)
		free(out[i]);
}

static void fx_full(void)
{
	struct stats_set sets[] = {
		set("blocklist", NFG_FAMILY_IPV4, 4242),
		set("v6.block:1", NFG_FAMILY_IPV6, 7),
		set("we\"ird\\name", NFG_FAMILY_IPV4, 1),
	};
	struct nfg_kcl_inst rules[] = {
		rule(1, "http", NFG_KCL_F_ABOVE, 1000),
		rule(2, "", NFG_KCL_F_UPTO | NFG_KCL_F_DADDR, 5),
	};
	struct stats_snap s = {
		.time = 1733400000, .sets = sets, .nsets = 3, .rules = rules, .nrules = 2,
		.sc = { .c = { .entries = 5, .max_entries = 65536, .syn_seen = 100, .cookie_sent = 99,
			.ack_valid = 50, .ack_invalid = 3, .allowlist_hit = 20, .allowlist_add = 6,
			.allowlist_evict = 1, .proxied = 44, .malformed = 2, .send_fail = 1,
			.sent_inplace = 98, .syn_resent = 4 }, .x = { .after_conntrack = 7 } },
		.rtc = { .entries = 12, .max_entries = 65536, .hit = 5000, .miss = 17,
			 .learn = 30, .invalid = 2, .evict = 1 },
	};
	char *o[3];

	set_all(&s, STATS_OK);
	render("full", &s, o);
	CHECK_HAS(o[0], "set blocklist ipv4: ranges 4243, maxelem 1048576, references 2, memory_bytes 8338, lookups 42420, hits 12726, "
		  "timeout 4842, expiries 21210, packet_adds 25452, packet_deletes 16968, packet_refusals 8485, dynamic 4249\n");
	CHECK_HAS(o[0], "rule 2 - ipv4 dst/24 upto: limit 64");
	CHECK_HAS(o[0], "kconnlimit: 2 rules, connections 11 (cap 1048576)\n");
	CHECK_HAS(o[0], "\n  hit 5000\n");
	CHECK_HAS(o[1], "{\"name\":\"blocklist\",\"family\":\"ipv4\",\"ranges\":4243,\"maxelem\":1048576,"
		  "\"references\":2,\"memory_bytes\":8338,\"lookups\":42420,\"hits\":12726,"
		  "\"timeout\":4842,\"expiries\":21210,\"packet_adds\":25452,\"packet_deletes\":16968,"
		  "\"packet_refusals\":8485,\"dynamic\":4249}");
	CHECK_HAS(o[1], "\"name\":\"we\\\"ird\\\\name\"");
	CHECK_HAS(o[1], "{\"id\":2,\"name\":\"\",\"family\":\"ipv4\",\"key\":\"dst\",\"prefix\":24,\"mode\":\"upto\"");
	CHECK_HAS(o[1], "\"syncookie\":{\"loaded\":true,\"syn_seen\":100,");
	CHECK_HAS(o[1], "\"time\":1733400000,");
	CHECK_HAS(o[2], "\nnfguard_rangeset_hits_total{set=\"blocklist\",family=\"ipv4\"} 12726\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_hits_total{set=\"we\\\"ird\\\\\\\\name\",family=\"ipv4\"} 3\n");
	CHECK_HAS(o[2], "\n# TYPE nfguard_rangeset_memory_bytes gauge\n");
	CHECK_HAS(o[2], "\n# TYPE nfguard_rangeset_timeout gauge\n"
		  "nfguard_rangeset_timeout{set=\"blocklist\",family=\"ipv4\"} 4842\n");
	CHECK_HAS(o[2], "\n# TYPE nfguard_rangeset_expiries_total counter\n"
		  "nfguard_rangeset_expiries_total{set=\"blocklist\",family=\"ipv4\"} 21210\n");
	CHECK_HAS(o[2], "\n# TYPE nfguard_rangeset_packet_adds_total counter\n"
		  "nfguard_rangeset_packet_adds_total{set=\"blocklist\",family=\"ipv4\"} 25452\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_packet_deletes_total{set=\"v6.block:1\",family=\"ipv6\"} 28\n");
	CHECK_HAS(o[2], "\n# TYPE nfguard_rangeset_packet_refusals_total counter\n"
		  "nfguard_rangeset_packet_refusals_total{set=\"blocklist\",family=\"ipv4\"} 8485\n");
	CHECK_HAS(o[2], "\n# TYPE nfguard_rangeset_dynamic gauge\n"
		  "nfguard_rangeset_dynamic{set=\"blocklist\",family=\"ipv4\"} 4249\n");
	CHECK_HAS(o[2], "\nnfguard_kconnlimit_matched_total{id=\"1\",name=\"http\",family=\"ipv4\"} 1000\n");
	CHECK_HAS(o[2], "\nnfguard_syncookie_allowlist_entries 5\n");
	CHECK_HAS(o[2], "\n# TYPE nfguard_rtcache_hit_total counter\nnfguard_rtcache_hit_total 5000\n");
	CHECK_HAS(o[2], "\nnfguard_extension_loaded{extension=\"rtcache\"} 1\n");
	release(o);
}

/* Loaded, nothing configured: no sets, no rules, zero counters. */
static void fx_empty(void)
{
	struct stats_snap s = { .time = 1 };
	char *o[3];

	set_all(&s, STATS_OK);
	render("empty", &s, o);
	CHECK_HAS(o[0], "rangeset: 0 sets\nkconnlimit: 0 rules\n");
	CHECK_HAS(o[1], "\"rangeset\":{\"loaded\":true,\"sets\":[]}");
	CHECK_HAS(o[1], "\"kconnlimit\":{\"loaded\":true,\"connections\":0,\"max_connections\":null,\"rules\":[]}");
	CHECK_HAS(o[2], "\nnfguard_rangeset_sets 0\n");
	CHECK(!strstr(o[2], "nfguard_rangeset_hits_total"), "no per-set family without sets");
	CHECK(!strstr(o[2], "nfguard_rangeset_packet_adds_total"), "no per-set family without sets");
	CHECK(!strstr(o[2], "netns_max_connections"), "no cap without a rule to tell it");
	release(o);
}

/* One absent, one failed: reported, the others as usual. */
static void fx_partial(void)
{
	struct stats_set sets[] = { set("only", NFG_FAMILY_IPV6, 3) };
	struct stats_snap s = { .time = 2, .sets = sets, .nsets = 1 };
	char *o[3];

	s.ext[NFG_EXT_RANGESET].state = STATS_OK;
	s.ext[NFG_EXT_KCONNLIMIT].state = STATS_ABSENT;
	s.ext[NFG_EXT_SYNCOOKIE].state = STATS_ERROR;
	snprintf(s.ext[NFG_EXT_SYNCOOKIE].error, sizeof(s.ext[0].error),
		 "Operation not permitted \"quoted\"\n");
	s.ext[NFG_EXT_RTCACHE].state = STATS_ABSENT;
	render("partial", &s, o);
	CHECK_HAS(o[0], "kconnlimit: not loaded (kernel module xt_kconnlimit)\n");
	CHECK_HAS(o[0], "syncookie: error: Operation not permitted");
	CHECK_HAS(o[0], "rtcache: not loaded (kernel module xt_RTCACHE)\n");
	CHECK_HAS(o[1], "\"kconnlimit\":{\"loaded\":false}");
	CHECK_HAS(o[1], "\"syncookie\":{\"loaded\":true,\"error\":\"Operation not permitted \\\"quoted\\\"\\u000a\"}");
	CHECK_HAS(o[2], "nfguard_extension_loaded{extension=\"kconnlimit\"} 0\n");
	CHECK_HAS(o[2], "nfguard_extension_error{extension=\"syncookie\"} 1\n");
	CHECK(!strstr(o[2], "nfguard_syncookie_") && !strstr(o[2], "nfguard_kconnlimit_"),
	      "no metrics of absent or failed extensions");
	CHECK_HAS(o[2], "nfguard_rangeset_ranges{set=\"only\",family=\"ipv6\"} 4\n");
	CHECK_HAS(o[0], "set only ipv6: ranges 4, maxelem 1048576, references 2, memory_bytes 4099, lookups 30, hits 9, "
		  "timeout 603, expiries 15, packet_adds 18, packet_deletes 12, packet_refusals 7, dynamic 10\n");
	release(o);
}

/* Nothing loaded. */
static void fx_none(void)
{
	struct stats_snap s = { .time = 3 };
	char *o[3];

	set_all(&s, STATS_ABSENT);
	render("none", &s, o);
	CHECK_HAS(o[1], "\"extensions\":{\"rangeset\":{\"loaded\":false},\"kconnlimit\":{\"loaded\":false},"
		  "\"syncookie\":{\"loaded\":false},\"rtcache\":{\"loaded\":false}}}\n");
	release(o);
}

/* Largest values: exact integers in both formats. */
static void fx_max(void)
{
	struct stats_set sets[] = { set("max", NFG_FAMILY_IPV4, 0) };
	struct nfg_kcl_inst rules[] = { rule(UINT32_MAX, "m", NFG_KCL_F_ABOVE, UINT64_MAX) };
	struct stats_snap s = { .time = 4, .sets = sets, .nsets = 1, .rules = rules, .nrules = 1 };
	char *o[3];

	sets[0].info.hits = UINT64_MAX;
	sets[0].info.count = UINT32_MAX;
	sets[0].tinfo.timeout = UINT32_MAX;
	sets[0].tinfo.expiries = UINT64_MAX;
	sets[0].dinfo.dynamic = UINT32_MAX;
	sets[0].dinfo.adds = sets[0].dinfo.dels = sets[0].dinfo.refused = UINT64_MAX;
	memset(&s.sc, 0xff, sizeof(s.sc));
	memset(&s.rtc, 0xff, sizeof(s.rtc));
	set_all(&s, STATS_OK);
	render("max", &s, o);
	CHECK_HAS(o[1], "\"ranges\":4294967295,");
	CHECK_HAS(o[1], "\"hits\":18446744073709551615,\"timeout\":4294967295,\"expiries\":18446744073709551615,"
		  "\"packet_adds\":18446744073709551615,\"packet_deletes\":18446744073709551615,"
		  "\"packet_refusals\":18446744073709551615,\"dynamic\":4294967295}");
	CHECK_HAS(o[2], "nfguard_rangeset_hits_total{set=\"max\",family=\"ipv4\"} 18446744073709551615\n");
	CHECK_HAS(o[2], "nfguard_rangeset_packet_refusals_total{set=\"max\",family=\"ipv4\"} 18446744073709551615\n");
	CHECK_HAS(o[2], "nfguard_rangeset_dynamic{set=\"max\",family=\"ipv4\"} 4294967295\n");
	CHECK_HAS(o[2], "nfguard_kconnlimit_matched_total{id=\"4294967295\",name=\"m\",family=\"ipv4\"} 18446744073709551615\n");
	release(o);
}

/*
 * Set names are bytes: names that differ only outside printable ASCII
 * (UTF-8 and not, control bytes) must stay distinct series, and a name
 * made of the escape's own characters must not collide with the escape.
 */
static void fx_bytes(void)
{
	struct stats_set sets[] = {
		set("caf\xc3\xa9", NFG_FAMILY_IPV4, 1),	/* UTF-8 "cafe" + acute */
		set("caf\xe9", NFG_FAMILY_IPV4, 2),		/* Latin-1, not UTF-8 */
		set("caf\xe8", NFG_FAMILY_IPV4, 3),
		set("caf\\xe9", NFG_FAMILY_IPV4, 4),		/* ASCII backslash x e 9 */
		set("tab\there", NFG_FAMILY_IPV4, 5),
		set("tab\rhere", NFG_FAMILY_IPV4, 6),
		set("nl\nhere", NFG_FAMILY_IPV4, 7),
		set("\xc3\x28\xed\xa0\x80\xf4\x90\x80\x80", NFG_FAMILY_IPV4, 8), /* bad UTF-8 */
		set("\xe2\x82\xac\xf0\x9f\x9b\xa1", NFG_FAMILY_IPV6, 9), /* euro, shield */
		set("nel\xc2\x85", NFG_FAMILY_IPV4, 10),	/* C1 control NEL, UTF-8 */
		set("cut\xe2\x82", NFG_FAMILY_IPV4, 11),	/* truncated at the end */
		set("long\xc0\xaf", NFG_FAMILY_IPV4, 12),	/* overlong '/' */
	};
	struct stats_snap s = { .time = 5, .sets = sets, .nsets = 12 };
	char *o[3];

	s.ext[NFG_EXT_RANGESET].state = STATS_OK;
	render("bytes", &s, o);
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"caf\xc3\xa9\",family=\"ipv4\"} 2\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"caf\\\\xe9\",family=\"ipv4\"} 3\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"caf\\\\xe8\",family=\"ipv4\"} 4\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"caf\\\\\\\\xe9\",family=\"ipv4\"} 5\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"tab\\\\x09here\",family=\"ipv4\"} 6\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"nl\\\\x0ahere\",family=\"ipv4\"} 8\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"\\\\xc3(\\\\xed\\\\xa0\\\\x80"
		  "\\\\xf4\\\\x90\\\\x80\\\\x80\",family=\"ipv4\"} 9\n");
	CHECK_HAS(o[2], "\nnfguard_rangeset_ranges{set=\"\xe2\x82\xac\xf0\x9f\x9b\xa1\",family=\"ipv6\"} 10\n");
	/*
	 * JSON: UTF-8 as it is (JSON text is UTF-8), C1 controls as \u00NN (the
	 * same character), each byte that is not UTF-8 as the lone surrogate
	 * \udcNN (never a character of valid UTF-8, so no collision with é)
	 */
	CHECK_HAS(o[1], "\"name\":\"caf\xc3\xa9\",");
	CHECK_HAS(o[1], "\"name\":\"caf\\udce9\",");
	CHECK_HAS(o[1], "\"name\":\"caf\\udce8\",");
	CHECK_HAS(o[1], "\"name\":\"caf\\\\xe9\",");
	CHECK_HAS(o[1], "\"name\":\"tab\\u0009here\",");
	CHECK_HAS(o[1], "\"name\":\"\\udcc3(\\udced\\udca0\\udc80\\udcf4\\udc90\\udc80\\udc80\",");
	CHECK_HAS(o[1], "\"name\":\"\xe2\x82\xac\xf0\x9f\x9b\xa1\",");
	CHECK_HAS(o[1], "\"name\":\"nel\\u0085\",");
	CHECK_HAS(o[1], "\"name\":\"cut\\udce2\\udc82\",");
	CHECK_HAS(o[1], "\"name\":\"long\\udcc0\\udcaf\",");
	release(o);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: stats-fixture OUTDIR\n");
		return 2;
	}
	outdir = argv[1];
	fx_full();
	fx_empty();
	fx_partial();
	fx_none();
	fx_max();
	fx_bytes();
	printf("stats-fixture: %u passed, %u failed\n", ut_passed, ut_failed);
	return ut_failed ? 1 : 0;
}
