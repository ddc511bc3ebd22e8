#!/bin/bash
# Last case of `make check-debug`: fails if kmemleak finds any unreferenced
# object allocated since tests/debug/kmemleak_baseline.sh, and lists them.
#
# Any object, not only those whose backtrace names an nfguard module: the
# harness unloads our modules after every case, so by now their addresses no
# longer resolve to names and a leak of ours shows as bare addresses (or only
# mainline frames: a set element that nfnetlink allocated on our behalf); a
# filter on module names would let exactly our leaks through. A mainline leak
# provoked by a case is worth a look too; should one turn out to be a known,
# unfixable false positive, add a precise ignore rule here with the reason.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/debug/lib.sh
. "$NFG_TOP/tests/debug/lib.sh"

nfg_kmemleak_scan
r=$NFG_WORK/kmemleak.report
if [ -s "$r" ]; then
	cp "$r" "$NFG_ARTIFACTS/kmemleak.report"
	n=$(grep -c '^unreferenced object' "$r")
	echo "kmemleak: $n unreferenced object(s) since the baseline:"
	nfg_kmemleak_summary "$r" | sed 's/^/    /'
	echo "--- full report (also in $NFG_ARTIFACTS/kmemleak.report):"
	head -n 200 "$r"
	nfg_fail "kmemleak found $n leaked object(s) (listed above)"
fi
nfg_log "kmemleak: no leaks since the baseline"
# Every case's splat already failed that case; this catches lockdep having
# been switched off without one (a taint, say) for the suite's record.
nfg_debug_locks_on
nfg_log "lockdep still validating at the end of the suite"
