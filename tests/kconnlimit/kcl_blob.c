// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfg-kcl-blob: add one nf_tables rule holding an xt "kconnlimit" match
 * whose info is built by hand, bypassing the iptables plugin, so the
 * kernel's checkentry is tested on its own.
 *
 *   nfg-kcl-blob 4|6 FLAGS PREFIX LIMIT [NAME|-] [PAD0]
 *
 * Creates table "nfgblob" (family ip or ip6), chain "c" and the rule in one
 * batch. Exit 0 when the kernel accepted it, 1 with "rejected: <errno
 * text>" on stderr when it refused, 2 on usage or local errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/xt_kconnlimit.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	struct xt_kconnlimit_mtinfo info;
	struct mnl_nlmsg_batch *batch;
	struct nftnl_table *t;
	struct nftnl_chain *c;
	struct nftnl_rule *r;
	struct nftnl_expr *e;
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	uint32_t seq = time(NULL), portid;
	int family, ret, err = 0;
	void *blob;

	(void)seq;

	if (argc < 5 || argc > 7 || (strcmp(argv[1], "4") && strcmp(argv[1], "6"))) {
		fprintf(stderr, "usage: %s 4|6 FLAGS PREFIX LIMIT [NAME|-] [PAD0]\n", argv[0]);
		return 2;
	}
	family = argv[1][0] == '6' ? NFPROTO_IPV6 : NFPROTO_IPV4;
	memset(&info, 0, sizeof(info));
	info.flags = strtoul(argv[2], NULL, 0);
	info.prefix = strtoul(argv[3], NULL, 0);
	info.limit = strtoul(argv[4], NULL, 0);
	if (argc > 5 && strcmp(argv[5], "-"))
		/* may fill all 32 bytes: an unterminated name on purpose */
		memcpy(info.name, argv[5], strnlen(argv[5], sizeof(info.name)));
	if (argc > 6)
		info.pad[0] = strtoul(argv[6], NULL, 0);

	t = nftnl_table_alloc();
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, "nfgblob");
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, family);
	c = nftnl_chain_alloc();
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, "nfgblob");
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "c");
	r = nftnl_rule_alloc();
	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, "nfgblob");
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, "c");
	nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, family);
	e = nftnl_expr_alloc("match");
	nftnl_expr_set_str(e, NFTNL_EXPR_MT_NAME, "kconnlimit");
	nftnl_expr_set_u32(e, NFTNL_EXPR_MT_REV, 0);
	/* libnftnl keeps (and later frees) the buffer it is given */
	blob = malloc(sizeof(info));
	if (!blob)
		return 2;
	memcpy(blob, &info, sizeof(info));
	nftnl_expr_set(e, NFTNL_EXPR_MT_INFO, blob, sizeof(info));
	nftnl_rule_add_expr(r, e);

	batch = mnl_nlmsg_batch_start(buf, sizeof(buf));
	nftnl_batch_begin(mnl_nlmsg_batch_current(batch), seq++);
	mnl_nlmsg_batch_next(batch);
	nlh = nftnl_table_nlmsg_build_hdr(mnl_nlmsg_batch_current(batch), NFT_MSG_NEWTABLE,
					  family, NLM_F_CREATE | NLM_F_ACK, seq++);
	nftnl_table_nlmsg_build_payload(nlh, t);
	mnl_nlmsg_batch_next(batch);
	nlh = nftnl_chain_nlmsg_build_hdr(mnl_nlmsg_batch_current(batch), NFT_MSG_NEWCHAIN,
					  family, NLM_F_CREATE | NLM_F_ACK, seq++);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	mnl_nlmsg_batch_next(batch);
	nlh = nftnl_rule_nlmsg_build_hdr(mnl_nlmsg_batch_current(batch), NFT_MSG_NEWRULE,
					 family, NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, seq++);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	mnl_nlmsg_batch_next(batch);
	nftnl_batch_end(mnl_nlmsg_batch_current(batch), seq++);
	mnl_nlmsg_batch_next(batch);

	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("netlink");
		return 2;
	}
	portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(batch),
			      mnl_nlmsg_batch_size(batch)) < 0) {
		perror("send");
		return 2;
	}
	/* one ack per message (3); stop at the first error */
	{
		struct timeval tv = { .tv_sec = 10 };
		int acks = 0;

		setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (acks < 3 && !err) {
			ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
			if (ret <= 0) {
				perror("receive");
				return 2;
			}
			for (nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, ret);
			     nlh = mnl_nlmsg_next(nlh, &ret)) {
				const struct nlmsgerr *me;

				if (nlh->nlmsg_pid != portid || nlh->nlmsg_type != NLMSG_ERROR)
					continue;
				me = mnl_nlmsg_get_payload(nlh);
				acks++;
				if (me->error && !err)
					err = -me->error;
			}
		}
	}
	mnl_socket_close(nl);
	nftnl_rule_free(r);
	nftnl_chain_free(c);
	nftnl_table_free(t);
	if (err) {
		fprintf(stderr, "rejected: %s\n", strerror(err));
		return 1;
	}
	return 0;
}
