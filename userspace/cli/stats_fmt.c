// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard stats: text, JSON and Prometheus renderings of a snapshot.
 *
 * One table per extension lists its numbers once (JSON key = text name,
 * Prometheus metric, help, gauge or counter, where it is in the library's
 * struct); the three formats are walks over the same tables, so they cannot
 * disagree on which numbers exist.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nfg_lib.h"
#include "stats.h"

struct field {
	const char *key;	/* JSON key, text name */
	const char *metric;	/* nfguard_<ext>_<metric> */
	const char *help;
	bool counter;		/* else gauge */
	size_t off;
	size_t size;		/* 4 or 8 */
};

#define F(type, member, key, metric, counter, help) \
	{ key, metric, help, counter, offsetof(type, member), \
	  sizeof(((type *)0)->member) }
#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

static const struct field rs_fields[] = {
	F(struct stats_set, info.count, "ranges", "ranges", false,
	  "Ranges in the set (overlapping and adjacent ones merged)."),
	F(struct stats_set, info.maxelem, "maxelem", "maxelem", false,
	  "Most ranges the set may hold."),
	F(struct stats_set, info.refs, "references", "references", false,
	  "Rules using the set."),
	F(struct stats_set, info.memsize, "memory_bytes", "memory_bytes", false,
	  "Kernel memory used by the set."),
	F(struct stats_set, info.lookups, "lookups", "lookups_total", true,
	  "Packets looked up in the set."),
	F(struct stats_set, info.hits, "hits", "hits_total", true,
	  "Lookups that found the address in the set."),
	F(struct stats_set, tinfo.timeout, "timeout", "timeout", false,
	  "The set's default timeout in seconds (0: elements never expire)."),
	F(struct stats_set, tinfo.expiries, "expiries", "expiries_total", true,
	  "Ranges removed because they expired."),
	F(struct stats_set, dinfo.adds, "packet_adds", "packet_adds_total", true,
	  "Adds (and refreshes) by -j RANGESET rules."),
	F(struct stats_set, dinfo.dels, "packet_deletes", "packet_deletes_total", true,
	  "Deletes by -j RANGESET rules."),
	F(struct stats_set, dinfo.refused, "packet_refusals", "packet_refusals_total", true,
	  "Packet-path adds and deletes refused (set full, no memory)."),
	F(struct stats_set, dinfo.dynamic, "dynamic", "dynamic", false,
	  "Entries added by -j RANGESET rules not yet folded into the ranges."),
};

static const struct field kcl_fields[] = {
	F(struct nfg_kcl_inst, limit, "limit", "limit", false,
	  "The rule's connection limit."),
	F(struct nfg_kcl_inst, keys, "keys", "keys", false,
	  "Masked addresses with remembered connections."),
	F(struct nfg_kcl_inst, conns, "connections", "connections", false,
	  "Connections the rule remembers."),
	F(struct nfg_kcl_inst, slots, "slots", "slots", false,
	  "Hash slots of the rule's table."),
	F(struct nfg_kcl_inst, locks, "locks", "locks", false,
	  "Slot locks of the rule's table."),
	F(struct nfg_kcl_inst, memsize, "memory_bytes", "memory_bytes", false,
	  "Kernel memory used by the rule's table."),
	F(struct nfg_kcl_inst, matched, "matched", "matched_total", true,
	  "Packets the rule matched."),
	F(struct nfg_kcl_inst, over_limit, "over_limit", "over_limit_total", true,
	  "Packets whose key was over the limit."),
	F(struct nfg_kcl_inst, inserts, "inserts", "inserts_total", true,
	  "Connections remembered."),
	F(struct nfg_kcl_inst, gc_evictions, "gc_evictions", "gc_evictions_total", true,
	  "Connections forgotten because they ended."),
	F(struct nfg_kcl_inst, cap_hits, "cap_hits", "cap_hits_total", true,
	  "Packets dropped at the network namespace's max_conns cap."),
	F(struct nfg_kcl_inst, alloc_fail, "alloc_fail", "alloc_fail_total", true,
	  "Packets dropped for lack of memory."),
};

/* Order of "nfguard syncookie stats" (= /proc/net/stat/nfguard_syncookie). */
static const struct field sc_fields[] = {
	F(struct stats_sc, c.syn_seen, "syn_seen", "syn_seen_total", true,
	  "SYNs seen by the SYNCOOKIE target."),
	F(struct stats_sc, c.cookie_sent, "cookie_sent", "cookie_sent_total", true,
	  "SYNs answered with a cookie SYN-ACK."),
	F(struct stats_sc, c.ack_valid, "ack_valid", "ack_valid_total", true,
	  "ACKs with a valid cookie."),
	F(struct stats_sc, c.ack_invalid, "ack_invalid", "ack_invalid_total", true,
	  "ACKs with an invalid cookie and no connection, dropped."),
	F(struct stats_sc, c.allowlist_hit, "allowlist_hit", "allowlist_hit_total", true,
	  "SYNs from allowlisted sources, passed."),
	F(struct stats_sc, c.allowlist_add, "allowlist_add", "allowlist_add_total", true,
	  "Sources added to the allowlist."),
	F(struct stats_sc, c.allowlist_evict, "allowlist_evict", "allowlist_evict_total", true,
	  "Allowlist entries evicted because the allowlist was full."),
	F(struct stats_sc, c.proxied, "proxied", "proxied_total", true,
	  "Connections to the server opened for a valid cookie ACK (proxy mode)."),
	F(struct stats_sc, c.malformed, "malformed", "malformed_total", true,
	  "Malformed packets dropped."),
	F(struct stats_sc, c.send_fail, "send_fail", "send_fail_total", true,
	  "Cookie SYN-ACKs that could not be built or routed."),
	F(struct stats_sc, c.sent_inplace, "sent_inplace", "sent_inplace_total", true,
	  "Cookie SYN-ACKs made from the SYN itself."),
	F(struct stats_sc, c.syn_resent, "syn_resent", "syn_resent_total", true,
	  "SYNs to the server sent again (lost handshake)."),
	F(struct stats_sc, x.after_conntrack, "after_conntrack", "after_conntrack_total", true,
	  "Packets passed untouched: conntrack ran before the rule (a chain after it)."),
	F(struct stats_sc, c.entries, "allowlist_entries", "allowlist_entries", false,
	  "Live allowlist entries."),
	F(struct stats_sc, c.max_entries, "allowlist_max", "allowlist_max", false,
	  "Most allowlist entries (allowlist_max)."),
};

static const struct field rtc_fields[] = {
	F(struct nfg_rtc_stats, entries, "entries", "entries", false,
	  "Cached routes."),
	F(struct nfg_rtc_stats, max_entries, "max_entries", "max_entries", false,
	  "Most cached routes (max_entries)."),
	F(struct nfg_rtc_stats, hit, "hit", "hit_total", true,
	  "Packets whose route lookup was skipped (cache hit)."),
	F(struct nfg_rtc_stats, miss, "miss", "miss_total", true,
	  "Packets of tracked connections with nothing cached for their direction."),
	F(struct nfg_rtc_stats, learn, "learn", "learn_total", true,
	  "Routes learnt."),
	F(struct nfg_rtc_stats, invalid, "invalid", "invalid_total", true,
	  "Cached routes found no longer valid and dropped."),
	F(struct nfg_rtc_stats, evict, "evict", "evict_total", true,
	  "Routes not learnt or dropped because of the max_entries bound."),
};

static uint64_t fval(const struct field *fd, const void *obj)
{
	const char *p = (const char *)obj + fd->off;
	uint32_t v32;
	uint64_t v64;

	if (fd->size == sizeof(v32)) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v64, p, sizeof(v64));
	return v64;
}

void stats_snap_release(struct stats_snap *s)
{
	free(s->sets);
	free(s->rules);
	s->sets = NULL;
	s->rules = NULL;
	s->nsets = s->nrules = 0;
}

static const char *kcl_dir(const struct nfg_kcl_inst *r)
{
	return r->flags & NFG_KCL_F_DADDR ? "dst" : "src";
}

static const char *kcl_mode(const struct nfg_kcl_inst *r)
{
	return r->flags & NFG_KCL_F_UPTO ? "upto" : "above";
}

static int done(FILE *f)
{
	return ferror(f) ? -1 : 0;
}

/* ---- text ---------------------------------------------------------------- */

static void text_fields(FILE *f, const struct field *t, size_t n,
			const void *obj, const char *sep)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s%s %" PRIu64, i ? sep : "", t[i].key, fval(&t[i], obj));
}

/* "ext:" and true, or the absent/error line and false. */
static bool text_head(FILE *f, const struct stats_snap *s, enum nfg_ext x)
{
	const struct stats_ext *e = &s->ext[x];

	if (e->state == STATS_ABSENT)
		fprintf(f, "%s: not loaded (kernel module %s)\n", nfg_ext_name(x),
			nfg_ext_module(x));
	else if (e->state == STATS_ERROR)
		fprintf(f, "%s: error: %s\n", nfg_ext_name(x), e->error);
	else
		fprintf(f, "%s:", nfg_ext_name(x));
	return e->state == STATS_OK;
}

int stats_print_text(FILE *f, const struct stats_snap *s)
{
	size_t i;

	if (text_head(f, s, NFG_EXT_RANGESET)) {
		fprintf(f, " %zu set%s\n", s->nsets, s->nsets == 1 ? "" : "s");
		for (i = 0; i < s->nsets; i++) {
			fprintf(f, "  set %s %s: ", s->sets[i].info.name,
				nfg_family_name(s->sets[i].info.family));
			text_fields(f, rs_fields, NFIELDS(rs_fields), &s->sets[i], ", ");
			fputc('\n', f);
		}
	}
	if (text_head(f, s, NFG_EXT_KCONNLIMIT)) {
		fprintf(f, " %zu rule%s", s->nrules, s->nrules == 1 ? "" : "s");
		if (s->nrules)
			fprintf(f, ", connections %" PRIu64 " (cap %" PRIu64 ")",
				s->rules[0].total_conns, s->rules[0].max_conns);
		fputc('\n', f);
		for (i = 0; i < s->nrules; i++) {
			const struct nfg_kcl_inst *r = &s->rules[i];

			fprintf(f, "  rule %u %s %s %s/%u %s: ", r->id,
				r->name[0] ? r->name : "-", nfg_family_name(r->family),
				kcl_dir(r), r->prefix, kcl_mode(r));
			text_fields(f, kcl_fields, NFIELDS(kcl_fields), r, ", ");
			fputc('\n', f);
		}
	}
	if (text_head(f, s, NFG_EXT_SYNCOOKIE)) {
		fputs("\n  ", f);
		text_fields(f, sc_fields, NFIELDS(sc_fields), &s->sc, "\n  ");
		fputc('\n', f);
	}
	if (text_head(f, s, NFG_EXT_RTCACHE)) {
		fputs("\n  ", f);
		text_fields(f, rtc_fields, NFIELDS(rtc_fields), &s->rtc, "\n  ");
		fputc('\n', f);
	}
	return done(f);
}

void stats_print_sc_lines(FILE *f, const struct stats_sc *c)
{
	text_fields(f, sc_fields, NFIELDS(sc_fields), c, "\n");
	fputc('\n', f);
}

/* ---- JSON ------------------------------------------------------------------- */

void stats_print_sc_json(FILE *f, const struct stats_sc *c)
{
	size_t i;

	for (i = 0; i < NFIELDS(sc_fields); i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "{", sc_fields[i].key,
			fval(&sc_fields[i], c));
	fputs("}\n", f);
}

static void json_fields(FILE *f, const struct field *t, size_t n, const void *obj)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, ",\"%s\":%" PRIu64, t[i].key, fval(&t[i], obj));
}

/* Opens the extension's object; false if it was absent or failed (closed). */
static bool json_head(FILE *f, const struct stats_snap *s, enum nfg_ext x)
{
	const struct stats_ext *e = &s->ext[x];

	fprintf(f, "%s\"%s\":{\"loaded\":%s", x ? "," : "", nfg_ext_name(x),
		e->state == STATS_ABSENT ? "false" : "true");
	if (e->state == STATS_ERROR) {
		fputs(",\"error\":", f);
		cli_json_str(f, e->error);
	}
	if (e->state != STATS_OK)
		fputc('}', f);
	return e->state == STATS_OK;
}

int stats_print_json(FILE *f, const struct stats_snap *s)
{
	size_t i;

	fprintf(f, "{\"schema\":%d,\"nfguard_version\":", STATS_SCHEMA_VERSION);
	cli_json_str(f, nfg_version());
	fprintf(f, ",\"time\":%" PRId64 ",\"extensions\":{", s->time);
	if (json_head(f, s, NFG_EXT_RANGESET)) {
		fputs(",\"sets\":[", f);
		for (i = 0; i < s->nsets; i++) {
			fputs(i ? ",{\"name\":" : "{\"name\":", f);
			cli_json_str(f, s->sets[i].info.name);
			fprintf(f, ",\"family\":\"%s\"", nfg_family_name(s->sets[i].info.family));
			json_fields(f, rs_fields, NFIELDS(rs_fields), &s->sets[i]);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	if (json_head(f, s, NFG_EXT_KCONNLIMIT)) {
		/* the netns's totals come with each rule: unknown without one */
		if (s->nrules)
			fprintf(f, ",\"connections\":%" PRIu64 ",\"max_connections\":%" PRIu64,
				s->rules[0].total_conns, s->rules[0].max_conns);
		else
			fputs(",\"connections\":0,\"max_connections\":null", f);
		fputs(",\"rules\":[", f);
		for (i = 0; i < s->nrules; i++) {
			const struct nfg_kcl_inst *r = &s->rules[i];

			fprintf(f, "%s{\"id\":%u,\"name\":", i ? "," : "", r->id);
			cli_json_str(f, r->name);
			fprintf(f, ",\"family\":\"%s\",\"key\":\"%s\",\"prefix\":%u,\"mode\":\"%s\"",
				nfg_family_name(r->family), kcl_dir(r), r->prefix, kcl_mode(r));
			json_fields(f, kcl_fields, NFIELDS(kcl_fields), r);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	if (json_head(f, s, NFG_EXT_SYNCOOKIE)) {
		json_fields(f, sc_fields, NFIELDS(sc_fields), &s->sc);
		fputc('}', f);
	}
	if (json_head(f, s, NFG_EXT_RTCACHE)) {
		json_fields(f, rtc_fields, NFIELDS(rtc_fields), &s->rtc);
		fputc('}', f);
	}
	fputs("}}\n", f);
	return done(f);
}

/* ---- Prometheus text exposition format -------------------------------------- */

/*
 * Length of the well-formed UTF-8 sequence of a printable character at @p
 * (U+00A0 and up: no C1 controls, no overlong forms, no surrogates, at most
 * U+10FFFF), 0 if there is none.
 */
static size_t utf8_printable(const unsigned char *p)
{
	uint32_t cp;
	int n = nfg_utf8_seq(p, &cp);

	return n && cp >= 0xa0 ? (size_t)n : 0;
}

/*
 * A label value is text (UTF-8) but a name is bytes: the value is the name
 * with each byte that is not part of printable ASCII or printable UTF-8
 * written as \xNN (two lowercase hex digits) and each backslash doubled, so
 * distinct names stay distinct series and the name can be read back. Then
 * the exposition format's own escapes: backslash, double quote, newline.
 */
static void prom_value_char(FILE *f, unsigned char c)
{
	if (c == '\\' || c == '"')
		fprintf(f, "\\%c", c);
	else if (c == '\n')
		fputs("\\n", f);
	else
		fputc(c, f);
}

static void prom_label(FILE *f, const char *name, const char *v, bool first)
{
	const unsigned char *p = (const unsigned char *)v;
	char esc[8];
	size_t n, i;

	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	while (*p) {
		if (*p == '\\') {
			fputs("\\\\\\\\", f);	/* value \\, escaped */
			p++;
		} else if (*p >= 0x20 && *p < 0x7f) {
			prom_value_char(f, *p++);
		} else if ((n = utf8_printable(p))) {
			fwrite(p, 1, n, f);
			p += n;
		} else {
			snprintf(esc, sizeof(esc), "\\x%02x", *p++);
			for (i = 0; esc[i]; i++)
				prom_value_char(f, (unsigned char)esc[i]);
		}
	}
	fputc('"', f);
}

static void prom_family(FILE *f, const char *ext, const char *metric,
			const char *help, bool counter)
{
	fprintf(f, "# HELP nfguard_%s_%s %s\n# TYPE nfguard_%s_%s %s\n", ext,
		metric, help, ext, metric, counter ? "counter" : "gauge");
}

static void prom_gauge(FILE *f, const char *ext, const char *metric,
		       const char *help, uint64_t v)
{
	prom_family(f, ext, metric, help, false);
	fprintf(f, "nfguard_%s_%s %" PRIu64 "\n", ext, metric, v);
}

/* Labels of row @i of an extension's table, without braces. */
typedef void (*prom_labels_fn)(FILE *f, const void *row);

static void rs_labels(FILE *f, const void *row)
{
	const struct stats_set *set = row;

	prom_label(f, "set", set->info.name, true);
	prom_label(f, "family", nfg_family_name(set->info.family), false);
}

static void kcl_labels(FILE *f, const void *row)
{
	const struct nfg_kcl_inst *r = row;
	char id[16];

	snprintf(id, sizeof(id), "%u", r->id);
	prom_label(f, "id", id, true);
	prom_label(f, "name", r->name, false);
	prom_label(f, "family", nfg_family_name(r->family), false);
}

/*
 * One metric family per field, each with one sample per row (labels from
 * @labels) or, with @labels NULL, the single object @rows.
 */
static void prom_table(FILE *f, const char *ext, const struct field *t,
		       size_t nt, const void *rows, size_t nrows, size_t rowsize,
		       prom_labels_fn labels)
{
	size_t i, j;

	if (!nrows)
		return;
	for (i = 0; i < nt; i++) {
		prom_family(f, ext, t[i].metric, t[i].help, t[i].counter);
		for (j = 0; j < nrows; j++) {
			const void *row = (const char *)rows + j * rowsize;

			fprintf(f, "nfguard_%s_%s", ext, t[i].metric);
			if (labels) {
				fputc('{', f);
				labels(f, row);
				fputc('}', f);
			}
			fprintf(f, " %" PRIu64 "\n", fval(&t[i], row));
		}
	}
}

int stats_print_prom(FILE *f, const struct stats_snap *s)
{
	unsigned int x;

	fputs("# HELP nfguard_extension_loaded Whether the extension's kernel module is loaded.\n"
	      "# TYPE nfguard_extension_loaded gauge\n", f);
	for (x = 0; x < NFG_EXT_COUNT; x++)
		fprintf(f, "nfguard_extension_loaded{extension=\"%s\"} %d\n",
			nfg_ext_name(x), s->ext[x].state != STATS_ABSENT);
	fputs("# HELP nfguard_extension_error Whether reading the loaded extension's statistics failed.\n"
	      "# TYPE nfguard_extension_error gauge\n", f);
	for (x = 0; x < NFG_EXT_COUNT; x++)
		fprintf(f, "nfguard_extension_error{extension=\"%s\"} %d\n",
			nfg_ext_name(x), s->ext[x].state == STATS_ERROR);

	if (s->ext[NFG_EXT_RANGESET].state == STATS_OK) {
		prom_gauge(f, "rangeset", "sets", "Range sets in the network namespace.",
			   s->nsets);
		prom_table(f, "rangeset", rs_fields, NFIELDS(rs_fields), s->sets,
			   s->nsets, sizeof(*s->sets), rs_labels);
	}
	if (s->ext[NFG_EXT_KCONNLIMIT].state == STATS_OK) {
		prom_gauge(f, "kconnlimit", "rules",
			   "Rules using -m kconnlimit in the network namespace.", s->nrules);
		prom_gauge(f, "kconnlimit", "netns_connections",
			   "Connections remembered by all rules of the network namespace.",
			   s->nrules ? s->rules[0].total_conns : 0);
		if (s->nrules)
			prom_gauge(f, "kconnlimit", "netns_max_connections",
				   "The network namespace's cap on remembered connections (max_conns).",
				   s->rules[0].max_conns);
		prom_table(f, "kconnlimit", kcl_fields, NFIELDS(kcl_fields), s->rules,
			   s->nrules, sizeof(*s->rules), kcl_labels);
	}
	if (s->ext[NFG_EXT_SYNCOOKIE].state == STATS_OK)
		prom_table(f, "syncookie", sc_fields, NFIELDS(sc_fields), &s->sc, 1,
			   sizeof(s->sc), NULL);
	if (s->ext[NFG_EXT_RTCACHE].state == STATS_OK)
		prom_table(f, "rtcache", rtc_fields, NFIELDS(rtc_fields), &s->rtc, 1,
			   sizeof(s->rtc), NULL);
	return done(f);
}
