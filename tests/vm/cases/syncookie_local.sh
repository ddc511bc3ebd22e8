#!/bin/bash
# nfg-case-timeout: 1200
# SYNCOOKIE --mode local protects a web server's listener (the man page's
# "local web server" ruleset: one rule in the server's raw PREROUTING, no
# sysctl change) against a spoofed-source SYN flood, for IPv4 and IPv6,
# with iptables-legacy and iptables-nft. While the flood runs:
#  - a real client fetches a 2 MB file several times and every fetch is
#    complete and intact (sha256);
#  - the flood leaves no per-SYN state on the server: no SYN_RECV socket,
#    conntrack (active in the server) does not grow with it, and every flood
#    SYN was answered by a cookie (cookie_sent counter);
#  - the client's first connection is validated by its cookie ACK
#    (ack_valid) and puts it on the allowlist (allowlist add, visible in
#    "nfguard syncookie allowlist list"); its next connection takes the
#    allowlist path (allowlist_hit);
#  - a bogus-ACK flood (random sources, random cookies) is dropped and
#    counted (ack_invalid) and the server's TCP never sees it (no RST);
# and crafted handshakes (scapy) without timestamps, without SACK, without
# window scaling and with MSS 536 each complete and get a socket, the
# SYN-ACK's MSS is the rule's --mss, and window scale / SACK are offered
# exactly when they can be remembered (inside the timestamp).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need hping3 nfg-tcpflood curl python3 conntrack ss iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
port=8080
mss=1400
www=$NFG_WORK/www
mkdir -p "$www" || nfg_fail "mkdir"
head -c 2000000 /dev/urandom >"$www/blob" || nfg_fail "test file"
echo small >"$www/small"
want=$(nfg_sha256 "$www/blob")
nfg_http_server "$NFG_NS_S" $port "$www"
# spoofed sources must get through the router
nfg_router sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
	net.ipv4.conf.eth0.rp_filter=0 >/dev/null || nfg_fail "rp_filter"
# conntrack active in the server: it must not grow with the flood
nfg_ipt "$NFG_NS_S" legacy 4 -A INPUT -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || nfg_fail "ct rule"
nfg_ipt "$NFG_NS_S" legacy 6 -A INPUT -m conntrack --ctstate NEW,ESTABLISHED -j ACCEPT || nfg_fail "ct rule 6"
# counts the server's RSTs (a bogus ACK reaching TCP would draw one)
nfg_ipt "$NFG_NS_S" legacy 4 -A OUTPUT -p tcp --tcp-flags RST RST -m comment --comment rst || nfg_fail "rst rule"
nfg_ipt "$NFG_NS_S" legacy 6 -A OUTPUT -p tcp --tcp-flags RST RST -m comment --comment rst || nfg_fail "rst rule 6"
# crafted handshakes come from a second client address whose kernel must
# not reset the SYN-ACKs scapy handles (deprecated IPv6 address: never
# chosen as a source, the client's own connections keep fd00:1::2)
ip -n "$NFG_NS_C" addr add 10.0.1.77/24 dev eth0 || nfg_fail "client 2nd IPv4"
ip -n "$NFG_NS_C" addr add fd00:1::77/64 dev eth0 nodad preferred_lft 0 || nfg_fail "client 2nd IPv6"
nfg_ipt "$NFG_NS_C" legacy 4 -A OUTPUT -s 10.0.1.77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst"
nfg_ipt "$NFG_NS_C" legacy 6 -A OUTPUT -s fd00:1::77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst 6"

statf=$NFG_WORK/stat
snap() { nfg_server cat /proc/net/stat/nfguard_syncookie >"$statf" || nfg_fail "read counters"; }
stat() { nfg_kv "$statf" "$1"; }
# the SYN-ACKs since the round's start were all sent in place
inplace_all() { snap; [ $(($(stat sent_inplace) - inp0)) -eq $(($(stat cookie_sent) - before)) ]; }
cookies_at_least() { snap; [ "$(stat cookie_sent)" -ge "$1" ]; }
invalid_at_least() { snap; [ "$(stat ack_invalid)" -ge "$1" ]; }
sc() { nfg_server nfguard syncookie "$@"; }

fetch() { # fetch ADDR: one complete, intact download
	local url=http://$1:$port/blob
	[[ $1 == *:* ]] && url="http://[$1]:$port/blob"
	nfg_fetch_intact "$url" "$want"
}

round() { # round legacy|nft 4|6
	local v=$1 fam=$2 dst cli craft flood before inp0 n hit rst0 ct routed

	if [ "$fam" = 4 ]; then dst=$NFG_S4 cli=$NFG_C4 craft=10.0.1.77; else dst=$NFG_S6 cli=$NFG_C6 craft=fd00:1::77; fi
	nfg_log "== $v IPv$fam"
	nfg_assert_ok "rule" nfg_ipt "$NFG_NS_S" "$v" "$fam" -t raw -A PREROUTING -p tcp --dport $port \
		-j SYNCOOKIE --mode local --mss $mss --sack-perm --timestamp
	nfg_assert_ok "flush allowlist" sc allowlist flush
	snap
	before=$(stat cookie_sent) inp0=$(stat sent_inplace)
	ct=$(nfg_server conntrack -C)

	# spoofed SYN flood, running during the fetches. The sources are off
	# link for the router, which has no route back to them (hping3's
	# random IPv4 sources, fd00:99::/64): spoofing the client's own
	# prefix would fill the router's neighbour table with an incomplete
	# entry per source, and once the client's entry aged out the router
	# could not resolve it again (fetch timeouts, "ndisc_cache: neighbor
	# table overflow", seen on 6.1)
	if [ "$fam" = 4 ]; then
		nfg_bg "$NFG_NS_C" hping3 -q -S -p $port --rand-source -i u1000 "$dst"
	else
		nfg_bg "$NFG_NS_C" nfg-tcpflood -i 1000 "$dst" $port S fd00:99::/64
	fi
	flood=$NFG_LAST_PID
	nfg_wait_until 120 cookies_at_least $((before + 200)) || nfg_fail "flood SYNs not answered with cookies"
	nfg_log "flood answered; fetching"

	snap
	n=$(stat ack_valid)
	fetch "$dst"
	snap
	nfg_assert_ge "$(stat ack_valid)" $((n + 1)) "ack_valid after the first fetch"
	nfg_assert_match "^$cli/(32|128) expires-in [0-9]+" "$(sc allowlist list | grep "^$cli/")" "client on the allowlist"
	hit=$(stat allowlist_hit)
	fetch "$dst"
	fetch "$dst"
	snap
	nfg_assert_ge "$(stat allowlist_hit)" $((hit + 2)) "allowlist_hit (next connections)"
	nfg_assert_eq 0 "$(nfg_server ss -Htn state syn-recv | wc -l)" "SYN_RECV sockets on the server during the flood"
	nfg_assert_ge "$(stat cookie_sent)" $((before + 200)) "cookies sent"
	nfg_assert_le "$(nfg_server conntrack -C)" $((ct + 20)) "server conntrack entries during the flood"
	kill "$flood" 2>/dev/null
	wait "$flood" 2>/dev/null
	# every SYN came in a unicast Ethernet frame: all answered in place
	nfg_wait_until 10 inplace_all || nfg_fail "SYN-ACKs sent in place: $(($(stat sent_inplace) - inp0)) of $(($(stat cookie_sent) - before))"

	# bogus ACKs: dropped, counted, never reach TCP. A counter rule before
	# SYNCOOKIE sees the ACKs that reach the server from anyone but the
	# client (routing drops the odd martian source hping3 picks)
	nfg_log "bogus-ACK flood"
	nfg_assert_ok "ack counter" nfg_ipt "$NFG_NS_S" "$v" "$fam" -t raw -I PREROUTING ! -s "$cli" \
		-p tcp -m comment --comment acks -m tcp --tcp-flags SYN,ACK,RST ACK --dport $port
	snap
	n=$(stat ack_invalid)
	rst0=$(nfg_ipt_pkts "$NFG_NS_S" legacy "$fam" rst)
	if [ "$fam" = 4 ]; then
		nfg_bg "$NFG_NS_C" hping3 -q -A -p $port --rand-source -i u2000 -c 300 "$dst"
	else
		nfg_bg "$NFG_NS_C" nfg-tcpflood -i 2000 -c 300 "$dst" $port A fd00:99::/64
	fi
	wait "$NFG_LAST_PID"
	acks_counted() {
		snap
		[ $(($(stat ack_invalid) - n)) -eq "$(nfg_ipt_pkts "$NFG_NS_S" "$v" "$fam" acks)" ]
	}
	nfg_wait_until 30 acks_counted ||
		nfg_fail "bogus ACKs: ack_invalid +$(($(stat ack_invalid) - n)), $(nfg_ipt_pkts "$NFG_NS_S" "$v" "$fam" acks) arrived"
	nfg_assert_ge "$(($(stat ack_invalid) - n))" 250 "bogus ACKs counted"
	nfg_assert_eq "$rst0" "$(nfg_ipt_pkts "$NFG_NS_S" legacy "$fam" rst)" "server RSTs during the bogus-ACK flood"
	nfg_assert_ok "ack counter delete" nfg_ipt "$NFG_NS_S" "$v" "$fam" -t raw -D PREROUTING 1

	# crafted handshakes (legacy rounds: the rule is the same either way)
	if [ "$v" = legacy ]; then
		nfg_log "crafted handshakes"
		# one python for all (each with an empty allowlist first); IPv4
		# also a SYN with IP options: answered by the routed path
		local variants=full,nots,nosack,nows,mss536
		[ "$fam" = 4 ] && variants+=,ipopt
		snap
		routed=$(($(stat cookie_sent) - $(stat sent_inplace)))
		nfg_assert_ok "handshakes $variants IPv$fam" nfg_client python3 \
			"$NFG_TOP/tests/vm/cases/syncookie_handshakes.py" "$craft" "$dst" $port \
			$variants $mss local -- ip netns exec "$NFG_NS_S" nfguard syncookie allowlist flush
		snap
		[ "$fam" = 6 ] || nfg_assert_ge $(($(stat cookie_sent) - $(stat sent_inplace))) $((routed + 1)) \
			"SYN-ACKs by the routed path (the SYN with IP options)"
	fi
	nfg_assert_ok "rule delete" nfg_ipt "$NFG_NS_S" "$v" "$fam" -t raw -D PREROUTING -p tcp --dport $port \
		-j SYNCOOKIE --mode local --mss $mss --sack-perm --timestamp
}

round legacy 4
round legacy 6
round nft 4
round nft 6
nfg_log "ok"
