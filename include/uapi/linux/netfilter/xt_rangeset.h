/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nfguard rangeset match: -m rangeset [!] --match-set NAME src|dst
 *
 * Shared by the kernel module, the iptables plugin and libnfguard.
 */
#ifndef _UAPI_XT_RANGESET_H
#define _UAPI_XT_RANGESET_H

#include <linux/types.h>

#define XT_RANGESET_MAXNAMELEN	32	/* including the trailing NUL */

enum xt_rangeset_flags {
	XT_RANGESET_DST		= 1 << 0,	/* match destination, else source */
	XT_RANGESET_INV		= 1 << 1,	/* invert the result */
};
#define XT_RANGESET_FLAGS_ALL	(XT_RANGESET_DST | XT_RANGESET_INV)

struct nfg_rangeset;

struct xt_rangeset_mtinfo {
	char	name[XT_RANGESET_MAXNAMELEN];
	__u8	flags;
	__u8	pad[7];

	/* kernel-only tail: .usersize = .userspacesize = offsetof(..., set) */
	struct nfg_rangeset *set __attribute__((aligned(8)));
};

#endif /* _UAPI_XT_RANGESET_H */
