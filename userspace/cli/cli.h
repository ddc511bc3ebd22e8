/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfguard CLI: shared helpers (util.c) and the sub-command entry points. Every error is printed as
 * "nfguard: <what>: <reason>" on stderr and the command exits with a status of
 * the table below; a line that is not fatal starts "nfguard: warning:". Every
 * sub-command answers -h/--help with its usage on stdout (exit 0).
 */
#ifndef NFG_CLI_H
#define NFG_CLI_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Exit status of every command (nfguard(8), EXIT STATUS; ipset's convention):
 * 0 success; 1 error (the kernel refused, an invalid input file, ...) and
 * set test's "not in the set"; 2 bad arguments (found before anything is
 * sent to the kernel); 3 a kernel module is not loaded; 4 permission denied.
 */
#define CLI_EXIT_ERROR	1
#define CLI_EXIT_USAGE	2
#define CLI_EXIT_NOMOD	3
#define CLI_EXIT_PERM	4
#define CLI_EXIT_HELP \
	"Exit status: 0 success, 1 error (set test: not in the set), 2 bad arguments,\n" \
	"3 kernel module not loaded, 4 permission denied (CAP_NET_ADMIN).\n"

struct nfg_err;

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
 * @s as a JSON string, quotes included: valid UTF-8 as it is, control
 * characters as \u00XX, each byte that is not UTF-8 as \udcXX (a lone
 * surrogate, Python's surrogateescape), so the output is valid JSON text
 * whatever the bytes and names that differ in any byte stay distinct.
 */
void cli_json_str(FILE *f, const char *s);

/* cli_err() then exit(@code). */
void cli_die_code(int code, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
/* cli_die() with a library error: exit 4 for EPERM/EACCES, 3 for ENOENT
 * while @opening (no generic netlink family: the module is not loaded), else 1. */
void cli_die_err(const char *what, const struct nfg_err *e, bool opening)
	__attribute__((noreturn));
int cli_exit_for(const struct nfg_err *e, bool opening);
/*
 * The generic netlink family of @module is absent: exit 3 with what the
 * admin needs. Installed for the running kernel (updates/dkms,
 * updates/nfguard or extra under /lib/modules/RELEASE, or the tree named by
 * NFGUARD_MODULES_DIR): modprobe (depmod first when modules.dep lacks it).
 * Not built for it: says so, the kernels that have the modules, dkms status,
 * headers, the supported kernels, and suggests no modprobe.
 */
void cli_die_nomod(const char *what, const char *module)
	__attribute__((noreturn));
/* Kernels nfguard's modules build for (dkms.conf's BUILD_EXCLUSIVE_*). */
#define CLI_KERNELS \
	"6.1 and later with xtables, conntrack, SYNPROXY, SYN cookies and IPv6 " \
	"(tested: Debian 12's 6.1 and 6.12, Debian 13's trixie-backports 7.3)"
/* Bad arguments: cli_err() then exit(2). */
#define cli_usage_die(what, ...) cli_die_code(CLI_EXIT_USAGE, what, __VA_ARGS__)

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
