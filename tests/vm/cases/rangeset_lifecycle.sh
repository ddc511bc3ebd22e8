#!/bin/bash
# Nothing leaks on netns teardown or rmmod: sets (with 10k ranges, swapped,
# referenced by legacy and nft rules, one of them mid-dump) in namespaces that
# are deleted with everything still in place; the module then counts zero
# live sets and arrays and unloads; /proc/net/stat/nfguard_rangeset follows
# the namespaces. Repeated, so a per-cycle leak adds up.
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules
live=/sys/module/xt_rangeset/parameters/live_objects
[ -r $live ] || nfg_fail "no $live"
nfg_assert_eq 0 "$(cat $live)" "live objects after load"
seq 0 9999 | awk '{ printf "10.%d.%d.0/24\n", int($1 / 256), $1 % 256 }' >"$NFG_WORK/r4"

for cycle in 1 2 3; do
	for ns in nfg-lc1 nfg-lc2; do
		ip netns add $ns || nfg_fail "netns $ns"
		ip -n $ns link set lo up
		nfg_in $ns nfguard set create a ipv4 &&
		nfg_in $ns nfguard set add a -f "$NFG_WORK/r4" &&
		nfg_in $ns nfguard set create b ipv4 &&
		nfg_in $ns nfguard set add b 127.0.0.2 &&
		nfg_in $ns nfguard set swap a b &&
		nfg_in $ns nfguard set create c ipv6 &&
		nfg_in $ns nfguard set add c ::1 ||
			nfg_fail "cycle $cycle: sets in $ns"
		nfg_ipt $ns legacy 4 -A INPUT -m rangeset --match-set a src -j ACCEPT &&
		nfg_ipt $ns nft 4 -A OUTPUT -m rangeset --match-set b dst -j ACCEPT &&
		nfg_ipt $ns legacy 6 -A INPUT -m rangeset --match-set c src -j ACCEPT ||
			nfg_fail "cycle $cycle: rules in $ns"
		nfg_in $ns ping -c 2 -i 0.2 -W 1 127.0.0.2 >/dev/null || nfg_fail "cycle $cycle: traffic in $ns"
		nfg_assert_match '^a ' "$(nfg_in $ns cat /proc/net/stat/nfguard_rangeset)" "proc stat of $ns"
	done
	nfg_assert_ge "$(cat $live)" 6 "cycle $cycle: live objects with 6 sets"
	# a dump in progress while its namespace goes away: the reader holds
	# the pipe (and so the dumping CLI) until the namespaces are deleted
	rm -f "$NFG_WORK/dump.started" "$NFG_WORK/dump.go"
	mkfifo "$NFG_WORK/dump.go"
	nfg_in nfg-lc1 sh -c 'nfguard set list b | { read -r l && echo "$l" >"$1.started"; read -r _ <"$1.go"; cat >/dev/null; }' \
		dumper "$NFG_WORK/dump" &
	dumper=$!
	nfg_wait_until 60 test -s "$NFG_WORK/dump.started" || nfg_fail "cycle $cycle: the dump did not start"
	ip netns del nfg-lc1
	ip netns del nfg-lc2
	echo go >"$NFG_WORK/dump.go"
	wait $dumper
	nfg_wait_until 30 eval '[ "$(cat '$live')" = 0 ]' ||
		nfg_fail "cycle $cycle: $(cat $live) live objects left after netns teardown"
done
nfg_unload_modules xt_rangeset
[ -d /sys/module/xt_rangeset ] && nfg_fail "xt_rangeset still loaded"
nfg_load_modules xt_rangeset
nfg_assert_eq 0 "$(cat $live)" "live objects after reload"
# rmmod with sets (but no rules) in the initial namespace frees them too
nfguard set create leftover ipv6 && nfguard set add leftover 2001:db8::/32 || nfg_fail "leftover set"
nfg_unload_modules xt_rangeset
