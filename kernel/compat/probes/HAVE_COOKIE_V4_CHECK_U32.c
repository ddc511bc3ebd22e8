// SPDX-License-Identifier: GPL-2.0
/* 6.8: __cookie_v4_check() returns the MSS value, takes (iph, th) */
#include <net/tcp.h>

int probe(const struct iphdr *iph, const struct tcphdr *th);
int probe(const struct iphdr *iph, const struct tcphdr *th)
{
	return __cookie_v4_check(iph, th);
}
