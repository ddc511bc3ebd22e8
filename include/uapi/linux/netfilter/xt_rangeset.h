/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nfguard rangeset match: -m rangeset [!] --match-set NAME src|dst
 * and target: -j RANGESET [--add-set NAME src|dst [--timeout S] [--exist]]
 *                         [--del-set NAME src|dst] [--prefix N]
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

/* Target RANGESET rev 0. */
enum xt_rangeset_tg_flags {
	XT_RANGESET_TG_EXIST	= 1 << 0,	/* --exist: refresh the timeout */
	XT_RANGESET_TG_TIMEOUT	= 1 << 1,	/* --timeout given (else the set's) */
	XT_RANGESET_TG_PREFIX	= 1 << 2,	/* --prefix given (else 32/128) */
};
#define XT_RANGESET_TG_FLAGS_ALL \
	(XT_RANGESET_TG_EXIST | XT_RANGESET_TG_TIMEOUT | XT_RANGESET_TG_PREFIX)
/* Largest --timeout in seconds (as the sets' own timeouts). */
#define XT_RANGESET_TG_TIMEOUT_MAX	2147483

struct xt_rangeset_tginfo {
	char	add_set[XT_RANGESET_MAXNAMELEN];	/* "" = no --add-set */
	char	del_set[XT_RANGESET_MAXNAMELEN];	/* "" = no --del-set */
	__u32	timeout;	/* seconds (0 = permanent), with TG_TIMEOUT */
	__u8	add_flags;	/* XT_RANGESET_DST or 0 (source) */
	__u8	del_flags;	/* ditto */
	__u8	flags;		/* XT_RANGESET_TG_* */
	__u8	prefix;		/* with TG_PREFIX: 0..32 / 0..128; else 0 */

	/* kernel-only tail: .usersize = .userspacesize = offsetof(..., add) */
	struct nfg_rangeset *add __attribute__((aligned(8)));
	struct nfg_rangeset *del;
};

#endif /* _UAPI_XT_RANGESET_H */
