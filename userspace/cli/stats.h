/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfguard stats: one snapshot of every extension's statistics (collected by
 * stats.c through libnfguard) and its three output formats (stats_fmt.c:
 * pure functions of a snapshot, so tests/unit-user feeds them fixtures
 * without a kernel).
 *
 * The JSON format is described by doc/nfguard-stats.schema.json (schema
 * version STATS_SCHEMA_VERSION) and nfguard(8); the Prometheus format is the
 * text exposition format 0.0.4 (metric names nfguard_<ext>_<name>, counters
 * end in _total, no timestamps), for node_exporter's textfile collector.
 */
#ifndef NFG_CLI_STATS_H
#define NFG_CLI_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "libnfguard.h"

/* Bump on any incompatible change of the JSON output (and its schema). */
#define STATS_SCHEMA_VERSION	1

enum stats_state {
	STATS_ABSENT,		/* kernel module not loaded */
	STATS_OK,		/* read */
	STATS_ERROR,		/* loaded, but reading failed: see error */
};

struct stats_ext {
	enum stats_state state;
	char error[256];
};

/*
 * One rangeset set: its LIST header (nfg_rs_list_all) and the facts of the
 * set's LIST doit that libnfguard returns apart (default timeout and
 * expiries; the RANGESET target's packet-path counters).
 */
struct stats_set {
	struct nfg_rs_info info;
	struct nfg_rs_tinfo tinfo;
	struct nfg_rs_dinfo dinfo;
};

/* SYNCOOKIE's counters: libnfguard's two structs side by side. */
struct stats_sc {
	struct nfg_sc_counters c;
	struct nfg_sc_counters_ext x;
};

struct stats_snap {
	int64_t time;				/* Unix time of the snapshot */
	struct stats_ext ext[NFG_EXT_COUNT];	/* indexed by enum nfg_ext */
	struct stats_set *sets;			/* sorted by name */
	size_t nsets;
	struct nfg_kcl_inst *rules;		/* by id */
	size_t nrules;
	struct stats_sc sc;
	struct nfg_rtc_stats rtc;
};

/* Free what the snapshot points to (not the struct itself). */
void stats_snap_release(struct stats_snap *s);

/*
 * The formats. Each writes one complete report to @f and returns 0, or -1
 * when writing failed (ferror). JSON is one line.
 */
int stats_print_text(FILE *f, const struct stats_snap *s);
int stats_print_json(FILE *f, const struct stats_snap *s);
int stats_print_prom(FILE *f, const struct stats_snap *s);

/* "name value" lines of the SYNCOOKIE counters (nfguard syncookie stats). */
void stats_print_sc_lines(FILE *f, const struct stats_sc *c);
/* The same counters as one JSON object (nfguard syncookie stats --json). */
void stats_print_sc_json(FILE *f, const struct stats_sc *c);

#endif /* NFG_CLI_STATS_H */
