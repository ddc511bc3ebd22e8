#!/bin/bash
# Stress RTCACHE: every stressor of tests/stress/rtcache.sh at once (service
# routes flapping between two links, the second link going down and up,
# RTCACHE rules added and deleted with legacy and nft (IPv6 hooks registered
# and unregistered), the cache dumped, flushed and its dumps closed midway,
# conntrack flushed, the table bound switched between 16 and 65536, netns
# with rules created and destroyed) under forwarded UDP traffic of 400 flows
# that keep coming back. Then: no splat (harness), every stressor
# progressed and finished (a deadlock is reported with the blocked tasks'
# stacks), the traffic was forwarded and its routes learnt; afterwards a new
# flow's route is learnt and handed out; 4000 more routes are learnt; once
# the cache is flushed no route reference is held and the kmalloc caches are
# back to their baseline; after the teardown the module holds no
# route at all. Then, in a loop, rmmod is refused while a legacy or nft rule
# uses the module and succeeds once they are gone.
# Duration: NFG_STRESS_SECS (tests/stress/knobs.sh).
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"
. "$NFG_TOP/tests/stress/lib.sh"
. "$NFG_TOP/tests/rtcache/lib.sh"
. "$NFG_TOP/tests/stress/rtcache.sh"

secs=$(nfg_knob NFG_STRESS_SECS 6)
cycles=$(nfg_knob NFG_STRESS_UNLOAD_CYCLES 1)
slab_bound=$(nfg_knob NFG_STRESS_SLAB_BOUND 262144)
nfg_log "stress $secs s, $cycles unload cycles, slab bound $slab_bound bytes"

slab_check() { # WHEN
	nfg_wait_until 30 nfg_slab_settled "$base" "$slab_bound" ||
		nfg_fail "$1: kmalloc caches hold $(cat "$NFG_WORK/slab.delta") bytes more than before (bound $slab_bound)"
	nfg_log "$1: kmalloc delta $(cat "$NFG_WORK/slab.delta") bytes"
}
flushed() { nfg_router nfguard rtcache flush >/dev/null && rtc_live_is 0; }

nfg_load_modules xt_RTCACHE
nfg_stress_hung_task 20
# Baseline of the kmalloc caches with the rule in place and nothing cached
# (the setup has used every tool the stressors use), compared again in the
# same state after the run, once the cache is flushed.
rc_stress_setup
base=$(nfg_slab_bytes)
nfg_log "setup done at ${SECONDS}s"

rc_stress_flood_start
nfg_stress_run "$secs"
rc_stress_flood_stop
rc_stress_flood_check
nfg_log "run done at ${SECONDS}s"
# the stressors left the routes and link 2 as they found them
nfg_router ip link set eth2 up
rtc_route 4 1
rtc_route 6 1
rc_cache_works
# 4000 routes learnt and flushed (a per-entry leak: 4000 x 192+ bytes)
rc_learn_burst 4000
nfg_router conntrack -F >/dev/null 2>&1
nfg_wait_until 30 flushed || nfg_fail "after the run: $(rtc_live) route references held after a flush"
slab_check "after the run"
rc_stress_teardown
nfg_wait_until 30 rtc_live_is 0 || nfg_fail "after the teardown: $(rtc_live) route references held"
nfg_log "teardown done at ${SECONDS}s"

for c in $(seq "$cycles"); do
	nfg_assert_ok "cycle $c: rules" eval 'iptables-legacy -w -t mangle -A FORWARD -j RTCACHE &&
		ip6tables-nft -w -A FORWARD -j RTCACHE'
	nfg_assert_fail "cycle $c: rmmod with two rules" rmmod xt_RTCACHE
	nfg_assert_ok "cycle $c: delete legacy rule" iptables-legacy -w -t mangle -D FORWARD -j RTCACHE
	nfg_assert_fail "cycle $c: rmmod with an nft rule" rmmod xt_RTCACHE
	nfg_assert_ok "cycle $c: delete nft rule" ip6tables-nft -w -D FORWARD -j RTCACHE
	nfg_wait_until 20 rmmod xt_RTCACHE || nfg_fail "cycle $c: rmmod refused after the rules were deleted"
	[ ! -d /sys/module/xt_RTCACHE ] || nfg_fail "cycle $c: xt_RTCACHE still loaded"
	nfg_load_modules xt_RTCACHE
	nfg_assert_eq 0 "$(rtc_live)" "cycle $c: route references after reload"
done
nfg_log "unload cycles done at ${SECONDS}s"
