// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iptables/ip6tables plugin of the nfguard "rangeset" match:
 *
 *	-m rangeset [!] --match-set NAME src|dst
 *
 * The sets are managed with "nfguard set" (libnfguard). Since a rule
 * naming a missing set would only be refused by the kernel with a dmesg
 * line, the final check asks the kernel (genetlink LIST doit by name)
 * that the set exists and has the rule's family, and says so otherwise.
 *
 * Option API: the option table, help merging and the final check use the
 * libxtables "x6" API (x6_options, x6_fcheck). Parsing uses the classic
 * ->parse hook because --match-set takes two arguments (NAME src|dst,
 * the ipset xt_set syntax operators know): x6_parse gets only optarg,
 * never argv, so it cannot consume the direction word. ->parse reads it
 * from argv[optind] and advances optind, exactly as libxt_set does.
 *
 * No .xlate: nft has no equivalent of an external, netns-wide named set
 * managed outside the nft ruleset (an nft set lives inside one table and
 * is changed through the nft ruleset), so there is nothing faithful to
 * translate to; iptables-nft still shows and saves the rule through
 * nft_compat with this plugin.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * afinfo (the rule's family) is exported by libxtables but declared only
 * for in-tree extensions; XTABLES_INTERNAL makes the declaration visible.
 * Nothing else from the internal section is used.
 */
#define XTABLES_INTERNAL
#include <xtables.h>
#undef _init

#include <linux/netfilter/xt_rangeset.h>

#include "libnfguard.h"
#include "nfg_rsfile.h"

enum {
	O_MATCH_SET = 0,
	F_MATCH_SET = 1 << O_MATCH_SET,
};

static const struct xt_option_entry rangeset_mt_opts[] = {
	{
		.name	= "match-set",
		.id	= O_MATCH_SET,
		.type	= XTTYPE_STRING,
		.flags	= XTOPT_MAND | XTOPT_INVERT,
	},
	XTOPT_TABLEEND,
};

static void rangeset_mt_help(void)
{
	printf(
"rangeset match options:\n"
"[!] --match-set NAME src|dst\n"
"                         match if the source (src) or destination (dst)\n"
"                         address is in the nfguard range set NAME\n"
"                         (sets are managed with \"nfguard set\", see nfguard(8))\n");
}

static int rangeset_mt_parse(int c, char **argv, int invert,
			     unsigned int *flags, const void *entry,
			     struct xt_entry_match **match)
{
	struct xt_rangeset_mtinfo *info = (void *)(*match)->data;
	const char *dir;
	char err[200];

	(void)entry;
	if (c != O_MATCH_SET)
		return 0;
	if (*flags & F_MATCH_SET)
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: --match-set can be given only once per match");
	if (nfg_rs_name_valid(optarg, false, err, sizeof(err)) < 0)
		xtables_error(PARAMETER_PROBLEM, "rangeset: %s", err);
	dir = argv[optind];
	if (!dir || dir[0] == '-' || dir[0] == '!')
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: --match-set needs two arguments: NAME src|dst");
	if (!strcmp(dir, "src"))
		info->flags &= ~XT_RANGESET_DST;
	else if (!strcmp(dir, "dst"))
		info->flags |= XT_RANGESET_DST;
	else
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: direction must be \"src\" or \"dst\", not \"%s\"",
			      dir);
	optind++;
	memset(info->name, 0, sizeof(info->name));
	strcpy(info->name, optarg);	/* length checked above */
	if (invert)
		info->flags |= XT_RANGESET_INV;
	*flags |= F_MATCH_SET;
	return 1;
}

static void rangeset_mt_check(struct xt_fcheck_call *cb)
{
	const struct xt_rangeset_mtinfo *info = cb->data;
	struct nfg_rs_info set;
	uint8_t family = afinfo ? afinfo->family : NFPROTO_UNSPEC;
	struct nfg_err e;
	struct nfg_rs *h;
	int ret;

	if (!(cb->xflags & F_MATCH_SET))
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: --match-set NAME src|dst is required");
	if (family != NFPROTO_IPV4 && family != NFPROTO_IPV6)
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: only for iptables and ip6tables");

	h = nfg_rs_open(&e);
	if (!h && e.code == ENOENT) {
		/* Normally autoloaded by the genetlink lookup; try modprobe. */
		xtables_insmod("xt_rangeset", NULL, true);
		h = nfg_rs_open(&e);
	}
	if (!h) {
		if (e.code == ENOENT)
			xtables_error(PARAMETER_PROBLEM,
				      "rangeset: set \"%s\" does not exist (the xt_rangeset kernel module is not loaded)",
				      info->name);
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: cannot check set \"%s\": %s",
			      info->name, nfg_err_str(&e));
	}
	ret = nfg_rs_get(h, info->name, &set, &e);
	nfg_rs_close(h);
	if (ret == -ENOENT)
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: set \"%s\" does not exist", info->name);
	if (ret < 0)
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: cannot check set \"%s\": %s",
			      info->name, nfg_err_str(&e));
	if (set.family != family)
		xtables_error(PARAMETER_PROBLEM,
			      "rangeset: set \"%s\" is an %s set, this is an %s rule (use %s)",
			      info->name, nfg_family_name(set.family),
			      nfg_family_name(family),
			      set.family == NFPROTO_IPV6 ? "ip6tables" : "iptables");
}

static void rangeset_mt_print(const void *ip, const struct xt_entry_match *m,
			      int numeric)
{
	const struct xt_rangeset_mtinfo *info = (const void *)m->data;

	(void)ip;
	(void)numeric;
	printf(" %smatch-set %.*s %s",
	       info->flags & XT_RANGESET_INV ? "! " : "",
	       XT_RANGESET_MAXNAMELEN, info->name,
	       info->flags & XT_RANGESET_DST ? "dst" : "src");
}

static void rangeset_mt_save(const void *ip, const struct xt_entry_match *m)
{
	const struct xt_rangeset_mtinfo *info = (const void *)m->data;
	char name[XT_RANGESET_MAXNAMELEN + 1];

	(void)ip;
	memcpy(name, info->name, XT_RANGESET_MAXNAMELEN);
	name[XT_RANGESET_MAXNAMELEN] = '\0';
	printf("%s --match-set", info->flags & XT_RANGESET_INV ? " !" : "");
	xtables_save_string(name);
	printf(" %s", info->flags & XT_RANGESET_DST ? "dst" : "src");
}

static struct xtables_match rangeset_mt_reg = {
	.version	= XTABLES_VERSION,
	.name		= "rangeset",
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.size		= XT_ALIGN(sizeof(struct xt_rangeset_mtinfo)),
	.userspacesize	= offsetof(struct xt_rangeset_mtinfo, set),
	.help		= rangeset_mt_help,
	.parse		= rangeset_mt_parse,
	.x6_fcheck	= rangeset_mt_check,
	.x6_options	= rangeset_mt_opts,
	.print		= rangeset_mt_print,
	.save		= rangeset_mt_save,
};

/*
 * libxtables dlopen()s libxt_rangeset.so from XTABLES_LIBDIR and relies on
 * the ELF constructor to register (iptables >= 1.8 builds its own
 * extensions with _init defined as a constructor; 1.8.9 looks up no
 * symbol). A unique name avoids clashing with the CRT's _init.
 */
static void __attribute__((constructor)) nfg_rangeset_mt_ldr(void)
{
	xtables_register_match(&rangeset_mt_reg);
}
