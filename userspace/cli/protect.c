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
 *  - nft_compat passes the nft table's name as the xtables table name, and
 *    the extensions check it as under iptables: SYNCOOKIE only in "raw",
 *    RTCACHE only in "mangle"/"filter", kconnlimit anywhere but "raw".
 *    So: table "nfguard" holds the blocklist and kconnlimit chains; SYNCOOKIE
 *    is our own base chain "nfguard-syncookie" in table "raw", RTCACHE our
 *    own base chain "nfguard-rtcache" in table "mangle". A raw/mangle table
 *    that protect had to create carries the comment OWNER and unprotect
 *    removes it once no other chain is left in it; otherwise only our chains
 *    go.
 *
 * Idempotent: the batch deletes what a previous protect installed (found by
 * a dump first) and adds the profile again, so protect twice lists the same
 * ruleset, and a profile without an option removes what that option added.
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
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "cli.h"
#include "libnfguard.h"

#define OWNER		"managed by nfguard protect"
#define T_OURS		"nfguard"
#define C_SC		"nfguard-syncookie"
#define C_RTC		"nfguard-rtcache"
#define MAX_PORTS	32

struct ports {
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP; 0 = unset */
	unsigned int n;
	uint16_t port[MAX_PORTS];
};

struct profile {
	bool syncookie, kconnlimit, rtcache;
	unsigned int fams;		/* FAM_IP | FAM_IP6: families to install */
	struct ports sc_ports, kcl_ports;
	uint32_t kcl_limit;
	int kcl_prefix, kcl_prefix6;	/* -1: whole address */
	struct nfg_nft_syncookie sc;	/* SYNCOOKIE options, .prefix for IPv4 */
	int sc_prefix6;			/* allowlist mask for IPv6; 0 = whole address */
	const char *blocklist;
	uint8_t bl_family;		/* family of the blocklist set */
};

#define FAM_IP	1u
#define FAM_IP6	2u

/* What a dump found of ours, per family. */
struct state {
	bool ours;			/* table nfguard */
	bool raw, mangle;		/* the tables exist */
	bool raw_owned, mangle_owned;	/* ... created by protect */
	bool sc_chain, rtc_chain;	/* our chains in them */
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
		"Usage: nfguard protect [-4|-6] [--syncookie tcp/PORTS [SYNCOOKIE OPTIONS]]\n"
		"                       [--kconnlimit LIMIT[/MASK[,MASK6]] PROTO/PORTS]\n"
		"                       [--blocklist SET] [--rtcache] [--dry-run]\n"
		"       nfguard protect --show\n"
		"       nfguard unprotect [--dry-run]\n"
		"  SYNCOOKIE OPTIONS: --syncookie-mode proxy|local, --syncookie-mss N (88-65535),\n"
		"  --syncookie-wscale N (0-14), --syncookie-sack-perm, --syncookie-timestamp,\n"
		"  --syncookie-allowlist-timeout SECONDS (1-604800, default 300),\n"
		"  --syncookie-allowlist-mask MASK[,MASK6] (default the whole address).\n"
		"  Installs the profile (replacing a previous one) in one atomic nftables\n"
		"  batch: tables ip/ip6 nfguard, chains nfguard-syncookie in ip/ip6 raw and\n"
		"  nfguard-rtcache in ip/ip6 mangle; -4/-6: only the ip/ip6 rules (a single\n"
		"  MASK is then that family's). PORTS: 80,443; PROTO tcp or udp; MASK6\n"
		"  defaults to 128. --dry-run prints the batch; --show the installed profile with\n"
		"  every option. Exit: 0 ok, 1 error, 2 bad arguments, 3 kernel module\n"
		"  missing, 4 permission denied.\n");
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

/* "tcp/80,443" */
static void parse_ports(const char *arg, bool udp_ok, struct ports *p)
{
	char buf[256], *s, *tok, *save = NULL;
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
	p->n = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!parse_u32(tok, 65535, &v) || !v)
			bad_arg("\"%s\": ports are numbers from 1 to 65535", arg);
		if (p->n == MAX_PORTS)
			bad_arg("\"%s\": at most 32 ports", arg);
		p->port[p->n++] = (uint16_t)v;
	}
	if (!p->n)
		bad_arg("\"%s\": no port", arg);
}

/*
 * "MASK[,MASK6]" of option @opt: with both families MASK is IPv4's (0/1..32)
 * and MASK6 IPv6's (0/1..128); with one family (-4/-6) a single MASK is that
 * family's. @min: the smallest valid mask. -1 stays where nothing is given.
 */
static void parse_masks(const char *opt, const char *arg, unsigned int fams,
			uint32_t min, int *m4, int *m6)
{
	char buf[64], *comma;
	uint32_t v;

	if (strlen(arg) >= sizeof(buf))
		bad_arg("\"%s\": too long", arg);
	strcpy(buf, arg);
	comma = strchr(buf, ',');
	if (comma)
		*comma++ = '\0';
	if (fams == FAM_IP6) {
		if (comma)
			cli_err("protect", "%s \"%s\": -6 takes one mask, the IPv6 one", opt, arg);
		if (comma || !parse_u32(buf, 128, &v) || v < min) {
			if (!comma)
				cli_err("protect", "%s \"%s\": MASK6 is an IPv6 prefix length from %u to 128",
					opt, arg, min);
			exit(CLI_EXIT_USAGE);
		}
		*m6 = (int)v;
		return;
	}
	if (!parse_u32(buf, 32, &v) || v < min) {
		cli_err("protect", "%s \"%s\": MASK is an IPv4 prefix length from %u to 32", opt, arg, min);
		exit(CLI_EXIT_USAGE);
	}
	*m4 = (int)v;
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

/* "64", "64/24" or "64/24,64" */
static void parse_limit(const char *arg, struct profile *pr)
{
	char buf[64], *slash;

	if (strlen(arg) >= sizeof(buf))
		bad_arg("\"%s\": too long", arg);
	strcpy(buf, arg);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (!parse_u32(buf, UINT32_MAX, &pr->kcl_limit))
		bad_arg("--kconnlimit \"%s\": LIMIT is a number from 0 to 4294967295", arg);
	pr->kcl_prefix = pr->kcl_prefix6 = -1;
	if (slash)
		parse_masks("--kconnlimit", slash, pr->fams, 0, &pr->kcl_prefix, &pr->kcl_prefix6);
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

static int nft_open(struct nft *n)
{
	n->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!n->nl || mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		cli_err("protect", "netlink socket: %s", strerror(err));
		if (n->nl)
			mnl_socket_close(n->nl);
		return -err;
	}
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

/*
 * Send a batch; every message asks for an ACK. The kernel handles the whole
 * batch inside sendmsg(), so the answers are queued when it returns.
 * Returns 0 or the first -errno.
 */
static int nft_batch_send(struct nft *n, struct mnl_nlmsg_batch *b)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int fd = mnl_socket_get_fd(n->nl), ret, first = 0;

	if (mnl_socket_sendto(n->nl, mnl_nlmsg_batch_head(b),
			      mnl_nlmsg_batch_size(b)) < 0)
		return -errno;
	for (;;) {
		struct timeval tv = { 0, 0 };
		fd_set fds;

		FD_ZERO(&fds);
		FD_SET(fd, &fds);
		if (select(fd + 1, &fds, NULL, NULL, &tv) <= 0)
			break;
		ret = (int)mnl_socket_recvfrom(n->nl, buf, sizeof(buf));
		if (ret <= 0)
			break;
		ret = mnl_cb_run(buf, (size_t)ret, 0, n->portid, NULL, NULL);
		if (ret < 0 && !first)
			first = -errno;
	}
	return first;
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
		st->ours = true;
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
		st->sc_chain |= !strcmp(name, C_SC);
	} else if (!strcmp(tab, "mangle")) {
		st->mangle_chains++;
		st->rtc_chain |= !strcmp(name, C_RTC);
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
	if (!strcmp(kind, "reject") &&
	    nftnl_expr_get_u32(e, NFTNL_EXPR_REJECT_TYPE) == NFT_REJECT_TCP_RST) {
		rt_add(t, "-j REJECT --reject-with tcp-reset");
		return 0;
	}
	snprintf(s, sizeof(s), "[%s]", kind);
	rt_add(t, s);
	return 0;
}

static void print_rule(struct nftnl_rule *r)
{
	char buf[1024];
	struct rtext t = { .buf = buf, .len = sizeof(buf) };

	buf[0] = '\0';
	t.family = (uint8_t)nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY);
	nftnl_expr_foreach(r, expr_text, &t);
	printf("add rule %s %s %s %s\n", fam_name(t.family),
	       nftnl_rule_get_str(r, NFTNL_RULE_TABLE),
	       nftnl_rule_get_str(r, NFTNL_RULE_CHAIN), buf);
}

static const char *hook_name(uint32_t h)
{
	static const char *const n[] = { "prerouting", "input", "forward", "output", "postrouting" };

	return h < 5 ? n[h] : "?";
}

static void print_chain(struct nftnl_chain *c)
{
	uint8_t f = (uint8_t)nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);

	printf("add chain %s %s %s", fam_name(f), nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE),
	       nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
	if (nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		printf(" { type filter hook %s priority %d; }",
		       hook_name(nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM)),
		       nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO));
	putchar('\n');
}

/* ---- building the batch ------------------------------------------------------ */

struct bld {
	struct mnl_nlmsg_batch *b;
	struct nft *n;
	bool print;		/* --dry-run: print every operation */
	int err;
};

static void put_table(struct bld *B, uint16_t type, uint8_t f, const char *name,
		      bool owner)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

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
					  (type == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0) | NLM_F_ACK,
					  ++B->n->seq);
	nftnl_table_nlmsg_build_payload(nlh, t);
	mnl_nlmsg_batch_next(B->b);
	if (B->print)
		printf("%s table %s %s%s\n", type == NFT_MSG_NEWTABLE ? "add" : "delete",
		       fam_name(f), name, owner ? " { comment \"" OWNER "\"; }" : "");
	nftnl_table_free(t);
}

/* hook < 0: a regular chain */
static void put_chain(struct bld *B, uint16_t type, uint8_t f, const char *table,
		      const char *name, int hook, int prio)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, f);
	if (type == NFT_MSG_NEWCHAIN && hook >= 0) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
	}
	nlh = nftnl_chain_nlmsg_build_hdr(mnl_nlmsg_batch_current(B->b), type, f,
					  (type == NFT_MSG_NEWCHAIN ? NLM_F_CREATE : 0) | NLM_F_ACK,
					  ++B->n->seq);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	mnl_nlmsg_batch_next(B->b);
	if (B->print) {
		if (type == NFT_MSG_NEWCHAIN)
			print_chain(c);
		else
			printf("delete chain %s %s %s\n", fam_name(f), table, name);
	}
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

	nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(B->b), NFT_MSG_NEWRULE, f,
					 NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, ++B->n->seq);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	mnl_nlmsg_batch_next(B->b);
	if (B->print)
		print_rule(r);
	nftnl_rule_free(r);
}

/* Remove what a previous protect installed in family @f (state @st). */
static void remove_ours(struct bld *B, uint8_t f, const struct state *st)
{
	if (st->ours)
		put_table(B, NFT_MSG_DELTABLE, f, T_OURS, false);
	if (st->sc_chain) {
		if (st->raw_owned && st->raw_chains == 1)
			put_table(B, NFT_MSG_DELTABLE, f, "raw", false);
		else
			put_chain(B, NFT_MSG_DELCHAIN, f, "raw", C_SC, -1, 0);
	}
	if (st->rtc_chain) {
		if (st->mangle_owned && st->mangle_chains == 1)
			put_table(B, NFT_MSG_DELTABLE, f, "mangle", false);
		else
			put_chain(B, NFT_MSG_DELCHAIN, f, "mangle", C_RTC, -1, 0);
	}
}

static void install(struct bld *B, uint8_t f, const struct profile *p,
		    const struct state *st)
{
	struct nfg_err e;
	struct nftnl_rule *r;
	unsigned int i;
	int h;

	if (!(p->fams & fam_bit(f)))
		return;
	put_table(B, NFT_MSG_NEWTABLE, f, T_OURS, true);
	if (p->blocklist && p->bl_family == nfg_fam(f)) {
		put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, "blocklist", NF_INET_PRE_ROUTING, -310);
		r = rule_new(f, T_OURS, "blocklist");
		if (add_x(B, r, nfg_nft_rangeset(nfg_fam(f), &(struct nfg_nft_rangeset){
				.set = p->blocklist }, &e), &e)) {
			add_verdict(r, NF_DROP, NULL);
			put_rule(B, r);
		} else {
			nftnl_rule_free(r);
		}
	}
	if (p->kconnlimit) {
		static const int hooks[] = { NF_INET_LOCAL_IN, NF_INET_FORWARD };

		put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, "kconnlimit", -1, 0);
		r = rule_new(f, T_OURS, "kconnlimit");
		if (add_x(B, r, nfg_nft_kconnlimit(nfg_fam(f), &(struct nfg_nft_kconnlimit){
				.limit = p->kcl_limit,
				.prefix = f == NFPROTO_IPV6 ? p->kcl_prefix6 : p->kcl_prefix,
			}, &e), &e)) {
			struct nftnl_expr *x = nftnl_expr_alloc("reject");

			nftnl_expr_set_u32(x, NFTNL_EXPR_REJECT_TYPE, p->kcl_ports.proto == IPPROTO_TCP ?
					   NFT_REJECT_TCP_RST : NFT_REJECT_ICMP_UNREACH);
			nftnl_expr_set_u8(x, NFTNL_EXPR_REJECT_CODE,
					  f == NFPROTO_IPV6 ? 4 /* port unreachable */ : 3);
			nftnl_rule_add_expr(r, x);
			put_rule(B, r);
		} else {
			nftnl_rule_free(r);
		}
		for (h = 0; h < 2; h++) {
			const char *cn = hooks[h] == NF_INET_LOCAL_IN ? "input" : "forward";

			put_chain(B, NFT_MSG_NEWCHAIN, f, T_OURS, cn, hooks[h], 0);
			for (i = 0; i < p->kcl_ports.n; i++) {
				r = rule_new(f, T_OURS, cn);
				add_l4(r, p->kcl_ports.proto, p->kcl_ports.port[i],
				       p->kcl_ports.proto == IPPROTO_TCP);
				add_verdict(r, NFT_JUMP, "kconnlimit");
				put_rule(B, r);
			}
		}
	}
	if (p->syncookie) {
		struct nfg_nft_syncookie sc = p->sc;

		if (f == NFPROTO_IPV6)
			sc.prefix = p->sc_prefix6;
		/* created, or recreated after remove_ours() deleted it */
		put_table(B, NFT_MSG_NEWTABLE, f, "raw", !st->raw || st->raw_owned);
		put_chain(B, NFT_MSG_NEWCHAIN, f, "raw", C_SC, NF_INET_PRE_ROUTING, -300);
		for (i = 0; i < p->sc_ports.n; i++) {
			r = rule_new(f, "raw", C_SC);
			add_l4(r, IPPROTO_TCP, p->sc_ports.port[i], false);
			if (add_x(B, r, nfg_nft_syncookie(nfg_fam(f), &sc, &e), &e))
				put_rule(B, r);
			else
				nftnl_rule_free(r);
		}
	}
	if (p->rtcache) {
		put_table(B, NFT_MSG_NEWTABLE, f, "mangle", !st->mangle || st->mangle_owned);
		put_chain(B, NFT_MSG_NEWCHAIN, f, "mangle", C_RTC, NF_INET_FORWARD, -150);
		r = rule_new(f, "mangle", C_RTC);
		if (add_x(B, r, nfg_nft_rtcache(nfg_fam(f), &e), &e))
			put_rule(B, r);
		else
			nftnl_rule_free(r);
	}
}

/* ---- show ------------------------------------------------------------------- */

static bool chain_is_ours(const char *table, const char *chain)
{
	return !strcmp(table, T_OURS) || (!strcmp(table, "raw") && !strcmp(chain, C_SC)) ||
	       (!strcmp(table, "mangle") && !strcmp(chain, C_RTC));
}

struct show {
	struct nft *n;
	int err;
	uint8_t family;
	const char *table;
	bool any, owned;
};

static int show_rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_rule *r = nftnl_rule_alloc();

	(void)data;
	if (r && nftnl_rule_nlmsg_parse(nlh, r) == 0)
		print_rule(r);
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

		if (!s->any) {
			printf("add table %s %s%s\n", fam_name(s->family), s->table,
			       s->owned ? " { comment \"" OWNER "\"; }" : "");
			s->any = true;
		}
		print_chain(c);
		/* a second socket: this one is inside a dump */
		if (nft_open(&n2) == 0) {
			req = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, s->family, NLM_F_DUMP,
						    ++n2.seq);
			nftnl_rule_set_str(r, NFTNL_RULE_TABLE, s->table);
			nftnl_rule_set_str(r, NFTNL_RULE_CHAIN,
					   nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
			nftnl_rule_nlmsg_build_payload(req, r);
			if (nft_dump(&n2, req, show_rule_cb, NULL) < 0 && !s->err)
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

static int show(struct nft *n, const struct state st[2])
{
	static const char *const tables[] = { T_OURS, "raw", "mangle" };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int i, t;

	for (i = 0; i < 2; i++) {
		for (t = 0; t < 3; t++) {
			struct show s = { .n = n, .family = families[i], .table = tables[t],
					  .owned = t == 0 || (t == 1 && st[i].raw_owned) ||
						   (t == 2 && st[i].mangle_owned) };
			struct nftnl_chain *c;
			struct nlmsghdr *nlh;
			int ret;

			if ((t == 0 && !st[i].ours) || (t == 1 && !st[i].sc_chain) ||
			    (t == 2 && !st[i].rtc_chain))
				continue;
			c = nftnl_chain_alloc();
			nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, tables[t]);
			nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETCHAIN, families[i],
						    NLM_F_DUMP, ++n->seq);
			nftnl_chain_nlmsg_build_payload(nlh, c);
			nftnl_chain_free(c);
			ret = nft_dump(n, nlh, show_chain_cb, &s);
			if (ret < 0 || s.err < 0) {
				ret = ret < 0 ? ret : s.err;
				cli_err("protect --show", "%s %s: %s", fam_name(families[i]),
					tables[t], strerror(-ret));
				return errno_exit(-ret);
			}
		}
	}
	cli_flush_or_die("protect --show");
	return 0;
}

/* ---- modules ---------------------------------------------------------------- */

/* 0 if loaded (autoloading it if possible), else prints and returns the exit code */
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
	if (ret == 0) {
		cli_err("protect", "kernel module %s is not loaded (modprobe %s)",
			nfg_ext_module(ext), nfg_ext_module(ext));
		return CLI_EXIT_NOMOD;
	}
	return 0;
}

/* ---- entry points ----------------------------------------------------------- */

static int run(const struct profile *p, bool remove_only, bool dry_run)
{
	char *buf = malloc(1 << 20);
	struct state st[2];
	struct bld B = { 0 };
	struct nft n;
	unsigned int i;
	int ret;

	if (!buf) {
		cli_err("protect", "out of memory");
		return CLI_EXIT_ERROR;
	}
	if (nft_open(&n) < 0) {
		free(buf);
		return CLI_EXIT_ERROR;
	}
	ret = read_state(&n, st);
	if (ret < 0 && dry_run) {
		/* unprivileged dry run: as on an empty ruleset */
		memset(st, 0, sizeof(st));
		ret = 0;
	}
	if (ret < 0) {
		cli_err(remove_only ? "unprotect" : "protect", "reading the nftables ruleset: %s%s",
			strerror(-ret), -ret == EPERM ?
			" (needs CAP_NET_ADMIN in this network namespace)" : "");
		ret = errno_exit(-ret);
		goto out;
	}
	B.b = mnl_nlmsg_batch_start(buf, 1 << 20);
	B.n = &n;
	B.print = dry_run;
	nftnl_batch_begin(mnl_nlmsg_batch_current(B.b), ++n.seq);
	mnl_nlmsg_batch_next(B.b);
	for (i = 0; i < 2; i++) {
		remove_ours(&B, families[i], &st[i]);
		if (!remove_only)
			install(&B, families[i], p, &st[i]);
	}
	nftnl_batch_end(mnl_nlmsg_batch_current(B.b), ++n.seq);
	mnl_nlmsg_batch_next(B.b);
	if (B.err) {
		ret = CLI_EXIT_USAGE;
		goto out;
	}
	if (dry_run) {
		cli_flush_or_die("protect --dry-run");
		ret = 0;
		goto out;
	}
	ret = nft_batch_send(&n, B.b);
	if (ret < 0) {
		const char *hint = "";

		if (-ret == EPERM)
			hint = " (needs CAP_NET_ADMIN in this network namespace)";
		else if (-ret == ENOENT)
			hint = " (is nft_compat available? is the blocklist set there?)";
		cli_err(remove_only ? "unprotect" : "protect",
			"nftables refused the batch: %s%s; nothing was changed", strerror(-ret), hint);
		ret = errno_exit(-ret);
		goto out;
	}
	ret = 0;
out:
	if (B.b)
		mnl_nlmsg_batch_stop(B.b);
	mnl_socket_close(n.nl);
	free(buf);
	return ret;
}

static int blocklist_family(struct profile *p)
{
	struct nfg_rs_info info;
	struct nfg_err e;
	struct nfg_rs *h = nfg_rs_open(&e);

	if (!h || nfg_rs_get(h, p->blocklist, &info, &e) < 0) {
		nfg_rs_close(h);
		cli_err("protect", "--blocklist %s: %s", p->blocklist, nfg_err_str(&e));
		return e.code == EPERM ? CLI_EXIT_PERM : CLI_EXIT_ERROR;
	}
	nfg_rs_close(h);
	p->bl_family = info.family;
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
	struct profile p = { .kcl_prefix = -1, .kcl_prefix6 = -1, .sc = { .wscale = -1 } };
	const char *limit = NULL, *sc_mask = NULL, *sc_opt = NULL;
	bool dry = false, showit = false, only4 = false, only6 = false;
	int c, ret, m4 = -1, m6 = -1;

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
			limit = optarg;		/* parsed once -4/-6 are known */
			if (optind >= argc)
				bad_arg("%s: --kconnlimit LIMIT[/MASK] PROTO/PORTS", "missing PROTO/PORTS");
			parse_ports(argv[optind++], true, &p.kcl_ports);
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
			p.blocklist = optarg;
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
	if (limit)
		parse_limit(limit, &p);
	if (sc_mask) {
		parse_masks("--syncookie-allowlist-mask", sc_mask, p.fams, 1, &m4, &m6);
		p.sc.prefix = m4 < 0 ? 0 : m4;
		p.sc_prefix6 = m6 < 0 ? 0 : m6;
	}
	if (sc_opt && !p.syncookie)
		bad_arg("%s needs --syncookie tcp/PORTS", sc_opt);
	if (p.sc.mode == NFG_SC_MODE_LOCAL && p.sc.sack_perm && !p.sc.timestamp)
		bad_arg("%s", "--syncookie-sack-perm needs --syncookie-timestamp in local mode");
	if (showit) {
		struct state st[2];
		struct nft n;

		if (p.syncookie || p.kconnlimit || p.blocklist || p.rtcache || dry || only4 || only6)
			bad_arg("%s", "--show takes no other option");
		if (nft_open(&n) < 0)
			return CLI_EXIT_ERROR;
		ret = read_state(&n, st);
		if (ret < 0) {
			cli_err("protect --show", "reading the nftables ruleset: %s", strerror(-ret));
			mnl_socket_close(n.nl);
			return errno_exit(-ret);
		}
		ret = show(&n, st);
		mnl_socket_close(n.nl);
		return ret;
	}
	if (!p.syncookie && !p.kconnlimit && !p.blocklist && !p.rtcache)
		bad_arg("%s", "nothing to protect with: give --syncookie, --kconnlimit, --blocklist or --rtcache");
	if (!dry) {
		if ((p.blocklist && (ret = need_module(NFG_EXT_RANGESET))) ||
		    (p.kconnlimit && (ret = need_module(NFG_EXT_KCONNLIMIT))) ||
		    (p.syncookie && (ret = need_module(NFG_EXT_SYNCOOKIE))) ||
		    (p.rtcache && (ret = need_module(NFG_EXT_RTCACHE))))
			return ret;
	}
	if (p.blocklist && (ret = blocklist_family(&p))) {
		if (!dry)
			return ret;
		p.bl_family = only6 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4;
		cli_err("protect --dry-run", "assuming set %s is an %s set", p.blocklist,
			only6 ? "ipv6" : "ipv4");
	}
	if (p.blocklist && (only4 || only6) &&
	    p.bl_family != (only6 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4)) {
		cli_err("protect", "--blocklist %s is an %s set: -%c installs no %s rule to use it",
			p.blocklist, p.bl_family == NFG_FAMILY_IPV6 ? "ipv6" : "ipv4",
			only6 ? '6' : '4', only6 ? "IPv6" : "IPv4");
		return CLI_EXIT_USAGE;
	}
	return run(&p, false, dry);
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
	return run(NULL, true, dry);
}
