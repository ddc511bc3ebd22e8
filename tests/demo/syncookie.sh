#!/bin/bash
# make demo, part 2 (about a minute): SYNCOOKIE against a spoofed SYN flood.
#
# A web server behind a router; an attacker on the client's side floods the
# server with SYNs from random spoofed sources (hping3 --rand-source); a real
# client fetches a page. First without SYNCOOKIE, then with it, the numbers
# side by side: the router's conntrack entries, the flood SYNs that reached
# the server (the box, and its TCP stack), half-open sockets on the server,
# the client's fetch times, and the router's CPU time per flood SYN. It ends
# with SYNCOOKIE's counters and the allowlist holding the client.
#
# Where the rule sits: on the router (the man page's "router protecting a
# server" ruleset: one rule, proxy mode, the default): the router answers the
# flood's SYNs itself and opens the client's connection to the server on its
# behalf, so neither its conntrack table nor the server sees the flood.
#
# Nothing here depends on the machine's speed: each phase floods until the
# router has seen a fixed number of flood SYNs, then fetches while the flood
# goes on. Numbers are reported, not asserted, except that the client's
# fetches must succeed with SYNCOOKIE.
#
# Router cost: user space (flood, client, servers, this script) runs on CPU 0,
# and RPS steers the router's receive processing (its two veths) to CPU 1, the
# client's and the server's to CPU 0; the time the router spends per packet is
# the time in ip_rcv() on CPU 1 (see below). Guest time under TCG emulation:
# compare the two columns, not with real hardware.
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need hping3 curl conntrack taskset nfguard iptables-legacy

say() { printf '\n=== %s\n' "$*"; }
show() { printf '    $ %s\n' "$*"; "$@" 2>&1 | sed 's/^/      /'; }

FLOOD_SYNS=10000  # flood SYNs the router must have seen before the fetches
FETCHES=5
port=8080

taskset -pc 0 $$ >/dev/null || nfg_fail "taskset: pin the demo to CPU 0"
nfg_load_modules xt_SYNCOOKIE
modprobe -a nf_conntrack xt_conntrack || nfg_fail "modprobe conntrack"
nfg_topo_up
# the Internet is on the client's side: replies to spoofed sources go there
# (the client box drops them); spoofed sources are not filtered by rp_filter
nfg_router ip route add default via "$NFG_C4" || nfg_fail "router default route"
nfg_router sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
	net.ipv4.conf.eth0.rp_filter=0 >/dev/null || nfg_fail "rp_filter"
# receive processing: router on CPU 1, client and server on CPU 0
rps() { nfg_in "$1" sh -c "echo $3 > /sys/class/net/$2/queues/rx-0/rps_cpus" || nfg_fail "rps_cpus $1 $2"; }
rps "$NFG_NS_R" eth0 2
rps "$NFG_NS_R" eth1 2
rps "$NFG_NS_C" eth0 1
rps "$NFG_NS_S" eth0 1

www=$NFG_WORK/www
mkdir -p "$www" || nfg_fail "mkdir"
head -c 100000 /dev/urandom >"$www/page" || nfg_fail "page"
nfg_http_server "$NFG_NS_S" $port "$www"
# a stateful router (conntrack on everything it forwards)
nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -m conntrack --ctstate NEW,ESTABLISHED,RELATED -j ACCEPT ||
	nfg_fail "router conntrack rule"
# counters on the server: flood SYNs (any source but the client's) arriving at
# the box (raw, before anything else) and reaching its TCP stack (filter INPUT)
nfg_ipt "$NFG_NS_S" legacy 4 -t raw -A PREROUTING ! -s "$NFG_C4" -p tcp -m comment --comment box \
	-m tcp --syn --dport $port || nfg_fail "server counter rule"
nfg_ipt "$NFG_NS_S" legacy 4 -A INPUT ! -s "$NFG_C4" -p tcp -m comment --comment tcp \
	-m tcp --syn --dport $port || nfg_fail "server counter rule"
ctmax=$(nfg_router sysctl -n net.netfilter.nf_conntrack_max)

# processes whose /proc/PID/net shows the router's and the server's netns
nfg_bg "$NFG_NS_R" sleep 100000
r_pid=$NFG_LAST_PID
# router eth0 received packets (builtins only)
r_rx() {
	local l a
	while read -r l; do
		case $l in eth0:*) read -ra a <<<"${l#eth0:}"; echo "${a[1]}"; return 0 ;; esac
	done <"/proc/$r_pid/net/dev"
}
# The router's time per packet: under TCG both vCPUs share one host thread, so
# a vCPU's busy time also counts the other's turns. What the router spends is
# measured instead as the time in ip_rcv() on CPU 1 (function_graph: the whole
# receive path of the router, hooks, forwarding or the SYNCOOKIE reply, up to
# the hand-over to the next veth), where only the router's packets are handled;
# calls longer than 20 x the median (the other vCPU's turn fell inside) are left out.
TR=/sys/kernel/tracing
[ -e $TR/trace ] || mount -t tracefs nodev $TR || nfg_fail "mount tracefs"
grep -qx 'ip_rcv' $TR/available_filter_functions || nfg_fail "ip_rcv is not traceable"
trw() { echo "$2" >"$TR/$1" || nfg_fail "tracefs: '$2' > $1 failed"; }
cpumask=$(<"$TR/tracing_cpumask")
nfg_on_exit "echo 0 > $TR/tracing_on; echo nop > $TR/current_tracer; echo > $TR/set_ftrace_filter; echo $cpumask > $TR/tracing_cpumask"
trw tracing_on 0
trw current_tracer nop
trw set_ftrace_filter ip_rcv
trw tracing_cpumask 2
trw buffer_size_kb 16384
trw options/overwrite 0
trw current_tracer function_graph
rcv_us() { # total us in ip_rcv on CPU 1 since the trace was cleared, and the call count
	grep -o '[0-9.]* us *| *ip_rcv' "$TR/per_cpu/cpu1/trace" | awk '{ print $1 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (!NR) { print "0 0"; exit } m = v[int((NR + 1) / 2)]
			for (i = 1; i <= NR; i++) if (v[i] <= 20 * m) { s += v[i]; n++ } printf "%.0f %d\n", s, n }'
}

fetch() { # one fetch: F_OUT gets "time_total" or "fail"
	local r
	if r=$(nfg_client curl -sS -m 30 -o /dev/null -w '%{time_connect} %{time_total}' \
		"http://$NFG_S4:$port/page" 2>/dev/null); then
		F_OUT=$(printf '%.2f' "${r#* }")
		F_OK=$((F_OK + 1))
	else
		F_OUT=fail
	fi
}

declare -A R=()
phase() { # phase without|with
	local k=$1 rx0 t0 box0 tcp0 rx1 t1 i us calls times=''
	# both phases start from the same state: an empty conntrack table in the
	# router, no half-open connection left on the server
	nfg_router conntrack -F >/dev/null 2>&1
	nfg_server ss -K -Hnt state syn-recv >/dev/null 2>&1
	rx0=$(r_rx) t0=${EPOCHREALTIME/./}
	box0=$(nfg_ipt_pkts "$NFG_NS_S" legacy 4 box) tcp0=$(nfg_ipt_pkts "$NFG_NS_S" legacy 4 tcp)
	trw trace ''
	trw tracing_on 1
	nfg_bg "$NFG_NS_C" hping3 -q -S -p $port --rand-source -i u200 "$NFG_S4"
	flood=$NFG_LAST_PID
	flooded() { [ $(($(r_rx) - rx0)) -ge "$FLOOD_SYNS" ]; }
	nfg_wait_until 300 flooded || nfg_fail "the router did not see $FLOOD_SYNS flood packets"
	printf '      the router has seen %d flood SYNs; the client fetches the page %d times:\n' \
		$(($(r_rx) - rx0)) $FETCHES
	F_OK=0
	for ((i = 1; i <= FETCHES; i++)); do
		fetch
		times+=" $F_OUT"
		printf '        fetch %d: %s\n' "$i" "$F_OUT$([ "$F_OUT" = fail ] || echo ' s')"
	done
	rx1=$(r_rx) t1=${EPOCHREALTIME/./}
	trw tracing_on 0
	R[$k.ct]=$(nfg_router conntrack -C 2>/dev/null)
	R[$k.sr]=$(nfg_server ss -Hnt state syn-recv | wc -l)
	kill "$flood"
	wait "$flood" 2>/dev/null
	R[$k.syns]=$((rx1 - rx0))
	R[$k.box]=$(($(nfg_ipt_pkts "$NFG_NS_S" legacy 4 box) - box0))
	R[$k.tcp]=$(($(nfg_ipt_pkts "$NFG_NS_S" legacy 4 tcp) - tcp0))
	R[$k.times]=$times
	R[$k.ok]=$F_OK
	read -r us calls < <(rcv_us)
	R[$k.cost]=$(awk -v us="$us" -v n=$((rx1 - rx0)) 'BEGIN { printf "%.1f", us / n }')
	R[$k.calls]=$calls
	R[$k.secs]=$(awk -v t=$((t1 - t0)) 'BEGIN { printf "%.1f", t / 1e6 }')
	R[$k.pps]=$(awk -v t=$((t1 - t0)) -v n=$((rx1 - rx0)) 'BEGIN { printf "%.0f", n / (t / 1e6) }')
}

say "SYNCOOKIE demo: a router protects the web server behind it (--mode proxy)"
printf '    client %s -- router (conntrack on, nf_conntrack_max %s) -- server %s:%s\n' \
	"$NFG_C4" "$ctmax" "$NFG_S4" $port

say "1. spoofed SYN flood (hping3 --rand-source, from the client's side), no SYNCOOKIE"
phase without

say "2. the same flood, with SYNCOOKIE on the router"
sc_ns=$NFG_NS_R
show nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING -i eth0 -p tcp -d "$NFG_S4" --dport $port \
	-j SYNCOOKIE --mss 1460 --wscale 7 --sack-perm --timestamp
nfg_in "$sc_ns" iptables-legacy -t raw -S PREROUTING | grep -q SYNCOOKIE || nfg_fail "the SYNCOOKIE rule is not in place"
phase with
[ "${R[with.ok]}" = $FETCHES ] || nfg_fail "with SYNCOOKIE, only ${R[with.ok]} of $FETCHES fetches succeeded"

say "3. side by side (the same flood, the same client)"
row() { printf '      %-52s %14s %14s\n' "$1" "$2" "$3"; }
row "" "without" "with SYNCOOKIE"
row "packets into the router (flood + ~100 of the client)" "${R[without.syns]}" "${R[with.syns]}"
row "router conntrack entries after the fetches" "${R[without.ct]}" "${R[with.ct]}"
row "flood SYNs that reached the server box" "${R[without.box]}" "${R[with.box]}"
row "flood SYNs that reached the server's TCP stack" "${R[without.tcp]}" "${R[with.tcp]}"
row "half-open (SYN_RECV) sockets on the server" "${R[without.sr]}" "${R[with.sr]}"
row "client fetches that succeeded" "${R[without.ok]}/$FETCHES" "${R[with.ok]}/$FETCHES"
row "router time per packet in (us in ip_rcv, TCG)" "${R[without.cost]}" "${R[with.cost]}"
row "packets the router handled (ip_rcv calls)" "${R[without.calls]}" "${R[with.calls]}"
row "phase length (s) / flood rate (packets/s)" "${R[without.secs]} / ${R[without.pps]}" "${R[with.secs]} / ${R[with.pps]}"
printf '      (with SYNCOOKIE the router answers each flood SYN itself, in place, and tracks only\n'
printf '      the client'"'"'s connections, which it opened to the server on the client'"'"'s behalf)\n'
printf '      %-52s%s\n' "client fetch times without (s):" "${R[without.times]}"
printf '      %-52s%s\n' "client fetch times with SYNCOOKIE (s):" "${R[with.times]}"

say "4. SYNCOOKIE's counters and the allowlist (the client proved itself with its first ACK)"
show nfg_in "$sc_ns" nfguard syncookie stats
show nfg_in "$sc_ns" nfguard syncookie allowlist list
nfg_in "$sc_ns" nfguard syncookie allowlist list | grep -q "^$NFG_C4/" ||
	printf '      (the client is not on the allowlist)\n'

nfg_in "$sc_ns" iptables-legacy -t raw -F
nfg_topo_down
nfg_unload_modules xt_SYNCOOKIE
say "done: SYNCOOKIE demo (router, proxy mode)"
