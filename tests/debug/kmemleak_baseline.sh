#!/bin/bash
# First case of `make check-debug`: the kmemleak baseline. The base kernel
# may leak at boot (or kmemleak may misjudge boot-time objects it cannot see
# references to); those are not the suite's doing. Scan, list what is
# reported now (log + artifact kmemleak.boot), then `echo clear`, which marks
# every object reported so far as never to be reported again. Anything
# tests/debug/kmemleak_check.sh finds at the end of the suite was therefore
# allocated after this point, i.e. by the suite, the harness or the modules
# it loaded. Fails unless the report is empty after the clear, or if
# lockdep was already switched off (by a report during boot).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/debug/lib.sh
. "$NFG_TOP/tests/debug/lib.sh"

# A lockdep report at boot would leave the whole suite unvalidated.
nfg_debug_locks_on
nfg_kmemleak_scan
cp "$NFG_WORK/kmemleak.report" "$NFG_ARTIFACTS/kmemleak.boot"
n=$(grep -c '^unreferenced object' "$NFG_WORK/kmemleak.report")
nfg_log "kmemleak: $n object(s) reported before the suite (boot), cleared:"
nfg_kmemleak_summary "$NFG_WORK/kmemleak.report" | sed 's/^/    /'
echo clear >"$NFG_KMEMLEAK" || nfg_fail "echo clear >$NFG_KMEMLEAK failed"
after_clear=$(cat "$NFG_KMEMLEAK")
nfg_assert_eq "" "$after_clear" "kmemleak report after clear"
nfg_log "kmemleak baseline taken"
