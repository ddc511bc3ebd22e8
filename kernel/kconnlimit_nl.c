// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard kconnlimit: generic netlink family "nfg_kconnlimit", and the
 * state the match and the control plane share: the list of rule instances
 * and the per-netns state (kconnlimit.h). The match (kconnlimit_mt.c)
 * sits above and calls down into this file; nothing here calls it.
 *
 * LIST and TOP are dumps over the rule instances of the caller's netns
 * (see nfguard_genl.h). The dump's .start takes a snapshot under
 * nfg_kcl_mutex: instance attributes, per-CPU counters summed, and for TOP
 * the n keys with the most connections (nfg_kcl_top() walks the chains
 * under RCU, without slot locks). The callbacks then only copy from the
 * snapshot: no lock is held across callbacks, and a rule deleted during
 * the dump cannot be touched. .done frees the snapshot.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/netns/generic.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_kconnlimit.h>

#include "kconnlimit.h"

/* Control plane only: links/unlinks instances, walked by the worker and dumps. */
DEFINE_MUTEX(nfg_kcl_mutex);
LIST_HEAD(nfg_kcl_instances);	/* under nfg_kcl_mutex */

unsigned int nfg_kcl_net_id __read_mostly;

struct nfg_kcl_net *nfg_kcl_pernet(struct net *net)
{
	return net_generic(net, nfg_kcl_net_id);
}

/* Connections remembered by the rules of @net (its budget). */
static unsigned long nfg_kcl_net_conns(struct net *net)
{
	return atomic_long_read(&nfg_kcl_pernet(net)->budget->b.conns);
}

static struct genl_family nfg_kcl_genl_family;

struct nfg_kcl_snap_inst {
	u32			id;
	char			name[XT_KCONNLIMIT_MAXNAMELEN];
	u8			family;
	u8			prefix;
	u8			flags;
	u32			limit;
	u32			slots;
	u32			locks;
	struct nfg_kcl_info	ci;
	u32			ntop;
	struct nfg_kcl_top_ent	*top;	/* kvmalloc'ed, TOP only */
};

struct nfg_kcl_snap {
	u32			n;
	u64			total_conns;
	u64			max_conns;
	struct nfg_kcl_snap_inst inst[];
};

/* Dump state in cb->ctx. */
struct nfg_kcl_dump {
	struct nfg_kcl_snap	*snap;
	u32			pos;		/* instance being sent */
	u32			ent;		/* TOP: next entry of it */
	bool			hdr_sent;	/* TOP: its header is out */
};

static struct nfg_kcl_dump *nfg_kcl_dump_ctx(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct nfg_kcl_dump) > sizeof(cb->ctx));
	return (struct nfg_kcl_dump *)cb->ctx;
}

static void nfg_kcl_snap_free(struct nfg_kcl_snap *snap)
{
	u32 i;

	if (!snap)
		return;
	for (i = 0; i < snap->n; i++)
		kvfree(snap->inst[i].top);
	kvfree(snap);
}

static bool nfg_kcl_selected(const struct nfg_kcl_instance *inst,
			     const struct net *net, const char *name)
{
	return net_eq(read_pnet(&inst->net), net) &&
	       (!name || !strcmp(inst->params.name, name));
}

static int nfg_kcl_dump_start(struct netlink_callback *cb)
{
	struct nlattr **attrs = nfg_genl_dump_attrs(cb);
	struct nfg_kcl_dump *d = nfg_kcl_dump_ctx(cb);
	const bool top = cb->nlh && ((struct genlmsghdr *)nlmsg_data(cb->nlh))->cmd ==
				    NFG_KCL_CMD_TOP;
	struct net *net = sock_net(cb->skb->sk);
	struct nfg_kcl_instance *inst;
	const char *name = NULL;
	struct nfg_kcl_snap_inst *si;
	struct nfg_kcl_snap *snap;
	u32 n = 0, ntop = NFG_KCL_TOP_DEFAULT, want;
	int err = 0;

	memset(d, 0, sizeof(*d));
	if (attrs[NFG_KCL_A_NAME])
		name = nla_data(attrs[NFG_KCL_A_NAME]);
	if (attrs[NFG_KCL_A_COUNT])
		ntop = nla_get_u32(attrs[NFG_KCL_A_COUNT]);

	mutex_lock(&nfg_kcl_mutex);
	list_for_each_entry(inst, &nfg_kcl_instances, list)
		if (nfg_kcl_selected(inst, net, name))
			n++;
	snap = kvzalloc(struct_size(snap, inst, n), GFP_KERNEL);
	if (!snap) {
		err = -ENOMEM;
		goto out_unlock;
	}
	snap->total_conns = nfg_kcl_net_conns(net);
	snap->max_conns = READ_ONCE(nfg_kcl_max_conns);
	list_for_each_entry(inst, &nfg_kcl_instances, list) {
		if (!nfg_kcl_selected(inst, net, name))
			continue;
		si = &snap->inst[snap->n++];
		si->id = inst->id;
		strscpy(si->name, inst->params.name, sizeof(si->name));
		si->family = inst->params.family;
		si->prefix = inst->params.prefix;
		si->flags = inst->flags;
		si->limit = inst->limit;
		si->slots = nfg_kcl_slots(&inst->table);
		si->locks = inst->table.lock_mask + 1;
		nfg_kcl_table_info(&inst->table, &si->ci);
		if (!top)
			continue;
		/* Keys may come and go meanwhile: room for what is there now. */
		want = min_t(u32, ntop, si->ci.keys + 16);
		si->top = kvmalloc_array(want, sizeof(*si->top), GFP_KERNEL);
		if (!si->top) {
			err = -ENOMEM;
			goto out_unlock;
		}
		si->ntop = nfg_kcl_top(&inst->table, si->top, want);
	}
out_unlock:
	mutex_unlock(&nfg_kcl_mutex);
	if (err) {
		nfg_kcl_snap_free(snap);
		return err;
	}
	d->snap = snap;
	return 0;
}

static int nfg_kcl_dump_done(struct netlink_callback *cb)
{
	struct nfg_kcl_dump *d = nfg_kcl_dump_ctx(cb);

	nfg_kcl_snap_free(d->snap);
	d->snap = NULL;
	return 0;
}

static int nfg_kcl_put_inst(struct sk_buff *skb, const struct nfg_kcl_snap *snap,
			    const struct nfg_kcl_snap_inst *si)
{
	const struct nfg_kcl_stats *s = &si->ci.stats;

	if (nla_put_u32(skb, NFG_KCL_A_ID, si->id) ||
	    nla_put_string(skb, NFG_KCL_A_NAME, si->name) ||
	    nla_put_u8(skb, NFG_KCL_A_FAMILY, si->family) ||
	    nla_put_u8(skb, NFG_KCL_A_PREFIX, si->prefix) ||
	    nla_put_u8(skb, NFG_KCL_A_FLAGS, si->flags) ||
	    nla_put_u32(skb, NFG_KCL_A_LIMIT, si->limit) ||
	    nla_put_u32(skb, NFG_KCL_A_KEYS, si->ci.keys) ||
	    nla_put_u32(skb, NFG_KCL_A_CONNS, si->ci.conns) ||
	    nla_put_u32(skb, NFG_KCL_A_SLOTS, si->slots) ||
	    nla_put_u32(skb, NFG_KCL_A_LOCKS, si->locks) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_MEMSIZE, si->ci.memsize, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_MATCHED, s->matched, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_OVER_LIMIT, s->over_limit, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_INSERTS, s->inserts, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_GC_EVICTIONS, s->gc_evictions, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_CAP_HITS, s->cap_hits, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_ALLOC_FAIL, s->alloc_fail, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_TOTAL_CONNS, snap->total_conns, NFG_KCL_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_KCL_A_MAX_CONNS, snap->max_conns, NFG_KCL_A_PAD))
		return -EMSGSIZE;
	return 0;
}

static void *nfg_kcl_msg(struct sk_buff *skb, struct netlink_callback *cb)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   &nfg_kcl_genl_family, NLM_F_MULTI,
			   ((struct genlmsghdr *)nlmsg_data(cb->nlh))->cmd);
}

/* One message of entries of @si from d->ent on; returns entries put. */
static int nfg_kcl_put_entries(struct sk_buff *skb, struct netlink_callback *cb,
			       struct nfg_kcl_dump *d,
			       const struct nfg_kcl_snap_inst *si)
{
	const unsigned int alen = si->family == NFPROTO_IPV6 ? 16 : 4;
	struct nlattr *nest, *ent;
	int put = 0;
	void *hdr;

	hdr = nfg_kcl_msg(skb, cb);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NFG_KCL_A_ID, si->id))
		goto err_cancel;
	nest = nla_nest_start(skb, NFG_KCL_A_ENTRIES);
	if (!nest)
		goto err_cancel;
	while (d->ent < si->ntop) {
		const struct nfg_kcl_top_ent *e = &si->top[d->ent];

		ent = nla_nest_start(skb, NFG_KCL_A_ENTRY);
		if (!ent)
			break;
		if (nla_put(skb, NFG_KCL_E_ADDR, alen, e->key.w) ||
		    nla_put_u32(skb, NFG_KCL_E_COUNT, e->count) ||
		    nla_put_u16(skb, NFG_KCL_E_ZONE, (u16)e->key.zone)) {
			nla_nest_cancel(skb, ent);
			break;
		}
		nla_nest_end(skb, ent);
		d->ent++;
		put++;
	}
	if (!put)
		goto err_cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return put;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int nfg_kcl_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nfg_kcl_dump *d = nfg_kcl_dump_ctx(cb);
	struct nfg_kcl_snap *snap = d->snap;
	const struct nfg_kcl_snap_inst *si;
	int sent = 0;
	void *hdr;

	while (snap && d->pos < snap->n) {
		si = &snap->inst[d->pos];
		if (!d->hdr_sent) {
			hdr = nfg_kcl_msg(skb, cb);
			if (!hdr)
				break;
			if (nfg_kcl_put_inst(skb, snap, si)) {
				genlmsg_cancel(skb, hdr);
				break;
			}
			genlmsg_end(skb, hdr);
			sent++;
			d->hdr_sent = true;
		}
		if (d->ent < si->ntop) {
			if (nfg_kcl_put_entries(skb, cb, d, si) < 0)
				break;
			sent++;
			continue;
		}
		d->pos++;
		d->ent = 0;
		d->hdr_sent = false;
	}
	/* Nothing fit in an empty buffer: cannot happen with these sizes. */
	if (!sent && snap && d->pos < snap->n)
		return -EMSGSIZE;
	return skb->len;
}

/* ---- family ----------------------------------------------------------- */

static const struct nla_policy nfg_kcl_list_policy[NFG_KCL_A_MAX + 1] = {
	[NFG_KCL_A_NAME]	= { .type = NLA_NUL_STRING,
				    .len = XT_KCONNLIMIT_MAXNAMELEN - 1 },
};

static const struct nla_policy nfg_kcl_top_policy[NFG_KCL_A_MAX + 1] = {
	[NFG_KCL_A_NAME]	= { .type = NLA_NUL_STRING,
				    .len = XT_KCONNLIMIT_MAXNAMELEN - 1 },
	[NFG_KCL_A_COUNT]	= NLA_POLICY_RANGE(NLA_U32, 1, NFG_KCL_TOP_MAX),
};

static const struct genl_ops nfg_kcl_genl_ops[] = {
	{
		.cmd		= NFG_KCL_CMD_LIST,
		.start		= nfg_kcl_dump_start,
		.dumpit		= nfg_kcl_dumpit,
		.done		= nfg_kcl_dump_done,
		.policy		= nfg_kcl_list_policy,
		.maxattr	= NFG_KCL_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_KCL_CMD_TOP,
		.start		= nfg_kcl_dump_start,
		.dumpit		= nfg_kcl_dumpit,
		.done		= nfg_kcl_dump_done,
		.policy		= nfg_kcl_top_policy,
		.maxattr	= NFG_KCL_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family nfg_kcl_genl_family __ro_after_init = {
	.name		= NFG_KCONNLIMIT_GENL_NAME,
	.version	= NFG_KCONNLIMIT_GENL_VERSION,
	.maxattr	= NFG_KCL_A_MAX,
	.netnsok	= true,
	/* Own locking (nfg_kcl_mutex in .start only). */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= nfg_kcl_genl_ops,
	.n_ops		= ARRAY_SIZE(nfg_kcl_genl_ops),
};

int nfg_kcl_nl_init(void)
{
	return genl_register_family(&nfg_kcl_genl_family);
}

void nfg_kcl_nl_exit(void)
{
	genl_unregister_family(&nfg_kcl_genl_family);
}
