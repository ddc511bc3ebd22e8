/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unit-harness stand-in for kernel/compat/nfg_compat.h: the kernel cores
 * include "nfg_compat.h" first; in userspace there is nothing to map.
 */
#ifndef _NFG_SHIM_COMPAT_H
#define _NFG_SHIM_COMPAT_H
#endif
