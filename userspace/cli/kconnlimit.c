// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard kconnlimit: views of the kconnlimit match's per-rule tables.
 *
 *   nfguard kconnlimit list [NAME] [--json]
 *   nfguard kconnlimit top [NAME] [-n N] [--json]
 *
 * list: one line per rule instance of the current netns (id, name, family,
 * key, limit, keys, connections, counters), then a comment line with the
 * remembered connections of all rules and the global cap. top: per
 * instance, a comment line and its N (default 10) keys with the most
 * connections, "KEY COUNT" by count descending.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_kconnlimit.h>

#include "cli.h"
#include "libnfguard.h"

void usage_kconnlimit(FILE *f)
{
	fprintf(f,
		"nfguard kconnlimit list [NAME] [--json]\n"
		"nfguard kconnlimit top [NAME] [-n N] [--json]\n"
		"  list: rules using -m kconnlimit (NAME = --kconnlimit-name) and their counters\n"
		"  top:  the N (default %u, at most %u) masked addresses with the most\n"
		"        connections in each rule's table\n"
		CLI_EXIT_HELP,
		NFG_KCL_TOP_DEFAULT, NFG_KCL_TOP_MAX);
}

struct kcl_out {
	bool json;
	bool top;
	unsigned int n;		/* instances printed */
	uint64_t total, max;
};

static const char *kcl_fam(uint8_t f)
{
	return f == NFPROTO_IPV6 ? "ipv6" : "ipv4";
}

static void kcl_key_str(const struct nfg_kcl_inst *in, const uint8_t *addr,
			char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int af = in->family == NFPROTO_IPV6 ? AF_INET6 : AF_INET;
	unsigned int full = in->family == NFPROTO_IPV6 ? 128 : 32;

	if (!inet_ntop(af, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (in->prefix == full)
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s/%u", a, in->prefix);
}

static int kcl_print(const struct nfg_kcl_inst *in, const struct nfg_kcl_zkey *keys,
		     size_t nkeys, void *data)
{
	struct kcl_out *o = data;
	const char *dir = in->flags & XT_KCONNLIMIT_DADDR ? "dst" : "src";
	const char *op = in->flags & XT_KCONNLIMIT_UPTO ? "upto" : "above";
	char key[INET6_ADDRSTRLEN + 8];
	size_t i;

	o->total = in->total_conns;
	o->max = in->max_conns;
	if (o->json) {
		printf("%s{\"id\":%u,\"name\":", o->n ? "," : "", in->id);
		cli_json_str(stdout, in->name);
		printf(",\"family\":\"%s\",\"key\":\"%s\",\"prefix\":%u,\"mode\":\"%s\","
		       "\"limit\":%u,\"keys\":%u,\"connections\":%u,\"slots\":%u,\"locks\":%u,"
		       "\"memsize\":%" PRIu64 ",\"matched\":%" PRIu64 ",\"over_limit\":%" PRIu64
		       ",\"inserts\":%" PRIu64 ",\"gc_evictions\":%" PRIu64 ",\"cap_hits\":%" PRIu64
		       ",\"alloc_fail\":%" PRIu64,
		       kcl_fam(in->family), dir, in->prefix, op, in->limit, in->keys, in->conns,
		       in->slots, in->locks, in->memsize, in->matched, in->over_limit,
		       in->inserts, in->gc_evictions, in->cap_hits, in->alloc_fail);
		if (o->top) {
			printf(",\"top\":[");
			for (i = 0; i < nkeys; i++) {
				kcl_key_str(in, keys[i].addr, key, sizeof(key));
				printf("%s{\"key\":\"%s\",\"zone\":%u,\"connections\":%u}",
				       i ? "," : "", key, keys[i].zone, keys[i].count);
			}
			printf("]");
		}
		printf("}");
	} else if (o->top) {
		printf("# %u %s %s %s/%u %s:%u: %u keys, %u connections\n", in->id,
		       in->name[0] ? in->name : "-", kcl_fam(in->family), dir, in->prefix,
		       op, in->limit, in->keys, in->conns);
		for (i = 0; i < nkeys; i++) {
			kcl_key_str(in, keys[i].addr, key, sizeof(key));
			/* the zone only when not the default one */
			if (keys[i].zone)
				printf("%s %u zone %u\n", key, keys[i].count, keys[i].zone);
			else
				printf("%s %u\n", key, keys[i].count);
		}
	} else {
		if (!o->n)
			printf("id name family key limit keys conns matched over_limit inserts gc_evictions cap_hits alloc_fail\n");
		printf("%u %s %s %s/%u %s:%u %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		       " %" PRIu64 " %" PRIu64 "\n",
		       in->id, in->name[0] ? in->name : "-", kcl_fam(in->family), dir,
		       in->prefix, op, in->limit, in->keys, in->conns, in->matched,
		       in->over_limit, in->inserts, in->gc_evictions, in->cap_hits,
		       in->alloc_fail);
	}
	o->n++;
	return 0;
}

static int kcl_print_list(const struct nfg_kcl_inst *in, const struct nfg_kcl_key *keys,
			  size_t nkeys, void *data)
{
	(void)keys;
	(void)nkeys;
	return kcl_print(in, NULL, 0, data);
}

int cmd_kconnlimit(int argc, char **argv)
{
	struct kcl_out o = { .json = false };
	const char *what, *name = NULL;
	unsigned long n = NFG_KCL_TOP_DEFAULT;
	struct nfg_kcl *h;
	struct nfg_err e;
	char *end;
	int i, ret;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_kconnlimit(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "list"))
		what = "kconnlimit list";
	else if (!strcmp(argv[1], "top"))
		what = "kconnlimit top", o.top = true;
	else
		cli_usage_die("kconnlimit", "unknown sub-command \"%s\" (list or top)", argv[1]);

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			o.json = true;
		} else if (o.top && !strcmp(argv[i], "-n")) {
			if (++i >= argc)
				cli_usage_die(what, "-n needs a number");
			errno = 0;
			n = strtoul(argv[i], &end, 10);
			if (errno || *end || argv[i][0] < '0' || argv[i][0] > '9' ||
			    n < 1 || n > NFG_KCL_TOP_MAX)
				cli_usage_die(what, "-n needs a number from 1 to %u, not \"%s\"",
					      NFG_KCL_TOP_MAX, argv[i]);
		} else if (argv[i][0] == '-') {
			cli_usage_die(what, "unknown option \"%s\"", argv[i]);
		} else if (!name) {
			name = argv[i];
			if (strlen(name) >= XT_KCONNLIMIT_MAXNAMELEN)
				cli_usage_die(what, "name \"%s\" is too long (at most %d characters)",
					      name, XT_KCONNLIMIT_MAXNAMELEN - 1);
		} else {
			cli_usage_die(what, "unexpected argument \"%s\"", argv[i]);
		}
	}

	h = nfg_kcl_open(&e);
	if (!h) {
		if (e.code == ENOENT)
			cli_die_nomod(what, "xt_kconnlimit");
		cli_die_err(what, &e, true);
	}
	if (o.json)
		printf("[");
	if (o.top)
		ret = nfg_kcl_top_zones(h, name, n, kcl_print, &o, &e);
	else
		ret = nfg_kcl_list(h, name, kcl_print_list, &o, &e);
	nfg_kcl_close(h);
	if (ret < 0)
		cli_die_err(what, &e, false);
	if (o.json)
		printf("]\n");
	if (name && !o.n)
		cli_die(what, "no kconnlimit rule named \"%s\" in this network namespace", name);
	if (!o.json && !o.top) {
		if (!o.n)
			printf("id name family key limit keys conns matched over_limit inserts gc_evictions cap_hits alloc_fail\n");
		if (o.n)
			printf("# remembered connections (all rules): %" PRIu64 ", cap %" PRIu64 "\n",
			       o.total, o.max);
	}
	cli_flush_or_die(what);
	return 0;
}
