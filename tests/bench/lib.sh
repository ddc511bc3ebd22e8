# shellcheck shell=bash
# Guest-side benchmark library for tests/bench/cases/*.sh (bash). Benchmarks
# report; they do not gate: a bench case fails only when it cannot measure
# (setup broken, generator dead, a ruleset's own check fails).
#
#   . "$NFG_TOP/tests/bench/lib.sh"      # also sources tests/vm/lib.sh
#   nfb_init                             # topology + generator (NFB_GEN)
#   rs_floor() { nfb_rx iptables-legacy -w -t raw -A PREROUTING -j DROP; }
#   rs_none()  { :; }
#   nfb_ruleset raw-drop rs_floor --floor --desc "raw PREROUTING DROP"
#   nfb_ruleset no-rules rs_none --desc "no rules"
#   nfb_run floor                        # rounds A B A B ..., JSON + Markdown
#
# Topology (nfb_init):
#
#   netns $NFB_NS_GEN (nfb-gen)             netns $NFB_NS_RX (nfb-rx)
#     gen0 ------------------ veth ------------------ rx0  10.99.0.1/24, fd00:99::1/64
#                                                     dummy0 (up): default routes
#                                                     (v4, v6) point here, so replies
#                                                     cost the receiver, not the generator
#
# Generators (NFB_GEN):
#   trafgen  (default) trafgen in nfb-gen sends over gen0 on CPU $NFB_CPU: TCP SYN,
#            random source address and port, to 10.99.0.1:$NFB_DPORT. Handled
#            packets are counted on rx0 (rx_packets): veth delivers to the
#            receiver's backlog on the sending CPU, so generator and receiver
#            share that CPU. NFB_TRAFGEN_CFG may name another trafgen config;
#            "@RXMAC@" in it is replaced by rx0's MAC address.
#   pktgen   the kernel's pktgen (module pktgen) in nfb-rx, xmit_mode
#            netif_receive on rx0, thread kpktgend_$NFB_CPU: UDP from random
#            sources in NFB_SRC_MIN..NFB_SRC_MAX (default 1.0.0.1-223.255.255.254)
#            to 10.99.0.1:$NFB_DPORT, injected straight into the receive path
#            (no generator process). Handled packets = pktgen's pkts-sofar.
#
# Knobs (environment): NFB_GEN, NFB_SECS (2: measured seconds per sample),
# NFB_WARMUP (0.5: seconds of traffic before a sample), NFB_ROUNDS (5), NFB_CPU
# (0), NFB_DPORT (80), NFB_LEGACY_TABLES ("raw filter": iptables-legacy tables
# created empty in nfb-rx by nfb_init, see below), NFB_OUT (results directory; default $NFG_BENCH_OUT, else
# the harness's $NFG_ARTIFACTS, else $NFG_WORK/bench).
#
# Functions:
#   nfb_init [trafgen|pktgen]   build the topology above and check the generator
#   nfb_rx CMD... / nfb_gen CMD...   run CMD in the receiver / generator netns
#   nfb_ruleset NAME APPLY_FN [--clear FN] [--check FN] [--floor] [--desc TEXT]
#       register a ruleset (order of registration = order inside each round).
#       APPLY_FN installs it in nfb-rx (use nfb_rx); CLEAR_FN removes it
#       (default nfb_clear_rules); CHECK_FN runs right after each sample, with
#       NFB_PKTS (packets in the sample) and NFB_L4 (packets that reached
#       TCP/UDP in the sample) set, and must return 0 (else the bench fails):
#       use it to prove the ruleset did what it claims. Exactly one ruleset may
#       be the --floor (overheads are computed against it).
#   nfb_clear_rules   empty all iptables-legacy and ip6tables-legacy tables
#       and delete the iptables-nft tables (ip/ip6 filter raw mangle nat
#       security) in nfb-rx. Sets (ipset, rangeset, nft tables of their own) stay.
#       A legacy table cannot be removed from a netns once used and an empty one
#       still costs a hook traversal, so nfb_init creates NFB_LEGACY_TABLES
#       (IPv4) up front: every sample, "no rules" included, runs with them.
#   nfb_measure   one sample with the current ruleset: starts the generator,
#       waits NFB_WARMUP, counts for NFB_SECS, stops it. Sets NFB_PPS, NFB_PKTS,
#       NFB_L4, NFB_ELAPSED (seconds, float).
#   nfb_run BENCH [--ratio A/B]...   one discarded warm-up sample, then
#       NFB_ROUNDS rounds over all rulesets, then
#       writes $NFB_OUT/BENCH.json and BENCH.md and prints the Markdown table.
#       --ratio A/B adds overhead(A)/overhead(B) and pps(A)/pps(B) lines.
#   nfb_metric NAME VALUE UNIT [DESC]   record another figure (a load time, a
#       latency percentile, ...) for the next nfb_run's report ("other
#       measurements" table and "metrics" in the JSON). nfb_run with metrics
#       but no rulesets only reports them. nfb_run forgets rulesets and metrics
#       when done, so one case can produce several reports.
#   nfb_traffic_start / nfb_traffic_stop   run the generator in the background
#       (for benches that measure something else under load, e.g. latency).
#   nfb_snmp NAME   print a counter of nfb-rx's /proc/net/snmp, e.g. Tcp:InSegs
#   nfb_ipt_counter VARIANT FAMILY TABLE CHAIN N   packets of rule N (1-based)
#       of CHAIN, e.g. nfb_ipt_counter legacy 4 raw PREROUTING 1
#
# Report (per ruleset): median pps over the rounds, min/max, pps ratio to the
# floor, overhead per packet above the floor in ns (overhead = 1/pps -
# 1/pps_floor, computed per round against that round's floor sample, median
# over rounds), and the share of packets that reached L4 (TCP/UDP).

# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"

: "${NFB_GEN:=trafgen}" "${NFB_SECS:=2}" "${NFB_WARMUP:=0.5}" "${NFB_ROUNDS:=5}"
: "${NFB_CPU:=0}" "${NFB_DPORT:=80}" "${NFB_LEGACY_TABLES:=raw filter}"
: "${NFB_SRC_MIN:=1.0.0.1}" "${NFB_SRC_MAX:=223.255.255.254}"
: "${NFB_OUT:=${NFG_BENCH_OUT:-${NFG_ARTIFACTS:-$NFG_WORK/bench}}}"
NFB_NS_GEN=nfb-gen NFB_NS_RX=nfb-rx
NFB_DST4=10.99.0.1 NFB_DST6=fd00:99::1
NFB_NAMES=() NFB_PID=''
declare -A NFB_APPLY=() NFB_CLEAR=() NFB_CHECK=() NFB_DESC=()
NFB_FLOOR=''

nfb_rx() { ip netns exec "$NFB_NS_RX" "$@"; }
nfb_gen() { ip netns exec "$NFB_NS_GEN" "$@"; }

nfb__topo_down() {
	nfb_traffic_stop 2>/dev/null
	ip netns del "$NFB_NS_GEN" 2>/dev/null
	ip netns del "$NFB_NS_RX" 2>/dev/null
	return 0
}

# nfb_init [trafgen|pktgen]
nfb_init() {
	[ $# -gt 0 ] && NFB_GEN=$1
	case $NFB_GEN in trafgen | pktgen) ;; *) nfg_fail "nfb_init: generator '$NFB_GEN' (trafgen or pktgen)" ;; esac
	case $NFB_SECS$NFB_WARMUP$NFB_ROUNDS$NFB_CPU in *[!0-9.]*) nfg_fail "NFB_SECS/NFB_WARMUP/NFB_ROUNDS/NFB_CPU must be numbers" ;; esac
	nfg_need ip taskset python3 iptables-legacy iptables-nft
	mkdir -p "$NFB_OUT" || nfg_fail "cannot create results dir $NFB_OUT"
	nfg_on_exit nfb__topo_down
	ip netns add "$NFB_NS_GEN" || nfg_fail "ip netns add $NFB_NS_GEN"
	ip netns add "$NFB_NS_RX" || nfg_fail "ip netns add $NFB_NS_RX"
	ip link add gen0 netns "$NFB_NS_GEN" type veth peer name rx0 netns "$NFB_NS_RX" ||
		nfg_fail "veth gen0/rx0"
	ip -n "$NFB_NS_RX" link add dummy0 type dummy || nfg_fail "dummy0 (module dummy)"
	nfb_rx sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 >/dev/null
	local l
	for l in lo rx0 dummy0; do ip -n "$NFB_NS_RX" link set "$l" up; done
	ip -n "$NFB_NS_GEN" link set lo up
	ip -n "$NFB_NS_GEN" link set gen0 up
	nfb_rx sysctl -qw net.ipv4.conf.rx0.rp_filter=0 >/dev/null
	ip -n "$NFB_NS_RX" addr add "$NFB_DST4/24" dev rx0
	ip -n "$NFB_NS_RX" addr add "$NFB_DST6/64" dev rx0 nodad
	ip -n "$NFB_NS_RX" route add default dev dummy0 || nfg_fail "default route via dummy0"
	ip -n "$NFB_NS_RX" -6 route add default dev dummy0 || nfg_fail "v6 default route via dummy0"
	# no RPS: the receiver works on the CPU that injected the packet
	nfb_rx sh -c 'echo 0 > /sys/class/net/rx0/queues/rx-0/rps_cpus' 2>/dev/null
	NFB_RXMAC=$(ip -n "$NFB_NS_RX" -br link show dev rx0 | awk '{print $3}')
	[ -n "$NFB_RXMAC" ] || nfg_fail "cannot read rx0's MAC"

	case $NFB_GEN in
	trafgen)
		nfg_need trafgen
		NFB_PKTDESC="TCP SYN, random source address and port, to $NFB_DST4:$NFB_DPORT (trafgen over veth)"
		NFB_TGCFG=$NFG_WORK/trafgen.cfg
		if [ -n "${NFB_TRAFGEN_CFG:-}" ]; then
			sed "s/@RXMAC@/$NFB_RXMAC/g" "$NFB_TRAFGEN_CFG" >"$NFB_TGCFG" ||
				nfg_fail "cannot read $NFB_TRAFGEN_CFG"
			NFB_PKTDESC="trafgen config $(basename "$NFB_TRAFGEN_CFG") over veth"
		else
			cat >"$NFB_TGCFG" <<-EOF
				{
				  eth(da=$NFB_RXMAC, sa=02:00:00:00:00:01),
				  ipv4(sa=drnd(), da=$NFB_DST4, ttl=64),
				  tcp(sp=drnd(), dp=$NFB_DPORT, seq=drnd(), syn)
				}
			EOF
		fi
		;;
	pktgen)
		modprobe pktgen || nfg_fail "modprobe pktgen"
		nfb_rx test -e /proc/net/pktgen/kpktgend_"$NFB_CPU" ||
			nfg_fail "no pktgen thread kpktgend_$NFB_CPU in $NFB_NS_RX"
		NFB_PKTDESC="UDP, random source $NFB_SRC_MIN-$NFB_SRC_MAX and port, to $NFB_DST4:$NFB_DPORT (pktgen netif_receive)"
		nfb__pg "kpktgend_$NFB_CPU" rem_device_all
		nfb__pg "kpktgend_$NFB_CPU" "add_device rx0"
		local c
		for c in "xmit_mode netif_receive" "count 0" "clone_skb 0" "burst 1" "delay 0" \
			"pkt_size 60" "dst $NFB_DST4" "dst_mac $NFB_RXMAC" \
			"src_min $NFB_SRC_MIN" "src_max $NFB_SRC_MAX" "flag IPSRC_RND" \
			"udp_src_min 1024" "udp_src_max 65535" "flag UDPSRC_RND" \
			"udp_dst_min $NFB_DPORT" "udp_dst_max $NFB_DPORT"; do
			nfb__pg rx0 "$c"
		done
		;;
	esac
	# Legacy tables cannot be removed from a netns once used, and an empty one
	# still costs a hook traversal: create them up front so every sample sees
	# the same hooks (nfb_clear_rules empties them, iptables-nft tables go).
	for l in $NFB_LEGACY_TABLES; do
		nfb_rx iptables-legacy -w -t "$l" -S >/dev/null || nfg_fail "iptables-legacy -t $l"
	done
	nfg_log "generator $NFB_GEN: $NFB_PKTDESC; ${NFB_ROUNDS} rounds x ${NFB_SECS}s (+${NFB_WARMUP}s warm-up)"
}

# nfb__pg FILE CMD: write a pktgen command in nfb-rx and check its result
nfb__pg() {
	local f=/proc/net/pktgen/$1 res
	nfb_rx sh -c "echo '$2' > $f" || nfg_fail "pktgen: '$2' > $f failed"
	[ "$1" = pgctrl ] && return 0
	res=$(nfb_rx sed -n 's/^Result: //p' "$f")
	case $res in OK* | "") ;; *) nfg_fail "pktgen: '$2': $res" ;; esac
}

nfb__genlog() { tail -n 5 "$NFG_WORK/gen.log" 2>/dev/null | tr '\n' ' '; }

# nfb_traffic_start / nfb_traffic_stop
nfb_traffic_start() {
	[ -z "$NFB_PID" ] || nfg_fail "nfb_traffic_start: generator already running"
	case $NFB_GEN in
	trafgen)
		# trafgen forks its worker(s): run it in a process group of its own
		# (setsid: the subshell is no group leader, so this does not fork) to
		# stop all of it
		(cd "$NFG_WORK" && exec setsid ip netns exec "$NFB_NS_GEN" taskset -c "$NFB_CPU" \
			trafgen -o gen0 -c "$NFB_TGCFG" -P 1 --no-sock-mem -C) \
			</dev/null >"$NFG_WORK/gen.log" 2>&1 &
		NFB_PID=$!
		;;
	pktgen)
		# "start" blocks the writer until pktgen stops
		nfb_rx sh -c 'echo start > /proc/net/pktgen/pgctrl' </dev/null >"$NFG_WORK/gen.log" 2>&1 &
		NFB_PID=$!
		;;
	esac
}

nfb_traffic_stop() {
	[ -n "$NFB_PID" ] || return 0
	local i
	case $NFB_GEN in
	trafgen)
		# SIGINT makes trafgen drain its TX ring (many seconds under TCG) and
		# its statistics are not used: kill the whole group (main process and
		# workers). A worker left sending while nfb-gen is deleted crashed 6.12
		# (divide error in packet_xmit: AF_PACKET xmit on an unregistering veth).
		kill -KILL -- "-$NFB_PID" 2>/dev/null
		wait "$NFB_PID" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			[ -z "$(ps -o pid= -o stat= -g "$NFB_PID" 2>/dev/null | awk '$2 !~ /^Z/')" ] && break
			sleep 0.1
		done
		[ $i -lt 100 ] || nfg_fail "trafgen (process group $NFB_PID) does not die"
		;;
	pktgen)
		nfb_rx sh -c 'echo stop > /proc/net/pktgen/pgctrl' 2>/dev/null
		wait "$NFB_PID" 2>/dev/null
		;;
	esac
	NFB_PID=''
}

# nfb_measure: one sample (see header)
# (the sampler, tests/bench/sample.sh, runs in nfb-rx on the other vCPU)
nfb_measure() {
	local other=1 r fifo=$NFG_WORK/nfb.fifo
	[ "$NFB_CPU" = 1 ] && other=0
	[ -p "$fifo" ] || mkfifo "$fifo" || nfg_fail "mkfifo $fifo"
	nfb_traffic_start
	r=$(nfb_rx taskset -c "$other" bash "$NFG_TOP/tests/bench/sample.sh" "$NFB_GEN" \
		"$NFB_WARMUP" "$NFB_SECS" "$fifo")
	if [ "$NFB_GEN" = trafgen ] && ! kill -0 "$NFB_PID" 2>/dev/null; then
		NFB_PID=''
		nfg_fail "generator died during the sample: $(nfb__genlog)"
	fi
	nfb_traffic_stop
	[ "$r" != nostart ] || nfg_fail "generator $NFB_GEN delivered no packet within 60 s: $(nfb__genlog)"
	read -r NFB_PPS NFB_PKTS NFB_L4 NFB_ELAPSED < <(echo "$r" | awk '{
		e = $4 - $1; p = $5 - $2; l = $6 - $3
		if (e <= 0) e = 1e-9
		printf "%d %d %d %.3f\n", p / e, p, l, e }')
	[ -n "$NFB_PPS" ] || nfg_fail "sampler produced no numbers ('$r')"
	[ "$NFB_PKTS" -gt 0 ] || nfg_fail "no packet handled during the sample: $(nfb__genlog)"
}

# nfb_snmp Proto:Field
nfb_snmp() {
	# shellcheck disable=SC2016
	nfb_rx awk -v p="${1%%:*}:" -v f="${1#*:}" \
		'$1 == p { if (!h) { for (i = 2; i <= NF; i++) if ($i == f) c = i; h = 1 } else { print $c; exit } }' \
		/proc/net/snmp
}

# nfb_ipt_counter VARIANT FAMILY TABLE CHAIN N
nfb_ipt_counter() {
	local bin=iptables
	[ "$2" = 6 ] && bin=ip6tables
	nfb_rx "$bin-$1" -w -t "$3" -L "$4" "$5" -v -x -n 2>/dev/null | awk 'NR == 1 { print $1 }'
}

# nfb_clear_rules: see header (tests/bench/clear-rules.sh, in nfb-rx)
nfb_clear_rules() {
	nfb_rx bash "$NFG_TOP/tests/bench/clear-rules.sh" || nfg_fail "nfb_clear_rules failed"
}

# nfb_ruleset NAME APPLY_FN [--clear FN] [--check FN] [--floor] [--desc TEXT]
nfb_ruleset() {
	local name=$1 apply=$2
	shift 2 || nfg_fail "nfb_ruleset NAME APPLY_FN [options]"
	case $name in '' | *[!A-Za-z0-9_.+-]*) nfg_fail "nfb_ruleset: bad name '$name'" ;; esac
	[ -z "${NFB_APPLY[$name]-}" ] || nfg_fail "nfb_ruleset: '$name' registered twice"
	declare -F "$apply" >/dev/null || nfg_fail "nfb_ruleset $name: no function '$apply'"
	NFB_APPLY[$name]=$apply NFB_CLEAR[$name]=nfb_clear_rules NFB_CHECK[$name]='' NFB_DESC[$name]=$name
	while [ $# -gt 0 ]; do
		case $1 in
		--clear) NFB_CLEAR[$name]=$2; shift 2 ;;
		--check) NFB_CHECK[$name]=$2; shift 2 ;;
		--desc) NFB_DESC[$name]=$2; shift 2 ;;
		--floor)
			[ -z "$NFB_FLOOR" ] || nfg_fail "nfb_ruleset: two floors ($NFB_FLOOR, $name)"
			NFB_FLOOR=$name
			shift
			;;
		*) nfg_fail "nfb_ruleset $name: unknown option '$1'" ;;
		esac
	done
	NFB_NAMES+=("$name")
}

# nfb_metric NAME VALUE UNIT [DESC]
nfb_metric() {
	[ $# -ge 3 ] || nfg_fail "nfb_metric NAME VALUE UNIT [DESC]"
	case $2 in '' | *[!0-9.eE+-]*) nfg_fail "nfb_metric $1: value '$2' is not a number" ;; esac
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-$1}" >>"$NFG_WORK/nfb.metrics"
	nfg_log "metric $1 = $2 $3"
}

# nfb_run BENCH [--ratio A/B]...
nfb_run() {
	local bench=$1 r n samples ratios=() cur='' i
	shift || nfg_fail "nfb_run BENCH"
	while [ $# -gt 0 ]; do
		case $1 in
		--ratio) ratios+=("$2"); shift 2 ;;
		*) nfg_fail "nfb_run: unknown option '$1'" ;;
		esac
	done
	[ ${#NFB_NAMES[@]} -gt 0 ] || [ -s "$NFG_WORK/nfb.metrics" ] ||
		nfg_fail "nfb_run: no rulesets registered and no metrics recorded"
	samples=$NFG_WORK/$bench.samples
	printf 'round\truleset\tpps\tpkts\tl4\tsecs\n' >"$samples"
	if [ ${#NFB_NAMES[@]} -gt 0 ]; then
		nfb_clear_rules
		# one discarded sample first: the first one in a boot runs cold
		# (page faults, first route and conntrack work) and reads low
		n=${NFB_NAMES[0]}
		"${NFB_APPLY[$n]}" || nfg_fail "applying ruleset $n failed"
		nfb_measure
		nfg_log "warm-up sample ($n, discarded): $NFB_PPS pps"
		cur=$n
	fi
	for ((r = 1; r <= NFB_ROUNDS && ${#NFB_NAMES[@]} > 0; r++)); do
		for n in "${NFB_NAMES[@]}"; do
			if [ -n "$cur" ]; then
				"${NFB_CLEAR[$cur]}" || nfg_fail "clearing ruleset $cur failed"
			fi
			cur=$n
			"${NFB_APPLY[$n]}" || nfg_fail "applying ruleset $n failed"
			nfb_measure
			if [ -n "${NFB_CHECK[$n]}" ]; then
				"${NFB_CHECK[$n]}" || nfg_fail "ruleset $n: check ${NFB_CHECK[$n]} failed (pkts $NFB_PKTS, l4 $NFB_L4)"
			fi
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$n" "$NFB_PPS" "$NFB_PKTS" "$NFB_L4" "$NFB_ELAPSED" >>"$samples"
			nfg_log "round $r/$NFB_ROUNDS $n: $NFB_PPS pps (L4 $NFB_L4 of $NFB_PKTS)"
		done
	done
	[ -n "$cur" ] && "${NFB_CLEAR[$cur]}"
	{
		echo "bench=$bench"
		echo "kernel=$(uname -r)"
		echo "cpus=$(nproc)"
		echo "generator=$NFB_GEN"
		echo "packet=$NFB_PKTDESC"
		echo "secs=$NFB_SECS"
		echo "warmup=$NFB_WARMUP"
		echo "rounds=$NFB_ROUNDS"
		echo "cpu=$NFB_CPU"
		echo "floor=$NFB_FLOOR"
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		for n in "${NFB_NAMES[@]}"; do echo "ruleset=$n	${NFB_DESC[$n]}"; done
		for i in "${ratios[@]}"; do echo "ratio=$i"; done
	} >"$NFG_WORK/$bench.meta"
	touch "$NFG_WORK/nfb.metrics"
	python3 "$NFG_TOP/tests/bench/report.py" "$NFG_WORK/$bench.meta" "$samples" \
		"$NFG_WORK/nfb.metrics" "$NFB_OUT/$bench" || nfg_fail "report.py failed"
	cp "$samples" "$NFB_OUT/$bench.samples.tsv"
	cat "$NFB_OUT/$bench.md"
	# forget this bench's rulesets and metrics
	NFB_NAMES=() NFB_FLOOR=''
	NFB_APPLY=() NFB_CLEAR=() NFB_CHECK=() NFB_DESC=()
	rm -f "$NFG_WORK/nfb.metrics"
}
