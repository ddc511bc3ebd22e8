// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: nfguard_rangeset generic netlink client.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_rangeset.h>

#include "libnfguard.h"
#include "nfg_addr.h"
#include "nfg_genl.h"
#include "nfg_lib.h"
#include "nfg_rsfile.h"

_Static_assert(NFG_RS_NAMELEN == XT_RANGESET_MAXNAMELEN,
	       "public set name length is the match's");

struct nfg_rs {
	struct nfg_genl *g;
	size_t batch;		/* requested elements per request */
	bool batch_set;		/* nfg_rs_set_batch() chose it: always split */
};

/* Which operation failed, to pick a message when the kernel gave none. */
enum rs_op {
	OP_CREATE, OP_DESTROY, OP_ADD, OP_DEL, OP_FLUSH, OP_TEST, OP_SWAP,
	OP_RENAME, OP_LIST,
};

static void default_msg(struct nfg_err *e, enum rs_op op, const char *a,
			const char *b)
{
	if (!e || e->msg[0])
		return;
	switch (e->code) {
	case ENOENT:
		if (op == OP_SWAP)
			snprintf(e->msg, sizeof(e->msg),
				 "set \"%s\" or \"%s\" does not exist", a, b);
		else
			snprintf(e->msg, sizeof(e->msg),
				 "set \"%s\" does not exist", a);
		break;
	case EEXIST:
		snprintf(e->msg, sizeof(e->msg), "set \"%s\" already exists",
			 op == OP_RENAME ? b : a);
		break;
	case EBUSY:
		snprintf(e->msg, sizeof(e->msg),
			 "set \"%s\" is in use by iptables rules", a);
		break;
	case ENOSPC:
		snprintf(e->msg, sizeof(e->msg),
			 "set \"%s\" would exceed its maxelem; the request was not applied",
			 a);
		break;
	case EPERM:
		snprintf(e->msg, sizeof(e->msg),
			 "permission denied (CAP_NET_ADMIN in the network namespace is required)");
		break;
	case EINVAL:
		if (op == OP_SWAP)
			snprintf(e->msg, sizeof(e->msg),
				 "sets \"%s\" and \"%s\" cannot be swapped (different families?)",
				 a, b);
		break;
	default:
		break;
	}
}

struct nfg_rs *nfg_rs_open(struct nfg_err *e)
{
	struct nfg_rs *h;

	h = calloc(1, sizeof(*h));
	if (!h) {
		nfg_err_set(e, ENOMEM, NULL);
		return NULL;
	}
	h->batch = NFG_RS_BATCH_DEFAULT;
	h->g = nfg_genl_open(NFG_RANGESET_GENL_NAME, e);
	if (!h->g) {
		if (e && e->code == ENOENT)
			snprintf(e->msg, sizeof(e->msg),
				 "rangeset support is not available: kernel module xt_rangeset is not loaded (no generic netlink family %s)",
				 NFG_RANGESET_GENL_NAME);
		free(h);
		return NULL;
	}
	return h;
}

void nfg_rs_close(struct nfg_rs *h)
{
	if (!h)
		return;
	nfg_genl_close(h->g);
	free(h);
}

void nfg_rs_set_batch(struct nfg_rs *h, size_t elems)
{
	h->batch = elems ? elems : NFG_RS_BATCH_DEFAULT;
	h->batch_set = elems != 0;
}

/* Bytes of one ELEM nest: header + START + END attributes. */
static size_t elem_bytes(unsigned int alen)
{
	return MNL_ATTR_HDRLEN + 2 * (MNL_ATTR_HDRLEN + MNL_ALIGN(alen));
}

/* nlmsghdr + genlmsghdr + NAME + ELEMS nest header, rounded up. */
#define RS_MSG_OVERHEAD	(MNL_NLMSG_HDRLEN + GENL_HDRLEN + \
			 MNL_ATTR_HDRLEN + MNL_ALIGN(XT_RANGESET_MAXNAMELEN) + \
			 MNL_ATTR_HDRLEN + 64)

size_t nfg_rs_batch_size(const struct nfg_rs *h, uint8_t family)
{
	unsigned int alen = nfg_addr_len(family) ? nfg_addr_len(family) : 16;
	size_t eb = elem_bytes(alen);
	size_t n = h->batch;
	size_t max_nest = (UINT16_MAX - MNL_ATTR_HDRLEN) / eb;
	size_t max_msg = nfg_genl_max_msg(h->g);

	max_msg = max_msg > RS_MSG_OVERHEAD ? (max_msg - RS_MSG_OVERHEAD) / eb : 1;
	if (n > max_nest)
		n = max_nest;
	if (n > max_msg)
		n = max_msg;
	return n ? n : 1;
}

int nfg_rs_name_check(const char *name, bool strict, struct nfg_err *e)
{
	char err[200];

	if (nfg_rs_name_valid(name, strict, err, sizeof(err)) < 0)
		return nfg_err_set(e, EINVAL, "%s", err);
	return 0;
}

/* ---- simple doits ------------------------------------------------------- */

static struct nlmsghdr *rs_msg(struct nfg_rs *h, uint8_t cmd, uint16_t flags)
{
	return nfg_genl_msg(h->g, cmd, NFG_RANGESET_GENL_VERSION, flags);
}

static int name_ok(const char *name, struct nfg_err *e)
{
	return nfg_rs_name_check(name, false, e);
}

static int rs_simple(struct nfg_rs *h, enum rs_op op, uint8_t cmd,
		     const char *a, const char *b, struct nfg_err *e)
{
	struct nlmsghdr *nlh;
	int ret;

	if ((ret = name_ok(a, e)) < 0 || (b && (ret = name_ok(b, e)) < 0))
		return ret;
	nlh = rs_msg(h, cmd, NLM_F_ACK);
	mnl_attr_put_strz(nlh, NFG_RS_A_NAME, a);
	if (b)
		mnl_attr_put_strz(nlh, NFG_RS_A_NAME2, b);
	ret = nfg_genl_talk(h->g, nlh, NULL, NULL, e);
	if (ret < 0)
		default_msg(e, op, a, b);
	return ret;
}

int nfg_rs_create(struct nfg_rs *h, const char *name, uint8_t family,
		  uint32_t maxelem, struct nfg_err *e)
{
	return nfg_rs_create_timeout(h, name, family, maxelem, 0, e);
}

int nfg_rs_create_timeout(struct nfg_rs *h, const char *name, uint8_t family,
			  uint32_t maxelem, uint32_t timeout, struct nfg_err *e)
{
	struct nlmsghdr *nlh;
	int ret;

	if ((ret = name_ok(name, e)) < 0)
		return ret;
	if (!nfg_addr_len(family))
		return nfg_err_set(e, EINVAL, "bad family %u", family);
	nlh = rs_msg(h, NFG_RS_CMD_CREATE, NLM_F_ACK);
	mnl_attr_put_strz(nlh, NFG_RS_A_NAME, name);
	mnl_attr_put_u8(nlh, NFG_RS_A_FAMILY, family);
	if (timeout > NFG_RS_TIMEOUT_MAX)
		return nfg_err_set(e, EINVAL,
				   "timeout must be a number of seconds from 0 to %u",
				   NFG_RS_TIMEOUT_MAX);
	if (maxelem)
		mnl_attr_put_u32(nlh, NFG_RS_A_MAXELEM, maxelem);
	/* only when asked for: kernels without timeouts keep working */
	if (timeout)
		mnl_attr_put_u32(nlh, NFG_RS_A_TIMEOUT, timeout);
	ret = nfg_genl_talk(h->g, nlh, NULL, NULL, e);
	if (ret < 0)
		default_msg(e, OP_CREATE, name, NULL);
	return ret;
}

int nfg_rs_destroy(struct nfg_rs *h, const char *name, struct nfg_err *e)
{
	return rs_simple(h, OP_DESTROY, NFG_RS_CMD_DESTROY, name, NULL, e);
}

int nfg_rs_flush(struct nfg_rs *h, const char *name, struct nfg_err *e)
{
	return rs_simple(h, OP_FLUSH, NFG_RS_CMD_FLUSH, name, NULL, e);
}

int nfg_rs_swap(struct nfg_rs *h, const char *a, const char *b,
		struct nfg_err *e)
{
	return rs_simple(h, OP_SWAP, NFG_RS_CMD_SWAP, a, b, e);
}

int nfg_rs_rename(struct nfg_rs *h, const char *from, const char *to,
		  struct nfg_err *e)
{
	return rs_simple(h, OP_RENAME, NFG_RS_CMD_RENAME, from, to, e);
}

/* ---- reply parsing ------------------------------------------------------ */

struct rs_tb {
	const struct nlattr *a[NFG_RS_A_MAX + 1];
};

/* What each reply attribute must look like (MNL_TYPE_UNSPEC: ignored). */
static const enum mnl_attr_data_type rs_types[NFG_RS_A_MAX + 1] = {
	[NFG_RS_A_NAME] = MNL_TYPE_NUL_STRING,
	[NFG_RS_A_NAME2] = MNL_TYPE_NUL_STRING,
	[NFG_RS_A_FAMILY] = MNL_TYPE_U8,
	[NFG_RS_A_RESULT] = MNL_TYPE_U8,
	[NFG_RS_A_MAXELEM] = MNL_TYPE_U32,
	[NFG_RS_A_COUNT] = MNL_TYPE_U32,
	[NFG_RS_A_REFS] = MNL_TYPE_U32,
	[NFG_RS_A_LOOKUPS] = MNL_TYPE_U64,
	[NFG_RS_A_HITS] = MNL_TYPE_U64,
	[NFG_RS_A_MEMSIZE] = MNL_TYPE_U64,
	[NFG_RS_A_TIMEOUT] = MNL_TYPE_U32,
	[NFG_RS_A_EXPIRIES] = MNL_TYPE_U64,
	[NFG_RS_A_DYN_COUNT] = MNL_TYPE_U32,
	[NFG_RS_A_PKT_ADDS] = MNL_TYPE_U64,
	[NFG_RS_A_PKT_DELS] = MNL_TYPE_U64,
	[NFG_RS_A_PKT_REFUSED] = MNL_TYPE_U64,
	[NFG_RS_A_ELEMS] = MNL_TYPE_NESTED,
	[NFG_RS_A_ELEM] = MNL_TYPE_NESTED,
};

static int rs_parse(const struct nlmsghdr *nlh, struct rs_tb *tb)
{
	return nfg_genl_parse(nlh, rs_types, NFG_RS_A_MAX, tb->a);
}

static int bad_reply(struct nfg_err *e)
{
	return nfg_err_set(e, EPROTO,
			   "malformed reply from the kernel (nfguard_rangeset ABI mismatch?)");
}

/* Header attributes -> info. Returns false if this is not a header. */
static bool rs_info(const struct rs_tb *tb, struct nfg_rs_info *o)
{
	if (!tb->a[NFG_RS_A_NAME] || !tb->a[NFG_RS_A_FAMILY])
		return false;
	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s",
		 mnl_attr_get_str(tb->a[NFG_RS_A_NAME]));
	o->family = mnl_attr_get_u8(tb->a[NFG_RS_A_FAMILY]);
	if (tb->a[NFG_RS_A_MAXELEM])
		o->maxelem = mnl_attr_get_u32(tb->a[NFG_RS_A_MAXELEM]);
	if (tb->a[NFG_RS_A_COUNT])
		o->count = mnl_attr_get_u32(tb->a[NFG_RS_A_COUNT]);
	if (tb->a[NFG_RS_A_REFS])
		o->refs = mnl_attr_get_u32(tb->a[NFG_RS_A_REFS]);
	if (tb->a[NFG_RS_A_LOOKUPS])
		o->lookups = mnl_attr_get_u64(tb->a[NFG_RS_A_LOOKUPS]);
	if (tb->a[NFG_RS_A_HITS])
		o->hits = mnl_attr_get_u64(tb->a[NFG_RS_A_HITS]);
	if (tb->a[NFG_RS_A_MEMSIZE])
		o->memsize = mnl_attr_get_u64(tb->a[NFG_RS_A_MEMSIZE]);
	return true;
}

/* Header attributes -> timeout facts (absent: an older kernel, zeros). */
static void rs_tinfo(const struct rs_tb *tb, struct nfg_rs_tinfo *o)
{
	memset(o, 0, sizeof(*o));
	if (tb->a[NFG_RS_A_TIMEOUT])
		o->timeout = mnl_attr_get_u32(tb->a[NFG_RS_A_TIMEOUT]);
	if (tb->a[NFG_RS_A_EXPIRIES])
		o->expiries = mnl_attr_get_u64(tb->a[NFG_RS_A_EXPIRIES]);
}

/* Header attributes -> packet-path counters (absent: zeros). */
static void rs_dinfo(const struct rs_tb *tb, struct nfg_rs_dinfo *o)
{
	memset(o, 0, sizeof(*o));
	if (tb->a[NFG_RS_A_DYN_COUNT])
		o->dynamic = mnl_attr_get_u32(tb->a[NFG_RS_A_DYN_COUNT]);
	if (tb->a[NFG_RS_A_PKT_ADDS])
		o->adds = mnl_attr_get_u64(tb->a[NFG_RS_A_PKT_ADDS]);
	if (tb->a[NFG_RS_A_PKT_DELS])
		o->dels = mnl_attr_get_u64(tb->a[NFG_RS_A_PKT_DELS]);
	if (tb->a[NFG_RS_A_PKT_REFUSED])
		o->refused = mnl_attr_get_u64(tb->a[NFG_RS_A_PKT_REFUSED]);
}

struct elem_tb {
	const struct nlattr *start, *end, *timeout;
};

static int elem_attr_cb(const struct nlattr *attr, void *data)
{
	struct elem_tb *t = data;

	switch (mnl_attr_get_type(attr)) {
	case NFG_RS_E_START:
		t->start = attr;
		break;
	case NFG_RS_E_END:
		t->end = attr;
		break;
	case NFG_RS_E_TIMEOUT:
		t->timeout = attr;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

/* One ELEM nest -> range and seconds left. Returns 0 or -1 (malformed). */
static int rs_elem(const struct nlattr *elem, struct nfg_range *r,
		   uint32_t *timeout)
{
	struct elem_tb t = { 0 };
	uint16_t len;

	if (mnl_attr_parse_nested(elem, elem_attr_cb, &t) < 0 ||
	    !t.start || !t.end)
		return -1;
	*timeout = 0;
	if (t.timeout) {
		if (mnl_attr_validate(t.timeout, MNL_TYPE_U32) < 0)
			return -1;
		*timeout = mnl_attr_get_u32(t.timeout);
	}
	len = mnl_attr_get_payload_len(t.start);
	if (len != mnl_attr_get_payload_len(t.end) || (len != 4 && len != 16))
		return -1;
	memset(r, 0, sizeof(*r));
	r->family = len == 4 ? NFPROTO_IPV4 : NFPROTO_IPV6;
	memcpy(r->start, mnl_attr_get_payload(t.start), len);
	memcpy(r->end, mnl_attr_get_payload(t.end), len);
	return 0;
}

/* ---- LIST --------------------------------------------------------------- */

struct get_ctx {
	struct nfg_rs_info *out;
	struct nfg_rs_tinfo *tout;	/* may be NULL */
	struct nfg_rs_dinfo *dout;	/* may be NULL */
	bool found;
	bool bad;
};

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct get_ctx *c = data;
	struct rs_tb tb;

	if (rs_parse(nlh, &tb) < 0) {
		c->bad = true;
		return MNL_CB_ERROR;
	}
	if (rs_info(&tb, c->out)) {
		if (c->tout)
			rs_tinfo(&tb, c->tout);
		if (c->dout)
			rs_dinfo(&tb, c->dout);
		c->found = true;
	}
	return MNL_CB_OK;
}

/* LIST doit: the header into *out, and the timeout facts into *tout. */
static int rs_get(struct nfg_rs *h, const char *name, struct nfg_rs_info *out,
		  struct nfg_rs_tinfo *tout, struct nfg_rs_dinfo *dout,
		  struct nfg_err *e)
{
	struct get_ctx c = { .out = out, .tout = tout, .dout = dout };
	struct nlmsghdr *nlh;
	int ret;

	if ((ret = name_ok(name, e)) < 0)
		return ret;
	nlh = rs_msg(h, NFG_RS_CMD_LIST, NLM_F_ACK);
	mnl_attr_put_strz(nlh, NFG_RS_A_NAME, name);
	ret = nfg_genl_talk(h->g, nlh, get_cb, &c, e);
	if (c.bad)
		return bad_reply(e);
	if (ret == 0 && !c.found)
		ret = nfg_err_set(e, EPROTO,
				  "kernel sent no description of set \"%s\"",
				  name);
	if (ret < 0)
		default_msg(e, OP_LIST, name, NULL);
	return ret;
}

int nfg_rs_get(struct nfg_rs *h, const char *name, struct nfg_rs_info *out,
	       struct nfg_err *e)
{
	return rs_get(h, name, out, NULL, NULL, e);
}

int nfg_rs_get_timeout(struct nfg_rs *h, const char *name,
		       struct nfg_rs_tinfo *out, struct nfg_err *e)
{
	struct nfg_rs_info info;

	return rs_get(h, name, &info, out, NULL, e);
}

int nfg_rs_get_dynamic(struct nfg_rs *h, const char *name,
		       struct nfg_rs_dinfo *out, struct nfg_err *e)
{
	struct nfg_rs_info info;

	return rs_get(h, name, &info, NULL, out, e);
}

struct list_ctx {
	nfg_rs_set_cb cb;
	void *data;
	int cbret;
	bool bad;
};

static int list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct list_ctx *c = data;
	struct nfg_rs_info info;
	struct rs_tb tb;

	if (rs_parse(nlh, &tb) < 0) {
		c->bad = true;
		return MNL_CB_ERROR;
	}
	if (!rs_info(&tb, &info))
		return MNL_CB_OK;
	c->cbret = c->cb(&info, c->data);
	return c->cbret ? MNL_CB_ERROR : MNL_CB_OK;
}

static int cb_result(int ret, int cbret, struct nfg_err *e)
{
	if (cbret) {
		if (cbret < 0)
			return nfg_err_set(e, -cbret, NULL);
		return nfg_err_set(e, ECANCELED, NULL);
	}
	return ret;
}

int nfg_rs_list(struct nfg_rs *h, nfg_rs_set_cb cb, void *data,
		struct nfg_err *e)
{
	struct list_ctx c = { .cb = cb, .data = data };
	struct nlmsghdr *nlh;
	int ret;

	nlh = rs_msg(h, NFG_RS_CMD_LIST, NLM_F_DUMP);
	ret = nfg_genl_talk(h->g, nlh, list_cb, &c, e);
	if (c.bad)
		return bad_reply(e);
	if (ret < 0 && !c.cbret)
		default_msg(e, OP_LIST, "", NULL);
	return cb_result(ret, c.cbret, e);
}

struct list_all_ctx {
	struct nfg_rs_info *s;
	size_t n, cap;
};

static int list_all_cb(const struct nfg_rs_info *set, void *data)
{
	struct list_all_ctx *c = data;

	return nfg_vec_push((void **)&c->s, &c->n, &c->cap, set, sizeof(*set));
}

static int info_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nfg_rs_info *)a)->name,
		      ((const struct nfg_rs_info *)b)->name);
}

int nfg_rs_list_all(struct nfg_rs *h, struct nfg_rs_info **sets, size_t *n,
		    struct nfg_err *e)
{
	struct list_all_ctx c = { 0 };
	int ret;

	*sets = NULL;
	*n = 0;
	ret = nfg_rs_list(h, list_all_cb, &c, e);
	if (ret < 0) {
		free(c.s);
		return ret;
	}
	if (c.n)
		qsort(c.s, c.n, sizeof(*c.s), info_cmp);
	*sets = c.s;
	*n = c.n;
	return 0;
}

struct dump_ctx {
	struct nfg_rs_info *hdr;
	struct nfg_rs_tinfo *thdr;
	nfg_rs_range_cb cb;
	nfg_rs_trange_cb tcb;
	void *data;
	int cbret;
	bool bad;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *c = data;
	const struct nlattr *pos;
	struct nfg_rs_info info;
	struct nfg_range r;
	uint32_t timeout;
	struct rs_tb tb;

	if (rs_parse(nlh, &tb) < 0) {
		c->bad = true;
		return MNL_CB_ERROR;
	}
	if (c->hdr)
		rs_info(&tb, c->hdr);
	if (c->thdr && rs_info(&tb, &info))
		rs_tinfo(&tb, c->thdr);
	if (!tb.a[NFG_RS_A_ELEMS])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(pos, tb.a[NFG_RS_A_ELEMS]) {
		if (mnl_attr_get_type(pos) != NFG_RS_A_ELEM)
			continue;
		if (rs_elem(pos, &r, &timeout) < 0) {
			c->bad = true;
			return MNL_CB_ERROR;
		}
		if (c->tcb)
			c->cbret = c->tcb(&r, timeout, c->data);
		else if (c->cb)
			c->cbret = c->cb(&r, c->data);
		if (c->cbret)
			return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int rs_dump(struct nfg_rs *h, const char *name, struct dump_ctx *cp,
		   struct nfg_err *e)
{
	struct dump_ctx c = *cp;
	struct nlmsghdr *nlh;
	int ret;

	if ((ret = name_ok(name, e)) < 0)
		return ret;
	if (c.hdr)
		memset(c.hdr, 0, sizeof(*c.hdr));
	if (c.thdr)
		memset(c.thdr, 0, sizeof(*c.thdr));
	nlh = rs_msg(h, NFG_RS_CMD_LIST, NLM_F_DUMP);
	mnl_attr_put_strz(nlh, NFG_RS_A_NAME, name);
	ret = nfg_genl_talk(h->g, nlh, dump_cb, &c, e);
	if (c.bad)
		return bad_reply(e);
	if (ret < 0 && !c.cbret)
		default_msg(e, OP_LIST, name, NULL);
	return cb_result(ret, c.cbret, e);
}

int nfg_rs_dump(struct nfg_rs *h, const char *name, struct nfg_rs_info *hdr,
		nfg_rs_range_cb cb, void *data, struct nfg_err *e)
{
	struct dump_ctx c = { .hdr = hdr, .cb = cb, .data = data };

	return rs_dump(h, name, &c, e);
}

int nfg_rs_dump_timeout(struct nfg_rs *h, const char *name,
			struct nfg_rs_info *hdr, struct nfg_rs_tinfo *thdr,
			nfg_rs_trange_cb cb, void *data, struct nfg_err *e)
{
	struct dump_ctx c = { .hdr = hdr, .thdr = thdr, .tcb = cb,
			      .data = data };

	return rs_dump(h, name, &c, e);
}

/* ---- elements ----------------------------------------------------------- */

/* @timeout: NFG_RS_TIMEOUT_SET sends none (the set's default). */
static void put_elem(struct nlmsghdr *nlh, const struct nfg_range *r,
		     uint32_t timeout)
{
	unsigned int alen = nfg_addr_len(r->family);
	struct nlattr *ne;

	ne = mnl_attr_nest_start(nlh, NFG_RS_A_ELEM);
	mnl_attr_put(nlh, NFG_RS_E_START, alen, r->start);
	mnl_attr_put(nlh, NFG_RS_E_END, alen, r->end);
	if (timeout != NFG_RS_TIMEOUT_SET)
		mnl_attr_put_u32(nlh, NFG_RS_E_TIMEOUT, timeout);
	mnl_attr_nest_end(nlh, ne);
}

struct test_ctx {
	int result;
	bool bad;
};

static int test_cb(const struct nlmsghdr *nlh, void *data)
{
	struct test_ctx *c = data;
	struct rs_tb tb;

	if (rs_parse(nlh, &tb) < 0) {
		c->bad = true;
		return MNL_CB_ERROR;
	}
	if (tb.a[NFG_RS_A_RESULT])
		c->result = mnl_attr_get_u8(tb.a[NFG_RS_A_RESULT]) ? 1 : 0;
	return MNL_CB_OK;
}

int nfg_rs_test(struct nfg_rs *h, const char *name,
		const struct nfg_range *r, bool *in, struct nfg_err *e)
{
	struct test_ctx c = { .result = -1 };
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	int ret;

	if ((ret = name_ok(name, e)) < 0)
		return ret;
	if (!nfg_addr_len(r->family))
		return nfg_err_set(e, EINVAL, "bad family %u", r->family);
	nlh = rs_msg(h, NFG_RS_CMD_TEST, NLM_F_ACK);
	mnl_attr_put_strz(nlh, NFG_RS_A_NAME, name);
	nest = mnl_attr_nest_start(nlh, NFG_RS_A_ELEMS);
	put_elem(nlh, r, NFG_RS_TIMEOUT_SET);
	mnl_attr_nest_end(nlh, nest);
	ret = nfg_genl_talk(h->g, nlh, test_cb, &c, e);
	if (c.bad)
		return bad_reply(e);
	if (ret < 0) {
		default_msg(e, OP_TEST, name, NULL);
		return ret;
	}
	if (c.result < 0)
		return nfg_err_set(e, EPROTO, "kernel sent no test result");
	*in = c.result;
	return 0;
}

static int rs_elems(struct nfg_rs *h, enum rs_op op, uint8_t cmd,
		    const char *name, struct nfg_range *r,
		    const uint32_t *tmo, size_t n, struct nfg_rs_batch *b,
		    struct nfg_err *e)
{
	size_t i, bs, per_nest, whole, eb;
	struct nfg_rs_batch dummy;
	uint8_t fam;
	int ret;

	if (!b)
		b = &dummy;
	memset(b, 0, sizeof(*b));
	nfg_err_clear(e);
	if ((ret = name_ok(name, e)) < 0)
		return ret;
	if (n == 0)
		return 0;
	fam = r[0].family;
	if (!nfg_addr_len(fam))
		return nfg_err_set(e, EINVAL, "bad family %u", fam);
	for (i = 0; i < n; i++) {
		if (r[i].family != fam)
			return nfg_err_set(e, EINVAL,
					   "IPv4 and IPv6 elements mixed in one batch");
		if (nfg_addr_cmp(r[i].start, r[i].end, nfg_addr_len(fam)) > 0)
			return nfg_err_set(e, EINVAL, "range with start > end");
		if (tmo && tmo[i] != NFG_RS_TIMEOUT_SET &&
		    tmo[i] > NFG_RS_TIMEOUT_MAX)
			return nfg_err_set(e, EINVAL,
					   "timeout must be a number of seconds from 0 to %u",
					   NFG_RS_TIMEOUT_MAX);
	}
	/* merging would lose the elements' own timeouts */
	if (!tmo)
		n = nfg_ranges_normalize(r, n);
	b->elems = n;
	/*
	 * One request for everything when the socket takes it: the kernel
	 * then applies the whole command or nothing. Only when the message
	 * cannot be sent (send buffer capped by wmem_max without
	 * CAP_NET_ADMIN, or over 64 MiB) is it split into requests of bs
	 * elements, each applied whole.
	 */
	eb = elem_bytes(nfg_addr_len(fam)) +
	     (tmo ? MNL_ATTR_HDRLEN + MNL_ALIGN(sizeof(uint32_t)) : 0);
	per_nest = (UINT16_MAX - MNL_ATTR_HDRLEN) / eb;
	whole = RS_MSG_OVERHEAD +
		(n + per_nest - 1) / per_nest * MNL_ATTR_HDRLEN + n * eb;
	if (!h->batch_set && nfg_genl_reserve(h->g, whole) == 0) {
		bs = n;
	} else {
		bs = nfg_rs_batch_size(h, fam);
		/* that counts elements without a timeout */
		if (tmo && !(bs = bs * elem_bytes(nfg_addr_len(fam)) / eb))
			bs = 1;
	}
	b->requests = (n + bs - 1) / bs;

	for (i = 0; i < n; i += bs) {
		size_t j, cnt = n - i < bs ? n - i : bs;
		struct nlmsghdr *nlh;
		struct nlattr *nest = NULL;

		nlh = rs_msg(h, cmd, NLM_F_ACK);
		mnl_attr_put_strz(nlh, NFG_RS_A_NAME, name);
		/* an attribute nest holds at most 64 KiB: several ELEMS */
		for (j = 0; j < cnt; j++) {
			if (j % per_nest == 0) {
				if (nest)
					mnl_attr_nest_end(nlh, nest);
				nest = mnl_attr_nest_start(nlh, NFG_RS_A_ELEMS);
			}
			put_elem(nlh, &r[i + j],
				 tmo ? tmo[i + j] : NFG_RS_TIMEOUT_SET);
		}
		mnl_attr_nest_end(nlh, nest);
		ret = nfg_genl_talk(h->g, nlh, NULL, NULL, e);
		if (ret < 0) {
			default_msg(e, op, name, NULL);
			return ret;
		}
		b->requests_done++;
		b->elems_done += cnt;
	}
	return 0;
}

int nfg_rs_add(struct nfg_rs *h, const char *name, struct nfg_range *r,
	       size_t n, struct nfg_rs_batch *b, struct nfg_err *e)
{
	return rs_elems(h, OP_ADD, NFG_RS_CMD_ADD, name, r, NULL, n, b, e);
}

int nfg_rs_add_timeout(struct nfg_rs *h, const char *name, struct nfg_range *r,
		       const uint32_t *timeouts, size_t n,
		       struct nfg_rs_batch *b, struct nfg_err *e)
{
	return rs_elems(h, OP_ADD, NFG_RS_CMD_ADD, name, r, timeouts, n, b, e);
}

int nfg_rs_del(struct nfg_rs *h, const char *name, struct nfg_range *r,
	       size_t n, struct nfg_rs_batch *b, struct nfg_err *e)
{
	return rs_elems(h, OP_DEL, NFG_RS_CMD_DEL, name, r, NULL, n, b, e);
}
