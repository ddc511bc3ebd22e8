// SPDX-License-Identifier: GPL-2.0
/*
 * Harness selftest module: its init triggers a kernel splat and fails, so
 * loading it leaves nothing behind. Never load it outside a test guest.
 *   insmod nfg_splat.ko          -> WARN_ON(1), init returns -EAGAIN
 *   insmod nfg_splat.ko oops=1   -> NULL pointer dereference (Oops)
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/bug.h>

static int oops;
module_param(oops, int, 0);
MODULE_PARM_DESC(oops, "1: dereference NULL instead of WARN_ON");

static int __init nfg_splat_init(void)
{
	if (oops) {
		int *volatile p = NULL;

		pr_info("nfg_splat: dereferencing NULL on purpose\n");
		return *p;
	}
	pr_info("nfg_splat: WARN_ON(1) on purpose\n");
	WARN_ON(1);
	return -EAGAIN;
}
module_init(nfg_splat_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nfguard VM harness selftest: deliberate WARNING/Oops");
