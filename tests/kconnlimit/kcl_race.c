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
 *
 *   nfg-kcl-race reopen ROUNDS LIMIT CLIENT_NETNS SERVER_NETNS PORT DST [SETTLE]
 *
 * A client that tries to hold more connections than its limit by reusing
 * 4-tuples (tests/vm/cases/kconnlimit_reopen.sh): opens LIMIT connections
 * to DST:PORT (IPv4 or IPv6, from the client's default source), then
 * ROUNDS times resets its newest connection (SO_LINGER 0), reopens the
 * same source port at once and tries one more connection on a new port.
 * Each attempt is a verdict: 1 connected, 0 refused (a reset: the rule's
 * REJECT), r connected and then reset before the server accepted it (the
 * rule rejected the handshake's last ACK). Prints "verdicts V maxlive M
 * rstdropped D", M the most connections held at once, D how many of the
 * client's resets never reached the server (a rule without --syn that
 * dropped one). Whether the server saw a reset is known by an event, not
 * a timeout: after the reset the client sends a UDP datagram to DST:PORT
 * on the same path (the process is pinned to one CPU, so both go through
 * the same per-CPU backlog queues in order); once the server has the
 * datagram, a reset that went through has been processed. A dropped one
 * is made up for by resetting the server's side (SO_LINGER 0), so the
 * reopen finds no stale server socket. After a refused attempt it waits
 * three clock ticks: a rule that refused a SYN forgets it two jiffies
 * later (connlimit and kconnlimit alike); the verdicts compared are those
 * of the limit, not of that grace. Before each reset it waits until the
 * clock has ticked SETTLE times (default 0): long enough for a short
 * sweep period to have checked the key.
 *
 *   nfg-kcl-race queued CLIENT_NETNS SERVER_NETNS PORT DST SEENFILE
 *
 * Connections from the client's default source to DST:PORT: the second
 * is started once an NFQUEUE reader that holds packets (nfg-kcl-nfqueue
 * with HOLD_MS) has the first one's SYN (the number in SEENFILE, which it
 * writes, went up) and three clock ticks later; once both are decided, a
 * third, while the first is still open. Prints "verdicts XYZ" (1
 * connected, 0 refused).
 *
 *   nfg-kcl-race strict SEED EVENTS CLIENT_NETNS SERVER_NETNS PORT UPORT LIMIT BASE
 *
 * Exact counts at every packet, against the client's own model (no settle
 * time, no clock tick between events; tests/vm/cases/kconnlimit_exact.sh).
 * Six sources, 10.0.1.(20 + BASE + i) and fd00:1::(20 + BASE + i) for i <
 * 3 (the caller adds them, and 10.0.2.10 / fd00:2::10 on the server), each
 * its own key of a rule table that the server's mangle INPUT shares
 * between a TCP rule and a UDP rule ("--kconnlimit-above LIMIT
 * --kconnlimit-name X -j TOS --set-tos 0x04", no --syn: every packet of the
 * connections, resets included, passes it). Each source holds one UDP
 * flow to UPORT (made at the start, so it is one live connection of its
 * key) and a random number of TCP connections to PORT: an event opens one
 * (half of the time from the source port of its last closed connection:
 * conntrack replaces the closed entry) or closes one (a reset, or a FIN
 * exchange that the client waits through until conntrack saw the last
 * ACK), and is followed at once by a probe: a UDP datagram of the flow.
 * Each SYN and each probe carries the rule's verdict in its TOS byte
 * (the server reads the SYN's with TCP_SAVED_SYN, the probe's with
 * IP_RECVTOS / IPV6_RECVTCLASS), which must be the model's: the key's
 * live connections (the SYN's own and the UDP flow included) above LIMIT.
 * Prints "checked N wrong W" and one line per wrong verdict; exit 1 if W.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
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

/* A TCP socket of the family, SO_REUSEADDR set. */
static int tcp_socket(int v6, int flags)
{
	int fd, one = 1;

	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	return fd;
}

static void do_open(int port)
{
	int v6 = rand() & 1, src = rand() % NSRC, dst = rand() % NDST;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	fd = tcp_socket(v6, 0);
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

/* A listener on PORT in the current netns, of DST's family. */
static int listener(int v6, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	fd = tcp_socket(v6, 0);
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = v6 ? AF_INET6 : AF_INET;
	((struct sockaddr_in *)&ss)->sin_port = htons(port);
	len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16))
		die("listen");
	return fd;
}

/* DST (an IPv4 or IPv6 address) and PORT; returns 1 for IPv6. */
static int dst_addr(const char *a, int port, struct sockaddr_storage *ss,
		    socklen_t *len)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, a, &s6->sin6_addr) != 1) {
		fprintf(stderr, "nfg-kcl-race: bad address %s\n", a);
		exit(2);
	}
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	*len = sizeof(*s6);
	return 1;
}

/* A client socket bound to source port @sport (0: any), not connected. */
static int client_sock(int v6, int sport, int nonblock)
{
	struct sockaddr_storage ss;
	struct timeval tv = { 20, 0 };
	int fd;

	fd = tcp_socket(v6, nonblock ? SOCK_NONBLOCK : 0);
	/* connect() gives up after 20 s (a dropped SYN is a failure) */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (sport) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = v6 ? AF_INET6 : AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(sport);
		if (bind(fd, (struct sockaddr *)&ss,
			 v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)))
			die("bind the port again");
	}
	return fd;
}

static int local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		die("getsockname");
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/*
 * The reopen mode's barrier: a UDP datagram from the client (bar_c,
 * connected to DST:PORT) to the server (bar_s), on the path of the TCP
 * packets; -1 in the other modes.
 */
static int bar_c = -1, bar_s = -1;
static unsigned int rst_dropped;

/* The datagram sent after the reset has arrived. */
static void barrier(void)
{
	struct pollfd p = { .fd = bar_s, .events = POLLIN };
	char c;

	if (send(bar_c, "b", 1, 0) != 1)
		die("send (barrier)");
	if (poll(&p, 1, 30000) != 1)
		die("the barrier datagram never arrived");
	if (recv(bar_s, &c, 1, 0) != 1)
		die("recv (barrier)");
}

/*
 * Reset the client side of @k and wait until the server has seen it. With
 * the barrier: a reset the server has not seen once the barrier is through
 * was dropped on the way; the server's side is reset then.
 */
static void reset_conn(struct conn *k)
{
	struct linger lg = { 1, 0 };
	struct pollfd p;

	setsockopt(k->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(k->cfd);
	p.fd = k->sfd;
	p.events = POLLIN;
	if (bar_c >= 0) {
		barrier();
		if (poll(&p, 1, 0) != 1) {
			rst_dropped++;
			setsockopt(k->sfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
	} else if (poll(&p, 1, 30000) != 1) {
		die("wait for the reset");
	}
	close(k->sfd);
}

static void ticks(int n)
{
	while (n-- > 0)
		tick();
}

/*
 * The server's side of the connection @cfd just made: accepted from @lfd,
 * or -1 when the client's side was reset first (its last handshake ACK
 * rejected: the server never gets the connection).
 */
static int accept_or_reset(int lfd, int cfd)
{
	struct pollfd p[2] = { { .fd = lfd, .events = POLLIN },
			       { .fd = cfd, .events = POLLRDHUP } };
	int sfd;

	if (poll(p, 2, 30000) < 1)
		die("neither accepted nor reset");
	if (!(p[0].revents & POLLIN))
		return -1;
	sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (sfd < 0)
		die("accept");
	return sfd;
}

/*
 * One attempt from source port @sport (0: a new one) to @dst: 1 connected
 * (kept in conns[], its port in *@port), 0 refused, 2 connected and then
 * reset before the server accepted it (only with @checked).
 */
static int attempt2(int v6, int lfd, const struct sockaddr_storage *dst,
		    socklen_t dlen, int sport, int *port, bool checked)
{
	int fd = client_sock(v6, sport, 0);

	if (connect(fd, (const struct sockaddr *)dst, dlen)) {
		if (errno != ECONNREFUSED)
			die("connect (neither connected nor refused)");
		close(fd);
		ticks(3);
		return 0;
	}
	*port = local_port(fd);
	conns[nconns].cfd = fd;
	if (checked) {
		conns[nconns].sfd = accept_or_reset(lfd, fd);
		if (conns[nconns].sfd < 0) {
			close(fd);
			ticks(3);
			return 2;
		}
	} else {
		conns[nconns].sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (conns[nconns].sfd < 0)
			die("accept");
	}
	nconns++;
	return 1;
}

static int attempt(int v6, int lfd, const struct sockaddr_storage *dst,
		   socklen_t dlen, int sport, int *port)
{
	return attempt2(v6, lfd, dst, dlen, sport, port, false);
}

/* The reopen mode's barrier sockets, of @dst's family, and one CPU. */
static void barrier_setup(const char *cns, const char *sns, int v6,
			  const struct sockaddr_storage *dst, socklen_t dlen)
{
	struct sockaddr_storage any;
	cpu_set_t cpus;
	int cpu = sched_getcpu();

	CPU_ZERO(&cpus);
	CPU_SET(cpu < 0 ? 0 : cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("sched_setaffinity");
	enter(sns);
	bar_s = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&any, 0, sizeof(any));
	any.ss_family = dst->ss_family;
	/* sin_port and sin6_port are at the same offset */
	((struct sockaddr_in *)&any)->sin_port = ((const struct sockaddr_in *)dst)->sin_port;
	if (bar_s < 0 || bind(bar_s, (struct sockaddr *)&any, dlen))
		die("bind (barrier)");
	enter(cns);
	bar_c = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (bar_c < 0 || connect(bar_c, (const struct sockaddr *)dst, dlen))
		die("connect (barrier)");
}

static int reopen(int argc, char **argv)
{
	int rounds, limit, port, v6, lfd, i, r, maxlive = 0, sport, ports[MAXC];
	int settle = argc == 9 ? atoi(argv[8]) : 0;
	struct sockaddr_storage dst;
	char verdicts[3 * MAXC + 1];
	unsigned int nv = 0;
	socklen_t dlen;

	if (argc != 8 && argc != 9)
		return 2;
	rounds = atoi(argv[2]);
	limit = atoi(argv[3]);
	port = atoi(argv[6]);
	if (limit < 1 || limit + rounds >= MAXC || rounds < 1)
		return 2;
	v6 = dst_addr(argv[7], port, &dst, &dlen);
	barrier_setup(argv[4], argv[5], v6, &dst, dlen);
	enter(argv[5]);
	lfd = listener(v6, port);
	enter(argv[4]);

#define VERDICT(x) do { r = (x); verdicts[nv++] = "01r"[r]; \
	if (nconns > maxlive) maxlive = nconns; } while (0)
	for (i = 0; i < limit; i++) {
		VERDICT(attempt2(v6, lfd, &dst, dlen, 0, &ports[nconns], true));
		if (r != 1)
			break;
	}
	for (i = 0; i < rounds && nconns; i++) {
		ticks(settle);
		/* the newest connection: reset, then its port at once again */
		sport = ports[nconns - 1];
		reset_conn(&conns[--nconns]);
		VERDICT(attempt2(v6, lfd, &dst, dlen, sport, &ports[nconns], true));
		VERDICT(attempt2(v6, lfd, &dst, dlen, 0, &ports[nconns], true));
	}
#undef VERDICT
	verdicts[nv] = 0;
	while (nconns)
		reset_conn(&conns[--nconns]);
	printf("verdicts %s maxlive %d rstdropped %u\n", verdicts, maxlive, rst_dropped);
	return 0;
}

/* The number in @path (0 if none). */
static int read_count(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

/* Wait until @path holds a number above @base (20 s at most). */
static void wait_seen(const char *path, int base)
{
	int i;

	for (i = 0; i < 20000; i++) {
		if (read_count(path) > base)
			return;
		usleep(1000);
	}
	fprintf(stderr, "nfg-kcl-race: the queue reader never saw the SYN\n");
	exit(1);
}

/* Outcome of a non-blocking connect: 1 connected, 0 refused. */
static int connected(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&p, 1, 20000) != 1)
		die("connect timed out");
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		die("SO_ERROR");
	if (err == ECONNREFUSED)
		return 0;
	if (err) {
		errno = err;
		die("connect");
	}
	return 1;
}

static int queued(int argc, char **argv)
{
	int v6, lfd, fd[2], r[3], i, base, port;
	struct sockaddr_storage dst;
	socklen_t dlen;

	if (argc != 7)
		return 2;
	v6 = dst_addr(argv[5], atoi(argv[4]), &dst, &dlen);
	enter(argv[3]);
	lfd = listener(v6, atoi(argv[4]));
	enter(argv[2]);
	base = read_count(argv[6]);
	for (i = 0; i < 2; i++) {
		if (i) {
			/* the first SYN is in the reader's hands, and stays */
			wait_seen(argv[6], base);
			ticks(3);
		}
		fd[i] = client_sock(v6, 0, 1);
		if (connect(fd[i], (struct sockaddr *)&dst, dlen) && errno != EINPROGRESS)
			die("connect");
	}
	for (i = 0; i < 2; i++) {
		r[i] = connected(fd[i]);
		if (r[i]) {
			conns[nconns].cfd = fd[i];
			conns[nconns].sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (conns[nconns].sfd < 0)
				die("accept");
			nconns++;
		} else {
			close(fd[i]);
		}
	}
	/* the first one, if it connected, still counts */
	r[2] = attempt(v6, lfd, &dst, dlen, 0, &port);
	while (nconns)
		reset_conn(&conns[--nconns]);
	printf("verdicts %d%d%d\n", r[0], r[1], r[2]);
	return 0;
}

/* ---- strict: exact counts against the client's model ---- */

#define SSRC	6	/* sources per process: 3 IPv4, 3 IPv6 */
#define SMAX	8	/* TCP connections per source, at most */
#define TOS_OVER	0x04	/* what the rules write for "over the limit" */

struct ssrc {
	int v6, ufd, n, lastport;
	struct sockaddr_storage a;
	socklen_t alen;
	struct conn c[SMAX];
	int port[SMAX];
};

static struct ssrc ss_[SSRC];
static int s_lfd[2], s_ufd[2];	/* server: TCP listeners, UDP sockets */
static int s_limit, s_port;
static unsigned int s_checked, s_wrong;

static void s_addr(int v6, int host, int port, struct sockaddr_storage *st,
		   socklen_t *len)
{
	char a[64];

	if (v6)
		snprintf(a, sizeof(a), host < 0 ? "fd00:2::10" : "fd00:1::%d", host);
	else
		snprintf(a, sizeof(a), host < 0 ? "10.0.2.10" : "10.0.1.%d", host);
	dst_addr(a, port, st, len);
}

static void s_verdict(const char *what, int s, int got, int want)
{
	s_checked++;
	if (got == want)
		return;
	s_wrong++;
	printf("wrong: %s from source %d (IPv%d, %d TCP + 1 UDP live, limit %d): rule said %s\n",
	       what, s, ss_[s].v6 ? 6 : 4, ss_[s].n, s_limit, got ? "over" : "not over");
}

/* The TOS (traffic class) byte of a saved SYN. */
static int syn_tos(int fd, int v6)
{
	unsigned char b[512];
	socklen_t len = sizeof(b);

	if (getsockopt(fd, IPPROTO_TCP, TCP_SAVED_SYN, b, &len) || len < 2)
		die("TCP_SAVED_SYN");
	if (v6)
		return ((b[0] & 0x0f) << 4) | (b[1] >> 4);
	return b[1];
}

/* Open one more connection from source @s (its last port again if @reuse). */
static void s_open(int s, int reuse)
{
	struct ssrc *x = &ss_[s];
	struct sockaddr_storage d;
	socklen_t dl;
	int fd, want, port = reuse ? x->lastport : 0;
	struct conn *k = &x->c[x->n];

	fd = tcp_socket(x->v6, 0);
	if (port) {
		if (x->v6)
			((struct sockaddr_in6 *)&x->a)->sin6_port = htons(port);
		else
			((struct sockaddr_in *)&x->a)->sin_port = htons(port);
	}
	if (bind(fd, (struct sockaddr *)&x->a, x->alen))
		die("bind (strict)");
	((struct sockaddr_in *)&x->a)->sin_port = 0;
	s_addr(x->v6, -1, s_port, &d, &dl);
	if (connect(fd, (struct sockaddr *)&d, dl))
		die("connect (strict)");
	k->cfd = fd;
	k->sfd = accept4(s_lfd[x->v6], NULL, NULL, SOCK_CLOEXEC);
	if (k->sfd < 0)
		die("accept (strict)");
	x->port[x->n] = local_port(fd);
	/* a new port may be the last closed one: not free to reuse then */
	if (!reuse && x->port[x->n] == x->lastport)
		x->lastport = 0;
	x->n++;
	/* the SYN counted itself, the UDP flow and the live ones */
	want = x->n + 1 > s_limit;
	s_verdict(reuse ? "SYN (reused port)" : "SYN", s,
		  (syn_tos(k->sfd, x->v6) & 0xfc) == TOS_OVER, want);
}

/* Close connection @i of source @s; returns once conntrack saw its end. */
static void s_close(int s, int i, int rst)
{
	struct ssrc *x = &ss_[s];
	struct conn *k = &x->c[i];
	struct tcp_info ti;
	socklen_t len;
	char c;
	int n;

	x->lastport = x->port[i];
	if (rst) {
		reset_conn(k);
	} else {
		close(k->sfd);
		if (recv(k->cfd, &c, 1, 0) != 0)
			die("wait for the server's FIN (strict)");
		shutdown(k->cfd, SHUT_WR);
		/* closed once the server's last ACK (TIME_WAIT) came back */
		for (n = 0;; n++) {
			len = sizeof(ti);
			if (getsockopt(k->cfd, IPPROTO_TCP, TCP_INFO, &ti, &len))
				die("TCP_INFO");
			if (ti.tcpi_state == TCP_CLOSE)
				break;
			if (n > 200000)
				die("the client never saw its FIN acknowledged");
			usleep(50);
		}
		close(k->cfd);
	}
	x->n--;
	x->c[i] = x->c[x->n];
	x->port[i] = x->port[x->n];
}

/* A datagram of source @s's flow: its verdict must be the model's. */
static void s_probe(int s, int check)
{
	struct ssrc *x = &ss_[s];
	char cb[256], b[16];
	struct iovec iov = { b, sizeof(b) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cb, .msg_controllen = sizeof(cb) };
	struct pollfd p = { .fd = s_ufd[x->v6], .events = POLLIN };
	struct cmsghdr *cm;
	int tos = -1;

	if (send(x->ufd, "p", 1, 0) != 1)
		die("send (probe)");
	if (poll(&p, 1, 10000) != 1)
		die("the probe never arrived");
	if (recvmsg(s_ufd[x->v6], &mh, 0) < 0)
		die("recvmsg (probe)");
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if ((cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS) ||
		    (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS))
			tos = cm->cmsg_type == IP_TOS ? *(unsigned char *)CMSG_DATA(cm) :
							*(int *)CMSG_DATA(cm);
	if (tos < 0)
		die("no TOS on the probe");
	if (check)
		s_verdict("probe", s, (tos & 0xfc) == TOS_OVER, x->n + 1 > s_limit);
}

static int strict(int argc, char **argv)
{
	unsigned int seed, events, e, opens = 0, reuses = 0, rsts = 0, fins = 0;
	int v6, s, i, one = 1, base, uport;
	struct sockaddr_storage st;
	socklen_t len;

	if (argc != 10)
		return 2;
	seed = strtoul(argv[2], NULL, 0);
	events = strtoul(argv[3], NULL, 0);
	s_port = atoi(argv[6]);
	uport = atoi(argv[7]);
	s_limit = atoi(argv[8]);
	base = atoi(argv[9]);
	srand(seed);

	enter(argv[5]);
	for (v6 = 0; v6 < 2; v6++) {
		s_addr(v6, -1, s_port, &st, &len);
		s_lfd[v6] = tcp_socket(v6, 0);
		setsockopt(s_lfd[v6], IPPROTO_TCP, TCP_SAVE_SYN, &one, sizeof(one));
		if (bind(s_lfd[v6], (struct sockaddr *)&st, len) || listen(s_lfd[v6], 16))
			die("listen (strict)");
		s_addr(v6, -1, uport, &st, &len);
		s_ufd[v6] = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (v6)
			setsockopt(s_ufd[v6], IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		else
			setsockopt(s_ufd[v6], IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		if (s_ufd[v6] < 0 || bind(s_ufd[v6], (struct sockaddr *)&st, len))
			die("bind udp (strict)");
	}
	enter(argv[4]);
	for (s = 0; s < SSRC; s++) {
		struct ssrc *x = &ss_[s];

		x->v6 = s >= SSRC / 2;
		s_addr(x->v6, 20 + base + s % (SSRC / 2), 0, &x->a, &x->alen);
		x->ufd = socket(x->v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (x->ufd < 0 || bind(x->ufd, (struct sockaddr *)&x->a, x->alen))
			die("bind udp client (strict)");
		s_addr(x->v6, -1, uport, &st, &len);
		if (connect(x->ufd, (struct sockaddr *)&st, len))
			die("connect udp (strict)");
		/* the flow's first datagram: one live connection of the key */
		s_probe(s, 0);
	}
	for (s = 0; s < SSRC; s++)
		s_probe(s, 1);

	for (e = 0; e < events; e++) {
		struct ssrc *x;

		s = rand() % SSRC;
		x = &ss_[s];
		/* hover around the limit: one below to two above */
		if (x->n == 0 || (x->n < SMAX && x->n < s_limit + 2 && (rand() & 1))) {
			i = x->lastport && (rand() & 1);
			s_open(s, i);
			opens++;
			reuses += i;
			if (i)
				x->lastport = 0;
		} else {
			i = rand() & 1;
			s_close(s, rand() % x->n, i);
			rsts += i;
			fins += !i;
		}
		s_probe(s, 1);
	}
	for (s = 0; s < SSRC; s++)
		while (ss_[s].n)
			s_close(s, 0, 1);
	printf("seed %u events %u opens %u (reused ports %u) resets %u fins %u checked %u wrong %u\n",
	       seed, events, opens, reuses, rsts, fins, s_checked, s_wrong);
	return s_wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int seed, events, e, opens = 0, rsts = 0, fins = 0, peak = 0;
	struct sockaddr_storage ss;
	int port, v6, one = 1;
	socklen_t len;

	if (argc > 1 && !strcmp(argv[1], "flood"))
		return flood(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "reopen"))
		return reopen(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "queued"))
		return queued(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "strict"))
		return strict(argc, argv);
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
		lfd[v6] = tcp_socket(v6, 0);
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
