#!/bin/bash
# Stress SYNCOOKIE: every stressor of tests/stress/syncookie.sh at once (real
# IPv4 and IPv6 clients fetching through the protecting router; SYNCOOKIE
# rules added and deleted, proxy and local, legacy and nft; the allowlist
# edited, dumped, saved, restored and flushed, the secret rotated; netns
# created and destroyed with rules and allowlist entries) under spoofed SYN
# and bogus-ACK floods, IPv4 and IPv6, for the whole run. Then: no splat
# (harness), every stressor progressed and finished, every fetch was
# complete and intact, the floods were answered (cookie_sent, in place) and
# dropped (ack_invalid) and the clients proxied; after the teardown the
# live-object counter is back to its baseline. Then, in a loop, rmmod is
# refused while a legacy or nft rule uses the module and succeeds once they
# are gone. Duration: NFG_STRESS_SECS (tests/stress/knobs.sh).
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"
. "$NFG_TOP/tests/stress/lib.sh"
. "$NFG_TOP/tests/stress/syncookie.sh"

secs=$(nfg_knob NFG_STRESS_SECS 6)
cycles=$(nfg_knob NFG_STRESS_UNLOAD_CYCLES 1)
nfg_log "stress $secs s, $cycles unload cycles"

live() { cat $SS_P/live_objects; }
statf=$NFG_WORK/stat
stat() { nfg_kv "$statf" "$1"; }
snap() { ss_r stats >"$statf" || nfg_fail "stats"; }

nfg_load_modules xt_SYNCOOKIE
nfg_stress_hung_task 20
base=$(live)
ss_stress_setup
snap
c0=$(stat cookie_sent) i0=$(stat sent_inplace) a0=$(stat ack_invalid) p0=$(stat proxied)
nfg_log "setup done at ${SECONDS}s ($(live) live objects, baseline $base)"

ss_stress_flood_start
answered() { snap; [ "$(stat cookie_sent)" -gt "$c0" ] && [ "$(stat ack_invalid)" -gt "$a0" ]; }
nfg_wait_until 60 answered || nfg_fail "the floods are not answered: $(tr '\n' ' ' <"$statf")"
nfg_stress_run "$secs"
snap
nfg_log "after the run: $(tr '\n' ' ' <"$statf")"
nfg_assert_ge "$(stat sent_inplace)" $((i0 + 1)) "flood SYNs answered in place"
nfg_assert_ge "$(stat proxied)" $((p0 + 1)) "client connections proxied"
ss_stress_flood_stop

ss_stress_teardown
at_base() { [ "$(live)" -eq "$base" ]; }
nfg_wait_until 30 at_base || nfg_fail "after the teardown: $(live) live objects, baseline $base"
nfg_log "teardown done at ${SECONDS}s"

R=(-t raw -A PREROUTING -p tcp -j SYNCOOKIE)
for c in $(seq "$cycles"); do
	nfg_assert_ok "cycle $c: rules" eval 'iptables-legacy -w "${R[@]}" && ip6tables-nft -w "${R[@]}"'
	nfg_assert_fail "cycle $c: rmmod with two rules" rmmod xt_SYNCOOKIE
	R[2]=-D
	nfg_assert_ok "cycle $c: delete legacy rule" iptables-legacy -w "${R[@]}"
	nfg_assert_fail "cycle $c: rmmod with an nft rule" rmmod xt_SYNCOOKIE
	nfg_assert_ok "cycle $c: delete nft rule" ip6tables-nft -w "${R[@]}"
	R[2]=-A
	nfg_wait_until 20 rmmod xt_SYNCOOKIE || nfg_fail "cycle $c: rmmod refused after the rules were deleted"
	[ ! -d /sys/module/xt_SYNCOOKIE ] || nfg_fail "cycle $c: xt_SYNCOOKIE still loaded"
	nfg_load_modules xt_SYNCOOKIE
	nfg_assert_eq "$base" "$(live)" "cycle $c: live objects after reload (the baseline: init_net's state)"
done
nfg_log "unload cycles done at ${SECONDS}s"
