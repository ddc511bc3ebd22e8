// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iptables/ip6tables plugin of the nfguard "RANGESET" target:
 *
 *	-j RANGESET [--add-set NAME src|dst [--timeout S] [--exist]]
 *		    [--del-set NAME src|dst] [--prefix N]
 *
 * Adds the packet's address (or the --prefix N bits of it) to an nfguard
 * range set from the packet path, or removes it; the rule always
 * continues. Like libxt_rangeset (whose comment explains why), the option
 * table, help and final check use the x6 API, and parsing uses ->parse:
 * --add-set/--del-set take two arguments (NAME src|dst, ipset's SET
 * target syntax). The final check asks the kernel that each set exists
 * and has the rule's family.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XTABLES_INTERNAL
#include <xtables.h>
#undef _init

#include <linux/netfilter/xt_rangeset.h>

#include "libnfguard.h"
#include "nfg_rsfile.h"

enum {
	O_ADD_SET = 0,
	O_DEL_SET,
	O_TIMEOUT,
	O_EXIST,
	O_PREFIX,
	F_ADD_SET = 1 << O_ADD_SET,
	F_DEL_SET = 1 << O_DEL_SET,
	F_TIMEOUT = 1 << O_TIMEOUT,
	F_EXIST = 1 << O_EXIST,
	F_PREFIX = 1 << O_PREFIX,
};

static const struct xt_option_entry rangeset_tg_opts[] = {
	{ .name = "add-set", .id = O_ADD_SET, .type = XTTYPE_STRING },
	{ .name = "del-set", .id = O_DEL_SET, .type = XTTYPE_STRING },
	{ .name = "timeout", .id = O_TIMEOUT, .type = XTTYPE_STRING },
	{ .name = "exist", .id = O_EXIST, .type = XTTYPE_NONE },
	{ .name = "prefix", .id = O_PREFIX, .type = XTTYPE_STRING },
	XTOPT_TABLEEND,
};

static void rangeset_tg_help(void)
{
	printf(
"RANGESET target options:\n"
" --add-set NAME src|dst  add the source (src) or destination (dst) address\n"
"                         to the nfguard range set NAME\n"
"   --timeout SECONDS     expire the added address after SECONDS (0-%u,\n"
"                         0 = never; default: the set's timeout)\n"
"   --exist               re-adding an address refreshes its timeout\n"
" --del-set NAME src|dst  remove the address from the set NAME\n"
" --prefix N              add/remove the N-bit prefix of the address\n"
"                         (default 32 for IPv4, 128 for IPv6)\n"
"(sets are managed with \"nfguard set\", see nfguard(8))\n",
	       XT_RANGESET_TG_TIMEOUT_MAX);
}

static unsigned long rangeset_tg_num(const char *opt, const char *s,
				     unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (!s || s[0] < '0' || s[0] > '9')
		goto bad;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		goto bad;
	return v;
bad:
	xtables_error(PARAMETER_PROBLEM,
		      "RANGESET: --%s takes a number from 0 to %lu, not \"%s\"",
		      opt, max, s ? s : "");
	return 0;
}

static int rangeset_tg_parse(int c, char **argv, int invert,
			     unsigned int *flags, const void *entry,
			     struct xt_entry_target **target)
{
	struct xt_rangeset_tginfo *info = (void *)(*target)->data;
	const char *opt = c == O_ADD_SET ? "--add-set" : "--del-set";
	char err[200], *name;
	const char *dir;
	__u8 *dirflags;

	(void)entry;
	if (invert)
		xtables_error(PARAMETER_PROBLEM, "RANGESET: options cannot be inverted");
	if (c < O_ADD_SET || c > O_PREFIX)
		return 0;
	if (*flags & (1U << c))
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: --%s can be given only once",
			      rangeset_tg_opts[c].name);
	*flags |= 1U << c;
	switch (c) {
	case O_TIMEOUT:
		info->timeout = rangeset_tg_num("timeout", optarg,
						XT_RANGESET_TG_TIMEOUT_MAX);
		info->flags |= XT_RANGESET_TG_TIMEOUT;
		return 1;
	case O_EXIST:
		info->flags |= XT_RANGESET_TG_EXIST;
		return 1;
	case O_PREFIX:
		/* the family's bound is checked in the final check */
		info->prefix = rangeset_tg_num("prefix", optarg, 128);
		info->flags |= XT_RANGESET_TG_PREFIX;
		return 1;
	}
	if (nfg_rs_name_valid(optarg, false, err, sizeof(err)) < 0)
		xtables_error(PARAMETER_PROBLEM, "RANGESET: %s: %s", opt, err);
	dir = argv[optind];
	if (!dir || dir[0] == '-' || dir[0] == '!')
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: %s needs two arguments: NAME src|dst", opt);
	if (c == O_ADD_SET) {
		name = info->add_set;
		dirflags = &info->add_flags;
	} else {
		name = info->del_set;
		dirflags = &info->del_flags;
	}
	if (!strcmp(dir, "src"))
		*dirflags = 0;
	else if (!strcmp(dir, "dst"))
		*dirflags = XT_RANGESET_DST;
	else
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: %s: direction must be \"src\" or \"dst\", not \"%s\"",
			      opt, dir);
	optind++;
	memset(name, 0, XT_RANGESET_MAXNAMELEN);
	strcpy(name, optarg);	/* length checked above */
	return 1;
}

static void rangeset_tg_check_set(struct nfg_rs *h, const char *opt,
				  const char *name, uint8_t family)
{
	struct nfg_rs_info set;
	struct nfg_err e;
	int ret;

	ret = nfg_rs_get(h, name, &set, &e);
	if (ret == -ENOENT)
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: %s: set \"%s\" does not exist", opt, name);
	if (ret < 0)
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: %s: cannot check set \"%s\": %s",
			      opt, name, nfg_err_str(&e));
	if (set.family != family)
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: %s: set \"%s\" is an %s set, this is an %s rule (use %s)",
			      opt, name, nfg_family_name(set.family),
			      nfg_family_name(family),
			      set.family == NFPROTO_IPV6 ? "ip6tables" : "iptables");
}

static void rangeset_tg_check(struct xt_fcheck_call *cb)
{
	const struct xt_rangeset_tginfo *info = cb->data;
	uint8_t family = afinfo ? afinfo->family : NFPROTO_UNSPEC;
	struct nfg_err e;
	struct nfg_rs *h;

	if (!(cb->xflags & (F_ADD_SET | F_DEL_SET)))
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: needs --add-set NAME src|dst or --del-set NAME src|dst");
	if (!(cb->xflags & F_ADD_SET) && cb->xflags & (F_TIMEOUT | F_EXIST))
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: --timeout and --exist go with --add-set");
	if (family != NFPROTO_IPV4 && family != NFPROTO_IPV6)
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: only for iptables and ip6tables");
	if (family == NFPROTO_IPV4 && info->prefix > 32)
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: --prefix %u is longer than an IPv4 address (0-32)",
			      info->prefix);

	h = nfg_rs_open(&e);
	if (!h && e.code == ENOENT) {
		xtables_insmod("xt_rangeset", NULL, true);
		h = nfg_rs_open(&e);
	}
	if (!h)
		xtables_error(PARAMETER_PROBLEM,
			      "RANGESET: cannot check the sets: %s%s",
			      nfg_err_str(&e), e.code == ENOENT ?
			      " (the xt_rangeset kernel module is not loaded)" : "");
	if (info->add_set[0])
		rangeset_tg_check_set(h, "--add-set", info->add_set, family);
	if (info->del_set[0])
		rangeset_tg_check_set(h, "--del-set", info->del_set, family);
	nfg_rs_close(h);
}

static void rangeset_tg_name(char *buf, const char *name)
{
	memcpy(buf, name, XT_RANGESET_MAXNAMELEN);
	buf[XT_RANGESET_MAXNAMELEN] = '\0';
}

/* One form for print and save: it parses back to the same rule. */
static void rangeset_tg_out(const struct xt_rangeset_tginfo *info)
{
	char name[XT_RANGESET_MAXNAMELEN + 1];

	if (info->add_set[0]) {
		rangeset_tg_name(name, info->add_set);
		printf(" --add-set");
		xtables_save_string(name);
		printf(" %s", info->add_flags & XT_RANGESET_DST ? "dst" : "src");
		if (info->flags & XT_RANGESET_TG_TIMEOUT)
			printf(" --timeout %u", info->timeout);
		if (info->flags & XT_RANGESET_TG_EXIST)
			printf(" --exist");
	}
	if (info->del_set[0]) {
		rangeset_tg_name(name, info->del_set);
		printf(" --del-set");
		xtables_save_string(name);
		printf(" %s", info->del_flags & XT_RANGESET_DST ? "dst" : "src");
	}
	if (info->flags & XT_RANGESET_TG_PREFIX)
		printf(" --prefix %u", info->prefix);
}

static void rangeset_tg_print(const void *ip, const struct xt_entry_target *t,
			      int numeric)
{
	(void)ip;
	(void)numeric;
	rangeset_tg_out((const void *)t->data);
}

static void rangeset_tg_save(const void *ip, const struct xt_entry_target *t)
{
	(void)ip;
	rangeset_tg_out((const void *)t->data);
}

static struct xtables_target rangeset_tg_reg = {
	.version	= XTABLES_VERSION,
	.name		= "RANGESET",
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.size		= XT_ALIGN(sizeof(struct xt_rangeset_tginfo)),
	.userspacesize	= offsetof(struct xt_rangeset_tginfo, add),
	.help		= rangeset_tg_help,
	.parse		= rangeset_tg_parse,
	.x6_fcheck	= rangeset_tg_check,
	.x6_options	= rangeset_tg_opts,
	.print		= rangeset_tg_print,
	.save		= rangeset_tg_save,
};

/* Registered by the ELF constructor; see libxt_rangeset.c for the name. */
static void __attribute__((constructor)) nfg_rangeset_tg_ldr(void)
{
	xtables_register_target(&rangeset_tg_reg);
}
