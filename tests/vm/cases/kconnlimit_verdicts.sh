#!/bin/bash
# nfg-case-timeout: 2400
# kconnlimit gives mainline connlimit's verdicts on real TCP connections
# through a router: every scenario runs once with "-m connlimit --connlimit-*"
# and once with "-m kconnlimit --kconnlimit-*" (same options renamed) on the
# same connection pattern, and both must produce the expected sequence of
# allowed (1) / refused (0) connections. Scenarios: above N (N allowed, N+1
# refused), upto N (ACCEPT up to N, the rest rejected), mask grouping (two
# client addresses in one /24 or /64 share one budget), daddr mode (the budget
# is per server address), closing a connection frees its place, conntrack -D
# and conntrack -F free places. IPv4 and IPv6, iptables-legacy and
# iptables-nft (every scenario on legacy IPv4 and nft IPv6, "above" on the
# other two pairs: the kernel path is per family, not per front end, and the
# plugins' encodings of every option are in tests/xt/*kconnlimit.t).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need socat conntrack iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft

nfg_load_modules xt_kconnlimit
nfg_topo_up
port=5001
nfg_echo_server "$NFG_NS_S" $port
# a second client address in the client's /24 (/64), a second server address
ip -n "$NFG_NS_C" addr add 10.0.1.3/24 dev eth0 || nfg_fail "client 2nd IPv4"
ip -n "$NFG_NS_C" addr add fd00:1::3/64 dev eth0 nodad || nfg_fail "client 2nd IPv6"
ip -n "$NFG_NS_S" addr add 10.0.2.3/24 dev eth0 || nfg_fail "server 2nd IPv4"
ip -n "$NFG_NS_S" addr add fd00:2::3/64 dev eth0 nodad || nfg_fail "server 2nd IPv6"
nfg_wait_until 30 nfg_client ping -c 1 -W 1 10.0.2.3 >/dev/null || nfg_fail "2nd server IPv4 unreachable"
nfg_wait_until 30 nfg_client ping -6 -c 1 -W 1 fd00:2::3 >/dev/null || nfg_fail "2nd server IPv6 unreachable"

# try ID SRC DST: open a held connection from SRC (bound) to DST:port,
# proven by an echo; fails when refused (REJECT: at once).
try() {
	local id=$1 src=$2 dst=$3
	# nfg_conn_open builds "TCP4:ADDR:PORT" / "TCP6:[ADDR]:PORT": the bind
	# option rides on the port
	if [[ $dst == *:* ]]; then
		nfg_conn_open "$id" "$NFG_NS_C" "$dst" "$port,bind=[$src]" 30
	else
		nfg_conn_open "$id" "$NFG_NS_C" "$dst" "$port,bind=$src" 30
	fi
}
# open ID SRC DST: append 1 (allowed) or 0 (refused) to R.
open() { if try "$@"; then R+=1; else R+=0; fi; }
# reopen ID SRC DST: like open, but retries for a while until allowed (the
# place of a connection just closed is given back within a GC pass).
reopen() {
	local end=$((${EPOCHREALTIME/./} + 20000000))
	until try "$@"; do
		[ "${EPOCHREALTIME/./}" -lt $end ] || { R+=0; return 0; }
		nfg_sleep 0.1
	done
	R+=1
}
closeall() { local id; for id in "$@"; do nfg_conn_close "$id"; done; }

# ext EXT OPT...: "-m EXT" with --OPT turned into --EXT-OPT
ext() {
	local e=$1 o out=(-m "$1")
	shift
	for o; do
		if [[ $o == --* ]]; then out+=("--$e-${o#--}"); else out+=("$o"); fi
	done
	printf '%s\n' "${out[@]}"
}

rules() { # rules EXT -A|-D: the rule set of the current scenario
	local e=$1 op=$2 r
	r=$(ext "$e" "${lim[@]}")
	mapfile -t m <<<"$r"
	if [ "$mode" = upto ]; then
		nfg_ipt "$NFG_NS_R" $v $fam "$op" FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT &&
		nfg_ipt "$NFG_NS_R" $v $fam "$op" FORWARD -p tcp --syn --dport $port "${m[@]}" -j ACCEPT &&
		nfg_ipt "$NFG_NS_R" $v $fam "$op" FORWARD -p tcp --dport $port -j REJECT --reject-with tcp-reset
	else
		nfg_ipt "$NFG_NS_R" $v $fam "$op" FORWARD -p tcp --syn --dport $port "${m[@]}" \
			-j REJECT --reject-with tcp-reset
	fi
}

# scenario NAME EXT: run one connection pattern, verdicts in R
scenario() {
	local name=$1 e=$2
	R=""
	nfg_router conntrack -F >/dev/null 2>&1
	case $name in
	above) # above 2, /32: 2 allowed, 3rd refused; close one -> one more
		mode=above lim=(--above 2 --mask "$plen")
		rules "$e" -A || nfg_fail "$e rules"
		open a "$c1" "$s1"; open b "$c1" "$s1"; open c "$c1" "$s1"
		nfg_assert_ok "$e: 1st connection still carries bytes" nfg_conn_send a "still here"
		nfg_conn_close a
		reopen d "$c1" "$s1"; open e "$c1" "$s1"
		closeall a b c d e ;;
	upto) # upto 2 -j ACCEPT, then REJECT: same numbers, other polarity
		mode=upto lim=(--upto 2 --mask "$plen")
		rules "$e" -A || nfg_fail "$e rules"
		open a "$c1" "$s1"; open b "$c1" "$s1"; open c "$c1" "$s1"
		nfg_conn_close b
		reopen d "$c1" "$s1"; open e "$c1" "$s1"
		closeall a b c d e ;;
	mask) # above 2 per /24 (/64): two client addresses share one budget
		mode=above lim=(--above 2 --mask "$pnet")
		rules "$e" -A || nfg_fail "$e rules"
		open a "$c1" "$s1"; open b "$c2" "$s1"; open c "$c2" "$s1"; open d "$c1" "$s1"
		closeall a b c d ;;
	daddr) # above 1 per destination address: each server has its own budget
		mode=above lim=(--above 1 --mask "$plen" --daddr)
		rules "$e" -A || nfg_fail "$e rules"
		open a "$c1" "$s1"; open b "$c2" "$s1"; open c "$c1" "$s2"; open d "$c2" "$s2"
		closeall a b c d ;;
	flush) # above 2: conntrack -D of one client's entries, then -F, free places
		mode=above lim=(--above 2 --mask "$pnet")
		rules "$e" -A || nfg_fail "$e rules"
		open a "$c1" "$s1"; open b "$c2" "$s1"; open c "$c1" "$s1"
		nfg_router conntrack -D -s "$c2" >/dev/null 2>&1 || nfg_fail "conntrack -D -s $c2"
		reopen d "$c1" "$s1"; open e "$c1" "$s1"
		nfg_router conntrack -F >/dev/null 2>&1 || nfg_fail "conntrack -F"
		reopen f "$c2" "$s1"; open g "$c2" "$s1"; open h "$c2" "$s1"
		closeall a b c d e f g h ;;
	esac
	rules "$e" -D || nfg_fail "$e: delete rules"
}

declare -A expect=([above]=11010 [upto]=11010 [mask]=1100 [daddr]=1010 [flush]=11010110)
# Every scenario with iptables-legacy on IPv4 and iptables-nft on IPv6 (the
# match's kernel code is the same for both front ends); the two other pairs
# run one scenario (the match's family path through the other front end).
for vf in legacy/4 nft/6 legacy/6 nft/4; do
	v=${vf%/*} fam=${vf#*/}
	scen=(above upto mask daddr flush)
	case $vf in legacy/6 | nft/4) scen=(above) ;; esac
	if [ $fam = 4 ]; then
		c1=$NFG_C4 c2=10.0.1.3 s1=$NFG_S4 s2=10.0.2.3 plen=32 pnet=24
	else
		c1=$NFG_C6 c2=fd00:1::3 s1=$NFG_S6 s2=fd00:2::3 plen=128 pnet=64
	fi
	for s in "${scen[@]}"; do
		scenario $s connlimit
		mainline=$R
		scenario $s kconnlimit
		ours=$R
		nfg_log "$v IPv$fam $s: connlimit $mainline, kconnlimit $ours (expected ${expect[$s]})"
		nfg_assert_eq "${expect[$s]}" "$mainline" "$v IPv$fam $s: mainline connlimit verdicts"
		nfg_assert_eq "$mainline" "$ours" "$v IPv$fam $s: kconnlimit verdicts vs connlimit"
	done
done
