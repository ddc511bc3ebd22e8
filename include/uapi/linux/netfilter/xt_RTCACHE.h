/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * nfguard RTCACHE target: opt a forwarded (or locally delivered) flow into
 * the per-conntrack input route cache.
 *
 *   -t mangle|filter -A FORWARD|INPUT ... -j RTCACHE
 *
 * The rule learns the route the packet got, for its conntrack and
 * direction; later packets of that direction get the cached route at the
 * end of PREROUTING and skip the route lookup. Returns XT_CONTINUE.
 * Refused in other tables and hooks (checkentry says why in the kernel log).
 *
 * Shared by the kernel module, the iptables plugin and libnfguard.
 */
#ifndef _UAPI_XT_RTCACHE_H
#define _UAPI_XT_RTCACHE_H

#include <linux/types.h>

/* No flag is defined yet: @flags must be zero (room for options). */
#define XT_RTCACHE_FLAGS_ALL	0U

struct xt_rtcache_tginfo {
	__u32	flags;
	__u32	pad;
};

#endif /* _UAPI_XT_RTCACHE_H */
