// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard syncookie: the SYNCOOKIE target's allowlist, counters and
 * cookie secret in the current network namespace.
 *
 *   nfguard syncookie stats
 *   nfguard syncookie allowlist list | save | flush
 *   nfguard syncookie allowlist add ADDR[/PREFIX] [timeout SECONDS]
 *   nfguard syncookie allowlist del ADDR[/PREFIX]
 *   nfguard syncookie allowlist restore [-f FILE]   (stdin by default)
 *   nfguard syncookie secret set HEX32 | - | -f FILE
 *   nfguard syncookie secret rotate
 *
 * list prints "ADDR/PREFIX expires-in SECONDS"; save prints
 * "add ADDR/PREFIX timeout SECONDS" lines (seconds left), which restore
 * reads back.
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

#include "cli.h"
#include "libnfguard.h"
#include "stats.h"

void usage_syncookie(FILE *f)
{
	fprintf(f,
		"nfguard syncookie stats [--json]\n"
		"nfguard syncookie allowlist list [--json] | save | flush\n"
		"nfguard syncookie allowlist add ADDR[/PREFIX] [timeout SECONDS]\n"
		"nfguard syncookie allowlist del ADDR[/PREFIX]\n"
		"nfguard syncookie allowlist restore [-f FILE]\n"
		"nfguard syncookie secret set HEX32|-|-f FILE | secret rotate\n"
		"  the SYNCOOKIE target's allowlist (sources that completed a cookie\n"
		"  handshake), counters and cookie secret, in the current netns\n"
		CLI_EXIT_HELP);
}

static struct nfg_sc *sc_open_or_die(void)
{
	struct nfg_err e;
	struct nfg_sc *h = nfg_sc_open(&e);

	if (!h) {
		if (e.code == ENOENT)
			cli_die_nomod("syncookie", "xt_SYNCOOKIE");
		cli_die_err("syncookie", &e, true);
	}
	return h;
}

static int sc_parse_entry(const char *s, struct nfg_sc_entry *ent)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long p;

	memset(ent, 0, sizeof(*ent));
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, ent->addr) == 1)
		ent->family = NFPROTO_IPV4;
	else if (inet_pton(AF_INET6, buf, ent->addr) == 1)
		ent->family = NFPROTO_IPV6;
	else
		return -1;
	ent->prefix = ent->family == NFPROTO_IPV6 ? 128 : 32;
	if (slash) {
		errno = 0;
		p = strtoul(slash, &end, 10);
		if (errno || *end || !*slash || p < 1 || p > ent->prefix)
			return -1;
		ent->prefix = p;
	}
	return 0;
}

static void sc_format(const struct nfg_sc_entry *ent, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(ent->family == NFPROTO_IPV6 ? AF_INET6 : AF_INET, ent->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, ent->prefix);
}

/* how allowlist list/save prints */
enum sc_fmt { SC_LIST, SC_SAVE, SC_JSON };

static int sc_print_cb(const struct nfg_sc_entry *ent, void *data)
{
	enum sc_fmt *fmt = data;
	char b[INET6_ADDRSTRLEN + 8];
	static bool more;

	sc_format(ent, b, sizeof(b));
	if (*fmt == SC_JSON)
		printf("%s{\"prefix\":\"%s\",\"expires_in\":%" PRIu32 "}", more ? "," : "",
		       b, ent->timeout), more = true;
	else if (*fmt == SC_SAVE)
		printf("add %s timeout %" PRIu32 "\n", b, ent->timeout ? ent->timeout : 1);
	else
		printf("%s expires-in %" PRIu32 "\n", b, ent->timeout);
	return 0;
}

static unsigned long sc_timeout(const char *s)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || *s == '-' || v < 1 || v > 7UL * 24 * 3600)
		cli_usage_die("syncookie", "timeout must be 1..604800 seconds, not \"%s\"", s);
	return v;
}

/* "ADDR[/PREFIX] [timeout SECONDS]" (no timeout for del) into @ent */
static int sc_parse_words(int argc, char **argv, bool del, const char *what,
			  struct nfg_sc_entry *ent)
{
	if (argc < 1 || sc_parse_entry(argv[0], ent) < 0) {
		cli_err(what, "expected ADDR[/PREFIX], got \"%s\"", argc ? argv[0] : "");
		return -1;
	}
	if (!del && argc == 3 && !strcmp(argv[1], "timeout"))
		ent->timeout = sc_timeout(argv[2]);
	else if (argc != 1) {
		cli_err(what, "unexpected \"%s\"", argv[1]);
		return -1;
	}
	return 0;
}

/* exit status of the last failed add/del */
static int sc_exit = CLI_EXIT_ERROR;

static int sc_add_words(struct nfg_sc *h, int argc, char **argv, bool del,
			const char *what)
{
	struct nfg_sc_entry ent;
	struct nfg_err e;

	if (sc_parse_words(argc, argv, del, what, &ent) < 0)
		return -1;
	if ((del ? nfg_sc_del(h, &ent, &e) : nfg_sc_add(h, &ent, &e)) < 0) {
		cli_err(what, "%s: %s", argv[0], nfg_err_str(&e));
		sc_exit = cli_exit_for(&e, false);
		return -1;
	}
	return 0;
}

static int sc_restore_line(char *line, unsigned int lineno, void *data)
{
	struct nfg_sc *h = data;
	char *w[8], *save = NULL, *t;
	char what[64];
	int n = 0;

	for (t = strtok_r(line, " \t", &save); t && n < 8; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	if (!n || w[0][0] == '#')
		return 0;
	snprintf(what, sizeof(what), "restore: line %u", lineno);
	if (strcmp(w[0], "add")) {
		cli_err(what, "expected \"add ADDR[/PREFIX] [timeout SECONDS]\"");
		return -1;
	}
	return sc_add_words(h, n - 1, w + 1, false, what);
}

/*
 * The first line of @path (NULL: stdin) into @buf, without its line end
 * or trailing blanks. -1 with errno when it cannot be read or is empty.
 */
static int sc_read_secret(const char *path, char *buf, size_t n)
{
	FILE *f = path ? fopen(path, "r") : stdin;
	size_t len;
	char *ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)n, f);
	if (path)
		fclose(f);
	if (!ok) {
		errno = errno ? errno : ENODATA;
		return -1;
	}
	len = strlen(buf);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
		       buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		buf[--len] = '\0';
	return 0;
}

static int sc_hex16(const char *s, uint8_t *out)
{
	unsigned int i, v;

	if (strlen(s) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i + 1]))
			return -1;
		out[i] = v;
	}
	return 0;
}

int cmd_syncookie(int argc, char **argv)
{
	struct stats_sc c;
	struct nfg_err e;
	struct nfg_sc *h;
	const char *sub = argc > 1 ? argv[1] : "";
	const char *op = argc > 2 ? argv[2] : "";
	int ret = 0;

	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage_syncookie(stdout);
		return 0;
	} else if (!strcmp(sub, "stats") &&
		   (argc == 2 || (argc == 3 && !strcmp(op, "--json")))) {
		h = sc_open_or_die();
		if (nfg_sc_stats_ext(h, &c.c, &c.x, &e) < 0)
			cli_die_err("syncookie stats", &e, false);
		if (argc == 3)
			stats_print_sc_json(stdout, &c);
		else
			stats_print_sc_lines(stdout, &c);
	} else if (!strcmp(sub, "allowlist") &&
		   (!strcmp(op, "list") || !strcmp(op, "save")) &&
		   (argc == 3 || (argc == 4 && !strcmp(op, "list") &&
				  !strcmp(argv[3], "--json")))) {
		enum sc_fmt fmt = argc == 4 ? SC_JSON : !strcmp(op, "save") ? SC_SAVE : SC_LIST;

		h = sc_open_or_die();
		if (fmt == SC_JSON)
			putchar('[');
		if (nfg_sc_list(h, sc_print_cb, &fmt, &e) < 0)
			cli_die_err("syncookie allowlist", &e, false);
		if (fmt == SC_JSON)
			puts("]");
	} else if (!strcmp(sub, "allowlist") && !strcmp(op, "flush") && argc == 3) {
		h = sc_open_or_die();
		if (nfg_sc_flush(h, NULL, &e) < 0)
			cli_die_err("syncookie allowlist flush", &e, false);
	} else if (!strcmp(sub, "allowlist") &&
		   (!strcmp(op, "add") || !strcmp(op, "del")) && argc >= 4) {
		bool del = !strcmp(op, "del");
		const char *what = del ? "syncookie allowlist del" : "syncookie allowlist add";
		struct nfg_sc_entry ent;

		/* a bad address is reported as such, also without the module */
		if (sc_parse_words(argc - 3, argv + 3, del, what, &ent) < 0)
			return CLI_EXIT_USAGE;
		h = sc_open_or_die();
		ret = sc_add_words(h, argc - 3, argv + 3, del, what);
	} else if (!strcmp(sub, "allowlist") && !strcmp(op, "restore") &&
		   (argc == 3 || (argc == 5 && !strcmp(argv[3], "-f")))) {
		h = sc_open_or_die();
		ret = cli_for_each_line("syncookie allowlist restore",
					argc == 5 ? argv[4] : "-", sc_restore_line, h);
	} else if (!strcmp(sub, "secret") && !strcmp(op, "rotate") && argc == 3) {
		h = sc_open_or_die();
		if (nfg_sc_secret_rotate(h, &e) < 0)
			cli_die_err("syncookie secret rotate", &e, false);
	} else if (!strcmp(sub, "secret") && !strcmp(op, "set") &&
		   (argc == 4 || (argc == 5 && !strcmp(argv[3], "-f")))) {
		uint8_t key[16];
		char line[128];
		int bad;

		/* "-" or "-f FILE": off the command line (visible in ps, /proc) */
		if (argc == 5 || !strcmp(argv[3], "-")) {
			if (sc_read_secret(argc == 5 ? argv[4] : NULL, line, sizeof(line)) < 0)
				cli_die("syncookie secret set", "cannot read the secret from %s: %s",
					argc == 5 ? argv[4] : "stdin", strerror(errno));
			bad = sc_hex16(line, key) < 0;
			explicit_bzero(line, sizeof(line));
		} else {
			bad = sc_hex16(argv[3], key) < 0;
		}
		if (bad)
			cli_usage_die("syncookie secret set",
				      "the secret is 32 hexadecimal digits (16 bytes)");
		h = sc_open_or_die();
		ret = nfg_sc_secret_set(h, key, &e);
		explicit_bzero(key, sizeof(key));
		if (ret < 0)
			cli_die_err("syncookie secret set", &e, false);
	} else {
		if (argc > 1)
			cli_err("syncookie", "unknown sub-command or bad arguments: \"%s%s%s\"", sub,
				*op ? " " : "", op);
		usage_syncookie(stderr);
		return CLI_EXIT_USAGE;
	}
	nfg_sc_close(h);
	cli_flush_or_die("syncookie");
	return ret < 0 ? sc_exit : 0;
}
