// SPDX-License-Identifier: GPL-2.0
/*
 * Harness selftest module: its init triggers a kernel splat and fails, so
 * loading it leaves nothing behind. Never load it outside a test guest.
 *   insmod nfg_splat.ko          -> WARN_ON(1), init returns -EAGAIN
 *   insmod nfg_splat.ko oops=1   -> NULL pointer dereference (Oops)
 * For the debug kernel's self-check (tests/debug/selftest.sh), each of which
 * only a debug option notices:
 *   insmod nfg_splat.ko uaf=1     -> reads a kfree()d kmalloc object (KASAN
 *                                    slab-use-after-free), init returns -EAGAIN
 *   insmod nfg_splat.ko lockinv=1 -> takes two mutexes as A then B, then as
 *                                    B then A (lockdep: possible circular
 *                                    locking dependency), init returns -EAGAIN
 *   insmod nfg_splat.ko leak=1    -> kmalloc()s an object and forgets it
 *                                    (kmemleak), init succeeds; the module has
 *                                    no exit function, so it stays loaded and
 *                                    the leak report can name it
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

static int oops;
module_param(oops, int, 0);
MODULE_PARM_DESC(oops, "1: dereference NULL instead of WARN_ON");

static int uaf;
module_param(uaf, int, 0);
MODULE_PARM_DESC(uaf, "1: read freed memory (KASAN report) instead of WARN_ON");

static int lockinv;
module_param(lockinv, int, 0);
MODULE_PARM_DESC(lockinv, "1: take two mutexes in both orders (lockdep report) instead of WARN_ON");

static int leak;
module_param(leak, int, 0);
MODULE_PARM_DESC(leak, "1: leak a kmalloc() object (kmemleak report) and stay loaded");

/*
 * Two mutexes that protect nothing: nfg_splat_inversion() takes them in both
 * orders, one after the other, from the one loading task. That never
 * deadlocks, but it is the AB-BA pattern lockdep must report.
 */
static DEFINE_MUTEX(nfg_splat_lock_a);
static DEFINE_MUTEX(nfg_splat_lock_b);

#define NFG_SPLAT_LEAK_SIZE 1234 /* an odd size, easy to spot in a report */

static int nfg_splat_use_after_free(void)
{
	char *obj;
	char val;

	obj = kmalloc(64, GFP_KERNEL);
	if (!obj)
		return -ENOMEM;
	memset(obj, 0x5a, 64);
	kfree(obj);
	/* The compiler must not see that obj is dead. */
	OPTIMIZER_HIDE_VAR(obj);
	pr_info("nfg_splat: reading freed memory on purpose\n");
	val = READ_ONCE(obj[8]);
	pr_info("nfg_splat: read %d from freed memory\n", val);
	return -EAGAIN;
}

static int nfg_splat_inversion(void)
{
	pr_info("nfg_splat: taking two mutexes in both orders on purpose\n");
	mutex_lock(&nfg_splat_lock_a);
	mutex_lock(&nfg_splat_lock_b);
	mutex_unlock(&nfg_splat_lock_b);
	mutex_unlock(&nfg_splat_lock_a);

	mutex_lock(&nfg_splat_lock_b);
	mutex_lock(&nfg_splat_lock_a);
	mutex_unlock(&nfg_splat_lock_a);
	mutex_unlock(&nfg_splat_lock_b);
	return -EAGAIN;
}

static noinline int nfg_splat_leak(void)
{
	char *obj;

	obj = kmalloc(NFG_SPLAT_LEAK_SIZE, GFP_KERNEL);
	if (!obj)
		return -ENOMEM;
	/* The report's hex dump shows the first bytes. */
	memset(obj, 0, NFG_SPLAT_LEAK_SIZE);
	strscpy(obj, "nfg_splat leak", NFG_SPLAT_LEAK_SIZE);
	OPTIMIZER_HIDE_VAR(obj);
	pr_info("nfg_splat: leaking %d bytes on purpose\n", NFG_SPLAT_LEAK_SIZE);
	return 0;
}

static int __init nfg_splat_init(void)
{
	if (oops) {
		int *volatile p = NULL;

		pr_info("nfg_splat: dereferencing NULL on purpose\n");
		return *p;
	}
	if (uaf)
		return nfg_splat_use_after_free();
	if (lockinv)
		return nfg_splat_inversion();
	if (leak)
		return nfg_splat_leak();
	pr_info("nfg_splat: WARN_ON(1) on purpose\n");
	WARN_ON(1);
	return -EAGAIN;
}
module_init(nfg_splat_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("nfguard VM harness selftest: deliberate WARNING/Oops/KASAN/lockdep/kmemleak");
