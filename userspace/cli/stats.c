// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard stats: the statistics of every extension in one report.
 *
 *   nfguard stats [--json | --prometheus] [--watch [SECONDS]] [-o FILE]
 *
 * Each extension is first checked with nfg_ext_loaded() (a family dump,
 * which never loads a module): one whose module is not loaded is reported
 * absent, not an error. The numbers come from the same library calls as
 * "nfguard set list", "kconnlimit list", "syncookie stats" and
 * "rtcache stats"; stats_fmt.c renders them.
 *
 * Exit status: 0 when every loaded extension was read (absent ones
 * included in the report), 1 when one could not be read (it is reported
 * with its error, the others as usual), on bad arguments or when the
 * report could not be written. --watch runs until SIGINT/SIGTERM (then 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "stats.h"

void usage_stats(FILE *f)
{
	fprintf(f,
		"nfguard stats [--json | --prometheus] [--watch [SECONDS]] [-o FILE]\n"
		"  statistics of every extension (rangeset sets, kconnlimit rules,\n"
		"  SYNCOOKIE and RTCACHE counters) in this network namespace; an\n"
		"  extension whose module is not loaded is reported as not loaded.\n"
		"  --json        one JSON document per report (schema in nfguard(8))\n"
		"  --prometheus  Prometheus text format (node_exporter textfile collector)\n"
		"  --watch [S]   report again every S seconds (default 2) until interrupted\n"
		"  -o FILE       write each report to FILE, replaced atomically\n"
		"  exit 0 also when extensions are not loaded; 1: a loaded one could not be read\n"
		CLI_EXIT_HELP);
}

/*
 * The sets' headers (one dump), then each set's timeout and packet-path
 * facts (a LIST doit each). A set destroyed in between is left out.
 */
static int collect_sets(struct nfg_rs *h, struct stats_snap *s, struct nfg_err *e)
{
	struct nfg_rs_info *info = NULL;
	size_t i, n = 0;
	int ret = nfg_rs_list_all(h, &info, &n, e);

	if (ret < 0 || !n)
		goto out;
	s->sets = calloc(n, sizeof(*s->sets));
	if (!s->sets) {
		ret = -ENOMEM;
		e->code = ENOMEM;
		e->msg[0] = '\0';
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct stats_set *set = &s->sets[s->nsets];

		set->info = info[i];
		ret = nfg_rs_get_timeout(h, info[i].name, &set->tinfo, e);
		if (!ret)
			ret = nfg_rs_get_dynamic(h, info[i].name, &set->dinfo, e);
		if (ret == -ENOENT)
			continue;	/* destroyed (or renamed) since the dump */
		if (ret < 0)
			goto out;
		s->nsets++;
	}
	ret = 0;
out:
	free(info);
	return ret;
}

static int collect_rs(struct stats_snap *s, struct nfg_err *e)
{
	struct nfg_rs *h = nfg_rs_open(e);
	int ret = h ? collect_sets(h, s, e) : -e->code;

	nfg_rs_close(h);
	return ret;
}

static int collect_kcl(struct stats_snap *s, struct nfg_err *e)
{
	struct nfg_kcl *h = nfg_kcl_open(e);
	int ret = h ? nfg_kcl_list_all(h, &s->rules, &s->nrules, e) : -e->code;

	nfg_kcl_close(h);
	return ret;
}

static int collect_sc(struct stats_snap *s, struct nfg_err *e)
{
	struct nfg_sc *h = nfg_sc_open(e);
	int ret = h ? nfg_sc_stats_ext(h, &s->sc.c, &s->sc.x, e) : -e->code;

	nfg_sc_close(h);
	return ret;
}

static int collect_rtc(struct stats_snap *s, struct nfg_err *e)
{
	struct nfg_rtc *h = nfg_rtc_open(e);
	int ret = h ? nfg_rtc_stats(h, &s->rtc, e) : -e->code;

	nfg_rtc_close(h);
	return ret;
}

static int (*const collectors[NFG_EXT_COUNT])(struct stats_snap *, struct nfg_err *) = {
	[NFG_EXT_RANGESET] = collect_rs,
	[NFG_EXT_KCONNLIMIT] = collect_kcl,
	[NFG_EXT_SYNCOOKIE] = collect_sc,
	[NFG_EXT_RTCACHE] = collect_rtc,
};

/* Fill @s; false if a loaded extension could not be read (reported). */
static bool collect(struct stats_snap *s)
{
	unsigned int x;
	bool ok = true;

	memset(s, 0, sizeof(*s));
	s->time = (int64_t)time(NULL);
	for (x = 0; x < NFG_EXT_COUNT; x++) {
		struct stats_ext *se = &s->ext[x];
		struct nfg_err e = { 0 };
		int loaded = nfg_ext_loaded(x, &e);
		int ret = loaded > 0 ? collectors[x](s, &e) : loaded;

		if (loaded == 0 || ret == -ENOENT) {
			/* not loaded (ENOENT: unloaded between check and open) */
			se->state = STATS_ABSENT;
		} else if (ret == 0) {
			se->state = STATS_OK;
		} else {
			se->state = STATS_ERROR;
			snprintf(se->error, sizeof(se->error), "%s", nfg_err_str(&e));
			cli_err("stats", "%s: %s", nfg_ext_name(x), se->error);
			ok = false;
		}
	}
	return ok;
}

enum fmt { FMT_TEXT, FMT_JSON, FMT_PROM };

static int print_report(FILE *f, enum fmt fmt, const struct stats_snap *s)
{
	if (fmt == FMT_JSON)
		return stats_print_json(f, s);
	if (fmt == FMT_PROM)
		return stats_print_prom(f, s);
	return stats_print_text(f, s);
}

/* The report into @path, atomically (a temporary file renamed over it). */
static bool write_file(const char *path, enum fmt fmt, const struct stats_snap *s)
{
	size_t len = strlen(path) + 8;
	char *tmp = malloc(len);
	FILE *f = NULL;
	int fd = -1;
	bool ok = false;

	if (!tmp)
		goto out;
	snprintf(tmp, len, "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w")))
		goto out;
	fd = -1;
	ok = print_report(f, fmt, s) == 0;
	ok = (fclose(f) == 0) && ok;
	f = NULL;
	if (ok && rename(tmp, path) < 0)
		ok = false;
out:
	if (!ok)
		cli_err("stats", "cannot write %s: %s", path, strerror(errno ? errno : EIO));
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (!ok && tmp)
		unlink(tmp);
	free(tmp);
	return ok;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Sleep @secs seconds, or until a signal asks to stop. */
static void pause_for(double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };

	while (!stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double parse_interval(const char *s, bool *ok)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	*ok = !errno && end != s && !*end && s[0] >= '0' && s[0] <= '9' &&
	      v >= 0.1 && v <= 86400;
	return v;
}

int cmd_stats(int argc, char **argv)
{
	const char *out = NULL;
	enum fmt fmt = FMT_TEXT;
	struct stats_snap s;
	double interval = 2;
	bool watch = false, ok = true, num;
	unsigned int round = 0;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage_stats(stdout);
			return 0;
		} else if (!strcmp(a, "--json") || !strcmp(a, "--prometheus")) {
			enum fmt want = a[2] == 'j' ? FMT_JSON : FMT_PROM;

			if (fmt != FMT_TEXT && fmt != want)
				cli_usage_die("stats", "--json and --prometheus exclude each other");
			fmt = want;
		} else if (!strcmp(a, "--watch")) {
			watch = true;
			if (i + 1 < argc && argv[i + 1][0] != '-') {
				interval = parse_interval(argv[++i], &num);
				if (!num)
					cli_usage_die("stats",
						      "--watch takes seconds from 0.1 to 86400, not \"%s\"",
						      argv[i]);
			}
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc || !argv[i][0])
				cli_usage_die("stats", "%s needs a file name", a);
			out = argv[i];
		} else {
			cli_err("stats", "unexpected argument \"%s\"", a);
			usage_stats(stderr);
			return CLI_EXIT_USAGE;
		}
	}

	if (watch) {
		struct sigaction sa = { .sa_handler = on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	do {
		ok = collect(&s);
		if (out) {
			if (!write_file(out, fmt, &s))
				stop = 1, ok = false;
		} else {
			/* rounds of text and Prometheus output: a blank line between */
			if (watch && round && fmt != FMT_JSON)
				putchar('\n');
			if (watch && fmt == FMT_TEXT) {
				char when[64];
				time_t t = (time_t)s.time;

				strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
				printf("%s\n", when);
			}
			print_report(stdout, fmt, &s);
			cli_flush_or_die("stats");
		}
		stats_snap_release(&s);
		round++;
		if (watch && !stop)
			pause_for(interval);
	} while (watch && !stop);
	if (watch)
		return out && !ok ? CLI_EXIT_ERROR : 0;
	return ok ? 0 : CLI_EXIT_ERROR;
}
