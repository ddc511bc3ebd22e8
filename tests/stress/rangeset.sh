# shellcheck shell=bash
# rangeset stressors (see tests/stress/lib.sh). Topology: netns nfg-st-gen
# floods netns nfg-st-dut over a veth pair with UDP from random IPv4 and IPv6
# sources (trafgen); dut's INPUT has rangeset rules (legacy and nft, v4 and
# v6) on sets lk4/lk6 that the stressors keep changing, and RANGESET rules
# adding every source to dyn4/dyn6 (full sets refuse; the churn swaps and
# flushes them).

RS_GEN=nfg-st-gen
RS_DUT=nfg-st-dut
RS_D4=10.99.0.1
RS_D6=fd00:99::1

rs_dut() { ip netns exec $RS_DUT "$@"; }

rs_stress_setup() {
	local mac i
	nfg_need trafgen nfguard nfg-nlfuzz iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft
	ip -batch - <<-EOF || nfg_fail "stress topology"
		netns add $RS_GEN
		netns add $RS_DUT
		link add gen0 netns $RS_GEN type veth peer name dut0 netns $RS_DUT
	EOF
	ip -n $RS_DUT -batch - <<-EOF || nfg_fail "dut setup"
		link set lo up
		addr add $RS_D4/16 dev dut0
		addr add $RS_D6/64 dev dut0 nodad
		link set dut0 up
	EOF
	ip -n $RS_GEN link set lo up && ip -n $RS_GEN link set gen0 up || nfg_fail "gen setup"
	mac=$(rs_dut cat /sys/class/net/dut0/address)
	[ -n "$mac" ] || nfg_fail "dut mac"
	# One generator, IPv4 and IPv6 packets in turn, from random sources
	# (drnd() draws 31 bits: IPv4 sources are in 0.0.0.0/1).
	{
		echo "{ eth(da=$mac), ipv4(sa=drnd(), da=$RS_D4, ttl=64), udp(sp=drnd(), dp=9), fill(0x41, 18) }"
		printf '{ eth(da=%s, type=0x86dd), 0x60, 0, 0, 0, 0, 8, 17, 64,\n' "$mac"
		printf '  0xfd, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, drnd(4),\n'
		printf '  0xfd, 0x00, 0x00, 0x99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,\n'
		printf '  drnd(2), 0, 9, 0, 8, 0, 0 }\n'
	} >"$NFG_WORK/flood.cfg"
	seq 0 1999 | awk '{ printf "%d.%d.0.0/17\n", int($1 / 2) % 223 + 1, ($1 * 7) % 256 }' >"$NFG_WORK/lk4"
	rs_dut nfguard set create lk4 ipv4 && rs_dut nfguard set add lk4 -f "$NFG_WORK/lk4" &&
		rs_dut nfguard set create sw4 ipv4 && rs_dut nfguard set add sw4 0.0.0.0/2 &&
		rs_dut nfguard set create lk6 ipv6 && rs_dut nfguard set add lk6 fd00:1::/97 &&
		rs_dut nfguard set create dyn4 ipv4 maxelem 3000 timeout 1 &&
		rs_dut nfguard set create dyn6 ipv6 maxelem 3000 ||
		nfg_fail "stress sets"
	# ACCEPT, not DROP: the legacy and the nft table both see every packet
	for v in legacy nft; do
		nfg_ipt $RS_DUT $v 4 -A INPUT -p udp --dport 9 -m rangeset --match-set lk4 src \
			-m comment --comment lk4-$v -j ACCEPT &&
			nfg_ipt $RS_DUT $v 4 -A INPUT -p udp --dport 9 -m rangeset ! --match-set sw4 src \
				-m comment --comment sw4-$v -j ACCEPT &&
			nfg_ipt $RS_DUT $v 6 -A INPUT -p udp --dport 9 -m rangeset --match-set lk6 src \
				-m comment --comment lk6-$v -j ACCEPT ||
			nfg_fail "stress rules ($v)"
	done
	# packet-path adds (-j RANGESET) under the flood: a full set refuses,
	# expiries and folds run while the churn swaps and flushes the set
	nfg_ipt $RS_DUT legacy 4 -A INPUT -p udp --dport 9 -m comment --comment dyn4 \
		-j RANGESET --add-set dyn4 src --exist &&
		nfg_ipt $RS_DUT nft 6 -A INPUT -p udp --dport 9 -m comment --comment dyn6 \
			-j RANGESET --add-set dyn6 src --prefix 120 --timeout 2 ||
		nfg_fail "stress RANGESET rules"
}

# The flood: paced, since under TCG an unpaced generator starves the control
# plane. Stopped around slab measurements (packets in flight use kmalloc).
rs_stress_flood_start() {
	nfg_bg $RS_GEN trafgen -P 1 -q -o gen0 -c "$NFG_WORK/flood.cfg" -t 100us
	RS_FLOOD_PID=$NFG_LAST_PID
}
rs_gen_idle() { [ -z "$(ip netns pids $RS_GEN 2>/dev/null)" ]; }
rs_stress_flood_stop() {
	# trafgen may run as more than one process: stop everything in gen
	ip netns pids $RS_GEN 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	nfg_wait_until 30 rs_gen_idle || nfg_fail "the flood generator does not stop"
	[ -z "${RS_FLOOD_PID:-}" ] || wait "$RS_FLOOD_PID" 2>/dev/null
	RS_FLOOD_PID=
	return 0
}

rs_stress_teardown() {
	rs_stress_flood_stop
	ip netns del $RS_GEN 2>/dev/null
	ip netns del $RS_DUT 2>/dev/null
	return 0
}

# The flood reached the rules: lookups counted and rules matched.
rs_stress_flood_check() {
	local v n t
	for v in legacy nft; do
		for t in 4:lk4 4:sw4 6:lk6; do
			n=$(nfg_ipt_pkts $RS_DUT $v ${t%%:*} ${t#*:}-$v)
			[ "${n:-0}" -ge 1 ] || {
				rs_dut cat /proc/net/stat/nfguard_rangeset >&2
				nfg_fail "no flood packet matched the $v rule on ${t#*:}"
			}
		done
	done
	for t in dyn4 dyn6; do
		n=$(rs_dut nfguard set list $t | sed -n 's/^Packet adds: //p')
		[ "${n:-0}" -ge 1 ] || nfg_fail "no packet-path add into $t"
	done
}

# add/del/swap/flush/list/test on the sets the flood looks up
rs_st_churn() {
	local a=$((RANDOM % 223 + 1)) b=$((RANDOM % 256))
	rs_dut nfguard set add lk4 $a.$b.0.0/16 $a.$b.128.1-$a.$b.130.7 || return 1
	# 0 in the set, 1 not in it (the swap stressor may have moved it): both
	# fine; 1 is also an error's status, told apart by the answer
	local out
	out=$(rs_dut nfguard set test lk4 $a.$b.1.1 2>&1)
	case $?:$out in
	0:* | 1:*"is NOT in set"*) ;;
	*) echo "test failed: $out"; return 1 ;;
	esac
	rs_dut nfguard set del lk4 $a.$b.0.0/16 || return 1
	rs_dut nfguard set swap lk4 sw4 || return 1
	rs_dut nfguard set list lk4 >/dev/null || return 1
	rs_dut nfguard set swap lk4 sw4 || return 1
	rs_dut nfguard set add lk6 fd00:1::$a:$b fd00:1::8000:0/100 || return 1
	rs_dut nfguard set flush sw4 && rs_dut nfguard set add sw4 0.0.0.0/2 || return 1
	rs_dut nfguard set del lk6 fd00:1::8000:0/100 || return 1
	rs_dut nfguard set swap dyn4 sw4 && rs_dut nfguard set swap dyn4 sw4 || return 1
	rs_dut nfguard set flush dyn6 && rs_dut nfguard set list dyn4 >/dev/null || return 1
}

# swaps of the same two sets in both orders at once (lock order of swap)
rs_st_swaps() {
	local p rc=0
	rs_dut nfg-nlfuzz -n 300 -t lk4:4 -t sw4:4 swap &
	p=$!
	rs_dut nfg-nlfuzz -n 300 -t sw4:4 -t lk4:4 swap || rc=1
	wait $p || rc=1
	return $rc
}

# sets created, filled, dumped (one dump abandoned), renamed, destroyed
rs_st_lifecycle() {
	rs_dut nfguard set create tmp$BASHPID ipv4 maxelem 6000 &&
		rs_dut nfguard set add tmp$BASHPID -f "$NFG_WORK/lk4" || return 1
	rs_dut nfguard set list tmp$BASHPID | {
		read -r _
		exit 0
	} || return 1
	rs_dut nfguard set rename tmp$BASHPID tmq$BASHPID || return 1
	rs_dut nfguard set destroy tmq$BASHPID || return 1
}

# a set destroyed while a dump of it runs: the dump's .done drops the last
# reference (freed by a work item, not in the context .done runs in)
rs_st_dumpdestroy() {
	rs_dut nfg-nlfuzz -n 4 dumpdestroy || return 1
}

# rules referencing sets added and deleted, legacy and nft; a referenced
# set cannot be destroyed, an unreferenced one can
rs_st_rules() {
	local v s=rr$BASHPID
	rs_dut nfguard set create $s ipv4 && rs_dut nfguard set add $s 10.98.0.0/16 || return 1
	rs_dut nfguard set create ${s}6 ipv6 && rs_dut nfguard set add ${s}6 fd00:98::/64 || return 1
	# legacy and nft in turn (one of them per iteration keeps iterations short)
	v=legacy
	[ $((RANDOM % 2)) = 0 ] || v=nft
	for v in $v; do
		nfg_ipt $RS_DUT $v 4 -A FORWARD -m rangeset --match-set $s dst -j DROP || return 1
		nfg_ipt $RS_DUT $v 6 -A FORWARD -m rangeset --match-set ${s}6 dst -j DROP || return 1
		if rs_dut nfguard set destroy $s 2>/dev/null; then
			echo "destroy of a referenced set ($v rule) succeeded"
			return 1
		fi
		nfg_ipt $RS_DUT $v 4 -D FORWARD -m rangeset --match-set $s dst -j DROP || return 1
		nfg_ipt $RS_DUT $v 6 -D FORWARD -m rangeset --match-set ${s}6 dst -j DROP || return 1
	done
	rs_dut nfguard set destroy $s && rs_dut nfguard set destroy ${s}6 || return 1
}

# netns created and destroyed with sets and rules inside
rs_st_netns() {
	local ns=nfg-st-ns$BASHPID
	ip netns add $ns || return 1
	ip netns exec $ns sh -c '
		ip link set lo up &&
		nfguard set create a ipv4 && nfguard set add a 127.0.0.0/8 10.0.0.0/8 &&
		nfguard set create b ipv6 && nfguard set add b ::1 &&
		iptables-legacy -w -A INPUT -m rangeset --match-set a src -j ACCEPT &&
		iptables-nft -w -A OUTPUT -m rangeset --match-set a dst -j ACCEPT &&
		nfguard set create c ipv4 maxelem 8 &&
		iptables-legacy -w -A OUTPUT -j RANGESET --add-set c dst --timeout 5 &&
		ip6tables-nft -w -A INPUT -m rangeset --match-set b src -j ACCEPT &&
		ping -c 1 -W 2 127.0.0.1 >/dev/null' || { ip netns del $ns; return 1; }
	ip netns del $ns || return 1
}

nfg_stressor churn rs_st_churn
nfg_stressor swaps rs_st_swaps
nfg_stressor lifecycle rs_st_lifecycle
nfg_stressor dumpdestroy rs_st_dumpdestroy
nfg_stressor rules rs_st_rules
nfg_stressor netns rs_st_netns
