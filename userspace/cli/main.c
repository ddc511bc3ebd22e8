// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard: command line front end of libnfguard.
 *
 *   nfguard set ...        named IPv4/IPv6 range sets (rangeset match)
 *   nfguard kconnlimit|syncookie|rtcache ...   the other extensions
 *   nfguard stats ...      every extension's statistics (text, JSON, Prometheus)
 *   nfguard protect|unprotect ...   a protection profile as nftables rules
 *   nfguard version
 *
 * Dispatch only: the sub-commands live in their own files, the helpers they
 * share in util.c (declared in cli.h). No sub-command calls main.c.
 */
#define _GNU_SOURCE	/* POSIX/GNU APIs also under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: nfguard [-h|--help] [-V|--version] COMMAND ...\n"
		"\n"
		"Commands:\n"
		"  set      named IPv4/IPv6 range sets for -m rangeset\n"
		"  syncookie   the SYNCOOKIE target: stats, allowlist, secret\n"
		"  kconnlimit  tables of -m kconnlimit rules: list, top\n"
		"  rtcache     the RTCACHE route cache: stats, list, flush\n"
		"  stats       statistics of every extension (text, JSON, Prometheus)\n"
		"  protect     install a protection profile as nftables rules (unprotect: remove it)\n"
		"  version     print the version\n"
		"Each command takes -h/--help.\n"
		CLI_EXIT_HELP
		"\n");
	usage_set(f);
	fputc('\n', f);
	usage_syncookie(f);
	fputc('\n', f);
	usage_kconnlimit(f);
	fputc('\n', f);
	usage_rtcache(f);
	fputc('\n', f);
	usage_stats(f);
	fputc('\n', f);
	usage_protect(f);
	fputc('\n', f);
	usage_version(f);
	fprintf(f, "\nSee nfguard(8).\n");
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "set", cmd_set },
	{ "syncookie", cmd_syncookie },
	{ "kconnlimit", cmd_kconnlimit },
	{ "rtcache", cmd_rtcache },
	{ "stats", cmd_stats },
	{ "protect", cmd_protect },
	{ "unprotect", cmd_unprotect },
	{ "version", cmd_version },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	cli_err(NULL, "unknown command \"%s\" (try nfguard --help)", argv[1]);
	return CLI_EXIT_USAGE;
}
