#!/bin/bash
# nfg-case-timeout: 300
# RTCACHE learns only what it can serve.
#  - Keys that differ between PREROUTING and the target: a flow whose mark
#    alternates per packet (nft numgen in mangle PREROUTING) is learnt and
#    invalidated again and again without a single hit; re-learning such a
#    flow backs off exponentially (at most 8 learns for 66 packets), and
#    every packet still arrives. IPv6.
#  - VRF: the router's two interfaces are enslaved to a VRF; PREROUTING
#    runs once with the slave as input and once with the VRF device, the
#    target sees the VRF device. Nothing is learnt nor invalidated (no
#    churn with zero hits) and every packet arrives. IPv4.
#  - Loopback: a router's own traffic to its own address (input on lo,
#    which keeps the route it was sent with, so the PREROUTING hook can
#    never serve it) through an INPUT rule: ten flows per family leave
#    the cache empty. IPv4 and IPv6.
#  - cookie: the packet that learns an IPv6 route is held in NFQUEUE (a
#    real queue reader) between its route lookup and the RTCACHE target;
#    a more specific route via the other link is added meanwhile. The
#    route that packet got is stale from the start: once it is released,
#    the next packets must follow the new route (counted per link), not
#    be served the old one.
#  - netns, delete: flows of both families cached over link 2 while a
#    worse route via link 1 waits; the router's end of link 2 is moved to
#    another netns (netns) or deleted (delete). Routes of a device that is
#    unregistered end on blackhole_netdev: the next packets must take link
#    1, none may be served the old route (and be blackholed).
#  - devgen: any interface of the netns going down, away or losing its
#    carrier invalidates every cached route of the netns. Here a dummy that
#    no flow uses, without IPv6 (no address whose removal would bump the
#    fib6 serials), loses its carrier, which leaves IPv6 routes valid for
#    dst_check() (IPv4 flushes its route cache): both entries go (freed by
#    a work item, waited for), the flows are learnt again and served; the
#    module's route references follow.
# Each part runs in a subshell and every failing part is reported.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_need nft iptables-legacy ip6tables-legacy python3
nfg_load_modules xt_RTCACHE
rtc_topo_up 5000 5001 5002 5003 5004

# d NAME BASE: how much the counter NAME grew since BASE.
d() { echo $(($(rtc_stat "$1") - $2)); }

marks() {
	local learn hit
	nfg_log "== per-packet marks (ipv6)"
	nfg_router nft -f - <<-EOF || nfg_fail "numgen mark rule"
		table ip6 nfg_churn {
			chain pre {
				type filter hook prerouting priority mangle;
				udp dport 5001 meta mark set numgen inc mod 2
			}
		}
	EOF
	nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -A FORWARD -p udp --dport 5001 -j RTCACHE ||
		nfg_fail "RTCACHE rule"
	learn=$(rtc_stat learn) hit=$(rtc_stat hit)
	rtc_sender_start m 6 5001
	rtc_send m 2
	rtc_send m 64
	rtc_wait_count 6 1 5001 66
	nfg_log "learn +$(d learn "$learn") invalid +$(d invalid 0) hit +$(d hit "$hit")"
	nfg_assert_eq 0 "$(d hit "$hit")" "hits of a flow whose mark alternates"
	nfg_assert_le "$(d learn "$learn")" 8 "learns of a flow whose mark alternates (66 packets)"
	nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -F
	nfg_router nft delete table ip6 nfg_churn || nfg_fail "delete the mark table"
	nfg_wait_until 30 rtc_live_is 0 || nfg_fail "route references after the rule went: $(rtc_live)"
}

vrf() {
	local learn inval hit base
	nfg_log "== VRF (ipv4)"
	modprobe vrf || nfg_fail "modprobe vrf"
	nfg_router ip link add blue type vrf table 10 || nfg_fail "VRF device"
	nfg_router ip link set blue up || nfg_fail "VRF up"
	nfg_router ip link set eth0 master blue || nfg_fail "enslave eth0"
	nfg_router ip link set eth1 master blue || nfg_fail "enslave eth1"
	nfg_router ip route add "$RTC_SVC4/32" via "${RTC_NH4[1]}" vrf blue || nfg_fail "VRF route"
	nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE || nfg_fail "RTCACHE rule"
	learn=$(rtc_stat learn) inval=$(rtc_stat invalid) hit=$(rtc_stat hit)
	base=$(rtc_count 4 1 5000)
	rtc_sender_start v 4 5000
	rtc_send v 2
	rtc_send v 20
	rtc_wait_count 4 1 5000 $((base + 22))
	nfg_log "learn +$(d learn "$learn") invalid +$(d invalid "$inval") hit +$(d hit "$hit")"
	nfg_assert_eq 0 "$(d learn "$learn")" "learnt in a VRF"
	nfg_assert_eq 0 "$(d invalid "$inval")" "invalidated in a VRF"
	nfg_assert_eq 0 "$(rtc_stat entries)" "entries in a VRF"
	nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F
	nfg_router ip link set eth0 nomaster
	nfg_router ip link set eth1 nomaster
	nfg_router ip link del blue || nfg_fail "delete the VRF"
	rmmod vrf 2>/dev/null || :
}

loopback() {
	local fam
	nfg_log "== loopback flows (ipv4, ipv6)"
	for fam in 4 6; do
		nfg_ipt "$NFG_NS_R" legacy "$fam" -t mangle -A INPUT -i lo -p udp --dport 7000:7009 -j RTCACHE ||
			nfg_fail "RTCACHE rule (ipv$fam)"
		nfg_ipt "$NFG_NS_R" legacy "$fam" -A INPUT -i lo -p udp --dport 7000:7009 \
			-m comment --comment lo_drop -j DROP ||
			nfg_fail "DROP rule (ipv$fam)"
	done
	# shellcheck disable=SC2016 # expanded by the sender
	nfg_router bash -c 'for a in "$@"; do
		for ((p = 7000; p < 7010; p++)); do
			exec 3>"/dev/udp/$a/$p" || exit 1
			for i in 1 2 3 4; do printf x >&3 || exit 1; done
			exec 3>&-
		done
	done' x "$NFG_RS4" "$NFG_RS6" || nfg_fail "local senders"
	for fam in 4 6; do
		nfg_assert_eq 40 "$(nfg_ipt_pkts "$NFG_NS_R" legacy "$fam" lo_drop)" "loopback packets (ipv$fam)"
	done
	nfg_assert_eq 0 "$(rtc_stat entries)" "entries of 20 loopback flows"
	for fam in 4 6; do
		nfg_ipt "$NFG_NS_R" legacy "$fam" -t mangle -F
		nfg_ipt "$NFG_NS_R" legacy "$fam" -F INPUT
	done
}

# Packets the server counted on both links for FAM and PORT.
both_links() { echo $(($(rtc_count "$1" 1 "$2") + $(rtc_count "$1" 2 "$2"))); }
both_links_is() { [ "$(both_links "$1" "$2")" = "$3" ]; }
file_is() { [ "$(<"$1")" = "$2" ]; }

cookie() {
	local q=$NFG_WORK/nfq learn hit
	nfg_log "== IPv6 route added while the learning packet is queued"
	modprobe nfnetlink_queue || nfg_fail "modprobe nfnetlink_queue"
	mkdir -p "$q" || nfg_fail "mkdir $q"
	nfg_bg "$NFG_NS_R" python3 "$NFG_TOP/tests/rtcache/nfq_hold.py" 3 "$q"
	nfg_wait_until 60 test -s "$q/ready" || nfg_fail "nfqueue reader not bound"
	# The service is reached through a covering /64 via link 1.
	nfg_router ip -6 route del "$RTC_SVC6/128" || nfg_fail "delete the /128"
	nfg_router ip -6 route add fd00:9::/64 via "${RTC_NH6[1]}" || nfg_fail "the /64 via link 1"
	nfg_ipt "$NFG_NS_R" legacy 6 -A FORWARD -p udp --dport 5002 -j RTCACHE ||
		nfg_fail "RTCACHE rule"
	rtc_sender_start q 6 5002
	# The first packet (unconfirmed conntrack) learns nothing.
	rtc_send q 1
	rtc_wait_count 6 1 5002 1
	# The second one is routed via link 1, then held before the target.
	nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -A FORWARD -p udp --dport 5002 -j NFQUEUE --queue-num 3 ||
		nfg_fail "NFQUEUE rule"
	rtc_send q 1
	nfg_wait_until 60 file_is "$q/held" 1 || nfg_fail "the second packet was not queued"
	nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -F FORWARD
	nfg_router ip -6 route add "$RTC_SVC6/128" via "${RTC_NH6[2]}" || nfg_fail "the /128 via link 2"
	learn=$(rtc_stat learn) hit=$(rtc_stat hit)
	echo go >"$q/release" || nfg_fail "release"
	# It keeps the route it got before the change.
	rtc_wait_count 6 1 5002 2
	rtc_send q 10
	nfg_wait_until 30 both_links_is 6 5002 12 ||
		nfg_fail "packets after the release: $(both_links 6 5002) of 12 arrived"
	nfg_log "link 1 $(rtc_count 6 1 5002), link 2 $(rtc_count 6 2 5002);" \
		"learn +$(d learn "$learn") hit +$(d hit "$hit") entries $(rtc_stat entries)"
	nfg_assert_eq 10 "$(rtc_count 6 2 5002)" "packets after the release that took the new route (link 2)"
	nfg_assert_eq 2 "$(rtc_count 6 1 5002)" "packets on the old route (link 1)"
	nfg_ipt "$NFG_NS_R" legacy 6 -F FORWARD
	nfg_router ip -6 route del "$RTC_SVC6/128"
	nfg_router ip -6 route del fd00:9::/64
	nfg_router ip -6 route add "$RTC_SVC6/128" via "${RTC_NH6[1]}" || nfg_fail "restore the /128"
	nfg_wait_until 30 rtc_live_is 0 || nfg_fail "route references after the rule went: $(rtc_live)"
}

# gone netns|delete: link 2's router end goes while routes over it are cached.
gone() {
	local how=$1 fam base1 base2 learn hit
	nfg_log "== link 2 goes ($how) with cached routes (ipv4, ipv6)"
	for fam in 4 6; do
		nfg_router ip -"$fam" route del "$(rtc_svc "$fam")"
		nfg_router ip -"$fam" route add "$(rtc_svc "$fam")" via "$(rtc_nh "$fam" 2)" metric 10 ||
			nfg_fail "route via link 2 (ipv$fam)"
		nfg_router ip -"$fam" route add "$(rtc_svc "$fam")" via "$(rtc_nh "$fam" 1)" metric 20 ||
			nfg_fail "route via link 1 (ipv$fam)"
		nfg_ipt "$NFG_NS_R" legacy "$fam" -t mangle -A FORWARD -p udp --dport 5003 -j RTCACHE ||
			nfg_fail "RTCACHE rule (ipv$fam)"
		base2=$(rtc_count "$fam" 2 5003)
		rtc_sender_start "$how$fam" "$fam" 5003
		rtc_send "$how$fam" 5
		rtc_wait_count "$fam" 2 5003 $((base2 + 5))
	done
	nfg_assert_eq 2 "$(rtc_stat entries)" "entries over link 2"
	if [ "$how" = netns ]; then
		ip netns add rtc-away || nfg_fail "netns rtc-away"
		nfg_router ip link set eth2 netns rtc-away || nfg_fail "move eth2 away"
	else
		nfg_router ip link del eth2 || nfg_fail "delete eth2"
	fi
	learn=$(rtc_stat learn) hit=$(rtc_stat hit)
	for fam in 4 6; do
		base1=$(rtc_count "$fam" 1 5003) base2=$(rtc_count "$fam" 2 5003)
		rtc_send "$how$fam" 10
		nfg_wait_until 30 rtc_count_is "$fam" 1 5003 $((base1 + 10)) ||
			nfg_fail "ipv$fam after eth2 went ($how): link 1 got $(($(rtc_count "$fam" 1 5003) - base1)) of 10, link 2 $(($(rtc_count "$fam" 2 5003) - base2))"
	done
	nfg_log "learn +$(d learn "$learn") hit +$(d hit "$hit") entries $(rtc_stat entries)"
	nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F FORWARD
	nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -F FORWARD
	if [ "$how" = netns ]; then
		ip -n rtc-away link set eth2 netns "$NFG_NS_R" || nfg_fail "move eth2 back"
		ip netns del rtc-away
	else
		ip link add eth2 netns "$NFG_NS_R" type veth peer name eth1 netns "$NFG_NS_S" ||
			nfg_fail "link 2 again"
	fi
	rtc_link2_up
	for fam in 4 6; do
		nfg_router ip -"$fam" route flush "$(rtc_svc "$fam")"
		rtc_route "$fam" 1
	done
	nfg_wait_until 30 rtc_live_is 0 || nfg_fail "route references after the rules went: $(rtc_live)"
}
devgen() {
	local fam learn hit inval
	nfg_log "== an unrelated interface goes: the netns's cache is invalidated"
	modprobe dummy || nfg_fail "modprobe dummy"
	for fam in 4 6; do
		nfg_ipt "$NFG_NS_R" legacy "$fam" -t mangle -A FORWARD -p udp --dport 5004 -j RTCACHE ||
			nfg_fail "RTCACHE rule (ipv$fam)"
		rtc_sender_start "g$fam" "$fam" 5004
		rtc_send "g$fam" 3
		rtc_wait_count "$fam" 1 5004 3
	done
	nfg_assert_eq 2 "$(rtc_stat entries)" "entries of the two flows"
	nfg_router ip link add rtcdummy type dummy || nfg_fail "dummy device"
	nfg_router sysctl -qw net.ipv6.conf.rtcdummy.disable_ipv6=1 || nfg_fail "no IPv6 on the dummy"
	nfg_router ip link set rtcdummy up || nfg_fail "dummy up"
	nfg_assert_eq 2 "$(rtc_stat entries)" "entries after an interface came up"
	learn=$(rtc_stat learn) hit=$(rtc_stat hit) inval=$(rtc_stat invalid)
	nfg_router ip link set rtcdummy carrier off || nfg_fail "dummy carrier off"
	nfg_wait_until 30 rtc_stat_is entries 0 || nfg_fail "entries after the dummy lost its carrier: $(rtc_stat entries)"
	nfg_wait_until 30 rtc_live_is 0 || nfg_fail "route references after the dummy lost its carrier: $(rtc_live)"
	for fam in 4 6; do
		rtc_send "g$fam" 5
		rtc_wait_count "$fam" 1 5004 8
	done
	nfg_log "learn +$(d learn "$learn") hit +$(d hit "$hit") invalid +$(d invalid "$inval")"
	nfg_assert_eq 2 "$(d learn "$learn")" "flows learnt again"
	nfg_assert_eq 8 "$(d hit "$hit")" "hits after the flows were learnt again"
	nfg_assert_eq 2 "$(rtc_stat entries)" "entries again"
	nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F FORWARD
	nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -F FORWARD
	nfg_router ip link del rtcdummy || nfg_fail "delete the dummy"
	nfg_wait_until 30 rtc_live_is 0 || nfg_fail "route references after the rules went: $(rtc_live)"
	rmmod dummy 2>/dev/null || :
}
netns() { gone netns; }
delete() { gone delete; }

failed=""
# vrf last: enslaving the router's links drops their routes and IPv6 addresses.
for part in marks loopback cookie netns delete devgen vrf; do
	( "$part" ) || failed+=" $part"
done
[ -z "$failed" ] || nfg_fail "failed parts:$failed"
nfg_wait_until 30 rtc_live_is 0 || nfg_fail "route references at the end: $(rtc_live)"
