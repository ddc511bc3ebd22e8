// SPDX-License-Identifier: GPL-2.0
/* genl_split_ops (6.2+): per-op policies in struct genl_family.split_ops */
#include <net/genetlink.h>

static const struct genl_split_ops probe_ops[1];
int probe(void);
int probe(void)
{
	struct genl_family f = { .split_ops = probe_ops };

	return f.n_split_ops;
}
