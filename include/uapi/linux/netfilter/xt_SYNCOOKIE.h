/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nfguard SYNCOOKIE target: answer SYNs with cookies in raw PREROUTING,
 * before conntrack, and allowlist the sources that complete a handshake.
 *
 *   -t raw -A PREROUTING -p tcp ... -j SYNCOOKIE [--mode local|proxy]
 *       [--mss N] [--wscale N] [--sack-perm] [--timestamp]
 *       [--allowlist-timeout SECONDS] [--allowlist-mask PREFIX]
 *
 * Shared by the kernel module, the iptables plugin and libnfguard.
 */
#ifndef _UAPI_XT_SYNCOOKIE_H
#define _UAPI_XT_SYNCOOKIE_H

#include <linux/types.h>

enum xt_syncookie_mode {
	XT_SYNCOOKIE_MODE_PROXY	= 0,	/* default: SYNPROXY-style connection to the server */
	XT_SYNCOOKIE_MODE_LOCAL	= 1,	/* the kernel's cookie, local listener */
};

enum xt_syncookie_flags {
	XT_SYNCOOKIE_SACK_PERM	= 1 << 0,	/* advertise SACK (local mode: needs timestamps) */
	XT_SYNCOOKIE_TIMESTAMP	= 1 << 1,	/* advertise timestamps */
	XT_SYNCOOKIE_MSS	= 1 << 2,	/* @mss given (else from the device MTU) */
	XT_SYNCOOKIE_WSCALE	= 1 << 3,	/* @wscale given (else as the kernel) */
};
#define XT_SYNCOOKIE_FLAGS_ALL	(XT_SYNCOOKIE_SACK_PERM | XT_SYNCOOKIE_TIMESTAMP | \
				 XT_SYNCOOKIE_MSS | XT_SYNCOOKIE_WSCALE)

#define XT_SYNCOOKIE_WSCALE_MAX		14
#define XT_SYNCOOKIE_MSS_MIN		88	/* as the kernel's TCP_MIN_MSS */
#define XT_SYNCOOKIE_TIMEOUT_DEFAULT	300
#define XT_SYNCOOKIE_TIMEOUT_MAX	(7 * 24 * 3600)

struct xt_syncookie_tginfo {
	__u16	mss;		/* MSS the SYN-ACK advertises (XT_SYNCOOKIE_MSS) */
	__u8	wscale;		/* 0-14 (XT_SYNCOOKIE_WSCALE) */
	__u8	mode;		/* enum xt_syncookie_mode */
	__u32	flags;		/* enum xt_syncookie_flags */
	__u32	timeout;	/* allowlist entry lifetime, seconds, 1..TIMEOUT_MAX */
	__u8	prefix;		/* allowlist mask: 1-32 (IPv4), 1-128 (IPv6) */
	__u8	pad[3];

	/* kernel-only tail: .usersize = .userspacesize = offsetof(..., mask) */
	__u32	mask[4] __attribute__((aligned(8)));	/* @prefix as a mask */
};

#endif /* _UAPI_XT_SYNCOOKIE_H */
