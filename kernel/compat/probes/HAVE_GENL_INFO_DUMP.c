// SPDX-License-Identifier: GPL-2.0
/* genl_info_dump() (6.3+): struct genl_info of a dump callback */
#include <net/genetlink.h>

const struct genl_info *probe(struct netlink_callback *cb);
const struct genl_info *probe(struct netlink_callback *cb)
{
	return genl_info_dump(cb);
}
