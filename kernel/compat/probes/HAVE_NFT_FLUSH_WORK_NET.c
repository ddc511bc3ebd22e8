// SPDX-License-Identifier: GPL-2.0
/*
 * nf_tables_trans_destroy_flush_work() takes the netns (6.12: the destroy
 * work became per netns); 6.1 flushes one global work item.
 */
#include <net/netfilter/nf_tables.h>

void probe(struct net *net);
void probe(struct net *net)
{
	nf_tables_trans_destroy_flush_work(net);
}
