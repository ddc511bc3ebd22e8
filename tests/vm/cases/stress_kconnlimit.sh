#!/bin/bash
# Stress kconnlimit: every stressor of tests/stress/kconnlimit.sh at once
# (rules added and deleted with legacy and nft, v4 and v6; top/list dumps
# and dumps closed midway; real connections opened and refused; conntrack
# flushed under the tables with the GC at 10 ms and 500 ms; netns created
# and destroyed with rules and connections inside) under a flood of SYNs
# from random sources, each a new connection the rules remember. Then: no
# splat (harness), every stressor progressed and finished (a deadlock is
# reported with the blocked tasks' stacks), the flood and the connections
# were matched and remembered; once conntrack is flushed the rules remember
# nothing and the kmalloc caches are back to their baseline; after the
# teardown the live-object counter (tables, keys, connections) is 0. Then,
# in a loop, rmmod is refused while a legacy or nft rule uses the module and
# succeeds once they are gone. Duration: NFG_STRESS_SECS (tests/stress/knobs.sh).
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"
. "$NFG_TOP/tests/stress/lib.sh"
. "$NFG_TOP/tests/stress/kconnlimit.sh"

secs=$(nfg_knob NFG_STRESS_SECS 6)
cycles=$(nfg_knob NFG_STRESS_UNLOAD_CYCLES 1)
slab_bound=$(nfg_knob NFG_STRESS_SLAB_BOUND 262144)
live=$KS_P/live_objects
nfg_log "stress $secs s, $cycles unload cycles, slab bound $slab_bound bytes"

live_zero() { [ "$(cat $live)" = 0 ]; }
slab_check() { # WHEN
	nfg_wait_until 30 nfg_slab_settled "$base" "$slab_bound" ||
		nfg_fail "$1: kmalloc caches hold $(cat "$NFG_WORK/slab.delta") bytes more than before (bound $slab_bound)"
	nfg_log "$1: kmalloc delta $(cat "$NFG_WORK/slab.delta") bytes"
}

nfg_load_modules xt_kconnlimit
nfg_stress_hung_task 20
# Baseline of the kmalloc caches with the rules in place (the setup has
# used every tool the stressors use), compared again in the same state
# after the run, once conntrack is flushed.
ks_stress_setup
base=$(nfg_slab_bytes)
objs0=$(cat $live)
nfg_log "setup done at ${SECONDS}s ($objs0 live objects)"

ks_stress_flood_start
nfg_stress_run "$secs"
ks_stress_flood_check
ks_stress_flood_stop
nfg_log "run done at ${SECONDS}s; $(ks_dut nfguard kconnlimit list | tail -n 1)"
# every connection gone: the tables forget them and free their keys
ks_dut conntrack -F >/dev/null 2>&1
nfg_wait_until 60 ks_conns_zero || nfg_fail "after conntrack -F: $(ks_dut nfguard kconnlimit list | tail -n 1)"
nfg_wait_until 30 eval '[ "$(cat '$live')" = "'"$objs0"'" ]' ||
	nfg_fail "live objects: $objs0 before the run, $(cat $live) after (keys or tables left)"
slab_check "after the run"
ks_stress_teardown
nfg_wait_until 30 live_zero || nfg_fail "after the teardown: $(cat $live) live objects left"
nfg_log "teardown done at ${SECONDS}s"

R4=(-p tcp -m kconnlimit --kconnlimit-above 3 --kconnlimit-name u -j DROP)
for c in $(seq "$cycles"); do
	nfg_assert_ok "cycle $c: rules" eval 'iptables-legacy -w -A INPUT "${R4[@]}" && ip6tables-nft -w -A INPUT "${R4[@]}"'
	nfg_assert_fail "cycle $c: rmmod with two rules" rmmod xt_kconnlimit
	nfg_assert_ok "cycle $c: delete legacy rule" iptables-legacy -w -D INPUT "${R4[@]}"
	nfg_assert_fail "cycle $c: rmmod with an nft rule" rmmod xt_kconnlimit
	nfg_assert_ok "cycle $c: delete nft rule" ip6tables-nft -w -D INPUT "${R4[@]}"
	nfg_wait_until 20 rmmod xt_kconnlimit || nfg_fail "cycle $c: rmmod refused after the rules were deleted"
	[ ! -d /sys/module/xt_kconnlimit ] || nfg_fail "cycle $c: xt_kconnlimit still loaded"
	nfg_load_modules xt_kconnlimit
	nfg_assert_eq 0 "$(cat $live)" "cycle $c: live objects after reload"
done
nfg_log "unload cycles done at ${SECONDS}s"
