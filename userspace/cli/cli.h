/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfguard CLI: shared helpers (util.c) and the sub-command entry points. Every error is printed as
 * "nfguard: <what>: <reason>" on stderr and the command exits 1. Every
 * sub-command answers -h/--help with its usage on stdout (exit 0).
 */
#ifndef NFG_CLI_H
#define NFG_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define CLI_EXIT_ERROR	1
/* protect/unprotect (nfguard(8), EXIT STATUS) */
#define CLI_EXIT_USAGE	2	/* bad arguments */
#define CLI_EXIT_NOMOD	3	/* a kernel module is missing */
#define CLI_EXIT_PERM	4	/* permission denied (CAP_NET_ADMIN) */

/* Print "nfguard: <what>: <message>\n" to stderr. */
void cli_err(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* cli_err() then exit(1). */
void cli_die(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/*
 * Call fn for every line of @path ("-" = stdin), with 1-based line
 * numbers; the line has no trailing newline and may be modified. fn
 * returns 0 to go on, <0 to stop. Returns 0, fn's negative value, or
 * -errno on I/O errors (reported with cli_err under @what).
 */
int cli_for_each_line(const char *what, const char *path,
		      int (*fn)(char *line, unsigned int lineno, void *data),
		      void *data);

/*
 * @s as a JSON string, quotes included. Control characters and bytes
 * outside ASCII are written as \u00XX escapes, so the output is valid JSON
 * (UTF-8) whatever the bytes.
 */
void cli_json_str(FILE *f, const char *s);

/* Flush stdout; report a write error (e.g. EPIPE, ENOSPC) and exit 1. */
void cli_flush_or_die(const char *what);

/*
 * Sub-commands, one file each, called only by main.c: argv[0] is the
 * sub-command name ("set", ...).
 */
int cmd_set(int argc, char **argv);
void usage_set(FILE *f);
int cmd_kconnlimit(int argc, char **argv);
void usage_kconnlimit(FILE *f);
int cmd_syncookie(int argc, char **argv);
void usage_syncookie(FILE *f);
int cmd_rtcache(int argc, char **argv);
void usage_rtcache(FILE *f);
int cmd_stats(int argc, char **argv);
void usage_stats(FILE *f);
int cmd_protect(int argc, char **argv);
int cmd_unprotect(int argc, char **argv);
void usage_protect(FILE *f);
int cmd_version(int argc, char **argv);
void usage_version(FILE *f);

#endif /* NFG_CLI_H */
