/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nfguard kconnlimit: the conntrack side of the count table
 * (kconnlimit_ct.c), what the xt match passes to the core as its
 * environment. Kernel only: the unit harness in tests/unit links the core
 * with its own fake conntrack instead.
 */
#ifndef _NFG_KCONNLIMIT_CT_H
#define _NFG_KCONNLIMIT_CT_H

#include <linux/jiffies.h>
#include <linux/types.h>

#include "kconnlimit_core.h"

struct net;
struct nf_conn;

/*
 * How nfg_kcl_conn_dead() sees the world (the core's @env): @net for
 * lookups (NULL once the netns exits), @alive (the packet path's: the
 * instance's net_alive, read under the slot lock, so that no reference is
 * taken after pre_exit drained the slot), how long an entry that the rule
 * let through and that is not in the conntrack hash may still be on its way
 * to confirmation (@grace: the pending_ms parameter), and @drain (pre_exit:
 * every entry goes).
 */
struct nfg_kcl_env {
	struct net	*net;
	const bool	*alive;
	u32		grace;	/* jiffies, at least NFG_KCL_GRACE_REFUSED */
	bool		drain;
};

/*
 * A connection the rule refused (over its limit) and that is not in the
 * conntrack hash two jiffies later was dropped with its packet, as
 * nf_conncount assumes of every one; one it let through is given @grace:
 * its packet may wait in a queue (NFQUEUE) for a reader's verdict.
 */
#define NFG_KCL_GRACE_REFUSED	2

/* Who @ct is, as the core remembers it (original tuple and zone). */
void nfg_kcl_ident_set(struct nfg_kcl_ident *id, const struct nf_conn *ct);

#endif /* _NFG_KCONNLIMIT_CT_H */
