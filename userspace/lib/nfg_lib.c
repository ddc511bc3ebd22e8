// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: version, the extensions and their kernel modules, helpers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
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

int nfg_utf8_seq(const unsigned char *s, uint32_t *cp)
{
	uint32_t c;
	int n, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		/* the terminating NUL stops a truncated sequence here */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/*
 * UTF-8 text is written as it is (JSON text is UTF-8), except control
 * characters (C0, DEL, C1), written \u00NN; each byte that is not part of
 * valid UTF-8 is written as the lone surrogate \udcNN (Python's
 * "surrogateescape"): no valid UTF-8 gives one, so names that differ in
 * any byte stay distinct strings, and the bytes can be read back.
 */
void nfg_sbuf_json_str(struct nfg_sbuf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;
	int n;

	nfg_sbuf_add(b, "\"");
	while (*s) {
		if (*s == '"' || *s == '\\') {
			nfg_sbuf_add(b, "\\%c", *s++);
		} else if (*s < 0x20 || *s == 0x7f) {
			nfg_sbuf_add(b, "\\u%04x", *s++);
		} else if (*s < 0x80) {
			nfg_sbuf_add(b, "%c", *s++);
		} else if ((n = nfg_utf8_seq(s, &cp)) == 0) {
			nfg_sbuf_add(b, "\\u%04x", 0xdc00 + *s++);
		} else if (cp < 0xa0) {
			nfg_sbuf_add(b, "\\u%04x", (unsigned int)cp);
			s += n;
		} else {
			nfg_sbuf_add(b, "%.*s", n, (const char *)s);
			s += n;
		}
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
