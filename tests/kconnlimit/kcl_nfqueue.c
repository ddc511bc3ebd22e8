// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfg-kcl-nfqueue: a minimal NFQUEUE reader (libmnl, nfnetlink_queue) that
 * accepts every packet queued to one queue, for the kconnlimit VM cases
 * (a kconnlimit rule followed by -j NFQUEUE must let connections complete).
 *
 *   nfg-kcl-nfqueue QUEUE READYFILE [HOLD_MS]
 *
 * Binds QUEUE (metadata only: no payload copied), creates READYFILE once
 * bound, then answers NF_ACCEPT to every packet until killed. Each verdict
 * also rewrites READYFILE with the number of packets accepted so far, so a
 * test can see that its packets went through the queue. With HOLD_MS, each
 * packet is accepted HOLD_MS milliseconds after it arrived (a slow reader:
 * the packet's conntrack stays unconfirmed meanwhile), and READYFILE.seen
 * holds the number of packets received so far. Exit 1 on errors.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>

/* Fixed sizes: MNL_SOCKET_BUFFER_SIZE is a sysconf() call. */
#define NFQ_BUFSZ	(65536 + 8192)

static struct mnl_socket *nl;
static unsigned int queue;
static unsigned long accepted, seen;
static const char *readyfile;
static char seenfile[4096];
static long hold_ms;

/* Packets held (HOLD_MS): id (network order) and when to accept them. */
#define HELD_MAX	1024
static struct held {
	__u32	id;
	long	due;
} held[HELD_MAX];
static unsigned int nheld;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

static void write_count(const char *path, unsigned long n)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%lu\n", n);
	fclose(f);
}

static void write_ready(void)
{
	write_count(readyfile, accepted);
}

/* NF_ACCEPT for packet @id (network order). */
static int accept_packet(__u32 id)
{
	struct nfqnl_msg_verdict_hdr vh;
	struct nlmsghdr *out;
	char buf[8192];

	out = nfq_hdr(buf, NFQNL_MSG_VERDICT);
	vh.verdict = htonl(NF_ACCEPT);
	vh.id = id;
	mnl_attr_put(out, NFQA_VERDICT_HDR, sizeof(vh), &vh);
	if (mnl_socket_sendto(nl, out, out->nlmsg_len) < 0) {
		perror("verdict");
		return -1;
	}
	accepted++;
	write_ready();
	return 0;
}

/* Accept the held packets that are due; returns ms until the next, or -1. */
static int release_due(void)
{
	long t = now_ms();
	unsigned int i = 0;

	while (i < nheld) {
		if (held[i].due > t) {
			i++;
			continue;
		}
		if (accept_packet(held[i].id))
			exit(1);
		held[i] = held[--nheld];
	}
	t = -1;
	for (i = 0; i < nheld; i++)
		if (t < 0 || held[i].due - now_ms() < t)
			t = held[i].due - now_ms();
	return t < 0 ? -1 : (int)(t > 0 ? t : 0);
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

	(void)data;
	if (mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, tb) < 0)
		return MNL_CB_ERROR;
	if (!tb[NFQA_PACKET_HDR] ||
	    mnl_attr_get_payload_len(tb[NFQA_PACKET_HDR]) < sizeof(*ph))
		return MNL_CB_OK;
	ph = mnl_attr_get_payload(tb[NFQA_PACKET_HDR]);
	if (hold_ms) {
		if (nheld == HELD_MAX) {
			fprintf(stderr, "more than %d packets held\n", HELD_MAX);
			return MNL_CB_ERROR;
		}
		held[nheld].id = ph->packet_id;	/* network order */
		held[nheld++].due = now_ms() + hold_ms;
		write_count(seenfile, ++seen);
		return MNL_CB_OK;
	}
	/* packet_id is already in network order */
	return accept_packet(ph->packet_id) ? MNL_CB_ERROR : MNL_CB_OK;
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

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s QUEUE READYFILE [HOLD_MS]\n", argv[0]);
		return 1;
	}
	queue = strtoul(argv[1], NULL, 0);
	readyfile = argv[2];
	if (argc == 4) {
		hold_ms = strtol(argv[3], NULL, 0);
		snprintf(seenfile, sizeof(seenfile), "%s.seen", readyfile);
		write_count(seenfile, 0);
	}
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
		if (hold_ms) {
			struct pollfd p = { .fd = mnl_socket_get_fd(nl), .events = POLLIN };

			/* accept what is due, sleep until a packet or the next is due */
			if (!poll(&p, 1, release_due()))
				continue;
		}
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
