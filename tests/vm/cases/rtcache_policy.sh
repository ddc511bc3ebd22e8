#!/bin/bash
# nfg-case-timeout: 400
# RTCACHE keeps policy routing correct. Router: "ip rule fwmark 1 table 100"
# with the service routed over link 2 in table 100 and over link 1 in main;
# mangle PREROUTING marks UDP port 5001; mangle FORWARD -j RTCACHE. With the
# cache on, the unmarked flow (5000) and the marked flow (5001) each take
# their own link, and keep doing so from the cache (hits); after swapping
# both routes mid-flow each flow moves to the other link with its very next
# packet; marking flow 5000 too (a mark change in PREROUTING mid-flow) moves
# it to table 100; a DSCP change mid-flow with a "tos" rule moves it again.
# IPv4 with iptables-nft, IPv6 with ip6tables-legacy.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_need nft iptables-nft ip6tables-legacy
nfg_load_modules xt_RTCACHE
rtc_topo_up 5000 5001

# expect FAM A1 A2 B1 B2: server counts for port 5000 on links 1/2, 5001 on 1/2.
expect() {
	rtc_wait_count "$1" 1 5000 "$2"
	rtc_wait_count "$1" 2 5000 "$3"
	rtc_wait_count "$1" 1 5001 "$4"
	rtc_wait_count "$1" 2 5001 "$5"
}

scenario() {
	local v=$1 fam=$2 hit svc
	svc=$(rtc_svc "$fam")
	nfg_log "== ipv$fam, iptables-$v"
	nfg_router ip -"$fam" rule add fwmark 1 table 100 || nfg_fail "ip rule"
	rtc_route "$fam" 1
	rtc_route "$fam" 2 table 100
	nfg_ipt "$NFG_NS_R" "$v" "$fam" -t mangle -A PREROUTING -p udp --dport 5001 -j MARK --set-mark 1 ||
		nfg_fail "mark rule"
	nfg_ipt "$NFG_NS_R" "$v" "$fam" -t mangle -A FORWARD -j RTCACHE || nfg_fail "RTCACHE rule"

	rtc_sender_start "a$fam" "$fam" 5000
	rtc_sender_start "b$fam" "$fam" 5001
	# Two packets each: learnt on the second (learn_after 2).
	rtc_send "a$fam" 2
	rtc_send "b$fam" 2
	expect "$fam" 2 0 0 2
	nfg_assert_eq 2 "$(rtc_stat entries)" "one entry per flow"
	hit=$(rtc_stat hit)
	rtc_send "a$fam" 10
	rtc_send "b$fam" 10
	expect "$fam" 12 0 0 12
	nfg_assert_eq $((hit + 20)) "$(rtc_stat hit)" "both flows served from the cache"

	nfg_log "swap the routes mid-flow"
	rtc_route "$fam" 2
	rtc_route "$fam" 1 table 100
	rtc_send "a$fam" 1
	rtc_send "b$fam" 1
	expect "$fam" 12 1 1 12
	hit=$(rtc_stat hit)
	rtc_send "a$fam" 10
	rtc_send "b$fam" 10
	expect "$fam" 12 11 11 12
	nfg_assert_eq $((hit + 20)) "$(rtc_stat hit)" "cached again after the change"

	nfg_log "mark flow 5000 too, mid-flow"
	nfg_ipt "$NFG_NS_R" "$v" "$fam" -t mangle -A PREROUTING -p udp --dport 5000 -j MARK --set-mark 1 ||
		nfg_fail "second mark rule"
	rtc_send "a$fam" 5
	expect "$fam" 17 11 11 12

	nfg_log "DSCP change mid-flow"
	nfg_router ip -"$fam" rule add pref 10 tos 0x10 table 101 || nfg_fail "tos rule"
	nfg_router ip -"$fam" route add "$svc" via "$(rtc_nh "$fam" 2)" table 101 || nfg_fail "table 101"
	rtc_send "a$fam" 3
	expect "$fam" 20 11 11 12
	# DSCP 4 (TOS 0x10) set in the router's mangle PREROUTING (nft: the
	# debug kernel's trimmed config has no xt_DSCP)
	local t=ip
	[ "$fam" = 6 ] && t=ip6
	nfg_router nft -f - <<-EOF || nfg_fail "DSCP rule"
		table $t nfg_dscp {
			chain pre {
				type filter hook prerouting priority mangle;
				udp dport 5000 $t dscp set 4
			}
		}
	EOF
	rtc_send "a$fam" 3
	expect "$fam" 20 14 11 12
	hit=$(rtc_stat hit)
	rtc_send "a$fam" 4
	expect "$fam" 20 18 11 12
	nfg_assert_eq $((hit + 4)) "$(rtc_stat hit)" "the DSCP-routed flow is cached"

	nfg_ipt "$NFG_NS_R" "$v" "$fam" -t mangle -F
	nfg_router nft delete table "$t" nfg_dscp || nfg_fail "delete the DSCP table"
	nfg_router ip -"$fam" rule del fwmark 1 table 100
	nfg_router ip -"$fam" rule del pref 10
	nfg_router ip -"$fam" route flush table 100
	nfg_router ip -"$fam" route flush table 101
	nfg_wait_until 60 rtc_live_is 0 || nfg_fail "route references after the rules went: $(rtc_live)"
}

scenario nft 4
scenario legacy 6
