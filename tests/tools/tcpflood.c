// SPDX-License-Identifier: GPL-2.0
/*
 * nfg-tcpflood: spoofed-source TCP SYN or bare-ACK flood for the VM cases
 * (IPv4 and IPv6; hping3 has no IPv6, and a scapy flood costs a 10-25 s
 * import of a TCG guest's CPU every time it starts).
 *
 * usage: nfg-tcpflood [-i USEC] [-c COUNT] DST PORT S|A PREFIX/LEN
 *
 * Sends COUNT packets (0, the default: until killed) to DST:PORT, each with
 * SYN (S) or ACK (A) set, random sequence (and acknowledgment) numbers, a
 * random source port and a random source address inside PREFIX/LEN (the
 * bits after LEN are random), through the kernel's routing (a raw socket
 * with the IP header included). -i: at most one packet every USEC
 * microseconds (default 0: as fast as the socket takes them). Prints the
 * number sent on exit (after COUNT packets, or on SIGTERM/SIGINT).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../include/nfg_rng.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: nfg-tcpflood [-i USEC] [-c COUNT] DST PORT S|A PREFIX/LEN\n");
	exit(2);
}

static uint64_t rng_state;	/* tests/include/nfg_rng.h */

static uint64_t rnd(void)
{
	return nfg_xorshift64s(&rng_state);
}

static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; len -= 2, p += 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

/* randomise the bits of addr (len bytes) after the first plen bits */
static void rand_host(uint8_t *addr, size_t len, unsigned int plen)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned int first = (unsigned int)i * 8;
		uint8_t keep;

		if (first + 8 <= plen)
			continue;
		keep = first >= plen ? 0 : (uint8_t)(0xff << (8 - (plen - first)));
		addr[i] = (addr[i] & keep) | ((uint8_t)rnd() & (uint8_t)~keep);
	}
}

int main(int argc, char **argv)
{
	unsigned long long count = 0, sent = 0, gap_us = 0;
	struct sockaddr_storage dst = { 0 };
	uint8_t pkt[sizeof(struct ip6_hdr) + sizeof(struct tcphdr)];
	uint8_t prefix[16];
	unsigned int plen, port;
	struct timespec next;
	char *slash, *end;
	int opt, fd, v6, ack;
	socklen_t dlen;

	while ((opt = getopt(argc, argv, "i:c:")) != -1) {
		switch (opt) {
		case 'i':
			gap_us = strtoull(optarg, &end, 10);
			if (*end)
				usage();
			break;
		case 'c':
			count = strtoull(optarg, &end, 10);
			if (*end)
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 4)
		usage();
	port = (unsigned int)strtoul(argv[optind + 1], &end, 10);
	if (*end || !port || port > 65535)
		usage();
	if (strcmp(argv[optind + 2], "S") && strcmp(argv[optind + 2], "A"))
		usage();
	ack = argv[optind + 2][0] == 'A';
	slash = strchr(argv[optind + 3], '/');
	if (!slash)
		usage();
	*slash = '\0';
	plen = (unsigned int)strtoul(slash + 1, &end, 10);
	v6 = strchr(argv[optind], ':') != NULL;
	if (*end || plen > (v6 ? 128u : 32u))
		usage();
	if (v6) {
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)&dst;

		d->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, argv[optind], &d->sin6_addr) != 1 ||
		    inet_pton(AF_INET6, argv[optind + 3], prefix) != 1)
			usage();
		dlen = sizeof(*d);
	} else {
		struct sockaddr_in *d = (struct sockaddr_in *)&dst;

		d->sin_family = AF_INET;
		if (inet_pton(AF_INET, argv[optind], &d->sin_addr) != 1 ||
		    inet_pton(AF_INET, argv[optind + 3], prefix) != 1)
			usage();
		dlen = sizeof(*d);
	}
	if (getrandom(&rng_state, sizeof(rng_state), 0) != sizeof(rng_state) || !rng_state)
		rng_state = (uint64_t)time(NULL) | 1;

	/* IPPROTO_RAW: the header we build is sent as it is (IP_HDRINCL) */
	fd = socket(dst.ss_family, SOCK_RAW, IPPROTO_RAW);
	if (fd < 0) {
		perror("nfg-tcpflood: socket");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &next);

	while (!stop && (!count || sent < count)) {
		struct tcphdr *th;
		uint32_t sum = 0;
		uint8_t *src;
		size_t iplen, n;
		uint16_t tcplen = sizeof(*th);

		memset(pkt, 0, sizeof(pkt));
		if (v6) {
			struct ip6_hdr *ip6 = (struct ip6_hdr *)pkt;

			iplen = sizeof(*ip6);
			ip6->ip6_flow = htonl(6u << 28);
			ip6->ip6_plen = htons(tcplen);
			ip6->ip6_nxt = IPPROTO_TCP;
			ip6->ip6_hlim = 64;
			memcpy(&ip6->ip6_dst, &((struct sockaddr_in6 *)&dst)->sin6_addr, 16);
			src = (uint8_t *)&ip6->ip6_src;
			memcpy(src, prefix, 16);
			rand_host(src, 16, plen);
			sum = csum_add(sum, src, 32); /* source and destination */
		} else {
			struct ip *ip = (struct ip *)pkt;

			iplen = sizeof(*ip);
			ip->ip_v = 4;
			ip->ip_hl = 5;
			ip->ip_len = htons((uint16_t)(iplen + tcplen));
			ip->ip_id = (uint16_t)rnd();
			ip->ip_ttl = 64;
			ip->ip_p = IPPROTO_TCP;
			ip->ip_dst = ((struct sockaddr_in *)&dst)->sin_addr;
			src = (uint8_t *)&ip->ip_src;
			memcpy(src, prefix, 4);
			rand_host(src, 4, plen);
			sum = csum_add(sum, src, 8);
			/* the kernel fills in the IPv4 header checksum */
		}
		sum += IPPROTO_TCP + tcplen;
		th = (struct tcphdr *)(pkt + iplen);
		th->source = htons((uint16_t)(1024 + rnd() % 64512));
		th->dest = htons((uint16_t)port);
		th->seq = (uint32_t)rnd();
		th->doff = 5;
		th->window = htons(64240);
		if (ack) {
			th->ack = 1;
			th->ack_seq = (uint32_t)rnd();
		} else {
			th->syn = 1;
		}
		sum = csum_add(sum, th, tcplen);
		th->check = csum_fold(sum);
		n = iplen + tcplen;
		if (sendto(fd, pkt, n, 0, (struct sockaddr *)&dst, dlen) != (ssize_t)n) {
			/* a full queue or an unreachable neighbour: try the next one */
			if (errno != ENOBUFS && errno != EAGAIN && errno != EHOSTUNREACH &&
			    errno != EINTR) {
				perror("nfg-tcpflood: sendto");
				return 1;
			}
		} else {
			sent++;
		}
		if (gap_us) {
			next.tv_nsec += (long)(gap_us % 1000000) * 1000;
			next.tv_sec += (time_t)(gap_us / 1000000) + next.tv_nsec / 1000000000;
			next.tv_nsec %= 1000000000;
			while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
				;
		}
	}
	printf("%llu sent\n", sent);
	close(fd);
	return 0;
}
