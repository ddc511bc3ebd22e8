#!/bin/bash
# Range set timeouts: a set's default timeout (IPv4) and an element's own
# (IPv6) expire on time, measured by polling `nfguard set test`, and the
# traffic verdict follows (ping dropped by the blocklist rule while the source
# is in the set, passing once it is gone); adding again refreshes; save ->
# restore --replace keeps the seconds left; ipset save lines with timeouts
# import with them; the expiry counter counts; sets with pending expiries
# leak nothing on netns teardown and rmmod.
#
# "On time": the kernel removes a range at most a quarter second (its tick)
# after its expiry. A poll that still finds the range proves it was there at
# that instant, so "present more than 1 s after the latest possible expiry"
# fails, and "gone before the earliest possible expiry" fails; neither bound
# depends on how slowly the polls run.
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules
nfg_topo_up
rs() { nfg_router nfguard set "$@"; }
ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
live=/sys/module/xt_rangeset/parameters/live_objects

# expect_expiry SET ELEM ADD_START_MS ADD_END_MS SECONDS WHAT: poll until ELEM
# has left SET and check the bounds above.
expect_expiry() {
	local set=$1 elem=$2 t_lo=$(($3 + $5 * 1000)) t_hi=$(($4 + $5 * 1000)) what=$6
	local seen=0 start end rc deadline=$(($(ms) + 60000))
	while :; do
		start=$(ms)
		rs test "$set" "$elem" >/dev/null
		rc=$?
		end=$(ms)
		[ $rc = 2 ] && break
		[ $rc = 0 ] || nfg_fail "$what: set test failed (rc $rc)"
		seen=$start
		[ "$end" -lt "$deadline" ] || nfg_fail "$what: still in the set after 60 s"
		nfg_sleep 0.05
	done
	[ "$seen" -gt 0 ] || nfg_fail "$what: already gone at the first poll (the test is too slow to measure it)"
	[ "$end" -ge "$t_lo" ] ||
		nfg_fail "$what: gone $((t_lo - end)) ms before its expiry"
	[ "$seen" -le $((t_hi + 1000)) ] ||
		nfg_fail "$what: still in the set $((seen - t_hi)) ms after its expiry"
	nfg_log "$what: present $((seen - t_hi)) ms after its latest expiry, gone $((end - t_lo)) ms after its earliest"
}

nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -m rangeset --match-set tb4 src -j DROP 2>/dev/null &&
	nfg_fail "rule on a missing set accepted"
rs create tb4 ipv4 timeout 4 || nfg_fail "create with a default timeout"
rs create tb6 ipv6 maxelem 100 || nfg_fail "create tb6"
nfg_assert_eq "Timeout: 4" "$(rs list tb4 | grep '^Timeout:')" "default timeout listed"
nfg_assert_eq "create tb4 ipv4 maxelem 1048576 timeout 4" "$(rs save tb4)" "default timeout saved"
nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -m rangeset --match-set tb4 src -j DROP &&
	nfg_ipt "$NFG_NS_R" nft 6 -A FORWARD -m rangeset --match-set tb6 src -j DROP ||
	nfg_fail "rules"
nfg_assert_fail "timeout beyond the maximum" rs add tb4 192.0.2.1 timeout 2147484
nfg_assert_fail "del takes no timeout" rs del tb4 192.0.2.1 timeout 5

# 1. expiry: IPv6 by the element's own timeout (3 s), IPv4 by the set's
# default (4 s, so it is still there when the IPv6 element has gone)
rs add tb4 203.0.113.0/24 timeout 0 || nfg_fail "add permanent v4"
t2=$(ms)
rs add tb6 $NFG_C6 timeout 3 || nfg_fail "add v6"
t3=$(ms)
t0=$(ms)
rs add tb4 $NFG_C4 198.51.100.0/24 || nfg_fail "add v4"
t1=$(ms)
# a blocked ping waits for its -W: keep these short, the clock runs
nfg_client ping -c 1 -W 0.5 $NFG_S4 >/dev/null && nfg_fail "v4: ping passed while the source is listed"
nfg_client ping -6 -c 1 -W 0.5 $NFG_S6 >/dev/null && nfg_fail "v6: ping passed while the source is listed"
expect_expiry tb6 $NFG_C6 $t2 $t3 3 "v6 element timeout 3"
nfg_client ping -6 -c 1 -W 2 $NFG_S6 >/dev/null || nfg_fail "v6: ping still dropped after expiry"
expect_expiry tb4 $NFG_C4 $t0 $t1 4 "v4 default timeout 4"
nfg_client ping -c 1 -W 2 $NFG_S4 >/dev/null || nfg_fail "v4: ping still dropped after expiry"
rs test tb4 203.0.113.9 >/dev/null || nfg_fail "permanent range expired"
out=$(rs list tb4)
nfg_assert_match '^203\.0\.113\.0/24$' "$out" "permanent element listed without timeout"
rs add tb4 198.51.100.7 timeout 30 || nfg_fail "add with timeout 30"
nfg_assert_match '^198\.51\.100\.7 timeout (29|30)$' "$(rs list tb4)" "element lists its seconds left"
nfg_assert_ge "$(rs list tb4 | sed -n 's/^Expiries: //p')" 1 "expiries counted"

# 2. adding again refreshes (a later expiry wins; an earlier one does not shorten)
t0=$(ms)
rs add tb4 $NFG_C4 timeout 2 || nfg_fail "add for refresh"
nfg_sleep 1
t1=$(ms)
rs add tb4 $NFG_C4 timeout 3 || nfg_fail "refresh"
t2=$(ms)
rs add tb4 $NFG_C4 timeout 1 || nfg_fail "shorter re-add"
# past the first expiry (t0 + 2 s): still listed, still dropped
nfg__wait_exact 10 eval '[ $(ms) -gt $((t0 + 2300)) ]'
rs test tb4 $NFG_C4 >/dev/null || nfg_fail "refresh: expired at its first expiry"
nfg_client ping -c 1 -W 0.5 $NFG_S4 >/dev/null && nfg_fail "refresh: ping passed before the refreshed expiry"
expect_expiry tb4 $NFG_C4 $t1 $t2 3 "refreshed to 3 s"
nfg_client ping -c 1 -W 2 $NFG_S4 >/dev/null || nfg_fail "refresh: ping still dropped after expiry"

# 3. save -> restore --replace keeps the seconds left (and the default)
# 6 s: a restore on a busy machine takes a while, the poll must still find it
rs add tb4 $NFG_C4 timeout 6 && rs add tb4 192.0.2.0/24 timeout 600 || nfg_fail "add for save"
nfg_sleep 1
rs save tb4 >"$NFG_WORK/save" || nfg_fail "save"
t0=$(ms)
rs restore --replace -f "$NFG_WORK/save" || nfg_fail "restore: $(cat "$NFG_WORK/save")"
t1=$(ms)
left=$(sed -n "s/^add tb4 $NFG_C4 timeout //p" "$NFG_WORK/save")
nfg_assert_match '^[3-6]$' "$left" "seconds left saved: $(cat "$NFG_WORK/save")"
nfg_assert_match '^add tb4 192\.0\.2\.0/24 timeout 59[89]$' "$(cat "$NFG_WORK/save")" "long timeout saved"
nfg_assert_match '^add tb4 203\.0\.113\.0/24$' "$(cat "$NFG_WORK/save")" "permanent saved bare"
nfg_assert_eq "$(head -1 "$NFG_WORK/save")" "$(rs save tb4 | head -1)" "default timeout restored"
nfg_client ping -c 1 -W 0.5 $NFG_S4 >/dev/null && nfg_fail "restore: ping passed while the source is listed"
expect_expiry tb4 $NFG_C4 $t0 $t1 "$left" "restored with $left s left"
nfg_client ping -c 1 -W 2 $NFG_S4 >/dev/null || nfg_fail "restore: ping still dropped after expiry"

# 4. ipset save lines keep their timeouts (set default and per element)
cat >"$NFG_WORK/ipset.save" <<'IPSET'
create ips hash:ip family inet hashsize 1024 maxelem 65536 timeout 600
add ips 10.9.9.9 timeout 4
add ips 10.9.9.10
add ips 10.9.9.11 timeout 0
IPSET
t0=$(ms)
rs restore -f "$NFG_WORK/ipset.save" || nfg_fail "ipset restore"
t1=$(ms)
out=$(rs list ips)
nfg_assert_eq "Timeout: 600" "$(grep '^Timeout:' <<<"$out")" "ipset default timeout"
nfg_assert_match '^10\.9\.9\.9 timeout [1-4]$' "$out" "ipset element timeout"
nfg_assert_match '^10\.9\.9\.10 timeout (599|600)$' "$out" "ipset element takes the default"
nfg_assert_match '^10\.9\.9\.11$' "$out" "ipset timeout 0 is permanent"
expect_expiry ips 10.9.9.9 $t0 $t1 4 "ipset element"

# 5. nothing leaks: pending expiries on netns teardown and rmmod
before=$(cat $live)
ip netns add nfg-tmo || nfg_fail "netns"
nfg_in nfg-tmo nfguard set create x ipv4 timeout 600 &&
	nfg_in nfg-tmo nfguard set add x 10.0.0.0/8 192.168.0.1 timeout 1 &&
	nfg_ipt nfg-tmo legacy 4 -A INPUT -m rangeset --match-set x src -j DROP ||
	nfg_fail "set in nfg-tmo"
ip netns del nfg-tmo
nfg_wait_until 30 eval '[ "$(cat '$live')" = '"$before"' ]' ||
	nfg_fail "$(cat $live) live objects after netns teardown, $before before"
nfg_topo_down
nfg_wait_until 30 eval '[ "$(cat '$live')" = 0 ]' ||
	nfg_fail "$(cat $live) live objects left after the topology's teardown"
nfguard set create left ipv6 timeout 900 && nfguard set add left 2001:db8::/32 ||
	nfg_fail "set in the initial netns"
nfg_unload_modules xt_rangeset
nfg_load_modules xt_rangeset
nfg_assert_eq 0 "$(cat $live)" "live objects after reload"
nfg_unload_modules xt_rangeset
