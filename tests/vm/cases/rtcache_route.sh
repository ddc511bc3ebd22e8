#!/bin/bash
# nfg-case-timeout: 600
# RTCACHE on a router with two next hops to the server's service address,
# for IPv4 and IPv6, with iptables-legacy and iptables-nft: a long UDP flow
# through "-t mangle -A FORWARD -j RTCACHE" is learnt once, on its second
# packet (learn_after 2: the first one is routed and learns nothing), and
# then served from the cache (hit counter grows with every packet, learn
# does not);
# "ip route replace" mid-flow moves the very next packet to the other link
# (stale entry counted invalid, relearnt); taking a link down purges every
# entry of the netns (soon after the event); "conntrack -F" releases every entry (route
# references counted by the module: live_entries back to 0); deleting the
# last rule drops the family's entries. A TCP echo conversation is cached in
# both directions.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_need conntrack socat iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft
nfg_load_modules xt_RTCACHE
rtc_topo_up 5000

scenario() {
	local v=$1 fam=$2 id="s$1$2" hit learn base1 base2
	nfg_log "== ipv$fam, iptables-$v"
	rtc_route "$fam" 1
	nfg_ipt "$NFG_NS_R" "$v" "$fam" -t mangle -A FORWARD -j RTCACHE ||
		nfg_fail "add the RTCACHE rule"
	base1=$(rtc_count "$fam" 1 5000) base2=$(rtc_count "$fam" 2 5000)
	learn=$(rtc_stat learn) hit=$(rtc_stat hit)

	rtc_sender_start "$id" "$fam" 5000
	rtc_send "$id" 1
	rtc_wait_count "$fam" 1 5000 $((base1 + 1))
	nfg_assert_eq "$learn" "$(rtc_stat learn)" "nothing learnt from the first packet"
	nfg_assert_eq 0 "$(rtc_stat entries)" "entries after the first packet"
	rtc_send "$id" 1
	rtc_wait_count "$fam" 1 5000 $((base1 + 2))
	nfg_assert_eq $((learn + 1)) "$(rtc_stat learn)" "learnt on the second packet"
	nfg_assert_eq 1 "$(rtc_stat entries)" "entries after the second packet"
	nfg_assert_eq "$hit" "$(rtc_stat hit)" "no hit before the route is learnt"
	rtc_send "$id" 20
	rtc_wait_count "$fam" 1 5000 $((base1 + 22))
	nfg_assert_eq $((hit + 20)) "$(rtc_stat hit)" "every later packet hits the cache"
	nfg_assert_eq $((learn + 1)) "$(rtc_stat learn)" "nothing learnt again on hits"
	nfg_assert_eq "$base2" "$(rtc_count "$fam" 2 5000)" "nothing on link 2 yet"

	nfg_log "route replace mid-flow"
	local inval
	inval=$(rtc_stat invalid)
	rtc_route "$fam" 2
	rtc_send "$id" 1
	rtc_wait_count "$fam" 2 5000 $((base2 + 1))
	nfg_assert_eq $((base1 + 22)) "$(rtc_count "$fam" 1 5000)" "the next packet left link 1"
	nfg_assert_eq $((inval + 1)) "$(rtc_stat invalid)" "stale entry counted invalid"
	nfg_assert_eq $((learn + 2)) "$(rtc_stat learn)" "new route learnt"
	hit=$(rtc_stat hit)
	rtc_send "$id" 10
	rtc_wait_count "$fam" 2 5000 $((base2 + 11))
	nfg_assert_eq $((hit + 10)) "$(rtc_stat hit)" "the new route is served from the cache"
	nfg_assert_eq $((base1 + 22)) "$(rtc_count "$fam" 1 5000)" "link 1 stays quiet"

	nfg_log "link down purges"
	nfg_assert_eq 1 "$(rtc_live)" "one route held"
	nfg_router ip link set eth2 down || nfg_fail "link down"
	# (dropped by a work item the event queues: wait for it)
	nfg_wait_until 30 rtc_stat_is entries 0 || nfg_fail "entries after eth2 went down: $(rtc_stat entries)"
	# (freed after an RCU grace period: wait for it, however slow the kernel)
	nfg_wait_until 30 rtc_live_is 0 || nfg_fail "route references after eth2 went down: $(rtc_live)"
	nfg_router ip link set eth2 up || nfg_fail "link up"
	# IPv6 addresses go with "down" (keep_addr_on_down is 0).
	nfg_router ip -6 addr replace fd00:3::1/64 dev eth2 nodad || nfg_fail "eth2 IPv6 address"
	rtc_route "$fam" 1
	rtc_send "$id" 5
	rtc_wait_count "$fam" 1 5000 $((base1 + 27))
	nfg_assert_eq 1 "$(rtc_stat entries)" "relearnt over link 1"

	nfg_log "conntrack -F releases"
	nfg_router conntrack -F >/dev/null 2>&1 || nfg_fail "conntrack -F"
	nfg_wait_until 60 rtc_live_is 0 || nfg_fail "route references after conntrack -F: $(rtc_live)"
	nfg_assert_eq 0 "$(rtc_stat entries)" "entries after conntrack -F"
	rtc_send "$id" 3
	rtc_wait_count "$fam" 1 5000 $((base1 + 30))
	nfg_assert_eq 1 "$(rtc_stat entries)" "the new conntrack is learnt"

	nfg_log "rule removal releases"
	nfg_ipt "$NFG_NS_R" "$v" "$fam" -t mangle -D FORWARD -j RTCACHE || nfg_fail "delete the rule"
	nfg_wait_until 60 rtc_live_is 0 || nfg_fail "route references after rule removal: $(rtc_live)"
	nfg_assert_eq 0 "$(rtc_stat entries)" "entries after rule removal"
	hit=$(rtc_stat hit)
	rtc_send "$id" 3
	rtc_wait_count "$fam" 1 5000 $((base1 + 33))
	nfg_assert_eq "$hit" "$(rtc_stat hit)" "no hook without rules"
	nfg_router conntrack -F >/dev/null 2>&1
}

scenario legacy 4
scenario nft 6
scenario nft 4
scenario legacy 6

nfg_log "TCP echo: both directions cached"
nfg_echo_server "$NFG_NS_S" 5001
nfg_ipt "$NFG_NS_R" legacy 4 -t filter -A FORWARD -p tcp -j RTCACHE || nfg_fail "add the rule"
nfg_assert_ok "connect" nfg_conn_open c1 "$NFG_NS_C" "$RTC_SVC4" 5001
for i in 1 2 3 4 5; do nfg_conn_send c1 "hello $i" || nfg_fail "echo $i"; done
nfg_wait_until 30 rtc_stat_is entries 2 || nfg_fail "entries of one TCP connection: $(rtc_stat entries)"
hit=$(rtc_stat hit)
for i in 1 2 3; do nfg_conn_send c1 "again $i" || nfg_fail "echo $i"; done
# Each exchange: data and echo, both forwarded through the cache.
nfg_assert_ge "$(rtc_stat hit)" $((hit + 6)) "hits in both directions"
nfg_conn_close c1
nfg_ipt "$NFG_NS_R" legacy 4 -t filter -D FORWARD -p tcp -j RTCACHE
nfg_wait_until 60 rtc_live_is 0 || nfg_fail "route references at the end: $(rtc_live)"
