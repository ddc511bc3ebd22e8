// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard rangeset: xtables target "RANGESET" (IPv4 and IPv6).
 *
 *   -j RANGESET [--add-set NAME src|dst [--timeout S] [--exist]]
 *               [--del-set NAME src|dst] [--prefix N]
 *
 * Adds the packet's address (or its --prefix) to a set, or removes it,
 * from the packet path. The set's array is never rebuilt here and no
 * lock shared by all CPUs is taken: the address goes into the set's hash
 * of dynamic entries (rangeset_dyn_core.c), where the
 * next lookup on any CPU sees it, and the set's fold work moves it into
 * the array a tick later. Always continues (XT_CONTINUE).
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/netfilter.h>
#include <linux/netfilter/x_tables.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/netfilter/xt_rangeset.h>

#include "rangeset.h"

static void rangeset_tg_key(const struct sk_buff *skb, u8 family, u8 dirflags,
			    struct nfg_rs_key *key)
{
	if (family == NFPROTO_IPV6) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		nfg_rs_key_from_be(key, dirflags & XT_RANGESET_DST ?
				   &ip6h->daddr : &ip6h->saddr, true);
	} else {
		const struct iphdr *iph = ip_hdr(skb);

		nfg_rs_key_from_be(key, dirflags & XT_RANGESET_DST ?
				   &iph->daddr : &iph->saddr, false);
	}
}

static unsigned int rangeset_tg(struct sk_buff *skb,
				const struct xt_action_param *par)
{
	const struct xt_rangeset_tginfo *info = par->targinfo;
	u8 family = xt_family(par);
	u8 plen = info->flags & XT_RANGESET_TG_PREFIX ? info->prefix :
		  family == NFPROTO_IPV6 ? 128 : 32;
	struct nfg_rs_key key;
	u64 now = get_jiffies_64();

	if (info->add) {
		u32 secs = info->flags & XT_RANGESET_TG_TIMEOUT ?
			   info->timeout : READ_ONCE(info->add->core.timeout);
		u64 expires = secs ? now + (u64)secs * HZ : 0;

		rangeset_tg_key(skb, family, info->add_flags, &key);
		if (nfg_rs_dyn_add(&info->add->core, &key, plen, expires,
				   info->flags & XT_RANGESET_TG_EXIST, now) ==
		    NFG_RS_DYN_DONE)
			nfg_rs_fold_kick(info->add);
	}
	if (info->del) {
		rangeset_tg_key(skb, family, info->del_flags, &key);
		if (nfg_rs_dyn_del(&info->del->core, &key, plen) ==
		    NFG_RS_DYN_DONE)
			nfg_rs_fold_kick(info->del);
	}
	return XT_CONTINUE;
}

static bool rangeset_tg_name_ok(const char *name)
{
	return strnlen(name, XT_RANGESET_MAXNAMELEN) < XT_RANGESET_MAXNAMELEN;
}

/* Reference the set @name for a --add-set/--del-set, with its hash. */
static int rangeset_tg_get(const struct xt_tgchk_param *par, const char *opt,
			   const char *name, struct nfg_rangeset **setp)
{
	struct nfg_rangeset *set;
	int err;

	set = nfg_rs_rule_get(par->net, name, par->family);
	if (IS_ERR(set)) {
		if (PTR_ERR(set) == -ENOENT)
			pr_info_ratelimited("RANGESET: %s: set %s does not exist\n",
					    opt, name);
		else
			pr_info_ratelimited("RANGESET: %s: set %s is not an %s set\n",
					    opt, name,
					    par->family == NFPROTO_IPV6 ?
					    "ipv6" : "ipv4");
		return PTR_ERR(set);
	}
	err = nfg_rs_dyn_enable(&set->core, get_random_u32());
	if (err) {
		nfg_rs_rule_put(set);
		return err;
	}
	*setp = set;
	return 0;
}

static int rangeset_tg_check(const struct xt_tgchk_param *par)
{
	struct xt_rangeset_tginfo *info = par->targinfo;
	u8 maxplen = par->family == NFPROTO_IPV6 ? 128 : 32;
	int err;

	if (!rangeset_tg_name_ok(info->add_set) ||
	    !rangeset_tg_name_ok(info->del_set)) {
		pr_info_ratelimited("RANGESET: set name is not NUL-terminated\n");
		return -EINVAL;
	}
	if (!info->add_set[0] && !info->del_set[0]) {
		pr_info_ratelimited("RANGESET: needs --add-set or --del-set\n");
		return -EINVAL;
	}
	if (info->flags & ~XT_RANGESET_TG_FLAGS_ALL ||
	    info->add_flags & ~XT_RANGESET_DST ||
	    info->del_flags & ~XT_RANGESET_DST) {
		pr_info_ratelimited("RANGESET: unknown flags 0x%x/0x%x/0x%x\n",
				    info->flags, info->add_flags,
				    info->del_flags);
		return -EINVAL;
	}
	if (!info->add_set[0] &&
	    info->flags & (XT_RANGESET_TG_EXIST | XT_RANGESET_TG_TIMEOUT)) {
		pr_info_ratelimited("RANGESET: --timeout and --exist need --add-set\n");
		return -EINVAL;
	}
	if (!(info->flags & XT_RANGESET_TG_TIMEOUT) && info->timeout) {
		pr_info_ratelimited("RANGESET: timeout without its flag\n");
		return -EINVAL;
	}
	if (info->timeout > XT_RANGESET_TG_TIMEOUT_MAX) {
		pr_info_ratelimited("RANGESET: timeout %u out of range (0-%u)\n",
				    info->timeout, XT_RANGESET_TG_TIMEOUT_MAX);
		return -ERANGE;
	}
	if (!(info->flags & XT_RANGESET_TG_PREFIX) && info->prefix) {
		pr_info_ratelimited("RANGESET: prefix without its flag\n");
		return -EINVAL;
	}
	if (info->prefix > maxplen) {
		pr_info_ratelimited("RANGESET: prefix %u longer than %u\n",
				    info->prefix, maxplen);
		return -ERANGE;
	}

	info->add = NULL;
	info->del = NULL;
	if (info->add_set[0]) {
		err = rangeset_tg_get(par, "--add-set", info->add_set,
				      &info->add);
		if (err)
			goto err_out;
	}
	if (info->del_set[0]) {
		err = rangeset_tg_get(par, "--del-set", info->del_set,
				      &info->del);
		if (err)
			goto err_add;
	}
	return 0;

err_add:
	if (info->add)
		nfg_rs_rule_put(info->add);
err_out:
	return err;
}

static void rangeset_tg_destroy(const struct xt_tgdtor_param *par)
{
	struct xt_rangeset_tginfo *info = par->targinfo;

	if (info->del)
		nfg_rs_rule_put(info->del);
	if (info->add)
		nfg_rs_rule_put(info->add);
}

static struct xt_target rangeset_tg_reg[] __read_mostly = {
	{
		.name		= "RANGESET",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.checkentry	= rangeset_tg_check,
		.target		= rangeset_tg,
		.destroy	= rangeset_tg_destroy,
		.targetsize	= sizeof(struct xt_rangeset_tginfo),
		.usersize	= offsetof(struct xt_rangeset_tginfo, add),
		.me		= THIS_MODULE,
	},
	{
		.name		= "RANGESET",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.checkentry	= rangeset_tg_check,
		.target		= rangeset_tg,
		.destroy	= rangeset_tg_destroy,
		.targetsize	= sizeof(struct xt_rangeset_tginfo),
		.usersize	= offsetof(struct xt_rangeset_tginfo, add),
		.me		= THIS_MODULE,
	},
};

int nfg_rs_tg_register(void)
{
	return xt_register_targets(rangeset_tg_reg, ARRAY_SIZE(rangeset_tg_reg));
}

void nfg_rs_tg_unregister(void)
{
	xt_unregister_targets(rangeset_tg_reg, ARRAY_SIZE(rangeset_tg_reg));
}
