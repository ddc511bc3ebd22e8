// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: RTCACHE control plane client (see libnfguard.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfguard_genl.h>

#include "libnfguard.h"
#include "nfg_genl.h"

struct nfg_rtc {
	struct nfg_genl *g;
};

struct nfg_rtc *nfg_rtc_open(struct nfg_err *e)
{
	struct nfg_rtc *h = calloc(1, sizeof(*h));

	if (!h) {
		nfg_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	h->g = nfg_genl_open(NFG_RTCACHE_GENL_NAME, e);
	if (!h->g) {
		free(h);
		return NULL;
	}
	return h;
}

void nfg_rtc_close(struct nfg_rtc *h)
{
	if (!h)
		return;
	nfg_genl_close(h->g);
	free(h);
}

struct rtc_tb {
	const struct nlattr *a[NFG_RTC_A_MAX + 1];
};

/* What each reply attribute must look like (MNL_TYPE_UNSPEC: ignored). */
static const enum mnl_attr_data_type rtc_types[NFG_RTC_A_MAX + 1] = {
	[NFG_RTC_A_FAMILY] = MNL_TYPE_U8,
	[NFG_RTC_A_DIR] = MNL_TYPE_U8,
	[NFG_RTC_A_DSCP] = MNL_TYPE_U8,
	[NFG_RTC_A_IIF] = MNL_TYPE_U32,
	[NFG_RTC_A_OIF] = MNL_TYPE_U32,
	[NFG_RTC_A_MARK] = MNL_TYPE_U32,
	[NFG_RTC_A_AGE_MS] = MNL_TYPE_U32,
	[NFG_RTC_A_IDLE_MS] = MNL_TYPE_U32,
	[NFG_RTC_A_COUNT] = MNL_TYPE_U32,
	[NFG_RTC_A_MAX_ENTRIES] = MNL_TYPE_U32,
	[NFG_RTC_A_HIT] = MNL_TYPE_U64,
	[NFG_RTC_A_MISS] = MNL_TYPE_U64,
	[NFG_RTC_A_LEARN] = MNL_TYPE_U64,
	[NFG_RTC_A_INVALID] = MNL_TYPE_U64,
	[NFG_RTC_A_EVICT] = MNL_TYPE_U64,
	[NFG_RTC_A_SRC] = MNL_TYPE_BINARY,
	[NFG_RTC_A_DST] = MNL_TYPE_BINARY,
};

static int bad_reply(struct nfg_err *e)
{
	nfg_err_set(e, EPROTO,
		    "malformed reply from the kernel (nfg_rtcache ABI mismatch?)");
	return MNL_CB_ERROR;
}

static int parse(const struct nlmsghdr *nlh, struct rtc_tb *tb)
{
	return nfg_genl_parse(nlh, rtc_types, NFG_RTC_A_MAX, tb->a);
}

static uint64_t u64_or0(const struct rtc_tb *tb, int t)
{
	return tb->a[t] ? mnl_attr_get_u64(tb->a[t]) : 0;
}

static uint32_t u32_or0(const struct rtc_tb *tb, int t)
{
	return tb->a[t] ? mnl_attr_get_u32(tb->a[t]) : 0;
}

struct rtc_ctx {
	struct nfg_err *e;
	struct nfg_rtc_stats *s;
	nfg_rtc_cb cb;
	void *data;
	uint32_t count;
	bool got;
};

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rtc_ctx *c = data;
	struct rtc_tb tb;

	if (parse(nlh, &tb) || !tb.a[NFG_RTC_A_COUNT])
		return bad_reply(c->e);
	c->s->entries = u32_or0(&tb, NFG_RTC_A_COUNT);
	c->s->max_entries = u32_or0(&tb, NFG_RTC_A_MAX_ENTRIES);
	c->s->hit = u64_or0(&tb, NFG_RTC_A_HIT);
	c->s->miss = u64_or0(&tb, NFG_RTC_A_MISS);
	c->s->learn = u64_or0(&tb, NFG_RTC_A_LEARN);
	c->s->invalid = u64_or0(&tb, NFG_RTC_A_INVALID);
	c->s->evict = u64_or0(&tb, NFG_RTC_A_EVICT);
	c->got = true;
	return MNL_CB_OK;
}

int nfg_rtc_stats(struct nfg_rtc *h, struct nfg_rtc_stats *s, struct nfg_err *e)
{
	struct rtc_ctx c = { .e = e, .s = s };
	struct nlmsghdr *nlh;
	int ret;

	nfg_err_clear(e);
	memset(s, 0, sizeof(*s));
	nlh = nfg_genl_msg(h->g, NFG_RTC_CMD_STATS, NFG_RTCACHE_GENL_VERSION,
			   NLM_F_ACK);
	ret = nfg_genl_talk(h->g, nlh, stats_cb, &c, e);
	if (!ret && !c.got)
		return nfg_err_set(e, EPROTO, "no statistics in the kernel's reply");
	return ret;
}

static int list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rtc_ctx *c = data;
	struct nfg_rtc_route r;
	struct rtc_tb tb;
	unsigned int alen;

	if (parse(nlh, &tb) || !tb.a[NFG_RTC_A_FAMILY] ||
	    !tb.a[NFG_RTC_A_SRC] || !tb.a[NFG_RTC_A_DST])
		return bad_reply(c->e);
	memset(&r, 0, sizeof(r));
	r.family = mnl_attr_get_u8(tb.a[NFG_RTC_A_FAMILY]);
	alen = r.family == NFPROTO_IPV6 ? 16 : 4;
	if (mnl_attr_get_payload_len(tb.a[NFG_RTC_A_SRC]) != alen ||
	    mnl_attr_get_payload_len(tb.a[NFG_RTC_A_DST]) != alen)
		return bad_reply(c->e);
	memcpy(r.src, mnl_attr_get_payload(tb.a[NFG_RTC_A_SRC]), alen);
	memcpy(r.dst, mnl_attr_get_payload(tb.a[NFG_RTC_A_DST]), alen);
	r.dir = tb.a[NFG_RTC_A_DIR] ? mnl_attr_get_u8(tb.a[NFG_RTC_A_DIR]) : 0;
	r.dscp = tb.a[NFG_RTC_A_DSCP] ? mnl_attr_get_u8(tb.a[NFG_RTC_A_DSCP]) : 0;
	r.iif = u32_or0(&tb, NFG_RTC_A_IIF);
	r.oif = u32_or0(&tb, NFG_RTC_A_OIF);
	r.mark = u32_or0(&tb, NFG_RTC_A_MARK);
	r.age_ms = u32_or0(&tb, NFG_RTC_A_AGE_MS);
	r.idle_ms = u32_or0(&tb, NFG_RTC_A_IDLE_MS);
	return c->cb(&r, c->data) ? MNL_CB_ERROR : MNL_CB_OK;
}

int nfg_rtc_list(struct nfg_rtc *h, nfg_rtc_cb cb, void *data, struct nfg_err *e)
{
	struct rtc_ctx c = { .e = e, .cb = cb, .data = data };
	struct nlmsghdr *nlh;

	nfg_err_clear(e);
	nlh = nfg_genl_msg(h->g, NFG_RTC_CMD_LIST, NFG_RTCACHE_GENL_VERSION,
			   NLM_F_DUMP);
	return nfg_genl_talk(h->g, nlh, list_cb, &c, e);
}

static int flush_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rtc_ctx *c = data;
	struct rtc_tb tb;

	if (parse(nlh, &tb) || !tb.a[NFG_RTC_A_COUNT])
		return bad_reply(c->e);
	c->count = mnl_attr_get_u32(tb.a[NFG_RTC_A_COUNT]);
	c->got = true;
	return MNL_CB_OK;
}

int nfg_rtc_flush(struct nfg_rtc *h, uint8_t family, uint32_t *dropped,
		  struct nfg_err *e)
{
	struct rtc_ctx c = { .e = e };
	struct nlmsghdr *nlh;
	int ret;

	nfg_err_clear(e);
	nlh = nfg_genl_msg(h->g, NFG_RTC_CMD_FLUSH, NFG_RTCACHE_GENL_VERSION,
			   NLM_F_ACK);
	if (family)
		mnl_attr_put_u8(nlh, NFG_RTC_A_FAMILY, family);
	ret = nfg_genl_talk(h->g, nlh, flush_cb, &c, e);
	if (!ret && !c.got)
		return nfg_err_set(e, EPROTO, "no count in the kernel's reply");
	if (dropped)
		*dropped = c.count;
	return ret;
}
