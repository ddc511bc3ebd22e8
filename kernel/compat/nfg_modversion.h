/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included (Kbuild, CFLAGS_<obj>) into the one object of each module
 * that holds its MODULE_LICENSE, so `modinfo -F version` is the package
 * version: NFG_VERSION from the top-level Makefile (build/config.mk, i.e.
 * configure.ac's AC_INIT) or from dkms.conf's MAKE line (PACKAGE_VERSION).
 */
#include <linux/module.h>

MODULE_VERSION(NFG_VERSION);
