// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: client of the "nfg_syncookie" generic netlink family.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfguard_genl.h>

#include "libnfguard.h"
#include "nfg_genl.h"

struct nfg_sc {
	struct nfg_genl *g;
};

struct nfg_sc *nfg_sc_open(struct nfg_err *e)
{
	struct nfg_sc *h = calloc(1, sizeof(*h));

	if (!h) {
		nfg_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	h->g = nfg_genl_open(NFG_SYNCOOKIE_GENL_NAME, e);
	if (!h->g) {
		free(h);
		return NULL;
	}
	return h;
}

void nfg_sc_close(struct nfg_sc *h)
{
	if (!h)
		return;
	nfg_genl_close(h->g);
	free(h);
}

struct sc_tb {
	const struct nlattr *a[NFG_SC_A_MAX + 1];
};

static int sc_attr_cb(const struct nlattr *attr, void *data)
{
	struct sc_tb *tb = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (type <= NFG_SC_A_MAX)
		tb->a[type] = attr;
	return MNL_CB_OK;
}

static uint64_t sc_u64(const struct sc_tb *tb, int t)
{
	const struct nlattr *a = tb->a[t];

	return a && mnl_attr_get_payload_len(a) == 8 ? mnl_attr_get_u64(a) : 0;
}

static uint32_t sc_u32(const struct sc_tb *tb, int t)
{
	const struct nlattr *a = tb->a[t];

	return a && mnl_attr_get_payload_len(a) == 4 ? mnl_attr_get_u32(a) : 0;
}

struct sc_stats_ctx {
	struct nfg_sc_counters *c;
	struct nfg_sc_counters_ext *x;	/* may be NULL */
};

static int sc_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sc_stats_ctx *ctx = data;
	struct nfg_sc_counters *c = ctx->c;
	struct sc_tb tb;

	memset(&tb, 0, sizeof(tb));
	if (mnl_attr_parse(nlh, GENL_HDRLEN, sc_attr_cb, &tb) < 0)
		return MNL_CB_ERROR;
	if (ctx->x)
		ctx->x->after_conntrack = sc_u64(&tb, NFG_SC_A_AFTER_CONNTRACK);
	c->entries = sc_u32(&tb, NFG_SC_A_COUNT);
	c->max_entries = sc_u32(&tb, NFG_SC_A_MAX_ENTRIES);
	c->syn_seen = sc_u64(&tb, NFG_SC_A_SYN_SEEN);
	c->cookie_sent = sc_u64(&tb, NFG_SC_A_COOKIE_SENT);
	c->ack_valid = sc_u64(&tb, NFG_SC_A_ACK_VALID);
	c->ack_invalid = sc_u64(&tb, NFG_SC_A_ACK_INVALID);
	c->allowlist_hit = sc_u64(&tb, NFG_SC_A_ALLOWLIST_HIT);
	c->allowlist_add = sc_u64(&tb, NFG_SC_A_ALLOWLIST_ADD);
	c->allowlist_evict = sc_u64(&tb, NFG_SC_A_ALLOWLIST_EVICT);
	c->proxied = sc_u64(&tb, NFG_SC_A_PROXIED);
	c->malformed = sc_u64(&tb, NFG_SC_A_MALFORMED);
	c->send_fail = sc_u64(&tb, NFG_SC_A_SEND_FAIL);
	c->sent_inplace = sc_u64(&tb, NFG_SC_A_SENT_INPLACE);
	c->syn_resent = sc_u64(&tb, NFG_SC_A_SYN_RESENT);
	return MNL_CB_OK;
}

int nfg_sc_stats_ext(struct nfg_sc *h, struct nfg_sc_counters *out,
		     struct nfg_sc_counters_ext *ext, struct nfg_err *e)
{
	struct sc_stats_ctx ctx = { .c = out, .x = ext };
	struct nlmsghdr *nlh;

	memset(out, 0, sizeof(*out));
	if (ext)
		memset(ext, 0, sizeof(*ext));
	nlh = nfg_genl_msg(h->g, NFG_SC_CMD_STATS, NFG_SYNCOOKIE_GENL_VERSION, NLM_F_ACK);
	return nfg_genl_talk(h->g, nlh, sc_stats_cb, &ctx, e);
}

int nfg_sc_stats(struct nfg_sc *h, struct nfg_sc_counters *out, struct nfg_err *e)
{
	return nfg_sc_stats_ext(h, out, NULL, e);
}

struct sc_list_ctx {
	nfg_sc_entry_cb cb;
	void *data;
	int ret;
};

static int sc_list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sc_list_ctx *c = data;
	struct nfg_sc_entry ent;
	struct sc_tb tb;
	size_t len;

	memset(&tb, 0, sizeof(tb));
	memset(&ent, 0, sizeof(ent));
	if (mnl_attr_parse(nlh, GENL_HDRLEN, sc_attr_cb, &tb) < 0 || !tb.a[NFG_SC_A_ADDR])
		return MNL_CB_ERROR;
	len = mnl_attr_get_payload_len(tb.a[NFG_SC_A_ADDR]);
	if (len != 4 && len != 16)
		return MNL_CB_ERROR;
	memcpy(ent.addr, mnl_attr_get_payload(tb.a[NFG_SC_A_ADDR]), len);
	ent.family = len == 16 ? NFPROTO_IPV6 : NFPROTO_IPV4;
	ent.prefix = tb.a[NFG_SC_A_PREFIX] ? mnl_attr_get_u8(tb.a[NFG_SC_A_PREFIX]) : len * 8;
	ent.timeout = sc_u32(&tb, NFG_SC_A_TIMEOUT);
	c->ret = c->cb(&ent, c->data);
	return c->ret < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

int nfg_sc_list(struct nfg_sc *h, nfg_sc_entry_cb cb, void *data, struct nfg_err *e)
{
	struct sc_list_ctx c = { .cb = cb, .data = data };
	struct nlmsghdr *nlh;
	int ret;

	nlh = nfg_genl_msg(h->g, NFG_SC_CMD_AL_LIST, NFG_SYNCOOKIE_GENL_VERSION, NLM_F_DUMP);
	ret = nfg_genl_talk(h->g, nlh, sc_list_cb, &c, e);
	if (ret == -ECANCELED && c.ret < 0)
		return c.ret;
	return ret;
}

static int sc_entry_req(struct nfg_sc *h, uint8_t cmd, const struct nfg_sc_entry *ent,
			struct nfg_err *e)
{
	struct nlmsghdr *nlh;

	nlh = nfg_genl_msg(h->g, cmd, NFG_SYNCOOKIE_GENL_VERSION, NLM_F_ACK);
	mnl_attr_put(nlh, NFG_SC_A_ADDR, ent->family == NFPROTO_IPV6 ? 16 : 4, ent->addr);
	if (ent->prefix)
		mnl_attr_put_u8(nlh, NFG_SC_A_PREFIX, ent->prefix);
	if (cmd == NFG_SC_CMD_AL_ADD && ent->timeout)
		mnl_attr_put_u32(nlh, NFG_SC_A_TIMEOUT, ent->timeout);
	return nfg_genl_talk(h->g, nlh, NULL, NULL, e);
}

int nfg_sc_add(struct nfg_sc *h, const struct nfg_sc_entry *ent, struct nfg_err *e)
{
	return sc_entry_req(h, NFG_SC_CMD_AL_ADD, ent, e);
}

int nfg_sc_del(struct nfg_sc *h, const struct nfg_sc_entry *ent, struct nfg_err *e)
{
	return sc_entry_req(h, NFG_SC_CMD_AL_DEL, ent, e);
}

static int sc_flush_cb(const struct nlmsghdr *nlh, void *data)
{
	struct sc_tb tb;

	memset(&tb, 0, sizeof(tb));
	if (mnl_attr_parse(nlh, GENL_HDRLEN, sc_attr_cb, &tb) < 0)
		return MNL_CB_ERROR;
	*(uint32_t *)data = sc_u32(&tb, NFG_SC_A_COUNT);
	return MNL_CB_OK;
}

int nfg_sc_flush(struct nfg_sc *h, uint32_t *removed, struct nfg_err *e)
{
	struct nlmsghdr *nlh;
	uint32_t n = 0;
	int ret;

	nlh = nfg_genl_msg(h->g, NFG_SC_CMD_AL_FLUSH, NFG_SYNCOOKIE_GENL_VERSION, NLM_F_ACK);
	ret = nfg_genl_talk(h->g, nlh, sc_flush_cb, &n, e);
	if (removed)
		*removed = n;
	return ret;
}

int nfg_sc_secret_set(struct nfg_sc *h, const uint8_t key[16], struct nfg_err *e)
{
	struct nlmsghdr *nlh;

	nlh = nfg_genl_msg(h->g, NFG_SC_CMD_SECRET_SET, NFG_SYNCOOKIE_GENL_VERSION, NLM_F_ACK);
	mnl_attr_put(nlh, NFG_SC_A_SECRET, NFG_SC_SECRET_LEN, key);
	return nfg_genl_talk(h->g, nlh, NULL, NULL, e);
}

int nfg_sc_secret_rotate(struct nfg_sc *h, struct nfg_err *e)
{
	struct nlmsghdr *nlh;

	nlh = nfg_genl_msg(h->g, NFG_SC_CMD_SECRET_ROTATE, NFG_SYNCOOKIE_GENL_VERSION, NLM_F_ACK);
	return nfg_genl_talk(h->g, nlh, NULL, NULL, e);
}
