// SPDX-License-Identifier: GPL-2.0
/*
 * __inet_lookup_established() and __inet6_lookup_established() without
 * the inet_hashinfo argument (7.x: found from the netns).
 */
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>

struct sock *probe(struct net *net, __be32 a, const struct in6_addr *a6, __be16 p);
struct sock *probe(struct net *net, __be32 a, const struct in6_addr *a6, __be16 p)
{
	return __inet_lookup_established(net, a, p, a, 0, 0, 0) ?:
	       __inet6_lookup_established(net, a6, p, a6, 0, 0, 0);
}
