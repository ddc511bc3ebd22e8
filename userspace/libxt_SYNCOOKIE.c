// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iptables/ip6tables plugin of the nfguard "SYNCOOKIE" target:
 *
 *	-t raw -A PREROUTING -p tcp ... -j SYNCOOKIE [--mode proxy|local]
 *	   [--mss N] [--wscale N] [--sack-perm] [--timestamp]
 *	   [--allowlist-timeout SECONDS] [--allowlist-mask PREFIX]
 *
 * --mode proxy is the default. Values are checked here
 * and again in the kernel's checkentry. The table, chain and protocol are
 * checked here from the command line when iptables runs a single -A/-I/-R:
 * iptables' tables have fixed priorities, and only raw's runs before
 * conntrack, for iptables-nft too. iptables-restore input is checked by the
 * kernel: legacy refuses anything but raw PREROUTING and -p tcp; through
 * nft_compat it cannot tell the chain's priority and accepts any table
 * (the packet path passes, and counts, packets conntrack saw first).
 *
 * save prints --mode always, the other options when set or not default.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* afinfo (the rule's family): see libxt_rangeset.c. */
#define XTABLES_INTERNAL
#include <xtables.h>
#undef _init

#include <linux/netfilter/xt_SYNCOOKIE.h>

enum {
	O_MODE = 0,
	O_MSS,
	O_WSCALE,
	O_SACK_PERM,
	O_TIMESTAMP,
	O_TIMEOUT,
	O_MASK,
};

static const struct xt_option_entry syncookie_tg_opts[] = {
	{ .name = "mode", .id = O_MODE, .type = XTTYPE_STRING },
	{ .name = "mss", .id = O_MSS, .type = XTTYPE_STRING },
	{ .name = "wscale", .id = O_WSCALE, .type = XTTYPE_STRING },
	{ .name = "sack-perm", .id = O_SACK_PERM, .type = XTTYPE_NONE },
	{ .name = "timestamp", .id = O_TIMESTAMP, .type = XTTYPE_NONE },
	{ .name = "allowlist-timeout", .id = O_TIMEOUT, .type = XTTYPE_STRING },
	{ .name = "allowlist-mask", .id = O_MASK, .type = XTTYPE_STRING },
	XTOPT_TABLEEND,
};

static void syncookie_tg_help(void)
{
	printf(
"SYNCOOKIE target options:\n"
"  (raw table, PREROUTING, -p tcp; see nfguard-extensions(8))\n"
"  --mode proxy|local          proxy (default): open the connection to the server\n"
"                              (local or forwarded) for a validated client;\n"
"                              local: hand validated ACKs to the local listener\n"
"  --mss N                     MSS the SYN-ACK advertises (88-65535; default: MTU-40/60)\n"
"  --wscale N                  window scale the SYN-ACK advertises (0-14; default: as the kernel;\n"
"                              proxy: at most the server's)\n"
"  --sack-perm                 advertise SACK (local mode: with --timestamp)\n"
"  --timestamp                 advertise timestamps\n"
"  --allowlist-timeout SECONDS how long a proven source stays allowlisted (default 300)\n"
"  --allowlist-mask PREFIX     allowlist sources by prefix (default 32 / 128)\n");
}

static uint8_t syncookie_family(void)
{
	return afinfo ? afinfo->family : NFPROTO_IPV4;
}

static unsigned int syncookie_plen_max(void)
{
	return syncookie_family() == NFPROTO_IPV6 ? 128 : 32;
}

static unsigned long syncookie_number(const char *opt, const char *arg,
				      unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (!arg[0] || arg[0] == '-' || arg[0] == '+')
		goto bad;
	v = strtoul(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	return v;
bad:
	xtables_error(PARAMETER_PROBLEM,
		      "SYNCOOKIE: --%s must be a number from %lu to %lu, not \"%s\"",
		      opt, min, max, arg);
}

static void syncookie_tg_init(struct xt_entry_target *t)
{
	struct xt_syncookie_tginfo *info = (void *)t->data;

	info->mode = XT_SYNCOOKIE_MODE_PROXY;
	info->timeout = XT_SYNCOOKIE_TIMEOUT_DEFAULT;
	info->prefix = syncookie_plen_max();
}

static void syncookie_tg_parse(struct xt_option_call *cb)
{
	struct xt_syncookie_tginfo *info = cb->data;

	xtables_option_parse(cb);
	switch (cb->entry->id) {
	case O_MODE:
		if (!strcmp(cb->arg, "local"))
			info->mode = XT_SYNCOOKIE_MODE_LOCAL;
		else if (!strcmp(cb->arg, "proxy"))
			info->mode = XT_SYNCOOKIE_MODE_PROXY;
		else
			xtables_error(PARAMETER_PROBLEM,
				      "SYNCOOKIE: --mode must be \"local\" or \"proxy\", not \"%s\"",
				      cb->arg);
		break;
	case O_MSS:
		info->mss = syncookie_number("mss", cb->arg,
					     XT_SYNCOOKIE_MSS_MIN, 65535);
		info->flags |= XT_SYNCOOKIE_MSS;
		break;
	case O_WSCALE:
		info->wscale = syncookie_number("wscale", cb->arg, 0,
						XT_SYNCOOKIE_WSCALE_MAX);
		info->flags |= XT_SYNCOOKIE_WSCALE;
		break;
	case O_SACK_PERM:
		info->flags |= XT_SYNCOOKIE_SACK_PERM;
		break;
	case O_TIMESTAMP:
		info->flags |= XT_SYNCOOKIE_TIMESTAMP;
		break;
	case O_TIMEOUT:
		info->timeout = syncookie_number("allowlist-timeout", cb->arg, 1,
						 XT_SYNCOOKIE_TIMEOUT_MAX);
		break;
	case O_MASK:
		info->prefix = syncookie_number("allowlist-mask", cb->arg, 1,
						syncookie_plen_max());
		break;
	}
}

/*
 * The command line of a single iptables -A/-I/-R: table, chain and
 * protocol, to refuse a misplaced rule with a clear message before the
 * kernel does with EINVAL. Returns false when it is not such a command.
 */
struct syncookie_cmdline {
	char table[32];
	char chain[64];
	char proto[32];
	bool proto_inv;
};

static void syncookie_copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src);
}

/*
 * iptables' own long options (iptables/xshared.h and ip6tables), for
 * getopt_long's rules: "--name value", "--name=value", and any
 * abbreviation that is the prefix of exactly one of them.
 */
static const char *const syncookie_long_opts[] = {
	"append", "delete", "check", "insert", "replace", "list",
	"list-rules", "flush", "zero", "new-chain", "delete-chain",
	"rename-chain", "policy", "source", "src", "destination", "dst",
	"protocol", "in-interface", "jump", "table", "match", "numeric",
	"out-interface", "verbose", "wait", "wait-interval", "exact",
	"fragment", "version", "help", "line-numbers", "modprobe",
	"set-counters", "goto", "ipv4", "ipv6",
};

/* The long option @a ("--xyz[=value]") names, or NULL; *@val: "=value". */
static const char *syncookie_long_opt(const char *a, const char **val)
{
	const char *eq = strchr(a, '='), *found = NULL;
	size_t len, i;

	a += 2;
	len = eq ? (size_t)(eq - a) : strlen(a);
	*val = eq ? eq + 1 : NULL;
	if (!len)
		return NULL;
	for (i = 0; i < sizeof(syncookie_long_opts) / sizeof(syncookie_long_opts[0]); i++) {
		const char *o = syncookie_long_opts[i];

		if (strncmp(o, a, len))
			continue;
		if (strlen(o) == len)
			return o;	/* exact */
		if (found)
			return NULL;	/* ambiguous: getopt refuses it */
		found = o;
	}
	return found;
}

/* Short options of iptables that take an argument (getopt "x:"). */
#define SYNCOOKIE_SHORT_ARG	"ACDRINXEPopsdjitmcg"

/* What an option we care about sets; others are skipped. */
static bool syncookie_opt(struct syncookie_cmdline *c, char opt,
			  const char *v, bool inv)
{
	switch (opt) {
	case 't':
		syncookie_copy(c->table, sizeof(c->table), v);
		break;
	case 'A': case 'I': case 'R':
		syncookie_copy(c->chain, sizeof(c->chain), v);
		return true;
	case 'p':
		syncookie_copy(c->proto, sizeof(c->proto), v);
		c->proto_inv = inv;
		break;
	}
	return false;
}

static bool syncookie_read_cmdline(struct syncookie_cmdline *c)
{
	static const struct { const char *name; char opt; } longs[] = {
		{ "table", 't' }, { "append", 'A' }, { "insert", 'I' },
		{ "replace", 'R' }, { "protocol", 'p' }, { "jump", 'j' },
	};
	char buf[8192], *argv[256], *p, *end;
	bool rule = false, inv = false;
	int argc = 0, i;
	size_t len, k;
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = fopen("/proc/self/cmdline", "r");
	if (!f)
		return false;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (p = buf, end = buf + len; p < end && argc < 256; p += strlen(p) + 1)
		argv[argc++] = p;
	syncookie_copy(c->table, sizeof(c->table), "filter");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		const char *name, *val;
		char opt = 0;

		if (!strcmp(a, "!")) {
			inv = true;
			continue;
		}
		if (!strncmp(a, "--", 2)) {
			name = syncookie_long_opt(a, &val);
			for (k = 0; name && k < sizeof(longs) / sizeof(longs[0]); k++)
				if (!strcmp(name, longs[k].name))
					opt = longs[k].opt;
			if (opt && !val) {
				val = v;
				i++;
			}
			if (opt == 'j')
				break;	/* the target's own options follow */
			if (opt)
				rule |= syncookie_opt(c, opt, val, inv);
		} else if (a[0] == '-' && a[1]) {
			/* a bundle of short options: "-vt raw", "-traw", "-nA X" */
			for (a++; *a; a++) {
				if (!strchr(SYNCOOKIE_SHORT_ARG, *a))
					continue;	/* a flag: -v -n -x -4 ... */
				opt = *a;
				val = a[1] ? a + 1 : v;
				if (!a[1])
					i++;
				break;
			}
			if (opt == 'j')
				break;
			if (opt)
				rule |= syncookie_opt(c, opt, val, inv);
		}
		inv = false;
	}
	return rule;
}

static void syncookie_tg_check(struct xt_fcheck_call *cb)
{
	const struct xt_syncookie_tginfo *info = cb->data;
	struct syncookie_cmdline c;

	if (info->mode == XT_SYNCOOKIE_MODE_LOCAL &&
	    (info->flags & XT_SYNCOOKIE_SACK_PERM) &&
	    !(info->flags & XT_SYNCOOKIE_TIMESTAMP))
		xtables_error(PARAMETER_PROBLEM,
			      "SYNCOOKIE: --mode local: --sack-perm needs --timestamp (SACK is remembered inside the timestamp)");
	if (!syncookie_read_cmdline(&c))
		return;
	if (strcmp(c.table, "raw"))
		xtables_error(PARAMETER_PROBLEM,
			      "SYNCOOKIE: only valid in the raw table (-t raw), not \"%s\"",
			      c.table);
	if (!strcmp(c.chain, "INPUT") || !strcmp(c.chain, "OUTPUT") ||
	    !strcmp(c.chain, "FORWARD") || !strcmp(c.chain, "POSTROUTING"))
		xtables_error(PARAMETER_PROBLEM,
			      "SYNCOOKIE: only valid in PREROUTING (or a chain called from it), not %s",
			      c.chain);
	if (c.proto_inv || (strcmp(c.proto, "tcp") && strcmp(c.proto, "6") &&
			    strcmp(c.proto, "TCP")))
		xtables_error(PARAMETER_PROBLEM,
			      "SYNCOOKIE: needs -p tcp");
}

static void syncookie_tg_print(const void *ip, const struct xt_entry_target *t,
			       int numeric)
{
	const struct xt_syncookie_tginfo *info = (const void *)t->data;

	(void)ip;
	(void)numeric;
	printf(" SYNCOOKIE mode %s",
	       info->mode == XT_SYNCOOKIE_MODE_LOCAL ? "local" : "proxy");
	if (info->flags & XT_SYNCOOKIE_MSS)
		printf(" mss %u", info->mss);
	if (info->flags & XT_SYNCOOKIE_WSCALE)
		printf(" wscale %u", info->wscale);
	if (info->flags & XT_SYNCOOKIE_SACK_PERM)
		printf(" sack-perm");
	if (info->flags & XT_SYNCOOKIE_TIMESTAMP)
		printf(" timestamp");
	printf(" allowlist-timeout %" PRIu32 " allowlist-mask %u", info->timeout,
	       info->prefix);
}

static void syncookie_tg_save(const void *ip, const struct xt_entry_target *t)
{
	const struct xt_syncookie_tginfo *info = (const void *)t->data;

	(void)ip;
	printf(" --mode %s",
	       info->mode == XT_SYNCOOKIE_MODE_LOCAL ? "local" : "proxy");
	if (info->flags & XT_SYNCOOKIE_MSS)
		printf(" --mss %u", info->mss);
	if (info->flags & XT_SYNCOOKIE_WSCALE)
		printf(" --wscale %u", info->wscale);
	if (info->flags & XT_SYNCOOKIE_SACK_PERM)
		printf(" --sack-perm");
	if (info->flags & XT_SYNCOOKIE_TIMESTAMP)
		printf(" --timestamp");
	if (info->timeout != XT_SYNCOOKIE_TIMEOUT_DEFAULT)
		printf(" --allowlist-timeout %" PRIu32, info->timeout);
	if (info->prefix != syncookie_plen_max())
		printf(" --allowlist-mask %u", info->prefix);
}

static struct xtables_target syncookie_tg_reg = {
	.version	= XTABLES_VERSION,
	.name		= "SYNCOOKIE",
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.size		= XT_ALIGN(sizeof(struct xt_syncookie_tginfo)),
	.userspacesize	= offsetof(struct xt_syncookie_tginfo, mask),
	.help		= syncookie_tg_help,
	.init		= syncookie_tg_init,
	.x6_parse	= syncookie_tg_parse,
	.x6_fcheck	= syncookie_tg_check,
	.x6_options	= syncookie_tg_opts,
	.print		= syncookie_tg_print,
	.save		= syncookie_tg_save,
};

/* See libxt_rangeset.c: registered by an ELF constructor with a unique name. */
static void __attribute__((constructor)) nfg_syncookie_tg_ldr(void)
{
	xtables_register_target(&syncookie_tg_reg);
}
