#!/bin/bash
# Listing a 100k-range set in a loop never stalls packet lookups: while one
# process dumps the set again and again (each dump complete and sorted), a
# flood from random sources keeps being looked up and dropped by the router,
# and a legitimate client's pings all get through.
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules
nfg_topo_up
nfg_need hping3
rs() { nfg_router nfguard set "$@"; }

# 100k disjoint ranges of assorted prefix lengths inside 16.0.0.0/4; 10.0.1.2
# (the client) is not in it.
awk 'BEGIN { for (i = 0; i < 100000; i++) { a = 16 * 2^24 + i * 1024; l = 24 + i % 7;
	printf "%d.%d.%d.%d/%d\n", int(a / 2^24), int(a / 2^16) % 256, int(a / 256) % 256, a % 256, l } }' \
	>"$NFG_WORK/big"
t0=$(date +%s.%N)
rs create big ipv4 && rs add big -f "$NFG_WORK/big" || nfg_fail "load 100k ranges"
nfg_log "loaded 100000 ranges in $(echo "$(date +%s.%N) - $t0" | bc) s"
nfg_assert_eq 100000 "$(rs list | awk '$1 == "big" { print $3 }')" "ranges in the set"

nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -m rangeset --match-set big src -m comment --comment flood -j DROP ||
	nfg_fail "rule"
lookups() { rs list | awk '$1 == "big" { print $6 }'; }

# flood: SYNs from random sources (each one is a lookup in the set)
nfg_bg "$NFG_NS_C" hping3 --flood -q -S -p 80 --rand-source "$NFG_S4"
flood=$NFG_LAST_PID
nfg_wait_until 60 eval '[ "$(lookups)" -gt 0 ]' || nfg_fail "the flood never reached the set"
nfg_bg "$NFG_NS_C" ping -q -i 0.05 -c 200 "$NFG_S4"
pingpid=$NFG_LAST_PID
l0=$(lookups)
dumps=0
# Dump until the pings are done AND at least 2 dumps ran with 5000 lookups
# meanwhile, however fast or slow this machine dumps or floods.
while kill -0 $pingpid 2>/dev/null || [ $dumps -lt 2 ] || [ $(($(lookups) - l0)) -lt 5000 ]; do
	rs list big | sed -n '/^Members:/,$p' | sed 1d >"$NFG_WORK/dump"
	n=$(wc -l <"$NFG_WORK/dump")
	nfg_assert_eq 100000 "$n" "members in dump $dumps"
	sort -c -t. -k1,1n -k2,2n -k3,3n -k4,4n "$NFG_WORK/dump" 2>/dev/null ||
		nfg_fail "dump $dumps not in ascending order"
	dumps=$((dumps + 1))
done
l1=$(lookups)
kill $flood
wait $pingpid || nfg_fail "legitimate pings lost during dumps: $(cat "$NFG_WORK/bg.$pingpid.log")"
nfg_assert_ge "$dumps" 2 "complete dumps while flooding"
nfg_assert_ge $((l1 - l0)) 5000 "lookups done while dumping"
nfg_log "$dumps dumps of 100k ranges, $((l1 - l0)) lookups meanwhile, 200/200 pings"
