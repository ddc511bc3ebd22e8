// SPDX-License-Identifier: GPL-2.0
/*
 * nfguard kconnlimit: the conntrack side of the count table. The core
 * (kconnlimit_core.c) asks whether a remembered connection still counts
 * (nfg_kcl_conn_dead()) and lets go of it (nfg_kcl_conn_release()); this
 * file answers from conntrack. It sits below the core and calls nothing
 * above it: neither the core, nor the match, nor the control plane.
 *
 * Why a file of its own rather than an ops struct (dead(), release())
 * handed to the core with each table: nfg_kcl_conn_dead() runs on the
 * packet path, once per entry a verdict above the limit checks (up to
 * the limit + 1 live ones) and on every insert, so an indirect call there
 * would cost a retpoline per entry. A direct call resolved at link time
 * costs nothing, keeps the packet path as it was, and the unit harness in
 * tests/unit links the core with its own fake conntrack in place of this
 * file.
 */
#include "nfg_compat.h"

#include <linux/kernel.h>
#include <linux/jiffies.h>
#include <linux/string.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/netfilter/nf_conntrack_core.h>
#include <net/netfilter/nf_conntrack_zones.h>

#include "kconnlimit_ct.h"

/*
 * What a remembered connection is (struct nfg_kcl_ident): the conntrack's
 * original tuple and zone, enough for nf_conntrack_find_get(). No
 * reference is held on a conntrack that is not confirmed (see the theory
 * in kconnlimit_core.c).
 */
struct nfg_kcl_ctid {
	struct nf_conntrack_tuple	tuple;
	struct nf_conntrack_zone	zone;
};

void nfg_kcl_ident_set(struct nfg_kcl_ident *id, const struct nf_conn *ct)
{
	struct nfg_kcl_ctid *ci = (struct nfg_kcl_ctid *)id;

	BUILD_BUG_ON(sizeof(*ci) > sizeof(*id));
	memset(id, 0, sizeof(*id));
	ci->tuple = ct->tuplehash[IP_CT_DIR_ORIGINAL].tuple;
	ci->zone = *nf_ct_zone(ct);
}

/* Slot lock held: find the confirmed conntrack of a pending entry. */
static bool nfg_kcl_resolve(struct nfg_kcl_conn *c,
			    const struct nfg_kcl_env *env)
{
	const struct nfg_kcl_ctid *ci = (const struct nfg_kcl_ctid *)&c->id;
	const struct nf_conntrack_tuple_hash *h;
	struct net *net = env->net;
	struct nf_conn *ct;

	if (!net || (env->alive && !READ_ONCE(*env->alive)))
		return false;
	h = nf_conntrack_find_get(net, &ci->zone, &ci->tuple);
	if (!h)
		return false;
	ct = nf_ct_tuplehash_to_ctrack(h);
	if (NF_CT_DIRECTION(h) != IP_CT_DIR_ORIGINAL) {
		/* Our tuple is another connection's reply: not ours. */
		nf_ct_put(ct);
		return false;
	}
	c->ct = ct;
	return true;
}

/*
 * Slot lock held: a pending entry is not (yet) found in the conntrack hash.
 * Does it still count? Its conntrack is unconfirmed (its packet on its way,
 * or held by a queue), or was dropped with its packet: without a reference
 * (see the theory) the two look the same, so it counts for a grace, short
 * for a connection its rule refused, @env->grace for one it let through.
 * Lookups back off: the next one comes no sooner than the entry had been
 * pending at the last, so an entry that is never confirmed (a flood's SYN
 * dropped after the rule) costs a few lookups in its grace, not one per
 * walk of its key.
 */
static bool nfg_kcl_pending_dead(struct nfg_kcl_conn *c,
				 const struct nfg_kcl_env *env)
{
	u32 grace = c->refused ? NFG_KCL_GRACE_REFUSED : env->grace;
	u32 now = (u32)jiffies, age = now - c->stamp;

	if (age < grace && now - c->checked < c->checked - c->stamp)
		return false;
	if (nfg_kcl_resolve(c, env))
		return false;
	c->checked = now;
	return age >= grace;
}

bool nfg_kcl_conn_dead(struct nfg_kcl_conn *c, const void *arg)
{
	const struct nfg_kcl_env *env = arg;
	const struct nf_conn *ct;
	u8 state;

	if (env->drain)
		return true;
	if (!c->ct && nfg_kcl_pending_dead(c, env))
		return true;
	if (!c->ct)
		return false;
	ct = c->ct;
	if (nf_ct_is_dying(ct) || nf_ct_is_expired(ct))
		return true;
	if (nf_ct_protonum(ct) == IPPROTO_TCP) {
		/* As nf_conncount: closed TCP connections do not count. */
		state = READ_ONCE(ct->proto.tcp.state);
		return state == TCP_CONNTRACK_TIME_WAIT ||
		       state == TCP_CONNTRACK_CLOSE;
	}
	return false;
}

bool nfg_kcl_conn_young(const struct nfg_kcl_conn *c, const void *arg)
{
	const struct nfg_kcl_env *env = arg;
	u32 grace = c->refused ? NFG_KCL_GRACE_REFUSED : env->grace;

	return !c->ct && !env->drain && (u32)jiffies - c->stamp < grace;
}

void nfg_kcl_conn_release(struct nfg_kcl_conn *c)
{
	if (c->ct)
		nf_ct_put(c->ct);
}
