// SPDX-License-Identifier: GPL-2.0
/* nf_conncount_count_skb() replaced nf_conncount_count() in Debian point releases */
#include <net/netfilter/nf_conntrack_count.h>

void *probe = nf_conncount_count_skb;
