// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: kconnlimit control-plane client (see libnfguard.h).
 * Both requests are dumps; TOP replies are an instance message followed by
 * messages of entries carrying the instance id. Entries are gathered per
 * instance and handed to the callback when the next instance (or the end)
 * comes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfguard_genl.h>

#include <linux/netfilter/xt_kconnlimit.h>

#include "libnfguard.h"
#include "nfg_genl.h"
#include "nfg_lib.h"

_Static_assert(NFG_KCL_NAMELEN == XT_KCONNLIMIT_MAXNAMELEN,
	       "public rule name length is the match's");
_Static_assert(NFG_KCL_F_UPTO == XT_KCONNLIMIT_UPTO &&
	       NFG_KCL_F_DADDR == XT_KCONNLIMIT_DADDR &&
	       NFG_KCL_F_ABOVE == XT_KCONNLIMIT_ABOVE,
	       "public rule flags are the match's");

struct nfg_kcl {
	struct nfg_genl *g;
};

struct nfg_kcl *nfg_kcl_open(struct nfg_err *e)
{
	struct nfg_kcl *h = calloc(1, sizeof(*h));

	if (!h) {
		nfg_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	h->g = nfg_genl_open(NFG_KCONNLIMIT_GENL_NAME, e);
	if (!h->g) {
		free(h);
		return NULL;
	}
	return h;
}

void nfg_kcl_close(struct nfg_kcl *h)
{
	if (!h)
		return;
	nfg_genl_close(h->g);
	free(h);
}

struct kcl_tb {
	const struct nlattr *a[NFG_KCL_A_MAX + 1];
};

/* What each reply attribute must look like (MNL_TYPE_UNSPEC: ignored). */
static const enum mnl_attr_data_type kcl_types[NFG_KCL_A_MAX + 1] = {
	[NFG_KCL_A_NAME] = MNL_TYPE_NUL_STRING,
	[NFG_KCL_A_FAMILY] = MNL_TYPE_U8,
	[NFG_KCL_A_PREFIX] = MNL_TYPE_U8,
	[NFG_KCL_A_FLAGS] = MNL_TYPE_U8,
	[NFG_KCL_A_ID] = MNL_TYPE_U32,
	[NFG_KCL_A_LIMIT] = MNL_TYPE_U32,
	[NFG_KCL_A_KEYS] = MNL_TYPE_U32,
	[NFG_KCL_A_CONNS] = MNL_TYPE_U32,
	[NFG_KCL_A_SLOTS] = MNL_TYPE_U32,
	[NFG_KCL_A_LOCKS] = MNL_TYPE_U32,
	[NFG_KCL_A_MEMSIZE] = MNL_TYPE_U64,
	[NFG_KCL_A_MATCHED] = MNL_TYPE_U64,
	[NFG_KCL_A_OVER_LIMIT] = MNL_TYPE_U64,
	[NFG_KCL_A_INSERTS] = MNL_TYPE_U64,
	[NFG_KCL_A_GC_EVICTIONS] = MNL_TYPE_U64,
	[NFG_KCL_A_CAP_HITS] = MNL_TYPE_U64,
	[NFG_KCL_A_ALLOC_FAIL] = MNL_TYPE_U64,
	[NFG_KCL_A_TOTAL_CONNS] = MNL_TYPE_U64,
	[NFG_KCL_A_MAX_CONNS] = MNL_TYPE_U64,
	[NFG_KCL_A_ENTRIES] = MNL_TYPE_NESTED,
};

struct kcl_ctx {
	nfg_kcl_cb cb;		/* one of these two */
	nfg_kcl_zcb zcb;
	void *data;
	struct nfg_err *e;
	bool have;		/* inst holds an instance not yet delivered */
	struct nfg_kcl_inst inst;
	struct nfg_kcl_zkey *keys;
	struct nfg_kcl_key *old;	/* for cb: keys without their zone */
	size_t nkeys, cap, oldcap;
	int cb_ret;
};

static int bad_reply(struct nfg_err *e)
{
	nfg_err_set(e, EPROTO,
		    "malformed reply from the kernel (nfg_kconnlimit ABI mismatch?)");
	return MNL_CB_ERROR;
}

static int flush_inst(struct kcl_ctx *c)
{
	size_t i;
	int ret;

	if (!c->have)
		return 0;
	c->have = false;
	if (c->zcb) {
		ret = c->zcb(&c->inst, c->keys, c->nkeys, c->data);
	} else {
		if (c->nkeys > c->oldcap) {
			struct nfg_kcl_key *n = realloc(c->old, c->nkeys * sizeof(*n));

			if (!n) {
				nfg_err_set(c->e, ENOMEM, "out of memory");
				return -ENOMEM;
			}
			c->old = n;
			c->oldcap = c->nkeys;
		}
		for (i = 0; i < c->nkeys; i++) {
			memcpy(c->old[i].addr, c->keys[i].addr, sizeof(c->old[i].addr));
			c->old[i].count = c->keys[i].count;
		}
		ret = c->cb(&c->inst, c->old, c->nkeys, c->data);
	}
	c->nkeys = 0;
	return ret;
}

static uint64_t u64_or0(const struct kcl_tb *tb, int t)
{
	return tb->a[t] ? mnl_attr_get_u64(tb->a[t]) : 0;
}

static uint32_t u32_or0(const struct kcl_tb *tb, int t)
{
	return tb->a[t] ? mnl_attr_get_u32(tb->a[t]) : 0;
}

static int add_entry(struct kcl_ctx *c, const struct nlattr *ent)
{
	const struct nlattr *a;
	struct nfg_kcl_zkey k = { .count = 0 };
	bool have_addr = false, have_count = false;
	unsigned int alen = c->inst.family == NFPROTO_IPV6 ? 16 : 4;

	mnl_attr_for_each_nested(a, ent) {
		switch (mnl_attr_get_type(a)) {
		case NFG_KCL_E_ADDR:
			if (mnl_attr_get_payload_len(a) != alen)
				return -1;
			memcpy(k.addr, mnl_attr_get_payload(a), alen);
			have_addr = true;
			break;
		case NFG_KCL_E_COUNT:
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				return -1;
			k.count = mnl_attr_get_u32(a);
			have_count = true;
			break;
		case NFG_KCL_E_ZONE:	/* absent from older kernels: zone 0 */
			if (mnl_attr_validate(a, MNL_TYPE_U16) < 0)
				return -1;
			k.zone = mnl_attr_get_u16(a);
			break;
		}
	}
	if (!have_addr || !have_count)
		return -1;
	if (c->nkeys == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		struct nfg_kcl_zkey *n = realloc(c->keys, ncap * sizeof(*n));

		if (!n)
			return -2;
		c->keys = n;
		c->cap = ncap;
	}
	c->keys[c->nkeys++] = k;
	return 0;
}

static int kcl_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcl_ctx *c = data;
	struct nfg_kcl_inst *o = &c->inst;
	const struct nlattr *ent;
	struct kcl_tb tb;
	int ret;

	if (nfg_genl_parse(nlh, kcl_types, NFG_KCL_A_MAX, tb.a) < 0 ||
	    !tb.a[NFG_KCL_A_ID])
		return bad_reply(c->e);
	if (tb.a[NFG_KCL_A_ENTRIES]) {
		if (!c->have || mnl_attr_get_u32(tb.a[NFG_KCL_A_ID]) != o->id)
			return bad_reply(c->e);
		mnl_attr_for_each_nested(ent, tb.a[NFG_KCL_A_ENTRIES]) {
			ret = add_entry(c, ent);
			if (ret == -2) {
				nfg_err_set(c->e, ENOMEM, "out of memory");
				return MNL_CB_ERROR;
			}
			if (ret < 0)
				return bad_reply(c->e);
		}
		return MNL_CB_OK;
	}
	if (!tb.a[NFG_KCL_A_NAME] || !tb.a[NFG_KCL_A_FAMILY])
		return bad_reply(c->e);
	ret = flush_inst(c);
	if (ret) {
		c->cb_ret = ret;
		return MNL_CB_ERROR;
	}
	memset(o, 0, sizeof(*o));
	o->id = mnl_attr_get_u32(tb.a[NFG_KCL_A_ID]);
	snprintf(o->name, sizeof(o->name), "%s", mnl_attr_get_str(tb.a[NFG_KCL_A_NAME]));
	o->family = mnl_attr_get_u8(tb.a[NFG_KCL_A_FAMILY]);
	o->prefix = tb.a[NFG_KCL_A_PREFIX] ? mnl_attr_get_u8(tb.a[NFG_KCL_A_PREFIX]) : 0;
	o->flags = tb.a[NFG_KCL_A_FLAGS] ? mnl_attr_get_u8(tb.a[NFG_KCL_A_FLAGS]) : 0;
	o->limit = u32_or0(&tb, NFG_KCL_A_LIMIT);
	o->keys = u32_or0(&tb, NFG_KCL_A_KEYS);
	o->conns = u32_or0(&tb, NFG_KCL_A_CONNS);
	o->slots = u32_or0(&tb, NFG_KCL_A_SLOTS);
	o->locks = u32_or0(&tb, NFG_KCL_A_LOCKS);
	o->memsize = u64_or0(&tb, NFG_KCL_A_MEMSIZE);
	o->matched = u64_or0(&tb, NFG_KCL_A_MATCHED);
	o->over_limit = u64_or0(&tb, NFG_KCL_A_OVER_LIMIT);
	o->inserts = u64_or0(&tb, NFG_KCL_A_INSERTS);
	o->gc_evictions = u64_or0(&tb, NFG_KCL_A_GC_EVICTIONS);
	o->cap_hits = u64_or0(&tb, NFG_KCL_A_CAP_HITS);
	o->alloc_fail = u64_or0(&tb, NFG_KCL_A_ALLOC_FAIL);
	o->total_conns = u64_or0(&tb, NFG_KCL_A_TOTAL_CONNS);
	o->max_conns = u64_or0(&tb, NFG_KCL_A_MAX_CONNS);
	c->have = true;
	return MNL_CB_OK;
}

static int kcl_dump(struct nfg_kcl *h, uint8_t cmd, const char *name,
		    uint32_t n, nfg_kcl_cb cb, nfg_kcl_zcb zcb, void *data,
		    struct nfg_err *e)
{
	struct kcl_ctx c = { .cb = cb, .zcb = zcb, .data = data, .e = e };
	struct nlmsghdr *nlh;
	int ret;

	nfg_err_clear(e);
	if (name && strlen(name) >= XT_KCONNLIMIT_MAXNAMELEN)
		return nfg_err_set(e, EINVAL, "name \"%s\" is too long (at most %d characters)",
				   name, XT_KCONNLIMIT_MAXNAMELEN - 1);
	nlh = nfg_genl_msg(h->g, cmd, NFG_KCONNLIMIT_GENL_VERSION, NLM_F_DUMP);
	if (name)
		mnl_attr_put_strz(nlh, NFG_KCL_A_NAME, name);
	if (cmd == NFG_KCL_CMD_TOP)
		mnl_attr_put_u32(nlh, NFG_KCL_A_COUNT, n);
	ret = nfg_genl_talk(h->g, nlh, kcl_msg_cb, &c, e);
	if (!ret) {
		ret = flush_inst(&c);
		if (ret)
			c.cb_ret = ret;
	}
	free(c.keys);
	free(c.old);
	if (c.cb_ret)
		return c.cb_ret < 0 ? c.cb_ret : -ECANCELED;
	return ret;
}

int nfg_kcl_list(struct nfg_kcl *h, const char *name, nfg_kcl_cb cb,
		 void *data, struct nfg_err *e)
{
	return kcl_dump(h, NFG_KCL_CMD_LIST, name, 0, cb, NULL, data, e);
}

struct list_all_ctx {
	struct nfg_kcl_inst *in;
	size_t n, cap;
};

static int list_all_cb(const struct nfg_kcl_inst *inst,
		       const struct nfg_kcl_key *keys, size_t nkeys, void *data)
{
	struct list_all_ctx *c = data;

	(void)keys;
	(void)nkeys;
	return nfg_vec_push((void **)&c->in, &c->n, &c->cap, inst, sizeof(*inst));
}

int nfg_kcl_list_all(struct nfg_kcl *h, struct nfg_kcl_inst **insts,
		     size_t *n, struct nfg_err *e)
{
	struct list_all_ctx c = { 0 };
	int ret;

	*insts = NULL;
	*n = 0;
	ret = nfg_kcl_list(h, NULL, list_all_cb, &c, e);
	if (ret < 0) {
		free(c.in);
		if (e && !e->code)
			nfg_err_set(e, ret, NULL);
		return ret;
	}
	*insts = c.in;
	*n = c.n;
	return 0;
}

/* TOP with one of the two callbacks: the count checked once for both. */
static int kcl_top(struct nfg_kcl *h, const char *name, uint32_t n, nfg_kcl_cb cb,
		   nfg_kcl_zcb zcb, void *data, struct nfg_err *e)
{
	if (n < 1 || n > NFG_KCL_TOP_MAX)
		return nfg_err_set(e, EINVAL, "count %u out of range (1-%u)",
				   n, NFG_KCL_TOP_MAX);
	return kcl_dump(h, NFG_KCL_CMD_TOP, name, n, cb, zcb, data, e);
}

int nfg_kcl_top(struct nfg_kcl *h, const char *name, uint32_t n,
		nfg_kcl_cb cb, void *data, struct nfg_err *e)
{
	return kcl_top(h, name, n, cb, NULL, data, e);
}

int nfg_kcl_top_zones(struct nfg_kcl *h, const char *name, uint32_t n,
		      nfg_kcl_zcb cb, void *data, struct nfg_err *e)
{
	return kcl_top(h, name, n, NULL, cb, data, e);
}
