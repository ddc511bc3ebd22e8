// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfg-kcl-nfqueue: a minimal NFQUEUE reader (libmnl, nfnetlink_queue) that
 * accepts every packet queued to one queue, for the kconnlimit VM cases
 * (a kconnlimit rule followed by -j NFQUEUE must let connections complete).
 *
 *   nfg-kcl-nfqueue QUEUE READYFILE
 *
 * Binds QUEUE (metadata only: no payload copied), creates READYFILE once
 * bound, then answers NF_ACCEPT to every packet until killed. Each verdict
 * also rewrites READYFILE with the number of packets accepted so far, so a
 * test can see that its packets went through the queue. Exit 1 on errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

/* Fixed sizes: MNL_SOCKET_BUFFER_SIZE is a sysconf() call. */
#define NFQ_BUFSZ	(65536 + 8192)

static struct mnl_socket *nl;
static unsigned int queue;
static unsigned long accepted;
static const char *readyfile;

static struct nlmsghdr *nfq_hdr(char *buf, int type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = htons(queue);
	return nlh;
}

static void write_ready(void)
{
	FILE *f = fopen(readyfile, "w");

	if (!f) {
		perror(readyfile);
		exit(1);
	}
	fprintf(f, "%lu\n", accepted);
	fclose(f);
}

static int attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, NFQA_MAX) > 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

static int packet_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *tb[NFQA_MAX + 1] = { NULL };
	struct nfqnl_msg_packet_hdr *ph;
	struct nfqnl_msg_verdict_hdr vh;
	char buf[8192];
	struct nlmsghdr *out;

	(void)data;
	if (mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb) < 0)
		return MNL_CB_ERROR;
	if (!tb[NFQA_PACKET_HDR] ||
	    mnl_attr_get_payload_len(tb[NFQA_PACKET_HDR]) < sizeof(*ph))
		return MNL_CB_OK;
	ph = mnl_attr_get_payload(tb[NFQA_PACKET_HDR]);
	out = nfq_hdr(buf, NFQNL_MSG_VERDICT);
	vh.verdict = htonl(NF_ACCEPT);
	vh.id = ph->packet_id;	/* already in network order */
	mnl_attr_put(out, NFQA_VERDICT_HDR, sizeof(vh), &vh);
	if (mnl_socket_sendto(nl, out, out->nlmsg_len) < 0) {
		perror("verdict");
		return MNL_CB_ERROR;
	}
	accepted++;
	write_ready();
	return MNL_CB_OK;
}

/* One CONFIG request, acknowledged. */
static void config(struct nlmsghdr *nlh)
{
	char buf[8192];
	int ret;

	nlh->nlmsg_flags |= NLM_F_ACK;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		perror("config send");
		exit(1);
	}
	ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (ret > 0)
		ret = mnl_cb_run(buf, ret, 0, 0, NULL, NULL);
	if (ret < 0) {
		fprintf(stderr, "queue %u: config refused: %s\n", queue, strerror(errno));
		exit(1);
	}
}

/* Receive buffer: large enough for any queued message (metadata only). */
static char rxbuf[NFQ_BUFSZ];

int main(int argc, char **argv)
{
	struct nfqnl_msg_config_params params;
	struct nfqnl_msg_config_cmd cmd;
	struct nlmsghdr *nlh;
	int one = 1, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s QUEUE READYFILE\n", argv[0]);
		return 1;
	}
	queue = strtoul(argv[1], NULL, 0);
	readyfile = argv[2];
	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("netlink");
		return 1;
	}
	/* A burst must not kill the reader: lost messages are the kernel's. */
	mnl_socket_setsockopt(nl, NETLINK_NO_ENOBUFS, &one, sizeof(one));

	nlh = nfq_hdr(rxbuf, NFQNL_MSG_CONFIG);
	memset(&cmd, 0, sizeof(cmd));
	cmd.command = NFQNL_CFG_CMD_BIND;
	mnl_attr_put(nlh, NFQA_CFG_CMD, sizeof(cmd), &cmd);
	config(nlh);

	nlh = nfq_hdr(rxbuf, NFQNL_MSG_CONFIG);
	memset(&params, 0, sizeof(params));
	params.copy_mode = NFQNL_COPY_META;
	mnl_attr_put(nlh, NFQA_CFG_PARAMS, sizeof(params), &params);
	config(nlh);

	write_ready();
	for (;;) {
		ret = mnl_socket_recvfrom(nl, rxbuf, sizeof(rxbuf));
		if (ret < 0) {
			if (errno == ENOBUFS || errno == EINTR)
				continue;
			perror("recv");
			return 1;
		}
		ret = mnl_cb_run(rxbuf, ret, 0, 0, packet_cb, NULL);
		if (ret < 0) {
			perror("queue message");
			return 1;
		}
	}
}
