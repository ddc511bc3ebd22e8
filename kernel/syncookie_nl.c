// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard SYNCOOKIE: per-netns state (allowlist, counters, cookie secret),
 * the "nfg_syncookie" generic netlink family and
 * /proc/net/stat/nfguard_syncookie.
 *
 * Locking: the allowlist has its own keyed locks (syncookie_core.c); the
 * control plane uses the same calls as the packet path. The secret is an
 * immutable RCU-published object, replaced under the netns' secret_lock
 * (control plane only). Counters are per-CPU and summed when read. A
 * netns' state is made on its first use under nfg_sc_create_mutex and
 * published once (release/acquire); it stays until the netns exits.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/proc_fs.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_SYNCOOKIE.h>

#include "syncookie.h"

#define NFG_SC_PROC_NAME	"nfguard_syncookie"
#define NFG_SC_GC_PERIOD	(2 * HZ)
/* Entries per LIST dump callback (copied under RCU, then emitted). */
#define NFG_SC_DUMP_BATCH	64

unsigned int nfg_sc_allowlist_max = NFG_SC_AL_DEFAULT_MAX;
module_param_named(allowlist_max, nfg_sc_allowlist_max, uint, 0444);
MODULE_PARM_DESC(allowlist_max, "allowlist entries per netns (LRU eviction above; default 65536)");

static unsigned int nfg_sc_allowlist_buckets;
module_param_named(allowlist_buckets, nfg_sc_allowlist_buckets, uint, 0444);
MODULE_PARM_DESC(allowlist_buckets, "allowlist hash buckets per netns (power of two; default 0: allowlist_max / 4)");

static unsigned int nfg_sc_net_id __read_mostly;
static struct genl_family nfg_sc_genl_family;

/*
 * What every netns holds: a pointer, set on first use (see nfg_sc_net), and
 * the proxy rules' hold on the synproxy hooks.
 */
struct nfg_sc_pernet {
	struct nfg_sc_net	*sn;
	struct nfg_sc_hooks	hooks;
};

/* Serialises making a netns' state (control plane, rare). */
static DEFINE_MUTEX(nfg_sc_create_mutex);

struct nfg_sc_net *nfg_sc_pernet(const struct net *net)
{
	struct nfg_sc_pernet *pn = net_generic(net, nfg_sc_net_id);

	/* pairs with smp_store_release() in nfg_sc_pernet_get() */
	return smp_load_acquire(&pn->sn);
}

struct nfg_sc_hooks *nfg_sc_hooks(const struct net *net)
{
	struct nfg_sc_pernet *pn = net_generic(net, nfg_sc_net_id);

	return &pn->hooks;
}

void nfg_sc_stats_sum(const struct nfg_sc_net *sn, struct nfg_sc_stats *sum)
{
	unsigned int cpu, i;

	memset(sum, 0, sizeof(*sum));
	if (!sn)
		return;
	for_each_possible_cpu(cpu) {
		const u64 *c = (const u64 *)per_cpu_ptr(sn->stats, cpu);
		u64 *s = (u64 *)sum;

		for (i = 0; i < NFG_SC_NSTATS; i++)
			s[i] += READ_ONCE(c[i]);
	}
}

/* ---- secret ----------------------------------------------------------- */

/*
 * A secret's memory is zeroed when freed (kfree_sensitive()): on
 * replacement (after readers are done), at netns exit and so at module
 * unload. The packet path never copies it.
 */
static void nfg_sc_secret_free_rcu(struct rcu_head *head)
{
	kfree_sensitive(container_of(head, struct nfg_sc_secret_rcu, rcu));
}

static int nfg_sc_secret_replace(struct nfg_sc_net *sn, const u8 *key,
				 bool keep_prev)
{
	struct nfg_sc_secret_rcu *old, *new;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return -ENOMEM;
	mutex_lock(&sn->secret_lock);
	old = rcu_dereference_protected(sn->secret,
					lockdep_is_held(&sn->secret_lock));
	if (key)
		memcpy(&new->s.key[0], key, sizeof(new->s.key[0]));
	else
		get_random_bytes(&new->s.key[0], sizeof(new->s.key[0]));
	if (keep_prev && old) {
		new->s.key[1] = old->s.key[0];
		new->s.has_prev = true;
	}
	rcu_assign_pointer(sn->secret, new);
	mutex_unlock(&sn->secret_lock);
	if (old)
		call_rcu(&old->rcu, nfg_sc_secret_free_rcu);
	return 0;
}

/* ---- allowlist -------------------------------------------------------- */

int nfg_sc_allowlist_add(struct nfg_sc_net *sn, const struct nfg_sc_key *k,
			 u32 timeout)
{
	struct mem_cgroup *old;
	unsigned int evicted;
	int ret;

	/*
	 * Charged to the state's memcg, not to whatever runs this: a softirq
	 * has none, and an admin's command is not the tenant's memory.
	 */
	old = set_active_memcg(sn->memcg);
	ret = nfg_sc_al_add(&sn->al, k, nfg_sc_now(), timeout, &evicted);
	set_active_memcg(old);
	if (ret == 0)
		this_cpu_inc(sn->stats->allowlist_add);
	if (evicted)
		this_cpu_add(sn->stats->allowlist_evict, evicted);
	return ret;
}

/* ---- genetlink -------------------------------------------------------- */

static int nfg_sc_get_addr(struct genl_info *info, struct nfg_sc_key *k)
{
	struct nlattr *a = info->attrs[NFG_SC_A_ADDR];
	u32 addr[4] = { 0 }, mask[4];
	unsigned int plen, prefix;
	u8 family;

	if (!a) {
		GENL_SET_ERR_MSG(info, "address missing");
		return -EINVAL;
	}
	plen = nla_len(a);
	if (plen != 4 && plen != 16) {
		NL_SET_ERR_MSG_ATTR(info->extack, a, "address must be 4 or 16 bytes");
		return -EINVAL;
	}
	memcpy(addr, nla_data(a), plen);
	family = plen == 4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
	prefix = plen * 8;
	if (info->attrs[NFG_SC_A_PREFIX]) {
		prefix = nla_get_u8(info->attrs[NFG_SC_A_PREFIX]);
		if (!prefix || prefix > plen * 8) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NFG_SC_A_PREFIX],
					    "prefix out of range for the address family");
			return -EINVAL;
		}
	}
	nfg_sc_prefix_mask(mask, prefix);
	nfg_sc_key_make(k, addr, family, mask, prefix);
	return 0;
}

static int nfg_sc_cmd_al_add(struct sk_buff *skb, struct genl_info *info)
{
	u32 timeout = XT_SYNCOOKIE_TIMEOUT_DEFAULT;
	struct nfg_sc_net *sn;
	struct nfg_sc_key k;
	int err;

	err = nfg_sc_get_addr(info, &k);
	if (err)
		return err;
	if (info->attrs[NFG_SC_A_TIMEOUT]) {
		timeout = nla_get_u32(info->attrs[NFG_SC_A_TIMEOUT]);
		if (timeout > XT_SYNCOOKIE_TIMEOUT_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NFG_SC_A_TIMEOUT],
					    "timeout above 7 days");
			return -EINVAL;
		}
	}
	sn = nfg_sc_pernet_get(genl_info_net(info));
	if (IS_ERR(sn))
		return PTR_ERR(sn);
	err = nfg_sc_allowlist_add(sn, &k, timeout);
	return err < 0 ? err : 0;
}

static int nfg_sc_cmd_al_del(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_sc_net *sn = nfg_sc_pernet(genl_info_net(info));
	struct nfg_sc_key k;
	int err;

	err = nfg_sc_get_addr(info, &k);
	if (err)
		return err;
	if (!sn || !nfg_sc_al_del(&sn->al, &k)) {
		GENL_SET_ERR_MSG(info, "not on the allowlist");
		return -ENOENT;
	}
	return 0;
}

static int nfg_sc_cmd_al_flush(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_sc_net *sn = nfg_sc_pernet(genl_info_net(info));
	struct sk_buff *msg;
	unsigned int n;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	n = sn ? nfg_sc_al_flush(&sn->al) : 0;
	hdr = genlmsg_put_reply(msg, info, &nfg_sc_genl_family, 0,
				NFG_SC_CMD_AL_FLUSH);
	if (!hdr || nla_put_u32(msg, NFG_SC_A_COUNT, n)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int nfg_sc_cmd_secret_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *a = info->attrs[NFG_SC_A_SECRET];
	struct nfg_sc_net *sn;

	if (!a) {
		GENL_SET_ERR_MSG(info, "secret missing");
		return -EINVAL;
	}
	sn = nfg_sc_pernet_get(genl_info_net(info));
	if (IS_ERR(sn))
		return PTR_ERR(sn);
	/* the previous secret stays valid: a cluster changes box by box */
	return nfg_sc_secret_replace(sn, nla_data(a), true);
}

static int nfg_sc_cmd_secret_rotate(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_sc_net *sn = nfg_sc_pernet_get(genl_info_net(info));

	if (IS_ERR(sn))
		return PTR_ERR(sn);
	return nfg_sc_secret_replace(sn, NULL, true);
}

static int nfg_sc_cmd_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_sc_net *sn = nfg_sc_pernet(genl_info_net(info));
	struct nfg_sc_stats st;
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	nfg_sc_stats_sum(sn, &st);
	hdr = genlmsg_put_reply(msg, info, &nfg_sc_genl_family, 0,
				NFG_SC_CMD_STATS);
	if (!hdr ||
	    nla_put_u32(msg, NFG_SC_A_COUNT, sn ? atomic_read(&sn->al.count) : 0) ||
	    nla_put_u32(msg, NFG_SC_A_MAX_ENTRIES,
			sn ? sn->al.max : nfg_sc_allowlist_max) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_SYN_SEEN, st.syn_seen, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_COOKIE_SENT, st.cookie_sent, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_ACK_VALID, st.ack_valid, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_ACK_INVALID, st.ack_invalid, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_ALLOWLIST_HIT, st.allowlist_hit, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_ALLOWLIST_ADD, st.allowlist_add, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_ALLOWLIST_EVICT, st.allowlist_evict, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_PROXIED, st.proxied, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_MALFORMED, st.malformed, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_SEND_FAIL, st.send_fail, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_SENT_INPLACE, st.sent_inplace, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_SYN_RESENT, st.syn_resent, NFG_SC_A_PAD) ||
	    nla_put_u64_64bit(msg, NFG_SC_A_AFTER_CONNTRACK, st.after_conntrack,
			      NFG_SC_A_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * LIST dump: cb->args[0] and [1] are the walk's cursor (bucket, live
 * entries of it already sent), cb->args[2] says the walk is over. Entries
 * are copied under RCU into a batch, then emitted one message each; the
 * first that does not fit in this skb is where the next call resumes. No
 * lock is held between callbacks.
 */
static int nfg_sc_al_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nfg_sc_net *sn = nfg_sc_pernet(sock_net(skb->sk));
	struct nfg_sc_al_pos pos = { cb->args[0], cb->args[1] };
	struct nfg_sc_al_ent *batch;
	u32 now = nfg_sc_now();
	unsigned int n, i;
	void *mark;

	if (cb->args[2] || !sn)
		return 0;
	batch = kmalloc_array(NFG_SC_DUMP_BATCH, sizeof(*batch), GFP_KERNEL);
	if (!batch)
		return -ENOMEM;
	while (pos.bucket <= sn->al.bucket_mask) {
		n = nfg_sc_al_walk(&sn->al, now, &pos, batch, NFG_SC_DUMP_BATCH);
		for (i = 0; i < n; i++) {
			const struct nfg_sc_al_ent *e = &batch[i];
			unsigned int alen = e->key.family == NFPROTO_IPV6 ? 16 : 4;
			void *hdr;

			mark = skb_tail_pointer(skb);
			hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, &nfg_sc_genl_family,
					  NLM_F_MULTI, NFG_SC_CMD_AL_LIST);
			if (!hdr ||
			    nla_put_u8(skb, NFG_SC_A_FAMILY, e->key.family) ||
			    nla_put(skb, NFG_SC_A_ADDR, alen, e->key.w) ||
			    nla_put_u8(skb, NFG_SC_A_PREFIX, e->key.prefix) ||
			    nla_put_u32(skb, NFG_SC_A_TIMEOUT, e->expires - now)) {
				nlmsg_trim(skb, mark);
				/* e points into batch: save the cursor first */
				cb->args[0] = e->bucket;
				cb->args[1] = e->idx;
				kfree(batch);
				/* one entry's message always fits in an empty skb */
				return skb->len ? skb->len : -EMSGSIZE;
			}
			genlmsg_end(skb, hdr);
		}
	}
	cb->args[2] = 1;
	kfree(batch);
	return skb->len;
}

static const struct nla_policy nfg_sc_policy[NFG_SC_A_MAX + 1] = {
	[NFG_SC_A_ADDR]		= NLA_POLICY_RANGE(NLA_BINARY, 4, 16),
	[NFG_SC_A_PREFIX]	= NLA_POLICY_RANGE(NLA_U8, 1, 128),
	[NFG_SC_A_TIMEOUT]	= NLA_POLICY_MIN(NLA_U32, 1),	/* max: in the doit */
	[NFG_SC_A_SECRET]	= NLA_POLICY_EXACT_LEN(NFG_SC_SECRET_LEN),
};

static const struct genl_ops nfg_sc_genl_ops[] = {
	{
		.cmd		= NFG_SC_CMD_STATS,
		.doit		= nfg_sc_cmd_stats,
		.policy		= nfg_sc_policy,
		.maxattr	= NFG_SC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_SC_CMD_AL_LIST,
		.dumpit		= nfg_sc_al_dumpit,
		.policy		= nfg_sc_policy,
		.maxattr	= NFG_SC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_SC_CMD_AL_ADD,
		.doit		= nfg_sc_cmd_al_add,
		.policy		= nfg_sc_policy,
		.maxattr	= NFG_SC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_SC_CMD_AL_DEL,
		.doit		= nfg_sc_cmd_al_del,
		.policy		= nfg_sc_policy,
		.maxattr	= NFG_SC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_SC_CMD_AL_FLUSH,
		.doit		= nfg_sc_cmd_al_flush,
		.policy		= nfg_sc_policy,
		.maxattr	= NFG_SC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_SC_CMD_SECRET_SET,
		.doit		= nfg_sc_cmd_secret_set,
		.policy		= nfg_sc_policy,
		.maxattr	= NFG_SC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_SC_CMD_SECRET_ROTATE,
		.doit		= nfg_sc_cmd_secret_rotate,
		.policy		= nfg_sc_policy,
		.maxattr	= NFG_SC_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family nfg_sc_genl_family __ro_after_init = {
	.name		= NFG_SYNCOOKIE_GENL_NAME,
	.version	= NFG_SYNCOOKIE_GENL_VERSION,
	.maxattr	= NFG_SC_A_MAX,
	.netnsok	= true,
	/* Own locking (see the top). */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= nfg_sc_genl_ops,
	.n_ops		= ARRAY_SIZE(nfg_sc_genl_ops),
};

/* ---- per-netns state and /proc/net/stat/nfguard_syncookie -------------- */

static int nfg_sc_proc_show(struct seq_file *seq, void *v)
{
	struct nfg_sc_net *sn = nfg_sc_pernet(seq_file_single_net(seq));
	struct nfg_sc_stats st;

	nfg_sc_stats_sum(sn, &st);
	seq_printf(seq, "syn_seen %llu\n", st.syn_seen);
	seq_printf(seq, "cookie_sent %llu\n", st.cookie_sent);
	seq_printf(seq, "ack_valid %llu\n", st.ack_valid);
	seq_printf(seq, "ack_invalid %llu\n", st.ack_invalid);
	seq_printf(seq, "allowlist_hit %llu\n", st.allowlist_hit);
	seq_printf(seq, "allowlist_add %llu\n", st.allowlist_add);
	seq_printf(seq, "allowlist_evict %llu\n", st.allowlist_evict);
	seq_printf(seq, "proxied %llu\n", st.proxied);
	seq_printf(seq, "malformed %llu\n", st.malformed);
	seq_printf(seq, "send_fail %llu\n", st.send_fail);
	seq_printf(seq, "sent_inplace %llu\n", st.sent_inplace);
	seq_printf(seq, "syn_resent %llu\n", st.syn_resent);
	seq_printf(seq, "after_conntrack %llu\n", st.after_conntrack);
	seq_printf(seq, "allowlist_entries %d\n", sn ? atomic_read(&sn->al.count) : 0);
	seq_printf(seq, "allowlist_max %u\n", sn ? sn->al.max : nfg_sc_allowlist_max);
	return 0;
}

static void nfg_sc_gc(struct work_struct *work)
{
	struct nfg_sc_net *sn = container_of(to_delayed_work(work),
					     struct nfg_sc_net, gc_work);

	if (atomic_read(&sn->al.count))
		nfg_sc_al_expire(&sn->al, nfg_sc_now(), 0,
				 nfg_sc_al_buckets(&sn->al));
	queue_delayed_work(system_power_efficient_wq, &sn->gc_work,
			   NFG_SC_GC_PERIOD);
}

static void nfg_sc_state_free(struct nfg_sc_net *sn)
{
	cancel_delayed_work_sync(&sn->gc_work);
	nfg_sc_al_destroy(&sn->al);
	free_percpu(sn->stats);
	kfree_sensitive(rcu_dereference_protected(sn->secret, true));
	mem_cgroup_put(sn->memcg);
	kfree(sn);
}

/* A netns' state, charged to the caller's memory cgroup. */
static struct nfg_sc_net *nfg_sc_state_new(void)
{
	struct nfg_sc_net *sn;
	u32 buckets, want;
	int err;

	sn = kzalloc(sizeof(*sn), GFP_KERNEL_ACCOUNT);
	if (!sn) {
		err = -ENOMEM;
		goto err_out;
	}
	mutex_init(&sn->secret_lock);
	INIT_DELAYED_WORK(&sn->gc_work, nfg_sc_gc);
	/* about NFG_SC_AL_CHAIN entries per bucket at the bound */
	want = max_t(u32, 1, DIV_ROUND_UP(nfg_sc_allowlist_max, NFG_SC_AL_CHAIN));
	if (nfg_sc_allowlist_buckets)
		buckets = min_t(u32, nfg_sc_allowlist_buckets,
				roundup_pow_of_two(nfg_sc_allowlist_max));
	else
		buckets = min_t(u32, NFG_SC_AL_BUCKETS_MAX,
				roundup_pow_of_two(want));
	err = nfg_sc_al_init(&sn->al, buckets, nfg_sc_allowlist_max,
			     get_random_u32());
	if (err)
		goto err_sn;
	sn->stats = alloc_percpu_gfp(struct nfg_sc_stats, GFP_KERNEL_ACCOUNT);
	if (!sn->stats) {
		err = -ENOMEM;
		goto err_al;
	}
	err = nfg_sc_secret_replace(sn, NULL, false);
	if (err)
		goto err_stats;
	/* a reference: entries are charged to it until the netns exits */
	sn->memcg = get_mem_cgroup_from_mm(current->mm);
	queue_delayed_work(system_power_efficient_wq, &sn->gc_work,
			   NFG_SC_GC_PERIOD);
	return sn;

err_stats:
	free_percpu(sn->stats);
err_al:
	nfg_sc_al_destroy(&sn->al);
err_sn:
	kfree(sn);
err_out:
	return ERR_PTR(err);
}

struct nfg_sc_net *nfg_sc_pernet_get(struct net *net)
{
	struct nfg_sc_pernet *pn = net_generic(net, nfg_sc_net_id);
	struct nfg_sc_net *sn = nfg_sc_pernet(net);

	if (sn)
		return sn;
	mutex_lock(&nfg_sc_create_mutex);
	sn = pn->sn;
	if (sn)
		goto out;
	sn = nfg_sc_state_new();
	if (IS_ERR(sn))
		goto out;
	/* the state is complete before readers see it (nfg_sc_pernet()) */
	smp_store_release(&pn->sn, sn);
out:
	mutex_unlock(&nfg_sc_create_mutex);
	return sn;
}

static int __net_init nfg_sc_net_init(struct net *net)
{
	struct nfg_sc_pernet *pn = net_generic(net, nfg_sc_net_id);

	mutex_init(&pn->hooks.lock);
	if (IS_ENABLED(CONFIG_PROC_FS) &&
	    !proc_create_net_single(NFG_SC_PROC_NAME, 0444, net->proc_net_stat,
				    nfg_sc_proc_show, NULL))
		return -ENOMEM;
	return 0;
}

/*
 * A dying netns may still receive packets (its devices go last): from here
 * on the target leaves them alone. The core calls synchronize_rcu() between
 * pre_exit and exit, so no packet path is still using the state in exit.
 * No state can be made any more: nothing runs in this netns.
 */
static void __net_exit nfg_sc_net_pre_exit(struct net *net)
{
	struct nfg_sc_net *sn = nfg_sc_pernet(net);

	if (sn)
		WRITE_ONCE(sn->dying, true);
}

static void __net_exit nfg_sc_net_exit(struct net *net)
{
	struct nfg_sc_net *sn = nfg_sc_pernet(net);

	remove_proc_entry(NFG_SC_PROC_NAME, net->proc_net_stat);
	if (sn)
		nfg_sc_state_free(sn);
}

static struct pernet_operations nfg_sc_net_ops = {
	.init	= nfg_sc_net_init,
	.pre_exit = nfg_sc_net_pre_exit,
	.exit	= nfg_sc_net_exit,
	.id	= &nfg_sc_net_id,
	.size	= sizeof(struct nfg_sc_pernet),
};

int __init nfg_sc_nl_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(NFG_SYNCOOKIE_GENL_NAME) > GENL_NAMSIZ);
	BUILD_BUG_ON(sizeof(siphash_key_t) != NFG_SC_SECRET_LEN);

	if (!nfg_sc_allowlist_max || nfg_sc_allowlist_max > NFG_SC_AL_MAX_MAX ||
	    nfg_sc_allowlist_buckets > NFG_SC_AL_BUCKETS_MAX ||
	    (nfg_sc_allowlist_buckets &&
	     !is_power_of_2(nfg_sc_allowlist_buckets))) {
		pr_err("SYNCOOKIE: allowlist_max must be 1..%u, allowlist_buckets 0 (auto) or a power of two up to %u\n",
		       NFG_SC_AL_MAX_MAX, NFG_SC_AL_BUCKETS_MAX);
		return -EINVAL;
	}
	err = register_pernet_subsys(&nfg_sc_net_ops);
	if (err)
		goto err_out;
	err = genl_register_family(&nfg_sc_genl_family);
	if (err)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_subsys(&nfg_sc_net_ops);
err_out:
	return err;
}

void nfg_sc_nl_exit(void)
{
	genl_unregister_family(&nfg_sc_genl_family);
	unregister_pernet_subsys(&nfg_sc_net_ops);
	/* nfg_sc_entry_free() and nfg_sc_secret_free_rcu() are module code */
	rcu_barrier();
	WARN_ON_ONCE(atomic_read(&nfg_sc_live_objects));
}
