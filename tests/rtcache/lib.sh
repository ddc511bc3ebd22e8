# shellcheck shell=bash
# Helpers for tests/vm/cases/rtcache_*.sh (source after tests/vm/lib.sh).
#
# Topology: nfg_topo_up plus a second router--server link, so the server's
# service addresses ($RTC_SVC4, $RTC_SVC6, on its loopback) are reachable
# over two next hops:
#
#   router eth1 10.0.2.1 / fd00:2::1 ---- server eth0 10.0.2.2 / fd00:2::2  (link 1)
#   router eth2 10.0.3.1 / fd00:3::1 ---- server eth1 10.0.3.2 / fd00:3::2  (link 2)
#
# The server counts what arrives on each link per UDP port (iptables-legacy
# rules tagged via1_PORT / via2_PORT, then DROP: no replies, no ICMP).
# Senders are bash processes in the client netns holding one connected UDP
# socket each (one conntrack), sending N packets on request.

RTC_SVC4=10.9.9.9 RTC_SVC6=fd00:9::9
RTC_NH4=(x 10.0.2.2 10.0.3.2) RTC_NH6=(x fd00:2::2 fd00:3::2)
RTC_PROC=/proc/net/stat/nfguard_rtcache
RTC_LIVE=/sys/module/xt_RTCACHE/parameters/live_entries
declare -A RTC_CMD_FD=() RTC_ACK_FD=()

# rtc_topo_up PORT...: the topology above, counting rules for the PORTs.
rtc_topo_up() {
	local p
	nfg_topo_up
	ip link add eth2 netns "$NFG_NS_R" type veth peer name eth1 netns "$NFG_NS_S" ||
		nfg_fail "topology: second link"
	rtc_link2_up
	ip -n "$NFG_NS_R" -batch - <<-EOF || nfg_fail "topology: router routes"
		route add $RTC_SVC4/32 via ${RTC_NH4[1]}
		route add $RTC_SVC6/128 via ${RTC_NH6[1]}
	EOF
	ip -n "$NFG_NS_S" -batch - <<-EOF || nfg_fail "topology: server addresses"
		addr add $RTC_SVC4/32 dev lo
		addr add $RTC_SVC6/128 dev lo
	EOF
	nfg_router sysctl -qw net.ipv4.conf.all.rp_filter=0 >/dev/null
	nfg_server sysctl -qw net.ipv4.conf.all.rp_filter=0 >/dev/null
	for p; do
		nfg_ipt "$NFG_NS_S" legacy 4 -A INPUT -i eth0 -p udp --dport "$p" -m comment --comment "via1_$p" -j DROP
		nfg_ipt "$NFG_NS_S" legacy 4 -A INPUT -i eth1 -p udp --dport "$p" -m comment --comment "via2_$p" -j DROP
		nfg_ipt "$NFG_NS_S" legacy 6 -A INPUT -i eth0 -p udp --dport "$p" -m comment --comment "via1_$p" -j DROP
		nfg_ipt "$NFG_NS_S" legacy 6 -A INPUT -i eth1 -p udp --dport "$p" -m comment --comment "via2_$p" -j DROP
	done
}

# rtc_link2_up: addresses on both ends of link 2 (router eth2, server eth1),
# both up; for a link made again (deleted, or moved away and back).
rtc_link2_up() {
	ip -n "$NFG_NS_R" -batch - <<-EOF || nfg_fail "topology: router link 2"
		addr add 10.0.3.1/24 dev eth2
		addr add fd00:3::1/64 dev eth2 nodad
		link set eth2 up
	EOF
	ip -n "$NFG_NS_S" -batch - <<-EOF || nfg_fail "topology: server link 2"
		addr replace 10.0.3.2/24 dev eth1
		addr replace fd00:3::2/64 dev eth1 nodad
		link set eth1 up
	EOF
}

# rtc_svc FAM / rtc_nh FAM LINK: service address / next hop over LINK (1|2).
rtc_svc() { if [ "$1" = 6 ]; then echo "$RTC_SVC6"; else echo "$RTC_SVC4"; fi; }
rtc_nh() { if [ "$1" = 6 ]; then echo "${RTC_NH6[$2]}"; else echo "${RTC_NH4[$2]}"; fi; }

# rtc_route FAM LINK [ip route args...]: route the service via LINK (replace).
rtc_route() {
	local fam=$1 link=$2
	shift 2
	ip -n "$NFG_NS_R" -"$fam" route replace "$(rtc_svc "$fam")" via "$(rtc_nh "$fam" "$link")" "$@" ||
		nfg_fail "route replace $(rtc_svc "$fam") via link $link $*"
}

# rtc_count FAM LINK PORT: packets the server got on LINK for PORT.
rtc_count() {
	local n
	n=$(nfg_ipt_pkts "$NFG_NS_S" legacy "$1" "via$2_$3")
	echo "${n:-0}"
}

# rtc_wait_count FAM LINK PORT N: wait until the server counted N there.
rtc_count_is() { [ "$(rtc_count "$1" "$2" "$3")" = "$4" ]; }
rtc_wait_count() {
	nfg_wait_until 30 rtc_count_is "$@" ||
		nfg_fail "server link $2 port $3 (ipv$1): expected $4 packets, got $(rtc_count "$1" "$2" "$3")"
}

# rtc_sender_start ID FAM PORT: a sender of one UDP flow to the service.
rtc_sender_start() {
	local id=$1 fam=$2 port=$3 cmd ack fd afd
	cmd=$NFG_WORK/rtc.$id.cmd ack=$NFG_WORK/rtc.$id.ack
	mkfifo "$cmd" "$ack" || nfg_fail "mkfifo"
	exec {fd}<>"$cmd" {afd}<>"$ack"
	RTC_CMD_FD[$id]=$fd RTC_ACK_FD[$id]=$afd
	# shellcheck disable=SC2016 # expanded by the sender
	nfg_bg "$NFG_NS_C" bash -c 'exec 3>"/dev/udp/$0/$1" || exit 1
		exec 4<>"$2" 5<>"$3"
		while read -r n <&4; do
			for ((i = 0; i < n; i++)); do printf x >&3 || exit 1; done
			echo ok >&5
		done' "$(rtc_svc "$fam")" "$port" "$cmd" "$ack"
}

# rtc_send ID N: the sender sends N packets (same socket, same conntrack).
rtc_send() {
	local line
	echo "$2" >&"${RTC_CMD_FD[$1]}"
	read -r -t 60 line <&"${RTC_ACK_FD[$1]}" || nfg_fail "sender $1 did not send $2 packets"
	[ "$line" = ok ] || nfg_fail "sender $1: '$line'"
}

# rtc_stat NAME: a router counter (hit miss learn invalid evict: totals) or
# "entries", from /proc/net/stat/nfguard_rtcache.
rtc_stat() {
	local w i f=() line
	while IFS= read -r line; do
		read -r -a w <<<"$line"
		if [ "$1" = entries ] && [ "${w[0]}" = entries ]; then
			echo "${w[1]}"
			return 0
		fi
		if [ "${w[0]}" = cpu ]; then f=("${w[@]}"); fi
		if [ "${w[0]}" = total ]; then
			for i in "${!f[@]}"; do
				[ "${f[$i]}" = "$1" ] && { echo "${w[$i]}"; return 0; }
			done
		fi
	done < <(nfg_router cat "$RTC_PROC")
	nfg_fail "no counter $1 in $RTC_PROC"
}
rtc_stat_ge() { [ "$(rtc_stat "$1")" -ge "$2" ]; }
rtc_stat_is() { [ "$(rtc_stat "$1")" = "$2" ]; }
rtc_live() { cat "$RTC_LIVE"; }
rtc_live_is() { [ "$(rtc_live)" = "$1" ]; }

# rtc_count_rules PORT...: the server's per-link counting rules (as
# rtc_topo_up's) for more ports, both families, in one restore per family.
rtc_count_rules() {
	local fam p rules
	for fam in 4 6; do
		rules="*filter"$'\n'
		for p; do
			rules+="-A INPUT -i eth0 -p udp --dport $p -m comment --comment via1_$p -j DROP"$'\n'
			rules+="-A INPUT -i eth1 -p udp --dport $p -m comment --comment via2_$p -j DROP"$'\n'
		done
		rules+="COMMIT"$'\n'
		local bin=iptables-legacy-restore
		[ $fam = 6 ] && bin=ip6tables-legacy-restore
		printf '%s' "$rules" | nfg_server "$bin" -w --noflush ||
			nfg_fail "counting rules (ipv$fam)"
	done
}

# rtc_counts FAM: read every via*_PORT counter of FAM at once into RTC_N
# (keys "LINK:PORT"), one iptables-save.
declare -A RTC_N=()
rtc_counts() {
	local bin=iptables-legacy-save line n tag
	[ "$1" = 6 ] && bin=ip6tables-legacy-save
	RTC_N=()
	while IFS= read -r line; do
		[[ $line == \[*" --comment via"[12]_* ]] || continue
		n=${line#[}
		n=${n%%:*}
		tag=${line##*--comment via}
		tag=${tag%% *}
		# shellcheck disable=SC2034 # read by the cases
		RTC_N[${tag/_/:}]=$n
	done < <(nfg_server "$bin" -c 2>/dev/null)
}

# rtc_msender_start ID ADDR PORT...: one sender holding a connected UDP
# socket (one conntrack) to ADDR per PORT; "rtc_send ID N" then sends N
# rounds, each round one packet to every PORT in the given order.
rtc_msender_start() {
	local id=$1 addr=$2 cmd ack fd afd
	shift 2
	cmd=$NFG_WORK/rtc.$id.cmd ack=$NFG_WORK/rtc.$id.ack
	mkfifo "$cmd" "$ack" || nfg_fail "mkfifo"
	exec {fd}<>"$cmd" {afd}<>"$ack"
	RTC_CMD_FD[$id]=$fd RTC_ACK_FD[$id]=$afd
	# shellcheck disable=SC2016 # expanded by the sender
	nfg_bg "$NFG_NS_C" bash -c 'svc=$0 cmd=$1 ack=$2
		shift 3
		fds=()
		for p; do exec {f}>"/dev/udp/$svc/$p" || exit 1; fds+=("$f"); done
		exec 4<>"$cmd" 5<>"$ack"
		while read -r n <&4; do
			for ((i = 0; i < n; i++)); do
				for f in "${fds[@]}"; do printf x >&"$f" || exit 1; done
			done
			echo ok >&5
		done' "$addr" "$cmd" "$ack" x "$@"
}
