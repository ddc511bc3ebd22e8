// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard RTCACHE: generic netlink family "nfg_rtcache" (see
 * nfguard_genl.h): STATS, LIST (dump of the cached routes) and FLUSH, all
 * for the caller's netns.
 *
 * LIST walks the table with an rhashtable walker allocated in .start and
 * freed in .done; each callback is one RCU read-side section (walk
 * start/stop), so no lock is held across callbacks and entries freed
 * between callbacks are never touched.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/jiffies.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/slab.h>
#include <net/dst.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <linux/netfilter/nfguard_genl.h>

#include "rtcache.h"

static struct genl_family nfg_rtc_genl_family;

static int nfg_rtc_put_stats(struct sk_buff *skb, struct nfg_rtc_net *rn)
{
	struct nfg_rtc_stats s;

	nfg_rtc_stats_sum(rn, &s);
	if (nla_put_u32(skb, NFG_RTC_A_COUNT, atomic_read(&rn->table.nelems)) ||
	    nla_put_u32(skb, NFG_RTC_A_MAX_ENTRIES, nfg_rtc_max_entries()) ||
	    nla_put_u64_64bit(skb, NFG_RTC_A_HIT, s.hit, NFG_RTC_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RTC_A_MISS, s.miss, NFG_RTC_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RTC_A_LEARN, s.learn, NFG_RTC_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RTC_A_INVALID, s.invalid, NFG_RTC_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RTC_A_EVICT, s.evict, NFG_RTC_A_PAD))
		return -EMSGSIZE;
	return 0;
}

static int nfg_rtc_reply(struct genl_info *info, u8 cmd,
			 int (*fill)(struct sk_buff *skb, void *arg), void *arg)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &nfg_rtc_genl_family, 0, cmd);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}
	err = fill(msg, arg);
	if (err)
		goto err_free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return err;
}

static int nfg_rtc_fill_stats(struct sk_buff *skb, void *arg)
{
	return nfg_rtc_put_stats(skb, arg);
}

static int nfg_rtc_stats_doit(struct sk_buff *skb, struct genl_info *info)
{
	return nfg_rtc_reply(info, NFG_RTC_CMD_STATS, nfg_rtc_fill_stats,
			     nfg_rtc_pernet(genl_info_net(info)));
}

static int nfg_rtc_fill_count(struct sk_buff *skb, void *arg)
{
	return nla_put_u32(skb, NFG_RTC_A_COUNT, *(u32 *)arg) ? -EMSGSIZE : 0;
}

static int nfg_rtc_flush_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(genl_info_net(info));
	u8 family = 0;
	u32 n;

	if (info->attrs[NFG_RTC_A_FAMILY]) {
		family = nla_get_u8(info->attrs[NFG_RTC_A_FAMILY]);
		if (family != NFPROTO_IPV4 && family != NFPROTO_IPV6) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[NFG_RTC_A_FAMILY],
					    "family must be ipv4 or ipv6");
			return -EINVAL;
		}
	}
	n = nfg_rtc_flush(rn, family);
	return nfg_rtc_reply(info, NFG_RTC_CMD_FLUSH, nfg_rtc_fill_count, &n);
}

/* ---- LIST dump ------------------------------------------------------------ */

static int nfg_rtc_put_entry(struct sk_buff *skb, const struct nfg_rtc_entry *e)
{
	const struct nfg_rtc_keys *k = &e->l.keys;
	int alen = k->family == NFPROTO_IPV6 ? 16 : 4;
	unsigned long now = jiffies;

	if (nla_put_u8(skb, NFG_RTC_A_FAMILY, k->family) ||
	    nla_put_u8(skb, NFG_RTC_A_DIR, e->dir) ||
	    nla_put(skb, NFG_RTC_A_SRC, alen, k->saddr) ||
	    nla_put(skb, NFG_RTC_A_DST, alen, k->daddr) ||
	    nla_put_u32(skb, NFG_RTC_A_IIF, k->iif) ||
	    nla_put_u32(skb, NFG_RTC_A_OIF, READ_ONCE(e->dst->dev)->ifindex) ||
	    nla_put_u32(skb, NFG_RTC_A_MARK, k->mark) ||
	    nla_put_u8(skb, NFG_RTC_A_DSCP, k->dscp) ||
	    nla_put_u32(skb, NFG_RTC_A_AGE_MS,
			jiffies_to_msecs(now - e->learnt)) ||
	    nla_put_u32(skb, NFG_RTC_A_IDLE_MS,
			jiffies_to_msecs(now - READ_ONCE(e->last_used))))
		return -EMSGSIZE;
	return 0;
}

static int nfg_rtc_dump_start(struct netlink_callback *cb)
{
	struct nfg_rtc_net *rn = nfg_rtc_pernet(sock_net(cb->skb->sk));
	struct rhashtable_iter *iter;

	iter = kzalloc(sizeof(*iter), GFP_KERNEL);
	if (!iter)
		return -ENOMEM;
	rhashtable_walk_enter(&rn->table, iter);
	cb->args[0] = (long)iter;
	cb->args[1] = 0;	/* an entry that did not fit, to send first */
	return 0;
}

static int nfg_rtc_dump_done(struct netlink_callback *cb)
{
	struct rhashtable_iter *iter = (struct rhashtable_iter *)cb->args[0];

	if (iter) {
		rhashtable_walk_exit(iter);
		kfree(iter);
	}
	return 0;
}

static int nfg_rtc_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct rhashtable_iter *iter = (struct rhashtable_iter *)cb->args[0];
	struct nfg_rtc_entry *e;
	int sent = 0;
	void *hdr;

	rhashtable_walk_start(iter);
	/* The entry that did not fit last time (peek re-reads it safely). */
	e = cb->args[1] ? rhashtable_walk_peek(iter) : rhashtable_walk_next(iter);
	cb->args[1] = 0;
	for (; e; e = rhashtable_walk_next(iter)) {
		if (IS_ERR(e)) {
			if (PTR_ERR(e) == -EAGAIN)
				continue;
			break;
		}
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &nfg_rtc_genl_family,
				  NLM_F_MULTI, NFG_RTC_CMD_LIST);
		if (!hdr || nfg_rtc_put_entry(skb, e)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			cb->args[1] = 1;
			break;
		}
		genlmsg_end(skb, hdr);
		sent++;
	}
	rhashtable_walk_stop(iter);
	if (cb->args[1] && !sent)
		return -EMSGSIZE;
	return skb->len;
}

/* ---- family ------------------------------------------------------------- */

static const struct nla_policy nfg_rtc_flush_policy[NFG_RTC_A_MAX + 1] = {
	[NFG_RTC_A_FAMILY]	= { .type = NLA_U8 },
};

static const struct nla_policy nfg_rtc_none_policy[NFG_RTC_A_MAX + 1] = {
};

static const struct genl_ops nfg_rtc_genl_ops[] = {
	{
		.cmd		= NFG_RTC_CMD_STATS,
		.doit		= nfg_rtc_stats_doit,
		.policy		= nfg_rtc_none_policy,
		.maxattr	= NFG_RTC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RTC_CMD_LIST,
		.start		= nfg_rtc_dump_start,
		.dumpit		= nfg_rtc_dumpit,
		.done		= nfg_rtc_dump_done,
		.policy		= nfg_rtc_none_policy,
		.maxattr	= NFG_RTC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RTC_CMD_FLUSH,
		.doit		= nfg_rtc_flush_doit,
		.policy		= nfg_rtc_flush_policy,
		.maxattr	= NFG_RTC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family nfg_rtc_genl_family __ro_after_init = {
	.name		= NFG_RTCACHE_GENL_NAME,
	.version	= NFG_RTCACHE_GENL_VERSION,
	.maxattr	= NFG_RTC_A_MAX,
	.netnsok	= true,
	/* No family-wide lock: the table has its own (see rtcache_net.c). */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= nfg_rtc_genl_ops,
	.n_ops		= ARRAY_SIZE(nfg_rtc_genl_ops),
};

int nfg_rtc_nl_init(void)
{
	return genl_register_family(&nfg_rtc_genl_family);
}

void nfg_rtc_nl_exit(void)
{
	genl_unregister_family(&nfg_rtc_genl_family);
}
