// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: version, the extensions and their kernel modules, helpers.
 */
#include <errno.h>
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
