// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard CLI: the helpers every sub-command shares (error reporting, line
 * reading, output flushing). The bottom layer of the CLI: it calls no
 * sub-command and not main.c.
 */
#define _GNU_SOURCE	/* getline() also under -std=c11 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "libnfguard.h"
#include "nfg_lib.h"

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

/* ---- a module that is not there ------------------------------------------------ */

/* Where nfguard's modules are installed under /lib/modules/RELEASE. */
static const char *const mod_dirs[] = { "updates/dkms", "updates/nfguard", "extra" };
static const char *const mod_exts[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };

/* /lib/modules, or NFGUARD_MODULES_DIR (tests: a fake tree). */
static const char *modules_root(void)
{
	const char *d = getenv("NFGUARD_MODULES_DIR");

	return d && *d ? d : "/lib/modules";
}

/* @module's file under ROOT/@release, as "updates/dkms/NAME.ko[.xz]" in @rel. */
static bool module_file(const char *release, const char *module, char *rel, size_t len)
{
	char path[PATH_MAX];
	struct stat st;
	size_t d, x;

	for (d = 0; d < sizeof(mod_dirs) / sizeof(mod_dirs[0]); d++)
		for (x = 0; x < sizeof(mod_exts) / sizeof(mod_exts[0]); x++) {
			snprintf(rel, len, "%s/%s%s", mod_dirs[d], module, mod_exts[x]);
			if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", modules_root(),
					     release, rel) < sizeof(path) &&
			    !stat(path, &st) && S_ISREG(st.st_mode))
				return true;
		}
	return false;
}

/* Whether ROOT/@release/modules.dep lists @rel (what modprobe reads). */
static bool in_modules_dep(const char *release, const char *rel)
{
	char path[PATH_MAX], *line = NULL, *colon;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/modules.dep", modules_root(), release);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		colon = strchr(line, ':');
		if (colon) {
			*colon = '\0';
			found = !strcmp(line, rel);
		}
	}
	free(line);
	fclose(f);
	return found;
}

static int cmp_str(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* "  nfguard's modules are installed for: A, B" (the kernels that have @module). */
static void nomod_kernels(const char *module)
{
	char **names = NULL, **more, rel[PATH_MAX];
	size_t n = 0, i;
	struct dirent *de;
	DIR *dir;

	dir = opendir(modules_root());
	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || !module_file(de->d_name, module, rel, sizeof(rel)))
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more)
			break;
		names = more;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	if (dir)
		closedir(dir);
	if (!n) {
		fprintf(stderr, "  nfguard's modules are installed for no kernel (in %s)\n",
			modules_root());
	} else {
		qsort(names, n, sizeof(*names), cmp_str);
		fputs("  nfguard's modules are installed for: ", stderr);
		for (i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
		fputc('\n', stderr);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Whether an executable @prog is on $PATH. */
static bool in_path(const char *prog)
{
	const char *p = getenv("PATH"), *end;
	char path[PATH_MAX];

	for (; p && *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		if ((size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)(end - p), p, prog) <
		    sizeof(path) && end > p && !access(path, X_OK))
			return true;
	}
	return false;
}

/* "  dkms status: LINE" for each line of `dkms status -m nfguard`; true if dkms is there. */
static bool nomod_dkms(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned int n = 0;
	FILE *p;

	if (!in_path("dkms")) {
		fputs("  dkms is not installed (the nfguard-dkms package builds nfguard's modules for each kernel)\n",
		      stderr);
		return false;
	}
	fflush(stderr);
	p = popen("dkms status -m nfguard 2>&1", "re");
	while (p && (len = getline(&line, &cap, p)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (*line && n++ < 20)
			fprintf(stderr, "  dkms status: %s\n", line);
	}
	free(line);
	if (p)
		pclose(p);
	if (!n)
		fputs("  dkms status: nfguard is not registered (install nfguard-dkms)\n", stderr);
	return true;
}

void cli_die_nomod(const char *what, const char *module)
{
	char rel[PATH_MAX], path[PATH_MAX];
	struct utsname u;
	struct stat st;
	bool dkms;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	if (module_file(u.release, module, rel, sizeof(rel))) {
		if (in_modules_dep(u.release, rel))
			cli_die_code(CLI_EXIT_NOMOD, what,
				     "the %s kernel module is installed for %s (%s) but not loaded: modprobe %s (its error, or dmesg, says why it does not load)",
				     module, u.release, rel, module);
		cli_die_code(CLI_EXIT_NOMOD, what,
			     "the %s kernel module is installed for %s (%s) but not loaded, and modules.dep does not list it: depmod %s, then modprobe %s",
			     module, u.release, rel, u.release, module);
	}
	/* nothing modprobe could load: say why, and what would build it */
	cli_err(what, "the running kernel %s has no %s module: nfguard's modules are not built for it (none in %s/%s/%s, %s or %s)",
		u.release, module, modules_root(), u.release, mod_dirs[0], mod_dirs[1], mod_dirs[2]);
	nomod_kernels(module);
	dkms = nomod_dkms();
	snprintf(path, sizeof(path), "%s/%s/build", modules_root(), u.release);
	if (stat(path, &st) && dkms)
		fprintf(stderr, "  no headers for %s (%s): apt-get install linux-headers-%s, then dkms autoinstall -k %s\n",
			u.release, path, u.release, u.release);
	else if (stat(path, &st))
		fprintf(stderr, "  no headers for %s (%s): apt-get install linux-headers-%s nfguard-dkms\n",
			u.release, path, u.release);
	else if (dkms)
		fprintf(stderr, "  headers for %s are installed: dkms autoinstall -k %s builds the modules (its make.log says why if it fails)\n",
			u.release, u.release);
	else
		fprintf(stderr, "  headers for %s are installed: install nfguard-dkms to build the modules\n",
			u.release);
	fputs("  supported kernels: " CLI_KERNELS "\n", stderr);
	exit(CLI_EXIT_NOMOD);
}

void cli_flush_or_die(const char *what)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_die(what, "write error on standard output: %s",
			strerror(errno ? errno : EIO));
}

void cli_json_str(FILE *f, const char *s)
{
	struct nfg_sbuf b = { 0 };
	char *q;

	nfg_sbuf_json_str(&b, s);
	q = nfg_sbuf_take(&b);
	if (!q)
		cli_die("json", "out of memory");
	fputs(q, f);
	free(q);
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
