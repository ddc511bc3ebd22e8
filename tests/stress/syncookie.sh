# shellcheck shell=bash
# SYNCOOKIE stressors (see tests/stress/lib.sh). Topology: the harness's
# client - router - server. The router protects the server's port 8080 with
# the man page's router rules (proxy mode; iptables-legacy for IPv4,
# iptables-nft for IPv6) while the client's side floods it, for the whole
# run, with spoofed SYNs and bogus ACKs from random sources (nfg-tcpflood,
# IPv4 10.98.0.0/16 and IPv6 fd00:99::/64). At the same time: real clients
# fetch a page through the router over IPv4 and IPv6 (the proxied path and,
# once allowlisted, the allowlist path); more SYNCOOKIE rules (proxy and
# local, legacy and nft) are added and deleted on the router; its allowlist
# is edited, dumped, saved, restored and flushed and the secret rotated; and
# network namespaces with SYNCOOKIE rules and allowlist entries are created
# and deleted.

SS_PORT=8080
SS_P=/sys/module/xt_SYNCOOKIE/parameters

ss_r() { nfg_router nfguard syncookie "$@"; }

ss_stress_setup() {
	nfg_need nfg-tcpflood nfguard curl iptables-legacy ip6tables-nft iptables-nft ip6tables-legacy
	nfg_topo_up
	mkdir -p "$NFG_WORK/www" || nfg_fail "mkdir"
	head -c 20000 /dev/urandom >"$NFG_WORK/www/page" || nfg_fail "page"
	SS_SUM=$(nfg_sha256 "$NFG_WORK/www/page")
	nfg_http_server "$NFG_NS_S" $SS_PORT "$NFG_WORK/www"
	# the SYN-ACKs to the floods' random sources go towards the client
	nfg_router ip route add default via "$NFG_C4" || nfg_fail "router default route"
	nfg_router ip -6 route add fd00:99::/64 via "$NFG_C6" || nfg_fail "router flood route"
	nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING -i eth0 -p tcp -d "$NFG_S4" --dport $SS_PORT \
		-j SYNCOOKIE --mss 1460 --wscale 7 --sack-perm --timestamp &&
		nfg_ipt "$NFG_NS_R" nft 6 -t raw -A PREROUTING -i eth0 -p tcp -d "$NFG_S6" --dport $SS_PORT \
			-j SYNCOOKIE --mss 1440 --wscale 7 --sack-perm --timestamp ||
		nfg_fail "router rules"
}

SS_FLOODS=()
ss_stress_flood_start() {
	local a
	for a in "-i 2000 $NFG_S4 $SS_PORT S 10.98.0.0/16" "-i 2000 $NFG_S6 $SS_PORT S fd00:99::/64" \
		"-i 4000 $NFG_S4 $SS_PORT A 10.98.0.0/16" "-i 4000 $NFG_S6 $SS_PORT A fd00:99::/64"; do
		# shellcheck disable=SC2086 # the flood's arguments
		nfg_bg "$NFG_NS_C" nfg-tcpflood $a
		SS_FLOODS+=("$NFG_LAST_PID")
	done
}
ss_stress_flood_stop() {
	local p
	for p in "${SS_FLOODS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${SS_FLOODS[@]}"; do wait "$p" 2>/dev/null; done
	SS_FLOODS=()
	return 0
}

ss_stress_teardown() {
	ss_stress_flood_stop
	nfg_topo_down
}

# real clients through the router, IPv4 and IPv6: complete and intact
ss_st_clients() {
	local u f=$NFG_WORK/page.$BASHPID
	for u in "http://$NFG_S4:$SS_PORT/page" "http://[$NFG_S6]:$SS_PORT/page"; do
		rm -f "$f"
		nfg_client curl -sS -g -m 30 -o "$f" "$u" || { echo "fetch $u failed"; return 1; }
		[ "$(nfg_sha256 "$f")" = "$SS_SUM" ] || { echo "fetch $u: wrong bytes"; return 1; }
	done
}

# more rules, proxy and local, legacy and nft, added and deleted while packets match
ss_st_rules() {
	local v=legacy p=9090
	[ $((RANDOM % 2)) = 0 ] || v=nft
	nfg_ipt "$NFG_NS_R" $v 4 -t raw -I PREROUTING -p tcp --dport $p -j SYNCOOKIE &&
		nfg_ipt "$NFG_NS_R" $v 6 -t raw -I PREROUTING -p tcp --dport $p -j SYNCOOKIE --mode local --timestamp &&
		nfg_ipt "$NFG_NS_R" $v 4 -t raw -D PREROUTING -p tcp --dport $p -j SYNCOOKIE &&
		nfg_ipt "$NFG_NS_R" $v 6 -t raw -D PREROUTING -p tcp --dport $p -j SYNCOOKIE --mode local --timestamp
}

# the allowlist edited, dumped, saved and restored (the flush stressor may
# empty it at any point: a delete may find nothing); every 5th time the
# secret rotated (twice within one handshake would void its cookie, as
# documented, so not faster)
SS_ITER=0
ss_st_allowlist() {
	local i f=$NFG_WORK/al.$BASHPID
	for i in 1 2 3 4 5; do
		ss_r allowlist add "10.77.$((RANDOM % 256)).$i" timeout $((30 + RANDOM % 30)) || return 1
		ss_r allowlist add "fd00:77::$i" || return 1
	done
	ss_r allowlist del fd00:77::1 2>/dev/null
	ss_r allowlist list >/dev/null &&
		ss_r allowlist save >"$f" &&
		ss_r allowlist restore <"$f" &&
		ss_r stats >/dev/null || return 1
	SS_ITER=$((SS_ITER + 1))
	[ $((SS_ITER % 5)) != 1 ] || ss_r secret rotate
}

# the allowlist flushed under everything (the clients re-prove themselves)
ss_st_flush() {
	ss_r allowlist flush >/dev/null
}

# netns created and destroyed with SYNCOOKIE rules and allowlist entries
ss_st_netns() {
	local ns=nfg-ss-ns$BASHPID
	ip netns add $ns || return 1
	ip netns exec $ns sh -c '
		ip link set lo up &&
		iptables-legacy -w -t raw -A PREROUTING -p tcp -j SYNCOOKIE &&
		ip6tables-nft -w -t raw -A PREROUTING -p tcp --dport 80 -j SYNCOOKIE --mode local &&
		nfguard syncookie allowlist add 192.0.2.1 &&
		nfguard syncookie allowlist add 2001:db8::1' || { ip netns del $ns; return 1; }
	ip netns del $ns || return 1
}

nfg_stressor clients ss_st_clients
nfg_stressor rules ss_st_rules
nfg_stressor allowlist ss_st_allowlist
nfg_stressor flush ss_st_flush
nfg_stressor netns ss_st_netns
