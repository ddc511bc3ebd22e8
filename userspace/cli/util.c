// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard CLI: the helpers every sub-command shares (error reporting, line
 * reading, output flushing). The bottom layer of the CLI: it calls no
 * sub-command and not main.c.
 */
#define _GNU_SOURCE	/* getline() also under -std=c11 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "libnfguard.h"

static void cli_verr(const char *what, const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("nfguard: ", stderr);
	if (what && *what)
		fprintf(stderr, "%s: ", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_err(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(what, fmt, ap);
	va_end(ap);
}

void cli_die(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(what, fmt, ap);
	va_end(ap);
	exit(CLI_EXIT_ERROR);
}

void cli_die_code(int code, const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_verr(what, fmt, ap);
	va_end(ap);
	exit(code);
}

int cli_exit_for(const struct nfg_err *e, bool opening)
{
	if (e->code == EPERM || e->code == EACCES)
		return CLI_EXIT_PERM;
	/* opening: no generic netlink family, the module is not loaded */
	if (opening && e->code == ENOENT)
		return CLI_EXIT_NOMOD;
	return CLI_EXIT_ERROR;
}

void cli_die_err(const char *what, const struct nfg_err *e, bool opening)
{
	cli_die_code(cli_exit_for(e, opening), what, "%s", nfg_err_str(e));
}

void cli_flush_or_die(const char *what)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_die(what, "write error on standard output: %s",
			strerror(errno ? errno : EIO));
}

void cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
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
