// SPDX-License-Identifier: GPL-2.0
/*
 * nfg-kcl-race: a seeded random sequence of TCP opens and closes from a
 * client netns to a server netns, for comparing connlimit's and
 * kconnlimit's verdicts on the same packets
 * (tests/vm/cases/kconnlimit_hardening.sh, part "exact").
 *
 *   nfg-kcl-race SEED EVENTS CLIENT_NETNS SERVER_NETNS PORT [hold]
 *
 * Sources: 10.0.1.10-17 and fd00:1::10-17 (client), destinations
 * 10.0.2.10-13 and fd00:2::10-13 (server): the caller adds them. An open
 * connects from a random source to a random destination and accepts it; a
 * close either resets the connection from the client, or closes the server
 * side first (FIN), reads the client's EOF and closes the client: the
 * client's packets never carry the conntrack's final state, which is
 * reached on the server's last ACK, so the first packet that sees the
 * connection ended is the next event's. Events follow one another as soon
 * as the previous one is done and the clock has ticked once
 * (CLOCK_MONOTONIC_COARSE moves with jiffies): connlimit checks a key's
 * list at most once per jiffy, and this keeps its own laziness out of the
 * comparison. Prints the seed and what it did. With "hold", the
 * connections still open after the events stay open until the process is
 * killed (tests of netns teardown); the report line says when.
 *
 *   nfg-kcl-race flood N NETNS ADDR
 *
 * Starts N connections from NETNS to ADDR (IPv4, SYNs that nobody
 * answers), every other one to port 9 and the others to port 10, says
 * "flooding N" and holds them until killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NSRC	8
#define NDST	4
#define TARGET	16	/* open connections the walk hovers around */
#define MAXC	(2 * TARGET)

struct conn {
	int cfd, sfd;
};

static struct conn conns[MAXC];
static int nconns;
static int lfd[2];	/* listeners: IPv4, IPv6 */

static void die(const char *what)
{
	fprintf(stderr, "nfg-kcl-race: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void enter(const char *ns)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die(path);
	close(fd);
}

static socklen_t addr(int v6, int client, int i, int port,
		      struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	char a[64];

	memset(ss, 0, sizeof(*ss));
	if (v6)
		snprintf(a, sizeof(a), "fd00:%d::%x", client ? 1 : 2, 0x10 + i);
	else
		snprintf(a, sizeof(a), "10.0.%d.%d", client ? 1 : 2, 10 + i);
	ss->ss_family = v6 ? AF_INET6 : AF_INET;
	/* sin_port and sin6_port are at the same offset */
	s4->sin_port = htons(port);
	inet_pton(ss->ss_family, a, v6 ? (void *)&s6->sin6_addr : (void *)&s4->sin_addr);
	return v6 ? sizeof(*s6) : sizeof(*s4);
}

/* Wait for the next clock tick (an event, whatever the machine's speed). */
static void tick(void)
{
	struct timespec a, b, nap = { 0, 200000 };

	clock_gettime(CLOCK_MONOTONIC_COARSE, &a);
	do {
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC_COARSE, &b);
	} while (a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec);
}

static void do_open(int port)
{
	int v6 = rand() & 1, src = rand() % NSRC, dst = rand() % NDST;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	len = addr(v6, 1, src, 0, &ss);
	if (bind(fd, (struct sockaddr *)&ss, len))
		die("bind");
	len = addr(v6, 0, dst, port, &ss);
	if (connect(fd, (struct sockaddr *)&ss, len))
		die("connect");
	conns[nconns].cfd = fd;
	/* Returns once the handshake's last ACK went through the server. */
	conns[nconns].sfd = accept4(lfd[v6], NULL, NULL, SOCK_CLOEXEC);
	if (conns[nconns].sfd < 0)
		die("accept");
	nconns++;
}

static void do_close(int k, int rst)
{
	struct linger lg = { 1, 0 };
	struct pollfd p;
	char c;

	if (rst) {
		setsockopt(conns[k].cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(conns[k].cfd);
		/* the server has seen the reset */
		p.fd = conns[k].sfd;
		p.events = POLLIN;
		if (poll(&p, 1, 30000) != 1)
			die("wait for the reset");
		close(conns[k].sfd);
	} else {
		close(conns[k].sfd);
		/* the client has the server's FIN */
		if (recv(conns[k].cfd, &c, 1, 0) != 0)
			die("wait for the server's FIN");
		close(conns[k].cfd);
	}
	conns[k] = conns[--nconns];
}

static int flood(int argc, char **argv)
{
	struct rlimit rl = { 65536, 65536 };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int i, n, fd;

	if (argc != 5)
		return 2;
	n = atoi(argv[2]);
	enter(argv[3]);
	setrlimit(RLIMIT_NOFILE, &rl);
	inet_pton(AF_INET, argv[4], &sa.sin_addr);
	for (i = 0; i < n; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fd < 0)
			die("socket");
		sa.sin_port = htons(9 + (i & 1));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS)
			die("connect");
	}
	printf("flooding %d\n", n);
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	unsigned int seed, events, e, opens = 0, rsts = 0, fins = 0, peak = 0;
	struct sockaddr_storage ss;
	int port, v6, one = 1;
	socklen_t len;

	if (argc > 1 && !strcmp(argv[1], "flood"))
		return flood(argc, argv);
	if (argc != 6 && !(argc == 7 && !strcmp(argv[6], "hold"))) {
		fprintf(stderr, "usage: nfg-kcl-race SEED EVENTS CLIENT_NETNS SERVER_NETNS PORT [hold]\n");
		return 2;
	}
	seed = strtoul(argv[1], NULL, 0);
	events = strtoul(argv[2], NULL, 0);
	port = atoi(argv[5]);
	srand(seed);

	enter(argv[4]);
	for (v6 = 0; v6 < 2; v6++) {
		lfd[v6] = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (lfd[v6] < 0)
			die("socket");
		setsockopt(lfd[v6], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (v6)
			setsockopt(lfd[v6], IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		len = addr(v6, 0, 0, port, &ss);
		if (v6)
			((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_any;
		else
			((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
		if (bind(lfd[v6], (struct sockaddr *)&ss, len) || listen(lfd[v6], 16))
			die("listen");
	}
	enter(argv[3]);

	for (e = 0; e < events; e++) {
		/* open with probability 1 - n / (2 * TARGET): n hovers near TARGET */
		if (rand() % (2 * TARGET) >= nconns) {
			do_open(port);
			opens++;
		} else if (nconns) {
			if (rand() & 1) {
				do_close(rand() % nconns, 1);
				rsts++;
			} else {
				do_close(rand() % nconns, 0);
				fins++;
			}
		}
		if ((unsigned int)nconns > peak)
			peak = nconns;
		tick();
	}
	if (argc == 7) {
		printf("holding %d connections\n", nconns);
		fflush(stdout);
		for (;;)
			pause();
	}
	while (nconns)
		do_close(0, 1);
	printf("seed %u events %u opens %u resets %u fins %u peak %u\n",
	       seed, events, opens, rsts, fins, peak);
	return 0;
}
