// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard set: named IPv4/IPv6 range sets (xt_rangeset).
 *
 * Input is always validated completely before anything is sent. One
 * netlink request is applied by the kernel completely or not at all, and
 * an add/del is one request whenever the socket can send it (see
 * libnfguard.h); when it has to be split, a failure says how many
 * requests stayed applied. restore creates and fills sets, and undoes what it created
 * when a later step fails.
 */
#define _GNU_SOURCE	/* POSIX/GNU APIs also under -std=c11 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "libnfguard.h"
#include "nfg_rsfile.h"

/* Input errors printed before giving up. */
#define MAX_REPORTED_ERRORS	20

void usage_set(FILE *f)
{
	fprintf(f,
		"nfguard set create NAME ipv4|ipv6 [maxelem N] [timeout S] [-exist]\n"
		"nfguard set destroy NAME\n"
		"nfguard set add NAME ELEM... | add NAME -f FILE|- | add NAME <FILE\n"
		"                                          (each with [timeout S] at the end)\n"
		"nfguard set del NAME ELEM... | del NAME -f FILE|- | del NAME <FILE\n"
		"nfguard set flush NAME\n"
		"nfguard set test NAME ELEM     (exit 0: in the set, 1: not in the set)\n"
		"nfguard set swap NAME1 NAME2\n"
		"nfguard set rename NAME NEWNAME\n"
		"nfguard set list [NAME] [--json]\n"
		"nfguard set save [NAME]\n"
		"nfguard set restore [-f FILE|-] [--replace] [--check]\n"
		"  ELEM: 10.0.0.1, 10.0.0.0/8, 10.0.0.1-10.0.0.9, 2001:db8::/32, ...\n"
		"  timeout S: seconds until the elements expire (0: never, at most %u),\n"
		"    or with units: 90, 10m, 1h30m, 2d;\n"
		"    create: the set's default for adds without one; adding again\n"
		"    refreshes (overlapping parts keep the later expiry)\n"
		"  restore --check: validate the input only, without the kernel\n"
		"  Arguments are checked before anything is sent to the kernel.\n"
		CLI_EXIT_HELP,
		NFG_RS_TIMEOUT_MAX);
}

static char what[128];

static const char *set_what(const char *cmd, const char *name)
{
	if (name)
		snprintf(what, sizeof(what), "%s %s", cmd, name);
	else
		snprintf(what, sizeof(what), "%s", cmd);
	return what;
}

static struct nfg_rs *open_or_die(void)
{
	struct nfg_err e;
	struct nfg_rs *h = nfg_rs_open(&e);

	if (!h && e.code == ENOENT)
		cli_die_nomod(what, "xt_rangeset");
	if (!h)
		cli_die_err(what, &e, true);
	return h;
}

static void check_name_or_die(const char *name, bool strict)
{
	struct nfg_err e;

	if (nfg_rs_name_check(name, strict, &e) < 0)
		cli_usage_die(what, "%s", nfg_err_str(&e));
}

/* Words a sub-command takes that start with '-': none but "-" (stdin) ... */
static bool opt_none(const char *a)
{
	return a[0] != '-' || !a[1];
}

/* ... or create's -exist */
static bool opt_exist(const char *a)
{
	return opt_none(a) || !strcmp(a, "-exist") || !strcmp(a, "--exist");
}

/* ... or -f/--file too */
static bool opt_file(const char *a)
{
	return opt_none(a) || !strcmp(a, "-f") || !strcmp(a, "--file");
}

/*
 * argv[1..argc-1]: between @min and @max (-1: any) words, and an option
 * that @ok refuses is an error, never a set name or an element. Exit 2.
 */
static void need_args(int argc, char **argv, int min, int max, const char *syntax,
		      bool (*ok)(const char *))
{
	int i;

	for (i = 1; i < argc; i++)
		if (!ok(argv[i]))
			cli_usage_die(what, "unknown option \"%s\" (usage: nfguard set %s)",
				      argv[i], syntax);
	if (argc < min || (max >= 0 && argc > max))
		cli_usage_die(what, "usage: nfguard set %s", syntax);
}

static uint8_t family_or_die(struct nfg_rs *h, const char *name)
{
	struct nfg_rs_info info;
	struct nfg_err e;

	if (nfg_rs_get(h, name, &info, &e) < 0)
		cli_die_err(what, &e, false);
	return info.family;
}

/* ---- create / destroy / flush / swap / rename ----------------------------- */

/* Decimal number in [min, max] or die with @msg. */
static uint32_t number_or_die(const char *s, unsigned long long min,
			      unsigned long long max, const char *msg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		cli_usage_die(what, "%s", msg);
	return (uint32_t)v;
}

/*
 * A duration: seconds ("600"), or numbers with units s, m, h, d, summed
 * ("10m", "1h30m", "2d"), from 0 to NFG_RS_TIMEOUT_MAX seconds.
 */
static uint32_t timeout_or_die(const char *s)
{
	unsigned long long total = 0, v;
	const char *p = s;
	char *end;

	if (!*s)
		goto bad;
	while (*p) {
		if (*p < '0' || *p > '9')
			goto bad;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || v > NFG_RS_TIMEOUT_MAX)
			goto bad;
		switch (*end) {
		case 'd':
			v *= 24;
			/* fall through */
		case 'h':
			v *= 60;
			/* fall through */
		case 'm':
			v *= 60;
			/* fall through */
		case 's':
			end++;
			break;
		case '\0':
			if (p != s)
				goto bad;	/* "1h30": the unit of 30? */
			break;
		default:
			goto bad;
		}
		total += v;
		if (total > NFG_RS_TIMEOUT_MAX)
			goto bad;
		p = end;
	}
	return (uint32_t)total;
bad:
	cli_usage_die(what, "timeout \"%s\": seconds from 0 to %u, or with units s, m, h, d "
		      "(e.g. 90, 10m, 1h30m, 2d)", s, NFG_RS_TIMEOUT_MAX);
}

static int set_create(int argc, char **argv)
{
	static const char syntax[] =
		"create NAME ipv4|ipv6 [maxelem N] [timeout S] [-exist]";
	struct nfg_rs_info info;
	struct nfg_err e;
	struct nfg_rs *h;
	uint32_t maxelem = 0, timeout = 0;
	bool exist = false;
	uint8_t family;
	char msg[64];
	int k, j;

	need_args(argc, argv, 3, 8, syntax, opt_exist);
	/* -exist (ipset's word) anywhere: drop it from the words */
	for (k = j = 0; k < argc; k++) {
		if (!strcmp(argv[k], "-exist") || !strcmp(argv[k], "--exist"))
			exist = true;
		else
			argv[j++] = argv[k];
	}
	argc = j;
	if (argc < 3)
		cli_usage_die(what, "usage: nfguard set %s", syntax);
	check_name_or_die(argv[1], true);
	family = nfg_family_parse(argv[2]);
	if (!family)
		cli_usage_die(what, "unknown family \"%s\" (use ipv4 or ipv6)", argv[2]);
	for (k = 3; k < argc; k += 2) {
		if (k + 1 >= argc)
			cli_usage_die(what, "usage: nfguard set %s", syntax);
		if (!strcmp(argv[k], "maxelem")) {
			snprintf(msg, sizeof(msg),
				 "maxelem must be a number from 1 to %u",
				 NFG_RS_MAXELEM_LIMIT);
			maxelem = number_or_die(argv[k + 1], 1,
						NFG_RS_MAXELEM_LIMIT, msg);
		} else if (!strcmp(argv[k], "timeout")) {
			timeout = timeout_or_die(argv[k + 1]);
		} else {
			cli_usage_die(what, "usage: nfguard set %s", syntax);
		}
	}
	h = open_or_die();
	if (nfg_rs_create_timeout(h, argv[1], family, maxelem, timeout, &e) < 0) {
		/*
		 * -exist: a set of that name and family is what was asked for
		 * (as ipset, which also wants the same options: maxelem and
		 * timeout must match too, when given)
		 */
		if (!exist || e.code != EEXIST || nfg_rs_get(h, argv[1], &info, &e) < 0)
			cli_die_err(what, &e, false);
		if (info.family != family || (maxelem && info.maxelem != maxelem))
			cli_die(what, "-exist: set \"%s\" exists as %s maxelem %" PRIu32
				", not as asked", argv[1], nfg_family_name(info.family),
				info.maxelem);
	}
	nfg_rs_close(h);
	return 0;
}

static int set_simple(int argc, char **argv)
{
	const char *cmd = argv[0];
	bool two = !strcmp(cmd, "swap") || !strcmp(cmd, "rename");
	struct nfg_err e;
	struct nfg_rs *h;
	int ret;

	if (two)
		need_args(argc, argv, 3, 3, !strcmp(cmd, "swap") ?
			  "swap NAME1 NAME2" : "rename NAME NEWNAME", opt_none);
	else
		need_args(argc, argv, 2, 2, !strcmp(cmd, "destroy") ?
			  "destroy NAME" : "flush NAME", opt_none);
	check_name_or_die(argv[1], false);
	if (two)
		check_name_or_die(argv[2], !strcmp(cmd, "rename"));
	h = open_or_die();
	if (!strcmp(cmd, "destroy"))
		ret = nfg_rs_destroy(h, argv[1], &e);
	else if (!strcmp(cmd, "flush"))
		ret = nfg_rs_flush(h, argv[1], &e);
	else if (!strcmp(cmd, "swap"))
		ret = nfg_rs_swap(h, argv[1], argv[2], &e);
	else
		ret = nfg_rs_rename(h, argv[1], argv[2], &e);
	if (ret < 0)
		cli_die_err(what, &e, false);
	nfg_rs_close(h);
	return 0;
}

/* ---- add / del ---------------------------------------------------------- */

struct elemfile_ctx {
	const char *path;
	uint8_t family;
	struct nfg_rangevec v;
	unsigned int errors;
};

static int elemfile_line(char *line, unsigned int lineno, void *data)
{
	struct elemfile_ctx *c = data;
	char err[256];

	if (nfg_elemline_parse(line, c->family, &c->v, err, sizeof(err)) < 0) {
		if (++c->errors <= MAX_REPORTED_ERRORS)
			cli_err(what, "%s:%u: %s",
				strcmp(c->path, "-") ? c->path : "<stdin>",
				lineno, err);
	}
	return 0;
}

static void report_batch_failure(const struct nfg_rs_batch *b,
				 const struct nfg_err *e)
{
	cli_err(what, "%s", nfg_err_str(e));
	if (b->requests > 1)
		cli_err(what,
			"%zu of %zu requests (%zu of %zu merged ranges) had been applied before the failing one; the failing request and the rest were not",
			b->requests_done, b->requests, b->elems_done, b->elems);
}

/*
 * Every element parses as IPv4 or as IPv6 (the set's family is the
 * kernel's to tell; checked again once known): a typo is a bad argument
 * (exit 2) before any module or set is asked for.
 */
static void elems_syntax_or_die(int n, char **elems)
{
	char err[256], err6[256];
	struct nfg_range r;
	unsigned int bad = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (nfg_range_parse(elems[i], NFG_FAMILY_IPV4, &r, err, sizeof(err)) == 0 ||
		    nfg_range_parse(elems[i], NFG_FAMILY_IPV6, &r, err6, sizeof(err6)) == 0)
			continue;
		if (++bad <= MAX_REPORTED_ERRORS)
			cli_err(what, "%s", strchr(elems[i], ':') ? err6 : err);
	}
	if (bad)
		cli_usage_die(what, "%u invalid element%s: nothing was changed", bad,
			      bad == 1 ? "" : "s");
}

static int set_adddel(int argc, char **argv)
{
	bool add = !strcmp(argv[0], "add");
	struct elemfile_ctx c = { 0 };
	uint32_t timeout = NFG_RS_TIMEOUT_SET, *tmo = NULL;
	struct nfg_rs_batch b;
	struct nfg_err e;
	struct nfg_rs *h;
	size_t j;
	int i, ret;

	/* add ... timeout S */
	if (add && argc >= 4 && !strcmp(argv[argc - 2], "timeout")) {
		timeout = timeout_or_die(argv[argc - 1]);
		argc -= 2;
	}

	/* "add NAME" alone reads stdin when it is not a terminal */
	if (argc == 2 && isatty(STDIN_FILENO))
		argc = 0;
	need_args(argc, argv, 2, -1, add ? "add NAME ELEM... | add NAME -f FILE|- | add NAME <FILE  [timeout S]" :
		  "del NAME ELEM... | del NAME -f FILE|- | del NAME <FILE", opt_file);
	check_name_or_die(argv[1], false);
	/* elements on the command line: valid in one family or the other, before the kernel */
	if (argc > 2 && strcmp(argv[2], "-") && strcmp(argv[2], "-f") && strcmp(argv[2], "--file"))
		elems_syntax_or_die(argc - 2, argv + 2);
	h = open_or_die();
	c.family = family_or_die(h, argv[1]);

	if (argc == 2 || (argc == 3 && !strcmp(argv[2], "-"))) {
		c.path = "-";
	} else if (!strcmp(argv[2], "-f") || !strcmp(argv[2], "--file")) {
		if (argc != 4)
			cli_usage_die(what, "usage: nfguard set %s NAME -f FILE|-",
				argv[0]);
		c.path = argv[3];
	}
	if (c.path) {
		if (cli_for_each_line(what, c.path, elemfile_line, &c) < 0)
			exit(CLI_EXIT_ERROR);
	} else {
		char err[256];
		struct nfg_range r;

		for (i = 2; i < argc; i++) {
			if (nfg_range_parse(argv[i], c.family, &r, err,
					    sizeof(err)) < 0) {
				if (++c.errors <= MAX_REPORTED_ERRORS)
					cli_err(what, "%s", err);
				continue;
			}
			if (nfg_rangevec_push(&c.v, &r) < 0)
				cli_die(what, "out of memory");
		}
	}
	if (c.errors) {
		if (c.errors > MAX_REPORTED_ERRORS)
			cli_err(what, "... %u more invalid lines or elements",
				c.errors - MAX_REPORTED_ERRORS);
		cli_die_code(c.path ? CLI_EXIT_ERROR : CLI_EXIT_USAGE, what,
			     "%u invalid element%s: nothing was changed",
			     c.errors, c.errors == 1 ? "" : "s");
	}
	if (add && timeout != NFG_RS_TIMEOUT_SET) {
		tmo = calloc(c.v.n ? c.v.n : 1, sizeof(*tmo));
		if (!tmo)
			cli_die(what, "out of memory");
		for (j = 0; j < c.v.n; j++)
			tmo[j] = timeout;
		ret = nfg_rs_add_timeout(h, argv[1], c.v.r, tmo, c.v.n, &b, &e);
		free(tmo);
	} else if (add) {
		ret = nfg_rs_add(h, argv[1], c.v.r, c.v.n, &b, &e);
	} else
		ret = nfg_rs_del(h, argv[1], c.v.r, c.v.n, &b, &e);
	if (ret < 0) {
		report_batch_failure(&b, &e);
		exit(CLI_EXIT_ERROR);
	}
	nfg_rangevec_free(&c.v);
	nfg_rs_close(h);
	return 0;
}

/* ---- test --------------------------------------------------------------- */

static int set_test(int argc, char **argv)
{
	struct nfg_range r;
	struct nfg_err e;
	struct nfg_rs *h;
	char err[256];
	uint8_t family;
	bool in;

	need_args(argc, argv, 3, 3, "test NAME ELEM", opt_none);
	check_name_or_die(argv[1], false);
	elems_syntax_or_die(1, argv + 2);
	h = open_or_die();
	family = family_or_die(h, argv[1]);
	if (nfg_range_parse(argv[2], family, &r, err, sizeof(err)) < 0)
		cli_usage_die(what, "%s", err);
	if (nfg_rs_test(h, argv[1], &r, &in, &e) < 0)
		cli_die_err(what, &e, false);
	nfg_rs_close(h);
	printf("%s is %sin set %s\n", argv[2], in ? "" : "NOT ", argv[1]);
	cli_flush_or_die(what);
	return in ? 0 : CLI_EXIT_ERROR;
}

/* ---- list / save -------------------------------------------------------- */

struct setlist {
	struct nfg_rs_info *s;
	size_t n;
};

static void all_sets_or_die(struct nfg_rs *h, struct setlist *l)
{
	struct nfg_err e;

	if (nfg_rs_list_all(h, &l->s, &l->n, &e) < 0)
		cli_die_err(what, &e, false);
}

struct print_ctx {
	const char *name;
	struct nfg_rs_info hdr;
	struct nfg_rs_tinfo thdr;
	struct nfg_rs_dinfo dhdr;
	bool hdr_done;
	bool save;
	bool json;		/* list --json: one object, members in an array */
	unsigned int members;
};

static void print_hdr(struct print_ctx *c)
{
	const struct nfg_rs_info *s = &c->hdr;
	char buf[128];

	if (c->hdr_done)
		return;
	c->hdr_done = true;
	if (c->json) {
		fputs("{\"name\":", stdout);
		cli_json_str(stdout, c->name);
		printf(",\"family\":\"%s\",\"maxelem\":%" PRIu32 ",\"ranges\":%" PRIu32
		       ",\"references\":%" PRIu32 ",\"lookups\":%" PRIu64 ",\"hits\":%" PRIu64
		       ",\"memory\":%" PRIu64 ",\"timeout\":%" PRIu32 ",\"expiries\":%" PRIu64
		       ",\"packet_adds\":%" PRIu64 ",\"packet_deletes\":%" PRIu64
		       ",\"packet_refusals\":%" PRIu64 ",\"dynamic\":%" PRIu32 ",\"members\":[",
		       nfg_family_name(s->family), s->maxelem, s->count, s->refs, s->lookups,
		       s->hits, s->memsize, c->thdr.timeout, c->thdr.expiries, c->dhdr.adds,
		       c->dhdr.dels, c->dhdr.refused, c->dhdr.dynamic);
		return;
	}
	if (c->save) {
		nfg_rsline_create_t(buf, sizeof(buf), c->name, s->family,
				    s->maxelem, c->thdr.timeout);
		fputs(buf, stdout);
		return;
	}
	printf("Name: %s\nFamily: %s\nMaxelem: %" PRIu32 "\nRanges: %" PRIu32
	       "\nReferences: %" PRIu32 "\nLookups: %" PRIu64 "\nHits: %" PRIu64
	       "\nMemory: %" PRIu64 " bytes\nTimeout: %" PRIu32
	       "\nExpiries: %" PRIu64 "\nPacket adds: %" PRIu64
	       "\nPacket deletes: %" PRIu64 "\nPacket refusals: %" PRIu64
	       "\nDynamic: %" PRIu32 "\nMembers:\n",
	       c->name, nfg_family_name(s->family), s->maxelem, s->count,
	       s->refs, s->lookups, s->hits, s->memsize, c->thdr.timeout,
	       c->thdr.expiries, c->dhdr.adds, c->dhdr.dels, c->dhdr.refused,
	       c->dhdr.dynamic);
}

/* @timeout: seconds left, 0 = permanent. */
static int print_range(const struct nfg_range *r, uint32_t timeout, void *data)
{
	struct print_ctx *c = data;
	char buf[NFG_RANGE_STRLEN + 64];

	print_hdr(c);
	if (c->json) {
		if (nfg_range_format(r, buf, sizeof(buf)) < 0)
			return -EPROTO;
		printf("%s{\"range\":\"%s\"", c->members++ ? "," : "", buf);
		if (timeout)
			printf(",\"timeout\":%" PRIu32, timeout);
		putchar('}');
	} else if (c->save) {
		/* A permanent element of a set with a default timeout says
		 * "timeout 0": a bare line would get the default on restore.
		 */
		if (!timeout && c->thdr.timeout) {
			if (nfg_range_format(r, buf, sizeof(buf)) < 0)
				return -EPROTO;
			printf("add %s %s timeout 0\n", c->name, buf);
		} else {
			if (nfg_rsline_add_t(buf, sizeof(buf), c->name, r, timeout) < 0)
				return -EPROTO;
			fputs(buf, stdout);
		}
	} else {
		if (nfg_range_format(r, buf, sizeof(buf)) < 0)
			return -EPROTO;
		if (timeout)
			printf("%s timeout %" PRIu32 "\n", buf, timeout);
		else
			puts(buf);
	}
	return ferror(stdout) ? -EIO : 0;
}

/* Returns 0, or -ENOENT if the set vanished (and !must_exist). */
static int print_set(struct nfg_rs *h, const char *name, bool save,
		     bool must_exist, bool json)
{
	struct print_ctx c = { .name = name, .save = save, .json = json };
	struct nfg_err e;
	int ret;

	/*
	 * Counters of -j RANGESET, read before the dump (which folds the
	 * dynamic entries into the members it shows). A set gone now is
	 * reported by the dump.
	 */
	if (!save && nfg_rs_get_dynamic(h, name, &c.dhdr, &e) < 0)
		memset(&c.dhdr, 0, sizeof(c.dhdr));
	ret = nfg_rs_dump_timeout(h, name, &c.hdr, &c.thdr, print_range, &c, &e);
	if (ret == -ENOENT && !must_exist && !c.hdr_done)
		return -ENOENT;
	if (ret == -EIO)
		cli_flush_or_die(what);
	if (ret < 0)
		cli_die_err(what, &e, false);
	print_hdr(&c);
	if (json)
		puts("]}");
	return 0;
}

static bool opt_json(const char *a)
{
	return opt_none(a) || !strcmp(a, "--json");
}

static int set_list(int argc, char **argv)
{
	struct setlist l;
	struct nfg_rs *h;
	bool json = false;
	size_t i;
	int k, j;

	need_args(argc, argv, 1, 3, "list [NAME] [--json]", opt_json);
	for (k = j = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--json"))
			json = true;
		else
			argv[j++] = argv[k];
	}
	argc = j;
	if (argc > 2)
		cli_usage_die(what, "usage: nfguard set list [NAME] [--json]");
	if (argc == 2)
		check_name_or_die(argv[1], false);
	h = open_or_die();
	if (argc == 2) {
		print_set(h, argv[1], false, true, json);
	} else if (json) {
		all_sets_or_die(h, &l);
		putchar('[');
		for (i = 0; i < l.n; i++) {
			fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
			cli_json_str(stdout, l.s[i].name);
			printf(",\"family\":\"%s\",\"ranges\":%" PRIu32 ",\"maxelem\":%" PRIu32
			       ",\"references\":%" PRIu32 ",\"lookups\":%" PRIu64 ",\"hits\":%" PRIu64
			       ",\"memory\":%" PRIu64 "}",
			       nfg_family_name(l.s[i].family), l.s[i].count, l.s[i].maxelem,
			       l.s[i].refs, l.s[i].lookups, l.s[i].hits, l.s[i].memsize);
		}
		puts("]");
		free(l.s);
	} else {
		all_sets_or_die(h, &l);
		printf("%-31s %-6s %10s %10s %6s %14s %14s %12s\n", "NAME",
		       "FAMILY", "RANGES", "MAXELEM", "REFS", "LOOKUPS", "HITS",
		       "MEMORY");
		for (i = 0; i < l.n; i++)
			printf("%-31s %-6s %10" PRIu32 " %10" PRIu32 " %6" PRIu32
			       " %14" PRIu64 " %14" PRIu64 " %12" PRIu64 "\n",
			       l.s[i].name, nfg_family_name(l.s[i].family),
			       l.s[i].count, l.s[i].maxelem, l.s[i].refs,
			       l.s[i].lookups, l.s[i].hits, l.s[i].memsize);
		free(l.s);
	}
	cli_flush_or_die(what);
	nfg_rs_close(h);
	return 0;
}

static int set_save(int argc, char **argv)
{
	struct setlist l;
	struct nfg_rs *h;
	size_t i;

	need_args(argc, argv, 1, 2, "save [NAME]", opt_none);
	if (argc == 2)
		check_name_or_die(argv[1], false);
	h = open_or_die();
	if (argc == 2) {
		print_set(h, argv[1], true, true, false);
	} else {
		all_sets_or_die(h, &l);
		/* a set destroyed meanwhile is simply not saved */
		for (i = 0; i < l.n; i++)
			print_set(h, l.s[i].name, true, false, false);
		free(l.s);
	}
	cli_flush_or_die(what);
	nfg_rs_close(h);
	return 0;
}

/* ---- restore ------------------------------------------------------------ */

struct restore_ctx {
	struct nfg_rs *h;
	const char *path;
	struct nfg_rsplan plan;
	unsigned int errors;
	char open_err[256];	/* why c->h is NULL (--check only) */
};

static int restore_lookup(const char *name, uint8_t *family, void *data,
			  char *err, size_t errlen)
{
	struct restore_ctx *c = data;
	struct nfg_rs_info info;
	struct nfg_err e;

	if (!c->h) {
		/* --check without the module: nobody to ask */
		snprintf(err, errlen,
			 "set \"%s\" is not created before this line, and its family cannot be checked: %s",
			 name, c->open_err);
		return -1;
	}
	if (nfg_rs_get(c->h, name, &info, &e) < 0) {
		if (e.code == ENOENT)
			snprintf(err, errlen,
				 "set \"%s\" does not exist and is not created before this line",
				 name);
		else
			snprintf(err, errlen, "set \"%s\": %s", name,
				 nfg_err_str(&e));
		return -1;
	}
	*family = info.family;
	return 0;
}

static int restore_line(char *line, unsigned int lineno, void *data)
{
	struct restore_ctx *c = data;
	char err[256];

	if (nfg_rsplan_line(&c->plan, line, lineno, restore_lookup, c, err,
			    sizeof(err)) < 0) {
		if (++c->errors <= MAX_REPORTED_ERRORS)
			cli_err(what, "%s:%u: %s",
				strcmp(c->path, "-") ? c->path : "<stdin>",
				lineno, err);
	}
	return 0;
}

/* Sets this restore created, in order, so a failure can remove them. */
struct undo {
	char (*names)[XT_RANGESET_MAXNAMELEN];
	size_t n;
};

static void undo_created(struct nfg_rs *h, struct undo *u)
{
	struct nfg_err e;

	while (u->n > 0) {
		const char *name = u->names[--u->n];

		if (nfg_rs_destroy(h, name, &e) < 0)
			cli_err(what, "undo: cannot destroy set \"%s\": %s",
				name, nfg_err_str(&e));
	}
}

static int set_restore(int argc, char **argv)
{
	struct restore_ctx c = { .path = "-" };
	char (*tmp)[XT_RANGESET_MAXNAMELEN];
	bool *replace;
	struct undo u = { 0 };
	sigset_t block, old;
	size_t i, j;
	bool do_replace = false, check = false;
	struct nfg_rs_batch b;
	struct nfg_err e;
	int k;

	for (k = 1; k < argc; k++) {
		if ((!strcmp(argv[k], "-f") || !strcmp(argv[k], "--file")) &&
		    k + 1 < argc)
			c.path = argv[++k];
		else if (!strcmp(argv[k], "--replace") || !strcmp(argv[k], "-x"))
			do_replace = true;
		else if (!strcmp(argv[k], "--check") || !strcmp(argv[k], "-n"))
			check = true;
		else
			cli_usage_die(what, "%s\"%s\" (usage: nfguard set restore [-f FILE|-] [--replace] [--check])",
				      argv[k][0] == '-' ? "unknown option " : "unexpected argument ",
				      argv[k]);
	}
	if (check) {
		/*
		 * Validate only: nothing is sent but questions about sets the
		 * input does not create (their family), when the module can
		 * be asked at all.
		 */
		c.h = nfg_rs_open(&e);
		if (!c.h)
			snprintf(c.open_err, sizeof(c.open_err), "%s", nfg_err_str(&e));
	} else {
		c.h = open_or_die();
	}

	/* 1. Parse and validate everything. */
	if (cli_for_each_line(what, c.path, restore_line, &c) < 0)
		exit(CLI_EXIT_ERROR);
	if (c.errors) {
		if (c.errors > MAX_REPORTED_ERRORS)
			cli_err(what, "... %u more invalid lines",
				c.errors - MAX_REPORTED_ERRORS);
		cli_die(what, "%u invalid line%s%s",
			c.errors, c.errors == 1 ? "" : "s", check ? "" : ": nothing was changed");
	}
	if (check) {
		nfg_rsplan_free(&c.plan);
		nfg_rs_close(c.h);
		return 0;
	}

	/* 2. Check sets to create against the kernel. */
	replace = calloc(c.plan.n + 1, sizeof(*replace));
	tmp = calloc(c.plan.n + 1, sizeof(*tmp));
	u.names = calloc(c.plan.n + 1, sizeof(*u.names));
	if (!replace || !tmp || !u.names)
		cli_die(what, "out of memory");
	for (i = 0; i < c.plan.n; i++) {
		struct nfg_rsplan_set *s = &c.plan.sets[i];
		struct nfg_rs_info info;

		if (!s->create)
			continue;
		if (nfg_rs_get(c.h, s->name, &info, &e) == 0) {
			if (!do_replace) {
				cli_err(what,
					"line %u: set \"%s\" already exists (use --replace to replace its contents)",
					s->line, s->name);
				c.errors++;
			} else if (info.family != s->family) {
				cli_err(what,
					"line %u: set \"%s\" exists as %s, the input creates it as %s",
					s->line, s->name,
					nfg_family_name(info.family),
					nfg_family_name(s->family));
				c.errors++;
			}
			replace[i] = true;
		} else if (e.code != ENOENT) {
			cli_die_err(what, &e, false);
		}
	}
	if (c.errors)
		cli_die(what, "nothing was changed");

	/* Do not leave temporary or half-filled sets behind on ^C. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);

	/* 3. Create and fill new sets (or temporary twins of replaced ones). */
	for (i = 0; i < c.plan.n; i++) {
		struct nfg_rsplan_set *s = &c.plan.sets[i];
		const char *target = s->name;
		unsigned int tries = 0;

		if (!s->create)
			continue;
		if (replace[i]) {
			for (;;) {
				snprintf(tmp[i], sizeof(tmp[i]), "nfgtmp.%u.%u.%u",
					 (unsigned int)getpid() % 10000000u,
					 (unsigned int)(i % 100000), tries % 10u);
				if (nfg_rs_create_timeout(c.h, tmp[i], s->family,
							  s->maxelem, s->timeout,
							  &e) == 0)
					break;
				if (e.code != EEXIST || ++tries >= 10)
					goto fail_create;
			}
			target = tmp[i];
		} else if (nfg_rs_create_timeout(c.h, s->name, s->family,
						 s->maxelem, s->timeout, &e) < 0) {
			goto fail_create;
		}
		snprintf(u.names[u.n++], XT_RANGESET_MAXNAMELEN, "%s", target);
		if (nfg_rs_add_timeout(c.h, target, s->elems.r,
				       s->timed ? s->tmo : NULL, s->elems.n,
				       &b, &e) < 0) {
			cli_err(what, "line %u: set \"%s\": %s", s->line,
				s->name, nfg_err_str(&e));
			goto fail;
		}
		continue;
fail_create:
		cli_err(what, "line %u: cannot create set \"%s\": %s", s->line,
			s->name, nfg_err_str(&e));
		goto fail;
	}

	/* 4. Adds to sets that existed before (cannot be undone). */
	for (i = 0; i < c.plan.n; i++) {
		struct nfg_rsplan_set *s = &c.plan.sets[i];

		if (s->create || !s->elems.n)
			continue;
		if (nfg_rs_add_timeout(c.h, s->name, s->elems.r,
				       s->timed ? s->tmo : NULL, s->elems.n,
				       &b, &e) < 0) {
			cli_err(what, "set \"%s\" (first named on line %u): %s",
				s->name, s->line, nfg_err_str(&e));
			if (b.requests_done)
				cli_err(what,
					"%zu of %zu requests to existing set \"%s\" had been applied and stay applied",
					b.requests_done, b.requests, s->name);
			goto fail;
		}
	}

	/* 5. Swap replaced sets into place, all or none. */
	for (i = 0; i < c.plan.n; i++) {
		if (!replace[i])
			continue;
		if (nfg_rs_swap(c.h, c.plan.sets[i].name, tmp[i], &e) < 0) {
			cli_err(what, "cannot swap in set \"%s\": %s",
				c.plan.sets[i].name, nfg_err_str(&e));
			for (j = 0; j < i; j++) {
				struct nfg_err e2;

				if (replace[j] &&
				    nfg_rs_swap(c.h, c.plan.sets[j].name,
						tmp[j], &e2) < 0)
					cli_err(what,
						"undo: cannot swap back set \"%s\": %s",
						c.plan.sets[j].name,
						nfg_err_str(&e2));
			}
			goto fail;
		}
	}
	/* The temporary sets now hold the old contents. */
	for (i = 0; i < c.plan.n; i++)
		if (replace[i] && nfg_rs_destroy(c.h, tmp[i], &e) < 0)
			cli_err(what,
				"warning: cannot destroy temporary set \"%s\": %s",
				tmp[i], nfg_err_str(&e));

	sigprocmask(SIG_SETMASK, &old, NULL);
	nfg_rsplan_free(&c.plan);
	free(replace);
	free(tmp);
	free(u.names);
	nfg_rs_close(c.h);
	return 0;

fail:
	undo_created(c.h, &u);
	cli_err(what, "sets created by this restore were removed%s",
		do_replace ? ", replaced sets keep their old contents" : "");
	sigprocmask(SIG_SETMASK, &old, NULL);
	exit(CLI_EXIT_ERROR);
}

/* ---- dispatch ----------------------------------------------------------- */

int cmd_set(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "create", set_create },
		{ "destroy", set_simple },
		{ "add", set_adddel },
		{ "del", set_adddel },
		{ "flush", set_simple },
		{ "test", set_test },
		{ "swap", set_simple },
		{ "rename", set_simple },
		{ "list", set_list },
		{ "save", set_save },
		{ "restore", set_restore },
	};
	size_t i;

	if (argc < 2) {
		usage_set(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage_set(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		set_what(argv[1], argc > 2 && strcmp(argv[1], "restore") &&
			 argv[2][0] != '-' ? argv[2] : NULL);
		return cmds[i].fn(argc - 1, argv + 1);
	}
	cli_err("set", "unknown command \"%s\" (try nfguard set help)", argv[1]);
	return CLI_EXIT_USAGE;
}
