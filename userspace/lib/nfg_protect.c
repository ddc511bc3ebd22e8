// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: protection profiles (nfguard protect) as nftables rules,
 * installed in one atomic nf_tables batch through libnftnl, the extensions
 * reached through nft_compat with the encoders of nfg_nft.c.
 *
 * Where the rules live, per family (ip and ip6), and why:
 *  - nft_compat only finds our matches/targets for the family of the table:
 *    they are registered for NFPROTO_IPV4/IPV6, an inet table asks for
 *    NFPROTO_INET and gets ENOENT (checked on 6.1 and 6.12). Hence ip + ip6.
 *  - Everything lives in table "nfguard" of each family, which protect
 *    owns (comment OWNER): base chains at the priorities iptables gives its
 *    tables: blocklist at prerouting -310, syncookie at prerouting -300
 *    (raw's, before conntrack at -200), rtcache at forward -150 (mangle's),
 *    kconnlimit's input/forward at 0 (filter's). Nothing of ours is inside
 *    iptables-nft's raw/mangle tables, so an iptables-nft-restore of those
 *    leaves the profile alone (an nft user saves their own tables and the
 *    profile as --show prints it: stock nft cannot load xt expressions). The
 *    extensions accept an nft chain whatever its table is called (they
 *    check table names for legacy iptables only; SYNCOOKIE passes, and
 *    counts, packets that met conntrack first).
 *  - Upgrades: an older protect put SYNCOOKIE in raw "nfguard-syncookie"
 *    and RTCACHE in mangle "nfguard-rtcache" (a raw/mangle table it had to
 *    create carries the comment OWNER): plans remove those.
 *
 * Idempotent: the batch deletes what a previous protect installed (found by
 * a dump first) and adds the profile again, so protect twice lists the same
 * ruleset, and a profile without an option removes what that option added.
 * A table "nfguard" without the OWNER comment is the user's: never deleted.
 *
 * Trust: the batch carries the dump's generation id (a change in between
 * makes nf_tables refuse it with ERESTART: read again, retry), asks for no
 * ACK but errors, and success needs no error, no lost answer and a new
 * generation (nft_batch_send). Rendering, nfg_protect_check() and the CLI's
 * --show/--dry-run read the same text lines (one per operation, rules in
 * iptables syntax).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/gen.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <sys/socket.h>

#include "libnfguard.h"
#include "nfg_genl.h"
#include "nfg_lib.h"
#include "nfg_rsfile.h"

#define OWNER		"managed by nfguard protect"
#define T_OURS		"nfguard"
#define C_SC		"syncookie"	/* in T_OURS */
#define C_RTC		"rtcache"	/* in T_OURS */
#define C_SC_OLD	"nfguard-syncookie"	/* older protect: in raw */
#define C_RTC_OLD	"nfguard-rtcache"	/* older protect: in mangle */
#define MAX_PORTS	NFG_PROFILE_MAX_PORTS
#define MAX_KCL		NFG_PROFILE_MAX_KCL
#define MAX_BL		NFG_PROFILE_MAX_BL
#define FAM_IP		NFG_PROFILE_IP
#define FAM_IP6		NFG_PROFILE_IP6
/* attempts when the ruleset changes during a dump or between the dump and the batch */
#define GEN_TRIES	20

/* What a dump found of ours, per family. */
struct state {
	bool ours;			/* table nfguard, created by protect */
	bool foreign;			/* a table nfguard protect did not create */
	bool raw, mangle;		/* the tables exist */
	bool raw_owned, mangle_owned;	/* ... created by protect */
	bool sc_chain, rtc_chain;	/* an older protect's chains in them */
	unsigned int raw_chains, mangle_chains;	/* all chains in them */
};

static const uint8_t families[] = { NFPROTO_IPV4, NFPROTO_IPV6 };

static const char *fam_name(uint8_t f)
{
	return f == NFPROTO_IPV6 ? "ip6" : "ip";
}

static uint8_t nfg_fam(uint8_t f)
{
	return f == NFPROTO_IPV6 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4;
}

static unsigned int fam_bit(uint8_t f)
{
	return f == NFPROTO_IPV6 ? FAM_IP6 : FAM_IP;
}

/* lines of text; false when out of memory */
struct strv {
	char **v;
	unsigned int n, cap;
	bool oom;
};

static void strv_add(struct strv *l, const char *text)
{
	char *s;

	if (l->oom)
		return;
	if (l->n == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->oom = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	s = strdup(text);
	if (!s) {
		l->oom = true;
		return;
	}
	l->v[l->n++] = s;
}

static void strv_free(struct strv *l)
{
	while (l->n)
		free(l->v[--l->n]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- netlink -------------------------------------------------------------- */

struct nfg_protect {
	struct mnl_socket *nl;
	uint32_t portid, seq;
};

/*
 * The answers to a batch must all fit in the receive buffer: a lost answer
 * would be a lost error. The batch asks for none but errors (no NLM_F_ACK),
 * errors are capped (NETLINK_CAP_ACK: the header of the refused message, not
 * all of it), and the buffer is raised (SO_RCVBUFFORCE needs CAP_NET_ADMIN,
 * which a batch needs anyway). Should answers still be lost, the receive
 * fails with ENOBUFS and that is an error too (nft_batch_send).
 */
#define NFT_RCVBUF	(4 << 20)

static int nft_open(struct nfg_protect *n, struct nfg_err *e)
{
	int one = 1, size = NFT_RCVBUF;

	n->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!n->nl || mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		if (n->nl)
			mnl_socket_close(n->nl);
		n->nl = NULL;
		return nfg_err_set(e, err, "netlink socket: %s", strerror(err));
	}
	if (setsockopt(mnl_socket_get_fd(n->nl), SOL_SOCKET, SO_RCVBUFFORCE,
		       &size, sizeof(size)) < 0)
		setsockopt(mnl_socket_get_fd(n->nl), SOL_SOCKET, SO_RCVBUF,
			   &size, sizeof(size));
	mnl_socket_setsockopt(n->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(n->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	n->portid = mnl_socket_get_portid(n->nl);
	n->seq = (uint32_t)time(NULL);
	return 0;
}

/* Does @buf (@len bytes) hold the end of dump @seq? */
static bool dump_end(const char *buf, int len, uint32_t seq)
{
	const struct nlmsghdr *nlh;

	for (nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
	     nlh = mnl_nlmsg_next(nlh, &len))
		if (nlh->nlmsg_seq == seq &&
		    (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR))
			return true;
	return false;
}

/*
 * One dump request; cb per message. Returns 0 or -errno; -EINTR when the
 * ruleset changed during the dump (NLM_F_DUMP_INTR: what cb saw may be
 * inconsistent, start over), after reading the rest of the dump so that
 * the socket is ready for the next request.
 */
static int nft_dump(struct nfg_protect *n, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[32768];
	uint32_t seq = nlh->nlmsg_seq;
	bool intr = false;
	int len, ret;

	if (mnl_socket_sendto(n->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		len = (int)mnl_socket_recvfrom(n->nl, buf, sizeof(buf));
		if (len <= 0)
			return len < 0 ? -errno : -EIO;
		if (!intr) {
			ret = mnl_cb_run(buf, (size_t)len, seq, n->portid, cb, data);
			if (ret > 0)
				continue;
			if (ret == 0)
				return 0;
			if (errno != EINTR)
				return -errno;
			intr = true;
		}
		if (dump_end(buf, len, seq))
			return -EINTR;
	}
}

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_gen *g = nftnl_gen_alloc();

	if (g && nftnl_gen_nlmsg_parse(nlh, g) == 0)
		*(uint32_t *)data = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
	if (g)
		nftnl_gen_free(g);
	/* the one answer to GETGEN: no NLMSG_DONE follows */
	return MNL_CB_STOP;
}

/* The ruleset's generation id (bumped by every commit). 0 or -errno. */
static int nft_genid(struct nfg_protect *n, uint32_t *id)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	*id = 0;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETGEN, AF_UNSPEC, 0, ++n->seq);
	return nft_dump(n, nlh, gen_cb, id);
}

/*
 * What each message of a batch does, by sequence number, as --dry-run
 * prints it: an error names the operation nf_tables refused.
 */
struct oplog {
	uint32_t first;		/* seq of the first line */
	struct strv v;		/* v.oom: an operation could not be recorded */
};

static void oplog_add(struct oplog *l, uint32_t seq, const char *text)
{
	if (!l->v.n)
		l->first = seq;
	if (seq != l->first + l->v.n)
		l->v.oom = true;
	else
		strv_add(&l->v, text);
}

static const char *oplog_get(const struct oplog *l, uint32_t seq)
{
	if (!l->v.n || seq < l->first || seq - l->first >= l->v.n)
		return NULL;
	return l->v.v[seq - l->first];
}

static void oplog_free(struct oplog *l)
{
	strv_free(&l->v);
}

/* The outcome of a batch: the first error, the operation and the kernel's message. */
struct outcome {
	int err;
	uint32_t seq;		/* of the refused message */
	char msg[256];		/* extack, may be empty */
};

static void outcome_err(struct outcome *o, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct nlattr *attr;
	size_t off = sizeof(*e), tlvlen;
	void *tlvs;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)) || !e->error || o->err)
		return;
	o->err = e->error;
	o->seq = e->msg.nlmsg_seq;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	if (mnl_nlmsg_size(off) > nlh->nlmsg_len)
		return;
	tlvs = (char *)e + off;
	tlvlen = nlh->nlmsg_len - mnl_nlmsg_size(off);
	mnl_attr_for_each_payload(tlvs, tlvlen) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(o->msg, sizeof(o->msg), "%s", mnl_attr_get_str(attr));
	}
}

/*
 * Send a batch. Its messages ask for no ACK: nf_tables answers only the
 * ones it refuses (and always those), and it handles the whole batch
 * inside sendmsg(), so every answer is queued when sendto() returns.
 * Success is positive, not the absence of news: no error and no lost
 * answer (ENOBUFS), and the generation id moved (each commit bumps it;
 * a batch with the dump's id in its begin message commits on that
 * ruleset or not at all). Returns 0, -ERESTART (the ruleset changed since
 * the dump: read it again and retry) or the first -errno in @o.
 */
static int nft_batch_send(struct nfg_protect *n, struct mnl_nlmsg_batch *b, uint32_t genid,
			  struct outcome *o)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t after;
	int ret;

	memset(o, 0, sizeof(*o));
	if (mnl_socket_sendto(n->nl, mnl_nlmsg_batch_head(b),
			      mnl_nlmsg_batch_size(b)) < 0) {
		o->err = -errno;
		return o->err;
	}
	for (;;) {
		const struct nlmsghdr *nlh;

		ret = (int)recv(mnl_socket_get_fd(n->nl), buf, sizeof(buf), MSG_DONTWAIT);
		if (ret < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (ret <= 0) {
			/* ENOBUFS: answers were lost, errors among them */
			if (!o->err)
				o->err = ret < 0 ? -errno : -EIO;
			continue;
		}
		for (nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, ret);
		     nlh = mnl_nlmsg_next(nlh, &ret))
			if (nlh->nlmsg_type == NLMSG_ERROR)
				outcome_err(o, nlh);
	}
	if (o->err)
		return o->err;
	ret = nft_genid(n, &after);
	if (ret < 0) {
		o->err = ret;
		return ret;
	}
	if (after == genid) {
		snprintf(o->msg, sizeof(o->msg), "the ruleset's generation did not change");
		o->err = -EPROTO;
	}
	return o->err;
}

/* ---- state: what exists ----------------------------------------------------- */

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	struct state *st = data;
	struct nftnl_table *t = nftnl_table_alloc();
	const char *name;
	const void *ud;
	uint32_t len = 0;
	uint8_t f;

	if (!t || nftnl_table_nlmsg_parse(nlh, t) < 0)
		goto out;
	name = nftnl_table_get_str(t, NFTNL_TABLE_NAME);
	f = (uint8_t)nftnl_table_get_u32(t, NFTNL_TABLE_FAMILY);
	ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);
	st += f == NFPROTO_IPV6;
	if (f != NFPROTO_IPV4 && f != NFPROTO_IPV6)
		goto out;
	if (!strcmp(name, T_OURS)) {
		/* ours only with the comment protect gives it */
		if (ud && memmem(ud, len, OWNER, strlen(OWNER)))
			st->ours = true;
		else
			st->foreign = true;
	} else if (!strcmp(name, "raw")) {
		st->raw = true;
		st->raw_owned = ud && memmem(ud, len, OWNER, strlen(OWNER));
	} else if (!strcmp(name, "mangle")) {
		st->mangle = true;
		st->mangle_owned = ud && memmem(ud, len, OWNER, strlen(OWNER));
	}
out:
	if (t)
		nftnl_table_free(t);
	return MNL_CB_OK;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct state *st = data;
	struct nftnl_chain *c = nftnl_chain_alloc();
	const char *tab, *name;
	uint8_t f;

	if (!c || nftnl_chain_nlmsg_parse(nlh, c) < 0)
		goto out;
	tab = nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE);
	name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
	f = (uint8_t)nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
	if (f != NFPROTO_IPV4 && f != NFPROTO_IPV6)
		goto out;
	st += f == NFPROTO_IPV6;
	if (!strcmp(tab, "raw")) {
		st->raw_chains++;
		st->sc_chain |= !strcmp(name, C_SC_OLD);
	} else if (!strcmp(tab, "mangle")) {
		st->mangle_chains++;
		st->rtc_chain |= !strcmp(name, C_RTC_OLD);
	}
out:
	if (c)
		nftnl_chain_free(c);
	return MNL_CB_OK;
}

/* st[0] ip, st[1] ip6 */
static int read_state(struct nfg_protect *n, struct state st[2])
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	memset(st, 0, 2 * sizeof(*st));
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, NFPROTO_UNSPEC,
				    NLM_F_DUMP, ++n->seq);
	ret = nft_dump(n, nlh, table_cb, st);
	if (ret < 0)
		return ret;
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN, NFPROTO_UNSPEC,
				    NLM_F_DUMP, ++n->seq);
	return nft_dump(n, nlh, chain_cb, st);
}

/* ---- rules as text (dry-run and show) --------------------------------------- */

struct rtext {
	char *buf;
	size_t len, pos;
	uint8_t family;
	int pending;		/* 1 l4proto, 2 dport, 3 tcp flags, 4 flags & mask */
	uint32_t mask;
};

static void rt_add(struct rtext *t, const char *s)
{
	int n = snprintf(t->buf + t->pos, t->len - t->pos, "%s%s", t->pos ? " " : "", s);

	if (n > 0 && (size_t)n < t->len - t->pos)
		t->pos += (size_t)n;
}

/* iptables' name of a reject expression (REJECT --reject-with), or NULL */
static const char *reject_with(uint8_t family, uint32_t type, uint8_t code)
{
	static const char *const icmp[] = {
		[0] = "icmp-net-unreachable", [1] = "icmp-host-unreachable",
		[2] = "icmp-proto-unreachable", [3] = "icmp-port-unreachable",
		[9] = "icmp-net-prohibited", [10] = "icmp-host-prohibited",
		[13] = "icmp-admin-prohibited",
	};
	static const char *const icmp6[] = {
		[0] = "icmp6-no-route", [1] = "icmp6-adm-prohibited",
		[3] = "icmp6-addr-unreachable", [4] = "icmp6-port-unreachable",
	};

	if (type == NFT_REJECT_TCP_RST)
		return "tcp-reset";
	if (type != NFT_REJECT_ICMP_UNREACH)
		return NULL;
	if (family == NFPROTO_IPV6)
		return code < sizeof(icmp6) / sizeof(icmp6[0]) ? icmp6[code] : NULL;
	return code < sizeof(icmp) / sizeof(icmp[0]) ? icmp[code] : NULL;
}

static int expr_text(struct nftnl_expr *e, void *data)
{
	struct rtext *t = data;
	const char *kind = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	char s[512];
	uint32_t len;
	int ret;

	if (!strcmp(kind, "meta") &&
	    nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY) == NFT_META_L4PROTO) {
		t->pending = 1;
		return 0;
	}
	if (!strcmp(kind, "payload") &&
	    nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE) == NFT_PAYLOAD_TRANSPORT_HEADER) {
		uint32_t off = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET);

		t->pending = off == 2 ? 2 : off == 13 ? 3 : 0;
		if (t->pending)
			return 0;
	}
	if (!strcmp(kind, "bitwise") && t->pending == 3) {
		const uint8_t *m = nftnl_expr_get(e, NFTNL_EXPR_BITWISE_MASK, &len);

		t->mask = m && len == 1 ? m[0] : 0;
		t->pending = 4;
		return 0;
	}
	if (!strcmp(kind, "cmp") && t->pending) {
		const uint8_t *d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &len);

		if (t->pending == 1 && len == 1)
			rt_add(t, d[0] == IPPROTO_TCP ? "-p tcp" : d[0] == IPPROTO_UDP ?
			       "-p udp" : "-p ?");
		else if (t->pending == 2 && len == 2) {
			snprintf(s, sizeof(s), "--dport %u", (d[0] << 8) | d[1]);
			rt_add(t, s);
		} else if (t->pending == 4 && len == 1 && t->mask == 0x17 && d[0] == 0x02)
			rt_add(t, "--syn");
		else
			rt_add(t, "[cmp ?]");
		t->pending = 0;
		return 0;
	}
	t->pending = 0;
	ret = nfg_nft_expr_format(e, nfg_fam(t->family), s, sizeof(s), NULL);
	if (ret >= 0) {
		rt_add(t, s);
		return 0;
	}
	if (!strcmp(kind, "immediate") &&
	    nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
		int v = (int)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);

		if (v == NF_DROP)
			rt_add(t, "-j DROP");
		else if (v == NF_ACCEPT)
			rt_add(t, "-j ACCEPT");
		else if (v == NFT_JUMP) {
			snprintf(s, sizeof(s), "-j %s",
				 nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN));
			rt_add(t, s);
		} else
			rt_add(t, "[verdict ?]");
		return 0;
	}
	if (!strcmp(kind, "reject")) {
		const char *with = reject_with(t->family,
					       nftnl_expr_get_u32(e, NFTNL_EXPR_REJECT_TYPE),
					       nftnl_expr_get_u8(e, NFTNL_EXPR_REJECT_CODE));

		if (with) {
			snprintf(s, sizeof(s), "-j REJECT --reject-with %s", with);
			rt_add(t, s);
			return 0;
		}
	}
	snprintf(s, sizeof(s), "[%s]", kind);
	rt_add(t, s);
	return 0;
}

static void fmt_rule(struct nftnl_rule *r, char *out, size_t len)
{
	char buf[1024];
	struct rtext t = { .buf = buf, .len = sizeof(buf) };

	buf[0] = '\0';
	t.family = (uint8_t)nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY);
	nftnl_expr_foreach(r, expr_text, &t);
	snprintf(out, len, "add rule %s %s %s %s", fam_name(t.family),
		 nftnl_rule_get_str(r, NFTNL_RULE_TABLE),
		 nftnl_rule_get_str(r, NFTNL_RULE_CHAIN), buf);
}

static const char *hook_name(uint32_t h)
{
	static const char *const n[] = { "prerouting", "input", "forward", "output", "postrouting" };

	return h < 5 ? n[h] : "?";
}

static void fmt_chain(struct nftnl_chain *c, char *out, size_t len)
{
	uint8_t f = (uint8_t)nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
	int n;

	n = snprintf(out, len, "add chain %s %s %s", fam_name(f),
		     nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE),
		     nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
	if (n > 0 && (size_t)n < len && nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		snprintf(out + n, len - (size_t)n, " { type filter hook %s priority %d; }",
			 hook_name(nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM)),
			 nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO));
}

/* ---- building the batch ------------------------------------------------------ */

#define BATCH_SIZE	(1 << 20)

struct nfg_protect_plan {
	struct nfg_profile prof;	/* what it installs */
	bool remove_only;		/* installs nothing (unprotect) */
	bool built;			/* a batch (else operations read back) */
	bool online;			/* built on a ruleset read through a handle */
	struct state st[2];		/* what the read found, [0] ip, [1] ip6 */
	uint32_t genid;			/* the read's generation */
	uint32_t seq;			/* of the last message */
	char *buf;
	struct mnl_nlmsg_batch *b;
	struct oplog log;		/* what each message does; built: [0] batch begin */
	int err;			/* the first error building, with berr */
	struct nfg_err berr;
	bool refused_set;		/* the last apply named an operation */
	uint32_t refused_seq;
	bool ended;			/* the batch end is in the batch */
	void *genid_at;			/* the batch's generation id (big endian) */
};

/* Record what the message just built does; the next message goes after it. */
static void put_done(struct nfg_protect_plan *B, const char *text)
{
	if (!mnl_nlmsg_batch_next(B->b) && !B->err)
		B->err = nfg_err_set(&B->berr, E2BIG,
				     "the profile does not fit in one batch of %d bytes",
				     BATCH_SIZE);
	oplog_add(&B->log, B->seq, text);
}

static void put_table(struct nfg_protect_plan *B, uint16_t type, uint8_t f, const char *name,
		      bool owner)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;
	char text[256];

	nftnl_table_set_str(t, NFTNL_TABLE_NAME, name);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, f);
	if (owner) {
		struct nftnl_udata_buf *u = nftnl_udata_buf_alloc(128);

		nftnl_udata_put_strz(u, NFTNL_UDATA_TABLE_COMMENT, OWNER);
		nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(u),
				     nftnl_udata_buf_len(u));
		nftnl_udata_buf_free(u);
	}
	nlh = nftnl_table_nlmsg_build_hdr(mnl_nlmsg_batch_current(B->b), type, f,
					  type == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0,
					  ++B->seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	snprintf(text, sizeof(text), "%s table %s %s%s",
		 type == NFT_MSG_NEWTABLE ? "add" : "delete",
		 fam_name(f), name, owner ? " { comment \"" OWNER "\"; }" : "");
	put_done(B, text);
	nftnl_table_free(t);
}

/* hook < 0: a regular chain */
static void put_chain(struct nfg_protect_plan *B, uint16_t type, uint8_t f, const char *table,
		      const char *name, int hook, int prio)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;
	char text[512];

	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, f);
	if (type == NFT_MSG_NEWCHAIN && hook >= 0) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
	}
	nlh = nftnl_chain_nlmsg_build_hdr(mnl_nlmsg_batch_current(B->b), type, f,
					  type == NFT_MSG_NEWCHAIN ? NLM_F_CREATE : 0,
					  ++B->seq);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	if (type == NFT_MSG_NEWCHAIN)
		fmt_chain(c, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "delete chain %s %s %s", fam_name(f), table, name);
	put_done(B, text);
	nftnl_chain_free(c);
}

static struct nftnl_rule *rule_new(uint8_t f, const char *table, const char *chain)
{
	struct nftnl_rule *r = nftnl_rule_alloc();

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, f);
	return r;
}

static void add_cmp(struct nftnl_rule *r, const void *data, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("cmp");

	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_EQ);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
	nftnl_rule_add_expr(r, e);
}

static void add_payload(struct nftnl_rule *r, uint32_t off, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("payload");

	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, NFT_PAYLOAD_TRANSPORT_HEADER);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
}

/* -p PROTO [--dport PORT] [--syn]; the rule keeps COMPAT_PROTO for xt checks */
static void add_l4(struct nftnl_rule *r, uint8_t proto, uint16_t port, bool syn)
{
	struct nftnl_expr *e = nftnl_expr_alloc("meta");
	uint16_t be = htons(port);

	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, NFT_META_L4PROTO);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	add_cmp(r, &proto, 1);
	nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_PROTO, proto);
	nftnl_rule_set_u32(r, NFTNL_RULE_COMPAT_FLAGS, 0);
	if (port) {
		add_payload(r, 2, 2);
		add_cmp(r, &be, 2);
	}
	if (syn) {
		/* --syn: --tcp-flags FIN,SYN,RST,ACK SYN */
		uint8_t mask = 0x17, x = 0, want = 0x02;

		add_payload(r, 13, 1);
		e = nftnl_expr_alloc("bitwise");
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 1);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, 1);
		nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &x, 1);
		nftnl_rule_add_expr(r, e);
		add_cmp(r, &want, 1);
	}
}

static void add_verdict(struct nftnl_rule *r, int verdict, const char *chain)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
	nftnl_rule_add_expr(r, e);
}

/* Adds @x (NULL: an encoder error @e, kept as the plan's) to @r; false on error. */
static bool add_x(struct nfg_protect_plan *B, struct nftnl_rule *r, struct nftnl_expr *x,
		  const struct nfg_err *e)
{
	if (!x) {
		if (!B->err) {
			B->berr = *e;
			B->err = -e->code;
		}
		return false;
	}
	nftnl_rule_add_expr(r, x);
	return true;
}

static void put_rule(struct nfg_protect_plan *B, struct nftnl_rule *r)
{
	struct nlmsghdr *nlh;
	uint8_t f = (uint8_t)nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY);
	char text[1200];

	nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(B->b), NFT_MSG_NEWRULE, f,
					 NLM_F_CREATE | NLM_F_APPEND, ++B->seq);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	fmt_rule(r, text, sizeof(text));
	put_done(B, text);
	nftnl_rule_free(r);
}

/* Remove what a previous protect (this one or an older) installed in family @f. */
static void remove_ours(struct nfg_protect_plan *B, uint8_t f, const struct state *st)
{
	if (st->ours)
		put_table(B, NFT_MSG_DELTABLE, f, T_OURS, false);
	if (st->sc_chain) {
		if (st->raw_owned && st->raw_chains == 1)
			put_table(B, NFT_MSG_DELTABLE, f, "raw", false);
		else
			put_chain(B, NFT_MSG_DELCHAIN, f, "raw", C_SC_OLD, -1, 0);
	}
	if (st->rtc_chain) {
		if (st->mangle_owned && st->mangle_chains == 1)
			put_table(B, NFT_MSG_DELTABLE, f, "mangle", false);
		else
			put_chain(B, NFT_MSG_DELCHAIN, f, "mangle", C_RTC_OLD, -1, 0);
	}
}

static void kcl_chain(char *buf, size_t len, unsigned int k)
{
	if (k)
		snprintf(buf, len, "kconnlimit-%u", k + 1);
	else
		snprintf(buf, len, "kconnlimit");
}

static void install(struct nfg_protect_plan *B, uint8_t f, const struct nfg_profile *p)
{
	struct nfg_err e;
	struct nftnl_rule *r;
	bool bl_chain = false;
	unsigned int i, k;
	char cn[32];
	int h;

	if (!(p->families & fam_bit(f)))
		return;
	put_table(B, NFT_MSG_NEWTABLE, f, T_OURS, true);
	for (i = 0; i < p->nbl; i++) {
		if (p->bl_family[i] != nfg_fam(f))
			continue;
		if (!bl_chain) {
			put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, "blocklist", NF_INET_PRE_ROUTING,
				  -310);
			bl_chain = true;
		}
		r = rule_new(f, T_OURS, "blocklist");
		if (add_x(B, r, nfg_nft_rangeset(nfg_fam(f), &(struct nfg_nft_rangeset){
				.set = p->bl[i] }, &e), &e)) {
			add_verdict(r, NF_DROP, NULL);
			put_rule(B, r);
		} else {
			nftnl_rule_free(r);
		}
	}
	/* each --kconnlimit: a chain of its own ("kconnlimit", "kconnlimit-2", ...) */
	for (k = 0; k < p->nkcl; k++) {
		const struct nfg_profile_kcl *kc = &p->kcl[k];

		kcl_chain(cn, sizeof(cn), k);
		put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, cn, -1, 0);
		r = rule_new(f, T_OURS, cn);
		if (add_x(B, r, nfg_nft_kconnlimit(nfg_fam(f), &(struct nfg_nft_kconnlimit){
				.limit = kc->limit,
				.prefix = f == NFPROTO_IPV6 ? kc->prefix6 : kc->prefix,
			}, &e), &e)) {
			struct nftnl_expr *x = nftnl_expr_alloc("reject");

			nftnl_expr_set_u32(x, NFTNL_EXPR_REJECT_TYPE, kc->ports.proto == IPPROTO_TCP ?
					   NFT_REJECT_TCP_RST : NFT_REJECT_ICMP_UNREACH);
			nftnl_expr_set_u8(x, NFTNL_EXPR_REJECT_CODE,
					  f == NFPROTO_IPV6 ? 4 /* port unreachable */ : 3);
			nftnl_rule_add_expr(r, x);
			put_rule(B, r);
		} else {
			nftnl_rule_free(r);
		}
	}
	for (h = 0; p->nkcl && h < 2; h++) {
		static const int hooks[] = { NF_INET_LOCAL_IN, NF_INET_FORWARD };
		const char *hn = hooks[h] == NF_INET_LOCAL_IN ? "input" : "forward";

		put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, hn, hooks[h], 0);
		for (k = 0; k < p->nkcl; k++) {
			const struct nfg_profile_kcl *kc = &p->kcl[k];

			kcl_chain(cn, sizeof(cn), k);
			for (i = 0; i < kc->ports.n; i++) {
				r = rule_new(f, T_OURS, hn);
				add_l4(r, kc->ports.proto, kc->ports.port[i],
				       kc->ports.proto == IPPROTO_TCP);
				add_verdict(r, NFT_JUMP, cn);
				put_rule(B, r);
			}
		}
	}
	if (p->syncookie.n) {
		struct nfg_nft_syncookie sc = p->sc;

		if (f == NFPROTO_IPV6)
			sc.prefix = p->sc_prefix6;
		/* raw's priority: before conntrack (-200) */
		put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, C_SC, NF_INET_PRE_ROUTING, -300);
		for (i = 0; i < p->syncookie.n; i++) {
			r = rule_new(f, T_OURS, C_SC);
			add_l4(r, IPPROTO_TCP, p->syncookie.port[i], false);
			if (add_x(B, r, nfg_nft_syncookie(nfg_fam(f), &sc, &e), &e))
				put_rule(B, r);
			else
				nftnl_rule_free(r);
		}
	}
	if (p->rtcache) {
		/* mangle's priority */
		put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, C_RTC, NF_INET_FORWARD, -150);
		r = rule_new(f, T_OURS, C_RTC);
		if (add_x(B, r, nfg_nft_rtcache(nfg_fam(f), &e), &e))
			put_rule(B, r);
		else
			nftnl_rule_free(r);
	}
}

/* ---- show ------------------------------------------------------------------- */

static bool chain_is_ours(const char *table, const char *chain)
{
	return !strcmp(table, T_OURS) || (!strcmp(table, "raw") && !strcmp(chain, C_SC_OLD)) ||
	       (!strcmp(table, "mangle") && !strcmp(chain, C_RTC_OLD));
}

struct show {
	struct nfg_protect *n;
	int err;
	uint8_t family;
	const char *table;
	bool any, owned;
	struct strv *out;
};

static int show_rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct show *s = data;
	char text[1200];

	if (r && nftnl_rule_nlmsg_parse(nlh, r) == 0) {
		fmt_rule(r, text, sizeof(text));
		strv_add(s->out, text);
	}
	if (r)
		nftnl_rule_free(r);
	return MNL_CB_OK;
}

static int show_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct show *s = data;
	struct nftnl_chain *c = nftnl_chain_alloc();

	/* chain dumps are not filtered by table: only by family */
	if (c && nftnl_chain_nlmsg_parse(nlh, c) == 0 &&
	    !strcmp(nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE), s->table) &&
	    chain_is_ours(s->table, nftnl_chain_get_str(c, NFTNL_CHAIN_NAME))) {
		char buf[MNL_SOCKET_BUFFER_SIZE];
		struct nftnl_rule *r = nftnl_rule_alloc();
		struct nlmsghdr *req;
		struct nfg_protect n2;
		char text[512];
		int ret;

		if (!s->any) {
			snprintf(text, sizeof(text), "add table %s %s%s", fam_name(s->family),
				 s->table, s->owned ? " { comment \"" OWNER "\"; }" : "");
			strv_add(s->out, text);
			s->any = true;
		}
		fmt_chain(c, text, sizeof(text));
		strv_add(s->out, text);
		/* a second socket: this one is inside a dump */
		if (nft_open(&n2, NULL) == 0) {
			req = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, s->family, NLM_F_DUMP,
						    ++n2.seq);
			nftnl_rule_set_str(r, NFTNL_RULE_TABLE, s->table);
			nftnl_rule_set_str(r, NFTNL_RULE_CHAIN,
					   nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
			nftnl_rule_nlmsg_build_payload(req, r);
			ret = nft_dump(&n2, req, show_rule_cb, s);
			if (ret < 0 && !s->err)
				s->err = ret;
			mnl_socket_close(n2.nl);
		} else if (!s->err) {
			s->err = -EIO;
		}
		nftnl_rule_free(r);
	}
	if (c)
		nftnl_chain_free(c);
	return MNL_CB_OK;
}

static int show_collect_once(struct nfg_protect *n, const struct state st[2], struct strv *out,
			     struct nfg_err *e);

/* The installed profile, read back from the kernel, as a plan's lines. 0 or -errno. */
static int show_collect(struct nfg_protect *n, const struct state st[2], struct strv *out,
			struct nfg_err *e)
{
	unsigned int try;
	int ret = 0;

	/* a dump the ruleset's changes interrupted is read again */
	for (try = 0; try < GEN_TRIES; try++) {
		strv_free(out);
		ret = show_collect_once(n, st, out, e);
		if (ret != -EINTR)
			break;
	}
	return ret;
}

static int show_collect_once(struct nfg_protect *n, const struct state st[2], struct strv *out,
			struct nfg_err *e)
{
	static const char *const tables[] = { T_OURS, "raw", "mangle" };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int i, t;

	for (i = 0; i < 2; i++) {
		for (t = 0; t < 3; t++) {
			struct show s = { .n = n, .family = families[i], .table = tables[t],
					  .owned = t == 0 || (t == 1 && st[i].raw_owned) ||
						   (t == 2 && st[i].mangle_owned),
					  .out = out };
			struct nftnl_chain *c;
			struct nlmsghdr *nlh;
			int ret;

			if ((t == 0 && !st[i].ours) || (t == 1 && !st[i].sc_chain) ||
			    (t == 2 && !st[i].rtc_chain))
				continue;
			if (t == 0) {
				/* ours even when empty (a profile of RTCACHE alone) */
				strv_add(out, fam_name(families[i])[2] ?
					 "add table ip6 " T_OURS " { comment \"" OWNER "\"; }" :
					 "add table ip " T_OURS " { comment \"" OWNER "\"; }");
				s.any = true;
			}
			c = nftnl_chain_alloc();
			nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, tables[t]);
			nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN, families[i],
						    NLM_F_DUMP, ++n->seq);
			nftnl_chain_nlmsg_build_payload(nlh, c);
			nftnl_chain_free(c);
			ret = nft_dump(n, nlh, show_chain_cb, &s);
			if (ret == 0 && out->oom)
				ret = -ENOMEM;
			if (ret < 0 || s.err < 0) {
				ret = ret < 0 ? ret : s.err;
				return nfg_err_set(e, -ret, "%s %s: %s", fam_name(families[i]),
						   tables[t], strerror(-ret));
			}
		}
	}
	return 0;
}

/* ---- the profile as a command ------------------------------------------------ */

/*
 * What --show and --dry-run print is a shell script: the `nfguard protect`
 * command that gives this profile, then every nf_tables operation as a
 * comment ("# add rule ..."). The command is read back from those very
 * lines (the ones protect writes, decoded from the kernel's dump for
 * --show), so what is printed is what the rules say, not what was asked.
 */
struct recon {
	unsigned int fams;
	struct nfg_profile_ports sc_ports;
	char sc_opts[256];		/* --syncookie-* of the first SYNCOOKIE rule */
	bool sc_local, sc_sack, sc_ts;	/* ... the same, for --json */
	uint32_t sc_mss, sc_wscale;	/* 0 / UINT32_MAX: not set */
	int sc_m4, sc_m6;
	uint32_t sc_timeout;
	struct {
		bool set;
		uint32_t limit;
		int m4, m6;
		struct nfg_profile_ports ports;
	} kcl[MAX_KCL];
	const char *bl[MAX_BL];
	unsigned int nbl;
	bool rtcache;
	bool odd;			/* a line protect does not write */
	bool oom;
};

/* the value after @key in @line, as an unsigned number; false if absent */
static bool word_u32(const char *line, const char *key, uint32_t *v)
{
	const char *p = strstr(line, key);

	if (!p)
		return false;
	return sscanf(p + strlen(key), "%u", v) == 1;
}

static void ports_add(struct nfg_profile_ports *p, uint8_t proto, uint32_t port)
{
	unsigned int i;

	p->proto = proto;
	for (i = 0; i < p->n; i++)
		if (p->port[i] == port)
			return;
	if (p->n < MAX_PORTS)
		p->port[p->n++] = (uint16_t)port;
}

/* index of chain "kconnlimit" (0) or "kconnlimit-N" (N - 1) at @s, or -1 */
static int kcl_index(const char *s)
{
	unsigned int k;

	if (strncmp(s, "kconnlimit", 10))
		return -1;
	if (s[10] == ' ' || !s[10])
		return 0;
	if (sscanf(s + 10, "-%u", &k) == 1 && k >= 2 && k <= MAX_KCL)
		return (int)k - 1;
	return -1;
}

static void recon_line(struct recon *r, const char *l)
{
	char fam[8], table[32], chain[64], set[64];
	const char *rest;
	bool v6;
	uint32_t v, port;
	int n = 0, k;

	if (r->oom)
		return;
	if (sscanf(l, "add table %7s %31s", fam, table) == 2) {
		if (!strcmp(table, T_OURS))
			r->fams |= strcmp(fam, "ip6") ? FAM_IP : FAM_IP6;
		return;
	}
	if (!strncmp(l, "add chain ", 10) || !strncmp(l, "delete ", 7))
		return;
	if (sscanf(l, "add rule %7s %31s %63s %n", fam, table, chain, &n) != 3 || !n) {
		r->odd = true;
		return;
	}
	rest = l + n;
	v6 = !strcmp(fam, "ip6");
	if (!strcmp(table, T_OURS) && !strcmp(chain, "blocklist") &&
	    sscanf(rest, "-m rangeset --match-set %63s src -j DROP", set) == 1) {
		unsigned int i;

		for (i = 0; i < r->nbl && strcmp(r->bl[i], set); i++)
			;
		if (i == r->nbl && r->nbl < MAX_BL) {
			r->bl[r->nbl] = strdup(set);
			if (r->bl[r->nbl])
				r->nbl++;
			else
				r->oom = true;
		}
	} else if (!strcmp(table, T_OURS) && (k = kcl_index(chain)) >= 0 &&
		   !strncmp(rest, "-m kconnlimit ", 14) &&
		   word_u32(rest, "--kconnlimit-above ", &v)) {
		r->kcl[k].set = true;
		r->kcl[k].limit = v;
		if (word_u32(rest, "--kconnlimit-mask ", &v))
			*(v6 ? &r->kcl[k].m6 : &r->kcl[k].m4) = (int)v;
	} else if (!strcmp(table, T_OURS) &&
		   (!strcmp(chain, "input") || !strcmp(chain, "forward")) &&
		   word_u32(rest, "--dport ", &port) && strstr(rest, "-j kconnlimit")) {
		k = kcl_index(strstr(rest, "-j kconnlimit") + 3);
		if (k < 0) {
			r->odd = true;
			return;
		}
		ports_add(&r->kcl[k].ports, strncmp(rest, "-p udp", 6) ? IPPROTO_TCP : IPPROTO_UDP,
			  port);
	} else if (!strcmp(table, T_OURS) && !strcmp(chain, C_SC) &&
		   word_u32(rest, "--dport ", &port) && strstr(rest, "-j SYNCOOKIE")) {
		const char *o = strstr(rest, "-j SYNCOOKIE");

		ports_add(&r->sc_ports, IPPROTO_TCP, port);
		if (word_u32(o, "--allowlist-mask ", &v))
			*(v6 ? &r->sc_m6 : &r->sc_m4) = (int)v;
		if (!r->sc_opts[0]) {
			r->sc_local = strstr(o, "--mode local");
			r->sc_sack = strstr(o, "--sack-perm");
			r->sc_ts = strstr(o, "--timestamp");
			if (!word_u32(o, "--mss ", &r->sc_mss))
				r->sc_mss = 0;
			if (!word_u32(o, "--wscale ", &r->sc_wscale))
				r->sc_wscale = UINT32_MAX;
			snprintf(r->sc_opts, sizeof(r->sc_opts), "%s%s%s%s",
				 strstr(o, "--mode local") ? " --syncookie-mode local" : "",
				 strstr(o, "--sack-perm") ? " --syncookie-sack-perm" : "",
				 strstr(o, "--timestamp") ? " --syncookie-timestamp" : "", "");
			if (word_u32(o, "--mss ", &v))
				snprintf(r->sc_opts + strlen(r->sc_opts),
					 sizeof(r->sc_opts) - strlen(r->sc_opts),
					 " --syncookie-mss %u", v);
			if (word_u32(o, "--wscale ", &v))
				snprintf(r->sc_opts + strlen(r->sc_opts),
					 sizeof(r->sc_opts) - strlen(r->sc_opts),
					 " --syncookie-wscale %u", v);
			if (!r->sc_opts[0])
				strcpy(r->sc_opts, " ");
		}
		if (word_u32(o, "--allowlist-timeout ", &v))
			r->sc_timeout = v;
	} else if (!strcmp(table, T_OURS) && !strcmp(chain, C_RTC) &&
		   !strcmp(rest, "-j RTCACHE")) {
		r->rtcache = true;
	} else {
		r->odd = true;
	}
}

static void print_ports(struct nfg_sbuf *o, const struct nfg_profile_ports *p)
{
	unsigned int i;

	nfg_sbuf_add(o, "%s/", p->proto == IPPROTO_UDP ? "udp" : "tcp");
	for (i = 0; i < p->n; i++)
		nfg_sbuf_add(o, "%s%u", i ? "," : "", p->port[i]);
}

/* "/M4,M6", "/M4", "/,M6" or nothing when both are the defaults @d4/@d6 */
static void print_masks(struct nfg_sbuf *o, unsigned int fams, int m4, int m6, int d4,
			int d6, bool slash)
{
	bool x4 = (fams & FAM_IP) && m4 >= 0 && m4 != d4;
	bool x6 = (fams & FAM_IP6) && m6 >= 0 && m6 != d6;

	if (!x4 && !x6)
		return;
	nfg_sbuf_add(o, "%s", slash ? "/" : " ");
	if (fams == FAM_IP6)
		nfg_sbuf_add(o, m6 > 32 ? "%d" : ",%d", m6);
	else if (fams == FAM_IP)
		nfg_sbuf_add(o, "%d", m4);
	else
		nfg_sbuf_add(o, "%d,%d", m4 < 0 ? d4 : m4, m6 < 0 ? d6 : m6);
}

/* The profile @lines give (free with recon_free). */
static void recon_read(struct recon *r, const struct oplog *lines)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->sc_m4 = r->sc_m6 = -1;
	for (i = 0; i < MAX_KCL; i++)
		r->kcl[i].m4 = r->kcl[i].m6 = -1;
	for (i = 0; i < lines->v.n; i++)
		if (lines->v.v[i][0] != '(')
			recon_line(r, lines->v.v[i]);
}

static void recon_free(struct recon *r)
{
	while (r->nbl)
		free((char *)r->bl[--r->nbl]);
}

/* The command (or nothing when there is none) for @r. */
static void print_command(struct nfg_sbuf *o, const struct recon *r)
{
	unsigned int i;

	if (!r->fams)
		return;
	if (r->odd)
		nfg_sbuf_add(o, "# warning: lines below are not what nfguard protect writes: the "
			     "command does not give them\n");
	nfg_sbuf_add(o, "nfguard protect%s",
		     r->fams == FAM_IP ? " -4" : r->fams == FAM_IP6 ? " -6" : "");
	if (r->sc_ports.n) {
		nfg_sbuf_add(o, " --syncookie ");
		print_ports(o, &r->sc_ports);
		if (strcmp(r->sc_opts, " "))
			nfg_sbuf_add(o, "%s", r->sc_opts);
		if (r->sc_timeout && r->sc_timeout != 300)
			nfg_sbuf_add(o, " --syncookie-allowlist-timeout %u", r->sc_timeout);
		if (((r->fams & FAM_IP) && r->sc_m4 != 32) ||
		    ((r->fams & FAM_IP6) && r->sc_m6 != 128)) {
			nfg_sbuf_add(o, " --syncookie-allowlist-mask");
			print_masks(o, r->fams, r->sc_m4, r->sc_m6, 32, 128, false);
		}
	}
	for (i = 0; i < MAX_KCL && r->kcl[i].set; i++) {
		nfg_sbuf_add(o, " --kconnlimit %u", r->kcl[i].limit);
		print_masks(o, r->fams, r->kcl[i].m4, r->kcl[i].m6, 32, 64, true);
		nfg_sbuf_add(o, " ");
		print_ports(o, &r->kcl[i].ports);
	}
	for (i = 0; i < r->nbl; i++)
		nfg_sbuf_add(o, " --blocklist %s", r->bl[i]);
	if (r->rtcache)
		nfg_sbuf_add(o, " --rtcache");
	nfg_sbuf_add(o, "\n");
}

static void json_ports(struct nfg_sbuf *o, const struct nfg_profile_ports *p)
{
	unsigned int i;

	nfg_sbuf_add(o, "\"proto\":\"%s\",\"ports\":[", p->proto == IPPROTO_UDP ? "udp" : "tcp");
	for (i = 0; i < p->n; i++)
		nfg_sbuf_add(o, "%s%u", i ? "," : "", p->port[i]);
	nfg_sbuf_add(o, "]");
}

/* a prefix length of family bit @fam, or null when that family has no rules */
static void json_mask(struct nfg_sbuf *o, const char *key, unsigned int fams,
		      unsigned int fam, int m, int d)
{
	nfg_sbuf_add(o, ",\"%s\":", key);
	if (fams & fam)
		nfg_sbuf_add(o, "%d", m < 0 ? d : m);
	else
		nfg_sbuf_add(o, "null");
}

/* a number, or null for @none */
static void json_u32(struct nfg_sbuf *o, const char *key, uint32_t v, uint32_t none)
{
	if (v != none)
		nfg_sbuf_add(o, ",\"%s\":%u", key, v);
	else
		nfg_sbuf_add(o, ",\"%s\":null", key);
}

/*
 * The profile @r, every option with its value (defaults included), and
 * the nf_tables operations @lines that hold it. An option whose extension
 * is not in the profile is null (syncookie) or empty; "installed" is false
 * (and the rest empty) with no profile.
 */
static void print_json(struct nfg_sbuf *o, const struct recon *r, const struct oplog *lines)
{
	unsigned int i, k, n = 0;

	nfg_sbuf_add(o, "{\"installed\":%s,\"families\":[", r->fams ? "true" : "false");
	nfg_sbuf_add(o, "%s%s%s]", r->fams & FAM_IP ? "\"ip\"" : "",
		     r->fams == (FAM_IP | FAM_IP6) ? "," : "", r->fams & FAM_IP6 ? "\"ip6\"" : "");
	nfg_sbuf_add(o, ",\"exact\":%s", r->odd ? "false" : "true");
	nfg_sbuf_add(o, ",\"syncookie\":");
	if (r->sc_ports.n) {
		nfg_sbuf_add(o, "{");
		json_ports(o, &r->sc_ports);
		nfg_sbuf_add(o, ",\"mode\":\"%s\"", r->sc_local ? "local" : "proxy");
		json_u32(o, "mss", r->sc_mss, 0);
		json_u32(o, "wscale", r->sc_wscale, UINT32_MAX);
		nfg_sbuf_add(o, ",\"sack_perm\":%s,\"timestamp\":%s,\"allowlist_timeout\":%u",
			     r->sc_sack ? "true" : "false", r->sc_ts ? "true" : "false",
			     r->sc_timeout ? r->sc_timeout : 300);
		json_mask(o, "allowlist_mask", r->fams, FAM_IP, r->sc_m4, 32);
		json_mask(o, "allowlist_mask6", r->fams, FAM_IP6, r->sc_m6, 128);
		nfg_sbuf_add(o, "}");
	} else {
		nfg_sbuf_add(o, "null");
	}
	nfg_sbuf_add(o, ",\"kconnlimit\":[");
	for (k = 0; k < MAX_KCL && r->kcl[k].set; k++) {
		nfg_sbuf_add(o, "%s{\"chain\":", k ? "," : "");
		if (k)
			nfg_sbuf_add(o, "\"kconnlimit-%u\"", k + 1);
		else
			nfg_sbuf_add(o, "\"kconnlimit\"");
		nfg_sbuf_add(o, ",\"limit\":%u", r->kcl[k].limit);
		json_mask(o, "mask", r->fams, FAM_IP, r->kcl[k].m4, 32);
		json_mask(o, "mask6", r->fams, FAM_IP6, r->kcl[k].m6, 64);
		nfg_sbuf_add(o, ",");
		json_ports(o, &r->kcl[k].ports);
		nfg_sbuf_add(o, "}");
	}
	nfg_sbuf_add(o, "],\"blocklist\":[");
	for (i = 0; i < r->nbl; i++) {
		if (i)
			nfg_sbuf_add(o, ",");
		nfg_sbuf_json_str(o, r->bl[i]);
	}
	nfg_sbuf_add(o, "],\"rtcache\":%s,\"operations\":[", r->rtcache ? "true" : "false");
	for (i = 0; i < lines->v.n; i++) {
		if (lines->v.v[i][0] == '(')
			continue;
		if (n++)
			nfg_sbuf_add(o, ",");
		nfg_sbuf_json_str(o, lines->v.v[i]);
	}
	nfg_sbuf_add(o, "]}\n");
}

/* ---- the public interface ---------------------------------------------------- */

void nfg_profile_init(struct nfg_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->families = FAM_IP | FAM_IP6;
	p->sc.mode = NFG_SC_MODE_PROXY;
	p->sc.wscale = -1;
}

static int ports_check(const struct nfg_profile_ports *p, const char *what, bool udp_ok,
		       struct nfg_err *e)
{
	unsigned int i, j;

	if (p->proto != IPPROTO_TCP && !(udp_ok && p->proto == IPPROTO_UDP))
		return nfg_err_set(e, EINVAL, "%s: protocol %u: %s", what, p->proto,
				   udp_ok ? "tcp (6) or udp (17)" : "tcp (6)");
	if (!p->n || p->n > MAX_PORTS)
		return nfg_err_set(e, ERANGE, "%s: %u ports: from 1 to %d", what, p->n,
				   MAX_PORTS);
	for (i = 0; i < p->n; i++) {
		if (!p->port[i])
			return nfg_err_set(e, EINVAL, "%s: port 0", what);
		for (j = 0; j < i; j++)
			if (p->port[j] == p->port[i])
				return nfg_err_set(e, EINVAL, "%s: port %u given twice", what,
						   p->port[i]);
	}
	return 0;
}

/* @x from an encoder: NULL is its error (in @e), else it is only a check */
static int encoded(struct nftnl_expr *x, const struct nfg_err *e)
{
	if (!x)
		return e ? -e->code : -EINVAL;
	nftnl_expr_free(x);
	return 0;
}

int nfg_profile_check(const struct nfg_profile *p, struct nfg_err *e)
{
	struct nfg_err tmp, *pe = e ? e : &tmp;
	unsigned int i, k;
	char err[200];
	int ret;

	if (!p)
		return nfg_err_set(e, EINVAL, "no profile");
	if (!p->families || (p->families & ~(FAM_IP | FAM_IP6)))
		return nfg_err_set(e, EINVAL, "families %#x: NFG_PROFILE_IP, NFG_PROFILE_IP6 or both",
				   p->families);
	if (!p->syncookie.n && !p->nkcl && !p->nbl && !p->rtcache)
		return nfg_err_set(e, EINVAL, "nothing to protect with: no syncookie port, "
				   "kconnlimit limit, blocklist set or rtcache");
	if (p->nkcl > MAX_KCL)
		return nfg_err_set(e, ERANGE, "%u kconnlimit limits: at most %d", p->nkcl, MAX_KCL);
	if (p->nbl > MAX_BL)
		return nfg_err_set(e, ERANGE, "%u blocklist sets: at most %d", p->nbl, MAX_BL);
	for (i = 0; i < 2; i++) {
		uint8_t f = families[i], nf = nfg_fam(f);

		if (!(p->families & fam_bit(f)))
			continue;
		if (p->syncookie.n) {
			struct nfg_nft_syncookie sc = p->sc;

			if (f == NFPROTO_IPV6)
				sc.prefix = p->sc_prefix6;
			ret = ports_check(&p->syncookie, "syncookie", false, e);
			if (ret == 0)
				ret = encoded(nfg_nft_syncookie(nf, &sc, pe), pe);
			if (ret < 0)
				return ret;
		}
		for (k = 0; k < p->nkcl; k++) {
			const struct nfg_profile_kcl *kc = &p->kcl[k];

			ret = ports_check(&kc->ports, "kconnlimit", true, e);
			if (ret == 0)
				ret = encoded(nfg_nft_kconnlimit(nf, &(struct nfg_nft_kconnlimit){
					.limit = kc->limit,
					.prefix = f == NFPROTO_IPV6 ? kc->prefix6 : kc->prefix,
				}, pe), pe);
			if (ret < 0)
				return ret;
		}
	}
	for (i = 0; i < p->nbl; i++) {
		if (!memchr(p->bl[i], '\0', sizeof(p->bl[i])))
			return nfg_err_set(e, EINVAL, "blocklist set %u: name not terminated", i);
		if (nfg_rs_name_valid(p->bl[i], false, err, sizeof(err)) < 0)
			return nfg_err_set(e, EINVAL, "blocklist: %s", err);
		if (p->bl_family[i] != NFG_FAMILY_IPV4 && p->bl_family[i] != NFG_FAMILY_IPV6)
			return nfg_err_set(e, EINVAL, "blocklist set %s: family %u: NFG_FAMILY_IPV4 or "
					   "NFG_FAMILY_IPV6", p->bl[i], p->bl_family[i]);
		if (!(p->families & (p->bl_family[i] == NFG_FAMILY_IPV6 ? FAM_IP6 : FAM_IP)))
			return nfg_err_set(e, EINVAL, "blocklist set %s is an %s set: the profile "
					   "installs no %s rule to use it", p->bl[i],
					   nfg_family_name(p->bl_family[i]),
					   p->bl_family[i] == NFG_FAMILY_IPV6 ? "IPv6" : "IPv4");
	}
	return 0;
}

struct nfg_protect *nfg_protect_open(struct nfg_err *e)
{
	struct nfg_protect *h = calloc(1, sizeof(*h));

	if (!h) {
		nfg_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	if (nft_open(h, e) < 0) {
		free(h);
		return NULL;
	}
	return h;
}

void nfg_protect_close(struct nfg_protect *h)
{
	if (!h)
		return;
	mnl_socket_close(h->nl);
	free(h);
}

/* The ruleset's generation, then what is ours in it (a change after the first shows in the second). */
static int ruleset_read(struct nfg_protect *h, uint32_t *genid, struct state st[2],
			struct nfg_err *e)
{
	unsigned int try;
	int ret;

	/* a dump the ruleset's changes interrupted is read again */
	for (try = 0; try < GEN_TRIES; try++) {
		ret = nft_genid(h, genid);
		if (ret == 0)
			ret = read_state(h, st);
		if (ret != -EINTR)
			break;
	}
	if (ret < 0)
		return nfg_err_set(e, -ret, "reading the nftables ruleset: %s", strerror(-ret));
	return 0;
}

/* (Re)build @P's batch for the ruleset in P->st and P->genid. */
static int plan_make(struct nfg_protect_plan *P, struct nfg_err *e)
{
	unsigned int i;

	if (P->b)
		mnl_nlmsg_batch_stop(P->b);
	oplog_free(&P->log);
	P->err = 0;
	P->refused_set = false;
	P->ended = false;
	P->genid_at = NULL;
	P->b = mnl_nlmsg_batch_start(P->buf, BATCH_SIZE);
	if (!P->b)
		return nfg_err_set(e, ENOMEM, "out of memory");
	/* the dump's generation: the batch commits on that ruleset or not at all */
	nftnl_batch_begin(mnl_nlmsg_batch_current(P->b), ++P->seq);
	if (P->genid) {
		struct nlmsghdr *nlh = mnl_nlmsg_batch_current(P->b);
		struct nlattr *a = mnl_nlmsg_get_payload_tail(nlh);

		mnl_attr_put_u32(nlh, NFNL_BATCH_GENID, htonl(P->genid));
		P->genid_at = mnl_attr_get_payload(a);
	}
	put_done(P, "(batch begin)");
	for (i = 0; i < 2; i++) {
		remove_ours(P, families[i], &P->st[i]);
		if (!P->remove_only)
			install(P, families[i], &P->prof);
	}
	if (P->err) {
		if (e)
			*e = P->berr;
		return P->err;
	}
	if (P->log.v.oom)
		return nfg_err_set(e, ENOMEM, "out of memory");
	return 0;
}

/* Read the ruleset through @h (NULL: an empty one) and build @P's batch for it. */
static int plan_fill(struct nfg_protect *h, struct nfg_protect_plan *P, struct nfg_err *e)
{
	int ret;

	memset(P->st, 0, sizeof(P->st));
	P->genid = 0;
	if (h) {
		ret = ruleset_read(h, &P->genid, P->st, e);
		if (ret < 0)
			return ret;
		P->seq = h->seq;
	}
	ret = plan_make(P, e);
	if (h)
		h->seq = P->seq;
	return ret;
}

/*
 * Before sending @P again: read the ruleset; when what is ours in it is
 * unchanged (another program changed something else), the batch only needs
 * the new generation id, else it is built anew. Keeping the time between
 * the read and the send short is what lets a retry succeed on a ruleset
 * that keeps changing.
 */
static int plan_refresh(struct nfg_protect *h, struct nfg_protect_plan *P, struct nfg_err *e)
{
	struct state st[2];
	uint32_t genid;
	int ret;

	ret = ruleset_read(h, &genid, st, e);
	if (ret < 0)
		return ret;
	if (P->ended && P->genid_at && genid && !memcmp(st, P->st, sizeof(st))) {
		uint32_t be = htonl(genid);

		memcpy(P->genid_at, &be, sizeof(be));
		P->genid = genid;
		P->refused_set = false;
		return 0;
	}
	memcpy(P->st, st, sizeof(st));
	P->genid = genid;
	P->seq = h->seq;
	ret = plan_make(P, e);
	h->seq = P->seq;
	return ret;
}

static struct nfg_protect_plan *plan_alloc(bool built, struct nfg_err *e)
{
	struct nfg_protect_plan *P = calloc(1, sizeof(*P));

	if (P && built) {
		P->built = true;
		P->buf = malloc(BATCH_SIZE);
		if (!P->buf) {
			free(P);
			P = NULL;
		}
	}
	if (!P)
		nfg_err_set(e, ENOMEM, "out of memory");
	return P;
}

int nfg_protect_build(struct nfg_protect *h, const struct nfg_profile *p,
		      struct nfg_protect_plan **plan, struct nfg_err *e)
{
	struct nfg_protect_plan *P;
	int ret;

	if (!plan)
		return nfg_err_set(e, EINVAL, "no plan pointer");
	*plan = NULL;
	if (p) {
		ret = nfg_profile_check(p, e);
		if (ret < 0)
			return ret;
	}
	P = plan_alloc(true, e);
	if (!P)
		return -ENOMEM;
	if (p)
		P->prof = *p;
	P->remove_only = !p;
	P->online = h;
	ret = plan_fill(h, P, e);
	if (ret < 0) {
		nfg_protect_plan_free(P);
		return ret;
	}
	*plan = P;
	return 0;
}

int nfg_protect_read(struct nfg_protect *h, struct nfg_protect_plan **plan,
		     struct nfg_err *e)
{
	struct nfg_protect_plan *P;
	struct strv out = { 0 };
	unsigned int i;
	int ret;

	if (!plan)
		return nfg_err_set(e, EINVAL, "no plan pointer");
	*plan = NULL;
	if (!h)
		return nfg_err_set(e, EINVAL, "no handle");
	P = plan_alloc(false, e);
	if (!P)
		return -ENOMEM;
	P->online = true;
	P->remove_only = true;
	ret = ruleset_read(h, &P->genid, P->st, e);
	if (ret < 0)
		goto out;
	ret = show_collect(h, P->st, &out, e);
	if (ret < 0)
		goto out;
	for (i = 0; i < out.n; i++)
		oplog_add(&P->log, i, out.v[i]);
	if (out.oom || P->log.v.oom)
		ret = nfg_err_set(e, ENOMEM, "out of memory");
out:
	strv_free(&out);
	if (ret < 0)
		nfg_protect_plan_free(P);
	else
		*plan = P;
	return ret;
}

void nfg_protect_plan_free(struct nfg_protect_plan *plan)
{
	if (!plan)
		return;
	if (plan->b)
		mnl_nlmsg_batch_stop(plan->b);
	oplog_free(&plan->log);
	free(plan->buf);
	free(plan);
}

/* built plans: ops[0] is the batch begin, not an operation of the profile */
static unsigned int plan_skip(const struct nfg_protect_plan *plan)
{
	return plan->built && plan->log.v.n ? 1 : 0;
}

size_t nfg_protect_plan_count(const struct nfg_protect_plan *plan)
{
	return plan ? plan->log.v.n - plan_skip(plan) : 0;
}

const char *nfg_protect_plan_op(const struct nfg_protect_plan *plan, size_t i)
{
	if (i >= nfg_protect_plan_count(plan))
		return NULL;
	return plan->log.v.v[i + plan_skip(plan)];
}

unsigned int nfg_protect_plan_foreign(const struct nfg_protect_plan *plan)
{
	unsigned int i, bits = 0;

	for (i = 0; plan && i < 2; i++)
		if (plan->st[i].foreign)
			bits |= fam_bit(families[i]);
	return bits;
}

int nfg_protect_apply(struct nfg_protect *h, struct nfg_protect_plan *P, struct nfg_err *e)
{
	struct outcome o = { 0 };
	unsigned int try, clash, i;
	int ret = 0;

	if (!h || !P || !P->built || !P->online)
		return nfg_err_set(e, EINVAL, "a plan built through a handle is needed");
	for (try = 0; try < GEN_TRIES; try++) {
		/* a plan sent once (or refused) goes on the ruleset as it is now */
		if (try || P->refused_set) {
			ret = plan_refresh(h, P, e);
			if (ret < 0) {
				P->refused_set = false;	/* nothing was sent */
				return ret;
			}
		}
		clash = P->remove_only ? 0 : nfg_protect_plan_foreign(P) & P->prof.families;
		for (i = 0; clash && i < 2; i++)
			if (clash & fam_bit(families[i]))
				return nfg_err_set(e, EEXIST, "table %s " T_OURS " exists and was not "
						   "created by nfguard protect (no comment \""
						   OWNER "\"): rename or delete it first",
						   fam_name(families[i]));
		if (P->log.v.n == 1)
			return 0;	/* nothing installed, nothing to remove */
		if (!P->ended) {
			nftnl_batch_end(mnl_nlmsg_batch_current(P->b), ++P->seq);
			mnl_nlmsg_batch_next(P->b);
			P->ended = true;
		}
		h->seq = P->seq;
		ret = nft_batch_send(h, P->b, P->genid, &o);
		P->refused_set = true;
		P->refused_seq = o.seq;
		if (ret != -ERESTART)
			break;
	}
	if (ret == 0) {
		nfg_err_clear(e);
		return 0;
	}
	nfg_err_set(e, -ret, NULL);
	if (e && o.msg[0]) {
		snprintf(e->msg, sizeof(e->msg), "%s", o.msg);
		e->kernel_msg = ret != -EPROTO;
	}
	return ret;
}

const char *nfg_protect_plan_refused(const struct nfg_protect_plan *plan)
{
	if (!plan || !plan->refused_set)
		return NULL;
	return oplog_get(&plan->log, plan->refused_seq);
}

int nfg_protect_check(struct nfg_protect *h, const struct nfg_protect_plan *P,
		      nfg_protect_diff_cb cb, void *data, struct nfg_err *e)
{
	struct strv live = { 0 };
	const char **plan = NULL;
	unsigned int i, j, n = 0, diff = 0;
	bool stop = false;
	int ret;

	if (!h || !P || !P->built || !P->online)
		return nfg_err_set(e, EINVAL, "a plan built through a handle is needed");
	/* what the plan installs: its "add" operations, as on an empty ruleset */
	plan = calloc(P->log.v.n + 1, sizeof(*plan));
	if (!plan)
		return nfg_err_set(e, ENOMEM, "out of memory");
	for (i = 0; i < P->log.v.n; i++)
		if (!strncmp(P->log.v.v[i], "add ", 4))
			plan[n++] = P->log.v.v[i];
	ret = show_collect(h, P->st, &live, e);
	if (ret < 0)
		goto out;
#define DIFF(kind, line)						\
	do {								\
		diff++;							\
		if (cb && !stop && cb(kind, line, data))		\
			stop = true;					\
	} while (0)
	for (i = 0; i < n; i++) {
		for (j = 0; j < live.n && strcmp(plan[i], live.v[j]); j++)
			;
		if (j == live.n)
			DIFF(NFG_PROTECT_MISSING, plan[i]);
	}
	for (j = 0; j < live.n; j++) {
		for (i = 0; i < n && strcmp(plan[i], live.v[j]); i++)
			;
		if (i == n)
			DIFF(NFG_PROTECT_UNEXPECTED, live.v[j]);
	}
	if (!diff && n == live.n) {
		for (i = 0; i < n && !strcmp(plan[i], live.v[i]); i++)
			;
		if (i < n)
			DIFF(NFG_PROTECT_REORDERED, live.v[i]);
	}
#undef DIFF
	ret = (int)diff;
out:
	strv_free(&live);
	free(plan);
	return ret;
}

int nfg_protect_render(const struct nfg_protect_plan *plan, enum nfg_protect_fmt fmt,
		       char **out, struct nfg_err *e)
{
	struct nfg_sbuf o = { 0 };
	struct recon r;
	unsigned int i;
	char *s;

	if (!out)
		return nfg_err_set(e, EINVAL, "no output pointer");
	*out = NULL;
	if (!plan)
		return nfg_err_set(e, EINVAL, "no plan");
	if (fmt != NFG_PROTECT_FMT_COMMAND && fmt != NFG_PROTECT_FMT_SCRIPT &&
	    fmt != NFG_PROTECT_FMT_JSON)
		return nfg_err_set(e, EINVAL, "unknown format %d", (int)fmt);
	recon_read(&r, &plan->log);
	if (fmt == NFG_PROTECT_FMT_JSON) {
		print_json(&o, &r, &plan->log);
	} else {
		print_command(&o, &r);
		for (i = 0; fmt == NFG_PROTECT_FMT_SCRIPT && i < plan->log.v.n; i++)
			if (plan->log.v.v[i][0] != '(')
				nfg_sbuf_add(&o, "# %s\n", plan->log.v.v[i]);
	}
	if (r.oom)
		o.oom = true;
	recon_free(&r);
	s = nfg_sbuf_take(&o);
	if (!s)
		return nfg_err_set(e, ENOMEM, "out of memory");
	*out = s;
	return (int)strlen(s);
}
