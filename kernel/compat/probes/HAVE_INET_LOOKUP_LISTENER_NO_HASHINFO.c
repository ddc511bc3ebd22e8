// SPDX-License-Identifier: GPL-2.0
/*
 * inet_lookup_listener() and inet6_lookup_listener() without the
 * inet_hashinfo argument (7.x: the lookups find the TCP table from the
 * netns themselves).
 */
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>

struct sock *probe(struct net *net, __be32 a, const struct in6_addr *a6, __be16 p);
struct sock *probe(struct net *net, __be32 a, const struct in6_addr *a6, __be16 p)
{
	return inet_lookup_listener(net, NULL, 0, a, p, a, p, 0, 0) ?:
	       inet6_lookup_listener(net, NULL, 0, a6, p, a6, 0, 0, 0);
}
