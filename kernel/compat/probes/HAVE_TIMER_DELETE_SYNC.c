// SPDX-License-Identifier: GPL-2.0
/* timer_delete_sync() (6.1.84+/6.2+); del_timer_sync() went away in 6.15 */
#include <linux/timer.h>

void probe(struct timer_list *t);
void probe(struct timer_list *t)
{
	timer_delete_sync(t);
}
