// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard: rangeset text formats (element lists, save, restore, ipset).
 */
#define _GNU_SOURCE	/* POSIX/GNU APIs also under -std=c11 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfg_rsfile.h"

#define MAXTOK			64

int nfg_rs_name_valid(const char *name, bool strict, char *err, size_t errlen)
{
	size_t len = strnlen(name, XT_RANGESET_MAXNAMELEN);
	const char *p;

	if (len == 0) {
		nfg_seterr(err, errlen, "empty set name");
		return -1;
	}
	if (len >= XT_RANGESET_MAXNAMELEN) {
		nfg_seterr(err, errlen,
		       "set name \"%.40s%s\" is too long (at most %d characters)",
		       name, strlen(name) > 40 ? "..." : "",
		       XT_RANGESET_MAXNAMELEN - 1);
		return -1;
	}
	for (p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c <= ' ' || c >= 0x7f) {
			nfg_seterr(err, errlen,
			       "set name \"%s\" contains a space or control character",
			       name);
			return -1;
		}
		if (!strict)
			continue;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("_.:+-", c))
			continue;
		nfg_seterr(err, errlen,
		       "set name \"%s\" contains '%c' (allowed: letters, digits, _ . : + -)",
		       name, c);
		return -1;
	}
	if (strict && name[0] == '-') {
		nfg_seterr(err, errlen, "set name \"%s\" must not start with '-'",
		       name);
		return -1;
	}
	return 0;
}

int nfg_rangevec_push(struct nfg_rangevec *v, const struct nfg_range *r)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct nfg_range *nr = realloc(v->r, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		v->r = nr;
		v->cap = cap;
	}
	v->r[v->n++] = *r;
	return 0;
}

void nfg_rangevec_free(struct nfg_rangevec *v)
{
	free(v->r);
	v->r = NULL;
	v->n = v->cap = 0;
}

int nfg_tokenize(char *line, char **tok, int max)
{
	char *p = line;
	int n = 0;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0' || *p == '#')
			return n;
		if (n == max)
			return -1;
		if (*p == '"') {
			char *q = strchr(p + 1, '"');

			if (!q)
				return -2;
			tok[n++] = p + 1;
			*q = '\0';
			p = q + 1;
			if (*p && !isspace((unsigned char)*p))
				return -2;	/* "abc"def */
			continue;
		}
		tok[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

int nfg_elemline_parse(char *line, uint8_t family, struct nfg_rangevec *v,
		       char *err, size_t errlen)
{
	char *p, *save = NULL;
	struct nfg_range r;

	p = strpbrk(line, "#;");
	if (p)
		*p = '\0';
	for (p = strtok_r(line, " \t\r\n\v\f", &save); p;
	     p = strtok_r(NULL, " \t\r\n\v\f", &save)) {
		if (nfg_range_parse(p, family, &r, err, errlen) < 0)
			return -1;
		if (nfg_rangevec_push(v, &r) < 0) {
			nfg_seterr(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

int nfg_rsline_create_t(char *buf, size_t len, const char *name,
			uint8_t family, uint32_t maxelem, uint32_t timeout)
{
	if (timeout)
		return snprintf(buf, len, "create %s %s maxelem %u timeout %u\n",
				name, nfg_family_name(family), maxelem,
				timeout);
	return snprintf(buf, len, "create %s %s maxelem %u\n", name,
			nfg_family_name(family), maxelem);
}

int nfg_rsline_create(char *buf, size_t len, const char *name,
		      uint8_t family, uint32_t maxelem)
{
	return nfg_rsline_create_t(buf, len, name, family, maxelem, 0);
}

int nfg_rsline_add_t(char *buf, size_t len, const char *name,
		     const struct nfg_range *r, uint32_t timeout)
{
	char e[NFG_RANGE_STRLEN];

	if (nfg_range_format(r, e, sizeof(e)) < 0)
		return -1;
	if (timeout)
		return snprintf(buf, len, "add %s %s timeout %u\n", name, e,
				timeout);
	return snprintf(buf, len, "add %s %s\n", name, e);
}

int nfg_rsline_add(char *buf, size_t len, const char *name,
		   const struct nfg_range *r)
{
	return nfg_rsline_add_t(buf, len, name, r, 0);
}

/* ---- restore plan ------------------------------------------------------- */

static long plan_find(struct nfg_rsplan *p, const char *name)
{
	size_t i;

	if (p->last < p->n && !strcmp(p->sets[p->last].name, name))
		return (long)p->last;
	for (i = 0; i < p->n; i++)
		if (!strcmp(p->sets[i].name, name)) {
			p->last = i;
			return (long)i;
		}
	return -1;
}

static struct nfg_rsplan_set *plan_new(struct nfg_rsplan *p, const char *name,
				       unsigned int lineno)
{
	struct nfg_rsplan_set *s;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		struct nfg_rsplan_set *ns = realloc(p->sets, cap * sizeof(*ns));

		if (!ns)
			return NULL;
		p->sets = ns;
		p->cap = cap;
	}
	s = &p->sets[p->n];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->line = lineno;
	p->last = p->n++;
	return s;
}

void nfg_rsplan_free(struct nfg_rsplan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		nfg_rangevec_free(&p->sets[i].elems);
		free(p->sets[i].tmo);
	}
	free(p->sets);
	memset(p, 0, sizeof(*p));
}

/* Decimal u32 in [min, max]. */
static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long long v = 0;
	const char *p;

	if (!*s || strlen(s) > 10)
		return -1;
	for (p = s; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (unsigned int)(*p - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int plan_create(struct nfg_rsplan *p, char **tok, int n,
		       unsigned int lineno, char *err, size_t errlen)
{
	const char *name = tok[1];
	struct nfg_rsplan_set *s;
	bool ipset = false;
	uint8_t family = 0;
	uint32_t maxelem = 0, netmask = 0, timeout = 0;
	bool hash_ip = false;
	long i;
	int k;

	if (n < 3) {
		nfg_seterr(err, errlen,
		       "\"create\" needs a set name and a family (create NAME ipv4|ipv6 [maxelem N])");
		return -1;
	}
	i = plan_find(p, name);
	if (i >= 0) {
		if (p->sets[i].create)
			nfg_seterr(err, errlen,
			       "set \"%s\" is created twice (first on line %u)",
			       name, p->sets[i].line);
		else
			nfg_seterr(err, errlen,
			       "set \"%s\" is created after line %u added to it",
			       name, p->sets[i].line);
		return -1;
	}

	/*
	 * Restore checks names like the kernel does (not strictly like
	 * "nfguard set create"), so that it reads back whatever save wrote.
	 */
	if (nfg_rs_name_valid(name, false, err, errlen) < 0)
		return -1;
	if (!strcmp(tok[2], "ipv4") || !strcmp(tok[2], "ipv6")) {
		family = nfg_family_parse(tok[2]);
		for (k = 3; k < n; k += 2) {
			if (!strcmp(tok[k], "timeout")) {
				if (k + 1 >= n ||
				    parse_u32(tok[k + 1], 0, NFG_RS_TIMEOUT_MAX,
					      &timeout)) {
					nfg_seterr(err, errlen,
					       "timeout must be a number of seconds from 0 to %u",
					       NFG_RS_TIMEOUT_MAX);
					return -1;
				}
				continue;
			}
			if (strcmp(tok[k], "maxelem")) {
				nfg_seterr(err, errlen,
				       "unknown option \"%s\" (create NAME ipv4|ipv6 [maxelem N] [timeout S])",
				       tok[k]);
				return -1;
			}
			if (k + 1 >= n ||
			    parse_u32(tok[k + 1], 1, NFG_RS_MAXELEM_LIMIT, &maxelem)) {
				nfg_seterr(err, errlen,
				       "maxelem must be a number from 1 to %u",
				       NFG_RS_MAXELEM_LIMIT);
				return -1;
			}
		}
	} else if (!strcmp(tok[2], "hash:ip") || !strcmp(tok[2], "hash:net")) {
		ipset = true;
		hash_ip = !strcmp(tok[2], "hash:ip");
		family = NFPROTO_IPV4;	/* ipset's default */
		for (k = 3; k < n; k++) {
			const char *o = tok[k], *v = k + 1 < n ? tok[k + 1] : NULL;

			if (!strcmp(o, "family")) {
				if (v && !strcmp(v, "inet"))
					family = NFPROTO_IPV4;
				else if (v && !strcmp(v, "inet6"))
					family = NFPROTO_IPV6;
				else {
					nfg_seterr(err, errlen,
					       "ipset family must be inet or inet6");
					return -1;
				}
				k++;
			} else if (!strcmp(o, "maxelem")) {
				if (!v || parse_u32(v, 1, UINT32_MAX, &maxelem)) {
					nfg_seterr(err, errlen, "bad ipset maxelem");
					return -1;
				}
				/*
				 * ipset counts entries, we count merged
				 * ranges (never more): clamp to our limit.
				 */
				if (maxelem > NFG_RS_MAXELEM_LIMIT)
					maxelem = NFG_RS_MAXELEM_LIMIT;
				k++;
			} else if (!strcmp(o, "netmask") && hash_ip) {
				if (!v || parse_u32(v, 1, 128, &netmask)) {
					nfg_seterr(err, errlen, "bad ipset netmask");
					return -1;
				}
				k++;
			} else if (!strcmp(o, "timeout")) {
				if (!v || parse_u32(v, 0, NFG_RS_TIMEOUT_MAX,
						    &timeout)) {
					nfg_seterr(err, errlen, "bad ipset timeout");
					return -1;
				}
				k++;
			} else if (!strcmp(o, "bitmask")) {
				nfg_seterr(err, errlen,
				       "ipset option \"bitmask\" is not supported");
				return -1;
			}
			/* anything else (hashsize, counters, ...) ignored */
		}
		if (netmask && netmask > nfg_addr_len(family) * 8) {
			nfg_seterr(err, errlen, "netmask %u too long for %s", netmask,
			       nfg_family_name(family));
			return -1;
		}
		if (netmask == nfg_addr_len(family) * 8)
			netmask = 0;
	} else if (!strncmp(tok[2], "hash:", 5) || !strncmp(tok[2], "bitmap:", 7) ||
		   !strncmp(tok[2], "list:", 5)) {
		nfg_seterr(err, errlen,
		       "ipset type \"%s\" is not supported (only hash:ip and hash:net)",
		       tok[2]);
		return -1;
	} else {
		nfg_seterr(err, errlen,
		       "unknown family \"%s\" (ipv4, ipv6, or ipset hash:ip/hash:net)",
		       tok[2]);
		return -1;
	}

	s = plan_new(p, name, lineno);
	if (!s) {
		nfg_seterr(err, errlen, "out of memory");
		return -1;
	}
	s->create = true;
	s->ipset = ipset;
	s->family = family;
	s->maxelem = maxelem;
	s->netmask = netmask;
	s->timeout = timeout;
	return 0;
}

/* Append an element's timeout (NFG_RS_TIMEOUT_SET: the set's default). */
static int plan_tmo_push(struct nfg_rsplan_set *s, uint32_t t)
{
	if (s->elems.n > s->tmo_cap) {
		size_t cap = s->elems.cap > s->elems.n ? s->elems.cap : s->elems.n;
		uint32_t *nt = realloc(s->tmo, cap * sizeof(*nt));

		if (!nt)
			return -1;
		s->tmo = nt;
		s->tmo_cap = cap;
	}
	s->tmo[s->elems.n - 1] = t;
	if (t != NFG_RS_TIMEOUT_SET)
		s->timed = true;
	return 0;
}

static int plan_add(struct nfg_rsplan *p, char **tok, int n,
		    unsigned int lineno, nfg_rsplan_lookup_cb lookup,
		    void *data, char *err, size_t errlen)
{
	const char *name = tok[1];
	uint32_t timeout = NFG_RS_TIMEOUT_SET;
	struct nfg_rsplan_set *s;
	struct nfg_range r;
	long i;
	int k;

	if (n < 3) {
		nfg_seterr(err, errlen, "\"add\" needs a set name and an element");
		return -1;
	}
	i = plan_find(p, name);
	if (i < 0) {
		uint8_t family = 0;

		if (nfg_rs_name_valid(name, false, err, errlen) < 0)
			return -1;
		if (!lookup) {
			nfg_seterr(err, errlen,
			       "set \"%s\" is not created by this input", name);
			return -1;
		}
		if (lookup(name, &family, data, err, errlen) < 0)
			return -1;
		if (!nfg_addr_len(family)) {
			nfg_seterr(err, errlen, "set \"%s\" has an unknown family",
			       name);
			return -1;
		}
		s = plan_new(p, name, lineno);
		if (!s) {
			nfg_seterr(err, errlen, "out of memory");
			return -1;
		}
		s->family = family;
	} else {
		s = &p->sets[i];
	}

	for (k = 3; k < n; k++) {
		if (!strcmp(tok[k], "timeout")) {
			if (k + 1 >= n ||
			    parse_u32(tok[k + 1], 0, NFG_RS_TIMEOUT_MAX, &timeout)) {
				nfg_seterr(err, errlen,
				       "timeout must be a number of seconds from 0 to %u",
				       NFG_RS_TIMEOUT_MAX);
				return -1;
			}
			k++;
			continue;
		}
		if (!s->ipset) {
			nfg_seterr(err, errlen,
			       "unexpected \"%s\" after the element (one element per add line, then [timeout S])",
			       tok[k]);
			return -1;
		}
		if (!strcmp(tok[k], "nomatch")) {
			nfg_seterr(err, errlen,
			       "ipset \"nomatch\" elements (exceptions) are not supported");
			return -1;
		}
		/* other ipset element options (timeout, comment, ...) ignored */
	}
	if (nfg_range_parse(tok[2], s->family, &r, err, errlen) < 0)
		return -1;
	if (s->netmask)
		nfg_range_widen(&r, s->netmask);
	if (nfg_rangevec_push(&s->elems, &r) < 0 ||
	    plan_tmo_push(s, timeout) < 0) {
		nfg_seterr(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int nfg_rsplan_line(struct nfg_rsplan *p, char *line, unsigned int lineno,
		    nfg_rsplan_lookup_cb lookup, void *data, char *err,
		    size_t errlen)
{
	char *tok[MAXTOK];
	int n;

	n = nfg_tokenize(line, tok, MAXTOK);
	if (n == -1) {
		nfg_seterr(err, errlen, "too many words");
		return -1;
	}
	if (n == -2) {
		nfg_seterr(err, errlen, "unbalanced quote");
		return -1;
	}
	if (n == 0)
		return 0;
	if (!strcmp(tok[0], "create"))
		return plan_create(p, tok, n, lineno, err, errlen);
	if (!strcmp(tok[0], "add"))
		return plan_add(p, tok, n, lineno, lookup, data, err, errlen);
	nfg_seterr(err, errlen, "unknown command \"%s\" (expected create or add)",
	       tok[0]);
	return -1;
}
