// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfg-nft-xtdump: print every xt match/target expression (nft_compat) of the
 * rules of an nf_tables table, or of one chain of it, one per line:
 *
 *   nfg-nft-xtdump ip|ip6 TABLE [CHAIN]
 *   -> match kconnlimit rev 0 0200000020010000...
 *
 * The info bytes are what the kernel dumps (the user part of the ABI struct,
 * the kernel-only tail zeroed), so rules installed by iptables-nft and by
 * nfguard protect compare byte for byte. Exit 0, 1 on netlink errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

static int expr_cb(struct nftnl_expr *e, void *data)
{
	const char *kind = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	bool tg = !strcmp(kind, "target");
	const unsigned char *d;
	uint32_t len = 0, i;

	(void)data;
	if (!tg && strcmp(kind, "match"))
		return 0;
	d = nftnl_expr_get(e, tg ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO, &len);
	printf("%s %s rev %u ", kind,
	       nftnl_expr_get_str(e, tg ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME),
	       nftnl_expr_get_u32(e, tg ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV));
	for (i = 0; d && i < len; i++)
		printf("%02x", d[i]);
	putchar('\n');
	return 0;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_rule *r = nftnl_rule_alloc();

	(void)data;
	if (r && nftnl_rule_nlmsg_parse(nlh, r) == 0)
		nftnl_expr_foreach(r, expr_cb, NULL);
	if (r)
		nftnl_rule_free(r);
	return MNL_CB_OK;
}

int main(int argc, char **argv)
{
	char buf[32768];
	struct mnl_socket *nl;
	struct nftnl_rule *r;
	struct nlmsghdr *nlh;
	uint32_t seq = (uint32_t)time(NULL), portid;
	int family, ret;

	if (argc < 3 || argc > 4 || (strcmp(argv[1], "ip") && strcmp(argv[1], "ip6"))) {
		fprintf(stderr, "usage: %s ip|ip6 TABLE [CHAIN]\n", argv[0]);
		return 1;
	}
	family = strcmp(argv[1], "ip6") ? NFPROTO_IPV4 : NFPROTO_IPV6;
	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("netlink");
		return 1;
	}
	portid = mnl_socket_get_portid(nl);
	r = nftnl_rule_alloc();
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, argv[2]);
	if (argc == 4)
		nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, argv[3]);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, family, NLM_F_DUMP, seq);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nftnl_rule_free(r);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		perror("send");
		return 1;
	}
	do {
		ret = (int)mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret <= 0)
			break;
		ret = mnl_cb_run(buf, (size_t)ret, seq, portid, rule_cb, NULL);
	} while (ret > 0);
	if (ret < 0) {
		fprintf(stderr, "%s %s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	mnl_socket_close(nl);
	return 0;
}
