#!/bin/bash
# rangeset verdicts with real packets through a router: src, dst and
# inverted matches, IPv4 and IPv6, iptables-legacy and iptables-nft. Each
# verdict is checked both ways (blocked while the address is in the set,
# forwarded again once it is deleted), so a match that always or never hits
# fails here.
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules
nfg_topo_up
nfg_echo_server "$NFG_NS_S" 7000

rs() { nfg_router nfguard set "$@"; }

# reach FAM: can the client open a TCP connection to the server's echo port?
# ping FAM: does an ICMP echo get through? Both cross the router's FORWARD.
# $2 = seconds to wait: generous (a loaded CI host must not turn a slow
# answer into a wrong verdict).
reach() {
	local dst=$NFG_S4
	[ "$1" = 6 ] && dst=$NFG_S6
	nfg_conn_open "probe" "$NFG_NS_C" "$dst" 7000 "$2" || return 1
	nfg_conn_close "probe"
}
pings() {
	local dst=$NFG_S4
	[ "$1" = 6 ] && dst=$NFG_S6
	nfg_client ping -"$1" -c 1 -W "$2" "$dst" >/dev/null 2>&1
}
both_pass() { reach "$1" 30 || nfg_fail "$2: TCP blocked"; pings "$1" 30 || nfg_fail "$2: ping blocked"; }
# both_blocked FAM WHAT: a ping and a TCP connect start (each would wait
# 30 s for an answer); the verdict is the DROP rule (comment "blk") counting
# both, not a timeout running out: then neither may have got through.
dropped() { nfg_ipt_pkts "$NFG_NS_R" "$v" "$1" blk; }
# done waiting: both counted, or a probe ended (an answer, or an error)
both_dropped() { [ "$(dropped "$1")" -ge "$2" ] || ! kill -0 "$ping" 2>/dev/null || ! kill -0 "$tcp" 2>/dev/null; }
both_blocked() {
	local dst=$NFG_S4 n0 ping tcp
	[ "$1" = 6 ] && dst="[$NFG_S6]"
	n0=$(dropped "$1")
	pings "$1" 30 &
	ping=$!
	nfg_client socat -u OPEN:/dev/null "TCP$1:$dst:7000,connect-timeout=30" >/dev/null 2>&1 &
	tcp=$!
	nfg_wait_until 30 both_dropped "$1" $((n0 + 2))
	kill "$ping" "$tcp" 2>/dev/null
	wait "$ping" && nfg_fail "$2: ping passed"
	wait "$tcp" && nfg_fail "$2: TCP passed"
	[ "$(dropped "$1")" -ge $((n0 + 2)) ] || nfg_fail "$2: the DROP rule counted $(($(dropped "$1") - n0)) of a ping and a SYN"
}

for v in legacy nft; do
	for fam in 4 6; do
		if [ $fam = 4 ]; then
			famname=ipv4 cnet=10.0.1.0/29 cip=$NFG_C4 sip=$NFG_S4 other=192.0.2.0/24
			crange=10.0.1.1-10.0.1.3
		else
			famname=ipv6 cnet=fd00:1::/120 cip=$NFG_C6 sip=$NFG_S6 other=2001:db8::/32
			crange=fd00:1::1-fd00:1::3
		fi
		t="$v/ipv$fam"
		nfg_log "$t"
		rs create blk "$famname" || nfg_fail "$t: create"
		rs add blk "$other" || nfg_fail "$t: add"

		# src: client not in the set -> forwarded; in the set -> dropped
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -m rangeset --match-set blk src -m comment --comment blk -j DROP ||
			nfg_fail "$t: src rule refused"
		both_pass $fam "$t src, client not in set"
		rs add blk "$crange" || nfg_fail "$t: add client range"
		both_blocked $fam "$t src, client in set"
		rs del blk "$cip" || nfg_fail "$t: del client (split)"
		both_pass $fam "$t src, client deleted from the middle of a range"
		rs test blk "$cip" && nfg_fail "$t: test says deleted client is in the set"
		nfg_assert_ok "$t: neighbours stay after split" rs test blk "${crange%-*}"
		nfg_ipt "$NFG_NS_R" $v $fam -F FORWARD

		# dst: server address in the set -> dropped (replies are not checked:
		# the rule is on dst only, so the client's SYN is what gets dropped)
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -m rangeset --match-set blk dst -m comment --comment blk -j DROP ||
			nfg_fail "$t: dst rule refused"
		both_pass $fam "$t dst, server not in set"
		rs add blk "$sip" || nfg_fail "$t: add server"
		both_blocked $fam "$t dst, server in set"
		rs flush blk || nfg_fail "$t: flush"
		both_pass $fam "$t dst, after flush"
		nfg_ipt "$NFG_NS_R" $v $fam -F FORWARD

		# inverted: drop everything whose source is NOT in the allowlist
		rs add blk "$cnet" || nfg_fail "$t: add client net"
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -m rangeset ! --match-set blk src -m comment --comment blk -j DROP ||
			nfg_fail "$t: inverted rule refused"
		both_pass $fam "$t ! src, client allowlisted"
		rs del blk "$cnet" || nfg_fail "$t: del client net"
		both_blocked $fam "$t ! src, client no longer allowlisted"
		nfg_ipt "$NFG_NS_R" $v $fam -F FORWARD

		# the set counted the lookups above and some of them hit
		out=$(rs list blk) || nfg_fail "$t: list"
		lookups=$(printf '%s\n' "$out" | sed -n 's/^Lookups: *//p')
		hits=$(printf '%s\n' "$out" | sed -n 's/^Hits: *//p')
		nfg_assert_ge "${lookups:-0}" 10 "$t: lookups counted"
		nfg_assert_ge "${hits:-0}" 2 "$t: hits counted"
		rs destroy blk || nfg_fail "$t: destroy after rules are gone"
	done
done

# IPv4 rule on an IPv6 set (and the reverse) is refused by the plugin,
# naming the set.
rs create only6 ipv6
err=$(nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -m rangeset --match-set only6 src -j DROP 2>&1) &&
	nfg_fail "ipv4 rule on an ipv6 set accepted"
nfg_assert_match 'only6' "$err" "family mismatch message names the set"
rs destroy only6
