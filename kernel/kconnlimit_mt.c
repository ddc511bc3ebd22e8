// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard kconnlimit: xtables match "kconnlimit" (IPv4 and IPv6), the GC
 * worker, module parameters, /proc/net/stat/nfguard_kconnlimit, and module
 * init/exit. The conntrack side of the count table is kconnlimit_ct.c.
 *
 *   -m kconnlimit --kconnlimit-upto N | --kconnlimit-above N
 *      [--kconnlimit-mask PREFIX] [--kconnlimit-saddr | --kconnlimit-daddr]
 *      [--kconnlimit-name NAME]
 *
 * Verdicts are connlimit's: the key's connection count (the packet's own
 * connection included) is compared with the limit: --kconnlimit-above
 * matches when it is greater, --kconnlimit-upto when it is not. The packet
 * that creates a conntrack inserts it (slot lock); every other packet reads
 * the count without a lock, and only when that count (of connections
 * remembered, an upper bound of the live ones) is above the limit checks
 * the key's connections under its slot lock until the verdict is certain.
 * Counts are exact at every packet. At the netns's cap or without memory
 * the packet is dropped.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/netfilter/x_tables.h>
#include <linux/proc_fs.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_zones.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_kconnlimit.h>

#include "kconnlimit.h"
#include "kconnlimit_ct.h"

#define NFG_KCL_PROC_NAME	"nfguard_kconnlimit"

/* ---- module parameters ------------------------------------------------ */

static unsigned int nfg_kcl_param_slots = NFG_KCL_DEFAULT_SLOTS;
static unsigned int nfg_kcl_param_locks = NFG_KCL_DEFAULT_LOCKS;
static unsigned int nfg_kcl_gc_interval_ms = 500;

static int nfg_kcl_set_pow2(const char *val, unsigned int *dst, u32 max,
			    const char *what)
{
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (!v || (v & (v - 1)) || v > max) {
		pr_err("kconnlimit: %s must be a power of two from 1 to %u, not %u\n",
		       what, max, v);
		return -EINVAL;
	}
	WRITE_ONCE(*dst, v);
	return 0;
}

static int nfg_kcl_slots_set(const char *val, const struct kernel_param *kp)
{
	return nfg_kcl_set_pow2(val, kp->arg, NFG_KCL_SLOTS_MAX, "slots");
}

static int nfg_kcl_locks_set(const char *val, const struct kernel_param *kp)
{
	return nfg_kcl_set_pow2(val, kp->arg, NFG_KCL_LOCKS_MAX, "locks");
}

static const struct kernel_param_ops nfg_kcl_slots_ops = {
	.set	= nfg_kcl_slots_set,
	.get	= param_get_uint,
};

static const struct kernel_param_ops nfg_kcl_locks_ops = {
	.set	= nfg_kcl_locks_set,
	.get	= param_get_uint,
};

module_param_cb(slots, &nfg_kcl_slots_ops, &nfg_kcl_param_slots, 0644);
MODULE_PARM_DESC(slots, "hash slots per rule (power of two, default 8192; new rules)");
module_param_cb(locks, &nfg_kcl_locks_ops, &nfg_kcl_param_locks, 0644);
MODULE_PARM_DESC(locks, "keyed locks per rule (power of two, default 256; new rules)");
module_param_named(max_conns, nfg_kcl_max_conns, ulong, 0644);
MODULE_PARM_DESC(max_conns, "remembered connections per netns, all its rules; beyond it new connections are dropped (default 1048576)");

/* A milliseconds parameter in [@min, 60000]. */
static int nfg_kcl_set_ms(const char *val, unsigned int *dst, unsigned int min)
{
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (v < min || v > 60000)
		return -ERANGE;
	WRITE_ONCE(*dst, v);
	return 0;
}

static int nfg_kcl_interval_set(const char *val, const struct kernel_param *kp)
{
	return nfg_kcl_set_ms(val, kp->arg, 10);
}

static const struct kernel_param_ops nfg_kcl_interval_ops = {
	.set	= nfg_kcl_interval_set,
	.get	= param_get_uint,
};
module_param_cb(gc_interval_ms, &nfg_kcl_interval_ops, &nfg_kcl_gc_interval_ms, 0644);
MODULE_PARM_DESC(gc_interval_ms, "period of the sweep that forgets ended connections (10-60000, default 500)");

/*
 * How long a new connection that a rule let through counts while its
 * conntrack is not confirmed (a queue reader may hold its packet), at most.
 */
static unsigned int nfg_kcl_pending_ms = 1000;
/*
 * The same in jiffies, at least NFG_KCL_GRACE_REFUSED: what the packet path
 * reads (no conversion per packet). Written by the setter (parameters are
 * set under the kernel's param lock) and at module init.
 */
static u32 nfg_kcl_pending_jif;

static u32 nfg_kcl_grace_of(unsigned int ms)
{
	return max_t(u32, msecs_to_jiffies(ms), NFG_KCL_GRACE_REFUSED);
}

static int nfg_kcl_pending_set(const char *val, const struct kernel_param *kp)
{
	int err = nfg_kcl_set_ms(val, kp->arg, 0);

	if (!err)
		WRITE_ONCE(nfg_kcl_pending_jif,
			   nfg_kcl_grace_of(READ_ONCE(nfg_kcl_pending_ms)));
	return err;
}

static const struct kernel_param_ops nfg_kcl_pending_ops = {
	.set	= nfg_kcl_pending_set,
	.get	= param_get_uint,
};
module_param_cb(pending_ms, &nfg_kcl_pending_ops, &nfg_kcl_pending_ms, 0644);
MODULE_PARM_DESC(pending_ms, "how long a new connection let through counts before its conntrack is confirmed, at most (0-60000, default 1000)");

static u32 nfg_kcl_pending_jiffies(void)
{
	return READ_ONCE(nfg_kcl_pending_jif);
}

/* Read-only: tables, key nodes and remembered connections alive. */
static int nfg_kcl_live_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&nfg_kcl_live_objects));
}

static const struct kernel_param_ops nfg_kcl_live_ops = {
	.get	= nfg_kcl_live_get,
};
module_param_cb(live_objects, &nfg_kcl_live_ops, NULL, 0444);
MODULE_PARM_DESC(live_objects, "rule tables, keys and remembered connections currently allocated");

/* ---- per-netns budget ------------------------------------------------- */

/* The netns's budget (struct nfg_kcl_netbudget, kconnlimit.h). */
static void nfg_kcl_budget_put(struct nfg_kcl_budget *b)
{
	struct nfg_kcl_netbudget *nb = container_of(b, struct nfg_kcl_netbudget, b);

	if (refcount_dec_and_test(&nb->ref))
		kfree(nb);
}

/* The caller is in @net (checkentry): its budget exists. */
static struct nfg_kcl_budget *nfg_kcl_budget_get(struct net *net)
{
	struct nfg_kcl_netbudget *nb;

	nb = nfg_kcl_pernet(net)->budget;
	refcount_inc(&nb->ref);
	return &nb->b;
}

/* ---- packet path ------------------------------------------------------ */

static void kconnlimit_key(const struct nfg_kcl_instance *inst,
			   const struct sk_buff *skb, struct nfg_kcl_key *key)
{
	const bool dst = inst->params.daddr;
	const __be32 *a;
	int i;

	if (inst->params.family == NFPROTO_IPV6) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		a = dst ? ip6h->daddr.s6_addr32 : ip6h->saddr.s6_addr32;
		for (i = 0; i < 4; i++)
			key->w[i] = (__force u32)(a[i] & inst->mask[i]);
	} else {
		const struct iphdr *iph = ip_hdr(skb);

		key->w[0] = (__force u32)((dst ? iph->daddr : iph->saddr) &
					  inst->mask[0]);
		key->w[1] = 0;
		key->w[2] = 0;
		key->w[3] = 0;
	}
}

static bool kconnlimit_mt(const struct sk_buff *skb,
			  struct xt_action_param *par)
{
	const struct xt_kconnlimit_mtinfo *info = par->matchinfo;
	struct nfg_kcl_instance *inst = info->inst;
	enum ip_conntrack_info ctinfo;
	struct nfg_kcl_ident id;
	struct nfg_kcl_env env;
	struct nfg_kcl_key key;
	unsigned int count;
	struct nf_conn *ct;
	bool over;
	int ret;

	env.net = xt_net(par);
	env.alive = &inst->net_alive;
	env.grace = nfg_kcl_pending_jiffies();
	env.drain = false;
	ct = nf_ct_get(skb, &ctinfo);
	if (ct && nf_ct_is_template(ct))
		ct = NULL;
	/* As connlimit: each zone has its own budget. */
	key.zone = ct ? nf_ct_zone(ct)->id : NF_CT_DEFAULT_ZONE_ID;
	kconnlimit_key(inst, skb, &key);
	if (ct && !nf_ct_is_confirmed(ct)) {
		/*
		 * The packet that creates the connection: remember who it is,
		 * without a reference (nfnetlink_queue drops an unconfirmed
		 * conntrack that someone else holds).
		 */
		nfg_kcl_ident_set(&id, ct);
		ret = nfg_kcl_add(&inst->table, &key, &id, (u32)jiffies,
				  info->limit, &env, &count);
		if (ret < 0) {
			/* At the cap or out of memory (counted). */
			par->hotdrop = true;
			return false;
		}
	} else {
		/*
		 * Any other packet: connections of the key that ended must
		 * not count, from this packet on.
		 */
		count = nfg_kcl_count_check(&inst->table, &key, info->limit,
					    (u32)jiffies, &env);
	}

	over = count > info->limit;
	if (over)
		this_cpu_inc(inst->table.stats->over_limit);
	if (over == !(info->flags & XT_KCONNLIMIT_UPTO)) {
		this_cpu_inc(inst->table.stats->matched);
		return true;
	}
	return false;
}

/* ---- rule life cycle -------------------------------------------------- */

/*
 * The plugin's alphabet, checked here too: names are printed in /proc and
 * by the CLI, and a hand-made blob must not forge lines there. ASCII only
 * (the kernel's isalnum() also takes Latin-1 letters).
 */
static bool kconnlimit_name_ok(const char *name)
{
	const char *p;

	for (p = name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
		    *p == '.' || *p == ':')
			continue;
		return false;
	}
	return true;
}

/* Under nfg_kcl_mutex: the instance a named rule with @params shares. */
static struct nfg_kcl_instance *
kconnlimit_find(struct nfg_kcl_net *kn, const struct nfg_kcl_params *params)
{
	struct nfg_kcl_instance *inst;

	list_for_each_entry(inst, &kn->named, net_list)
		if (nfg_kcl_shareable(&inst->params, params))
			return inst;
	return NULL;
}

/*
 * Under nfg_kcl_mutex: a new instance (its table with one user), linked on
 * the instance list and, when named, on the netns's list.
 */
static struct nfg_kcl_instance *
kconnlimit_inst_new(struct net *net, const struct nfg_kcl_params *params)
{
	struct nfg_kcl_net *kn = nfg_kcl_pernet(net);
	struct nfg_kcl_budget *budget;
	struct nfg_kcl_instance *inst;
	unsigned int i, bits;
	int err;

	inst = kzalloc(sizeof(*inst), GFP_KERNEL_ACCOUNT);
	if (!inst)
		return ERR_PTR(-ENOMEM);
	budget = nfg_kcl_budget_get(net);
	err = nfg_kcl_table_init(&inst->table, READ_ONCE(nfg_kcl_param_slots),
				 READ_ONCE(nfg_kcl_param_locks),
				 get_random_u32(),
				 params->family == NFPROTO_IPV6, budget);
	if (err) {
		nfg_kcl_budget_put(budget);
		kfree(inst);
		return ERR_PTR(err);
	}
	write_pnet(&inst->net, net);
	inst->net_alive = true;
	inst->params = *params;
	for (i = 0; i < 4; i++) {
		bits = clamp_t(int, (int)params->prefix - 32 * (int)i, 0, 32);
		inst->mask[i] = bits ? htonl(~0U << (32 - bits)) : 0;
	}
	/* Per netns: ids must not tell one netns how busy the others are. */
	inst->id = ++kn->next_id;
	list_add_tail(&inst->list, &nfg_kcl_instances);
	if (params->name[0])
		list_add_tail(&inst->net_list, &kn->named);
	else
		INIT_LIST_HEAD(&inst->net_list);
	return inst;
}

static int kconnlimit_mt_check(const struct xt_mtchk_param *par)
{
	struct xt_kconnlimit_mtinfo *info = par->matchinfo;
	const bool v6 = par->family == NFPROTO_IPV6;
	const unsigned int plen_max = v6 ? 128 : 32;
	struct nfg_kcl_instance *inst;
	struct nfg_kcl_params params;
	int err;

	if (info->flags & ~XT_KCONNLIMIT_FLAGS_ALL) {
		pr_info_ratelimited("kconnlimit: unknown flags 0x%x\n", info->flags);
		return -EINVAL;
	}
	if ((info->flags & XT_KCONNLIMIT_UPTO) &&
	    (info->flags & XT_KCONNLIMIT_ABOVE)) {
		pr_info_ratelimited("kconnlimit: --kconnlimit-upto and --kconnlimit-above together\n");
		return -EINVAL;
	}
	if (!(info->flags & (XT_KCONNLIMIT_UPTO | XT_KCONNLIMIT_ABOVE))) {
		pr_info_ratelimited("kconnlimit: no limit: give --kconnlimit-upto or --kconnlimit-above\n");
		return -EINVAL;
	}
	if (info->prefix > plen_max) {
		pr_info_ratelimited("kconnlimit: mask /%u out of range for %s (0-%u)\n",
				    info->prefix, v6 ? "IPv6" : "IPv4", plen_max);
		return -ERANGE;
	}
	if (info->pad[0] || info->pad[1]) {
		pr_info_ratelimited("kconnlimit: reserved bytes are not zero\n");
		return -EINVAL;
	}
	if (strnlen(info->name, sizeof(info->name)) == sizeof(info->name)) {
		pr_info_ratelimited("kconnlimit: name is not NUL-terminated\n");
		return -EINVAL;
	}
	if (!kconnlimit_name_ok(info->name)) {
		pr_info_ratelimited("kconnlimit: name may only hold letters, digits and _ - . :\n");
		return -EINVAL;
	}
	/*
	 * raw runs before conntrack: no packet would carry a conntrack yet,
	 * the rule would count nothing and never match. Under nft_compat the
	 * name is the nft table's, and checkentry cannot see the chain's
	 * priority; a table named raw there is iptables-nft's (priority -300:
	 * stock nft cannot add xt expressions, only iptables-nft and
	 * libnfguard programs can), refused as legacy's. In an nft chain of
	 * another table before conntrack, packets carry no conntrack and are
	 * not remembered, as untracked ones (man page).
	 */
	if (!strcmp(par->table, "raw")) {
		pr_info_ratelimited("kconnlimit: not valid in the raw table (it runs before conntrack)\n");
		return -EINVAL;
	}

	err = nf_ct_netns_get(par->net, par->family);
	if (err < 0) {
		pr_info_ratelimited("kconnlimit: cannot load conntrack support for proto=%u\n",
				    par->family);
		return err;
	}
	BUILD_BUG_ON(sizeof(params.name) != sizeof(info->name));
	memset(&params, 0, sizeof(params));
	strscpy(params.name, info->name, sizeof(params.name));
	params.family = par->family;
	params.prefix = info->prefix;
	params.daddr = info->flags & XT_KCONNLIMIT_DADDR;

	/*
	 * A named rule takes the table of its netns's instance with equal
	 * parameters, if there is one: iptables-legacy replaces a whole table
	 * by checking every rule of the new copy before destroying the old
	 * one, so the rule's counts survive the replacement (and rules that
	 * share a name share a count, as hashlimit's). Users are taken and
	 * dropped only under nfg_kcl_mutex, which is also what the search is
	 * under: an instance found here has a user, and cannot be freed until
	 * we let go of the mutex.
	 */
	mutex_lock(&nfg_kcl_mutex);
	inst = kconnlimit_find(nfg_kcl_pernet(par->net), &params);
	if (inst) {
		nfg_kcl_table_get(&inst->table);
	} else {
		inst = kconnlimit_inst_new(par->net, &params);
		if (IS_ERR(inst)) {
			mutex_unlock(&nfg_kcl_mutex);
			nf_ct_netns_put(par->net, par->family);
			return PTR_ERR(inst);
		}
	}
	inst->flags = info->flags;
	inst->limit = info->limit;
	mutex_unlock(&nfg_kcl_mutex);
	info->inst = inst;
	return 0;
}

static void kconnlimit_mt_destroy(const struct xt_mtdtor_param *par)
{
	struct xt_kconnlimit_mtinfo *info = par->matchinfo;
	struct nfg_kcl_instance *inst = info->inst;
	bool last;

	mutex_lock(&nfg_kcl_mutex);
	last = nfg_kcl_table_put(&inst->table);
	if (last) {
		list_del(&inst->list);
		list_del_init(&inst->net_list);
	}
	mutex_unlock(&nfg_kcl_mutex);
	if (last) {
		/*
		 * xtables and nf_tables destroy a rule after its last packet
		 * left; the other rules that used the table went before.
		 */
		nfg_kcl_table_destroy(&inst->table);
		nfg_kcl_budget_put(inst->table.budget);
		kfree(inst);
	}
	nf_ct_netns_put(par->net, par->family);
}

static struct xt_match kconnlimit_mt_reg[] __read_mostly = {
	{
		.name		= "kconnlimit",
		.revision	= 0,
		.family		= NFPROTO_IPV4,
		.checkentry	= kconnlimit_mt_check,
		.match		= kconnlimit_mt,
		.destroy	= kconnlimit_mt_destroy,
		.matchsize	= sizeof(struct xt_kconnlimit_mtinfo),
		.usersize	= offsetof(struct xt_kconnlimit_mtinfo, inst),
		.me		= THIS_MODULE,
	},
	{
		.name		= "kconnlimit",
		.revision	= 0,
		.family		= NFPROTO_IPV6,
		.checkentry	= kconnlimit_mt_check,
		.match		= kconnlimit_mt,
		.destroy	= kconnlimit_mt_destroy,
		.matchsize	= sizeof(struct xt_kconnlimit_mtinfo),
		.usersize	= offsetof(struct xt_kconnlimit_mtinfo, inst),
		.me		= THIS_MODULE,
	},
};

/* ---- GC worker -------------------------------------------------------- */

static void nfg_kcl_gc_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(nfg_kcl_gc_work, nfg_kcl_gc_work_fn);

/* Sweeps every table; the mutex keeps instances from going away meanwhile. */
static void nfg_kcl_gc_work_fn(struct work_struct *work)
{
	/* Keys walked by packets within the last period are exact already. */
	u32 period = msecs_to_jiffies(READ_ONCE(nfg_kcl_gc_interval_ms));
	struct nfg_kcl_instance *inst;
	struct nfg_kcl_env env;
	u32 slot, slots;

	env.alive = NULL;	/* net_alive is stable under the mutex */
	env.grace = nfg_kcl_pending_jiffies();
	env.drain = false;
	mutex_lock(&nfg_kcl_mutex);
	list_for_each_entry(inst, &nfg_kcl_instances, list) {
		env.net = inst->net_alive ? read_pnet(&inst->net) : NULL;
		slots = nfg_kcl_slots(&inst->table);
		for (slot = 0; slot < slots; slot += 1024) {
			nfg_kcl_gc(&inst->table, slot, 1024, &env,
				   (u32)jiffies, period);
			cond_resched();
		}
	}
	mutex_unlock(&nfg_kcl_mutex);
	queue_delayed_work(system_power_efficient_wq, &nfg_kcl_gc_work, period);
}

/* ---- /proc/net/stat/nfguard_kconnlimit -------------------------------- */

static int nfg_kcl_proc_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct nfg_kcl_instance *inst;
	struct nfg_kcl_info ci;

	seq_puts(seq, "id name family key limit keys conns matched over_limit inserts gc_evictions cap_hits alloc_fail\n");
	mutex_lock(&nfg_kcl_mutex);
	list_for_each_entry(inst, &nfg_kcl_instances, list) {
		if (!net_eq(read_pnet(&inst->net), net))
			continue;
		nfg_kcl_table_info(&inst->table, &ci);
		seq_printf(seq, "%u %s %s %s/%u %s%u %u %u %llu %llu %llu %llu %llu %llu\n",
			   inst->id, inst->params.name[0] ? inst->params.name : "-",
			   inst->params.family == NFPROTO_IPV6 ? "ipv6" : "ipv4",
			   inst->params.daddr ? "dst" : "src",
			   inst->params.prefix,
			   inst->flags & XT_KCONNLIMIT_UPTO ? "<=" : ">",
			   inst->limit, ci.keys, ci.conns, ci.stats.matched,
			   ci.stats.over_limit, ci.stats.inserts,
			   ci.stats.gc_evictions, ci.stats.cap_hits,
			   ci.stats.alloc_fail);
	}
	mutex_unlock(&nfg_kcl_mutex);
	return 0;
}

static int __net_init nfg_kcl_net_init(struct net *net)
{
	struct nfg_kcl_net *kn = nfg_kcl_pernet(net);
	struct nfg_kcl_netbudget *nb;

	nb = kzalloc(sizeof(*nb), GFP_KERNEL_ACCOUNT);
	if (!nb)
		goto err_out;
	refcount_set(&nb->ref, 1);
	kn->budget = nb;
	INIT_LIST_HEAD(&kn->named);
	if (IS_ENABLED(CONFIG_PROC_FS) &&
	    !proc_create_net_single(NFG_KCL_PROC_NAME, 0444, net->proc_net_stat,
				    nfg_kcl_proc_show, NULL))
		goto err_budget;
	return 0;

err_budget:
	kfree(nb);
err_out:
	return -ENOMEM;
}

/*
 * From here on nobody looks conntracks up in @net, and the references we
 * hold on its conntracks go now: conntrack's netns exit waits for every
 * conntrack of the netns to be freed, and its exit may run before the one
 * that destroys our rules (pernet exits run in reverse order of module
 * load), so a reference kept until the next sweep held up every netns
 * cleanup for up to gc_interval_ms. Every entry is forgotten: the netns
 * counts nothing any more.
 */
static void __net_exit nfg_kcl_net_pre_exit(struct net *net)
{
	const struct nfg_kcl_env env = { .drain = true };
	struct nfg_kcl_instance *inst;
	bool any = false;
	u32 slot, slots;

	mutex_lock(&nfg_kcl_mutex);
	list_for_each_entry(inst, &nfg_kcl_instances, list) {
		if (net_eq(read_pnet(&inst->net), net)) {
			WRITE_ONCE(inst->net_alive, false);
			any = true;
		}
	}
	mutex_unlock(&nfg_kcl_mutex);
	if (!any)
		return;
	/* Packets (RCU readers) that may have read it true are gone. */
	synchronize_rcu();
	mutex_lock(&nfg_kcl_mutex);
	list_for_each_entry(inst, &nfg_kcl_instances, list) {
		if (!net_eq(read_pnet(&inst->net), net))
			continue;
		slots = nfg_kcl_slots(&inst->table);
		for (slot = 0; slot < slots; slot += 1024) {
			nfg_kcl_gc(&inst->table, slot, 1024, &env, 0, 0);
			cond_resched();
		}
	}
	mutex_unlock(&nfg_kcl_mutex);
}

static void __net_exit nfg_kcl_net_exit(struct net *net)
{
	struct nfg_kcl_net *kn = nfg_kcl_pernet(net);
	struct nfg_kcl_instance *inst, *tmp;

	/*
	 * Rules may be destroyed after this (pernet exits run in reverse
	 * order of module load): their instances must not point into @kn.
	 */
	mutex_lock(&nfg_kcl_mutex);
	list_for_each_entry_safe(inst, tmp, &kn->named, net_list)
		list_del_init(&inst->net_list);
	mutex_unlock(&nfg_kcl_mutex);
	remove_proc_entry(NFG_KCL_PROC_NAME, net->proc_net_stat);
	nfg_kcl_budget_put(&kn->budget->b);
}

static struct pernet_operations nfg_kcl_net_ops = {
	.init		= nfg_kcl_net_init,
	.pre_exit	= nfg_kcl_net_pre_exit,
	.exit		= nfg_kcl_net_exit,
	.id		= &nfg_kcl_net_id,
	.size		= sizeof(struct nfg_kcl_net),
};

/* ---- module ----------------------------------------------------------- */

static int __init kconnlimit_mt_init(void)
{
	int err;

	/* slots/locks given at load time went through the checking setters */
	WRITE_ONCE(nfg_kcl_pending_jif, nfg_kcl_grace_of(nfg_kcl_pending_ms));
	err = nfg_kcl_core_init();
	if (err)
		goto err_out;
	err = register_pernet_subsys(&nfg_kcl_net_ops);
	if (err)
		goto err_core;
	err = nfg_kcl_nl_init();
	if (err)
		goto err_pernet;
	err = xt_register_matches(kconnlimit_mt_reg, ARRAY_SIZE(kconnlimit_mt_reg));
	if (err)
		goto err_nl;
	queue_delayed_work(system_power_efficient_wq, &nfg_kcl_gc_work,
			   msecs_to_jiffies(READ_ONCE(nfg_kcl_gc_interval_ms)));
	return 0;

err_nl:
	nfg_kcl_nl_exit();
err_pernet:
	unregister_pernet_subsys(&nfg_kcl_net_ops);
err_core:
	nfg_kcl_core_exit();
err_out:
	return err;
}

static void __exit kconnlimit_mt_exit(void)
{
	xt_unregister_matches(kconnlimit_mt_reg, ARRAY_SIZE(kconnlimit_mt_reg));
	cancel_delayed_work_sync(&nfg_kcl_gc_work);
	nfg_kcl_nl_exit();
	unregister_pernet_subsys(&nfg_kcl_net_ops);
	/* key nodes unlinked by the last sweeps are freed by call_rcu */
	rcu_barrier();
	nfg_kcl_core_exit();
}

module_init(kconnlimit_mt_init);
module_exit(kconnlimit_mt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nfguard: connlimit-compatible connection limits on keyed-lock tables");
MODULE_ALIAS("ipt_kconnlimit");
MODULE_ALIAS("ip6t_kconnlimit");
MODULE_ALIAS_GENL_FAMILY(NFG_KCONNLIMIT_GENL_NAME);
