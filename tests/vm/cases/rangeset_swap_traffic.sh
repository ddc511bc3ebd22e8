#!/bin/bash
# `nfguard set swap` under traffic: a router allowlists the client with
# `! --match-set live src -j DROP` while `live` is swapped hundreds of times
# with a differently built set that also holds the client. No packet may get a
# wrong verdict (the DROP counter stays 0, no ping is lost, a download is
# intact); and the swaps really happened (the contents moved between names).
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules
nfg_topo_up
rs() { nfg_router nfguard set "$@"; }
dd if=/dev/urandom of="$NFG_WORK/blob" bs=1M count=8 status=none
nfg_http_server "$NFG_NS_S" 8080 "$NFG_WORK"
want=$(nfg_sha256 "$NFG_WORK/blob")

# ranges FIRST COUNT: COUNT disjoint /30 ranges from 172.16.0.0 + FIRST*8
ranges() { awk -v f="$1" -v n="$2" 'BEGIN { for (i = f; i < f + n; i++) { a = i * 8; printf "172.%d.%d.%d/30\n", 16 + int(a / 65536), int(a / 256) % 256, a % 256 } }'; }

for fam in 4 6; do
	if [ $fam = 4 ]; then
		f=ipv4 client=$NFG_C4 server=$NFG_S4 url="http://$NFG_S4:8080/blob"
		ranges 0 2000 >"$NFG_WORK/a"
		ranges 5000 500 >"$NFG_WORK/b"
	else
		f=ipv6 client=$NFG_C6 server=$NFG_S6 url="http://[$NFG_S6]:8080/blob"
		seq 1 2000 | awk '{ printf "2001:db8:%x::/48\n", $1 }' >"$NFG_WORK/a"
		seq 1 500 | awk '{ printf "2001:db9:%x::/64\n", $1 }' >"$NFG_WORK/b"
	fi
	echo "$client" >>"$NFG_WORK/a"
	if [ $fam = 4 ]; then echo 10.0.1.0-10.0.1.255; else echo fd00:1::-fd00:1::ffff; fi >>"$NFG_WORK/b"
	rs create live $f && rs add live -f "$NFG_WORK/a" || nfg_fail "v$fam: live"
	rs create next $f && rs add next -f "$NFG_WORK/b" || nfg_fail "v$fam: next"
	rs test next "$client" || nfg_fail "v$fam: client not in next: $(tail -1 "$NFG_WORK/b")"
	live_n=$(rs save live | grep -c '^add')
	next_n=$(rs save next | grep -c '^add')
	nfg_assert_ne "$live_n" "$next_n" "v$fam: the two sets differ"

	nfg_ipt "$NFG_NS_R" legacy $fam -A FORWARD -i eth0 -m rangeset ! --match-set live src \
		-m comment --comment wrong -j DROP || nfg_fail "v$fam: rule"

	# The pings go on until the download is done AND 50 swaps were made, so
	# every swap happens under traffic however fast this machine swaps.
	nfg_bg "$NFG_NS_C" ping -$fam -q -i 0.01 -c 1000000 "$server"
	pingpid=$NFG_LAST_PID
	nfg_bg "$NFG_NS_C" curl -sS -g -o "$NFG_WORK/got$fam" --limit-rate 1M "$url"
	curlpid=$NFG_LAST_PID
	swaps=0
	while kill -0 $curlpid 2>/dev/null || [ $swaps -lt 50 ]; do
		kill -0 $pingpid 2>/dev/null || nfg_fail "v$fam: ping stopped: $(cat "$NFG_WORK/bg.$pingpid.log")"
		rs swap live next || nfg_fail "v$fam: swap $swaps"
		swaps=$((swaps + 1))
	done
	kill -INT $pingpid
	wait $pingpid || nfg_fail "v$fam: ping got no replies: $(cat "$NFG_WORK/bg.$pingpid.log")"
	wait $curlpid || nfg_fail "v$fam: download failed: $(cat "$NFG_WORK/bg.$curlpid.log")"
	nfg_assert_eq "$want" "$(nfg_sha256 "$NFG_WORK/got$fam")" "v$fam: download intact"
	nfg_assert_eq 0 "$(nfg_ipt_pkts "$NFG_NS_R" legacy $fam wrong)" "v$fam: packets dropped by a wrong verdict"
	nfg_assert_ge $swaps 50 "v$fam: swaps done under traffic"
	# the contents follow the swaps: after an odd count, live holds next's ranges
	[ $((swaps % 2)) = 1 ] && { t=$live_n; live_n=$next_n; next_n=$t; }
	nfg_assert_eq "$live_n" "$(rs save live | grep -c '^add')" "v$fam: live holds the swapped contents"
	nfg_assert_eq "$next_n" "$(rs save next | grep -c '^add')" "v$fam: next holds the swapped contents"
	nfg_log "v$fam: $swaps swaps under traffic, 0 wrong verdicts"
	nfg_ipt "$NFG_NS_R" legacy $fam -F FORWARD
	rs destroy live && rs destroy next || nfg_fail "v$fam: destroy"
done
