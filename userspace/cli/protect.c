// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard protect | unprotect: parse the options into a struct nfg_profile,
 * then libnfguard's nfg_protect_* (userspace/lib/nfg_protect.c) plans the
 * nftables batch (tables ip/ip6 nfguard of its own), applies it, checks it
 * against the live ruleset or renders it; this file prints and picks the
 * exit status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "libnfguard.h"

#define T_OURS		"nfguard"
#define OWNER		"managed by nfguard protect"
#define MAX_PORTS	NFG_PROFILE_MAX_PORTS
#define MAX_KCL		NFG_PROFILE_MAX_KCL
#define MAX_BL		NFG_PROFILE_MAX_BL
#define FAM_IP		NFG_PROFILE_IP
#define FAM_IP6		NFG_PROFILE_IP6

void usage_protect(FILE *f)
{
	fprintf(f,
		"Usage: nfguard protect [-4|-6] [--syncookie tcp/PORTS]... [SYNCOOKIE OPTIONS]\n"
		"                       [--kconnlimit LIMIT[/[MASK][,MASK6]] PROTO/PORTS]...\n"
		"                       [--blocklist SET]... [--rtcache] [--dry-run]\n"
		"       nfguard protect --check [-4|-6] PROFILE OPTIONS (as above)\n"
		"       nfguard protect --show [--json]\n"
		"       nfguard unprotect [--dry-run]\n"
		"  SYNCOOKIE OPTIONS: --syncookie-mode proxy|local, --syncookie-mss N (88-65535),\n"
		"  --syncookie-wscale N (0-14), --syncookie-sack-perm, --syncookie-timestamp,\n"
		"  --syncookie-allowlist-timeout SECONDS (1-604800, default 300),\n"
		"  --syncookie-allowlist-mask MASK[,MASK6] (default the whole address).\n"
		"  Installs the profile (replacing a previous one) in one atomic nftables\n"
		"  batch, in tables ip/ip6 nfguard of its own (base chains at the raw, mangle\n"
		"  and filter priorities); -4/-6: only the ip/ip6 rules (a single\n"
		"  MASK is then that family's; -6 takes a MASK6 of 33 or more, or ,MASK6).\n"
		"  PORTS: 80,443; PROTO tcp or udp. Repeated options add up: every --kconnlimit\n"
		"  is a limit of its own, --syncookie ports and --blocklist sets accumulate.\n"
		"  kconnlimit counts per whole IPv4 address (MASK 32) and per IPv6 /64 (MASK6 64)\n"
		"  unless told. --dry-run prints the batch; --show the installed profile with\n"
		"  every option; --check exits 1 (naming each difference) when the installed\n"
		"  profile is not the one given, 0 when it is.\n"
		CLI_EXIT_HELP);
}

/* ---- arguments ------------------------------------------------------------ */

static void bad_arg(const char *fmt, const char *arg)
{
	cli_err("protect", fmt, arg);
	exit(CLI_EXIT_USAGE);
}

static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* "tcp/80,443", added to @p (ports given twice are kept once) */
static void parse_ports(const char *arg, bool udp_ok, struct nfg_profile_ports *p)
{
	char buf[512], *s, *tok, *save = NULL;
	unsigned int given = 0, i;
	uint32_t v;

	if (strlen(arg) >= sizeof(buf))
		bad_arg("\"%s\": too long", arg);
	strcpy(buf, arg);
	s = strchr(buf, '/');
	if (!s)
		bad_arg("\"%s\": expected PROTO/PORT[,PORT...], e.g. tcp/80,443", arg);
	*s++ = '\0';
	if (!strcmp(buf, "tcp"))
		p->proto = IPPROTO_TCP;
	else if (udp_ok && !strcmp(buf, "udp"))
		p->proto = IPPROTO_UDP;
	else
		bad_arg(udp_ok ? "\"%s\": protocol must be tcp or udp" :
			"\"%s\": protocol must be tcp", arg);
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!parse_u32(tok, 65535, &v) || !v)
			bad_arg("\"%s\": ports are numbers from 1 to 65535", arg);
		given++;
		for (i = 0; i < p->n && p->port[i] != v; i++)
			;
		if (i < p->n)
			continue;
		if (p->n == MAX_PORTS)
			bad_arg("\"%s\": at most 64 ports", arg);
		p->port[p->n++] = (uint16_t)v;
	}
	if (!given)
		bad_arg("\"%s\": no port", arg);
}

/*
 * @masks: "MASK", "MASK,MASK6" or ",MASK6" of option @opt (argument @arg,
 * for messages): MASK is IPv4's (@min..32)
 * and MASK6 IPv6's (@min..128). -4 takes MASK only. -6 takes ",MASK6", or a
 * single MASK above 32 as MASK6 (unambiguous); a single MASK of 32 or less
 * would be an IPv4 length read as an enormous IPv6 prefix, so -6 refuses it.
 * -1 stays where nothing is given.
 */
static void parse_masks(const char *opt, const char *arg, const char *masks,
			unsigned int fams, uint32_t min, int *m4, int *m6)
{
	char buf[64], *comma;
	uint32_t v;

	if (strlen(masks) >= sizeof(buf))
		bad_arg("\"%s\": too long", arg);
	strcpy(buf, masks);
	comma = strchr(buf, ',');
	if (comma)
		*comma++ = '\0';
	if (fams == FAM_IP6 && buf[0] && comma) {
		cli_err("protect", "%s \"%s\": -6 takes the IPv6 mask only (,MASK6)", opt, arg);
		exit(CLI_EXIT_USAGE);
	}
	if (fams == FAM_IP6 && buf[0]) {
		if (!parse_u32(buf, 128, &v) || v < min) {
			cli_err("protect", "%s \"%s\": MASK6 is an IPv6 prefix length from %u to 128",
				opt, arg, min);
			exit(CLI_EXIT_USAGE);
		}
		if (v <= 32) {
			cli_err("protect", "%s \"%s\": with -6 a mask of 32 or less looks like an IPv4 "
				"one; write \",%u\" if an IPv6 /%u is meant", opt, arg, v, v);
			exit(CLI_EXIT_USAGE);
		}
		*m6 = (int)v;
		return;
	}
	if (buf[0]) {
		if (!parse_u32(buf, 32, &v) || v < min) {
			cli_err("protect", "%s \"%s\": MASK is an IPv4 prefix length from %u to 32",
				opt, arg, min);
			exit(CLI_EXIT_USAGE);
		}
		*m4 = (int)v;
	} else if (!comma) {
		cli_err("protect", "%s \"%s\": no mask", opt, arg);
		exit(CLI_EXIT_USAGE);
	}
	if (!comma)
		return;
	if (fams == FAM_IP) {
		cli_err("protect", "%s \"%s\": -4 takes one mask, the IPv4 one", opt, arg);
		exit(CLI_EXIT_USAGE);
	}
	if (!parse_u32(comma, 128, &v) || v < min) {
		cli_err("protect", "%s \"%s\": MASK6 is an IPv6 prefix length from %u to 128", opt, arg, min);
		exit(CLI_EXIT_USAGE);
	}
	*m6 = (int)v;
}

/* @arg: "64", "64/24", "64/24,48" or "64/,48"; IPv6 defaults to /64 */
static void parse_limit(struct nfg_profile_kcl *k, const char *arg, unsigned int fams)
{
	char buf[64], *slash;

	if (strlen(arg) >= sizeof(buf))
		bad_arg("\"%s\": too long", arg);
	strcpy(buf, arg);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (!parse_u32(buf, UINT32_MAX, &k->limit))
		bad_arg("--kconnlimit \"%s\": LIMIT is a number from 0 to 4294967295", arg);
	k->prefix = -1;
	/* one budget per /64: anyone given a /64 holds 2^64 addresses */
	k->prefix6 = 64;
	if (slash)
		parse_masks("--kconnlimit", arg, arg + (slash - buf), fams, 0,
			    &k->prefix, &k->prefix6);
}

/* a number of option @opt from @min to @max */
static uint32_t parse_num(const char *opt, const char *arg, uint32_t min, uint32_t max)
{
	uint32_t v;

	if (!parse_u32(arg, max, &v) || v < min) {
		cli_err("protect", "%s \"%s\": a number from %u to %u", opt, arg, min, max);
		exit(CLI_EXIT_USAGE);
	}
	return v;
}

/* ---- modules ---------------------------------------------------------------- */

/* 0 if loaded (autoloading it if possible); an error's exit code; exits 3 when absent */
static int need_module(enum nfg_ext ext)
{
	struct nfg_err e;
	int ret = nfg_ext_loaded(ext, &e);

	if (ret == 0) {
		/* a family lookup makes the kernel try to load the module */
		void *h = NULL;

		switch (ext) {
		case NFG_EXT_RANGESET:
			h = nfg_rs_open(&e);
			nfg_rs_close(h);
			break;
		case NFG_EXT_KCONNLIMIT:
			h = nfg_kcl_open(&e);
			nfg_kcl_close(h);
			break;
		case NFG_EXT_SYNCOOKIE:
			h = nfg_sc_open(&e);
			nfg_sc_close(h);
			break;
		default:
			h = nfg_rtc_open(&e);
			nfg_rtc_close(h);
			break;
		}
		ret = nfg_ext_loaded(ext, &e);
	}
	if (ret < 0) {
		cli_err("protect", "%s: %s", nfg_ext_name(ext), nfg_err_str(&e));
		return CLI_EXIT_ERROR;
	}
	/* exits 3: what to do, and a modprobe only when one can work */
	if (ret == 0)
		cli_die_nomod("protect", nfg_ext_module(ext));
	return 0;
}

/* ---- entry points ----------------------------------------------------------- */

/* exit status for an errno from nf_tables */
static int errno_exit(int err)
{
	return err == EPERM || err == EACCES ? CLI_EXIT_PERM : CLI_EXIT_ERROR;
}

/* A table nfguard that protect did not create: never ours to delete. */
static bool foreign_tables(const struct nfg_profile *p, unsigned int foreign, bool dry_run)
{
	const char *what = p ? "protect" : "unprotect";
	bool refuse = false;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		unsigned int bit = i ? FAM_IP6 : FAM_IP;
		const char *fam = i ? "ip6" : "ip";

		if (!(foreign & bit))
			continue;
		if (!p || !(p->families & bit)) {
			fprintf(stderr, "nfguard: warning: %s: table %s " T_OURS " was not created by "
				"nfguard protect (no comment \"" OWNER "\"): left alone\n",
				what, fam);
			continue;
		}
		cli_err(what, "table %s " T_OURS " exists and was not created by nfguard protect "
			"(no comment \"" OWNER "\"): rename or delete it first%s",
			fam, dry_run ? "" : "; nothing was changed");
		refuse = true;
	}
	return refuse;
}

/* Print @plan rendered as @fmt (under @what for errors). */
static void print_plan(const struct nfg_protect_plan *plan, enum nfg_protect_fmt fmt,
		       const char *what)
{
	struct nfg_err e;
	char *text;

	if (nfg_protect_render(plan, fmt, &text, &e) < 0)
		cli_die(what, "%s", nfg_err_str(&e));
	fputs(text, stdout);
	free(text);
	cli_flush_or_die(what);
}

static int print_diff(enum nfg_protect_diff kind, const char *op, void *data)
{
	(void)data;
	printf("%s: %s\n", kind == NFG_PROTECT_MISSING ? "missing" :
	       kind == NFG_PROTECT_UNEXPECTED ? "unexpected" : "reordered", op);
	return 0;
}

/* protect --check: 0 when the live ruleset holds @plan's profile; else each difference and 1. */
static int check_profile(struct nfg_protect *h, const struct nfg_protect_plan *plan)
{
	struct nfg_err e;
	int diff = nfg_protect_check(h, plan, print_diff, NULL, &e);

	if (diff < 0) {
		cli_err("protect --check", "%s", nfg_err_str(&e));
		return errno_exit(e.code);
	}
	cli_flush_or_die("protect --check");
	if (diff)
		cli_err("protect --check", "the installed profile differs from the one given "
			"(%d difference%s)", diff, diff == 1 ? "" : "s");
	return diff ? CLI_EXIT_ERROR : 0;
}

/* The batch refused: say what, where, and what may help. */
static int refused(const char *what, const struct nfg_protect_plan *plan, const struct nfg_err *e)
{
	const char *op = nfg_protect_plan_refused(plan), *hint = "";
	int err = e->code;

	if (err == EPERM && (!op || !strncmp(op, "(batch", 6)))
		hint = " (needs CAP_NET_ADMIN in this network namespace)";
	else if (err == ENOENT)
		hint = " (is nft_compat available? is the blocklist set there?)";
	else if (err == ERESTART)
		hint = " (the ruleset kept changing while nfguard tried)";
	else if (err == ENOBUFS)
		hint = " (kernel answers lost: the batch was refused)";
	cli_err(what, "nftables refused the batch%s%s%s: %s%s%s%s; nothing was changed",
		op ? " at `" : "", op ? op : "", op ? "`" : "", strerror(err),
		e->msg[0] ? " (" : "", e->msg, e->msg[0] ? ")" : "");
	if (hint[0])
		fprintf(stderr, "nfguard: %s: hint:%s\n", what, hint);
	return err == EPERM && (!op || !strncmp(op, "(batch", 6)) ? CLI_EXIT_PERM : CLI_EXIT_ERROR;
}

/* protect (@p) or unprotect (@p NULL): plan, then print, check or apply it. */
static int run(const struct nfg_profile *p, bool dry_run, bool check)
{
	const char *what = p ? "protect" : "unprotect";
	struct nfg_protect_plan *plan = NULL;
	struct nfg_protect *h;
	struct nfg_err e;
	int ret;

	h = nfg_protect_open(&e);
	if (!h) {
		cli_err("protect", "%s", nfg_err_str(&e));
		return CLI_EXIT_ERROR;
	}
	ret = nfg_protect_build(h, p, &plan, &e);
	if (ret < 0 && dry_run) {
		fprintf(stderr, "nfguard: warning: %s --dry-run: cannot read the nftables "
			"ruleset (%s): printed as for an empty ruleset\n", what, strerror(-ret));
		ret = nfg_protect_build(NULL, p, &plan, &e);
	}
	if (ret < 0) {
		cli_err(what, "%s%s", nfg_err_str(&e), -ret == EPERM ?
			" (needs CAP_NET_ADMIN in this network namespace)" : "");
		ret = errno_exit(-ret);
		goto out;
	}
	if (foreign_tables(p, nfg_protect_plan_foreign(plan), dry_run)) {
		ret = CLI_EXIT_ERROR;
		goto out;
	}
	if (dry_run) {
		/* the command the batch installs, then the batch */
		print_plan(plan, NFG_PROTECT_FMT_SCRIPT, "protect --dry-run");
		ret = 0;
	} else if (check) {
		ret = check_profile(h, plan);
	} else {
		ret = nfg_protect_apply(h, plan, &e);
		if (ret < 0)
			ret = refused(what, plan, &e);
	}
out:
	nfg_protect_plan_free(plan);
	nfg_protect_close(h);
	return ret;
}

/* protect --show [--json]: the installed profile, read back from the kernel. */
static int show(bool json)
{
	struct nfg_protect_plan *plan;
	struct nfg_protect *h;
	struct nfg_err e;

	h = nfg_protect_open(&e);
	if (!h) {
		cli_err("protect", "%s", nfg_err_str(&e));
		return CLI_EXIT_ERROR;
	}
	if (nfg_protect_read(h, &plan, &e) < 0) {
		cli_err("protect --show", "%s", nfg_err_str(&e));
		nfg_protect_close(h);
		return errno_exit(e.code);
	}
	print_plan(plan, json ? NFG_PROTECT_FMT_JSON : NFG_PROTECT_FMT_SCRIPT, "protect --show");
	nfg_protect_plan_free(plan);
	nfg_protect_close(h);
	return 0;
}

/* The family of each blocklist set; with --dry-run what cannot be read is assumed. */
static int blocklist_families(struct nfg_profile *p, bool dry)
{
	struct nfg_rs_info info;
	struct nfg_err e;
	struct nfg_rs *h = nfg_rs_open(&e);
	unsigned int i;

	for (i = 0; i < p->nbl; i++) {
		if (h && nfg_rs_get(h, p->bl[i], &info, &e) == 0) {
			p->bl_family[i] = info.family;
			continue;
		}
		if (!dry) {
			nfg_rs_close(h);
			cli_err("protect", "--blocklist %s: %s", p->bl[i], nfg_err_str(&e));
			return e.code == EPERM ? CLI_EXIT_PERM : CLI_EXIT_ERROR;
		}
		p->bl_family[i] = p->families == FAM_IP6 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4;
		fprintf(stderr, "nfguard: warning: protect --dry-run: set %s: %s; assumed to be an "
			"%s set\n", p->bl[i], nfg_err_str(&e),
			p->bl_family[i] == NFG_FAMILY_IPV6 ? "ipv6" : "ipv4");
	}
	nfg_rs_close(h);
	return 0;
}

int cmd_protect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "syncookie", required_argument, NULL, 's' },
		{ "kconnlimit", required_argument, NULL, 'k' },
		{ "blocklist", required_argument, NULL, 'b' },
		{ "rtcache", no_argument, NULL, 'r' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "show", no_argument, NULL, 'S' },
		{ "check", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ "ipv4", no_argument, NULL, '4' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "syncookie-mode", required_argument, NULL, 'M' },
		{ "syncookie-mss", required_argument, NULL, 'm' },
		{ "syncookie-wscale", required_argument, NULL, 'w' },
		{ "syncookie-sack-perm", no_argument, NULL, 'P' },
		{ "syncookie-timestamp", no_argument, NULL, 'T' },
		{ "syncookie-allowlist-timeout", required_argument, NULL, 't' },
		{ "syncookie-allowlist-mask", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sc_mask = NULL, *sc_opt = NULL, *kcl_arg[MAX_KCL];
	bool dry = false, showit = false, checkit = false, only4 = false, only6 = false;
	bool json = false, syncookie = false, kconnlimit = false;
	struct nfg_profile p;
	struct nfg_err e;
	int c, ret, m4 = -1, m6 = -1;
	unsigned int i;

	nfg_profile_init(&p);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h46", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			syncookie = true;
			parse_ports(optarg, false, &p.syncookie);
			break;
		case 'k':
			kconnlimit = true;
			if (p.nkcl == MAX_KCL)
				bad_arg("%s: at most 16 --kconnlimit options", optarg);
			/* LIMIT parsed once -4/-6 are known */
			kcl_arg[p.nkcl] = optarg;
			if (optind >= argc)
				bad_arg("%s: --kconnlimit LIMIT[/MASK] PROTO/PORTS", "missing PROTO/PORTS");
			parse_ports(argv[optind++], true, &p.kcl[p.nkcl++].ports);
			break;
		case '4':
			only4 = true;
			break;
		case '6':
			only6 = true;
			break;
		case 'M':
			sc_opt = "--syncookie-mode";
			if (!strcmp(optarg, "proxy"))
				p.sc.mode = NFG_SC_MODE_PROXY;
			else if (!strcmp(optarg, "local"))
				p.sc.mode = NFG_SC_MODE_LOCAL;
			else
				bad_arg("--syncookie-mode \"%s\": proxy or local", optarg);
			break;
		case 'm':
			sc_opt = "--syncookie-mss";
			p.sc.mss = (uint16_t)parse_num(sc_opt, optarg, 88, 65535);
			break;
		case 'w':
			sc_opt = "--syncookie-wscale";
			p.sc.wscale = (int)parse_num(sc_opt, optarg, 0, 14);
			break;
		case 'P':
			sc_opt = "--syncookie-sack-perm";
			p.sc.sack_perm = true;
			break;
		case 'T':
			sc_opt = "--syncookie-timestamp";
			p.sc.timestamp = true;
			break;
		case 't':
			sc_opt = "--syncookie-allowlist-timeout";
			p.sc.timeout = parse_num(sc_opt, optarg, 1, 604800);
			break;
		case 'a':
			sc_opt = "--syncookie-allowlist-mask";
			sc_mask = optarg;
			break;
		case 'b':
			if (nfg_rs_name_check(optarg, false, NULL) < 0)
				bad_arg("--blocklist \"%s\": not a set name", optarg);
			for (i = 0; i < p.nbl && strcmp(p.bl[i], optarg); i++)
				;
			if (i < p.nbl)
				break;		/* given twice: once is enough */
			if (p.nbl == MAX_BL)
				bad_arg("%s: at most 16 --blocklist sets", optarg);
			strcpy(p.bl[p.nbl++], optarg);
			break;
		case 'r':
			p.rtcache = true;
			break;
		case 'n':
			dry = true;
			break;
		case 'S':
			showit = true;
			break;
		case 'C':
			checkit = true;
			break;
		case 'J':
			json = true;
			break;
		case 'h':
			usage_protect(stdout);
			return 0;
		default:
			bad_arg("%s (try nfguard protect --help)", optind > 1 && argv[optind - 1] ?
				argv[optind - 1] : "bad option");
		}
	}
	if (optind < argc)
		bad_arg("unexpected argument \"%s\"", argv[optind]);
	if (only4 && only6)
		bad_arg("%s", "-4 and -6 together: give neither for both families");
	p.families = only4 ? FAM_IP : only6 ? FAM_IP6 : FAM_IP | FAM_IP6;
	for (i = 0; i < p.nkcl; i++)
		parse_limit(&p.kcl[i], kcl_arg[i], p.families);
	if (sc_mask) {
		parse_masks("--syncookie-allowlist-mask", sc_mask, sc_mask, p.families, 1, &m4, &m6);
		p.sc.prefix = m4 < 0 ? 0 : m4;
		p.sc_prefix6 = m6 < 0 ? 0 : m6;
	}
	if (json && !showit)
		bad_arg("%s", "--json goes with --show");
	if (sc_opt && !syncookie)
		bad_arg("%s needs --syncookie tcp/PORTS", sc_opt);
	if (p.sc.mode == NFG_SC_MODE_LOCAL && p.sc.sack_perm && !p.sc.timestamp)
		bad_arg("%s", "--syncookie-sack-perm needs --syncookie-timestamp in local mode");
	if (showit) {
		if (syncookie || kconnlimit || p.nbl || p.rtcache || dry || only4 || only6 ||
		    checkit)
			bad_arg("%s", "--show takes no other option");
		return show(json);
	}
	if (dry && checkit)
		bad_arg("%s", "--check and --dry-run together: --check changes nothing anyway");
	if (!syncookie && !kconnlimit && !p.nbl && !p.rtcache)
		bad_arg("%s", "nothing to protect with: give --syncookie, --kconnlimit, --blocklist or --rtcache");
	if (dry) {
		/* say what the plan takes for granted */
		static const enum nfg_ext exts[] = { NFG_EXT_RANGESET, NFG_EXT_KCONNLIMIT,
						     NFG_EXT_SYNCOOKIE, NFG_EXT_RTCACHE };
		bool want[] = { p.nbl > 0, kconnlimit, syncookie, p.rtcache };

		for (i = 0; i < 4; i++)
			if (want[i] && nfg_ext_loaded(exts[i], &e) == 0)
				fprintf(stderr, "nfguard: warning: protect --dry-run: kernel module %s "
					"is not loaded: assumed it will be (protect loads it, or exits 3)\n",
					nfg_ext_module(exts[i]));
	}
	if (!dry && !checkit) {
		if ((p.nbl && (ret = need_module(NFG_EXT_RANGESET))) ||
		    (kconnlimit && (ret = need_module(NFG_EXT_KCONNLIMIT))) ||
		    (syncookie && (ret = need_module(NFG_EXT_SYNCOOKIE))) ||
		    (p.rtcache && (ret = need_module(NFG_EXT_RTCACHE))))
			return ret;
	}
	ret = blocklist_families(&p, dry || checkit);
	if (ret)
		return ret;
	for (i = 0; i < p.nbl && (only4 || only6); i++) {
		if (p.bl_family[i] == (only6 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4))
			continue;
		cli_err("protect", "--blocklist %s is an %s set: -%c installs no %s rule to use it",
			p.bl[i], p.bl_family[i] == NFG_FAMILY_IPV6 ? "ipv6" : "ipv4",
			only6 ? '6' : '4', only6 ? "IPv6" : "IPv4");
		return CLI_EXIT_USAGE;
	}
	/* what the options cannot express wrongly: a bug if it fails */
	if (nfg_profile_check(&p, &e) < 0) {
		cli_err("protect", "%s", nfg_err_str(&e));
		return CLI_EXIT_USAGE;
	}
	return run(&p, dry, checkit);
}

int cmd_unprotect(int argc, char **argv)
{
	bool dry = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dry-run")) {
			dry = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_protect(stdout);
			return 0;
		} else {
			cli_err("unprotect", "unexpected argument \"%s\" (try nfguard unprotect --help)",
				argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	return run(NULL, dry, false);
}
