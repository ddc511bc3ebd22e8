#!/bin/bash
# kconnlimit hardening (issue 21), on real TCP connections through the
# router:
# - nfqueue: a kconnlimit rule followed by NFQUEUE (and kconnlimit in the
#   NFQUEUE rule itself), with a reader that accepts every packet: the
#   connections complete (the table holds no reference on unconfirmed
#   conntracks, which nfnetlink_queue drops since 6.11 and its backports)
#   and the limit is still enforced. IPv4 legacy and IPv6 nft.
# - zones: one client address in two conntrack zones (-j CT --zone) has one
#   budget per zone, as mainline connlimit (compared on the same pattern).
# - cap: max_conns is per netns: one netns at its cap drops its own new
#   connections (cap_hits) but not those of another netns; max_conns above
#   LONG_MAX means "no cap", not "drop everything"; rule instance ids are
#   numbered per netns (they must not show another netns's activity).
# Each part runs on its own (separate ports and rules) and every failing
# part is reported.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need socat conntrack iptables-legacy iptables-nft ip6tables-nft nfg-kcl-nfqueue

nfg_load_modules xt_kconnlimit
modprobe nfnetlink_queue || nfg_fail "modprobe nfnetlink_queue"
p=/sys/module/xt_kconnlimit/parameters
nfg_topo_up
for port in 5001 5002 5003 5004 5005; do nfg_echo_server "$NFG_NS_S" $port; done

# open ID DST PORT [SECS]: append 1 (connected, echo seen) or 0 to R
open() { if nfg_conn_open "$1" "$NFG_NS_C" "$2" "$3" "${4:-30}"; then R+=1; else R+=0; fi; }
closeall() { local id; for id in "$@"; do nfg_conn_close "$id"; done; }
rtr() { nfg_ipt "$NFG_NS_R" "$@" || nfg_fail "router rule: $*"; }

# A SYN the kernel drops after the reader accepted it is never answered:
# wait a few seconds, not the default 30, before calling it refused. The
# assertions below need the connection to be made, so a short wait only
# makes a broken kernel fail sooner.
part_nfqueue() {
	local ready=$NFG_WORK/nfq.ready v fam dst
	nfg_bg "$NFG_NS_R" nfg-kcl-nfqueue 7 "$ready"
	nfg_wait_until 60 test -s "$ready" || nfg_fail "nfqueue reader not bound"
	for vf in legacy/4 nft/6; do
		v=${vf%/*} fam=${vf#*/}
		dst=$NFG_S4
		[ "$fam" = 6 ] && dst=$NFG_S6
		nfg_router conntrack -F >/dev/null 2>&1
		if [ "$fam" = 4 ]; then
			# kconnlimit in one rule, NFQUEUE in the next
			rtr $v $fam -A FORWARD -p tcp --syn --dport 5001 -m kconnlimit \
				--kconnlimit-above 2 -j REJECT --reject-with tcp-reset
			rtr $v $fam -A FORWARD -p tcp --syn --dport 5001 -j NFQUEUE --queue-num 7
		else
			# kconnlimit in the NFQUEUE rule itself
			rtr $v $fam -A FORWARD -p tcp --syn --dport 5001 -m kconnlimit \
				--kconnlimit-upto 2 -j NFQUEUE --queue-num 7
			rtr $v $fam -A FORWARD -p tcp --syn --dport 5001 -j REJECT --reject-with tcp-reset
		fi
		local before
		before=$(cat "$ready")
		R=""
		open q1 "$dst" 5001 10; open q2 "$dst" 5001 10; open q3 "$dst" 5001 10
		nfg_log "nfqueue $v IPv$fam: verdicts $R, queue accepted $(($(cat "$ready") - before)) packets"
		nfg_assert_eq 110 "$R" "$v IPv$fam: kconnlimit + NFQUEUE: 2 connections complete, the 3rd is refused"
		nfg_assert_ge $(($(cat "$ready") - before)) 2 "$v IPv$fam: SYNs that went through the queue"
		closeall q1 q2 q3
		nfg_ipt "$NFG_NS_R" $v $fam -F FORWARD
	done
}

# Zone 1 for port 5002, zone 2 for 5003 (both directions), same client
# address: above 1 per address must give each zone one connection.
part_zones() {
	local e m mainline
	rtr legacy 4 -t raw -A PREROUTING -p tcp --dport 5002 -j CT --zone 1
	rtr legacy 4 -t raw -A PREROUTING -p tcp --sport 5002 -j CT --zone 1
	rtr legacy 4 -t raw -A PREROUTING -p tcp --dport 5003 -j CT --zone 2
	rtr legacy 4 -t raw -A PREROUTING -p tcp --sport 5003 -j CT --zone 2
	for e in connlimit kconnlimit; do
		nfg_router conntrack -F >/dev/null 2>&1
		m=(-m "$e" "--$e-above" 1 "--$e-mask" 32)
		rtr legacy 4 -A FORWARD -p tcp --syn -m multiport --dports 5002,5003 "${m[@]}" \
			-j REJECT --reject-with tcp-reset
		R=""
		open z1a "$NFG_S4" 5002; open z2a "$NFG_S4" 5003
		open z1b "$NFG_S4" 5002; open z2b "$NFG_S4" 5003
		closeall z1a z2a z1b z2b
		nfg_ipt "$NFG_NS_R" legacy 4 -F FORWARD
		nfg_log "zones: $e verdicts $R"
		[ $e = connlimit ] && mainline=$R
	done
	nfg_assert_eq 1100 "$mainline" "zones: mainline connlimit verdicts"
	nfg_assert_eq "$mainline" "$R" "zones: kconnlimit verdicts vs connlimit (one budget per zone)"
	nfg_ipt "$NFG_NS_R" legacy 4 -t raw -F PREROUTING
}

# max_conns=2 per netns: the router holds 2 connections (its cap); the
# server's own rule still remembers a connection; the router's 3rd is
# dropped and counted; then max_conns = 2^64-1 lets it through.
part_cap() {
	local old stat R1
	old=$(cat $p/max_conns)
	nfg_on_exit "echo $old >$p/max_conns"
	echo 2 >$p/max_conns || nfg_fail "set max_conns"
	nfg_router conntrack -F >/dev/null 2>&1
	rtr legacy 4 -A FORWARD -p tcp --syn --dport 5004 -m kconnlimit --kconnlimit-above 100 \
		--kconnlimit-name rcap -j REJECT --reject-with tcp-reset
	nfg_ipt "$NFG_NS_S" legacy 4 -A INPUT -p tcp --syn --dport 5005 -m kconnlimit \
		--kconnlimit-above 100 --kconnlimit-name scap -j REJECT --reject-with tcp-reset ||
		nfg_fail "server rule"
	# ids are per netns: the server netns's first rule is 1 whatever the router did
	nfg_assert_match '^1 scap ' "$(nfg_in "$NFG_NS_S" cat /proc/net/stat/nfguard_kconnlimit | grep scap)" \
		"cap: instance ids are per netns"
	R=""
	open c1 "$NFG_S4" 5004; open c2 "$NFG_S4" 5004
	open s1 "$NFG_S4" 5005
	# must NOT connect: the router's netns is at its cap (short wait)
	open c3 "$NFG_S4" 5004 3
	R1=$R
	stat=$(nfg_in "$NFG_NS_R" cat /proc/net/stat/nfguard_kconnlimit)
	nfg_log "cap: verdicts $R1 (router c1 c2, server s1, router c3 at the cap)"
	nfg_log "cap: $(echo "$stat" | grep rcap)"
	nfg_assert_eq 1110 "$R1" "cap: the router's cap does not drop the server netns's connection"
	nfg_assert_match '^[0-9]+ rcap .* [1-9][0-9]* 0$' "$(echo "$stat" | grep rcap)" \
		"cap: router's cap_hits counted, no alloc_fail"
	echo 18446744073709551615 >$p/max_conns || nfg_fail "set max_conns 2^64-1"
	R=""
	open c4 "$NFG_S4" 5004
	nfg_assert_eq 1 "$R" "cap: max_conns 2^64-1 is no cap"
	closeall c1 c2 s1 c4
	echo "$old" >$p/max_conns
	nfg_ipt "$NFG_NS_R" legacy 4 -F FORWARD
	nfg_ipt "$NFG_NS_S" legacy 4 -F INPUT
}

failed="" n=0
for part in nfqueue zones cap; do
	start=$SECONDS n=$((n + 1))
	# a subshell per part: its connection ids (FIFO names) start apart
	( NFG_CONN_SEQ=$((n * 1000)); "part_$part" ) || failed+=" $part"
	nfg_log "part $part: $((SECONDS - start)) s"
done
[ -z "$failed" ] || nfg_fail "failed parts:$failed"
nfg_ipt "$NFG_NS_R" legacy 4 -F FORWARD
nfg_wait_until 30 eval "[ \$(cat $p/live_objects) = 0 ]" ||
	nfg_fail "live objects $(cat $p/live_objects) after every rule went"
