/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nfguard kconnlimit match: connlimit-compatible connection limits on a
 * per-rule keyed-lock table.
 *
 *   -m kconnlimit --kconnlimit-upto N | --kconnlimit-above N
 *                 [--kconnlimit-mask PREFIX] [--kconnlimit-saddr|--kconnlimit-daddr]
 *                 [--kconnlimit-name NAME]
 *
 * Shared by the kernel module, the iptables plugin and libnfguard.
 */
#ifndef _UAPI_XT_KCONNLIMIT_H
#define _UAPI_XT_KCONNLIMIT_H

#include <linux/types.h>

#define XT_KCONNLIMIT_MAXNAMELEN	32	/* including the trailing NUL */

enum xt_kconnlimit_flags {
	/* match when count <= limit (connlimit's XT_CONNLIMIT_INVERT) */
	XT_KCONNLIMIT_UPTO	= 1 << 0,
	/* key on the destination address, else the source */
	XT_KCONNLIMIT_DADDR	= 1 << 1,
	/* match when count > limit; exactly one of UPTO and ABOVE is set */
	XT_KCONNLIMIT_ABOVE	= 1 << 2,
};
#define XT_KCONNLIMIT_FLAGS_ALL \
	(XT_KCONNLIMIT_UPTO | XT_KCONNLIMIT_DADDR | XT_KCONNLIMIT_ABOVE)

struct nfg_kcl_instance;

struct xt_kconnlimit_mtinfo {
	__u32	limit;
	__u8	prefix;		/* mask length: 0-32 (IPv4), 0-128 (IPv6) */
	__u8	flags;		/* enum xt_kconnlimit_flags */
	__u8	pad[2];
	char	name[XT_KCONNLIMIT_MAXNAMELEN];	/* optional label, "" = none */

	/* kernel-only tail: .usersize = .userspacesize = offsetof(..., inst) */
	struct nfg_kcl_instance *inst __attribute__((aligned(8)));
};

#endif /* _UAPI_XT_KCONNLIMIT_H */
