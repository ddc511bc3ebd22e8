// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iptables/ip6tables plugin of the nfguard "kconnlimit" match:
 *
 *	-m kconnlimit [!] --kconnlimit-upto N | [!] --kconnlimit-above N
 *	   [--kconnlimit-mask PREFIX] [--kconnlimit-saddr | --kconnlimit-daddr]
 *	   [--kconnlimit-name NAME]
 *
 * Options mirror connlimit's one for one (defaults: saddr, mask 32 for
 * IPv4 and 128 for IPv6; "! --kconnlimit-above N" is upto N and the other
 * way round; save always prints the limit, the mask and saddr/daddr), so
 * a ruleset moves over by renaming the options. Unlike connlimit, a mask
 * longer than the family allows is refused rather than clamped.
 *
 * No .xlate: nft's "ct count" is mainline's nf_conncount, not this table;
 * a translation would silently change the implementation (and lose the
 * name and the CLI view).
 */
#include <arpa/inet.h>
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

#include <linux/netfilter/xt_kconnlimit.h>

enum {
	O_UPTO = 0,
	O_ABOVE,
	O_MASK,
	O_SADDR,
	O_DADDR,
	O_NAME,
	F_UPTO	= 1 << O_UPTO,
	F_ABOVE	= 1 << O_ABOVE,
	F_MASK	= 1 << O_MASK,
	F_SADDR	= 1 << O_SADDR,
	F_DADDR	= 1 << O_DADDR,
	F_NAME	= 1 << O_NAME,
};

static const struct xt_option_entry kconnlimit_mt_opts[] = {
	{ .name = "kconnlimit-upto", .id = O_UPTO, .type = XTTYPE_STRING,
	  .excl = F_ABOVE, .flags = XTOPT_INVERT },
	{ .name = "kconnlimit-above", .id = O_ABOVE, .type = XTTYPE_STRING,
	  .excl = F_UPTO, .flags = XTOPT_INVERT },
	{ .name = "kconnlimit-mask", .id = O_MASK, .type = XTTYPE_STRING },
	{ .name = "kconnlimit-saddr", .id = O_SADDR, .type = XTTYPE_NONE,
	  .excl = F_DADDR },
	{ .name = "kconnlimit-daddr", .id = O_DADDR, .type = XTTYPE_NONE,
	  .excl = F_SADDR },
	{ .name = "kconnlimit-name", .id = O_NAME, .type = XTTYPE_STRING },
	XTOPT_TABLEEND,
};

static void kconnlimit_mt_help(void)
{
	printf(
"kconnlimit match options:\n"
"  (connlimit's, renamed; see nfguard-extensions(8))\n"
"  --kconnlimit-upto n      match if the number of existing connections is 0..n\n"
"  --kconnlimit-above n     match if the number of existing connections is >n\n"
"  --kconnlimit-mask n      group hosts using prefix length (default: max len)\n"
"  --kconnlimit-saddr       select source address for grouping (default)\n"
"  --kconnlimit-daddr       select destination addresses for grouping\n"
"  --kconnlimit-name name   label of this rule's table (nfguard kconnlimit list/top)\n");
}

static uint8_t kconnlimit_family(void)
{
	return afinfo ? afinfo->family : NFPROTO_IPV4;
}

static unsigned int kconnlimit_plen_max(void)
{
	return kconnlimit_family() == NFPROTO_IPV6 ? 128 : 32;
}

static uint32_t kconnlimit_parse_limit(const char *opt, const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (arg[0] < '0' || arg[0] > '9')
		goto bad;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		goto bad;
	return v;
bad:
	xtables_error(PARAMETER_PROBLEM,
		      "kconnlimit: --%s needs a number from 0 to 4294967295, not \"%s\"",
		      opt, arg);
	return 0;
}

/* A prefix length, or for IPv4 a contiguous dotted netmask (as connlimit). */
static uint8_t kconnlimit_parse_mask(const char *arg)
{
	unsigned int max = kconnlimit_plen_max();
	unsigned long v;
	struct in_addr a;
	uint32_t m;
	char *end;

	if (arg[0] >= '0' && arg[0] <= '9' && !strchr(arg, '.')) {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (!errno && !*end && v <= max)
			return v;
		xtables_error(PARAMETER_PROBLEM,
			      "kconnlimit: --kconnlimit-mask %s is out of range for %s (0-%u)",
			      arg, max == 128 ? "IPv6" : "IPv4", max);
	}
	if (max == 32 && inet_pton(AF_INET, arg, &a) == 1) {
		m = ntohl(a.s_addr);
		if ((~m & (~m + 1)) == 0)	/* ones then zeros */
			return m ? 32 - __builtin_ctz(m) : 0;
		xtables_error(PARAMETER_PROBLEM,
			      "kconnlimit: --kconnlimit-mask %s is not a contiguous netmask",
			      arg);
	}
	xtables_error(PARAMETER_PROBLEM,
		      "kconnlimit: --kconnlimit-mask needs a prefix length (0-%u)%s, not \"%s\"",
		      max, max == 32 ? " or a netmask" : "", arg);
	return 0;
}

static void kconnlimit_check_name(const char *name)
{
	const char *p;

	if (!*name)
		xtables_error(PARAMETER_PROBLEM, "kconnlimit: --kconnlimit-name is empty");
	if (strlen(name) >= XT_KCONNLIMIT_MAXNAMELEN)
		xtables_error(PARAMETER_PROBLEM,
			      "kconnlimit: --kconnlimit-name \"%s\" is too long (at most %d characters)",
			      name, XT_KCONNLIMIT_MAXNAMELEN - 1);
	for (p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_-.:", *p)))
			xtables_error(PARAMETER_PROBLEM,
				      "kconnlimit: --kconnlimit-name may only hold letters, digits and _ - . :");
}

static void kconnlimit_mt_init(struct xt_entry_match *m)
{
	struct xt_kconnlimit_mtinfo *info = (void *)m->data;

	info->prefix = kconnlimit_plen_max();
}

static void kconnlimit_mt_parse(struct xt_option_call *cb)
{
	struct xt_kconnlimit_mtinfo *info = cb->data;

	xtables_option_parse(cb);
	switch (cb->entry->id) {
	case O_UPTO:
	case O_ABOVE:
		info->limit = kconnlimit_parse_limit(cb->entry->name, cb->arg);
		info->flags &= ~(XT_KCONNLIMIT_UPTO | XT_KCONNLIMIT_ABOVE);
		/* "! --kconnlimit-above N" is upto N, and the other way round */
		if ((cb->entry->id == O_UPTO) != cb->invert)
			info->flags |= XT_KCONNLIMIT_UPTO;
		else
			info->flags |= XT_KCONNLIMIT_ABOVE;
		break;
	case O_MASK:
		info->prefix = kconnlimit_parse_mask(cb->arg);
		break;
	case O_SADDR:
		info->flags &= ~XT_KCONNLIMIT_DADDR;
		break;
	case O_DADDR:
		info->flags |= XT_KCONNLIMIT_DADDR;
		break;
	case O_NAME:
		kconnlimit_check_name(cb->arg);
		memset(info->name, 0, sizeof(info->name));
		strcpy(info->name, cb->arg);	/* length checked */
		break;
	}
}

static void kconnlimit_mt_check(struct xt_fcheck_call *cb)
{
	const struct xt_kconnlimit_mtinfo *info = cb->data;

	if (!(cb->xflags & (F_UPTO | F_ABOVE)))
		xtables_error(PARAMETER_PROBLEM,
			      "kconnlimit: you must specify \"--kconnlimit-above\" or \"--kconnlimit-upto\"");
	if (info->prefix > kconnlimit_plen_max())
		xtables_error(PARAMETER_PROBLEM,
			      "kconnlimit: --kconnlimit-mask %u is out of range for %s (0-%u)",
			      info->prefix,
			      kconnlimit_plen_max() == 128 ? "IPv6" : "IPv4",
			      kconnlimit_plen_max());
}

static void kconnlimit_mt_print(const void *ip, const struct xt_entry_match *m,
				int numeric)
{
	const struct xt_kconnlimit_mtinfo *info = (const void *)m->data;

	(void)ip;
	(void)numeric;
	printf(" #kconn %s/%u %s %u",
	       info->flags & XT_KCONNLIMIT_DADDR ? "dst" : "src", info->prefix,
	       info->flags & XT_KCONNLIMIT_UPTO ? "<=" : ">", info->limit);
	if (info->name[0])
		printf(" name %.*s", XT_KCONNLIMIT_MAXNAMELEN, info->name);
}

static void kconnlimit_mt_save(const void *ip, const struct xt_entry_match *m)
{
	const struct xt_kconnlimit_mtinfo *info = (const void *)m->data;
	char name[XT_KCONNLIMIT_MAXNAMELEN + 1];

	(void)ip;
	printf(" --kconnlimit-%s %u --kconnlimit-mask %u --kconnlimit-%s",
	       info->flags & XT_KCONNLIMIT_UPTO ? "upto" : "above", info->limit,
	       info->prefix, info->flags & XT_KCONNLIMIT_DADDR ? "daddr" : "saddr");
	if (info->name[0]) {
		memcpy(name, info->name, XT_KCONNLIMIT_MAXNAMELEN);
		name[XT_KCONNLIMIT_MAXNAMELEN] = '\0';
		printf(" --kconnlimit-name");
		xtables_save_string(name);
	}
}

static struct xtables_match kconnlimit_mt_reg = {
	.version	= XTABLES_VERSION,
	.name		= "kconnlimit",
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.size		= XT_ALIGN(sizeof(struct xt_kconnlimit_mtinfo)),
	.userspacesize	= offsetof(struct xt_kconnlimit_mtinfo, inst),
	.help		= kconnlimit_mt_help,
	.init		= kconnlimit_mt_init,
	.x6_parse	= kconnlimit_mt_parse,
	.x6_fcheck	= kconnlimit_mt_check,
	.x6_options	= kconnlimit_mt_opts,
	.print		= kconnlimit_mt_print,
	.save		= kconnlimit_mt_save,
};

/* Registered from a uniquely named constructor (see libxt_rangeset.c). */
static void __attribute__((constructor)) nfg_kconnlimit_mt_ldr(void)
{
	xtables_register_match(&kconnlimit_mt_reg);
}
