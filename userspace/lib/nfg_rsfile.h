/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard: text formats of rangesets, without netlink (unit-tested in
 * tests/unit-user):
 *
 * - element lists ("nfguard set add NAME -f FILE"): any number of
 *   whitespace-separated elements per line, '#' or ';' starts a comment
 *   (so Spamhaus-style "1.2.3.0/24 ; SBL123" lines work);
 * - save lines:   create NAME ipv4|ipv6 maxelem N [timeout S]
 *                 add NAME ELEM [timeout S]
 * - restore input: save lines, plus ipset save lines of hash:ip and
 *   hash:net sets (create NAME hash:net family inet6 maxelem N ...,
 *   add NAME 10.0.0.0/8 [timeout 300 ...]). "timeout N" (create: the
 *   set's default; add: the element's) is kept. Other ipset options are
 *   ignored, except those that change what an element means:
 *   hash:ip "netmask N" widens every element to its /N block, "nomatch"
 *   elements and "bitmask" are refused.
 *
 * Everything is parsed into a plan (struct nfg_rsplan) first, so a caller
 * can refuse the whole input before touching the kernel.
 */
#ifndef NFG_RSFILE_H
#define NFG_RSFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/netfilter/xt_rangeset.h>

#include "nfg_addr.h"

/*
 * Set name check, see nfg_rs_name_check() in libnfguard.h (which wraps
 * this). Returns 0 or -1 with a reason in err.
 */
int nfg_rs_name_valid(const char *name, bool strict, char *err,
		      size_t errlen);

/* A growable array of ranges. */
struct nfg_rangevec {
	struct nfg_range *r;
	size_t n, cap;
};

int nfg_rangevec_push(struct nfg_rangevec *v, const struct nfg_range *r);
void nfg_rangevec_free(struct nfg_rangevec *v);

/*
 * Split @line in place into whitespace-separated tokens. A token may be
 * "double quoted" (quotes removed; no escapes). An unquoted token starting
 * with '#' ends the line. Returns the number of tokens, -1 if there are
 * more than @max, -2 on an unbalanced quote.
 */
int nfg_tokenize(char *line, char **tok, int max);

/*
 * Element-list line: parse every element of @line (modified in place) as
 * @family and append it to @v. Returns 0 (also for blank and comment-only
 * lines) or -1 with a reason in err.
 */
int nfg_elemline_parse(char *line, uint8_t family, struct nfg_rangevec *v,
		       char *err, size_t errlen);

/*
 * Save-format lines, with trailing newline. Return snprintf()'s value.
 * The _t forms append " timeout S" when @timeout is not 0.
 */
int nfg_rsline_create(char *buf, size_t len, const char *name,
		      uint8_t family, uint32_t maxelem);
int nfg_rsline_add(char *buf, size_t len, const char *name,
		   const struct nfg_range *r);
int nfg_rsline_create_t(char *buf, size_t len, const char *name,
			uint8_t family, uint32_t maxelem, uint32_t timeout);
int nfg_rsline_add_t(char *buf, size_t len, const char *name,
		     const struct nfg_range *r, uint32_t timeout);

struct nfg_rsplan_set {
	char name[XT_RANGESET_MAXNAMELEN];
	bool create;		/* the input creates it (else: add to existing) */
	bool ipset;		/* created by an ipset-syntax line */
	uint8_t family;
	uint32_t maxelem;	/* 0 = kernel default */
	unsigned int netmask;	/* ipset hash:ip netmask, 0 = none */
	unsigned int line;	/* line that first named it */
	uint32_t timeout;	/* create's default timeout (0 = none) */
	struct nfg_rangevec elems;
	/*
	 * Per element of @elems: its timeout in seconds, or
	 * NFG_RS_TIMEOUT_SET (the set's default). @timed: some element has
	 * its own.
	 */
	uint32_t *tmo;
	size_t tmo_cap;
	bool timed;
};

struct nfg_rsplan {
	struct nfg_rsplan_set *sets;
	size_t n, cap;
	size_t last;		/* lookup cache */
};

/*
 * For "add" lines naming a set the input does not create: report the
 * family of the existing set (0) or fail (-1, reason in err, e.g. the set
 * does not exist).
 */
typedef int (*nfg_rsplan_lookup_cb)(const char *name, uint8_t *family,
				    void *data, char *err, size_t errlen);

/*
 * Add one input line (modified in place) to the plan. Blank and comment
 * lines are fine. Returns 0, or -1 with a reason (without line number) in
 * err. @lookup may be NULL: adding to sets not created by the input is
 * then an error.
 */
int nfg_rsplan_line(struct nfg_rsplan *p, char *line, unsigned int lineno,
		    nfg_rsplan_lookup_cb lookup, void *data, char *err,
		    size_t errlen);
void nfg_rsplan_free(struct nfg_rsplan *p);

#endif /* NFG_RSFILE_H */
