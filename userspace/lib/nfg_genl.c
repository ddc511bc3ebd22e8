// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: generic netlink client (libmnl) with extended-ack errors.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nfg_genl.h"

/*
 * Request buffer: an attribute nest (one batch of elements) is at most
 * 64 KiB (nla_len is 16 bits), plus headers and a name.
 */
#define NFG_GENL_SNDBUF	(72 * 1024)
/*
 * Reply buffer: the kernel sizes dump skbs by our receive size but caps
 * them at 32 KiB; acks are capped (NETLINK_CAP_ACK). 64 KiB is ample.
 */
#define NFG_GENL_RCVBUF	(64 * 1024)
/*
 * Largest request nfg_genl_reserve() prepares: an add/del of a whole
 * default-sized (1M ranges) IPv6 set is about 44 MiB.
 */
#define NFG_GENL_MAX_REQUEST	(64UL * 1024 * 1024)

struct nfg_genl {
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
	uint16_t family_id;
	uint32_t version;
	size_t sndbuf;		/* SO_SNDBUF as reported by the kernel */
	size_t want_sndbuf;	/* what nfg_genl_reserve() asked for */
	size_t bufsize;		/* size of buf */
	char *buf;		/* request */
	char *rbuf;		/* replies */
};

void nfg_err_clear(struct nfg_err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->kernel_msg = false;
	e->msg[0] = '\0';
}

int nfg_err_set(struct nfg_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (code < 0)
		code = -code;
	if (e) {
		e->code = code;
		e->kernel_msg = false;
		e->msg[0] = '\0';
		if (fmt) {
			va_start(ap, fmt);
			vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
			va_end(ap);
		}
	}
	return -code;
}

const char *nfg_err_str(const struct nfg_err *e)
{
	if (e->msg[0])
		return e->msg;
	return strerror(e->code ? e->code : EIO);
}

/* Re-read the send buffer size the kernel granted. */
static void sndbuf_read(struct nfg_genl *g)
{
	socklen_t len;
	int sz = 0;

	len = sizeof(sz);
	if (getsockopt(mnl_socket_get_fd(g->nl), SOL_SOCKET, SO_SNDBUF, &sz,
		       &len) < 0 || sz <= 0)
		sz = 0;
	g->sndbuf = (size_t)sz;
}

/*
 * Ask for a send buffer of @bytes: SO_SNDBUFFORCE (CAP_NET_ADMIN in the
 * initial user namespace) goes past net.core.wmem_max, SO_SNDBUF up to it.
 * The kernel doubles the value it stores; what it granted is read back.
 */
static void sndbuf_grow(struct nfg_genl *g, size_t bytes)
{
	int fd = mnl_socket_get_fd(g->nl);
	int val = bytes > INT_MAX / 2 ? INT_MAX / 2 : (int)bytes;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &val, sizeof(val)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &val, sizeof(val));
	sndbuf_read(g);
}

/* (Re)open the socket with our options. Returns 0 or -errno. */
static int sock_open(struct nfg_genl *g)
{
	int one = 1;

	g->nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!g->nl)
		return -errno;
	if (mnl_socket_bind(g->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	g->portid = mnl_socket_get_portid(g->nl);
	/* Both exist since 4.12 (EXT_ACK) / 4.3 (CAP_ACK); ignore failures. */
	mnl_socket_setsockopt(g->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(g->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	sndbuf_read(g);
	if (g->want_sndbuf > g->sndbuf)
		sndbuf_grow(g, g->want_sndbuf);
	return 0;
fail:
	{
		int err = errno;

		mnl_socket_close(g->nl);
		g->nl = NULL;
		return -err;
	}
}

/*
 * After an aborted exchange the socket may still hold the rest of a dump:
 * replace it so the next request starts clean.
 */
static void sock_reset(struct nfg_genl *g)
{
	if (g->nl)
		mnl_socket_close(g->nl);
	g->nl = NULL;
	sock_open(g);
}

struct talk_ctx {
	mnl_cb_t cb;
	void *data;
	struct nfg_err *e;
	bool err_set;		/* the kernel answered with an error */
	int code;		/* its errno (positive) */
	bool cb_abort;		/* the user callback asked to stop */
};

struct extack {
	const char *msg;
	uint32_t miss_type;
	uint32_t offs;
	bool has_miss, has_offs;
};

static int extack_attr_cb(const struct nlattr *a, void *data)
{
	struct extack *x = data;

	switch (mnl_attr_get_type(a)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			x->msg = mnl_attr_get_str(a);
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0) {
			x->offs = mnl_attr_get_u32(a);
			x->has_offs = true;
		}
		break;
	case NLMSGERR_ATTR_MISS_TYPE:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0) {
			x->miss_type = mnl_attr_get_u32(a);
			x->has_miss = true;
		}
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

/* Fill e from an error (NLMSG_ERROR or NLMSG_DONE) whose TLVs start at off. */
static void set_kernel_err(struct talk_ctx *c, const struct nlmsghdr *nlh,
			   size_t off, int code)
{
	struct extack x = { 0 };
	size_t plen = mnl_nlmsg_get_payload_len(nlh);

	nfg_err_set(c->e, code, NULL);
	if (code == EPERM && c->e)
		snprintf(c->e->msg, sizeof(c->e->msg),
			 "%s (CAP_NET_ADMIN in the network namespace is required)",
			 strerror(code));
	c->err_set = true;
	c->code = code;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= plen)
		return;
	mnl_attr_parse_payload((const char *)mnl_nlmsg_get_payload(nlh) + off,
			       plen - off, extack_attr_cb, &x);
	if (!c->e)
		return;
	if (x.msg && x.msg[0]) {
		snprintf(c->e->msg, sizeof(c->e->msg), "%s", x.msg);
		c->e->kernel_msg = true;
	} else if (x.has_miss) {
		snprintf(c->e->msg, sizeof(c->e->msg),
			 "%s (kernel: missing attribute %u)", strerror(code),
			 x.miss_type);
	} else if (x.has_offs) {
		snprintf(c->e->msg, sizeof(c->e->msg),
			 "%s (kernel: bad attribute at offset %u)",
			 strerror(code), x.offs);
	}
}

static int ctl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk_ctx *c = data;
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	size_t off;
	int code;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (err->error == 0)
		return MNL_CB_STOP;	/* the ack */
	code = err->error < 0 ? -err->error : err->error;
	if (nlh->nlmsg_flags & NLM_F_CAPPED)
		off = sizeof(*err);
	else
		off = sizeof(*err) + (err->msg.nlmsg_len > NLMSG_HDRLEN ?
				      err->msg.nlmsg_len - NLMSG_HDRLEN : 0);
	set_kernel_err(c, nlh, MNL_ALIGN(off), code);
	errno = code;
	return MNL_CB_ERROR;
}

static int ctl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk_ctx *c = data;
	int code = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int))
		memcpy(&code, mnl_nlmsg_get_payload(nlh), sizeof(int));
	if (code == 0)
		return MNL_CB_STOP;
	code = code < 0 ? -code : code;
	set_kernel_err(c, nlh, MNL_ALIGN(sizeof(int)), code);
	errno = code;
	return MNL_CB_ERROR;
}

static int ctl_noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int ctl_overrun_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	errno = ENOBUFS;
	return MNL_CB_ERROR;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct talk_ctx *c = data;
	int ret;

	if (!c->cb)
		return MNL_CB_OK;
	ret = c->cb(nlh, c->data);
	if (ret <= MNL_CB_ERROR) {
		c->cb_abort = true;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP] = ctl_noop_cb,
	[NLMSG_ERROR] = ctl_error_cb,
	[NLMSG_DONE] = ctl_done_cb,
	[NLMSG_OVERRUN] = ctl_overrun_cb,
};

int nfg_genl_talk(struct nfg_genl *g, struct nlmsghdr *nlh, mnl_cb_t cb,
		  void *data, struct nfg_err *e)
{
	struct talk_ctx c = { .cb = cb, .data = data, .e = e };
	uint32_t seq;
	ssize_t n;
	int ret;

	nfg_err_clear(e);
	if (!g->nl) {
		sock_reset(g);
		if (!g->nl)
			return nfg_err_set(e, errno ? errno : EIO,
					   "cannot open a netlink socket: %s",
					   strerror(errno ? errno : EIO));
	}
	seq = ++g->seq;
	if (seq == 0)
		seq = g->seq = 1;
	nlh->nlmsg_seq = seq;

	if (mnl_socket_sendto(g->nl, nlh, nlh->nlmsg_len) < 0) {
		int err = errno;

		if (err == EMSGSIZE)
			return nfg_err_set(e, err,
					   "request of %u bytes is too large for the socket buffer",
					   nlh->nlmsg_len);
		return nfg_err_set(e, err, "netlink send: %s", strerror(err));
	}
	for (;;) {
		n = mnl_socket_recvfrom(g->nl, g->rbuf, NFG_GENL_RCVBUF);
		if (n < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			sock_reset(g);
			return nfg_err_set(e, err, "netlink receive: %s",
					   strerror(err));
		}
		ret = mnl_cb_run2(g->rbuf, (size_t)n, seq, g->portid, data_cb,
				  &c, ctl_cbs, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret == MNL_CB_ERROR) {
			int err = errno;

			if (c.err_set)		/* an error from the kernel: done */
				return -c.code;
			/* Anything else may leave a dump half-read. */
			sock_reset(g);
			if (c.cb_abort) {
				if (e && e->code)
					return -e->code;
				return nfg_err_set(e, ECANCELED, NULL);
			}
			if (err == EINTR)
				return nfg_err_set(e, EINTR,
						   "dump interrupted by a concurrent change, try again");
			if (err == ESRCH)
				return nfg_err_set(e, EPROTO,
						   "unexpected netlink reply (sequence mismatch)");
			return nfg_err_set(e, err ? err : EPROTO,
					   "bad netlink reply: %s",
					   strerror(err ? err : EPROTO));
		}
	}
}

struct nlmsghdr *nfg_genl_msg(struct nfg_genl *g, uint8_t cmd,
			      uint8_t version, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(g->buf);
	struct genlmsghdr *gh;

	nlh->nlmsg_type = g->family_id;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = version;
	return nlh;
}

size_t nfg_genl_bufsize(const struct nfg_genl *g)
{
	return g->bufsize;
}

int nfg_genl_reserve(struct nfg_genl *g, size_t bytes)
{
	char *nb;

	if (bytes > NFG_GENL_MAX_REQUEST)
		return -EMSGSIZE;
	if (!g->nl)
		sock_reset(g);
	if (!g->nl)
		return -(errno ? errno : EIO);
	if (bytes > g->bufsize) {
		nb = realloc(g->buf, bytes);
		if (!nb)
			return -ENOMEM;
		g->buf = nb;
		g->bufsize = bytes;
	}
	/* netlink_sendmsg() refuses len > sk_sndbuf - 32 with EMSGSIZE. */
	if (g->sndbuf < bytes + 64) {
		g->want_sndbuf = bytes + 64;
		sndbuf_grow(g, bytes + 64);
	}
	return nfg_genl_max_msg(g) >= bytes ? 0 : -EMSGSIZE;
}

size_t nfg_genl_max_msg(const struct nfg_genl *g)
{
	size_t max = g->bufsize;

	/* netlink_sendmsg() refuses len > sk_sndbuf - 32 with EMSGSIZE. */
	if (g->sndbuf > 64 && g->sndbuf - 64 < max)
		max = g->sndbuf - 64;
	return max;
}

uint16_t nfg_genl_family_id(const struct nfg_genl *g)
{
	return g->family_id;
}

uint32_t nfg_genl_family_version(const struct nfg_genl *g)
{
	return g->version;
}

struct family_reply {
	uint16_t id;
	uint32_t version;
	bool found;
};

static int family_attr_cb(const struct nlattr *a, void *data)
{
	struct family_reply *r = data;

	switch (mnl_attr_get_type(a)) {
	case CTRL_ATTR_FAMILY_ID:
		if (mnl_attr_validate(a, MNL_TYPE_U16) >= 0) {
			r->id = mnl_attr_get_u16(a);
			r->found = true;
		}
		break;
	case CTRL_ATTR_VERSION:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			r->version = mnl_attr_get_u32(a);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, GENL_HDRLEN, family_attr_cb, data);
	return MNL_CB_OK;
}

/* A handle talking to nlctrl (family id GENL_ID_CTRL), or NULL with e set. */
static struct nfg_genl *genl_alloc(struct nfg_err *e)
{
	struct nfg_genl *g;
	int ret;

	nfg_err_clear(e);
	g = calloc(1, sizeof(*g));
	if (!g)
		goto nomem;
	g->buf = malloc(NFG_GENL_SNDBUF);
	g->bufsize = NFG_GENL_SNDBUF;
	g->rbuf = malloc(NFG_GENL_RCVBUF);
	if (!g->buf || !g->rbuf)
		goto nomem;
	g->seq = (uint32_t)time(NULL);
	ret = sock_open(g);
	if (ret < 0) {
		nfg_err_set(e, ret, "cannot open a generic netlink socket: %s",
			    strerror(-ret));
		goto fail;
	}
	g->family_id = GENL_ID_CTRL;
	return g;

nomem:
	nfg_err_set(e, ENOMEM, NULL);
fail:
	nfg_genl_close(g);
	return NULL;
}

struct nfg_genl *nfg_genl_open(const char *family_name, struct nfg_err *e)
{
	struct family_reply r = { 0 };
	struct nfg_genl *g;
	struct nlmsghdr *nlh;
	int ret;

	g = genl_alloc(e);
	if (!g)
		return NULL;
	nlh = nfg_genl_msg(g, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, family_name);
	ret = nfg_genl_talk(g, nlh, family_cb, &r, e);
	if (ret == -ENOENT || (ret == 0 && !r.found)) {
		nfg_err_set(e, ENOENT,
			    "generic netlink family \"%s\" not found (kernel module not loaded?)",
			    family_name);
		goto fail;
	}
	if (ret < 0)
		goto fail;
	g->family_id = r.id;
	g->version = r.version;
	return g;

fail:
	nfg_genl_close(g);
	return NULL;
}

struct family_seen {
	const char *name;
	bool found;
};

static int family_name_attr_cb(const struct nlattr *a, void *data)
{
	struct family_seen *s = data;

	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_NAME &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0 &&
	    !strcmp(mnl_attr_get_str(a), s->name))
		s->found = true;
	return MNL_CB_OK;
}

static int family_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, GENL_HDRLEN, family_name_attr_cb, data);
	return MNL_CB_OK;
}

int nfg_genl_family_loaded(const char *family_name, struct nfg_err *e)
{
	struct family_seen s = { .name = family_name };
	struct nfg_err local;
	struct nfg_genl *g;
	struct nlmsghdr *nlh;
	int ret;

	if (!e)
		e = &local;
	g = genl_alloc(e);
	if (!g)
		return -e->code;
	/* A dump: unlike CTRL_CMD_GETFAMILY by name, no request_module(). */
	nlh = nfg_genl_msg(g, CTRL_CMD_GETFAMILY, 1, NLM_F_DUMP);
	ret = nfg_genl_talk(g, nlh, family_dump_cb, &s, e);
	nfg_genl_close(g);
	if (ret < 0)
		return ret;
	return s.found ? 1 : 0;
}

void nfg_genl_close(struct nfg_genl *g)
{
	if (!g)
		return;
	if (g->nl)
		mnl_socket_close(g->nl);
	free(g->buf);
	free(g->rbuf);
	free(g);
}

struct parse_ctx {
	const enum mnl_attr_data_type *types;
	uint16_t maxtype;
	const struct nlattr **tb;
	bool bad;
};

static int parse_attr_cb(const struct nlattr *attr, void *data)
{
	struct parse_ctx *c = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (type > c->maxtype || c->types[type] == MNL_TYPE_UNSPEC)
		return MNL_CB_OK;	/* newer kernel: ignore */
	if (mnl_attr_validate(attr, c->types[type]) < 0) {
		c->bad = true;
		return MNL_CB_OK;
	}
	c->tb[type] = attr;
	return MNL_CB_OK;
}

int nfg_genl_parse(const struct nlmsghdr *nlh,
		   const enum mnl_attr_data_type *types, uint16_t maxtype,
		   const struct nlattr **tb)
{
	struct parse_ctx c = { types, maxtype, tb, false };

	memset(tb, 0, (maxtype + 1u) * sizeof(*tb));
	if (mnl_attr_parse(nlh, GENL_HDRLEN, parse_attr_cb, &c) < 0 || c.bad)
		return -1;
	return 0;
}
