// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: libnftnl "match"/"target" expressions (nft_compat) for the
 * four extensions, and their decoder.
 *
 * The info blob is what iptables-nft sends: the whole XT_ALIGN()ed ABI
 * struct (the iptables plugins' .size), kernel-only tail zeroed, built from
 * the same headers as the kernel and the plugins, with the plugins' defaults
 * and checks. The kernel dumps it back with the tail zeroed (nft_compat
 * copies .usersize bytes), so a decoded rule compares byte for byte.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnftnl/expr.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_RTCACHE.h>
#include <linux/netfilter/xt_SYNCOOKIE.h>
#include <linux/netfilter/xt_kconnlimit.h>
#include <linux/netfilter/xt_rangeset.h>

#include "libnfguard.h"
#include "nfg_genl.h"
#include "nfg_rsfile.h"

static int plen_max(uint8_t family)
{
	return family == NFG_FAMILY_IPV6 ? 128 : 32;
}

static int family_check(uint8_t family, struct nfg_err *e)
{
	if (family != NFG_FAMILY_IPV4 && family != NFG_FAMILY_IPV6)
		return nfg_err_set(e, EINVAL,
				   "family %u: nft_compat knows the extensions only in ip and ip6 tables",
				   family);
	return 0;
}

/* @info (@size bytes) is copied. */
static struct nftnl_expr *compat_expr(bool target, const char *name,
				      const void *info, size_t size,
				      struct nfg_err *e)
{
	struct nftnl_expr *ex = nftnl_expr_alloc(target ? "target" : "match");
	void *blob = calloc(1, size);

	if (!ex || !blob) {
		if (ex)
			nftnl_expr_free(ex);
		free(blob);
		nfg_err_set(e, ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(blob, info, size);
	/* libnftnl keeps the buffer and frees it with the expression */
	if (target) {
		nftnl_expr_set_str(ex, NFTNL_EXPR_TG_NAME, name);
		nftnl_expr_set_u32(ex, NFTNL_EXPR_TG_REV, 0);
		nftnl_expr_set(ex, NFTNL_EXPR_TG_INFO, blob, size);
	} else {
		nftnl_expr_set_str(ex, NFTNL_EXPR_MT_NAME, name);
		nftnl_expr_set_u32(ex, NFTNL_EXPR_MT_REV, 0);
		nftnl_expr_set(ex, NFTNL_EXPR_MT_INFO, blob, size);
	}
	return ex;
}

struct nftnl_expr *nfg_nft_rangeset(uint8_t family,
				    const struct nfg_nft_rangeset *p,
				    struct nfg_err *e)
{
	struct xt_rangeset_mtinfo info;
	char err[128];

	if (family_check(family, e) < 0)
		return NULL;
	if (!p || !p->set) {
		nfg_err_set(e, EINVAL, "rangeset: no set name");
		return NULL;
	}
	if (nfg_rs_name_valid(p->set, false, err, sizeof(err)) < 0) {
		nfg_err_set(e, EINVAL, "rangeset: %s", err);
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	strncpy(info.name, p->set, sizeof(info.name) - 1);
	info.flags = (p->dst ? XT_RANGESET_DST : 0) |
		     (p->invert ? XT_RANGESET_INV : 0);
	return compat_expr(false, "rangeset", &info, XT_ALIGN(sizeof(info)), e);
}

static bool kcl_name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_.:-", *s)))
			return false;
	return true;
}

struct nftnl_expr *nfg_nft_kconnlimit(uint8_t family,
				      const struct nfg_nft_kconnlimit *p,
				      struct nfg_err *e)
{
	struct xt_kconnlimit_mtinfo info;
	const char *name;

	if (family_check(family, e) < 0)
		return NULL;
	if (!p) {
		nfg_err_set(e, EINVAL, "kconnlimit: no parameters");
		return NULL;
	}
	if (p->prefix < -1 || p->prefix > plen_max(family)) {
		nfg_err_set(e, ERANGE, "kconnlimit: mask %d out of range 0-%d",
			    p->prefix, plen_max(family));
		return NULL;
	}
	name = p->name ? p->name : "";
	if (strlen(name) >= XT_KCONNLIMIT_MAXNAMELEN || !kcl_name_ok(name)) {
		nfg_err_set(e, EINVAL,
			    "kconnlimit: name \"%s\": at most %d characters of [A-Za-z0-9_.:-]",
			    name, XT_KCONNLIMIT_MAXNAMELEN - 1);
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	info.limit = p->limit;
	info.prefix = p->prefix < 0 ? plen_max(family) : p->prefix;
	info.flags = (p->upto ? XT_KCONNLIMIT_UPTO : XT_KCONNLIMIT_ABOVE) |
		     (p->daddr ? XT_KCONNLIMIT_DADDR : 0);
	memcpy(info.name, name, strlen(name));
	return compat_expr(false, "kconnlimit", &info, XT_ALIGN(sizeof(info)), e);
}

struct nftnl_expr *nfg_nft_syncookie(uint8_t family,
				     const struct nfg_nft_syncookie *p,
				     struct nfg_err *e)
{
	struct xt_syncookie_tginfo info;

	if (family_check(family, e) < 0)
		return NULL;
	if (!p) {
		nfg_err_set(e, EINVAL, "SYNCOOKIE: no parameters");
		return NULL;
	}
	if (p->mode != NFG_SC_MODE_PROXY && p->mode != NFG_SC_MODE_LOCAL) {
		nfg_err_set(e, EINVAL, "SYNCOOKIE: unknown mode %u", p->mode);
		return NULL;
	}
	if (p->mss && p->mss < XT_SYNCOOKIE_MSS_MIN) {
		nfg_err_set(e, ERANGE, "SYNCOOKIE: mss %u out of range %d-65535",
			    p->mss, XT_SYNCOOKIE_MSS_MIN);
		return NULL;
	}
	if (p->wscale < -1 || p->wscale > XT_SYNCOOKIE_WSCALE_MAX) {
		nfg_err_set(e, ERANGE, "SYNCOOKIE: wscale %d out of range 0-%d",
			    p->wscale, XT_SYNCOOKIE_WSCALE_MAX);
		return NULL;
	}
	if (p->timeout > XT_SYNCOOKIE_TIMEOUT_MAX) {
		nfg_err_set(e, ERANGE, "SYNCOOKIE: allowlist timeout %u out of range 1-%d",
			    p->timeout, XT_SYNCOOKIE_TIMEOUT_MAX);
		return NULL;
	}
	if (p->prefix < 0 || p->prefix > plen_max(family)) {
		nfg_err_set(e, ERANGE, "SYNCOOKIE: allowlist mask %d out of range 1-%d",
			    p->prefix, plen_max(family));
		return NULL;
	}
	if (p->mode == NFG_SC_MODE_LOCAL && p->sack_perm && !p->timestamp) {
		nfg_err_set(e, EINVAL,
			    "SYNCOOKIE: --sack-perm needs --timestamp in local mode");
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	info.mode = p->mode;
	if (p->mss) {
		info.mss = p->mss;
		info.flags |= XT_SYNCOOKIE_MSS;
	}
	if (p->wscale >= 0) {
		info.wscale = (uint8_t)p->wscale;
		info.flags |= XT_SYNCOOKIE_WSCALE;
	}
	if (p->sack_perm)
		info.flags |= XT_SYNCOOKIE_SACK_PERM;
	if (p->timestamp)
		info.flags |= XT_SYNCOOKIE_TIMESTAMP;
	info.timeout = p->timeout ? p->timeout : XT_SYNCOOKIE_TIMEOUT_DEFAULT;
	info.prefix = p->prefix ? p->prefix : plen_max(family);
	return compat_expr(true, "SYNCOOKIE", &info, XT_ALIGN(sizeof(info)), e);
}

struct nftnl_expr *nfg_nft_rtcache(uint8_t family, struct nfg_err *e)
{
	struct xt_rtcache_tginfo info;

	if (family_check(family, e) < 0)
		return NULL;
	memset(&info, 0, sizeof(info));
	return compat_expr(true, "RTCACHE", &info, XT_ALIGN(sizeof(info)), e);
}

/* ---- decoder ------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, pos;
	bool full;
};

static void out_add(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->pos) {
		o->full = true;
		o->pos = o->len - 1;
		return;
	}
	o->pos += (size_t)n;
}

/* a copy of @name (@n bytes, maybe unterminated), printable or refused */
static bool name_copy(char *dst, const char *src, size_t n)
{
	size_t i;

	memcpy(dst, src, n);
	dst[n] = '\0';
	for (i = 0; dst[i]; i++)
		if ((unsigned char)dst[i] <= ' ' || (unsigned char)dst[i] >= 0x7f ||
		    dst[i] == '"' || dst[i] == '\\')
			return false;
	return true;
}

int nfg_nft_expr_format(const struct nftnl_expr *expr, uint8_t family,
			char *buf, size_t len, struct nfg_err *e)
{
	const char *kind, *name;
	const void *data;
	uint32_t dlen = 0, rev;
	struct out o = { .buf = buf, .len = len };
	bool target;

	if (!expr || !buf || !len)
		return nfg_err_set(e, EINVAL, "no expression or buffer");
	buf[0] = '\0';
	kind = nftnl_expr_get_str(expr, NFTNL_EXPR_NAME);
	if (!kind)
		return -ENOENT;
	target = !strcmp(kind, "target");
	if (!target && strcmp(kind, "match"))
		return -ENOENT;
	name = nftnl_expr_get_str(expr, target ? NFTNL_EXPR_TG_NAME : NFTNL_EXPR_MT_NAME);
	rev = nftnl_expr_get_u32(expr, target ? NFTNL_EXPR_TG_REV : NFTNL_EXPR_MT_REV);
	data = nftnl_expr_get(expr, target ? NFTNL_EXPR_TG_INFO : NFTNL_EXPR_MT_INFO, &dlen);
	if (!name)
		return -ENOENT;

#define NEED(type)							\
	do {								\
		if (rev != 0 || !data || dlen != XT_ALIGN(sizeof(type)))	\
			return nfg_err_set(e, EINVAL,			\
				"%s: revision %u, %u info bytes: not what nfguard %s encodes", \
				name, rev, dlen, NFG_VERSION);		\
	} while (0)

	if (!target && !strcmp(name, "rangeset")) {
		const struct xt_rangeset_mtinfo *i = data;
		char set[XT_RANGESET_MAXNAMELEN + 1];

		NEED(struct xt_rangeset_mtinfo);
		if (!name_copy(set, i->name, XT_RANGESET_MAXNAMELEN))
			return nfg_err_set(e, EINVAL, "rangeset: set name not printable");
		out_add(&o, "-m rangeset%s --match-set %s %s",
			i->flags & XT_RANGESET_INV ? " !" : "", set,
			i->flags & XT_RANGESET_DST ? "dst" : "src");
	} else if (!target && !strcmp(name, "kconnlimit")) {
		const struct xt_kconnlimit_mtinfo *i = data;
		char label[XT_KCONNLIMIT_MAXNAMELEN + 1];

		NEED(struct xt_kconnlimit_mtinfo);
		if (!name_copy(label, i->name, XT_KCONNLIMIT_MAXNAMELEN))
			return nfg_err_set(e, EINVAL, "kconnlimit: name not printable");
		out_add(&o, "-m kconnlimit --kconnlimit-%s %u --kconnlimit-mask %u --kconnlimit-%s",
			i->flags & XT_KCONNLIMIT_UPTO ? "upto" : "above", i->limit,
			i->prefix, i->flags & XT_KCONNLIMIT_DADDR ? "daddr" : "saddr");
		if (label[0])
			out_add(&o, " --kconnlimit-name %s", label);
	} else if (target && !strcmp(name, "SYNCOOKIE")) {
		const struct xt_syncookie_tginfo *i = data;

		NEED(struct xt_syncookie_tginfo);
		out_add(&o, "-j SYNCOOKIE --mode %s",
			i->mode == XT_SYNCOOKIE_MODE_LOCAL ? "local" : "proxy");
		if (i->flags & XT_SYNCOOKIE_MSS)
			out_add(&o, " --mss %u", i->mss);
		if (i->flags & XT_SYNCOOKIE_WSCALE)
			out_add(&o, " --wscale %u", i->wscale);
		if (i->flags & XT_SYNCOOKIE_SACK_PERM)
			out_add(&o, " --sack-perm");
		if (i->flags & XT_SYNCOOKIE_TIMESTAMP)
			out_add(&o, " --timestamp");
		out_add(&o, " --allowlist-timeout %u --allowlist-mask %u",
			i->timeout, i->prefix);
	} else if (target && !strcmp(name, "RTCACHE")) {
		NEED(struct xt_rtcache_tginfo);
		out_add(&o, "-j RTCACHE");
	} else {
		return -ENOENT;
	}
#undef NEED
	(void)family;
	if (o.full)
		return nfg_err_set(e, ENOSPC, "%s: buffer of %zu bytes too small",
				   name, len);
	return (int)o.pos;
}
