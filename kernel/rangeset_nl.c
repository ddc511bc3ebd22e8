// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard rangeset: per-netns named sets and the "nfg_rangeset"
 * generic netlink family (see HACKING.md, "rangeset contract").
 *
 * Locking: every netns has a mutex protecting its list of sets and their
 * names; it is control plane only. Commands find a set by name under it
 * and take a reference, then drop the mutex and work under the set's own
 * lock (rangeset_core.c), so a long update of one set holds up nobody
 * else. A dump of one set holds a reference on the set and on a snapshot
 * of its array between callbacks, and no lock at all.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/proc_fs.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_rangeset.h>

#include "rangeset.h"

#define NFG_RS_PROC_NAME	"nfguard_rangeset"
/* Ranges per LIST dump message (fewer when the message fills up). */
#define NFG_RS_DUMP_ELEMS	256
/*
 * Expired ranges leave at most this long after their expiry: the expiry
 * work runs at the earliest expiry rounded up to a multiple of it, and
 * publishes one array for everything due then.
 */
#define NFG_RS_EXPIRE_TICK	(HZ / 4)
/*
 * Timer wheel timers fire late by up to 1/8 of their delay (their level's
 * granularity). Longer waits are taken in halves, re-armed when the work
 * wakes, so the last step is short enough to be exact to a tick.
 */
#define NFG_RS_EXPIRE_EXACT	(2 * HZ)

struct nfg_rs_net {
	struct mutex		lock;	/* sets, the sets' names, gen */
	struct list_head	sets;
	u32			gen;	/* bumped when the list changes */
};

static unsigned int nfg_rs_net_id __read_mostly;
static struct genl_family nfg_rs_genl_family;
/*
 * Frees sets whose last reference a dump's .done dropped (see
 * nfg_rs_put_deferred). Drained at netns exit and destroyed at module exit.
 */
static struct workqueue_struct *nfg_rs_free_wq;

static struct nfg_rs_net *nfg_rs_pernet(const struct net *net)
{
	return net_generic(net, nfg_rs_net_id);
}

static void nfg_rs_gen_bump(struct nfg_rs_net *nn)
{
	/* 0 would disable the dump consistency check */
	if (++nn->gen == 0)
		nn->gen = 1;
}

/* ---- set objects ------------------------------------------------------ */

static void nfg_rs_free_rcu(struct rcu_head *head)
{
	struct nfg_rangeset *set = container_of(head, struct nfg_rangeset, rcu);

	nfg_rs_core_free(&set->core);
	kfree(set);
	atomic_dec(&nfg_rs_live_objects);
}

static void nfg_rs_release(struct nfg_rangeset *set)
{
	/*
	 * No reference is left: no rule queues fold_work any more, and
	 * nothing but fold_work and itself arms expire_work.
	 */
	cancel_delayed_work_sync(&set->fold_work);
	cancel_delayed_work_sync(&set->expire_work);
	nfg_rs_core_release(&set->core);
	mem_cgroup_put(set->memcg);
	call_rcu(&set->rcu, nfg_rs_free_rcu);
}

/* Process context: the last put frees the tree (it may reschedule). */
static void nfg_rs_put(struct nfg_rangeset *set)
{
	might_sleep();
	if (refcount_dec_and_test(&set->ref))
		nfg_rs_release(set);
}

static void nfg_rs_free_work(struct work_struct *work)
{
	nfg_rs_release(container_of(work, struct nfg_rangeset, free_work));
}

/*
 * Any context: the last put hands the set to a work item. For a dump's
 * .done: on 6.1 it runs from the socket destructor, which the last
 * sock_put() may call in softirq, and a set destroyed while its dump ran
 * would have its whole tree freed there.
 */
static void nfg_rs_put_deferred(struct nfg_rangeset *set)
{
	if (refcount_dec_and_test(&set->ref))
		queue_work(nfg_rs_free_wq, &set->free_work);
}

/* ---- expiry ----------------------------------------------------------- */

/*
 * (Re)arm the expiry work for the set's earliest expiry. The caller holds
 * a reference (or is the work itself). Process context.
 */
static void nfg_rs_expire_arm(struct nfg_rangeset *set)
{
	unsigned long delay = 0;
	u64 next, now;

	spin_lock(&set->expire_lock);
	next = nfg_rs_core_next_expiry(&set->core);
	if (next) {
		now = get_jiffies_64();
		if (next > now)
			delay = next - now;
		if (delay > NFG_RS_EXPIRE_EXACT)
			delay /= 2;
		else
			delay = roundup(delay, NFG_RS_EXPIRE_TICK);
		mod_delayed_work(system_power_efficient_wq, &set->expire_work,
				 delay);
	}
	spin_unlock(&set->expire_lock);
}

static void nfg_rs_expire_work(struct work_struct *work)
{
	struct nfg_rangeset *set = container_of(to_delayed_work(work),
						struct nfg_rangeset,
						expire_work);
	struct mem_cgroup *old;
	u32 expired;
	int err;

	old = set_active_memcg(set->memcg);
	err = nfg_rs_core_expire(&set->core, get_jiffies_64(), &expired);
	set_active_memcg(old);
	if (err) {
		/* -ENOMEM, nothing changed: try again a tick later. */
		spin_lock(&set->expire_lock);
		mod_delayed_work(system_power_efficient_wq, &set->expire_work,
				 NFG_RS_EXPIRE_TICK);
		spin_unlock(&set->expire_lock);
		return;
	}
	nfg_rs_expire_arm(set);
}

/*
 * Fold the packet path's dynamic entries into the array when it pays
 * (nfg_rs_core_fold_lazy()), then arm the expiry work for what they
 * brought. While entries are pending, look again a tick later; on
 * failure (-ENOMEM) the entries keep matching from the hash: try again
 * a second later.
 */
static void nfg_rs_fold_work(struct work_struct *work)
{
	struct nfg_rangeset *set = container_of(to_delayed_work(work),
						struct nfg_rangeset,
						fold_work);
	struct mem_cgroup *old;
	bool again;
	int err;

	/* Charged to the set's creator, not to whoever this worker last ran for. */
	old = set_active_memcg(set->memcg);
	err = nfg_rs_core_fold_lazy(&set->core, get_jiffies_64(), &again);
	set_active_memcg(old);
	if (again)
		queue_delayed_work(system_power_efficient_wq, &set->fold_work,
				   err ? HZ : NFG_RS_EXPIRE_TICK);
	nfg_rs_expire_arm(set);
}

/**
 * nfg_rs_fold_kick - the packet path added or deleted a dynamic entry
 * @set: the set, referenced by the caller's rule
 *
 * Any context. Queues the fold a tick from now unless it is pending: the
 * work's own pending bit is the only shared state touched.
 */
void nfg_rs_fold_kick(struct nfg_rangeset *set)
{
	if (!delayed_work_pending(&set->fold_work))
		queue_delayed_work(system_power_efficient_wq, &set->fold_work,
				   NFG_RS_EXPIRE_TICK);
}

/* Seconds -> absolute expiry in jiffies64 (0 stays 0: permanent). */
static u64 nfg_rs_expiry(u64 now, u32 secs)
{
	return secs ? now + (u64)secs * HZ : 0;
}

static struct nfg_rangeset *nfg_rs_find(struct nfg_rs_net *nn, const char *name)
{
	struct nfg_rangeset *set;

	lockdep_assert_held(&nn->lock);
	list_for_each_entry(set, &nn->sets, list)
		if (!strcmp(set->name, name))
			return set;
	return NULL;
}

/* Find a set by name and take a reference; NULL if there is none. */
static struct nfg_rangeset *nfg_rs_get(struct net *net, const char *name)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(net);
	struct nfg_rangeset *set;

	mutex_lock(&nn->lock);
	set = nfg_rs_find(nn, name);
	if (set)
		refcount_inc(&set->ref);
	mutex_unlock(&nn->lock);
	return set;
}

/**
 * nfg_rs_rule_get - reference a set for an xt rule
 * @net: the rule's netns
 * @name: set name
 * @family: the rule's family (NFPROTO_IPV4 or NFPROTO_IPV6)
 *
 * Return: the set, ERR_PTR(-ENOENT) if there is no such set, or
 * ERR_PTR(-EINVAL) if the set is of the other family.
 */
struct nfg_rangeset *nfg_rs_rule_get(struct net *net, const char *name,
				     u8 family)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(net);
	struct nfg_rangeset *set;

	mutex_lock(&nn->lock);
	set = nfg_rs_find(nn, name);
	if (!set) {
		set = ERR_PTR(-ENOENT);
	} else if (set->family != family) {
		set = ERR_PTR(-EINVAL);
	} else {
		/* Under the mutex: DESTROY/RENAME test @rules under it too. */
		refcount_inc(&set->ref);
		atomic_inc(&set->rules);
	}
	mutex_unlock(&nn->lock);
	return set;
}

/* Does not touch the netns: may run after the netns has been dismantled. */
void nfg_rs_rule_put(struct nfg_rangeset *set)
{
	atomic_dec(&set->rules);
	nfg_rs_put(set);
}

/* ---- attribute helpers ------------------------------------------------ */

static const char *nfg_rs_attr_name(struct genl_info *info, int type)
{
	const struct nlattr *attr = info->attrs[type];

	if (!attr) {
		if (type == NFG_RS_A_NAME)
			NL_SET_ERR_MSG(info->extack, "set name missing");
		else
			NL_SET_ERR_MSG(info->extack, "second set name missing");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, type);
		return NULL;
	}
	/* The policy guarantees a NUL within XT_RANGESET_MAXNAMELEN bytes. */
	if (!*(const char *)nla_data(attr)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "empty set name");
		return NULL;
	}
	return nla_data(attr);
}

/* Look up NFG_RS_A_NAME and take a reference, or set extack. */
static struct nfg_rangeset *nfg_rs_get_attr(struct genl_info *info)
{
	struct nfg_rangeset *set;
	const char *name;

	name = nfg_rs_attr_name(info, NFG_RS_A_NAME);
	if (!name)
		return ERR_PTR(-EINVAL);
	set = nfg_rs_get(genl_info_net(info), name);
	if (!set) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NFG_RS_A_NAME],
				    "no set with this name");
		return ERR_PTR(-ENOENT);
	}
	return set;
}

static struct netlink_range_validation nfg_rs_timeout_range = {
	.min	= 0,
	.max	= NFG_RANGESET_TIMEOUT_MAX,
};

static const struct nla_policy nfg_rs_elem_policy[NFG_RS_E_MAX + 1] = {
	[NFG_RS_E_START]	= NLA_POLICY_RANGE(NLA_BINARY, sizeof(__be32),
						   sizeof(struct in6_addr)),
	[NFG_RS_E_END]		= NLA_POLICY_RANGE(NLA_BINARY, sizeof(__be32),
						   sizeof(struct in6_addr)),
	[NFG_RS_E_TIMEOUT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&nfg_rs_timeout_range),
};

/*
 * Validate every element of the request and convert it to a host-order
 * range. An attribute holds at most 64 KiB (about 2700 IPv4 or 1400 IPv6
 * elements), so a larger batch repeats NFG_RS_A_ELEMS: all of them are
 * taken, in order, as one batch. Nothing is applied here: a bad element
 * anywhere fails the whole request before the set is touched. Each range
 * expires after its NFG_RS_E_TIMEOUT, else after @timeout seconds (0:
 * never), counted from @now (jiffies64); DEL and TEST ignore expiries.
 */
static int nfg_rs_parse_elems(const struct genl_info *info, bool v6,
			      u64 now, u32 timeout,
			      struct nfg_rs_range **out, unsigned int *n)
{
	unsigned int alen = v6 ? sizeof(struct in6_addr) : sizeof(__be32);
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[NFG_RS_E_MAX + 1];
	const struct nlattr *elems, *elem;
	unsigned int count = 0, i = 0;
	struct nfg_rs_range *r;
	int rem, erem, err;

	*out = NULL;
	*n = 0;
	nlmsg_for_each_attr(elems, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(elems) != NFG_RS_A_ELEMS)
			continue;
		nla_for_each_nested(elem, elems, erem) {
			/*
			 * The smallest valid element (two IPv4 addresses)
			 * has 16 bytes: reject shorter ones before sizing
			 * the array, so a request of empty nests cannot make
			 * us allocate 8 times its own size.
			 */
			if (nla_len(elem) < 2 * nla_total_size(sizeof(__be32))) {
				NL_SET_ERR_MSG_ATTR(extack, elem,
						    "element needs a start and an end address");
				return -EINVAL;
			}
			count++;
		}
	}
	if (!count)
		return 0;

	r = kvmalloc_array(count, sizeof(*r),
			   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!r) {
		NL_SET_ERR_MSG(extack, "out of memory for the elements");
		return -ENOMEM;
	}

	nlmsg_for_each_attr(elems, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(elems) != NFG_RS_A_ELEMS)
			continue;
		nla_for_each_nested(elem, elems, erem) {
			err = nla_parse_nested(tb, NFG_RS_E_MAX, elem,
					       nfg_rs_elem_policy, extack);
			if (err)
				goto err_free;
			err = -EINVAL;
			if (!tb[NFG_RS_E_START] || !tb[NFG_RS_E_END]) {
				NL_SET_ERR_MSG_ATTR(extack, elem,
						    "element needs a start and an end address");
				goto err_free;
			}
			if (nla_len(tb[NFG_RS_E_START]) != alen ||
			    nla_len(tb[NFG_RS_E_END]) != alen) {
				if (v6)
					NL_SET_ERR_MSG_ATTR(extack, elem,
							    "address of the wrong family: this is an ipv6 set");
				else
					NL_SET_ERR_MSG_ATTR(extack, elem,
							    "address of the wrong family: this is an ipv4 set");
				goto err_free;
			}
			nfg_rs_key_from_be(&r[i].start,
					   nla_data(tb[NFG_RS_E_START]), v6);
			nfg_rs_key_from_be(&r[i].end,
					   nla_data(tb[NFG_RS_E_END]), v6);
			r[i].expires = nfg_rs_expiry(now, tb[NFG_RS_E_TIMEOUT] ?
						     nla_get_u32(tb[NFG_RS_E_TIMEOUT]) :
						     timeout);
			if (!nfg_rs_range_valid(&r[i], v6)) {
				NL_SET_ERR_MSG_ATTR(extack, elem,
						    "range start is greater than its end");
				goto err_free;
			}
			i++;
		}
	}
	*out = r;
	*n = i;
	return 0;

err_free:
	kvfree(r);
	return err;
}

/* ---- replies ---------------------------------------------------------- */

static int nfg_rs_fill_header(struct sk_buff *skb, u32 portid, u32 seq,
			      int flags, const char *name,
			      const struct nfg_rangeset *set,
			      const struct nfg_rs_core_info *ci,
			      struct netlink_callback *cb)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &nfg_rs_genl_family, flags,
			  NFG_RS_CMD_LIST);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);

	if (nla_put_string(skb, NFG_RS_A_NAME, name) ||
	    nla_put_u8(skb, NFG_RS_A_FAMILY, set->family) ||
	    nla_put_u32(skb, NFG_RS_A_MAXELEM, ci->maxelem) ||
	    nla_put_u32(skb, NFG_RS_A_COUNT, ci->count) ||
	    nla_put_u32(skb, NFG_RS_A_REFS, atomic_read(&set->rules)) ||
	    nla_put_u64_64bit(skb, NFG_RS_A_LOOKUPS, ci->lookups, NFG_RS_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RS_A_HITS, ci->hits, NFG_RS_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RS_A_MEMSIZE, ci->memsize, NFG_RS_A_PAD) ||
	    nla_put_u32(skb, NFG_RS_A_TIMEOUT, ci->timeout) ||
	    nla_put_u64_64bit(skb, NFG_RS_A_EXPIRIES, ci->expiries,
			      NFG_RS_A_PAD) ||
	    nla_put_u32(skb, NFG_RS_A_DYN_COUNT, ci->dyn_count) ||
	    nla_put_u64_64bit(skb, NFG_RS_A_PKT_ADDS, ci->dyn_adds,
			      NFG_RS_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RS_A_PKT_DELS, ci->dyn_dels,
			      NFG_RS_A_PAD) ||
	    nla_put_u64_64bit(skb, NFG_RS_A_PKT_REFUSED, ci->dyn_refused,
			      NFG_RS_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* ---- commands --------------------------------------------------------- */

static int nfg_rs_cmd_create(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(genl_info_net(info));
	struct netlink_ext_ack *extack = info->extack;
	u32 maxelem = NFG_RANGESET_DEFAULT_MAXELEM;
	struct nfg_rangeset *set;
	u32 timeout = 0;
	const struct nlattr *attr;
	const char *name;
	u8 family;
	int err;

	name = nfg_rs_attr_name(info, NFG_RS_A_NAME);
	if (!name)
		return -EINVAL;

	attr = info->attrs[NFG_RS_A_FAMILY];
	if (!attr) {
		NL_SET_ERR_MSG(extack, "address family missing");
		NL_SET_ERR_ATTR_MISS(extack, NULL, NFG_RS_A_FAMILY);
		return -EINVAL;
	}
	family = nla_get_u8(attr);
	if (family != NFPROTO_IPV4 && family != NFPROTO_IPV6) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "family must be ipv4 or ipv6");
		return -EINVAL;
	}

	attr = info->attrs[NFG_RS_A_MAXELEM];
	if (attr) {
		maxelem = nla_get_u32(attr);
		if (!maxelem || maxelem > NFG_RS_MAXELEM_LIMIT) {
			NL_SET_ERR_MSG_ATTR(extack, attr,
					    "maxelem must be between 1 and 16777216");
			return -EINVAL;
		}
	}

	/* the policy checks the range */
	if (info->attrs[NFG_RS_A_TIMEOUT])
		timeout = nla_get_u32(info->attrs[NFG_RS_A_TIMEOUT]);

	set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
	if (!set) {
		NL_SET_ERR_MSG(extack, "out of memory");
		return -ENOMEM;
	}
	err = nfg_rs_core_init(&set->core, family == NFPROTO_IPV6, maxelem);
	if (err) {
		kfree(set);
		NL_SET_ERR_MSG(extack, "out of memory");
		return err;
	}
	set->core.timeout = timeout;
	set->memcg = get_mem_cgroup_from_mm(current->mm);
	atomic_inc(&nfg_rs_live_objects);
	strscpy(set->name, name, sizeof(set->name));
	set->family = family;
	refcount_set(&set->ref, 1);
	atomic_set(&set->rules, 0);
	INIT_WORK(&set->free_work, nfg_rs_free_work);
	INIT_DELAYED_WORK(&set->expire_work, nfg_rs_expire_work);
	INIT_DELAYED_WORK(&set->fold_work, nfg_rs_fold_work);
	spin_lock_init(&set->expire_lock);

	mutex_lock(&nn->lock);
	if (nfg_rs_find(nn, name)) {
		mutex_unlock(&nn->lock);
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[NFG_RS_A_NAME],
				    "a set with this name already exists");
		nfg_rs_put(set);
		return -EEXIST;
	}
	list_add_tail(&set->list, &nn->sets);
	nfg_rs_gen_bump(nn);
	mutex_unlock(&nn->lock);
	return 0;
}

/*
 * iptables-nft deletes a rule by an nf_tables transaction, and nf_tables
 * releases the rule's expressions (our match's ->destroy among them) from a
 * work item after an RCU grace period, after the transaction has returned
 * to userspace. Until then the set still counts the deleted rule, and
 * "iptables-nft -D ...; nfguard set destroy S" would see a spurious EBUSY.
 * DESTROY and RENAME call this first: if the set still counts rules, wait
 * for that work, then decide under nn->lock as usual. The wait happens
 * without nn->lock: the work only drops rule counts (nfg_rs_rule_put),
 * which takes no lock.
 */
static void nfg_rs_settle_rules(struct net *net, struct nfg_rs_net *nn,
				const char *name)
{
	struct nfg_rangeset *set;
	bool busy;

	mutex_lock(&nn->lock);
	set = nfg_rs_find(nn, name);
	busy = set && atomic_read(&set->rules);
	mutex_unlock(&nn->lock);
	if (busy)
		nfg_nft_flush_released_rules(net);
}

static int nfg_rs_cmd_destroy(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(genl_info_net(info));
	const struct nlattr *attr = info->attrs[NFG_RS_A_NAME];
	struct nfg_rangeset *set;
	const char *name;

	name = nfg_rs_attr_name(info, NFG_RS_A_NAME);
	if (!name)
		return -EINVAL;

	nfg_rs_settle_rules(genl_info_net(info), nn, name);
	mutex_lock(&nn->lock);
	set = nfg_rs_find(nn, name);
	if (!set) {
		mutex_unlock(&nn->lock);
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no set with this name");
		return -ENOENT;
	}
	if (atomic_read(&set->rules)) {
		mutex_unlock(&nn->lock);
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "set is in use by a firewall rule");
		return -EBUSY;
	}
	list_del(&set->list);
	nfg_rs_gen_bump(nn);
	mutex_unlock(&nn->lock);

	nfg_rs_put(set);
	return 0;
}

static int nfg_rs_cmd_update(struct sk_buff *skb, struct genl_info *info)
{
	enum nfg_rs_op op = info->genlhdr->cmd == NFG_RS_CMD_ADD ?
			    NFG_RS_OP_ADD : NFG_RS_OP_DEL;
	struct netlink_ext_ack *extack = info->extack;
	struct nfg_rs_range *r;
	struct nfg_rangeset *set;
	unsigned int n;
	u32 timeout;
	int err;

	set = nfg_rs_get_attr(info);
	if (IS_ERR(set))
		return PTR_ERR(set);

	/* the policy checks the range; only ADD's policy has it */
	if (info->attrs[NFG_RS_A_TIMEOUT])
		timeout = nla_get_u32(info->attrs[NFG_RS_A_TIMEOUT]);
	else
		timeout = READ_ONCE(set->core.timeout);

	if (!info->attrs[NFG_RS_A_ELEMS]) {
		NL_SET_ERR_MSG(extack, "elements missing");
		NL_SET_ERR_ATTR_MISS(extack, NULL, NFG_RS_A_ELEMS);
		err = -EINVAL;
		goto out_put;
	}
	err = nfg_rs_parse_elems(info, set->core.v6, get_jiffies_64(), timeout,
				 &r, &n);
	if (err)
		goto out_put;

	/*
	 * One prefix (a bouncer or fail2ban adding an address at a time):
	 * through the hash, as a packet-path update, so that it costs a hash
	 * insert and the fold work rebuilds the array once per tick, not once
	 * per address. Anything else, or no room in the hash: the whole path.
	 */
	if (n == 1 && !nfg_rs_dyn_enable(&set->core, get_random_u32()) &&
	    !nfg_rs_core_update1(&set->core, r, op, get_jiffies_64())) {
		nfg_rs_fold_kick(set);
		err = 0;
		goto out_free;
	}
	err = nfg_rs_core_update(&set->core, r, n, op);
	switch (err) {
	case 0:
		nfg_rs_expire_arm(set);
		break;
	case -ENOSPC:
		NL_SET_ERR_MSG(extack,
			       "set is full: the result would exceed maxelem ranges; nothing changed");
		break;
	case -ENOMEM:
		NL_SET_ERR_MSG(extack, "out of memory; nothing changed");
		break;
	default:
		NL_SET_ERR_MSG(extack, "invalid range; nothing changed");
		break;
	}
out_free:
	kvfree(r);
out_put:
	nfg_rs_put(set);
	return err;
}

static int nfg_rs_cmd_flush(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_rangeset *set;

	set = nfg_rs_get_attr(info);
	if (IS_ERR(set))
		return PTR_ERR(set);
	nfg_rs_core_flush(&set->core);
	nfg_rs_put(set);
	return 0;
}

static int nfg_rs_cmd_test(struct sk_buff *skb, struct genl_info *info)
{
	const struct nlattr *elems = info->attrs[NFG_RS_A_ELEMS];
	struct netlink_ext_ack *extack = info->extack;
	struct nfg_rangeset *set;
	struct nfg_rs_range *r;
	struct sk_buff *msg;
	unsigned int n;
	void *hdr;
	bool hit;
	int err;

	set = nfg_rs_get_attr(info);
	if (IS_ERR(set))
		return PTR_ERR(set);

	if (!elems) {
		NL_SET_ERR_MSG(extack, "element missing");
		NL_SET_ERR_ATTR_MISS(extack, NULL, NFG_RS_A_ELEMS);
		err = -EINVAL;
		goto out_put;
	}
	err = nfg_rs_parse_elems(info, set->core.v6, 0, 0, &r, &n);
	if (err)
		goto out_put;
	if (n != 1) {
		NL_SET_ERR_MSG_ATTR(extack, elems, "test takes exactly one element");
		err = -EINVAL;
		goto out_free;
	}
	hit = nfg_rs_core_test(&set->core, r);

	err = -ENOMEM;
	msg = genlmsg_new(nla_total_size(sizeof(u8)), GFP_KERNEL);
	if (!msg)
		goto out_free;
	hdr = genlmsg_put_reply(msg, info, &nfg_rs_genl_family, 0,
				NFG_RS_CMD_TEST);
	if (!hdr || nla_put_u8(msg, NFG_RS_A_RESULT, hit)) {
		nlmsg_free(msg);
		goto out_free;
	}
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
out_free:
	if (err == -ENOMEM)
		NL_SET_ERR_MSG(extack, "out of memory");
	kvfree(r);
out_put:
	nfg_rs_put(set);
	return err;
}

static int nfg_rs_cmd_swap(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(genl_info_net(info));
	struct netlink_ext_ack *extack = info->extack;
	struct nfg_rangeset *a, *b;
	const char *name, *name2;
	int err;

	name = nfg_rs_attr_name(info, NFG_RS_A_NAME);
	if (!name)
		return -EINVAL;
	name2 = nfg_rs_attr_name(info, NFG_RS_A_NAME2);
	if (!name2)
		return -EINVAL;

	mutex_lock(&nn->lock);
	a = nfg_rs_find(nn, name);
	b = nfg_rs_find(nn, name2);
	if (!a || !b) {
		mutex_unlock(&nn->lock);
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[a ? NFG_RS_A_NAME2 : NFG_RS_A_NAME],
				    "no set with this name");
		return -ENOENT;
	}
	if (a->family != b->family) {
		mutex_unlock(&nn->lock);
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[NFG_RS_A_NAME2],
				    "cannot swap sets of different families");
		return -EINVAL;
	}
	refcount_inc(&a->ref);
	refcount_inc(&b->ref);
	mutex_unlock(&nn->lock);

	err = nfg_rs_core_swap(&a->core, &b->core);
	if (err) {
		/* the families were checked above: the fold failed */
		NL_SET_ERR_MSG(extack, "out of memory folding packet-path entries");
	} else {
		/* the expiries went with the contents */
		nfg_rs_expire_arm(a);
		nfg_rs_expire_arm(b);
	}
	nfg_rs_put(b);
	nfg_rs_put(a);
	return err;
}

static int nfg_rs_cmd_rename(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(genl_info_net(info));
	struct netlink_ext_ack *extack = info->extack;
	struct nfg_rangeset *set;
	const char *name, *name2;
	int err = 0;

	name = nfg_rs_attr_name(info, NFG_RS_A_NAME);
	if (!name)
		return -EINVAL;
	name2 = nfg_rs_attr_name(info, NFG_RS_A_NAME2);
	if (!name2)
		return -EINVAL;

	nfg_rs_settle_rules(genl_info_net(info), nn, name);
	mutex_lock(&nn->lock);
	set = nfg_rs_find(nn, name);
	if (!set) {
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[NFG_RS_A_NAME],
				    "no set with this name");
		err = -ENOENT;
	} else if (atomic_read(&set->rules)) {
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[NFG_RS_A_NAME],
				    "set is in use by a firewall rule");
		err = -EBUSY;
	} else if (nfg_rs_find(nn, name2)) {
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[NFG_RS_A_NAME2],
				    "a set with the new name already exists");
		err = -EEXIST;
	} else {
		strscpy(set->name, name2, sizeof(set->name));
		nfg_rs_gen_bump(nn);
	}
	mutex_unlock(&nn->lock);
	return err;
}

static int nfg_rs_cmd_list(struct sk_buff *skb, struct genl_info *info)
{
	struct nfg_rs_core_info ci;
	struct nfg_rangeset *set;
	struct sk_buff *msg;
	int err;

	set = nfg_rs_get_attr(info);
	if (IS_ERR(set))
		return PTR_ERR(set);

	err = -ENOMEM;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	nfg_rs_core_info(&set->core, &ci);
	err = nfg_rs_fill_header(msg, info->snd_portid, info->snd_seq, 0,
				 nla_data(info->attrs[NFG_RS_A_NAME]), set, &ci,
				 NULL);
	if (err) {
		nlmsg_free(msg);
		goto out;
	}
	err = genlmsg_reply(msg, info);
out:
	if (err == -ENOMEM)
		NL_SET_ERR_MSG(info->extack, "out of memory");
	nfg_rs_put(set);
	return err;
}

/* ---- LIST dumps ------------------------------------------------------- */

struct nfg_rs_dump {
	struct nfg_rangeset	*set;	/* one-set dump: referenced */
	struct nfg_rs_array	*snap;	/* its snapshot: referenced, NULL if empty */
	u32			maxelem;	/* of the snapshot */
	u32			pos;	/* next set (all sets) or range (one set) */
	bool			header_done;
};

static struct nfg_rs_dump *nfg_rs_dump_ctx(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct nfg_rs_dump) > sizeof(cb->ctx));
	return (struct nfg_rs_dump *)cb->ctx;
}

static const struct nlattr *nfg_rs_dump_name(struct netlink_callback *cb)
{
	struct nlattr **attrs = nfg_genl_dump_attrs(cb);

	return attrs ? attrs[NFG_RS_A_NAME] : NULL;
}

/* Take the references a one-set dump holds until .done. */
static int nfg_rs_list_start(struct netlink_callback *cb)
{
	struct nfg_rs_dump *d = nfg_rs_dump_ctx(cb);
	const struct nlattr *attr = nfg_rs_dump_name(cb);

	if (!attr)
		return 0;	/* all sets, headers only */
	if (!*(const char *)nla_data(attr)) {
		NL_SET_ERR_MSG_ATTR(cb->extack, attr, "empty set name");
		return -EINVAL;
	}
	d->set = nfg_rs_get(sock_net(cb->skb->sk), nla_data(attr));
	if (!d->set) {
		NL_SET_ERR_MSG_ATTR(cb->extack, attr, "no set with this name");
		return -ENOENT;
	}
	d->snap = nfg_rs_core_snapshot(&d->set->core, &d->maxelem);
	return 0;
}

/* May run in softirq (6.1: from the socket destructor); sleeps nowhere. */
static int nfg_rs_list_done(struct netlink_callback *cb)
{
	struct nfg_rs_dump *d = nfg_rs_dump_ctx(cb);

	nfg_rs_array_put(d->snap);
	d->snap = NULL;
	if (d->set)
		nfg_rs_put_deferred(d->set);
	d->set = NULL;
	return 0;
}

static int nfg_rs_dump_all(struct sk_buff *skb, struct netlink_callback *cb,
			   struct nfg_rs_dump *d)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(sock_net(skb->sk));
	struct nfg_rs_core_info ci;
	struct nfg_rangeset *set;
	u32 idx = 0;

	mutex_lock(&nn->lock);
	cb->seq = nn->gen;
	list_for_each_entry(set, &nn->sets, list) {
		if (idx < d->pos) {
			idx++;
			continue;
		}
		/*
		 * As a listing of one set: entries waiting in the hash are
		 * folded first, so a range just added is counted (on -ENOMEM
		 * they stay in the hash and are counted as dynamic).
		 */
		nfg_rs_core_fold(&set->core, get_jiffies_64());
		nfg_rs_core_info(&set->core, &ci);
		if (nfg_rs_fill_header(skb, NETLINK_CB(cb->skb).portid,
				       cb->nlh->nlmsg_seq, NLM_F_MULTI,
				       set->name, set, &ci, cb))
			break;
		idx++;
	}
	mutex_unlock(&nn->lock);
	d->pos = idx;
	return skb->len;
}

/* One message with an ELEMS nest of the next ranges of the snapshot. */
static int nfg_rs_fill_elems(struct sk_buff *skb, struct netlink_callback *cb,
			     struct nfg_rs_dump *d)
{
	const struct nfg_rs_array *snap = d->snap;
	unsigned int alen = snap->v6 ? sizeof(struct in6_addr) : sizeof(__be32);
	u64 now = get_jiffies_64();
	struct nlattr *elems, *elem;
	struct nfg_rs_range r;
	unsigned int n = 0;
	u8 buf[16];
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &nfg_rs_genl_family, NLM_F_MULTI, NFG_RS_CMD_LIST);
	if (!hdr)
		return -EMSGSIZE;
	elems = nla_nest_start(skb, NFG_RS_A_ELEMS);
	if (!elems)
		goto cancel;

	while (d->pos < snap->count && n < NFG_RS_DUMP_ELEMS) {
		nfg_rs_array_range(snap, d->pos, &r);
		if (r.expires && r.expires <= now) {
			/* expired, not yet collected: not listed */
			d->pos++;
			continue;
		}
		elem = nla_nest_start(skb, NFG_RS_A_ELEM);
		if (!elem)
			break;
		nfg_rs_key_to_be(buf, &r.start, snap->v6);
		if (nla_put(skb, NFG_RS_E_START, alen, buf))
			goto cancel_elem;
		nfg_rs_key_to_be(buf, &r.end, snap->v6);
		if (nla_put(skb, NFG_RS_E_END, alen, buf))
			goto cancel_elem;
		if (r.expires &&
		    nla_put_u32(skb, NFG_RS_E_TIMEOUT,
				DIV_ROUND_UP_ULL(r.expires - now, HZ)))
			goto cancel_elem;
		nla_nest_end(skb, elem);
		d->pos++;
		n++;
	}
	goto end;

cancel_elem:
	nla_nest_cancel(skb, elem);
end:
	if (!n)
		goto cancel;
	nla_nest_end(skb, elems);
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int nfg_rs_dump_one(struct sk_buff *skb, struct netlink_callback *cb,
			   struct nfg_rs_dump *d)
{
	struct nfg_rs_core_info ci;

	if (!d->header_done) {
		/* Live counters; count and maxelem of the snapshot. */
		nfg_rs_core_info(&d->set->core, &ci);
		ci.count = d->snap ? d->snap->count : 0;
		ci.maxelem = d->maxelem;
		if (nfg_rs_fill_header(skb, NETLINK_CB(cb->skb).portid,
				       cb->nlh->nlmsg_seq, NLM_F_MULTI,
				       nla_data(nfg_rs_dump_name(cb)), d->set,
				       &ci, NULL))
			return skb->len ? skb->len : -EMSGSIZE;
		d->header_done = true;
	}
	while (d->snap && d->pos < d->snap->count)
		if (nfg_rs_fill_elems(skb, cb, d))
			break;
	return skb->len;
}

static int nfg_rs_list_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nfg_rs_dump *d = nfg_rs_dump_ctx(cb);

	if (d->set)
		return nfg_rs_dump_one(skb, cb, d);
	return nfg_rs_dump_all(skb, cb, d);
}

/* ---- family ----------------------------------------------------------- */

#define NFG_RS_POLICY_NAME \
	{ .type = NLA_NUL_STRING, .len = XT_RANGESET_MAXNAMELEN - 1 }

static const struct nla_policy nfg_rs_elems_policy[NFG_RS_A_ELEM + 1] = {
	[NFG_RS_A_ELEM]		= NLA_POLICY_NESTED(nfg_rs_elem_policy),
};

/* Strict per-command policies: anything not listed is rejected. */
static const struct nla_policy nfg_rs_create_policy[NFG_RS_A_MAX + 1] = {
	[NFG_RS_A_NAME]		= NFG_RS_POLICY_NAME,
	/* family and maxelem are range-checked in the handler: -EINVAL */
	[NFG_RS_A_FAMILY]	= { .type = NLA_U8 },
	[NFG_RS_A_MAXELEM]	= { .type = NLA_U32 },
	[NFG_RS_A_TIMEOUT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&nfg_rs_timeout_range),
};

static const struct nla_policy nfg_rs_name_policy[NFG_RS_A_MAX + 1] = {
	[NFG_RS_A_NAME]		= NFG_RS_POLICY_NAME,
};

static const struct nla_policy nfg_rs_elems_req_policy[NFG_RS_A_MAX + 1] = {
	[NFG_RS_A_NAME]		= NFG_RS_POLICY_NAME,
	[NFG_RS_A_ELEMS]	= NLA_POLICY_NESTED(nfg_rs_elems_policy),
};

static const struct nla_policy nfg_rs_add_policy[NFG_RS_A_MAX + 1] = {
	[NFG_RS_A_NAME]		= NFG_RS_POLICY_NAME,
	[NFG_RS_A_ELEMS]	= NLA_POLICY_NESTED(nfg_rs_elems_policy),
	[NFG_RS_A_TIMEOUT]	= NLA_POLICY_FULL_RANGE(NLA_U32,
							&nfg_rs_timeout_range),
};

static const struct nla_policy nfg_rs_name2_policy[NFG_RS_A_MAX + 1] = {
	[NFG_RS_A_NAME]		= NFG_RS_POLICY_NAME,
	[NFG_RS_A_NAME2]	= NFG_RS_POLICY_NAME,
};

static const struct genl_ops nfg_rs_genl_ops[] = {
	{
		.cmd		= NFG_RS_CMD_CREATE,
		.doit		= nfg_rs_cmd_create,
		.policy		= nfg_rs_create_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_DESTROY,
		.doit		= nfg_rs_cmd_destroy,
		.policy		= nfg_rs_name_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_ADD,
		.doit		= nfg_rs_cmd_update,
		.policy		= nfg_rs_add_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_DEL,
		.doit		= nfg_rs_cmd_update,
		.policy		= nfg_rs_elems_req_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_FLUSH,
		.doit		= nfg_rs_cmd_flush,
		.policy		= nfg_rs_name_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_TEST,
		.doit		= nfg_rs_cmd_test,
		.policy		= nfg_rs_elems_req_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_SWAP,
		.doit		= nfg_rs_cmd_swap,
		.policy		= nfg_rs_name2_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_RENAME,
		.doit		= nfg_rs_cmd_rename,
		.policy		= nfg_rs_name2_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd		= NFG_RS_CMD_LIST,
		.doit		= nfg_rs_cmd_list,
		.start		= nfg_rs_list_start,
		.dumpit		= nfg_rs_list_dumpit,
		.done		= nfg_rs_list_done,
		.policy		= nfg_rs_name_policy,
		.maxattr	= NFG_RS_A_MAX,
		.flags		= GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family nfg_rs_genl_family __ro_after_init = {
	.name		= NFG_RANGESET_GENL_NAME,
	.version	= NFG_RANGESET_GENL_VERSION,
	.maxattr	= NFG_RS_A_MAX,
	.netnsok	= true,
	/* Own locking (see the top); dumps must not hold genl_mutex. */
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= nfg_rs_genl_ops,
	.n_ops		= ARRAY_SIZE(nfg_rs_genl_ops),
};

/* ---- per-netns state and /proc/net/stat/nfguard_rangeset -------------- */

static int nfg_rs_proc_show(struct seq_file *seq, void *v)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(seq_file_single_net(seq));
	struct nfg_rs_core_info ci;
	struct nfg_rangeset *set;

	seq_puts(seq, "name count lookups hits\n");
	mutex_lock(&nn->lock);
	list_for_each_entry(set, &nn->sets, list) {
		nfg_rs_core_info(&set->core, &ci);
		seq_printf(seq, "%s %u %llu %llu\n", set->name, ci.count,
			   ci.lookups, ci.hits);
	}
	mutex_unlock(&nn->lock);
	return 0;
}

static int __net_init nfg_rs_net_init(struct net *net)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(net);

	mutex_init(&nn->lock);
	INIT_LIST_HEAD(&nn->sets);
	nn->gen = 1;
	if (IS_ENABLED(CONFIG_PROC_FS) &&
	    !proc_create_net_single(NFG_RS_PROC_NAME, 0444, net->proc_net_stat,
				    nfg_rs_proc_show, NULL))
		return -ENOMEM;
	return 0;
}

/*
 * Unlink every set and drop the list's reference. Sets still used by
 * rules (the xt tables of this netns may be torn down after us) live on
 * until the last rule lets go.
 */
static void __net_exit nfg_rs_net_exit(struct net *net)
{
	struct nfg_rs_net *nn = nfg_rs_pernet(net);
	struct nfg_rangeset *set, *tmp;
	LIST_HEAD(sets);

	remove_proc_entry(NFG_RS_PROC_NAME, net->proc_net_stat);

	mutex_lock(&nn->lock);
	list_splice_init(&nn->sets, &sets);
	nfg_rs_gen_bump(nn);
	mutex_unlock(&nn->lock);

	list_for_each_entry_safe(set, tmp, &sets, list) {
		list_del(&set->list);
		nfg_rs_put(set);
	}
	/* Sets of this netns whose last dump ended: freed before we return. */
	flush_workqueue(nfg_rs_free_wq);
}

static struct pernet_operations nfg_rs_net_ops = {
	.init	= nfg_rs_net_init,
	.exit	= nfg_rs_net_exit,
	.id	= &nfg_rs_net_id,
	.size	= sizeof(struct nfg_rs_net),
};

int __init nfg_rs_nl_init(void)
{
	int err;

	/* A longer name registers, then trips the fortify check in genl_ctrl. */
	BUILD_BUG_ON(sizeof(NFG_RANGESET_GENL_NAME) > GENL_NAMSIZ);

	nfg_rs_free_wq = alloc_workqueue("nfg_rs_free", WQ_PERCPU, 0);
	if (!nfg_rs_free_wq) {
		err = -ENOMEM;
		goto err_out;
	}
	err = register_pernet_subsys(&nfg_rs_net_ops);
	if (err)
		goto err_wq;
	err = genl_register_family(&nfg_rs_genl_family);
	if (err)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_subsys(&nfg_rs_net_ops);
err_wq:
	destroy_workqueue(nfg_rs_free_wq);
err_out:
	return err;
}

void nfg_rs_nl_exit(void)
{
	genl_unregister_family(&nfg_rs_genl_family);
	unregister_pernet_subsys(&nfg_rs_net_ops);
	/* Runs the pending frees (their call_rcu first), then goes away. */
	destroy_workqueue(nfg_rs_free_wq);
	/* nfg_rs_free_rcu() is module code */
	rcu_barrier();
	/* every set and array must have been released by now */
	WARN_ON_ONCE(atomic_read(&nfg_rs_live_objects));
}
