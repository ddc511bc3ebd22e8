#!/bin/bash
# nfguard rtcache stats|list|flush over genetlink nfg_rtcache: with one
# IPv4 and one IPv6 flow cached on the router, stats agrees with
# /proc/net/stat/nfguard_rtcache, list shows each route with its
# addresses, input interface and device, flush ipv6 drops only the IPv6
# route, flush drops the rest and releases the references; bad arguments
# are refused with a message and exit status 1.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_need nfguard
nfg_load_modules xt_RTCACHE
rtc_topo_up 5000
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE || nfg_fail "rule v4"
nfg_ipt "$NFG_NS_R" nft 6 -t mangle -A FORWARD -j RTCACHE || nfg_fail "rule v6"
rtc_sender_start a 4 5000
rtc_sender_start b 6 5000
# 5 packets each: learnt on the 2nd (learn_after 2), 3 hits each.
rtc_send a 5
rtc_send b 5
rtc_wait_count 4 1 5000 5
rtc_wait_count 6 1 5000 5

out=$(nfg_router nfguard rtcache stats) || nfg_fail "rtcache stats"
nfg_log "stats: $(echo "$out" | tr '\n' ' ')"
nfg_assert_match "^entries 2 max_entries 65536$" "$(echo "$out" | head -n 1)" "stats entries"
for c in hit miss learn invalid evict; do
	nfg_assert_eq "$(rtc_stat "$c")" "$(echo "$out" | sed -n "s/^$c //p")" "stats $c vs proc"
done
nfg_assert_eq 6 "$(echo "$out" | sed -n 's/^hit //p')" "hits"
nfg_assert_eq 2 "$(echo "$out" | sed -n 's/^learn //p')" "learnt"

out=$(nfg_router nfguard rtcache list) || nfg_fail "rtcache list"
nfg_log "list: $out"
nfg_assert_eq 2 "$(echo "$out" | wc -l)" "listed routes"
nfg_assert_match "^ipv4 original src $NFG_C4 dst $RTC_SVC4 iif eth0 oif eth1 mark 0x0 dscp 0x00 age [0-9]+ms idle [0-9]+ms$" \
	"$(echo "$out" | grep ^ipv4)" "ipv4 route"
nfg_assert_match "^ipv6 original src $NFG_C6 dst $RTC_SVC6 iif eth0 oif eth1 mark 0x0 " \
	"$(echo "$out" | grep ^ipv6)" "ipv6 route"

nfg_assert_eq "1 routes dropped" "$(nfg_router nfguard rtcache flush ipv6)" "flush ipv6"
nfg_assert_eq 1 "$(rtc_stat entries)" "the IPv4 route stays"
nfg_assert_match "^ipv4 " "$(nfg_router nfguard rtcache list)" "list after flush ipv6"
nfg_assert_eq "1 routes dropped" "$(nfg_router nfguard rtcache flush)" "flush"
nfg_assert_eq 0 "$(rtc_stat entries)" "entries after flush"
nfg_wait_until 30 rtc_live_is 0 || nfg_fail "references after flush: $(rtc_live)"
nfg_assert_eq "" "$(nfg_router nfguard rtcache list)" "empty list"
rtc_send a 2
rtc_wait_count 4 1 5000 7
nfg_assert_eq 1 "$(rtc_stat entries)" "learnt again after flush"

nfg_assert_fail "flush bogus family" nfg_router nfguard rtcache flush ipx
nfg_assert_match "nfguard: rtcache flush: unknown family" "$(cat "$NFG_WORK/assert.out")" "message"
nfg_assert_fail "unknown subcommand" nfg_router nfguard rtcache frob
nfg_assert_fail "extra argument" nfg_router nfguard rtcache stats x
