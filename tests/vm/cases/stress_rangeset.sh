#!/bin/bash
# Stress: every stressor of tests/stress/<ext>.sh at once (for rangeset: set
# add/del/swap/flush/list/test, sets created/dumped/renamed/destroyed, sets
# destroyed while a dump of them runs, rules referencing sets added and
# deleted with legacy and nft, netns created and destroyed with sets and rules
# inside) under a lookup flood from random IPv4 and IPv6 sources through
# legacy and nft rules. Then: no splat (harness), every stressor progressed
# and finished (a deadlock is reported with the blocked tasks' stacks), the
# flood was matched, the live-object counter back to 0, the kmalloc caches
# back to their baseline. Then, in a loop, rmmod is refused while a legacy or
# nft rule uses the module and succeeds once they are gone, leaving nothing.
# Duration: NFG_STRESS_SECS (tests/stress/knobs.sh).
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"
. "$NFG_TOP/tests/stress/lib.sh"
. "$NFG_TOP/tests/stress/rangeset.sh"

secs=$(nfg_knob NFG_STRESS_SECS 6)
cycles=$(nfg_knob NFG_STRESS_UNLOAD_CYCLES 2)
# A leak of 10k 64-byte tree nodes is 640 KiB; what the kernel itself kept
# after a run (netns, nft and legacy churn) was 50-170 KiB in our runs.
slab_bound=$(nfg_knob NFG_STRESS_SLAB_BOUND 262144)
live=/sys/module/xt_rangeset/parameters/live_objects
nfg_log "stress $secs s, $cycles unload cycles, slab bound $slab_bound bytes"

live_zero() { [ "$(cat $live)" = 0 ]; }
slab_check() { # WHEN
	nfg_wait_until 30 nfg_slab_settled "$base" "$slab_bound" ||
		nfg_fail "$1: kmalloc caches hold $(cat "$NFG_WORK/slab.delta") bytes more than before (bound $slab_bound)"
	nfg_log "$1: kmalloc delta $(cat "$NFG_WORK/slab.delta") bytes"
}

nfg_load_modules xt_rangeset
nfg_stress_hung_task 20

# Baseline of the kmalloc caches with the sets and rules in place (the
# setup has already used every tool and module the stressors use) and the
# flood stopped; compared again in the same state after the run.
rs_stress_setup
base=$(nfg_slab_bytes)
nfg_log "setup done at ${SECONDS}s"

rs_stress_flood_start
nfg_stress_run "$secs"
rs_stress_flood_check
rs_stress_flood_stop
nfg_log "run done at ${SECONDS}s; lookups: $(rs_dut cat /proc/net/stat/nfguard_rangeset | tr '\n' ' ')"
# what the stressors created and destroyed is gone again
slab_check "after the run"
rs_stress_teardown
nfg_wait_until 30 live_zero || nfg_fail "after the run: $(cat $live) live objects left"
nfg_log "teardown done at ${SECONDS}s"

# rmmod refused while rules use the module, clean once they are gone
for c in $(seq "$cycles"); do
	nfg_assert_ok "cycle $c: set" eval 'nfguard set create u ipv4 && nfguard set add u 10.0.0.0/8'
	nfg_assert_ok "cycle $c: rules" eval 'iptables-legacy -w -A INPUT -m rangeset --match-set u src -j ACCEPT &&
		iptables-nft -w -A INPUT -m rangeset --match-set u src -j ACCEPT'
	nfg_assert_fail "cycle $c: rmmod with two rules" rmmod xt_rangeset
	nfg_assert_ok "cycle $c: delete legacy rule" iptables-legacy -w -D INPUT -m rangeset --match-set u src -j ACCEPT
	nfg_assert_fail "cycle $c: rmmod with an nft rule" rmmod xt_rangeset
	nfg_assert_ok "cycle $c: delete nft rule" iptables-nft -w -D INPUT -m rangeset --match-set u src -j ACCEPT
	# nf_tables releases the rule from a work item after the command returned
	nfg_wait_until 20 rmmod xt_rangeset || nfg_fail "cycle $c: rmmod refused after the rules were deleted"
	[ ! -d /sys/module/xt_rangeset ] || nfg_fail "cycle $c: xt_rangeset still loaded"
	nfg_load_modules xt_rangeset
	nfg_assert_eq 0 "$(cat $live)" "cycle $c: live objects after reload"
done
nfg_log "unload cycles done at ${SECONDS}s"
