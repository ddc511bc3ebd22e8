// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iptables/ip6tables plugin of the nfguard "RTCACHE" target:
 *
 *	-t mangle|filter -A FORWARD|INPUT ... -j RTCACHE
 *
 * No options: the rule opts matching flows into the per-conntrack route
 * cache and returns to the chain (XT_CONTINUE). A plugin sees neither the
 * table nor the chain's hook, so it cannot refuse misuse itself: the
 * kernel's checkentry refuses other tables ("only valid in the mangle or
 * filter table") and hooks ("only valid in FORWARD or INPUT"), and
 * iptables reports the failed commit (the reason is in the kernel log,
 * `dmesg`).
 *
 * No .xlate: nft has no per-conntrack route cache; the closest nft
 * feature (a flowtable) skips the whole forwarding path, which is a
 * different trade-off (see nfguard-extensions(8), RTCACHE).
 */
#include <stdio.h>
#include <string.h>

#include <xtables.h>
#undef _init

#include <linux/netfilter/xt_RTCACHE.h>

static void rtcache_tg_help(void)
{
	printf("RTCACHE target options: none.\n"
	       "  Valid in the mangle or filter table, FORWARD or INPUT chains (or\n"
	       "  chains reached only from them); the kernel refuses other places.\n"
	       "  Later packets of the flow's direction reuse the route learnt here.\n");
}

static void rtcache_tg_print(const void *ip, const struct xt_entry_target *target,
			     int numeric)
{
	(void)ip;
	(void)target;
	(void)numeric;
}

static void rtcache_tg_save(const void *ip, const struct xt_entry_target *target)
{
	(void)ip;
	(void)target;
}

static const struct xt_option_entry rtcache_tg_opts[] = {
	XTOPT_TABLEEND,
};

static struct xtables_target rtcache_tg_reg = {
	.version	= XTABLES_VERSION,
	.name		= "RTCACHE",
	.revision	= 0,
	.family		= NFPROTO_UNSPEC,
	.size		= XT_ALIGN(sizeof(struct xt_rtcache_tginfo)),
	.userspacesize	= XT_ALIGN(sizeof(struct xt_rtcache_tginfo)),
	.help		= rtcache_tg_help,
	.x6_options	= rtcache_tg_opts,
	.print		= rtcache_tg_print,
	.save		= rtcache_tg_save,
};

/* Registered by an ELF constructor, as libxt_rangeset (see there). */
static void __attribute__((constructor)) nfg_rtcache_tg_ldr(void)
{
	xtables_register_target(&rtcache_tg_reg);
}
