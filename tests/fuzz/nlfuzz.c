// SPDX-License-Identifier: GPL-2.0
/*
 * nfg-nlfuzz: seeded fuzzer for the nfguard generic netlink families.
 *
 *   nfg-nlfuzz [-f FAMILY] [-s SEED] [-n ITERS] [-b BATCH] [-C CMD]
 *              [-t NAME]... MODE
 *
 * MODE:
 *   fuzz       ITERS malformed or random requests. Every request built to
 *              be invalid must be answered with an error; after every BATCH
 *              requests (and at the end) the output of CMD (e.g.
 *              "nfguard set save") must equal its output at the start.
 *   batch      huge batches: ITERS invalid requests in one sendmsg (each
 *              acked with an error), one oversized request whose last
 *              element is bad, one request longer than the buffer claims.
 *   abandon    ITERS dumps of the first target (-t), each closed after its
 *              first chunk; the target's listing is unchanged afterwards.
 *   unpriv     every mutating command, well formed, on the targets: each
 *              must fail with EPERM (run it in a user namespace without
 *              CAP_NET_ADMIN over the netns, or as an unprivileged user).
 *   swap       ITERS swaps of the first two targets, each must succeed
 *              (run two with the targets in opposite orders: lock order).
 *   dumpdestroy  ITERS times: create a set (family table's "scratch"),
 *              fill it, start a dump, read one chunk, destroy the set
 *              while the dump holds it, read on (the snapshot must stay
 *              consistent), close. Provokes the last put from .done.
 *
 * The seed is printed; the same seed and arguments send the same requests.
 * Exit status: 0 all good, 1 a check failed (the request is printed), 2 usage
 * or setup error. Output ends with "N passed, N failed".
 *
 * Adding a family: write its attribute table, its command table and (for
 * semantic errors and the unpriv/dumpdestroy modes) a few generator
 * functions, and add an entry to fz_families[] (see "rangeset" below).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfguard_genl.h>
#include <linux/netfilter/xt_kconnlimit.h>

#include "../include/nfg_rng.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define FZ_BUFSZ	(4u << 20)
#define FZ_MAXTARGETS	8

/* ---- random numbers (xorshift64*), reproducible from the seed ---------- */

static uint64_t fz_rng;

static uint64_t rnd(void)
{
	return nfg_xorshift64s(&fz_rng);
}

static unsigned int rn(unsigned int n) { return n ? (unsigned int)(rnd() % n) : 0; }
static bool coin(unsigned int pct) { return rn(100) < pct; }

static void rnd_bytes(void *p, size_t n)
{
	uint8_t *b = p;

	while (n--)
		*b++ = (uint8_t)rnd();
}

/* ---- message building ----------------------------------------------------- */

enum fz_expect {
	FZ_REJECT,	/* must be answered with an error */
	FZ_ANY,		/* may succeed, must not change what CMD shows */
	FZ_EPERM,	/* must fail with EPERM */
};

struct fz_msg {
	struct nlmsghdr	*nlh;
	enum fz_expect	expect;
	char		what[160];	/* what was malformed, for the report */
};

static char fz_buf[FZ_BUFSZ] __attribute__((aligned(8)));
static uint32_t fz_seq;
static uint16_t fz_famid;

static struct nlmsghdr *msg_begin(void *buf, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = fz_famid;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++fz_seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

/* An attribute whose header claims @claim bytes of payload but has @len. */
static void put_raw(struct nlmsghdr *nlh, uint16_t type, uint16_t claim,
		    const void *data, size_t len)
{
	struct nlattr *a = mnl_nlmsg_get_payload_tail(nlh);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + claim);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nlh->nlmsg_len += MNL_ALIGN(NLA_HDRLEN + len);
}

static void put_str(struct nlmsghdr *nlh, uint16_t type, const char *s)
{
	mnl_attr_put_strz(nlh, type, s);
}

static struct nlattr *nest(struct nlmsghdr *nlh, uint16_t type, bool flag)
{
	struct nlattr *a = mnl_attr_nest_start(nlh, type);

	if (!flag)
		a->nla_type &= ~NLA_F_NESTED;
	return a;
}

/* ---- family description ----------------------------------------------------- */

enum fz_kind { K_STR, K_U8, K_U32, K_U64, K_NEST, K_BIN, K_FLAG };

struct fz_attrdesc {
	uint16_t	type;
	enum fz_kind	kind;
	uint16_t	maxlen;		/* K_STR (with NUL), K_BIN */
};

struct fz_cmddesc {
	uint8_t		cmd;
	uint32_t	required;	/* bit per attribute type */
	uint32_t	allowed;
	bool		mutates;	/* the unpriv pass sends it */
	bool		dump;		/* dump only: sent with NLM_F_DUMP */
};

struct fz_ctx;

struct fz_family {
	const char			*name;
	unsigned int			maxattr;
	const struct fz_attrdesc	*attrs;
	unsigned int			nattrs;
	const struct fz_cmddesc		*cmds;
	unsigned int			ncmds;
	/* a request that is invalid for a family-specific reason */
	void (*semantic)(struct fz_ctx *c, struct fz_msg *m);
	/* a well-formed mutating request on target @t, for the unpriv pass */
	unsigned int nvalid;
	void (*valid)(struct fz_ctx *c, struct fz_msg *m, unsigned int i);
	/* a dump of target @t (abandon) */
	void (*dump)(struct fz_ctx *c, struct fz_msg *m, const char *t);
	/* dumpdestroy: create+fill, destroy, as separate requests */
	void (*scratch_create)(struct fz_ctx *c, struct fz_msg *m, const char *n,
			       unsigned int part);
	unsigned int scratch_parts;
	void (*scratch_destroy)(struct fz_ctx *c, struct fz_msg *m, const char *n);
	/* swap mode: exchange the first two targets (a lock-order stressor) */
	void (*swap)(struct fz_ctx *c, struct fz_msg *m);
	/* batch mode: one request of about @size bytes whose last part is bad */
	void (*oversized)(struct fz_ctx *c, struct fz_msg *m, size_t size);
	/* modes other than dumpdestroy need -t targets */
	bool need_targets;
	/*
	 * Some mutating commands take no attribute at all (e.g. a flush):
	 * attribute soup sent to a mutating command gets an unknown
	 * attribute at the end, so that it must be rejected.
	 */
	bool soup_guard;
};

struct fz_ctx {
	const struct fz_family	*fam;
	const char		*targets[FZ_MAXTARGETS];
	unsigned int		ntargets;
	int			fd;
	char			*buf;
};

#define B(x) (1u << (x))

/* The name part of target @i ("NAME:4" -> "NAME"), "" when there is none. */
static const char *fz_target_name(struct fz_ctx *c, unsigned int i)
{
	static char name[64];
	const char *t;

	if (i >= c->ntargets)
		return "";
	t = c->targets[i];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(t, ":"), t);
	return name;
}

/* ---- rangeset ------------------------------------------------------------------ */

static const struct fz_attrdesc rs_attrs[] = {
	{ NFG_RS_A_NAME,	K_STR, 32 },
	{ NFG_RS_A_NAME2,	K_STR, 32 },
	{ NFG_RS_A_FAMILY,	K_U8, 0 },
	{ NFG_RS_A_MAXELEM,	K_U32, 0 },
	{ NFG_RS_A_COUNT,	K_U32, 0 },
	{ NFG_RS_A_REFS,	K_U32, 0 },
	{ NFG_RS_A_LOOKUPS,	K_U64, 0 },
	{ NFG_RS_A_HITS,	K_U64, 0 },
	{ NFG_RS_A_ELEMS,	K_NEST, 0 },
	{ NFG_RS_A_ELEM,	K_NEST, 0 },
	{ NFG_RS_A_PAD,		K_BIN, 8 },
	{ NFG_RS_A_MEMSIZE,	K_U64, 0 },
	{ NFG_RS_A_RESULT,	K_U8, 0 },
	{ NFG_RS_A_TIMEOUT,	K_U32, 0 },
	{ NFG_RS_A_EXPIRIES,	K_U64, 0 },
};

#define RS_N	B(NFG_RS_A_NAME)
#define RS_N2	B(NFG_RS_A_NAME2)
#define RS_E	B(NFG_RS_A_ELEMS)
static const struct fz_cmddesc rs_cmds[] = {
	{ NFG_RS_CMD_CREATE, RS_N | B(NFG_RS_A_FAMILY),
	  RS_N | B(NFG_RS_A_FAMILY) | B(NFG_RS_A_MAXELEM) |
	  B(NFG_RS_A_TIMEOUT), true, false },
	{ NFG_RS_CMD_DESTROY, RS_N, RS_N, true, false },
	{ NFG_RS_CMD_ADD, RS_N | RS_E, RS_N | RS_E | B(NFG_RS_A_TIMEOUT),
	  true, false },
	{ NFG_RS_CMD_DEL, RS_N | RS_E, RS_N | RS_E, true, false },
	{ NFG_RS_CMD_FLUSH, RS_N, RS_N, true, false },
	{ NFG_RS_CMD_TEST, RS_N | RS_E, RS_N | RS_E, false, false },
	{ NFG_RS_CMD_SWAP, RS_N | RS_N2, RS_N | RS_N2, true, false },
	{ NFG_RS_CMD_RENAME, RS_N | RS_N2, RS_N | RS_N2, true, false },
	{ NFG_RS_CMD_LIST, 0, RS_N, false, false },
};

static void rs_elem(struct nlmsghdr *nlh, const void *s, const void *e,
		    size_t alen)
{
	struct nlattr *el = nest(nlh, NFG_RS_A_ELEM, true);

	mnl_attr_put(nlh, NFG_RS_E_START, alen, s);
	mnl_attr_put(nlh, NFG_RS_E_END, alen, e);
	/* some expire within the run: the expiry work races the commands */
	if (coin(25))
		mnl_attr_put_u32(nlh, NFG_RS_E_TIMEOUT, rn(4));
	mnl_attr_nest_end(nlh, el);
}

/* A valid range of the target's family: [x, x + d]. */
static void rs_valid_elem(struct nlmsghdr *nlh, bool v6, uint32_t x, uint32_t d)
{
	uint8_t s[16] = { 0 }, e[16] = { 0 };
	uint32_t a = htonl(x), b = htonl(x + d);

	if (v6) {
		s[0] = e[0] = 0x20;
		s[1] = e[1] = 0x01;
		memcpy(s + 12, &a, 4);
		memcpy(e + 12, &b, 4);
		rs_elem(nlh, s, e, 16);
	} else {
		rs_elem(nlh, &a, &b, 4);
	}
}

/* Targets: "NAME:4" / "NAME:6" are sets of that family (given with -t). */
static const char *rs_target(struct fz_ctx *c, bool *v6)
{
	const char *t = c->targets[rn(c->ntargets)];
	const char *colon = strrchr(t, ':');
	static char name[64];

	*v6 = colon && colon[1] == '6';
	snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - t) : 63, t);
	return name;
}

static void rs_semantic(struct fz_ctx *c, struct fz_msg *m)
{
	uint8_t addr[32] = { 0 };
	struct nlattr *es, *el;
	unsigned int i, n;
	const char *t;
	bool v6;
	uint8_t cmd = coin(50) ? NFG_RS_CMD_ADD :
		      coin(50) ? NFG_RS_CMD_DEL : NFG_RS_CMD_TEST;
	unsigned int kind = rn(14);

	t = rs_target(c, &v6);
	m->nlh = msg_begin(c->buf, cmd, 0);
	m->expect = FZ_REJECT;
	if (kind >= 7 && kind <= 10) {
		/* set-level errors, not element errors */
		switch (kind) {
		case 7:
			m->nlh = msg_begin(c->buf, NFG_RS_CMD_CREATE, 0);
			put_str(m->nlh, NFG_RS_A_NAME, t);
			mnl_attr_put_u8(m->nlh, NFG_RS_A_FAMILY,
					v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
			snprintf(m->what, sizeof(m->what), "create existing %s", t);
			return;
		case 8:
			m->nlh = msg_begin(c->buf, NFG_RS_CMD_CREATE, 0);
			put_str(m->nlh, NFG_RS_A_NAME, "fz-new");
			i = rn(4);
			mnl_attr_put_u8(m->nlh, NFG_RS_A_FAMILY,
					i == 0 ? 0 : i == 1 ? 3 : i == 2 ? 7 : 255);
			snprintf(m->what, sizeof(m->what), "create with bad family");
			return;
		case 9:
			m->nlh = msg_begin(c->buf, NFG_RS_CMD_CREATE, 0);
			put_str(m->nlh, NFG_RS_A_NAME, "fz-new");
			mnl_attr_put_u8(m->nlh, NFG_RS_A_FAMILY, NFPROTO_IPV4);
			if (coin(33)) {
				mnl_attr_put_u32(m->nlh, NFG_RS_A_TIMEOUT,
						 NFG_RANGESET_TIMEOUT_MAX + 1 +
						 rn(1000));
				snprintf(m->what, sizeof(m->what),
					 "create with bad timeout");
				return;
			}
			mnl_attr_put_u32(m->nlh, NFG_RS_A_MAXELEM,
					 coin(50) ? 0 : (1u << 24) + 1 + rn(1000));
			snprintf(m->what, sizeof(m->what), "create with bad maxelem");
			return;
		case 10: {
			/* swap across families / rename onto an existing set */
			const char *a = c->targets[0], *b = c->targets[1 % c->ntargets];
			char na[64], nb[64];

			snprintf(na, sizeof(na), "%.*s", (int)(strrchr(a, ':') - a), a);
			snprintf(nb, sizeof(nb), "%.*s", (int)(strrchr(b, ':') - b), b);
			if (!strcmp(na, nb) ||
			    strrchr(a, ':')[1] == strrchr(b, ':')[1]) {
				m->nlh = msg_begin(c->buf, NFG_RS_CMD_DESTROY, 0);
				put_str(m->nlh, NFG_RS_A_NAME, "fz-absent");
				snprintf(m->what, sizeof(m->what), "destroy absent set");
				return;
			}
			m->nlh = msg_begin(c->buf, coin(50) ? NFG_RS_CMD_SWAP :
					   NFG_RS_CMD_RENAME, 0);
			put_str(m->nlh, NFG_RS_A_NAME, na);
			put_str(m->nlh, NFG_RS_A_NAME2, nb);
			snprintf(m->what, sizeof(m->what), "swap/rename %s %s", na, nb);
			return;
		}
		}
	}

	put_str(m->nlh, NFG_RS_A_NAME, t);
	es = nest(m->nlh, NFG_RS_A_ELEMS, true);
	/* some valid ranges first: the bad one must void the whole batch */
	n = cmd == NFG_RS_CMD_TEST ? 0 : rn(200);
	for (i = 0; i < n; i++)
		rs_valid_elem(m->nlh, v6, rnd(), rn(1000));
	switch (cmd == NFG_RS_CMD_TEST && kind == 11 ? 12 : kind) {
	case 0:	/* start > end */
		addr[v6 ? 15 : 3] = 9;
		addr[16 + (v6 ? 15 : 3)] = 1;
		rs_elem(m->nlh, addr, addr + 16, v6 ? 16 : 4);
		snprintf(m->what, sizeof(m->what), "start > end after %u elems", n);
		break;
	case 1:	/* the other family's length */
		rs_elem(m->nlh, addr, addr + 16, v6 ? 4 : 16);
		snprintf(m->what, sizeof(m->what), "wrong address length after %u", n);
		break;
	case 2:	/* start only */
		el = nest(m->nlh, NFG_RS_A_ELEM, true);
		mnl_attr_put(m->nlh, NFG_RS_E_START, v6 ? 16 : 4, addr);
		mnl_attr_nest_end(m->nlh, el);
		snprintf(m->what, sizeof(m->what), "element without end after %u", n);
		break;
	case 3:	/* odd lengths: 0, 5, 17, 3 */
		el = nest(m->nlh, NFG_RS_A_ELEM, true);
		i = rn(4);
		mnl_attr_put(m->nlh, NFG_RS_E_START,
			     i == 0 ? 0 : i == 1 ? 5 : i == 2 ? 17 : 3, addr);
		mnl_attr_put(m->nlh, NFG_RS_E_END, v6 ? 16 : 4, addr);
		mnl_attr_nest_end(m->nlh, el);
		snprintf(m->what, sizeof(m->what), "start of odd length after %u", n);
		break;
	case 4:	/* unknown attribute inside an element */
		el = nest(m->nlh, NFG_RS_A_ELEM, true);
		mnl_attr_put(m->nlh, NFG_RS_E_START, v6 ? 16 : 4, addr);
		mnl_attr_put(m->nlh, NFG_RS_E_END, v6 ? 16 : 4, addr);
		if (coin(50)) {
			/* or a timeout beyond the maximum */
			mnl_attr_put_u32(m->nlh, NFG_RS_E_TIMEOUT,
					 NFG_RANGESET_TIMEOUT_MAX + 1 + rnd() % 1000000);
			mnl_attr_nest_end(m->nlh, el);
			snprintf(m->what, sizeof(m->what), "element timeout too large after %u", n);
			break;
		}
		mnl_attr_put_u32(m->nlh, NFG_RS_E_MAX + 1 + rn(20), 1);
		mnl_attr_nest_end(m->nlh, el);
		snprintf(m->what, sizeof(m->what), "unknown element attribute after %u", n);
		break;
	case 5:	/* element nest without NLA_F_NESTED */
		el = nest(m->nlh, NFG_RS_A_ELEM, false);
		mnl_attr_put(m->nlh, NFG_RS_E_START, v6 ? 16 : 4, addr);
		mnl_attr_put(m->nlh, NFG_RS_E_END, v6 ? 16 : 4, addr);
		mnl_attr_nest_end(m->nlh, el);
		snprintf(m->what, sizeof(m->what), "element nest without NLA_F_NESTED after %u", n);
		break;
	case 6:	/* nests within nests */
		el = nest(m->nlh, NFG_RS_A_ELEM, true);
		for (i = 0; i < 1 + rn(30); i++)
			nest(m->nlh, coin(50) ? NFG_RS_A_ELEM : NFG_RS_A_ELEMS, true);
		mnl_attr_put(m->nlh, NFG_RS_E_START, v6 ? 16 : 4, addr);
		/* close them all: fix up lengths from the tail */
		{
			char *tail = mnl_nlmsg_get_payload_tail(m->nlh);
			char *p = (char *)el;

			while (p < tail) {
				struct nlattr *a = (struct nlattr *)p;

				if (!(a->nla_type & NLA_F_NESTED))
					break;
				a->nla_len = (uint16_t)(tail - p);
				p += NLA_HDRLEN;
			}
		}
		snprintf(m->what, sizeof(m->what), "deeply nested element after %u", n);
		break;
	case 11:	/* a second top-level element list with one bad item */
		mnl_attr_nest_end(m->nlh, es);
		es = nest(m->nlh, NFG_RS_A_ELEMS, true);
		rs_elem(m->nlh, addr, addr + 16, v6 ? 4 : 16);
		snprintf(m->what, sizeof(m->what), "bad element in a second ELEMS nest");
		break;
	case 12:	/* test takes exactly one element: send two */
		rs_valid_elem(m->nlh, v6, 1, 1);
		rs_valid_elem(m->nlh, v6, 5, 1);
		if (cmd != NFG_RS_CMD_TEST) {
			rs_elem(m->nlh, addr, addr + 16, v6 ? 4 : 16);
			snprintf(m->what, sizeof(m->what), "wrong length after %u", n + 2);
		} else {
			snprintf(m->what, sizeof(m->what), "test with two elements");
		}
		break;
	default:	/* element of 8 bytes: too short to hold two addresses */
		put_raw(m->nlh, NFG_RS_A_ELEM | NLA_F_NESTED, 4, addr, 4);
		snprintf(m->what, sizeof(m->what), "short element after %u", n);
		break;
	}
	mnl_attr_nest_end(m->nlh, es);
	if (kind == 5 || kind == 6)
		m->expect = FZ_REJECT;
}

static void rs_valid(struct fz_ctx *c, struct fz_msg *m, unsigned int i)
{
	struct nlattr *es;
	const char *t;
	bool v6;

	t = rs_target(c, &v6);
	m->expect = FZ_EPERM;
	switch (i) {
	case 0:
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_CREATE, 0);
		put_str(m->nlh, NFG_RS_A_NAME, "fz-unpriv");
		mnl_attr_put_u8(m->nlh, NFG_RS_A_FAMILY, NFPROTO_IPV4);
		snprintf(m->what, sizeof(m->what), "create");
		return;
	case 1:
	case 2:
		m->nlh = msg_begin(c->buf, i == 1 ? NFG_RS_CMD_ADD : NFG_RS_CMD_DEL, 0);
		put_str(m->nlh, NFG_RS_A_NAME, t);
		es = nest(m->nlh, NFG_RS_A_ELEMS, true);
		rs_valid_elem(m->nlh, v6, 0x0a000001, 10);
		mnl_attr_nest_end(m->nlh, es);
		snprintf(m->what, sizeof(m->what), "%s %s", i == 1 ? "add" : "del", t);
		return;
	case 3:
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_FLUSH, 0);
		put_str(m->nlh, NFG_RS_A_NAME, t);
		snprintf(m->what, sizeof(m->what), "flush %s", t);
		return;
	case 4:
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_DESTROY, 0);
		put_str(m->nlh, NFG_RS_A_NAME, t);
		snprintf(m->what, sizeof(m->what), "destroy %s", t);
		return;
	case 5:
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_RENAME, 0);
		put_str(m->nlh, NFG_RS_A_NAME, t);
		put_str(m->nlh, NFG_RS_A_NAME2, "fz-renamed");
		snprintf(m->what, sizeof(m->what), "rename %s", t);
		return;
	case 6:
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_SWAP, 0);
		put_str(m->nlh, NFG_RS_A_NAME, t);
		put_str(m->nlh, NFG_RS_A_NAME2, t);
		snprintf(m->what, sizeof(m->what), "swap %s %s", t, t);
		return;
	case 7:
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_TEST, 0);
		put_str(m->nlh, NFG_RS_A_NAME, t);
		es = nest(m->nlh, NFG_RS_A_ELEMS, true);
		rs_valid_elem(m->nlh, v6, 1, 0);
		mnl_attr_nest_end(m->nlh, es);
		snprintf(m->what, sizeof(m->what), "test %s", t);
		return;
	default:
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_LIST, NLM_F_DUMP);
		if (i == 9)
			put_str(m->nlh, NFG_RS_A_NAME, t);
		snprintf(m->what, sizeof(m->what), "list dump%s", i == 9 ? " of a set" : "");
		return;
	}
}

static void rs_dump(struct fz_ctx *c, struct fz_msg *m, const char *t)
{
	m->nlh = msg_begin(c->buf, NFG_RS_CMD_LIST, NLM_F_DUMP);
	put_str(m->nlh, NFG_RS_A_NAME, t);
	m->expect = FZ_ANY;
	snprintf(m->what, sizeof(m->what), "dump %s", t);
}

/* part 0 creates the set, parts 1.. add 2000 disjoint ranges each */
static void rs_scratch_create(struct fz_ctx *c, struct fz_msg *m, const char *n,
			      unsigned int part)
{
	struct nlattr *es;
	unsigned int i;

	m->expect = FZ_ANY;
	if (!part) {
		m->nlh = msg_begin(c->buf, NFG_RS_CMD_CREATE, 0);
		put_str(m->nlh, NFG_RS_A_NAME, n);
		mnl_attr_put_u8(m->nlh, NFG_RS_A_FAMILY, NFPROTO_IPV4);
		snprintf(m->what, sizeof(m->what), "create %s", n);
		return;
	}
	m->nlh = msg_begin(c->buf, NFG_RS_CMD_ADD, 0);
	put_str(m->nlh, NFG_RS_A_NAME, n);
	es = nest(m->nlh, NFG_RS_A_ELEMS, true);
	for (i = 0; i < 2000; i++)
		rs_valid_elem(m->nlh, false, 0x0a000000 + (part * 2000 + i) * 4, 1);
	mnl_attr_nest_end(m->nlh, es);
	snprintf(m->what, sizeof(m->what), "fill %s part %u", n, part);
}

static void rs_scratch_destroy(struct fz_ctx *c, struct fz_msg *m, const char *n)
{
	m->nlh = msg_begin(c->buf, NFG_RS_CMD_DESTROY, 0);
	put_str(m->nlh, NFG_RS_A_NAME, n);
	m->expect = FZ_ANY;
	snprintf(m->what, sizeof(m->what), "destroy %s", n);
}

static void rs_swap(struct fz_ctx *c, struct fz_msg *m)
{
	const char *a = c->targets[0], *b = c->targets[1 % c->ntargets];
	char na[64], nb[64];

	snprintf(na, sizeof(na), "%.*s", (int)strcspn(a, ":"), a);
	snprintf(nb, sizeof(nb), "%.*s", (int)strcspn(b, ":"), b);
	m->nlh = msg_begin(c->buf, NFG_RS_CMD_SWAP, 0);
	put_str(m->nlh, NFG_RS_A_NAME, na);
	put_str(m->nlh, NFG_RS_A_NAME2, nb);
	m->expect = FZ_ANY;
	snprintf(m->what, sizeof(m->what), "swap %s %s", na, nb);
}

/* ADD of many valid ranges in nests of 1000, the last range bad */
static void rs_oversized(struct fz_ctx *c, struct fz_msg *m, size_t size)
{
	const char *t = c->targets[0], *colon = strrchr(t, ':');
	bool v6 = colon && colon[1] == '6';
	struct nlattr *es = NULL;
	uint8_t addr[16] = { 0 };
	unsigned int i;
	char name[64];

	snprintf(name, sizeof(name), "%.*s", (int)(colon - t), t);
	m->nlh = msg_begin(c->buf, NFG_RS_CMD_ADD, 0);
	put_str(m->nlh, NFG_RS_A_NAME, name);
	for (i = 0; m->nlh->nlmsg_len < size; i++) {
		if (i % 1000 == 0) {
			if (es)
				mnl_attr_nest_end(m->nlh, es);
			es = nest(m->nlh, NFG_RS_A_ELEMS, true);
		}
		rs_valid_elem(m->nlh, v6, 0x0b000000 + i * 4, 1);
	}
	rs_elem(m->nlh, addr, addr, v6 ? 4 : 16);
	mnl_attr_nest_end(m->nlh, es);
	snprintf(m->what, sizeof(m->what), "%u ranges in %u bytes, the last bad", i + 1,
		 m->nlh->nlmsg_len);
}

/* ---- kconnlimit ----------------------------------------------------------------- */

static const struct fz_attrdesc kcl_attrs[] = {
	{ NFG_KCL_A_ID,			K_U32, 0 },
	{ NFG_KCL_A_NAME,		K_STR, XT_KCONNLIMIT_MAXNAMELEN },
	{ NFG_KCL_A_FAMILY,		K_U8, 0 },
	{ NFG_KCL_A_PREFIX,		K_U8, 0 },
	{ NFG_KCL_A_FLAGS,		K_U8, 0 },
	{ NFG_KCL_A_LIMIT,		K_U32, 0 },
	{ NFG_KCL_A_KEYS,		K_U32, 0 },
	{ NFG_KCL_A_CONNS,		K_U32, 0 },
	{ NFG_KCL_A_SLOTS,		K_U32, 0 },
	{ NFG_KCL_A_LOCKS,		K_U32, 0 },
	{ NFG_KCL_A_MEMSIZE,		K_U64, 0 },
	{ NFG_KCL_A_MATCHED,		K_U64, 0 },
	{ NFG_KCL_A_OVER_LIMIT,		K_U64, 0 },
	{ NFG_KCL_A_INSERTS,		K_U64, 0 },
	{ NFG_KCL_A_GC_EVICTIONS,	K_U64, 0 },
	{ NFG_KCL_A_CAP_HITS,		K_U64, 0 },
	{ NFG_KCL_A_ALLOC_FAIL,		K_U64, 0 },
	{ NFG_KCL_A_TOTAL_CONNS,	K_U64, 0 },
	{ NFG_KCL_A_MAX_CONNS,		K_U64, 0 },
	{ NFG_KCL_A_COUNT,		K_U32, 0 },
	{ NFG_KCL_A_ENTRIES,		K_NEST, 0 },
	{ NFG_KCL_A_ENTRY,		K_NEST, 0 },
	{ NFG_KCL_A_PAD,		K_BIN, 8 },
};

/* Both commands are dumps that change nothing (the policy: NAME [, COUNT]). */
static const struct fz_cmddesc kcl_cmds[] = {
	{ NFG_KCL_CMD_LIST, 0, B(NFG_KCL_A_NAME), false, true },
	{ NFG_KCL_CMD_TOP, 0, B(NFG_KCL_A_NAME) | B(NFG_KCL_A_COUNT), false, true },
};

static void kcl_semantic(struct fz_ctx *c, struct fz_msg *m)
{
	uint8_t cmd = coin(50) ? NFG_KCL_CMD_LIST : NFG_KCL_CMD_TOP;
	const char *t = fz_target_name(c, rn(c->ntargets ? c->ntargets : 1));
	unsigned int kind = rn(8), len;
	char s[80];

	m->expect = FZ_REJECT;
	m->nlh = msg_begin(c->buf, kind < 2 ? NFG_KCL_CMD_TOP : cmd,
			   kind == 6 ? 0 : NLM_F_DUMP);
	switch (kind) {
	case 0:
		put_str(m->nlh, NFG_KCL_A_NAME, t);
		mnl_attr_put_u32(m->nlh, NFG_KCL_A_COUNT, 0);
		snprintf(m->what, sizeof(m->what), "top %s count 0", t);
		return;
	case 1:
		mnl_attr_put_u32(m->nlh, NFG_KCL_A_COUNT, NFG_KCL_TOP_MAX + 1 + rn(1u << 30));
		snprintf(m->what, sizeof(m->what), "top count above the maximum");
		return;
	case 2:	/* a name of 32..79 characters */
		len = XT_KCONNLIMIT_MAXNAMELEN + rn(48);
		memset(s, 'Z', len);
		s[len] = 0;
		put_str(m->nlh, NFG_KCL_A_NAME, s);
		snprintf(m->what, sizeof(m->what), "cmd %u name of %u characters", cmd, len);
		return;
	case 3:	/* a name without its NUL */
		len = strlen(t) ? strlen(t) : 1;
		memset(s, 'Z', sizeof(s));
		memcpy(s, t, strlen(t));
		put_raw(m->nlh, NFG_KCL_A_NAME, (uint16_t)len, s, len);
		snprintf(m->what, sizeof(m->what), "cmd %u name without NUL", cmd);
		return;
	case 4:	/* count as a u16 */
		m->nlh = msg_begin(c->buf, NFG_KCL_CMD_TOP, NLM_F_DUMP);
		put_raw(m->nlh, NFG_KCL_A_COUNT, 2, "\x05\x00", 2);
		snprintf(m->what, sizeof(m->what), "top count of 2 bytes");
		return;
	case 5:	/* LIST does not take a count */
		m->nlh = msg_begin(c->buf, NFG_KCL_CMD_LIST, NLM_F_DUMP);
		put_str(m->nlh, NFG_KCL_A_NAME, t);
		mnl_attr_put_u32(m->nlh, NFG_KCL_A_COUNT, 5);
		snprintf(m->what, sizeof(m->what), "list %s with a count", t);
		return;
	case 6:	/* a dump-only command without NLM_F_DUMP */
		put_str(m->nlh, NFG_KCL_A_NAME, t);
		snprintf(m->what, sizeof(m->what), "cmd %u without NLM_F_DUMP", cmd);
		return;
	default: {	/* reply-only attributes in a request */
		struct nlattr *es = nest(m->nlh, NFG_KCL_A_ENTRIES, true);
		struct nlattr *e = nest(m->nlh, NFG_KCL_A_ENTRY, true);

		mnl_attr_put_u32(m->nlh, NFG_KCL_E_COUNT, 1);
		mnl_attr_nest_end(m->nlh, e);
		mnl_attr_nest_end(m->nlh, es);
		snprintf(m->what, sizeof(m->what), "cmd %u with an entries nest", cmd);
		return;
	}
	}
}

static void kcl_valid(struct fz_ctx *c, struct fz_msg *m, unsigned int i)
{
	const char *t = fz_target_name(c, rn(c->ntargets ? c->ntargets : 1));

	m->expect = FZ_EPERM;
	m->nlh = msg_begin(c->buf, i < 2 ? NFG_KCL_CMD_LIST : NFG_KCL_CMD_TOP, NLM_F_DUMP);
	if (i % 2)
		put_str(m->nlh, NFG_KCL_A_NAME, t);
	if (i == 3)
		mnl_attr_put_u32(m->nlh, NFG_KCL_A_COUNT, 5);
	snprintf(m->what, sizeof(m->what), "%s%s%s", i < 2 ? "list" : "top",
		 i % 2 ? " " : "", i % 2 ? t : "");
}

/* LIST or TOP (10000 keys each) of every rule */
static void kcl_dump(struct fz_ctx *c, struct fz_msg *m, const char *t)
{
	bool top = coin(50);

	(void)t;
	m->nlh = msg_begin(c->buf, top ? NFG_KCL_CMD_TOP : NFG_KCL_CMD_LIST, NLM_F_DUMP);
	if (top)
		mnl_attr_put_u32(m->nlh, NFG_KCL_A_COUNT, NFG_KCL_TOP_MAX);
	m->expect = FZ_ANY;
	snprintf(m->what, sizeof(m->what), "%s dump", top ? "top" : "list");
}

/* TOP with the name given again and again, then a count of 0 */
static void kcl_oversized(struct fz_ctx *c, struct fz_msg *m, size_t size)
{
	const char *t = fz_target_name(c, 0);
	unsigned int n;

	m->nlh = msg_begin(c->buf, NFG_KCL_CMD_TOP, NLM_F_DUMP);
	for (n = 0; m->nlh->nlmsg_len < size; n++)
		put_str(m->nlh, NFG_KCL_A_NAME, t);
	mnl_attr_put_u32(m->nlh, NFG_KCL_A_COUNT, 0);
	snprintf(m->what, sizeof(m->what), "top with %u names in %u bytes, count 0", n,
		 m->nlh->nlmsg_len);
}

/* ---- syncookie ------------------------------------------------------------------ */

static const struct fz_attrdesc sc_attrs[] = {
	{ NFG_SC_A_FAMILY,		K_U8, 0 },
	{ NFG_SC_A_ADDR,		K_BIN, 16 },
	{ NFG_SC_A_PREFIX,		K_U8, 0 },
	{ NFG_SC_A_TIMEOUT,		K_U32, 0 },
	{ NFG_SC_A_SECRET,		K_BIN, NFG_SC_SECRET_LEN },
	{ NFG_SC_A_COUNT,		K_U32, 0 },
	{ NFG_SC_A_MAX_ENTRIES,		K_U32, 0 },
	{ NFG_SC_A_PAD,			K_BIN, 8 },
	{ NFG_SC_A_SYN_SEEN,		K_U64, 0 },
	{ NFG_SC_A_COOKIE_SENT,		K_U64, 0 },
	{ NFG_SC_A_ACK_VALID,		K_U64, 0 },
	{ NFG_SC_A_ACK_INVALID,		K_U64, 0 },
	{ NFG_SC_A_ALLOWLIST_HIT,	K_U64, 0 },
	{ NFG_SC_A_ALLOWLIST_ADD,	K_U64, 0 },
	{ NFG_SC_A_ALLOWLIST_EVICT,	K_U64, 0 },
	{ NFG_SC_A_PROXIED,		K_U64, 0 },
	{ NFG_SC_A_MALFORMED,		K_U64, 0 },
	{ NFG_SC_A_SEND_FAIL,		K_U64, 0 },
	{ NFG_SC_A_SENT_INPLACE,	K_U64, 0 },
	{ NFG_SC_A_SYN_RESENT,		K_U64, 0 },
	{ NFG_SC_A_AFTER_CONNTRACK,	K_U64, 0 },
};

/* One policy for every command: these four, the rest are reply-only. */
#define SC_P	(B(NFG_SC_A_ADDR) | B(NFG_SC_A_PREFIX) | B(NFG_SC_A_TIMEOUT) | B(NFG_SC_A_SECRET))
static const struct fz_cmddesc sc_cmds[] = {
	{ NFG_SC_CMD_STATS, 0, SC_P, false, false },
	{ NFG_SC_CMD_AL_LIST, 0, SC_P, false, true },
	{ NFG_SC_CMD_AL_ADD, B(NFG_SC_A_ADDR), SC_P, true, false },
	{ NFG_SC_CMD_AL_DEL, B(NFG_SC_A_ADDR), SC_P, true, false },
	{ NFG_SC_CMD_AL_FLUSH, 0, SC_P, true, false },
	{ NFG_SC_CMD_SECRET_SET, B(NFG_SC_A_SECRET), SC_P, true, false },
	{ NFG_SC_CMD_SECRET_ROTATE, 0, SC_P, true, false },
};

/*
 * Addresses the fuzz case never puts on the allowlist (TEST-NET-2 and a
 * documentation /48): deleting one must fail.
 */
static void sc_absent_addr(struct nlmsghdr *nlh, bool v6)
{
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff };

	if (v6) {
		a[15] = (uint8_t)rnd();
		mnl_attr_put(nlh, NFG_SC_A_ADDR, 16, a);
	} else {
		a[0] = 198;
		a[1] = 51;
		a[2] = 100;
		a[3] = (uint8_t)rnd();
		mnl_attr_put(nlh, NFG_SC_A_ADDR, 4, a);
	}
}

static void sc_semantic(struct fz_ctx *c, struct fz_msg *m)
{
	unsigned int kind = rn(10), len;
	uint8_t junk[32];
	bool v6 = coin(50);

	(void)c;
	rnd_bytes(junk, sizeof(junk));
	m->expect = FZ_REJECT;
	m->nlh = msg_begin(c->buf, kind == 4 || kind == 9 ? NFG_SC_CMD_AL_DEL :
			   kind == 5 || kind == 6 ? NFG_SC_CMD_SECRET_SET :
			   NFG_SC_CMD_AL_ADD, 0);
	switch (kind) {
	case 0:	/* an IPv4 prefix above 32 */
		sc_absent_addr(m->nlh, false);
		mnl_attr_put_u8(m->nlh, NFG_SC_A_PREFIX, (uint8_t)(33 + rn(96)));
		snprintf(m->what, sizeof(m->what), "allowlist add: IPv4 prefix above 32");
		return;
	case 1:	/* an address of neither 4 nor 16 bytes (the policy allows 4..16) */
		len = 5 + rn(11);
		put_raw(m->nlh, NFG_SC_A_ADDR, (uint16_t)len, junk, len);
		snprintf(m->what, sizeof(m->what), "allowlist add: address of %u bytes", len);
		return;
	case 2:
		sc_absent_addr(m->nlh, v6);
		mnl_attr_put_u32(m->nlh, NFG_SC_A_TIMEOUT, 7 * 24 * 3600 + 1 + rn(1u << 30));
		snprintf(m->what, sizeof(m->what), "allowlist add: timeout above 7 days");
		return;
	case 3:
		sc_absent_addr(m->nlh, v6);
		mnl_attr_put_u32(m->nlh, NFG_SC_A_TIMEOUT, 0);
		snprintf(m->what, sizeof(m->what), "allowlist add: timeout 0");
		return;
	case 4:
		sc_absent_addr(m->nlh, v6);
		snprintf(m->what, sizeof(m->what), "allowlist del of an absent entry");
		return;
	case 5:
		snprintf(m->what, sizeof(m->what), "secret set without a secret");
		return;
	case 6:
		len = coin(50) ? NFG_SC_SECRET_LEN - 1 - rn(8) : NFG_SC_SECRET_LEN + 1 + rn(8);
		put_raw(m->nlh, NFG_SC_A_SECRET, (uint16_t)len, junk, len);
		snprintf(m->what, sizeof(m->what), "secret of %u bytes", len);
		return;
	case 7:
		sc_absent_addr(m->nlh, v6);
		mnl_attr_put_u8(m->nlh, NFG_SC_A_PREFIX, 0);
		snprintf(m->what, sizeof(m->what), "allowlist add: prefix 0");
		return;
	case 8:	/* the dump without NLM_F_DUMP, the doit with it */
		if (coin(50)) {
			m->nlh = msg_begin(c->buf, NFG_SC_CMD_AL_LIST, 0);
			snprintf(m->what, sizeof(m->what), "allowlist list without NLM_F_DUMP");
		} else {
			m->nlh = msg_begin(c->buf, NFG_SC_CMD_STATS, NLM_F_DUMP);
			snprintf(m->what, sizeof(m->what), "stats as a dump");
		}
		return;
	default:	/* a prefix above 128 */
		sc_absent_addr(m->nlh, true);
		mnl_attr_put_u8(m->nlh, NFG_SC_A_PREFIX, (uint8_t)(129 + rn(127)));
		snprintf(m->what, sizeof(m->what), "allowlist del: prefix above 128");
		return;
	}
}

static void sc_valid(struct fz_ctx *c, struct fz_msg *m, unsigned int i)
{
	static const uint8_t key[NFG_SC_SECRET_LEN] = "fz-secret-16-by";
	static const uint8_t cmds[] = {
		NFG_SC_CMD_STATS, NFG_SC_CMD_AL_LIST, NFG_SC_CMD_AL_ADD,
		NFG_SC_CMD_AL_DEL, NFG_SC_CMD_AL_FLUSH, NFG_SC_CMD_SECRET_SET,
		NFG_SC_CMD_SECRET_ROTATE,
	};
	uint8_t a[4] = { 10, 77, 0, 1 };

	(void)c;
	m->expect = FZ_EPERM;
	m->nlh = msg_begin(c->buf, cmds[i % sizeof(cmds)], i == 1 ? NLM_F_DUMP : 0);
	if (i == 2 || i == 3) {
		mnl_attr_put(m->nlh, NFG_SC_A_ADDR, 4, a);
		mnl_attr_put_u8(m->nlh, NFG_SC_A_PREFIX, 24);
	}
	if (i == 2)
		mnl_attr_put_u32(m->nlh, NFG_SC_A_TIMEOUT, 600);
	if (i == 5)
		mnl_attr_put(m->nlh, NFG_SC_A_SECRET, sizeof(key), key);
	snprintf(m->what, sizeof(m->what), "syncookie cmd %u", cmds[i % sizeof(cmds)]);
}

static void sc_dump(struct fz_ctx *c, struct fz_msg *m, const char *t)
{
	(void)t;
	m->nlh = msg_begin(c->buf, NFG_SC_CMD_AL_LIST, NLM_F_DUMP);
	m->expect = FZ_ANY;
	snprintf(m->what, sizeof(m->what), "allowlist dump");
}

/* AL_ADD with a good address again and again, the last one of 5 bytes */
static void sc_oversized(struct fz_ctx *c, struct fz_msg *m, size_t size)
{
	uint8_t a[5] = { 10, 78, 0, 1, 0 };
	unsigned int n;

	m->nlh = msg_begin(c->buf, NFG_SC_CMD_AL_ADD, 0);
	for (n = 0; m->nlh->nlmsg_len < size; n++)
		mnl_attr_put(m->nlh, NFG_SC_A_ADDR, 4, a);
	mnl_attr_put(m->nlh, NFG_SC_A_ADDR, 5, a);
	snprintf(m->what, sizeof(m->what), "allowlist add with %u addresses in %u bytes, the last of 5",
		 n + 1, m->nlh->nlmsg_len);
}

/* ---- rtcache -------------------------------------------------------------------- */

static const struct fz_attrdesc rtc_attrs[] = {
	{ NFG_RTC_A_FAMILY,		K_U8, 0 },
	{ NFG_RTC_A_DIR,		K_U8, 0 },
	{ NFG_RTC_A_SRC,		K_BIN, 16 },
	{ NFG_RTC_A_DST,		K_BIN, 16 },
	{ NFG_RTC_A_IIF,		K_U32, 0 },
	{ NFG_RTC_A_OIF,		K_U32, 0 },
	{ NFG_RTC_A_MARK,		K_U32, 0 },
	{ NFG_RTC_A_DSCP,		K_U8, 0 },
	{ NFG_RTC_A_AGE_MS,		K_U32, 0 },
	{ NFG_RTC_A_IDLE_MS,		K_U32, 0 },
	{ NFG_RTC_A_COUNT,		K_U32, 0 },
	{ NFG_RTC_A_MAX_ENTRIES,	K_U32, 0 },
	{ NFG_RTC_A_PAD,		K_BIN, 8 },
	{ NFG_RTC_A_HIT,		K_U64, 0 },
	{ NFG_RTC_A_MISS,		K_U64, 0 },
	{ NFG_RTC_A_LEARN,		K_U64, 0 },
	{ NFG_RTC_A_INVALID,		K_U64, 0 },
	{ NFG_RTC_A_EVICT,		K_U64, 0 },
};

static const struct fz_cmddesc rtc_cmds[] = {
	{ NFG_RTC_CMD_STATS, 0, 0, false, false },
	{ NFG_RTC_CMD_LIST, 0, 0, false, true },
	{ NFG_RTC_CMD_FLUSH, 0, B(NFG_RTC_A_FAMILY), true, false },
};

static uint8_t rtc_bad_family(void)
{
	static const uint8_t bad[] = { 0, 1, 3, 5, 7, 12, 255 };

	return bad[rn(sizeof(bad))];
}

static void rtc_semantic(struct fz_ctx *c, struct fz_msg *m)
{
	unsigned int kind = rn(6);
	uint8_t f;

	m->expect = FZ_REJECT;
	switch (kind) {
	case 0:
	case 1:
		f = rtc_bad_family();
		m->nlh = msg_begin(c->buf, NFG_RTC_CMD_FLUSH, 0);
		mnl_attr_put_u8(m->nlh, NFG_RTC_A_FAMILY, f);
		snprintf(m->what, sizeof(m->what), "flush family %u", f);
		return;
	case 2:	/* STATS and LIST take no attribute */
		m->nlh = msg_begin(c->buf, coin(50) ? NFG_RTC_CMD_STATS : NFG_RTC_CMD_LIST,
				   coin(50) ? NLM_F_DUMP : 0);
		mnl_attr_put_u8(m->nlh, NFG_RTC_A_FAMILY, NFPROTO_IPV4);
		snprintf(m->what, sizeof(m->what), "stats/list with a family");
		return;
	case 3:
		m->nlh = msg_begin(c->buf, NFG_RTC_CMD_FLUSH, 0);
		mnl_attr_put_u32(m->nlh, NFG_RTC_A_FAMILY, NFPROTO_IPV4);
		snprintf(m->what, sizeof(m->what), "flush family as a u32");
		return;
	case 4:
		if (coin(50)) {
			m->nlh = msg_begin(c->buf, NFG_RTC_CMD_LIST, 0);
			snprintf(m->what, sizeof(m->what), "list without NLM_F_DUMP");
		} else {
			m->nlh = msg_begin(c->buf, NFG_RTC_CMD_STATS, NLM_F_DUMP);
			snprintf(m->what, sizeof(m->what), "stats as a dump");
		}
		return;
	default:
		m->nlh = msg_begin(c->buf, NFG_RTC_CMD_FLUSH, 0);
		mnl_attr_put_u8(m->nlh, NFG_RTC_A_FAMILY, NFPROTO_IPV4);
		mnl_attr_put_u8(m->nlh, NFG_RTC_A_DIR, 0);
		snprintf(m->what, sizeof(m->what), "flush family ipv4 and a direction");
		return;
	}
}

static void rtc_valid(struct fz_ctx *c, struct fz_msg *m, unsigned int i)
{
	m->expect = FZ_EPERM;
	switch (i) {
	case 0:
		m->nlh = msg_begin(c->buf, NFG_RTC_CMD_STATS, 0);
		snprintf(m->what, sizeof(m->what), "stats");
		return;
	case 1:
		m->nlh = msg_begin(c->buf, NFG_RTC_CMD_LIST, NLM_F_DUMP);
		snprintf(m->what, sizeof(m->what), "list");
		return;
	default:
		m->nlh = msg_begin(c->buf, NFG_RTC_CMD_FLUSH, 0);
		if (i > 2)
			mnl_attr_put_u8(m->nlh, NFG_RTC_A_FAMILY,
					i == 3 ? NFPROTO_IPV4 : NFPROTO_IPV6);
		snprintf(m->what, sizeof(m->what), "flush%s", i == 3 ? " ipv4" : i == 4 ? " ipv6" : "");
		return;
	}
}

static void rtc_dump(struct fz_ctx *c, struct fz_msg *m, const char *t)
{
	(void)t;
	m->nlh = msg_begin(c->buf, NFG_RTC_CMD_LIST, NLM_F_DUMP);
	m->expect = FZ_ANY;
	snprintf(m->what, sizeof(m->what), "list dump");
}

/* FLUSH with family ipv4 again and again, the last one 7 */
static void rtc_oversized(struct fz_ctx *c, struct fz_msg *m, size_t size)
{
	unsigned int n;

	m->nlh = msg_begin(c->buf, NFG_RTC_CMD_FLUSH, 0);
	for (n = 0; m->nlh->nlmsg_len < size; n++)
		mnl_attr_put_u8(m->nlh, NFG_RTC_A_FAMILY, NFPROTO_IPV4);
	mnl_attr_put_u8(m->nlh, NFG_RTC_A_FAMILY, 7);
	snprintf(m->what, sizeof(m->what), "flush with %u families in %u bytes, the last 7",
		 n + 1, m->nlh->nlmsg_len);
}

/* ---- the families ------------------------------------------------------------- */

static const struct fz_family fz_families[] = {
	{
		.name		= NFG_RANGESET_GENL_NAME,
		.maxattr	= NFG_RS_A_MAX,
		.attrs		= rs_attrs,
		.nattrs		= sizeof(rs_attrs) / sizeof(rs_attrs[0]),
		.cmds		= rs_cmds,
		.ncmds		= sizeof(rs_cmds) / sizeof(rs_cmds[0]),
		.semantic	= rs_semantic,
		.nvalid		= 10,
		.valid		= rs_valid,
		.dump		= rs_dump,
		.scratch_create	= rs_scratch_create,
		.scratch_parts	= 6,
		.scratch_destroy = rs_scratch_destroy,
		.swap		= rs_swap,
		.oversized	= rs_oversized,
		.need_targets	= true,
	},
	{
		.name		= NFG_KCONNLIMIT_GENL_NAME,
		.maxattr	= NFG_KCL_A_MAX,
		.attrs		= kcl_attrs,
		.nattrs		= sizeof(kcl_attrs) / sizeof(kcl_attrs[0]),
		.cmds		= kcl_cmds,
		.ncmds		= sizeof(kcl_cmds) / sizeof(kcl_cmds[0]),
		.semantic	= kcl_semantic,
		.nvalid		= 4,
		.valid		= kcl_valid,
		.dump		= kcl_dump,
		.oversized	= kcl_oversized,
	},
	{
		.name		= NFG_SYNCOOKIE_GENL_NAME,
		.maxattr	= NFG_SC_A_MAX,
		.attrs		= sc_attrs,
		.nattrs		= sizeof(sc_attrs) / sizeof(sc_attrs[0]),
		.cmds		= sc_cmds,
		.ncmds		= sizeof(sc_cmds) / sizeof(sc_cmds[0]),
		.semantic	= sc_semantic,
		.nvalid		= 7,
		.valid		= sc_valid,
		.dump		= sc_dump,
		.oversized	= sc_oversized,
		.soup_guard	= true,
	},
	{
		.name		= NFG_RTCACHE_GENL_NAME,
		.maxattr	= NFG_RTC_A_MAX,
		.attrs		= rtc_attrs,
		.nattrs		= sizeof(rtc_attrs) / sizeof(rtc_attrs[0]),
		.cmds		= rtc_cmds,
		.ncmds		= sizeof(rtc_cmds) / sizeof(rtc_cmds[0]),
		.semantic	= rtc_semantic,
		.nvalid		= 5,
		.valid		= rtc_valid,
		.dump		= rtc_dump,
		.oversized	= rtc_oversized,
		.soup_guard	= true,
	},
};

/* ---- generic malformations, driven by the tables -------------------------------- */

/* Names no target has: a request naming only these cannot change a set. */
static void absent_name(char *s, size_t n)
{
	size_t len = 1 + rn((unsigned int)(n - 2)), i;

	for (i = 0; i < len; i++)
		s[i] = (char)('a' + rn(26));
	s[0] = 'Z';	/* targets never start with 'Z' */
	s[len] = 0;
}

/* A well-typed value for attribute @d that names nothing and is invalid. */
static void put_typed(struct nlmsghdr *nlh, const struct fz_attrdesc *d)
{
	char s[64];
	uint64_t v = rnd();

	switch (d->kind) {
	case K_STR:
		absent_name(s, sizeof(s) < d->maxlen ? sizeof(s) : d->maxlen);
		put_str(nlh, d->type, s);
		break;
	case K_U8:
		/* never a valid address family of any table */
		mnl_attr_put_u8(nlh, d->type, (uint8_t)(11 + rn(200)));
		break;
	case K_U32:
		mnl_attr_put_u32(nlh, d->type, (uint32_t)v);
		break;
	case K_U64:
		mnl_attr_put_u64(nlh, d->type, v);
		break;
	case K_NEST: {
		struct nlattr *a = nest(nlh, d->type, true);

		if (coin(50))
			mnl_attr_put_u32(nlh, 1 + rn(4), (uint32_t)v);
		mnl_attr_nest_end(nlh, a);
		break;
	}
	default:
		put_raw(nlh, d->type, 8, &v, 8);
		break;
	}
}

/* A length longer than attribute @d may be. */
static unsigned int long_len(const struct fz_attrdesc *d)
{
	switch (d->kind) {
	case K_STR: return d->maxlen + 1 + rn(300);
	case K_U8: return 2 + rn(6);
	case K_U32: return 5 + rn(4);
	case K_U64: return 9 + rn(8);
	case K_BIN: return d->maxlen + 1 + rn(64);
	default: return 300;
	}
}

static const struct fz_attrdesc *attr_desc(const struct fz_family *f, unsigned int t)
{
	unsigned int i;

	for (i = 0; i < f->nattrs; i++)
		if (f->attrs[i].type == t)
			return &f->attrs[i];
	return NULL;
}

/* A request that breaks one rule of the tables (or the family's semantics). */
static void gen_malformed(struct fz_ctx *c, struct fz_msg *m)
{
	const struct fz_family *f = c->fam;
	const struct fz_cmddesc *cd = &f->cmds[rn(f->ncmds)];
	const struct fz_attrdesc *d;
	unsigned int kind = rn(11), t, i;
	uint8_t junk[512];
	char name[64];

	m->expect = FZ_REJECT;
	rnd_bytes(junk, sizeof(junk));
	switch (kind) {
	case 0:	/* unknown command */
		m->nlh = msg_begin(c->buf, coin(50) ? 0 : (uint8_t)(f->ncmds + 1 + rn(200)),
				   coin(20) ? NLM_F_DUMP : 0);
		snprintf(m->what, sizeof(m->what), "unknown command %u",
			 ((struct genlmsghdr *)mnl_nlmsg_get_payload(m->nlh))->cmd);
		return;
	case 1:	/* a required attribute missing, the others well-formed */
		for (i = 0; !cd->required && i < f->ncmds; i++)
			cd = &f->cmds[i];
		if (!cd->required)
			goto truncated;	/* no command requires anything */
		m->nlh = msg_begin(c->buf, cd->cmd, cd->dump ? NLM_F_DUMP : 0);
		do
			t = 1 + rn(f->maxattr);
		while (!(cd->required & B(t)));
		for (i = 1; i <= f->maxattr; i++)
			if ((cd->required & B(i)) && i != t && (d = attr_desc(f, i)))
				put_typed(m->nlh, d);
		snprintf(m->what, sizeof(m->what), "cmd %u without attribute %u", cd->cmd, t);
		return;
	case 2:	/* an attribute shorter than its type */
	case 3:	/* longer than its type */
		if (kind == 3 && coin(50)) {
			/*
			 * A well-formed request on a real target with a second,
			 * overlong copy of a string attribute (the last copy
			 * is the one a handler reads).
			 */
			unsigned int len;

			f->valid(c, m, rn(f->nvalid));
			m->expect = FZ_REJECT;
			for (i = 0; i < f->nattrs && f->attrs[i].kind != K_STR; i++)
				;
			if (i == f->nattrs) {
				/* no strings: an overlong copy of a scalar or binary */
				do
					d = &f->attrs[rn(f->nattrs)];
				while (d->kind == K_NEST || d->kind == K_FLAG);
				len = long_len(d);
			} else {
				do
					d = &f->attrs[rn(f->nattrs)];
				while (d->kind != K_STR);
				len = d->maxlen + 1 + rn(64);
				memset(junk, 'Z', len);
				junk[len - 1] = 0;
			}
			put_raw(m->nlh, d->type, (uint16_t)len, junk, len);
			snprintf(m->what + strlen(m->what), sizeof(m->what) - strlen(m->what),
				 " + attr %u of %u bytes", d->type, len);
			return;
		}
		m->nlh = msg_begin(c->buf, cd->cmd, cd->dump ? NLM_F_DUMP : 0);
		do
			d = &f->attrs[rn(f->nattrs)];
		while (!(cd->allowed & B(d->type)) && coin(90));
		if (kind == 2) {
			unsigned int len = d->kind == K_U8 ? 0 : d->kind == K_U32 ? rn(4) :
					   d->kind == K_U64 ? rn(8) : 0;

			if (d->kind == K_STR || d->kind == K_NEST || d->kind == K_BIN)
				len = rn(3);
			put_raw(m->nlh, d->type | (d->kind == K_NEST ? NLA_F_NESTED : 0),
				(uint16_t)len, junk, len);
			if (d->kind == K_STR && len) {
				/* a name without its NUL */
				struct nlattr *a = (struct nlattr *)((char *)m->nlh +
					m->nlh->nlmsg_len - MNL_ALIGN(NLA_HDRLEN + len));
				memset((char *)a + NLA_HDRLEN, 'Z', len);
			}
			snprintf(m->what, sizeof(m->what), "cmd %u attr %u short (%u)",
				 cd->cmd, d->type, len);
		} else {
			unsigned int len = long_len(d);

			if (d->kind == K_STR) {
				memset(junk, 'Z', len);
				junk[len - 1] = 0;
			}
			put_raw(m->nlh, d->type | (d->kind == K_NEST ? NLA_F_NESTED : 0),
				(uint16_t)len, junk, len);
			snprintf(m->what, sizeof(m->what), "cmd %u attr %u long (%u)",
				 cd->cmd, d->type, len);
		}
		return;
	case 4:	/* attribute type beyond maxattr */
		if (coin(60)) {
			/* a well-formed request on a real target, plus it */
			f->valid(c, m, rn(f->nvalid));
			m->expect = FZ_REJECT;
			t = f->maxattr + 1 + rn(100);
			mnl_attr_put_u32(m->nlh, (uint16_t)t, (uint32_t)rnd());
			snprintf(m->what + strlen(m->what), sizeof(m->what) - strlen(m->what),
				 " + unknown attr %u", t);
			return;
		}
		m->nlh = msg_begin(c->buf, cd->cmd, cd->dump ? NLM_F_DUMP : 0);
		absent_name(name, 16);
		put_str(m->nlh, 1, name);
		t = f->maxattr + 1 + rn(100);
		mnl_attr_put_u32(m->nlh, (uint16_t)t, (uint32_t)rnd());
		snprintf(m->what, sizeof(m->what), "cmd %u unknown attr %u", cd->cmd, t);
		return;
	case 5:	/* an attribute the command's policy does not list */
		if (coin(60)) {
			/* a well-formed request on a real target, plus it */
			const struct genlmsghdr *g;

			f->valid(c, m, rn(f->nvalid));
			m->expect = FZ_REJECT;
			g = mnl_nlmsg_get_payload(m->nlh);
			for (i = 0; i < f->ncmds && f->cmds[i].cmd != g->cmd; i++)
				;
			if (i == f->ncmds)
				return;
			do
				d = &f->attrs[rn(f->nattrs)];
			while (f->cmds[i].allowed & B(d->type));
			put_typed(m->nlh, d);
			snprintf(m->what + strlen(m->what), sizeof(m->what) - strlen(m->what),
				 " + foreign attr %u", d->type);
			return;
		}
		m->nlh = msg_begin(c->buf, cd->cmd, cd->dump ? NLM_F_DUMP : 0);
		for (i = 0; i < f->nattrs; i++)
			if (!(cd->allowed & B(f->attrs[i].type)))
				break;
		if (i == f->nattrs)
			goto truncated;
		d = &f->attrs[i + rn(f->nattrs - i)];
		while (cd->allowed & B(d->type))
			d = &f->attrs[rn(f->nattrs)];
		put_typed(m->nlh, d);
		snprintf(m->what, sizeof(m->what), "cmd %u with foreign attr %u",
			 cd->cmd, d->type);
		return;
	case 6:	/* an attribute running past the message */
truncated:
		m->nlh = msg_begin(c->buf, cd->cmd, cd->dump ? NLM_F_DUMP : 0);
		put_raw(m->nlh, 1 + rn(f->maxattr), (uint16_t)(64 + rn(1000)), junk, 16);
		snprintf(m->what, sizeof(m->what), "cmd %u attr past the end", cd->cmd);
		return;
	case 7:	/* nests within nests at the top level */
		m->nlh = msg_begin(c->buf, cd->cmd, cd->dump ? NLM_F_DUMP : 0);
		absent_name(name, 16);
		put_str(m->nlh, 1, name);
		{
			unsigned int depth = 2 + rn(60);
			struct nlattr *st[64];

			for (i = 0; i < depth; i++)
				st[i] = nest(m->nlh, 1 + rn(f->maxattr), coin(80));
			mnl_attr_put_u32(m->nlh, 1 + rn(f->maxattr), 0);
			while (i--)
				mnl_attr_nest_end(m->nlh, st[i]);
			snprintf(m->what, sizeof(m->what), "cmd %u nests %u deep", cd->cmd, depth);
		}
		return;
	case 8:	/* family-specific semantic error */
	case 9:
		f->semantic(c, m);
		return;
	default:	/* attribute soup: random types, random bytes, absent names */
		m->nlh = msg_begin(c->buf, cd->cmd, cd->dump || coin(10) ? NLM_F_DUMP : 0);
		for (i = rn(6); i; i--) {
			t = rn(f->maxattr + 3);
			d = attr_desc(f, t);
			if (d && coin(70)) {
				put_typed(m->nlh, d);
			} else {
				unsigned int len = rn(40);

				if (d && d->kind == K_STR)
					memset(junk, 'Z', len);
				if (d && d->kind == K_U8 && len == 1)
					junk[0] = 0xee;
				put_raw(m->nlh, (uint16_t)(t | (coin(20) ? NLA_F_NESTED : 0)),
					(uint16_t)len, junk, len);
			}
		}
		if (f->soup_guard && cd->mutates)
			mnl_attr_put_u32(m->nlh, (uint16_t)(f->maxattr + 1 + rn(100)), 0);
		m->expect = cd->mutates ? FZ_REJECT : FZ_ANY;
		snprintf(m->what, sizeof(m->what), "cmd %u attribute soup", cd->cmd);
		return;
	}
}

/* ---- the socket ---------------------------------------------------------------- */

static int sock_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	int one = 1, big = 32 << 20;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* FORCE needs CAP_NET_ADMIN; fall back to the capped size */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static char fz_rbuf[1 << 20] __attribute__((aligned(8)));

/*
 * Read until the answer to @seq: the ack's error (0 or -errno), or for a
 * dump NLMSG_DONE's. @stop_after_data: return 1 after the first data chunk
 * (abandoned dumps). *ndata counts data messages.
 */
static int wait_answer(int fd, uint32_t seq, bool stop_after_data, unsigned int *ndata)
{
	for (;;) {
		ssize_t len = recv(fd, fz_rbuf, sizeof(fz_rbuf), 0);
		struct nlmsghdr *nlh;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -1000 - errno;
		}
		for (nlh = (struct nlmsghdr *)fz_rbuf; mnl_nlmsg_ok(nlh, (int)len);
		     nlh = mnl_nlmsg_next(nlh, (int *)&len)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				return e->error;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				int *err = mnl_nlmsg_get_payload(nlh);

				return nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int) ? *err : 0;
			}
			if (ndata)
				(*ndata)++;
		}
		if (stop_after_data && ndata && *ndata)
			return 1;
	}
}

static int send_msg(int fd, const struct nlmsghdr *nlh, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t r = sendto(fd, nlh, len, 0, (struct sockaddr *)&sa, sizeof(sa));

	return r == (ssize_t)len ? 0 : -errno;
}

/* ---- checks ------------------------------------------------------------------- */

static unsigned int fz_pass, fz_fail;
static const char *fz_cmp_cmd;
static char *fz_state0;

static void failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fz_fail++;
}

static void hexdump(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n && i < 256; i++)
		printf("%02x%s", b[i], (i + 1) % 32 ? "" : "\n");
	if (i % 32)
		putchar('\n');
}

static char *run_cmd(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	size_t cap = 1 << 16, len = 0, r;
	char *out;
	int st;

	if (!p)
		return NULL;
	out = malloc(cap);
	while (out && (r = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += r;
		if (len + 1 == cap)
			out = realloc(out, cap *= 2);
	}
	st = pclose(p);
	if (!out)
		return NULL;
	out[len] = 0;
	if (st) {
		free(out);
		return NULL;
	}
	return out;
}

static void state_check(const char *when)
{
	char *now;

	if (!fz_cmp_cmd)
		return;
	now = run_cmd(fz_cmp_cmd);
	if (!now) {
		failf("%s: '%s' failed", when, fz_cmp_cmd);
		return;
	}
	if (strcmp(now, fz_state0)) {
		const char *a = fz_state0, *b = now;
		int shown = 0;

		failf("%s: state changed (first differing lines, before < > after):", when);
		while ((*a || *b) && shown < 6) {
			size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

			if (la != lb || memcmp(a, b, la)) {
				printf("  < %.*s\n  > %.*s\n", (int)la, a, (int)lb, b);
				shown++;
			}
			a += la + (a[la] == '\n');
			b += lb + (b[lb] == '\n');
		}
		/* go on comparing against the new state: report each change once */
		free(fz_state0);
		fz_state0 = now;
		return;
	}
	free(now);
	fz_pass++;
}

/* Judge one answer against the expectation. */
static void judge(const struct fz_msg *m, int err, unsigned long iter)
{
	bool ok;

	switch (m->expect) {
	case FZ_REJECT:
		ok = err < 0 && err > -1000;
		break;
	case FZ_EPERM:
		ok = err == -EPERM;
		break;
	default:
		ok = err <= 0 && err > -1000;
		break;
	}
	if (ok) {
		fz_pass++;
		return;
	}
	failf("iteration %lu: %s: answer %d (%s), expected %s", iter, m->what, err,
	      err < -1000 ? strerror(-err - 1000) : err < 0 ? strerror(-err) : "success",
	      m->expect == FZ_REJECT ? "an error" : m->expect == FZ_EPERM ?
	      "EPERM" : "no socket error");
	hexdump(m->nlh, m->nlh->nlmsg_len);
}

/* ---- modes -------------------------------------------------------------------- */

static int exchange(struct fz_ctx *c, struct fz_msg *m)
{
	int err = send_msg(c->fd, m->nlh, m->nlh->nlmsg_len);

	if (err)
		return err;
	return wait_answer(c->fd, m->nlh->nlmsg_seq, false, NULL);
}

static void mode_fuzz(struct fz_ctx *c, unsigned long iters, unsigned long batch)
{
	unsigned long i;
	struct fz_msg m;

	for (i = 0; i < iters; i++) {
		memset(&m, 0, sizeof(m));
		gen_malformed(c, &m);
		judge(&m, exchange(c, &m), i);
		if (batch && (i + 1) % batch == 0) {
			char when[64];

			snprintf(when, sizeof(when), "after request %lu", i + 1);
			state_check(when);
		}
	}
	state_check("at the end");
}

static void mode_batch(struct fz_ctx *c, unsigned long iters)
{
	char *p = c->buf, *end = c->buf + FZ_BUFSZ - 65536;
	uint32_t first = fz_seq + 1, seq;
	unsigned long n = 0, acked = 0, bad = 0;
	struct fz_msg m;
	int err;

	/* ITERS invalid requests back to back in one sendmsg */
	while (n < iters && p < end) {
		struct fz_ctx cc = *c;

		cc.buf = p;
		memset(&m, 0, sizeof(m));
		do {
			fz_seq = first + (uint32_t)n - 1;
			gen_malformed(&cc, &m);
		} while (m.expect != FZ_REJECT);
		p += MNL_ALIGN(m.nlh->nlmsg_len);
		n++;
	}
	err = send_msg(c->fd, (struct nlmsghdr *)c->buf, (size_t)(p - c->buf));
	if (err) {
		failf("batch of %lu requests (%zu bytes): send: %s", n,
		      (size_t)(p - c->buf), strerror(-err));
	} else {
		/* every request acked, with an error */
		while (acked < n) {
			ssize_t len = recv(c->fd, fz_rbuf, sizeof(fz_rbuf), 0);
			struct nlmsghdr *nlh;

			if (len < 0) {
				failf("batch: recv after %lu acks: %s", acked, strerror(errno));
				break;
			}
			for (nlh = (struct nlmsghdr *)fz_rbuf; mnl_nlmsg_ok(nlh, (int)len);
			     nlh = mnl_nlmsg_next(nlh, (int *)&len)) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				if (nlh->nlmsg_type != NLMSG_ERROR)
					continue;	/* dump data of a soup LIST */
				acked++;
				if (e->error >= 0)
					bad++;
			}
		}
		if (bad)
			failf("batch: %lu of %lu invalid requests accepted", bad, n);
		else if (acked == n)
			fz_pass++;
		printf("batch: %lu requests, %zu bytes, %lu acks\n", n,
		       (size_t)(p - c->buf), acked);
	}
	state_check("after the batch");

	/* one oversized request whose last part is bad */
	if (c->fam->oversized) {
		memset(&m, 0, sizeof(m));
		c->fam->oversized(c, &m, FZ_BUFSZ - 131072);
		m.expect = FZ_REJECT;
		judge(&m, exchange(c, &m), 0);
		printf("batch: %s\n", m.what);
		state_check("after the oversized request");
	}

	/* a header claiming more than was sent (a well-formed request) */
	memset(&m, 0, sizeof(m));
	c->fam->valid(c, &m, 0);
	seq = m.nlh->nlmsg_seq;
	{
		uint32_t real = m.nlh->nlmsg_len;

		m.nlh->nlmsg_len = real + 4096;
		err = send_msg(c->fd, m.nlh, real);
		/* the kernel drops it silently: prove the socket still works */
		(void)seq;
	}
	memset(&m, 0, sizeof(m));
	c->fam->dump(c, &m, fz_target_name(c, 0));
	m.expect = FZ_ANY;
	snprintf(m.what, sizeof(m.what), "dump after a truncated request");
	judge(&m, exchange(c, &m), 0);
	state_check("after the truncated request");
}

static void mode_abandon(struct fz_ctx *c, unsigned long iters)
{
	unsigned long i, chunks = 0;
	struct fz_msg m;
	char name[64];

	snprintf(name, sizeof(name), "%s", fz_target_name(c, 0));
	for (i = 0; i < iters; i++) {
		int fd = sock_open(), err;
		unsigned int nd = 0;

		if (fd < 0) {
			failf("socket: %s", strerror(errno));
			return;
		}
		memset(&m, 0, sizeof(m));
		c->fam->dump(c, &m, name);
		err = send_msg(fd, m.nlh, m.nlh->nlmsg_len);
		if (!err && i % 2 == 0)	/* odd ones: closed before reading */
			err = wait_answer(fd, m.nlh->nlmsg_seq, true, &nd);
		close(fd);
		if (err < 0) {
			failf("abandoned dump %lu: %d", i, err);
			continue;
		}
		chunks += nd;
		fz_pass++;
	}
	printf("abandon: %lu dumps closed midway (%lu messages read)\n", iters, chunks);
	state_check("after abandoned dumps");
}

static void mode_unpriv(struct fz_ctx *c)
{
	unsigned int i, t;
	struct fz_msg m;

	for (t = 0; t < (c->ntargets ? c->ntargets : 1); t++)
		for (i = 0; i < c->fam->nvalid; i++) {
			memset(&m, 0, sizeof(m));
			c->fam->valid(c, &m, i);
			judge(&m, exchange(c, &m), i);
		}
	state_check("after the unprivileged pass");
}

static void mode_dumpdestroy(struct fz_ctx *c, unsigned long iters)
{
	unsigned long i;
	struct fz_msg m;

	for (i = 0; i < iters; i++) {
		unsigned int nd = 0, p;
		char name[32];
		int dfd, err;

		snprintf(name, sizeof(name), "fz-dd%lu", i % 4);
		for (p = 0; p <= c->fam->scratch_parts; p++) {
			memset(&m, 0, sizeof(m));
			c->fam->scratch_create(c, &m, name, p);
			err = exchange(c, &m);
			if (err) {
				failf("dumpdestroy %lu: %s: %s", i, m.what, strerror(-err));
				return;
			}
		}
		dfd = sock_open();
		if (dfd < 0) {
			failf("socket: %s", strerror(errno));
			return;
		}
		memset(&m, 0, sizeof(m));
		c->fam->dump(c, &m, name);
		err = send_msg(dfd, m.nlh, m.nlh->nlmsg_len);
		if (!err)
			err = wait_answer(dfd, m.nlh->nlmsg_seq, true, &nd);
		if (err < 0) {
			failf("dumpdestroy %lu: dump: %d", i, err);
			close(dfd);
			return;
		}
		/* the dump holds the set: destroy it under the dump's feet */
		memset(&m, 0, sizeof(m));
		c->fam->scratch_destroy(c, &m, name);
		err = exchange(c, &m);
		if (err) {
			failf("dumpdestroy %lu: destroy during dump: %s", i, strerror(-err));
			close(dfd);
			return;
		}
		/* every other time read the rest, else abandon it */
		if (i % 2) {
			err = wait_answer(dfd, fz_seq - 1, false, &nd);
			if (err) {
				failf("dumpdestroy %lu: rest of the dump: %d", i, err);
				close(dfd);
				return;
			}
		}
		close(dfd);
		fz_pass++;
	}
	printf("dumpdestroy: %lu sets destroyed while dumped\n", iters);
}

static void mode_swap(struct fz_ctx *c, unsigned long iters)
{
	unsigned long i;
	struct fz_msg m;
	int err;

	for (i = 0; i < iters; i++) {
		memset(&m, 0, sizeof(m));
		c->fam->swap(c, &m);
		err = exchange(c, &m);
		if (err) {
			failf("swap %lu: %s: %d", i, m.what, err);
			return;
		}
	}
	fz_pass++;
	printf("swap: %lu swaps\n", iters);
}

/* ---- main ------------------------------------------------------------------- */

static int resolve_family(int fd, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(fz_buf);
	struct genlmsghdr *g;
	ssize_t len;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++fz_seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	if (send_msg(fd, nlh, nlh->nlmsg_len))
		return -1;
	len = recv(fd, fz_rbuf, sizeof(fz_rbuf), 0);
	for (nlh = (struct nlmsghdr *)fz_rbuf; len > 0 && mnl_nlmsg_ok(nlh, (int)len);
	     nlh = mnl_nlmsg_next(nlh, (int *)&len)) {
		struct nlattr *a;

		if (nlh->nlmsg_type != GENL_ID_CTRL)
			return -1;
		mnl_attr_for_each(a, nlh, GENL_HDRLEN)
			if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
				return mnl_attr_get_u16(a);
	}
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: nfg-nlfuzz [-f FAMILY] [-s SEED] [-n ITERS] [-b BATCH] "
		"[-C CMD] [-t NAME:4|NAME:6]... fuzz|batch|abandon|unpriv|dumpdestroy|swap\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *famname = NFG_RANGESET_GENL_NAME, *mode;
	unsigned long iters = 1000, batch = 100;
	struct fz_ctx c = { .buf = fz_buf };
	uint64_t seed = 0;
	bool seeded = false;
	unsigned int i;
	int opt, id;

	while ((opt = getopt(argc, argv, "f:s:n:b:C:t:")) != -1) {
		switch (opt) {
		case 'f': famname = optarg; break;
		case 's': seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'b': batch = strtoul(optarg, NULL, 0); break;
		case 'C': fz_cmp_cmd = optarg; break;
		case 't':
			if (c.ntargets == FZ_MAXTARGETS || !strchr(optarg, ':'))
				usage();
			c.targets[c.ntargets++] = optarg;
			break;
		default: usage();
		}
	}
	if (optind + 1 != argc)
		usage();
	mode = argv[optind];
	for (i = 0; i < sizeof(fz_families) / sizeof(fz_families[0]); i++)
		if (!strcmp(fz_families[i].name, famname))
			c.fam = &fz_families[i];
	if (!c.fam) {
		fprintf(stderr, "nfg-nlfuzz: no table for family %s\n", famname);
		return 2;
	}
	if (!c.ntargets && c.fam->need_targets && strcmp(mode, "dumpdestroy")) {
		fprintf(stderr, "nfg-nlfuzz: mode %s needs -t targets\n", mode);
		return 2;
	}
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
	}
	printf("nfg-nlfuzz: family %s mode %s seed %" PRIu64 " iterations %lu\n",
	       famname, mode, seed, iters);
	fflush(stdout);
	fz_rng = seed ? seed : 0x9e3779b97f4a7c15ULL;

	c.fd = sock_open();
	if (c.fd < 0) {
		perror("nfg-nlfuzz: netlink socket");
		return 2;
	}
	id = resolve_family(c.fd, famname);
	if (id < 0) {
		fprintf(stderr, "nfg-nlfuzz: genetlink family %s not found\n", famname);
		return 2;
	}
	fz_famid = (uint16_t)id;
	if (fz_cmp_cmd) {
		fz_state0 = run_cmd(fz_cmp_cmd);
		if (!fz_state0) {
			fprintf(stderr, "nfg-nlfuzz: '%s' failed\n", fz_cmp_cmd);
			return 2;
		}
	}

	if (!strcmp(mode, "fuzz"))
		mode_fuzz(&c, iters, batch);
	else if (!strcmp(mode, "batch"))
		mode_batch(&c, iters);
	else if (!strcmp(mode, "abandon"))
		mode_abandon(&c, iters);
	else if (!strcmp(mode, "unpriv"))
		mode_unpriv(&c);
	else if (!strcmp(mode, "dumpdestroy"))
		mode_dumpdestroy(&c, iters);
	else if (!strcmp(mode, "swap") && c.ntargets >= 2)
		mode_swap(&c, iters);
	else
		usage();

	printf("%u passed, %u failed (seed %" PRIu64 ")\n", fz_pass, fz_fail, seed);
	return fz_fail ? 1 : 0;
}
