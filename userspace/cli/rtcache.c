// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard rtcache: the RTCACHE route cache of the current netns.
 *
 *   nfguard rtcache stats      entries, bound and counters
 *   nfguard rtcache list       one line per cached route
 *   nfguard rtcache flush [ipv4|ipv6]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <linux/netfilter.h>

#include "cli.h"
#include "libnfguard.h"

void usage_rtcache(FILE *f)
{
	fprintf(f,
		"nfguard rtcache stats [--json]\n"
		"nfguard rtcache list [--json]\n"
		"nfguard rtcache flush [ipv4|ipv6]\n"
		"  routes cached by -j RTCACHE in this network namespace: counters,\n"
		"  the cached routes (per connection and direction), drop them all\n"
		CLI_EXIT_HELP);
}

static struct nfg_rtc *rtc_open_or_die(void)
{
	struct nfg_err e;
	struct nfg_rtc *h = nfg_rtc_open(&e);

	if (!h) {
		if (e.code == ENOENT)
			cli_die_nomod("rtcache", "xt_RTCACHE");
		cli_die_err("rtcache", &e, true);
	}
	return h;
}

static void ifname(uint32_t idx, char *buf)
{
	if (!idx || !if_indextoname(idx, buf))
		snprintf(buf, IF_NAMESIZE, "%u", idx);
}

/* @data: NULL for text, else the number of JSON objects printed */
static int print_route(const struct nfg_rtc_route *r, void *data)
{
	int af = r->family == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	char in[IF_NAMESIZE + 12], out[IF_NAMESIZE + 12];
	unsigned int *n = data;

	inet_ntop(af, r->src, s, sizeof(s));
	inet_ntop(af, r->dst, d, sizeof(d));
	ifname(r->iif, in);
	ifname(r->oif, out);
	if (n) {
		printf("%s{\"family\":\"%s\",\"direction\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\","
		       "\"iif\":", (*n)++ ? "," : "", r->family == NFPROTO_IPV6 ? "ipv6" : "ipv4",
		       r->dir ? "reply" : "original", s, d);
		cli_json_str(stdout, in);
		fputs(",\"oif\":", stdout);
		cli_json_str(stdout, out);
		printf(",\"mark\":%u,\"dscp\":%u,\"age_ms\":%u,\"idle_ms\":%u}", r->mark,
		       r->dscp, r->age_ms, r->idle_ms);
		return 0;
	}
	printf("%s %s src %s dst %s iif %s oif %s mark 0x%x dscp 0x%02x age %ums idle %ums\n",
	       r->family == NFPROTO_IPV6 ? "ipv6" : "ipv4",
	       r->dir ? "reply" : "original", s, d, in, out, r->mark, r->dscp,
	       r->age_ms, r->idle_ms);
	return 0;
}

int cmd_rtcache(int argc, char **argv)
{
	struct nfg_rtc_stats s;
	struct nfg_rtc *h;
	struct nfg_err e;
	uint32_t n = 0;
	uint8_t fam = 0;
	bool json;
	int ret = 0;

	if (argc < 2) {
		usage_rtcache(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_rtcache(stdout);
		return 0;
	}
	json = argc == 3 && !strcmp(argv[2], "--json") &&
	       (!strcmp(argv[1], "stats") || !strcmp(argv[1], "list"));
	if (json && !strcmp(argv[1], "stats")) {
		h = rtc_open_or_die();
		ret = nfg_rtc_stats(h, &s, &e);
		if (!ret)
			printf("{\"entries\":%" PRIu32 ",\"max_entries\":%" PRIu32 ",\"hit\":%" PRIu64
			       ",\"miss\":%" PRIu64 ",\"learn\":%" PRIu64 ",\"invalid\":%" PRIu64
			       ",\"evict\":%" PRIu64 "}\n", s.entries, s.max_entries, s.hit, s.miss,
			       s.learn, s.invalid, s.evict);
	} else if (json) {
		unsigned int n = 0;

		h = rtc_open_or_die();
		putchar('[');
		ret = nfg_rtc_list(h, print_route, &n, &e);
		puts("]");
	} else if (!strcmp(argv[1], "stats") && argc == 2) {
		h = rtc_open_or_die();
		ret = nfg_rtc_stats(h, &s, &e);
		if (!ret)
			printf("entries %" PRIu32 " max_entries %" PRIu32 "\n"
			       "hit %" PRIu64 "\nmiss %" PRIu64 "\nlearn %" PRIu64
			       "\ninvalid %" PRIu64 "\nevict %" PRIu64 "\n",
			       s.entries, s.max_entries, s.hit, s.miss, s.learn,
			       s.invalid, s.evict);
	} else if (!strcmp(argv[1], "list") && argc == 2) {
		h = rtc_open_or_die();
		ret = nfg_rtc_list(h, print_route, NULL, &e);
	} else if (!strcmp(argv[1], "flush") && argc <= 3) {
		if (argc == 3) {
			if (!strcmp(argv[2], "ipv4") || !strcmp(argv[2], "inet"))
				fam = NFPROTO_IPV4;
			else if (!strcmp(argv[2], "ipv6") || !strcmp(argv[2], "inet6"))
				fam = NFPROTO_IPV6;
			else
				cli_usage_die("rtcache flush", "unknown family '%s' (ipv4 or ipv6)",
					      argv[2]);
		}
		h = rtc_open_or_die();
		ret = nfg_rtc_flush(h, fam, &n, &e);
		if (!ret)
			printf("%" PRIu32 " routes dropped\n", n);
	} else {
		cli_err("rtcache", "unknown sub-command or bad arguments: \"%s%s%s\"", argv[1],
			argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
		usage_rtcache(stderr);
		return CLI_EXIT_USAGE;
	}
	nfg_rtc_close(h);
	if (ret) {
		cli_err("rtcache", "%s", nfg_err_str(&e));
		return cli_exit_for(&e, false);
	}
	cli_flush_or_die("rtcache");
	return 0;
}
