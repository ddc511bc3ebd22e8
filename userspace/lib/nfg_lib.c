// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: version, the extensions and their kernel modules, helpers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/nfguard_genl.h>

#include "libnfguard.h"
#include "nfg_genl.h"
#include "nfg_lib.h"

#ifndef NFG_VERSION
#error "NFG_VERSION (the package version) must be defined by the build"
#endif

const char *nfg_version(void)
{
	return NFG_VERSION;
}

static const struct {
	const char *name, *module, *family;
} exts[NFG_EXT_COUNT] = {
	[NFG_EXT_RANGESET] = { "rangeset", "xt_rangeset", NFG_RANGESET_GENL_NAME },
	[NFG_EXT_KCONNLIMIT] = { "kconnlimit", "xt_kconnlimit", NFG_KCONNLIMIT_GENL_NAME },
	[NFG_EXT_SYNCOOKIE] = { "syncookie", "xt_SYNCOOKIE", NFG_SYNCOOKIE_GENL_NAME },
	[NFG_EXT_RTCACHE] = { "rtcache", "xt_RTCACHE", NFG_RTCACHE_GENL_NAME },
};

static bool ext_ok(enum nfg_ext ext)
{
	return (unsigned int)ext < NFG_EXT_COUNT;
}

const char *nfg_ext_name(enum nfg_ext ext)
{
	return ext_ok(ext) ? exts[ext].name : NULL;
}

const char *nfg_ext_module(enum nfg_ext ext)
{
	return ext_ok(ext) ? exts[ext].module : NULL;
}

int nfg_ext_loaded(enum nfg_ext ext, struct nfg_err *e)
{
	if (!ext_ok(ext))
		return nfg_err_set(e, EINVAL, "unknown extension %d", (int)ext);
	return nfg_genl_family_loaded(exts[ext].family, e);
}

int nfg_vec_push(void **arr, size_t *n, size_t *cap, const void *elem,
		 size_t size)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		void *na = realloc(*arr, ncap * size);

		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = ncap;
	}
	memcpy((char *)*arr + *n * size, elem, size);
	(*n)++;
	return 0;
}

void nfg_sbuf_add(struct nfg_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t need;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	need = b->len + (size_t)n + 1;
	if (need > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *s;

		while (cap < need)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
		va_start(ap, fmt);
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void nfg_sbuf_json_str(struct nfg_sbuf *b, const char *s)
{
	nfg_sbuf_add(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			nfg_sbuf_add(b, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			nfg_sbuf_add(b, "\\u%04x", c);
		else
			nfg_sbuf_add(b, "%c", c);
	}
	nfg_sbuf_add(b, "\"");
}

char *nfg_sbuf_take(struct nfg_sbuf *b)
{
	char *s = b->s;

	if (b->oom || !s) {
		free(s);
		s = b->oom ? NULL : strdup("");
	}
	memset(b, 0, sizeof(*b));
	return s;
}
