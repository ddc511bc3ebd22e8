// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard: command line front end of libnfguard.
 *
 *   nfguard set ...        named IPv4/IPv6 range sets (rangeset match)
 *
 * Other sub-commands (stats, kconnlimit, syncookie, rtcache, protect) are
 * added to the table below by their owners.
 */
#define _GNU_SOURCE	/* POSIX/GNU APIs also under -std=c11 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* syncookie.c */
int cmd_syncookie(int argc, char **argv);
void usage_syncookie(FILE *f);

/* kconnlimit.c */
int cmd_kconnlimit(int argc, char **argv);
void usage_kconnlimit(FILE *f);

/* rtcache.c */
int cmd_rtcache(int argc, char **argv);
void usage_rtcache(FILE *f);

void cli_err(const char *what, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("nfguard: ", stderr);
	if (what && *what)
		fprintf(stderr, "%s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_die(const char *what, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("nfguard: ", stderr);
	if (what && *what)
		fprintf(stderr, "%s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(CLI_EXIT_ERROR);
}

void cli_flush_or_die(const char *what)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_die(what, "write error on standard output: %s",
			strerror(errno ? errno : EIO));
}

int cli_for_each_line(const char *what, const char *path,
		      int (*fn)(char *line, unsigned int lineno, void *data),
		      void *data)
{
	bool is_stdin = !strcmp(path, "-");
	FILE *f = is_stdin ? stdin : fopen(path, "re");
	unsigned int lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	if (!f) {
		int err = errno;

		cli_err(what, "cannot open %s: %s", path, strerror(err));
		return -err;
	}
	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if ((size_t)n != strlen(line)) {
			cli_err(what, "%s:%u: NUL byte in line",
				is_stdin ? "<stdin>" : path, lineno);
			ret = -EINVAL;
			break;
		}
		ret = fn(line, lineno, data);
		if (ret < 0)
			break;
		errno = 0;
	}
	if (ret == 0 && ferror(f)) {
		int err = errno ? errno : EIO;

		cli_err(what, "error reading %s: %s",
			is_stdin ? "<stdin>" : path, strerror(err));
		ret = -err;
	}
	free(line);
	if (!is_stdin)
		fclose(f);
	return ret;
}

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
		"\n");
	usage_set(f);
	fputc('\n', f);
	usage_syncookie(f);
	fputc('\n', f);
	usage_kconnlimit(f);
	fputc('\n', f);
	usage_rtcache(f);
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
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_ERROR;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("nfguard %s\n", NFG_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	cli_err(NULL, "unknown command \"%s\" (try nfguard --help)", argv[1]);
	return CLI_EXIT_ERROR;
}
