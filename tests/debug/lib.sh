# shellcheck shell=bash
# kmemleak and lockdep helpers for the check-debug cases (sourced after tests/vm/lib.sh).
#
# kmemleak reports an object when, at the start of a scan, it is at least
# MSECS_MIN_AGE (5000 ms, a constant in mm/kmemleak.c) old, nothing points to
# it, and its contents did not change since the previous scan (the first scan
# that sees an object only records its checksum). So: wait out the minimum
# age (a kernel constant, not a guess at machine speed), then scan more than
# once.
NFG_KMEMLEAK=/sys/kernel/debug/kmemleak
NFG_KMEMLEAK_MIN_AGE=6 # > MSECS_MIN_AGE, in seconds
NFG_KMEMLEAK_SCANS=3

# nfg_kmemleak_scan: wait out the minimum age, scan NFG_KMEMLEAK_SCANS times,
# leave the report (possibly empty) in $NFG_WORK/kmemleak.report.
nfg_kmemleak_scan() {
	local i t0
	[ -e "$NFG_KMEMLEAK" ] || nfg_fail "no $NFG_KMEMLEAK: not a kmemleak kernel (or debugfs not mounted)"
	nfg_sleep "$NFG_KMEMLEAK_MIN_AGE"
	for ((i = 1; i <= NFG_KMEMLEAK_SCANS; i++)); do
		t0=${EPOCHREALTIME/./}
		# Fails (EPERM/EBUSY) when kmemleak disabled itself, e.g. out of
		# its object pool: then it cannot vouch for anything.
		echo scan >"$NFG_KMEMLEAK" || nfg_fail "kmemleak scan $i failed (kmemleak disabled? see dmesg)"
		nfg_log "kmemleak scan $i took $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
	done
	cat "$NFG_KMEMLEAK" >"$NFG_WORK/kmemleak.report" || nfg_fail "cannot read $NFG_KMEMLEAK"
}

# nfg_kmemleak_summary FILE: one line per reported object: size, and the
# first backtrace frames (where it was allocated).
nfg_kmemleak_summary() {
	awk '/^unreferenced object/ { if (obj) print obj; obj = $0; n = 0; bt = 0; next }
		/backtrace/ { bt = 1; next }
		bt && n < 6 && NF { sub(/^ +\[<[0-9a-f]+>\] /, ""); sub(/^ +/, ""); obj = obj " | " $0; n++ }
		END { if (obj) print obj }' "$1"
}

# nfg_debug_locks_on: fail unless lockdep is still validating. Its first
# report switches it off for the rest of the boot (debug_locks 0), and so
# does a taint such as a KASAN report: after that it cannot vouch for
# anything.
nfg_debug_locks_on() {
	local v
	[ -r /proc/lockdep_stats ] || nfg_fail "no /proc/lockdep_stats: not a lockdep kernel"
	v=$(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)
	nfg_assert_eq 1 "$v" "lockdep debug_locks (0: turned off by an earlier report)"
}
