#!/bin/bash
# Exact counts at every packet, no settle time (issue 28): in the server's
# mangle INPUT, one kconnlimit table (--kconnlimit-name) shared by a TCP
# rule and a UDP rule, "--kconnlimit-above 2 -j TOS --set-tos 0x04", no
# --syn (every packet of the connections, resets included, passes it).
# nfg-kcl-race strict drives six sources (three IPv4, three IPv6, each its
# own key), each with a UDP flow and a random number of TCP connections that
# hovers around the limit: opens (half of them reusing the source port of
# the source's last closed connection), resets and FIN exchanges, one after
# the other with no clock tick between them; after each event a datagram of
# the source's flow. The verdict of every SYN (its TOS byte, read by the
# server with TCP_SAVED_SYN) and of every datagram (IP_RECVTOS /
# IPV6_RECVTCLASS) must be the client's own count's: a connection that
# ended no longer counts for the very next packet of its key.
# Part "smp": two such clients at once, pinned to the guest's two CPUs,
# with locks=1 (every key of the table behind one slot lock): a packet
# whose key's lock is held by the other CPU still gets its exact count.
# Mainline connlimit is lazier than this (nf_conncount checks a key's list
# at most once a jiffy, and skips it when another CPU holds the key's lock):
# it cannot share a table between the TCP and UDP rules and is not run here
# (kconnlimit_hardening part exact compares it, one tick between events).
# IPv4 rules with iptables-legacy, IPv6 with ip6tables-nft.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need iptables-legacy ip6tables-nft taskset nfg-kcl-race

nfg_load_modules xt_kconnlimit
p=/sys/module/xt_kconnlimit/parameters
nfg_topo_up
old_locks=$(cat $p/locks)
nfg_on_exit "echo $old_locks >$p/locks"
ip -n "$NFG_NS_S" addr add 10.0.2.10/24 dev eth0 || nfg_fail "server address"
ip -n "$NFG_NS_S" addr add fd00:2::10/64 dev eth0 nodad || nfg_fail "server address"
for i in 20 21 22 28 29 30; do
	ip -n "$NFG_NS_C" addr add 10.0.1.$i/24 dev eth0 || nfg_fail "client address"
	ip -n "$NFG_NS_C" addr add fd00:1::$i/64 dev eth0 nodad || nfg_fail "client address"
done
limit=2 events=${NFG_KCL_EVENTS:-1000}

# one table for TCP and UDP to ports 5013-5016 (client k: TCP 5013 + 2k,
# UDP 5014 + 2k)
rules() { # rules -A|-D
	local fam v proto
	for fam in 4 6; do
		v=legacy
		[ $fam = 6 ] && v=nft
		for proto in tcp udp; do
			nfg_ipt "$NFG_NS_S" $v $fam -t mangle "$1" INPUT -p $proto --dport 5013:5016 \
				-m kconnlimit --kconnlimit-above $limit --kconnlimit-name strict \
				-j TOS --set-tos 0x04 || return 1
		done
	done
}

run() { # run NAME LOCKS CPU...: one client per CPU, disjoint sources
	local name=$1 locks=$2 k=0 cpu pids=() rc=0 seed
	shift 2
	echo "$locks" >$p/locks || nfg_fail "locks=$locks"
	rules -A || nfg_fail "rules"
	for cpu; do
		seed=${NFG_KCL_SEED:-$(((RANDOM << 15) | RANDOM))}
		nfg_log "$name: client $k on CPU $cpu, seed $seed (NFG_KCL_SEED=$seed reproduces)"
		taskset -c "$cpu" nfg-kcl-race strict "$seed" "$events" "$NFG_NS_C" "$NFG_NS_S" \
			$((5013 + 2 * k)) $((5014 + 2 * k)) $limit $((8 * k)) >"$NFG_WORK/strict.$k" 2>&1 &
		pids+=($!)
		k=$((k + 1))
	done
	for k in "${!pids[@]}"; do
		wait "${pids[$k]}" || rc=1
		nfg_log "$name: client $k: $(cat "$NFG_WORK/strict.$k")"
	done
	rules -D || nfg_fail "delete rules"
	return $rc
}

bad=""
start=$SECONDS
run one 256 0 || bad+=" one"
nfg_log "part one: $((SECONDS - start)) s"
[ "$(nproc)" -ge 2 ] || nfg_fail "smp: the guest has $(nproc) CPU, two needed"
start=$SECONDS
run smp 1 0 1 || bad+=" smp"
nfg_log "part smp: $((SECONDS - start)) s"
[ -z "$bad" ] || nfg_fail "kconnlimit's verdicts differ from the exact count, parts:$bad"
