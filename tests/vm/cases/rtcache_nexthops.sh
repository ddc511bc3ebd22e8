#!/bin/bash
# nfg-case-timeout: 300
# RTCACHE never hands one flow's next hop to another flow, and follows the
# next hop's carrier.
#  - ECMP and list receive: the router's service route has two next hops
#    (fib_multipath_hash_policy 1: flows with different ports may take
#    different ones); six UDP flows are opted in to RTCACHE, ten are not.
#    The router's ingress veth has GRO on (NAPI), and the client releases
#    rounds of all sixteen flows at once from a plug qdisc, so the router
#    receives them in lists (ip_list_rcv_finish / ip6_list_rcv_finish),
#    proven first by a single-path flow whose packets released at once
#    partly skip the route lookup (route hint; counted with the IPv4 fib
#    table lookup tracepoint). Every opted
#    packet of the burst is a cache hit, and every packet of every flow
#    that is not opted in leaves by the one next hop its own hash picked
#    (none follows a cached flow's route through the list's route hint).
#    IPv4 and IPv6.
#  - IPv6 carrier loss with ignore_routes_with_linkdown=1 and a second
#    route of higher metric: a flow cached over the link that lost its
#    carrier moves to the other link (its entry is purged, the lookup
#    skips the linkdown route) and is cached again there.
#  - As documented: a flow learnt with rp_filter 0 from a source the
#    router has no route back to stays cached after rp_filter becomes 1
#    (its hits go on), until "nfguard rtcache flush"; then rp_filter drops
#    it.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_need tc ethtool iptables-legacy ip6tables-legacy iptables-legacy-restore conntrack
nfg_load_modules xt_RTCACHE
modprobe sch_plug || nfg_fail "modprobe sch_plug"
rtc_topo_up
OPT=(6000 6001 6002 6003 6004 6005)
NON=(6010 6011 6012 6013 6014 6015 6016 6017 6018 6019)
# Each round: an opted flow, then two that are not, and so on.
ORDER=() j=0
for i in 0 1 2 3 4 5; do
	ORDER+=("${OPT[$i]}" "${NON[$j]}")
	j=$((j + 1))
	[ $i -ge 4 ] && continue
	ORDER+=("${NON[$j]}")
	j=$((j + 1))
done
[ ${#ORDER[@]} = 16 ] || nfg_fail "flow order: ${ORDER[*]}"
CTL=6100 CARRIER=6200 RPF=6300 ROUNDS=6
rtc_count_rules "${ORDER[@]}" "$CTL" "$CARRIER" "$RPF"
# veth hands a packet to its peer's NAPI (GRO) only when the sender has no
# TSO (or the receiver UDP GRO forwarding, which would merge the flows).
nfg_router ethtool -K eth0 gro on >/dev/null || nfg_fail "GRO (NAPI) on the router's ingress veth"
nfg_client ethtool -K eth0 tso off >/dev/null || nfg_fail "TSO off on the client"
nfg_router sysctl -qw net.ipv4.fib_multipath_hash_policy=1 net.ipv6.fib_multipath_hash_policy=1 ||
	nfg_fail "L4 multipath hash"

# plug / unplug: the client's egress holds packets, then releases them all
# from one qdisc run (softirq), so they reach the router's NAPI together.
plug() { nfg_client tc qdisc replace dev eth0 root plug || nfg_fail "plug qdisc"; }
unplug() { nfg_client tc qdisc change dev eth0 root plug release_indefinite || nfg_fail "release the plug"; }

# Route lookups made by the router for a destination, counted with the
# fib table lookup tracepoint (a packet given a route hint has none).
TR=/sys/kernel/tracing
[ -e $TR/events ] || mount -t tracefs nodev $TR || nfg_fail "mount tracefs"
trace_on() {
	echo >$TR/trace
	echo 1 >$TR/events/fib/fib_table_lookup/enable || nfg_fail "fib tracepoint"
}
# lookups ADDR: stop tracing, count the router's lookups for ADDR (the
# ones that resolve to its eth1; the server's own local lookups for ADDR
# do not; the ports are 0 there without policy rules).
lookups() {
	local line n=0
	echo 0 >$TR/events/fib/fib_table_lookup/enable
	while IFS= read -r line; do [[ $line == *"-> $1/"*"==> dev eth1 "* ]] && n=$((n + 1)); done <$TR/trace
	echo $n
}

# totals_are FAM N PORT...: every PORT counted N packets over both links.
totals_are() {
	local fam=$1 n=$2 p
	shift 2
	rtc_counts "$fam"
	for p; do [ $((${RTC_N[1:$p]:-0} + ${RTC_N[2:$p]:-0})) = "$n" ] || return 1; done
}
wait_totals() {
	nfg_wait_until 30 totals_are "$@" || {
		rtc_counts "$1"
		nfg_fail "ipv$1: expected $2 packets per flow, got: $(declare -p RTC_N)"
	}
}

# Lists: a single-path flow released at once mostly skips the lookup
# (IPv4: IPv6 packets take the same veth NAPI and GRO path to the list).
fam=4 dst=$NFG_S4
nfg_log "== list receive happens (ipv$fam, one single-path flow)"
rtc_msender_start "ctl$fam" "$dst" "$CTL"
rtc_send "ctl$fam" 1
wait_totals $fam 1 "$CTL"
plug
rtc_send "ctl$fam" 32
trace_on
unplug
wait_totals $fam 33 "$CTL"
n=$(lookups "$dst")
nfg_log "ipv$fam: 32 packets released at once, $n route lookups"
nfg_assert_ge "$n" 1 "ipv$fam: route lookups seen by the tracepoint"
nfg_assert_le "$n" 31 "ipv$fam: route lookups for 32 packets received in lists (route hints)"
nfg_client tc qdisc del dev eth0 root

scenario() {
	local fam=$1 svc hit own=() p n1 n2 links="" bad=""
	svc=$(rtc_svc "$fam")
	nfg_log "== ECMP, ipv$fam"
	nfg_router ip -"$fam" route replace "$svc" nexthop via "$(rtc_nh "$fam" 1)" \
		nexthop via "$(rtc_nh "$fam" 2)" || nfg_fail "multipath route"
	nfg_ipt "$NFG_NS_R" legacy "$fam" -t mangle -A FORWARD -p udp --dport 6000:6005 -j RTCACHE ||
		nfg_fail "RTCACHE rule"
	rtc_msender_start "m$fam" "$svc" "${ORDER[@]}"
	# Two packets each, one at a time (no lists): opted flows are learnt.
	rtc_send "m$fam" 2
	wait_totals "$fam" 2 "${ORDER[@]}"
	nfg_assert_eq 6 "$(rtc_stat entries)" "one entry per opted flow"
	rtc_counts "$fam"
	for p in "${ORDER[@]}"; do
		n1=${RTC_N[1:$p]:-0} n2=${RTC_N[2:$p]:-0}
		[ "$n1" = 0 ] || [ "$n2" = 0 ] || nfg_fail "ipv$fam flow $p split before any list: $n1/$n2"
		own[p]=1
		[ "$n2" = 0 ] || own[p]=2
	done
	for p in "${OPT[@]}"; do links+=" o${own[$p]}"; done
	for p in "${NON[@]}"; do links+=" n${own[$p]}"; done
	nfg_log "next hops per flow (o: opted, n: not):$links"
	# Precondition: some flow not opted in hashes to another next hop than
	# some opted flow (odds of the opposite: 2^-15 per boot).
	[[ $links == *o1* && $links == *n2* ]] || [[ $links == *o2* && $links == *n1* ]] ||
		nfg_fail "ipv$fam: all flows hashed to one next hop ($links); nothing to prove"

	hit=$(rtc_stat hit)
	plug
	rtc_send "m$fam" $ROUNDS
	unplug
	wait_totals "$fam" $((2 + ROUNDS)) "${ORDER[@]}"
	nfg_assert_eq $((hit + 6 * ROUNDS)) "$(rtc_stat hit)" "ipv$fam: every opted packet of the burst hit the cache"
	rtc_counts "$fam"
	for p in "${ORDER[@]}"; do
		n1=${RTC_N[1:$p]:-0} n2=${RTC_N[2:$p]:-0}
		[ "$n1" = 0 ] || [ "$n2" = 0 ] || bad+=" $p(${n1}/${n2})"
	done
	[ -z "$bad" ] || nfg_fail "ipv$fam: flows split over both next hops (link1/link2):$bad"

	nfg_client tc qdisc del dev eth0 root
	nfg_ipt "$NFG_NS_R" legacy "$fam" -t mangle -F
	nfg_router conntrack -F >/dev/null 2>&1
	nfg_wait_until 60 rtc_live_is 0 || nfg_fail "route references left: $(rtc_live)"
}
scenario 4
scenario 6

nfg_log "== IPv6 carrier loss"
svc=$RTC_SVC6
nfg_router sysctl -qw net.ipv6.conf.all.ignore_routes_with_linkdown=1 \
	net.ipv6.conf.eth2.ignore_routes_with_linkdown=1 || nfg_fail "ignore_routes_with_linkdown"
while nfg_router ip -6 route del "$svc" 2>/dev/null; do :; done
nfg_router ip -6 route add "$svc" via "$(rtc_nh 6 2)" metric 100 || nfg_fail "route via link 2"
nfg_router ip -6 route add "$svc" via "$(rtc_nh 6 1)" metric 200 || nfg_fail "route via link 1"
nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -A FORWARD -p udp --dport "$CARRIER" -j RTCACHE ||
	nfg_fail "RTCACHE rule"
rtc_msender_start c6 "$svc" "$CARRIER"
rtc_send c6 3
rtc_wait_count 6 2 "$CARRIER" 3
nfg_assert_eq 1 "$(rtc_stat entries)" "the flow is cached over link 2"
hit=$(rtc_stat hit)
nfg_server ip link set eth1 down || nfg_fail "peer down"
carrier_lost() { [ "$(nfg_router cat /sys/class/net/eth2/carrier)" = 0 ]; }
nfg_wait_until 30 carrier_lost || nfg_fail "router eth2 never lost its carrier"
# Packets sent before the kernel handled the carrier change may still be
# dropped on link 2: send one at a time until the flow shows up on link 1.
moved() { rtc_send c6 1; [ "$(rtc_count 6 1 "$CARRIER")" -gt 0 ]; }
nfg_wait_until 30 moved ||
	nfg_fail "the flow stays on link 2 after its carrier went (hits $(($(rtc_stat hit) - hit)), entries $(rtc_stat entries))"
# (then the count settles: packets of one path arrive in order)
n1=$(rtc_count 6 1 "$CARRIER")
rtc_send c6 5
count_ge() { [ "$(rtc_count 6 1 "$CARRIER")" -ge "$1" ]; }
nfg_wait_until 30 count_ge $((n1 + 5)) || nfg_fail "link 1 got $(rtc_count 6 1 "$CARRIER"), expected >= $((n1 + 5))"
n1=$(rtc_count 6 1 "$CARRIER")
hit=$(rtc_stat hit)
rtc_send c6 5
rtc_wait_count 6 1 "$CARRIER" $((n1 + 5))
nfg_assert_eq $((hit + 5)) "$(rtc_stat hit)" "cached again over link 1"
nfg_ipt "$NFG_NS_R" legacy 6 -t mangle -F
nfg_wait_until 60 rtc_live_is 0 || nfg_fail "route references at the end: $(rtc_live)"

nfg_log "== rp_filter changes do not flush (documented)"
# (the router's rp_filter is max(all, eth0): all is 0, eth0 is what changes)
# One path only: link 2 has had no carrier since the section above, and
# IPv4 (ignore_routes_with_linkdown 0) still hashes flows onto it, so the
# ECMP route from "scenario 4" would drop this flow about half the time.
rtc_route 4 1
nfg_router sysctl -qw net.ipv4.conf.eth0.rp_filter=0 || nfg_fail "rp_filter 0"
nfg_client ip addr add 10.0.7.2/32 dev eth0 || nfg_fail "spoofed source address"
nfg_client ip route add "$RTC_SVC4" via "$NFG_RC4" src 10.0.7.2 || nfg_fail "route from it"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -p udp --dport "$RPF" -j RTCACHE || nfg_fail "RTCACHE rule"
rtc_msender_start rpf "$RTC_SVC4" "$RPF"
rtc_send rpf 3
wait_totals 4 3 "$RPF"
nfg_router sysctl -qw net.ipv4.conf.eth0.rp_filter=1 || nfg_fail "rp_filter 1"
hit=$(rtc_stat hit)
rtc_send rpf 5
wait_totals 4 8 "$RPF"
nfg_assert_eq $((hit + 5)) "$(rtc_stat hit)" "the learnt flow stays exempt from rp_filter"
nfg_assert_ok "flush" nfg_router nfguard rtcache flush
rtc_send rpf 3
# A marker after the three: rp_filter 0 again lets the next one through;
# packets of one path arrive in order, so the three were dropped.
nfg_router sysctl -qw net.ipv4.conf.eth0.rp_filter=0 || nfg_fail "rp_filter 0"
rtc_send rpf 1
wait_totals 4 9 "$RPF"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F
nfg_wait_until 60 rtc_live_is 0 || nfg_fail "route references at the end: $(rtc_live)"
