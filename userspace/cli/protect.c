// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard protect | unprotect: a protection profile as nftables rules,
 * installed in one atomic nf_tables batch through libnftnl, the extensions
 * reached through nft_compat with libnfguard's encoders (nfg_nft_*).
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
 *    create carries the comment OWNER): protect and unprotect remove those.
 *
 * Idempotent: the batch deletes what a previous protect installed (found by
 * a dump first) and adds the profile again, so protect twice lists the same
 * ruleset, and a profile without an option removes what that option added.
 * A table "nfguard" without the OWNER comment is the user's: never deleted.
 *
 * Trust: the batch carries the dump's generation id (a change in between
 * makes nf_tables refuse it with ERESTART: read again, retry), asks for no
 * ACK but errors, and success needs no error, no lost answer and a new
 * generation (nft_batch_send). --show, --dry-run and --check read the same
 * text lines (one per operation, rules in iptables syntax); --show and
 * --dry-run print them as comments under the command that gives them.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
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

#include "cli.h"
#include "libnfguard.h"

#define OWNER		"managed by nfguard protect"
#define T_OURS		"nfguard"
#define C_SC		"syncookie"	/* in T_OURS */
#define C_RTC		"rtcache"	/* in T_OURS */
#define C_SC_OLD	"nfguard-syncookie"	/* older protect: in raw */
#define C_RTC_OLD	"nfguard-rtcache"	/* older protect: in mangle */
#define MAX_PORTS	64	/* per option, and --syncookie's together */
#define MAX_KCL		16	/* --kconnlimit options */
#define MAX_BL		16	/* --blocklist options */

struct ports {
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP; 0 = unset */
	unsigned int n;
	uint16_t port[MAX_PORTS];
};

/* one --kconnlimit LIMIT[/MASK[,MASK6]] PROTO/PORTS */
struct kcl {
	const char *arg;		/* LIMIT[/MASK...], parsed once -4/-6 are known */
	struct ports ports;
	uint32_t limit;
	int prefix, prefix6;		/* -1: whole address */
};

/* Repeated options add up: every --kconnlimit and --blocklist, all --syncookie ports. */
struct profile {
	bool syncookie, kconnlimit, rtcache;
	unsigned int fams;		/* FAM_IP | FAM_IP6: families to install */
	struct ports sc_ports;
	struct kcl kcl[MAX_KCL];
	unsigned int nkcl;
	struct nfg_nft_syncookie sc;	/* SYNCOOKIE options, .prefix for IPv4 */
	int sc_prefix6;			/* allowlist mask for IPv6; 0 = whole address */
	const char *bl[MAX_BL];		/* blocklist sets */
	uint8_t bl_family[MAX_BL];	/* their families */
	unsigned int nbl;
};

#define FAM_IP	1u
#define FAM_IP6	2u

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

void usage_protect(FILE *f)
{
	fprintf(f,
		"Usage: nfguard protect [-4|-6] [--syncookie tcp/PORTS]... [SYNCOOKIE OPTIONS]\n"
		"                       [--kconnlimit LIMIT[/[MASK][,MASK6]] PROTO/PORTS]...\n"
		"                       [--blocklist SET]... [--rtcache] [--dry-run]\n"
		"       nfguard protect --check [-4|-6] PROFILE OPTIONS (as above)\n"
		"       nfguard protect --show [--json]\n"
		"       nfguard unprotect [--dry-run]\n"
		"  SYNCOOKIE OPTIONS: --syncookie-mode proxy|local, --syncookie-mss N (88-65535),\n"
		"  --syncookie-wscale N (0-14), --syncookie-sack-perm, --syncookie-timestamp,\n"
		"  --syncookie-allowlist-timeout SECONDS (1-604800, default 300),\n"
		"  --syncookie-allowlist-mask MASK[,MASK6] (default the whole address).\n"
		"  Installs the profile (replacing a previous one) in one atomic nftables\n"
		"  batch, in tables ip/ip6 nfguard of its own (base chains at the raw, mangle\n"
		"  and filter priorities); -4/-6: only the ip/ip6 rules (a single\n"
		"  MASK is then that family's; -6 takes a MASK6 of 33 or more, or ,MASK6).\n"
		"  PORTS: 80,443; PROTO tcp or udp. Repeated options add up: every --kconnlimit\n"
		"  is a limit of its own, --syncookie ports and --blocklist sets accumulate.\n"
		"  kconnlimit counts per whole IPv4 address (MASK 32) and per IPv6 /64 (MASK6 64)\n"
		"  unless told. --dry-run prints the batch; --show the installed profile with\n"
		"  every option; --check exits 1 (naming each difference) when the installed\n"
		"  profile is not the one given, 0 when it is.\n"
		CLI_EXIT_HELP);
}

/* ---- arguments ------------------------------------------------------------ */

static void bad_arg(const char *fmt, const char *arg)
{
	cli_err("protect", fmt, arg);
	exit(CLI_EXIT_USAGE);
}

static bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* "tcp/80,443", added to @p (ports given twice are kept once) */
static void parse_ports(const char *arg, bool udp_ok, struct ports *p)
{
	char buf[512], *s, *tok, *save = NULL;
	unsigned int given = 0, i;
	uint32_t v;

	if (strlen(arg) >= sizeof(buf))
		bad_arg("\"%s\": too long", arg);
	strcpy(buf, arg);
	s = strchr(buf, '/');
	if (!s)
		bad_arg("\"%s\": expected PROTO/PORT[,PORT...], e.g. tcp/80,443", arg);
	*s++ = '\0';
	if (!strcmp(buf, "tcp"))
		p->proto = IPPROTO_TCP;
	else if (udp_ok && !strcmp(buf, "udp"))
		p->proto = IPPROTO_UDP;
	else
		bad_arg(udp_ok ? "\"%s\": protocol must be tcp or udp" :
			"\"%s\": protocol must be tcp", arg);
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!parse_u32(tok, 65535, &v) || !v)
			bad_arg("\"%s\": ports are numbers from 1 to 65535", arg);
		given++;
		for (i = 0; i < p->n && p->port[i] != v; i++)
			;
		if (i < p->n)
			continue;
		if (p->n == MAX_PORTS)
			bad_arg("\"%s\": at most 64 ports", arg);
		p->port[p->n++] = (uint16_t)v;
	}
	if (!given)
		bad_arg("\"%s\": no port", arg);
}

/*
 * @masks: "MASK", "MASK,MASK6" or ",MASK6" of option @opt (argument @arg,
 * for messages): MASK is IPv4's (@min..32)
 * and MASK6 IPv6's (@min..128). -4 takes MASK only. -6 takes ",MASK6", or a
 * single MASK above 32 as MASK6 (unambiguous); a single MASK of 32 or less
 * would be an IPv4 length read as an enormous IPv6 prefix, so -6 refuses it.
 * -1 stays where nothing is given.
 */
static void parse_masks(const char *opt, const char *arg, const char *masks,
			unsigned int fams, uint32_t min, int *m4, int *m6)
{
	char buf[64], *comma;
	uint32_t v;

	if (strlen(masks) >= sizeof(buf))
		bad_arg("\"%s\": too long", arg);
	strcpy(buf, masks);
	comma = strchr(buf, ',');
	if (comma)
		*comma++ = '\0';
	if (fams == FAM_IP6 && buf[0] && comma) {
		cli_err("protect", "%s \"%s\": -6 takes the IPv6 mask only (,MASK6)", opt, arg);
		exit(CLI_EXIT_USAGE);
	}
	if (fams == FAM_IP6 && buf[0]) {
		if (!parse_u32(buf, 128, &v) || v < min) {
			cli_err("protect", "%s \"%s\": MASK6 is an IPv6 prefix length from %u to 128",
				opt, arg, min);
			exit(CLI_EXIT_USAGE);
		}
		if (v <= 32) {
			cli_err("protect", "%s \"%s\": with -6 a mask of 32 or less looks like an IPv4 "
				"one; write \",%u\" if an IPv6 /%u is meant", opt, arg, v, v);
			exit(CLI_EXIT_USAGE);
		}
		*m6 = (int)v;
		return;
	}
	if (buf[0]) {
		if (!parse_u32(buf, 32, &v) || v < min) {
			cli_err("protect", "%s \"%s\": MASK is an IPv4 prefix length from %u to 32",
				opt, arg, min);
			exit(CLI_EXIT_USAGE);
		}
		*m4 = (int)v;
	} else if (!comma) {
		cli_err("protect", "%s \"%s\": no mask", opt, arg);
		exit(CLI_EXIT_USAGE);
	}
	if (!comma)
		return;
	if (fams == FAM_IP) {
		cli_err("protect", "%s \"%s\": -4 takes one mask, the IPv4 one", opt, arg);
		exit(CLI_EXIT_USAGE);
	}
	if (!parse_u32(comma, 128, &v) || v < min) {
		cli_err("protect", "%s \"%s\": MASK6 is an IPv6 prefix length from %u to 128", opt, arg, min);
		exit(CLI_EXIT_USAGE);
	}
	*m6 = (int)v;
}

/* "64", "64/24", "64/24,48" or "64/,48"; IPv6 defaults to /64 */
static void parse_limit(struct kcl *k, unsigned int fams)
{
	char buf[64], *slash;

	if (strlen(k->arg) >= sizeof(buf))
		bad_arg("\"%s\": too long", k->arg);
	strcpy(buf, k->arg);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (!parse_u32(buf, UINT32_MAX, &k->limit))
		bad_arg("--kconnlimit \"%s\": LIMIT is a number from 0 to 4294967295", k->arg);
	k->prefix = -1;
	/* one budget per /64: anyone given a /64 holds 2^64 addresses */
	k->prefix6 = 64;
	if (slash)
		parse_masks("--kconnlimit", k->arg, k->arg + (slash - buf), fams, 0,
			    &k->prefix, &k->prefix6);
}

/* a number of option @opt from @min to @max */
static uint32_t parse_num(const char *opt, const char *arg, uint32_t min, uint32_t max)
{
	uint32_t v;

	if (!parse_u32(arg, max, &v) || v < min) {
		cli_err("protect", "%s \"%s\": a number from %u to %u", opt, arg, min, max);
		exit(CLI_EXIT_USAGE);
	}
	return v;
}

/* ---- netlink -------------------------------------------------------------- */

struct nft {
	struct mnl_socket *nl;
	uint32_t portid, seq;
};

/* exit status for an errno from nf_tables */
static int errno_exit(int err)
{
	return err == EPERM || err == EACCES ? CLI_EXIT_PERM : CLI_EXIT_ERROR;
}

/*
 * The answers to a batch must all fit in the receive buffer: a lost answer
 * would be a lost error. The batch asks for none but errors (no NLM_F_ACK),
 * errors are capped (NETLINK_CAP_ACK: the header of the refused message, not
 * all of it), and the buffer is raised (SO_RCVBUFFORCE needs CAP_NET_ADMIN,
 * which a batch needs anyway). Should answers still be lost, the receive
 * fails with ENOBUFS and that is an error too (nft_batch_send).
 */
#define NFT_RCVBUF	(4 << 20)

static int nft_open(struct nft *n)
{
	int one = 1, size = NFT_RCVBUF;

	n->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!n->nl || mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		cli_err("protect", "netlink socket: %s", strerror(err));
		if (n->nl)
			mnl_socket_close(n->nl);
		return -err;
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

/* One dump request; cb per message. Returns 0 or -errno. */
static int nft_dump(struct nft *n, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[32768];
	uint32_t seq = nlh->nlmsg_seq;
	int ret;

	if (mnl_socket_sendto(n->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ret = (int)mnl_socket_recvfrom(n->nl, buf, sizeof(buf));
		if (ret <= 0)
			return ret < 0 ? -errno : -EIO;
		ret = mnl_cb_run(buf, (size_t)ret, seq, n->portid, cb, data);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
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
static int nft_genid(struct nft *n, uint32_t *id)
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
	uint32_t first;		/* seq of ops[0] */
	unsigned int n, cap;
	char **ops;
};

static void oplog_add(struct oplog *l, uint32_t seq, const char *text)
{
	if (!l->n)
		l->first = seq;
	if (seq != l->first + l->n)
		return;
	if (l->n == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 64;
		char **ops = realloc(l->ops, cap * sizeof(*ops));

		if (!ops)
			return;
		l->ops = ops;
		l->cap = cap;
	}
	l->ops[l->n++] = strdup(text);
}

static const char *oplog_get(const struct oplog *l, uint32_t seq)
{
	if (!l->n || seq < l->first || seq - l->first >= l->n)
		return NULL;
	return l->ops[seq - l->first];
}

static void oplog_free(struct oplog *l)
{
	while (l->n)
		free(l->ops[--l->n]);
	free(l->ops);
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
static int nft_batch_send(struct nft *n, struct mnl_nlmsg_batch *b, uint32_t genid,
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
static int read_state(struct nft *n, struct state st[2])
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

struct bld {
	struct mnl_nlmsg_batch *b;
	struct nft *n;
	int err;
	struct oplog log;	/* what each message does */
};

/* Record (and with --dry-run print) what the message just built does. */
static void put_done(struct bld *B, const char *text)
{
	oplog_add(&B->log, B->n->seq, text);
}

static void put_table(struct bld *B, uint16_t type, uint8_t f, const char *name,
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
					  ++B->n->seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	mnl_nlmsg_batch_next(B->b);
	snprintf(text, sizeof(text), "%s table %s %s%s",
		 type == NFT_MSG_NEWTABLE ? "add" : "delete",
		 fam_name(f), name, owner ? " { comment \"" OWNER "\"; }" : "");
	put_done(B, text);
	nftnl_table_free(t);
}

/* hook < 0: a regular chain */
static void put_chain(struct bld *B, uint16_t type, uint8_t f, const char *table,
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
					  ++B->n->seq);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	mnl_nlmsg_batch_next(B->b);
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

/* Adds @x (NULL: an encoder error, already reported) to @r; false on error. */
static bool add_x(struct bld *B, struct nftnl_rule *r, struct nftnl_expr *x,
		  const struct nfg_err *e)
{
	if (!x) {
		cli_err("protect", "%s", nfg_err_str(e));
		B->err = -EINVAL;
		return false;
	}
	nftnl_rule_add_expr(r, x);
	return true;
}

static void put_rule(struct bld *B, struct nftnl_rule *r)
{
	struct nlmsghdr *nlh;
	uint8_t f = (uint8_t)nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY);
	char text[1200];

	nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(B->b), NFT_MSG_NEWRULE, f,
					 NLM_F_CREATE | NLM_F_APPEND, ++B->n->seq);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	mnl_nlmsg_batch_next(B->b);
	fmt_rule(r, text, sizeof(text));
	put_done(B, text);
	nftnl_rule_free(r);
}

/* Remove what a previous protect (this one or an older) installed in family @f. */
static void remove_ours(struct bld *B, uint8_t f, const struct state *st)
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

static void install(struct bld *B, uint8_t f, const struct profile *p)
{
	struct nfg_err e;
	struct nftnl_rule *r;
	bool bl_chain = false;
	unsigned int i, k;
	char cn[32];
	int h;

	if (!(p->fams & fam_bit(f)))
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
		const struct kcl *kc = &p->kcl[k];

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
			const struct kcl *kc = &p->kcl[k];

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
	if (p->syncookie) {
		struct nfg_nft_syncookie sc = p->sc;

		if (f == NFPROTO_IPV6)
			sc.prefix = p->sc_prefix6;
		/* raw's priority: before conntrack (-200) */
		put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, C_SC, NF_INET_PRE_ROUTING, -300);
		for (i = 0; i < p->sc_ports.n; i++) {
			r = rule_new(f, T_OURS, C_SC);
			add_l4(r, IPPROTO_TCP, p->sc_ports.port[i], false);
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

/* lines of text */
struct strv {
	char **v;
	unsigned int n, cap;
};

static void strv_add(struct strv *l, const char *text)
{
	if (l->n == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			cli_die("protect", "out of memory");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = strdup(text);
	if (!l->v[l->n])
		cli_die("protect", "out of memory");
	l->n++;
}

static void strv_free(struct strv *l)
{
	while (l->n)
		free(l->v[--l->n]);
	free(l->v);
}

struct show {
	struct nft *n;
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
		struct nft n2;

		char text[512];

		if (!s->any) {
			snprintf(text, sizeof(text), "add table %s %s%s", fam_name(s->family),
				 s->table, s->owned ? " { comment \"" OWNER "\"; }" : "");
			strv_add(s->out, text);
			s->any = true;
		}
		fmt_chain(c, text, sizeof(text));
		strv_add(s->out, text);
		/* a second socket: this one is inside a dump */
		if (nft_open(&n2) == 0) {
			req = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, s->family, NLM_F_DUMP,
						    ++n2.seq);
			nftnl_rule_set_str(r, NFTNL_RULE_TABLE, s->table);
			nftnl_rule_set_str(r, NFTNL_RULE_CHAIN,
					   nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
			nftnl_rule_nlmsg_build_payload(req, r);
			if (nft_dump(&n2, req, show_rule_cb, s) < 0 && !s->err)
				s->err = -errno;
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

/* The installed profile, read back from the kernel, as --dry-run prints it. */
static int show_collect(struct nft *n, const struct state st[2], struct strv *out,
			const char *what)
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
			if (ret < 0 || s.err < 0) {
				ret = ret < 0 ? ret : s.err;
				cli_err(what, "%s %s: %s", fam_name(families[i]),
					tables[t], strerror(-ret));
				return errno_exit(-ret);
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
	struct ports sc_ports;
	char sc_opts[256];		/* --syncookie-* of the first SYNCOOKIE rule */
	bool sc_local, sc_sack, sc_ts;	/* ... the same, for --json */
	uint32_t sc_mss, sc_wscale;	/* 0 / UINT32_MAX: not set */
	int sc_m4, sc_m6;
	uint32_t sc_timeout;
	struct {
		bool set;
		uint32_t limit;
		int m4, m6;
		struct ports ports;
	} kcl[MAX_KCL];
	const char *bl[MAX_BL];
	unsigned int nbl;
	bool rtcache;
	bool odd;			/* a line protect does not write */
};

/* the value after @key in @line, as an unsigned number; false if absent */
static bool word_u32(const char *line, const char *key, uint32_t *v)
{
	const char *p = strstr(line, key);

	if (!p)
		return false;
	return sscanf(p + strlen(key), "%u", v) == 1;
}

static void ports_add(struct ports *p, uint8_t proto, uint32_t port)
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
		if (i == r->nbl && r->nbl < MAX_BL)
			r->bl[r->nbl++] = strdup(set);
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

static void print_ports(const struct ports *p)
{
	unsigned int i;

	printf("%s/", p->proto == IPPROTO_UDP ? "udp" : "tcp");
	for (i = 0; i < p->n; i++)
		printf("%s%u", i ? "," : "", p->port[i]);
}

/* "/M4,M6", "/M4", "/,M6" or nothing when both are the defaults @d4/@d6 */
static void print_masks(unsigned int fams, int m4, int m6, int d4, int d6, bool slash)
{
	bool x4 = (fams & FAM_IP) && m4 >= 0 && m4 != d4;
	bool x6 = (fams & FAM_IP6) && m6 >= 0 && m6 != d6;

	if (!x4 && !x6)
		return;
	printf("%s", slash ? "/" : " ");
	if (fams == FAM_IP6)
		printf(m6 > 32 ? "%d" : ",%d", m6);
	else if (fams == FAM_IP)
		printf("%d", m4);
	else
		printf("%d,%d", m4 < 0 ? d4 : m4, m6 < 0 ? d6 : m6);
}

/* The profile @lines give (free with recon_free). */
static void recon_read(struct recon *r, const struct strv *lines)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->sc_m4 = r->sc_m6 = -1;
	for (i = 0; i < MAX_KCL; i++)
		r->kcl[i].m4 = r->kcl[i].m6 = -1;
	for (i = 0; i < lines->n; i++)
		recon_line(r, lines->v[i]);
}

static void recon_free(struct recon *r)
{
	while (r->nbl)
		free((char *)r->bl[--r->nbl]);
}

/* Print the command (or a comment that there is none) for @lines. */
static void print_command(const struct strv *lines)
{
	struct recon r;
	unsigned int i;

	recon_read(&r, lines);
	if (!r.fams) {
		for (i = 0; i < r.nbl; i++)
			free((char *)r.bl[i]);
		return;
	}
	if (r.odd)
		printf("# warning: lines below are not what nfguard protect writes: the command "
		       "does not give them\n");
	printf("nfguard protect%s", r.fams == FAM_IP ? " -4" : r.fams == FAM_IP6 ? " -6" : "");
	if (r.sc_ports.n) {
		printf(" --syncookie ");
		print_ports(&r.sc_ports);
		if (strcmp(r.sc_opts, " "))
			printf("%s", r.sc_opts);
		if (r.sc_timeout && r.sc_timeout != 300)
			printf(" --syncookie-allowlist-timeout %u", r.sc_timeout);
		if (((r.fams & FAM_IP) && r.sc_m4 != 32) || ((r.fams & FAM_IP6) && r.sc_m6 != 128)) {
			printf(" --syncookie-allowlist-mask");
			print_masks(r.fams, r.sc_m4, r.sc_m6, 32, 128, false);
		}
	}
	for (i = 0; i < MAX_KCL && r.kcl[i].set; i++) {
		printf(" --kconnlimit %u", r.kcl[i].limit);
		print_masks(r.fams, r.kcl[i].m4, r.kcl[i].m6, 32, 64, true);
		putchar(' ');
		print_ports(&r.kcl[i].ports);
	}
	for (i = 0; i < r.nbl; i++) {
		printf(" --blocklist %s", r.bl[i]);
		free((char *)r.bl[i]);
	}
	if (r.rtcache)
		printf(" --rtcache");
	putchar('\n');
}

static void json_ports(const struct ports *p)
{
	unsigned int i;

	printf("\"proto\":\"%s\",\"ports\":[", p->proto == IPPROTO_UDP ? "udp" : "tcp");
	for (i = 0; i < p->n; i++)
		printf("%s%u", i ? "," : "", p->port[i]);
	putchar(']');
}

/* a prefix length of family bit @fam, or null when that family has no rules */
static void json_mask(const char *key, unsigned int fams, unsigned int fam, int m, int d)
{
	printf(",\"%s\":", key);
	if (fams & fam)
		printf("%d", m < 0 ? d : m);
	else
		printf("null");
}

/*
 * --show --json: the profile @lines give, every option with its value
 * (defaults included), and the nf_tables operations that hold it. An
 * option whose extension is not in the profile is null (syncookie) or
 * empty; "installed" is false (and the rest empty) with no profile.
 */
static void print_json(const struct strv *lines)
{
	struct recon r;
	unsigned int i, k;

	recon_read(&r, lines);
	printf("{\"installed\":%s,\"families\":[", r.fams ? "true" : "false");
	printf("%s%s%s]", r.fams & FAM_IP ? "\"ip\"" : "", r.fams == (FAM_IP | FAM_IP6) ? "," : "",
	       r.fams & FAM_IP6 ? "\"ip6\"" : "");
	printf(",\"exact\":%s", r.odd ? "false" : "true");
	printf(",\"syncookie\":");
	if (r.sc_ports.n) {
		putchar('{');
		json_ports(&r.sc_ports);
		printf(",\"mode\":\"%s\",\"mss\":", r.sc_local ? "local" : "proxy");
		if (r.sc_mss)
			printf("%u", r.sc_mss);
		else
			printf("null");
		printf(",\"wscale\":");
		if (r.sc_wscale != UINT32_MAX)
			printf("%u", r.sc_wscale);
		else
			printf("null");
		printf(",\"sack_perm\":%s,\"timestamp\":%s,\"allowlist_timeout\":%u",
		       r.sc_sack ? "true" : "false", r.sc_ts ? "true" : "false",
		       r.sc_timeout ? r.sc_timeout : 300);
		json_mask("allowlist_mask", r.fams, FAM_IP, r.sc_m4, 32);
		json_mask("allowlist_mask6", r.fams, FAM_IP6, r.sc_m6, 128);
		putchar('}');
	} else {
		printf("null");
	}
	printf(",\"kconnlimit\":[");
	for (k = 0; k < MAX_KCL && r.kcl[k].set; k++) {
		printf("%s{\"chain\":", k ? "," : "");
		if (k)
			printf("\"kconnlimit-%u\"", k + 1);
		else
			printf("\"kconnlimit\"");
		printf(",\"limit\":%u", r.kcl[k].limit);
		json_mask("mask", r.fams, FAM_IP, r.kcl[k].m4, 32);
		json_mask("mask6", r.fams, FAM_IP6, r.kcl[k].m6, 64);
		putchar(',');
		json_ports(&r.kcl[k].ports);
		putchar('}');
	}
	printf("],\"blocklist\":[");
	for (i = 0; i < r.nbl; i++) {
		if (i)
			putchar(',');
		cli_json_str(stdout, r.bl[i]);
	}
	printf("],\"rtcache\":%s,\"operations\":[", r.rtcache ? "true" : "false");
	for (i = 0; i < lines->n; i++) {
		if (i)
			putchar(',');
		cli_json_str(stdout, lines->v[i]);
	}
	printf("]}\n");
	recon_free(&r);
}

static int show(struct nft *n, const struct state st[2], bool json)
{
	struct strv out = { 0 };
	unsigned int i;
	int ret;

	ret = show_collect(n, st, &out, "protect --show");
	if (!ret && json)
		print_json(&out);
	else if (!ret)
		print_command(&out);
	for (i = 0; !ret && !json && i < out.n; i++)
		printf("# %s\n", out.v[i]);
	strv_free(&out);
	if (!ret)
		cli_flush_or_die("protect --show");
	return ret;
}

/*
 * protect --check: the profile @B planned (its "add" operations, as on an
 * empty ruleset after deleting ours) against what the kernel holds, line
 * for line in order. 0 when equal; else each difference and 1.
 */
static int check_profile(struct nft *n, const struct state st[2], const struct bld *B)
{
	struct strv live = { 0 }, plan = { 0 };
	unsigned int i, j, diff = 0;
	int ret;

	for (i = 0; i < B->log.n; i++)
		if (B->log.ops[i] && !strncmp(B->log.ops[i], "add ", 4))
			strv_add(&plan, B->log.ops[i]);
	ret = show_collect(n, st, &live, "protect --check");
	if (ret)
		goto out;
	for (i = 0; i < plan.n; i++) {
		for (j = 0; j < live.n && strcmp(plan.v[i], live.v[j]); j++)
			;
		if (j == live.n) {
			printf("missing: %s\n", plan.v[i]);
			diff++;
		}
	}
	for (j = 0; j < live.n; j++) {
		for (i = 0; i < plan.n && strcmp(plan.v[i], live.v[j]); i++)
			;
		if (i == plan.n) {
			printf("unexpected: %s\n", live.v[j]);
			diff++;
		}
	}
	if (!diff && plan.n == live.n) {
		for (i = 0; i < plan.n && !strcmp(plan.v[i], live.v[i]); i++)
			;
		if (i < plan.n) {
			printf("reordered: %s\n", live.v[i]);
			diff++;
		}
	}
	cli_flush_or_die("protect --check");
	if (diff)
		cli_err("protect --check", "the installed profile differs from the one given "
			"(%u difference%s)", diff, diff == 1 ? "" : "s");
	ret = diff ? CLI_EXIT_ERROR : 0;
out:
	strv_free(&live);
	strv_free(&plan);
	return ret;
}

/* ---- modules ---------------------------------------------------------------- */

/* 0 if loaded (autoloading it if possible); an error's exit code; exits 3 when absent */
static int need_module(enum nfg_ext ext)
{
	struct nfg_err e;
	int ret = nfg_ext_loaded(ext, &e);

	if (ret == 0) {
		/* a family lookup makes the kernel try to load the module */
		void *h = NULL;

		switch (ext) {
		case NFG_EXT_RANGESET:
			h = nfg_rs_open(&e);
			nfg_rs_close(h);
			break;
		case NFG_EXT_KCONNLIMIT:
			h = nfg_kcl_open(&e);
			nfg_kcl_close(h);
			break;
		case NFG_EXT_SYNCOOKIE:
			h = nfg_sc_open(&e);
			nfg_sc_close(h);
			break;
		default:
			h = nfg_rtc_open(&e);
			nfg_rtc_close(h);
			break;
		}
		ret = nfg_ext_loaded(ext, &e);
	}
	if (ret < 0) {
		cli_err("protect", "%s: %s", nfg_ext_name(ext), nfg_err_str(&e));
		return CLI_EXIT_ERROR;
	}
	/* exits 3: what to do, and a modprobe only when one can work */
	if (ret == 0)
		cli_die_nomod("protect", nfg_ext_module(ext));
	return 0;
}

/* ---- entry points ----------------------------------------------------------- */

/* A table nfguard that protect did not create: never ours to delete. */
static bool foreign_tables(const struct profile *p, const struct state st[2], bool remove_only,
			   bool dry_run)
{
	const char *what = remove_only ? "unprotect" : "protect";
	bool refuse = false;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (!st[i].foreign)
			continue;
		if (remove_only || !(p->fams & fam_bit(families[i]))) {
			fprintf(stderr, "nfguard: warning: %s: table %s " T_OURS " was not created by "
				"nfguard protect (no comment \"" OWNER "\"): left alone\n",
				what, fam_name(families[i]));
			continue;
		}
		cli_err(what, "table %s " T_OURS " exists and was not created by nfguard protect "
			"(no comment \"" OWNER "\"): rename or delete it first%s",
			fam_name(families[i]), dry_run ? "" : "; nothing was changed");
		refuse = true;
	}
	return refuse;
}

/* attempts when the ruleset changes between the dump and the batch */
#define GEN_TRIES	20

static int run(const struct profile *p, bool remove_only, bool dry_run, bool check)
{
	const char *what = remove_only ? "unprotect" : "protect";
	char *buf = malloc(1 << 20);
	struct outcome o = { 0 };
	struct state st[2];
	struct bld B = { 0 };
	uint32_t genid;
	struct nft n;
	unsigned int i, try;
	int ret;

	if (!buf) {
		cli_err(what, "out of memory");
		return CLI_EXIT_ERROR;
	}
	if (nft_open(&n) < 0) {
		free(buf);
		return CLI_EXIT_ERROR;
	}
	for (try = 0; try < GEN_TRIES; try++) {
		ret = nft_genid(&n, &genid);
		if (ret == 0)
			ret = read_state(&n, st);
		if (ret < 0 && dry_run) {
			fprintf(stderr, "nfguard: warning: %s --dry-run: cannot read the nftables "
				"ruleset (%s): printed as for an empty ruleset\n", what, strerror(-ret));
			memset(st, 0, sizeof(st));
			genid = 0;
			ret = 0;
		}
		if (ret < 0) {
			cli_err(what, "reading the nftables ruleset: %s%s",
				strerror(-ret), -ret == EPERM ?
				" (needs CAP_NET_ADMIN in this network namespace)" : "");
			ret = errno_exit(-ret);
			goto out;
		}
		if (foreign_tables(p, st, remove_only, dry_run)) {
			ret = CLI_EXIT_ERROR;
			goto out;
		}
		if (B.b)
			mnl_nlmsg_batch_stop(B.b);
		oplog_free(&B.log);
		memset(&B, 0, sizeof(B));
		B.b = mnl_nlmsg_batch_start(buf, 1 << 20);
		B.n = &n;
		/* the dump's generation: the batch commits on that ruleset or not at all */
		nftnl_batch_begin(mnl_nlmsg_batch_current(B.b), ++n.seq);
		if (genid)
			mnl_attr_put_u32(mnl_nlmsg_batch_current(B.b), NFNL_BATCH_GENID,
					 htonl(genid));
		mnl_nlmsg_batch_next(B.b);
		oplog_add(&B.log, n.seq, "(batch begin)");
		for (i = 0; i < 2; i++) {
			remove_ours(&B, families[i], &st[i]);
			if (!remove_only)
				install(&B, families[i], p);
		}
		if (B.err) {
			ret = CLI_EXIT_USAGE;
			goto out;
		}
		if (dry_run) {
			struct strv lines = { 0 };

			/* the command the batch installs, then the batch */
			for (i = 0; i < B.log.n; i++)
				if (B.log.ops[i] && !strncmp(B.log.ops[i], "add ", 4))
					strv_add(&lines, B.log.ops[i]);
			if (!remove_only)
				print_command(&lines);
			strv_free(&lines);
			for (i = 0; i < B.log.n; i++)
				if (B.log.ops[i] && B.log.ops[i][0] != '(')
					printf("# %s\n", B.log.ops[i]);
			cli_flush_or_die("protect --dry-run");
			ret = 0;
			goto out;
		}
		if (check) {
			ret = check_profile(&n, st, &B);
			goto out;
		}
		if (B.log.n == 1) {
			/* nothing installed, nothing to remove */
			ret = 0;
			goto out;
		}
		nftnl_batch_end(mnl_nlmsg_batch_current(B.b), ++n.seq);
		mnl_nlmsg_batch_next(B.b);
		ret = nft_batch_send(&n, B.b, genid, &o);
		if (ret != -ERESTART)
			break;
	}
	if (ret < 0) {
		const char *op = oplog_get(&B.log, o.seq), *hint = "";

		if (-ret == EPERM && (!op || !strncmp(op, "(batch", 6)))
			hint = " (needs CAP_NET_ADMIN in this network namespace)";
		else if (-ret == ENOENT)
			hint = " (is nft_compat available? is the blocklist set there?)";
		else if (-ret == ERESTART)
			hint = " (the ruleset kept changing while nfguard tried)";
		else if (-ret == ENOBUFS)
			hint = " (kernel answers lost: the batch was refused)";
		cli_err(what, "nftables refused the batch%s%s%s: %s%s%s%s; nothing was changed",
			op ? " at `" : "", op ? op : "", op ? "`" : "", strerror(-ret),
			o.msg[0] ? " (" : "", o.msg, o.msg[0] ? ")" : "");
		if (hint[0])
			fprintf(stderr, "nfguard: %s: hint:%s\n", what, hint);
		ret = -ret == EPERM && (!op || !strncmp(op, "(batch", 6)) ? CLI_EXIT_PERM :
		      CLI_EXIT_ERROR;
		goto out;
	}
	ret = 0;
out:
	if (B.b)
		mnl_nlmsg_batch_stop(B.b);
	oplog_free(&B.log);
	mnl_socket_close(n.nl);
	free(buf);
	return ret;
}

/* The family of each blocklist set; with --dry-run what cannot be read is assumed. */
static int blocklist_families(struct profile *p, bool dry)
{
	struct nfg_rs_info info;
	struct nfg_err e;
	struct nfg_rs *h = nfg_rs_open(&e);
	unsigned int i;

	for (i = 0; i < p->nbl; i++) {
		if (h && nfg_rs_get(h, p->bl[i], &info, &e) == 0) {
			p->bl_family[i] = info.family;
			continue;
		}
		if (!dry) {
			nfg_rs_close(h);
			cli_err("protect", "--blocklist %s: %s", p->bl[i], nfg_err_str(&e));
			return e.code == EPERM ? CLI_EXIT_PERM : CLI_EXIT_ERROR;
		}
		p->bl_family[i] = p->fams == FAM_IP6 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4;
		fprintf(stderr, "nfguard: warning: protect --dry-run: set %s: %s; assumed to be an "
			"%s set\n", p->bl[i], nfg_err_str(&e),
			p->bl_family[i] == NFG_FAMILY_IPV6 ? "ipv6" : "ipv4");
	}
	nfg_rs_close(h);
	return 0;
}

int cmd_protect(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "syncookie", required_argument, NULL, 's' },
		{ "kconnlimit", required_argument, NULL, 'k' },
		{ "blocklist", required_argument, NULL, 'b' },
		{ "rtcache", no_argument, NULL, 'r' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "show", no_argument, NULL, 'S' },
		{ "check", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ "ipv4", no_argument, NULL, '4' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "syncookie-mode", required_argument, NULL, 'M' },
		{ "syncookie-mss", required_argument, NULL, 'm' },
		{ "syncookie-wscale", required_argument, NULL, 'w' },
		{ "syncookie-sack-perm", no_argument, NULL, 'P' },
		{ "syncookie-timestamp", no_argument, NULL, 'T' },
		{ "syncookie-allowlist-timeout", required_argument, NULL, 't' },
		{ "syncookie-allowlist-mask", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct profile p = { .sc = { .wscale = -1 } };
	const char *sc_mask = NULL, *sc_opt = NULL;
	bool dry = false, showit = false, checkit = false, only4 = false, only6 = false;
	bool json = false;
	int c, ret, m4 = -1, m6 = -1;
	unsigned int i;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h46", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			p.syncookie = true;
			parse_ports(optarg, false, &p.sc_ports);
			break;
		case 'k':
			p.kconnlimit = true;
			if (p.nkcl == MAX_KCL)
				bad_arg("%s: at most 16 --kconnlimit options", optarg);
			/* LIMIT parsed once -4/-6 are known */
			p.kcl[p.nkcl].arg = optarg;
			if (optind >= argc)
				bad_arg("%s: --kconnlimit LIMIT[/MASK] PROTO/PORTS", "missing PROTO/PORTS");
			parse_ports(argv[optind++], true, &p.kcl[p.nkcl++].ports);
			break;
		case '4':
			only4 = true;
			break;
		case '6':
			only6 = true;
			break;
		case 'M':
			sc_opt = "--syncookie-mode";
			if (!strcmp(optarg, "proxy"))
				p.sc.mode = NFG_SC_MODE_PROXY;
			else if (!strcmp(optarg, "local"))
				p.sc.mode = NFG_SC_MODE_LOCAL;
			else
				bad_arg("--syncookie-mode \"%s\": proxy or local", optarg);
			break;
		case 'm':
			sc_opt = "--syncookie-mss";
			p.sc.mss = (uint16_t)parse_num(sc_opt, optarg, 88, 65535);
			break;
		case 'w':
			sc_opt = "--syncookie-wscale";
			p.sc.wscale = (int)parse_num(sc_opt, optarg, 0, 14);
			break;
		case 'P':
			sc_opt = "--syncookie-sack-perm";
			p.sc.sack_perm = true;
			break;
		case 'T':
			sc_opt = "--syncookie-timestamp";
			p.sc.timestamp = true;
			break;
		case 't':
			sc_opt = "--syncookie-allowlist-timeout";
			p.sc.timeout = parse_num(sc_opt, optarg, 1, 604800);
			break;
		case 'a':
			sc_opt = "--syncookie-allowlist-mask";
			sc_mask = optarg;
			break;
		case 'b':
			if (nfg_rs_name_check(optarg, false, NULL) < 0)
				bad_arg("--blocklist \"%s\": not a set name", optarg);
			for (i = 0; i < p.nbl && strcmp(p.bl[i], optarg); i++)
				;
			if (i < p.nbl)
				break;		/* given twice: once is enough */
			if (p.nbl == MAX_BL)
				bad_arg("%s: at most 16 --blocklist sets", optarg);
			p.bl[p.nbl++] = optarg;
			break;
		case 'r':
			p.rtcache = true;
			break;
		case 'n':
			dry = true;
			break;
		case 'S':
			showit = true;
			break;
		case 'C':
			checkit = true;
			break;
		case 'J':
			json = true;
			break;
		case 'h':
			usage_protect(stdout);
			return 0;
		default:
			bad_arg("%s (try nfguard protect --help)", optind > 1 && argv[optind - 1] ?
				argv[optind - 1] : "bad option");
		}
	}
	if (optind < argc)
		bad_arg("unexpected argument \"%s\"", argv[optind]);
	if (only4 && only6)
		bad_arg("%s", "-4 and -6 together: give neither for both families");
	p.fams = only4 ? FAM_IP : only6 ? FAM_IP6 : FAM_IP | FAM_IP6;
	for (i = 0; i < p.nkcl; i++)
		parse_limit(&p.kcl[i], p.fams);
	if (sc_mask) {
		parse_masks("--syncookie-allowlist-mask", sc_mask, sc_mask, p.fams, 1, &m4, &m6);
		p.sc.prefix = m4 < 0 ? 0 : m4;
		p.sc_prefix6 = m6 < 0 ? 0 : m6;
	}
	if (json && !showit)
		bad_arg("%s", "--json goes with --show");
	if (sc_opt && !p.syncookie)
		bad_arg("%s needs --syncookie tcp/PORTS", sc_opt);
	if (p.sc.mode == NFG_SC_MODE_LOCAL && p.sc.sack_perm && !p.sc.timestamp)
		bad_arg("%s", "--syncookie-sack-perm needs --syncookie-timestamp in local mode");
	if (showit) {
		struct state st[2];
		struct nft n;

		if (p.syncookie || p.kconnlimit || p.nbl || p.rtcache || dry || only4 || only6 ||
		    checkit)
			bad_arg("%s", "--show takes no other option");
		if (nft_open(&n) < 0)
			return CLI_EXIT_ERROR;
		ret = read_state(&n, st);
		if (ret < 0) {
			cli_err("protect --show", "reading the nftables ruleset: %s", strerror(-ret));
			mnl_socket_close(n.nl);
			return errno_exit(-ret);
		}
		ret = show(&n, st, json);
		mnl_socket_close(n.nl);
		return ret;
	}
	if (dry && checkit)
		bad_arg("%s", "--check and --dry-run together: --check changes nothing anyway");
	if (!p.syncookie && !p.kconnlimit && !p.nbl && !p.rtcache)
		bad_arg("%s", "nothing to protect with: give --syncookie, --kconnlimit, --blocklist or --rtcache");
	if (dry) {
		/* say what the plan takes for granted */
		static const enum nfg_ext exts[] = { NFG_EXT_RANGESET, NFG_EXT_KCONNLIMIT,
						     NFG_EXT_SYNCOOKIE, NFG_EXT_RTCACHE };
		bool want[] = { p.nbl > 0, p.kconnlimit, p.syncookie, p.rtcache };
		struct nfg_err e;

		for (i = 0; i < 4; i++)
			if (want[i] && nfg_ext_loaded(exts[i], &e) == 0)
				fprintf(stderr, "nfguard: warning: protect --dry-run: kernel module %s "
					"is not loaded: assumed it will be (protect loads it, or exits 3)\n",
					nfg_ext_module(exts[i]));
	}
	if (!dry && !checkit) {
		if ((p.nbl && (ret = need_module(NFG_EXT_RANGESET))) ||
		    (p.kconnlimit && (ret = need_module(NFG_EXT_KCONNLIMIT))) ||
		    (p.syncookie && (ret = need_module(NFG_EXT_SYNCOOKIE))) ||
		    (p.rtcache && (ret = need_module(NFG_EXT_RTCACHE))))
			return ret;
	}
	ret = blocklist_families(&p, dry || checkit);
	if (ret)
		return ret;
	for (i = 0; i < p.nbl && (only4 || only6); i++) {
		if (p.bl_family[i] == (only6 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4))
			continue;
		cli_err("protect", "--blocklist %s is an %s set: -%c installs no %s rule to use it",
			p.bl[i], p.bl_family[i] == NFG_FAMILY_IPV6 ? "ipv6" : "ipv4",
			only6 ? '6' : '4', only6 ? "IPv6" : "IPv4");
		return CLI_EXIT_USAGE;
	}
	return run(&p, false, dry, checkit);
}

int cmd_unprotect(int argc, char **argv)
{
	bool dry = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dry-run")) {
			dry = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_protect(stdout);
			return 0;
		} else {
			cli_err("unprotect", "unexpected argument \"%s\" (try nfguard unprotect --help)",
				argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	return run(NULL, true, dry, false);
}
