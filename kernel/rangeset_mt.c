// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard rangeset: xtables match "rangeset" (IPv4 and IPv6), and module
 * init/exit (which also registers the RANGESET target, rangeset_tg.c).
 *
 *   -m rangeset [!] --match-set NAME src|dst
 *
 * The packet path reads the set's published array under RCU
 * (rangeset_core.c): no lock, no atomic write, only per-CPU counters.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/netfilter.h>
#include <linux/netfilter/x_tables.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_rangeset.h>

#include "rangeset.h"

static bool rangeset_mt4(const struct sk_buff *skb, struct xt_action_param *par)
{
	const struct xt_rangeset_mtinfo *info = par->matchinfo;
	const struct iphdr *iph = ip_hdr(skb);
	__be32 addr = info->flags & XT_RANGESET_DST ? iph->daddr : iph->saddr;
	bool hit;

	hit = nfg_rs_core_match4(&info->set->core, be32_to_cpu(addr),
				 get_jiffies_64());
	return hit ^ !!(info->flags & XT_RANGESET_INV);
}

static bool rangeset_mt6(const struct sk_buff *skb, struct xt_action_param *par)
{
	const struct xt_rangeset_mtinfo *info = par->matchinfo;
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct nfg_rs_key key;
	bool hit;

	nfg_rs_key_from_be(&key, info->flags & XT_RANGESET_DST ?
			   &ip6h->daddr : &ip6h->saddr, true);
	hit = nfg_rs_core_match6(&info->set->core, &key, get_jiffies_64());
	return hit ^ !!(info->flags & XT_RANGESET_INV);
}

static int rangeset_mt_check(const struct xt_mtchk_param *par)
{
	struct xt_rangeset_mtinfo *info = par->matchinfo;
	struct nfg_rangeset *set;

	if (strnlen(info->name, sizeof(info->name)) == sizeof(info->name)) {
		pr_info_ratelimited("rangeset: set name is not NUL-terminated\n");
		return -EINVAL;
	}
	if (!info->name[0]) {
		pr_info_ratelimited("rangeset: set name is empty\n");
		return -EINVAL;
	}
	if (info->flags & ~XT_RANGESET_FLAGS_ALL) {
		pr_info_ratelimited("rangeset: unknown flags 0x%x\n", info->flags);
		return -EINVAL;
	}

	set = nfg_rs_rule_get(par->net, info->name, par->family);
	if (IS_ERR(set)) {
		if (PTR_ERR(set) == -ENOENT)
			pr_info_ratelimited("rangeset: set %s does not exist\n",
					    info->name);
		else
			pr_info_ratelimited("rangeset: set %s is not an %s set\n",
					    info->name,
					    par->family == NFPROTO_IPV6 ?
					    "ipv6" : "ipv4");
		return PTR_ERR(set);
	}
	info->set = set;
	return 0;
}

static void rangeset_mt_destroy(const struct xt_mtdtor_param *par)
{
	struct xt_rangeset_mtinfo *info = par->matchinfo;

	nfg_rs_rule_put(info->set);
}

static struct xt_match rangeset_mt_reg[] __read_mostly = {
	{
		.name		= "rangeset",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.checkentry	= rangeset_mt_check,
		.match		= rangeset_mt4,
		.destroy	= rangeset_mt_destroy,
		.matchsize	= sizeof(struct xt_rangeset_mtinfo),
		.usersize	= offsetof(struct xt_rangeset_mtinfo, set),
		.me		= THIS_MODULE,
	},
	{
		.name		= "rangeset",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.checkentry	= rangeset_mt_check,
		.match		= rangeset_mt6,
		.destroy	= rangeset_mt_destroy,
		.matchsize	= sizeof(struct xt_rangeset_mtinfo),
		.usersize	= offsetof(struct xt_rangeset_mtinfo, set),
		.me		= THIS_MODULE,
	},
};

static int __init rangeset_mt_init(void)
{
	int err;

	/* The entries' cache, then sets and the control plane. */
	err = nfg_rs_dyn_init();
	if (err)
		goto err_out;
	/* Sets and the control plane first: checkentry looks sets up. */
	err = nfg_rs_nl_init();
	if (err)
		goto err_dyn;
	err = xt_register_matches(rangeset_mt_reg, ARRAY_SIZE(rangeset_mt_reg));
	if (err)
		goto err_nl;
	err = nfg_rs_tg_register();
	if (err)
		goto err_mt;
	return 0;

err_mt:
	xt_unregister_matches(rangeset_mt_reg, ARRAY_SIZE(rangeset_mt_reg));
err_nl:
	nfg_rs_nl_exit();
err_dyn:
	nfg_rs_dyn_exit();
err_out:
	return err;
}

static void __exit rangeset_mt_exit(void)
{
	nfg_rs_tg_unregister();
	xt_unregister_matches(rangeset_mt_reg, ARRAY_SIZE(rangeset_mt_reg));
	nfg_rs_nl_exit();
	/* after every set: waits for their entries' frees */
	nfg_rs_dyn_exit();
}

/* Read-only: sets and arrays alive in all namespaces (leak checks in tests). */
static int rangeset_live_objects_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", nfg_rs_live_count());
}

static const struct kernel_param_ops rangeset_live_objects_ops = {
	.get	= rangeset_live_objects_get,
};
module_param_cb(live_objects, &rangeset_live_objects_ops, NULL, 0444);
MODULE_PARM_DESC(live_objects,
		 "sets, lookup arrays, hashes and packet-path entries allocated, summed over all network namespaces (a leak check, not a per-namespace count)");

module_init(rangeset_mt_init);
module_exit(rangeset_mt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nfguard: match addresses against named IPv4/IPv6 range sets, and add to them");
MODULE_ALIAS("ipt_rangeset");
MODULE_ALIAS("ip6t_rangeset");
MODULE_ALIAS("ipt_RANGESET");
MODULE_ALIAS("ip6t_RANGESET");
MODULE_ALIAS_GENL_FAMILY(NFG_RANGESET_GENL_NAME);
