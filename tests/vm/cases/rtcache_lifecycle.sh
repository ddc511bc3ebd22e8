#!/bin/bash
# nfg-case-timeout: 400
# RTCACHE never leaves a route reference behind, and misuse is refused.
#  - Rules in other tables (raw, nat) or hooks (PREROUTING, OUTPUT) are
#    refused by iptables-legacy and iptables-nft, with the kernel's reason
#    in the log.
#  - Hooks exist only while a namespace has RTCACHE rules (the hit counter
#    stops when the rules go).
#  - With routes cached over both families: deleting an interface the
#    routes use completes (no "unregister_netdevice: waiting"), deleting the
#    router's netns with rules and cached routes releases every route
#    (live_entries back to 0) and its devices go away, and rmmod then
#    succeeds; it waits for the netns cleanup, so the kernel log proves no
#    device was left waiting for a reference.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_need iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft dmesg timeout
nfg_load_modules xt_RTCACHE
rtc_topo_up 5000

nfg_log "misuse refused"
for v in legacy nft; do
	for fam in 4 6; do
		nfg_assert_fail "raw table ($v $fam)" nfg_ipt "$NFG_NS_R" "$v" "$fam" -t raw -A PREROUTING -j RTCACHE
		nfg_assert_fail "mangle PREROUTING ($v $fam)" nfg_ipt "$NFG_NS_R" "$v" "$fam" -t mangle -A PREROUTING -j RTCACHE
		nfg_assert_fail "filter OUTPUT ($v $fam)" nfg_ipt "$NFG_NS_R" "$v" "$fam" -A OUTPUT -j RTCACHE
		nfg_assert_fail "nat INPUT ($v $fam)" nfg_ipt "$NFG_NS_R" "$v" "$fam" -t nat -A INPUT -j RTCACHE
	done
done
# Our checkentry's own message (nat INPUT passes the core's hook check).
nfg_assert_match "RTCACHE: only valid in the mangle or filter table, not nat" "$(dmesg | grep RTCACHE | tail -n 20)" "kernel log"
nfg_assert_eq 0 "$(rtc_live)" "nothing cached by refused rules"

nfg_log "hooks only with rules"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE || nfg_fail "rule"
rtc_sender_start a 4 5000
# Learnt on the 2nd packet (learn_after 2), then 4 hits.
rtc_send a 6
rtc_wait_count 4 1 5000 6
nfg_assert_eq 4 "$(rtc_stat hit)" "hits with the rule"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F FORWARD
# (entries are freed after an RCU grace period: wait for it, however slow)
nfg_wait_until 30 rtc_live_is 0 || nfg_fail "released with the last rule: $(rtc_live) left"
rtc_send a 5
rtc_wait_count 4 1 5000 11
nfg_assert_eq 4 "$(rtc_stat hit)" "no hits without rules"
nfg_assert_eq 0 "$(rtc_stat entries)" "nothing learnt without rules"

nfg_log "interface deletion with cached routes"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE || nfg_fail "rule v4"
nfg_ipt "$NFG_NS_R" nft 6 -t filter -A FORWARD -j RTCACHE || nfg_fail "rule v6"
rtc_route 4 2
rtc_route 6 2
rtc_sender_start b 6 5000
rtc_send a 3
rtc_send b 3
rtc_wait_count 4 2 5000 3
rtc_wait_count 6 2 5000 3
nfg_assert_eq 2 "$(rtc_live)" "one route per family cached over link 2"
nfg_assert_ok "delete eth2 with cached routes" timeout 60 ip -n "$NFG_NS_R" link del eth2
nfg_wait_until 30 rtc_live_is 0 || nfg_fail "routes over eth2 released: $(rtc_live) left"

nfg_log "netns deletion with rules and cached routes"
rtc_route 4 1
rtc_route 6 1
rtc_send a 3
rtc_send b 3
rtc_wait_count 4 1 5000 14
rtc_wait_count 6 1 5000 3
nfg_assert_eq 2 "$(rtc_live)" "routes cached over link 1"
dmesg_before=$(dmesg | grep -c "unregister_netdevice: waiting")
ip netns del "$NFG_NS_R" || nfg_fail "ip netns del"
nfg_wait_until 120 rtc_live_is 0 || nfg_fail "route references after netns deletion: $(rtc_live)"
gone() { ! ip -n "$NFG_NS_S" link show eth0 >/dev/null 2>&1; }
nfg_wait_until 120 gone || nfg_fail "the router's veth peers are still there"
# rmmod takes pernet_ops_rwsem for writing: it returns only after the
# router netns's cleanup (which waits for every device reference) ended.
nfg_assert_ok "rmmod xt_RTCACHE" timeout 120 rmmod xt_RTCACHE
nfg_assert_eq "$dmesg_before" "$(dmesg | grep -c "unregister_netdevice: waiting")" "devices waiting for references"
nfg_topo_down 2>/dev/null
true
