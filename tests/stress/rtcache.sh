# shellcheck shell=bash
# RTCACHE stressors (see tests/stress/lib.sh). Topology: tests/rtcache/lib.sh's
# (client -- router -- server over two links, the server's service addresses
# reachable over either). The client floods the service with UDP (trafgen:
# 200 IPv4 and 200 IPv6 flows, sent again and again, so routes are learnt
# and handed out) through the router's RTCACHE rules while the stressors
# flap the service routes between the links (ip route replace), take the
# second link down and up, add and delete RTCACHE rules (legacy and nft;
# IPv6 has no permanent rule, so its hooks come and go), dump, flush and
# abandon dumps of the cache, flush conntrack, switch the table bound
# between 16 and 65536, and create and delete netns with rules inside.

RS_P=/sys/module/xt_RTCACHE/parameters

rc_stress_setup() {
	local mac
	nfg_need trafgen nfguard nfg-nlfuzz conntrack iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft
	rtc_topo_up 5000 5001
	# link 2 keeps its IPv6 addresses while it is down
	nfg_router sysctl -qw net.ipv6.conf.eth2.keep_addr_on_down=1 >/dev/null || nfg_fail "keep_addr_on_down"
	nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -p udp -m comment --comment rtc4 -j RTCACHE ||
		nfg_fail "RTCACHE rule"
	mac=$(nfg_router cat /sys/class/net/eth0/address)
	[ -n "$mac" ] || nfg_fail "router mac"
	# IPv4 and IPv6 in turn; 200 source ports each (dinc), so the same
	# flows come back; UDP checksum computed (conntrack checks it).
	{
		echo "{ eth(da=$mac), ipv4(sa=$NFG_C4, da=$RTC_SVC4, ttl=64), udp(sp=dinc(20000, 20199), dp=5000), fill(0x41, 18) }"
		printf '{ eth(da=%s, type=0x86dd), 0x60, 0, 0, 0, 0, 26, 17, 64,\n' "$mac"
		printf '  0xfd, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,\n'
		printf '  0xfd, 0x00, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9,\n'
		printf '  0x14, dinc(0, 199), 0x13, 0x89, 0, 26, csumudp6(14, 54),\n'
		printf '  fill(0x42, 18) }\n'
	} >"$NFG_WORK/udp.cfg"
	old_max=$(cat $RS_P/max_entries)
	nfg_on_exit "echo $old_max >$RS_P/max_entries"
	RC_LEARN_AFTER=$(cat $RS_P/learn_after)
	nfg_on_exit "echo $RC_LEARN_AFTER >$RS_P/learn_after"
}

rc_stress_flood_start() {
	nfg_bg "$NFG_NS_C" trafgen -P 1 -q -o eth0 -c "$NFG_WORK/udp.cfg" -t 1ms
	RC_FLOOD_PID=$NFG_LAST_PID
}
rc_client_idle() { [ -z "$(ip netns pids "$NFG_NS_C" 2>/dev/null)" ]; }
rc_stress_flood_stop() {
	[ -n "${RC_FLOOD_PID:-}" ] || return 0
	ip netns pids "$NFG_NS_C" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	nfg_wait_until 30 rc_client_idle || nfg_fail "the flood generator does not stop"
	wait "$RC_FLOOD_PID" 2>/dev/null
	RC_FLOOD_PID=
	return 0
}

rc_stress_teardown() {
	rc_stress_flood_stop
	nfg_topo_down
	return 0
}

# the flood was forwarded (both families) and the cache was used
rc_stress_flood_check() {
	local f n
	for f in 4:5000 6:5001; do
		n=$(($(rtc_count ${f%:*} 1 ${f#*:}) + $(rtc_count ${f%:*} 2 ${f#*:})))
		[ "$n" -ge 1 ] || nfg_fail "no IPv${f%:*} flood packet reached the server"
	done
	nfg_log "rtcache: $(nfg_router nfguard rtcache stats | tr '\n' ' ')"
	[ "$(rtc_stat learn)" -ge 1 ] || nfg_fail "the flood's routes were never learnt"
}

# After the storm (routes still, flood stopped) the cache still works: a
# new flow learns its route on its 2nd packet and its 3rd takes it.
rc_cache_works() {
	local h
	h=$(rtc_stat hit)
	rtc_sender_start after 4 5000
	rtc_send after 3
	nfg_wait_until 30 rtc_stat_ge hit $((h + 1)) || nfg_fail "a flow's cached route is not handed out after the run"
}

# rc_learn_burst N: N one-packet IPv4 flows, each learnt (learn_after 1),
# then flushed: a leak per entry adds up to N entries.
rc_learn_burst() {
	local mac l
	mac=$(nfg_router cat /sys/class/net/eth0/address)
	# (from an address no socket uses: no existing conntrack shares a flow)
	echo "{ eth(da=$mac), ipv4(sa=10.0.1.99, da=$RTC_SVC4, ttl=64), udp(sp=dinc(40000, $((40000 + $1 - 1))), dp=5000), fill(0x43, 8) }" \
		>"$NFG_WORK/burst.cfg"
	l=$(rtc_stat learn)
	echo 1 >$RS_P/learn_after || nfg_fail "learn_after"
	nfg_client trafgen -P 1 -q -o eth0 -c "$NFG_WORK/burst.cfg" -n "$1" -t 500us >/dev/null || nfg_fail "burst"
	nfg_wait_until 60 rtc_stat_ge learn $((l + $1)) || nfg_fail "burst: $(($(rtc_stat learn) - l)) of $1 flows learnt"
	echo "$RC_LEARN_AFTER" >$RS_P/learn_after
}

# the service routes moved between the links (link 2 may be down: then only
# the move to link 1 must work)
rc_st_flap() {
	ip -n "$NFG_NS_R" -4 route replace $RTC_SVC4 via ${RTC_NH4[2]} 2>/dev/null
	ip -n "$NFG_NS_R" -6 route replace $RTC_SVC6 via ${RTC_NH6[2]} 2>/dev/null
	ip -n "$NFG_NS_R" -4 route replace $RTC_SVC4 via ${RTC_NH4[1]} &&
		ip -n "$NFG_NS_R" -6 route replace $RTC_SVC6 via ${RTC_NH6[1]}
}

# link 2 down and up (its routes and the cached routes through it go)
rc_st_link() {
	ip -n "$NFG_NS_R" link set eth2 down && ip -n "$NFG_NS_R" link set eth2 up
}

# RTCACHE rules added and deleted; the IPv6 ones are the family's only rules
rc_st_rules() {
	local v=legacy w=nft
	[ $((RANDOM % 2)) = 0 ] || { v=nft; w=legacy; }
	nfg_ipt "$NFG_NS_R" $v 6 -t mangle -A FORWARD -p udp -j RTCACHE &&
		nfg_ipt "$NFG_NS_R" $w 4 -A FORWARD -p udp -j RTCACHE &&
		nfg_ipt "$NFG_NS_R" $w 6 -A FORWARD -p udp -j RTCACHE || return 1
	nfg_router nfguard rtcache stats >/dev/null || return 1
	nfg_ipt "$NFG_NS_R" $v 6 -t mangle -D FORWARD -p udp -j RTCACHE &&
		nfg_ipt "$NFG_NS_R" $w 4 -D FORWARD -p udp -j RTCACHE &&
		nfg_ipt "$NFG_NS_R" $w 6 -D FORWARD -p udp -j RTCACHE
}

# the cache listed, flushed (one family, then all), dumps closed midway,
# conntrack flushed under it
rc_st_cache() {
	nfg_router nfguard rtcache list >/dev/null &&
		nfg_router nfguard rtcache flush ipv4 >/dev/null &&
		nfg_router nfg-nlfuzz -f nfg_rtcache -n 4 abandon >/dev/null &&
		nfg_router nfguard rtcache flush >/dev/null || return 1
	nfg_router conntrack -F >/dev/null 2>&1
	return 0
}

# the bound: tiny (learning refused, the GC evicts) and back
rc_st_bound() {
	echo 16 >$RS_P/max_entries && nfg_router nfguard rtcache stats >/dev/null &&
		echo 65536 >$RS_P/max_entries
}

# netns created and destroyed with RTCACHE rules inside
rc_st_netns() {
	local ns=nfg-sr-ns$BASHPID
	ip netns add $ns || return 1
	ip netns exec $ns sh -c '
		iptables-legacy -w -t mangle -A FORWARD -j RTCACHE &&
		ip6tables-nft -w -A FORWARD -j RTCACHE &&
		iptables-nft -w -A INPUT -j RTCACHE' || { ip netns del $ns; return 1; }
	ip netns del $ns || return 1
}

nfg_stressor flap rc_st_flap
nfg_stressor link rc_st_link
nfg_stressor rules rc_st_rules
nfg_stressor cache rc_st_cache
nfg_stressor bound rc_st_bound
nfg_stressor netns rc_st_netns
