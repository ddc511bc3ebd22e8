#!/bin/bash
# nfg-case-timeout: 900
# SYNCOOKIE in proxy mode (the default) under a spoofed-source SYN flood,
# with the man page's two rulesets, each one rule per family and no sysctl
# change:
#  - "router": the rule in the router's raw PREROUTING protects the server
#    behind it (IPv4 with iptables-legacy, IPv6 with iptables-nft);
#  - "local web server": the rule in the server's own raw PREROUTING
#    (IPv4 with iptables-nft, IPv6 with iptables-legacy).
# While the flood runs:
#  - a real client downloads a 2 MB file, intact (sha256), through a
#    connection the target opened to the server on its behalf (ack_valid,
#    proxied), which put it on the allowlist; its next connection takes the
#    allowlist path (allowlist_hit) and is intact too;
#  - the protecting box's conntrack table does not grow with the flood,
#    every flood SYN is answered with a cookie, and no spoofed packet
#    reaches the server's TCP;
#  - a bogus-ACK flood is dropped and counted (ack_invalid), and none of it
#    reaches the server;
# and through the router, crafted handshakes (scapy) without timestamps,
# without SACK, without window scaling and with MSS 536 each complete, the
# SYN-ACK's MSS is the rule's --mss and its window zero.
# Finally the netns are deleted with proxy rules still in place: the
# allowlists are freed (live_objects back to its baseline) and the module
# unloads.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need hping3 nfg-tcpflood curl python3 conntrack iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft

nfg_load_modules xt_SYNCOOKIE
live() { cat /sys/module/xt_SYNCOOKIE/parameters/live_objects; }
base=$(live)
nfg_topo_up
port=8080
www=$NFG_WORK/www
mkdir -p "$www" || nfg_fail "mkdir"
head -c 2000000 /dev/urandom >"$www/blob" || nfg_fail "test file"
echo small >"$www/small"
want=$(nfg_sha256 "$www/blob")
nfg_http_server "$NFG_NS_S" $port "$www"
# the cookie SYN-ACKs to the flood's random sources go towards the client
# (which drops them); IPv6 flood sources come from fd00:99::/64
nfg_router ip route add default via "$NFG_C4" || nfg_fail "router default route"
nfg_router ip -6 route add fd00:99::/64 via "$NFG_C6" || nfg_fail "router flood route"
# counts what reaches the server's TCP from anyone but the client
nfg_ipt "$NFG_NS_S" legacy 4 -A INPUT ! -s "$NFG_C4" -p tcp --dport $port -m comment --comment spoofed ||
	nfg_fail "spoofed counter"
nfg_ipt "$NFG_NS_S" legacy 6 -A INPUT ! -s "$NFG_C6" -p tcp --dport $port -m comment --comment spoofed ||
	nfg_fail "spoofed counter 6"

# crafted handshakes come from a second client address whose kernel must
# not reset the SYN-ACKs scapy handles (deprecated IPv6 address: never
# chosen as a source)
ip -n "$NFG_NS_C" addr add 10.0.1.77/24 dev eth0 || nfg_fail "client 2nd IPv4"
ip -n "$NFG_NS_C" addr add fd00:1::77/64 dev eth0 nodad preferred_lft 0 || nfg_fail "client 2nd IPv6"
nfg_ipt "$NFG_NS_C" legacy 4 -A OUTPUT -s 10.0.1.77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst"
nfg_ipt "$NFG_NS_C" legacy 6 -A OUTPUT -s fd00:1::77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst 6"

statf=$NFG_WORK/stat
snap() { nfg_in "$ns" cat /proc/net/stat/nfguard_syncookie >"$statf" || nfg_fail "read counters"; }
stat() { nfg_kv "$statf" "$1"; }
# the SYN-ACKs since the round's start were all sent in place
inplace_all() { snap; [ $(($(stat sent_inplace) - inp0)) -eq $(($(stat cookie_sent) - before)) ]; }
cookies_at_least() { snap; [ "$(stat cookie_sent)" -ge "$1" ]; }
invalid_at_least() { snap; [ "$(stat ack_invalid)" -ge "$1" ]; }
sc() { nfg_in "$ns" nfguard syncookie "$@"; }

fetch() { # fetch ADDR: one complete, intact download
	local url=http://$1:$port/blob
	[[ $1 == *:* ]] && url="http://[$1]:$port/blob"
	nfg_fetch_intact "$url" "$want"
}

round() { # round router|server legacy|nft 4|6
	local where=$1 v=$2 fam=$3 dst cli rule flood before inp0 n hit ct spoofed routed

	if [ "$fam" = 4 ]; then dst=$NFG_S4 cli=$NFG_C4; else dst=$NFG_S6 cli=$NFG_C6; fi
	if [ "$where" = router ]; then
		ns=$NFG_NS_R
		# the man page's router ruleset
		rule=(-t raw -A PREROUTING -i eth0 -p tcp -d "$dst" --dport "$port" -j SYNCOOKIE
			--mss $((fam == 4 ? 1460 : 1440)) --wscale 7 --sack-perm --timestamp)
	else
		ns=$NFG_NS_S
		# the man page's local web server ruleset
		rule=(-t raw -A PREROUTING -p tcp -m multiport --dports "$port" -j SYNCOOKIE
			--sack-perm --timestamp)
	fi
	nfg_log "== $where $v IPv$fam"
	nfg_assert_ok "rule" nfg_ipt "$ns" "$v" "$fam" "${rule[@]}"
	nfg_assert_match "-j SYNCOOKIE --mode proxy" "$(nfg_in "$ns" "ip${fam/4/}tables-$v-save" -t raw)" "saved rule"
	nfg_assert_ok "flush allowlist" sc allowlist flush
	spoofed=$(nfg_ipt_pkts "$NFG_NS_S" legacy "$fam" spoofed)
	snap
	before=$(stat cookie_sent) inp0=$(stat sent_inplace)
	ct=$(nfg_in "$ns" conntrack -C)

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
	p=$(stat proxied)
	fetch "$dst"
	snap
	nfg_assert_ge "$(stat ack_valid)" $((n + 1)) "ack_valid after the first fetch"
	nfg_assert_ge "$(stat proxied)" $((p + 1)) "proxied after the first fetch"
	nfg_assert_match "^$cli/(32|128) expires-in [0-9]+" "$(sc allowlist list | grep "^$cli/")" "client on the allowlist"
	hit=$(stat allowlist_hit)
	fetch "$dst"
	snap
	nfg_assert_ge "$(stat allowlist_hit)" $((hit + 1)) "allowlist_hit (next connection)"
	# the flood keeps running: well past the 200 SYNs above by now
	nfg_wait_until 120 cookies_at_least $((before + 500)) || nfg_fail "flood stalled"
	nfg_assert_le "$(nfg_in "$ns" conntrack -C)" $((ct + 10)) "conntrack entries of the $where during the flood"
	nfg_assert_eq "$spoofed" "$(nfg_ipt_pkts "$NFG_NS_S" legacy "$fam" spoofed)" "spoofed packets that reached the server"
	kill "$flood" 2>/dev/null
	wait "$flood" 2>/dev/null
	# every SYN came in a unicast Ethernet frame: all answered in place
	nfg_wait_until 10 inplace_all || nfg_fail "SYN-ACKs sent in place: $(($(stat sent_inplace) - inp0)) of $(($(stat cookie_sent) - before))"

	nfg_log "bogus-ACK flood"
	snap
	n=$(stat ack_invalid)
	if [ "$fam" = 4 ]; then
		nfg_bg "$NFG_NS_C" hping3 -q -A -p $port --rand-source -i u2000 -c 300 "$dst"
	else
		nfg_bg "$NFG_NS_C" nfg-tcpflood -i 2000 -c 300 "$dst" $port A fd00:99::/64
	fi
	wait "$NFG_LAST_PID"
	nfg_wait_until 30 invalid_at_least $((n + 250)) ||
		nfg_fail "bogus ACKs: ack_invalid +$(($(stat ack_invalid) - n)) of 300"
	nfg_assert_eq "$spoofed" "$(nfg_ipt_pkts "$NFG_NS_S" legacy "$fam" spoofed)" "bogus ACKs that reached the server"

	# crafted handshakes (scapy) through the router: each option set works,
	# the SYN-ACK's MSS is the rule's
	if [ "$where" = router ]; then
		local craft=10.0.1.77 variants=(full nots nosack nows mss536 ipopt)
		[ "$fam" = 6 ] && craft=fd00:1::77 variants=(full)
		# one python for all of them (each with an empty allowlist first)
		snap
		routed=$(($(stat cookie_sent) - $(stat sent_inplace)))
		nfg_assert_ok "handshakes ${variants[*]} IPv$fam" nfg_client python3 \
			"$NFG_TOP/tests/vm/cases/syncookie_handshakes.py" "$craft" "$dst" $port \
			"$(IFS=,; echo "${variants[*]}")" $((fam == 4 ? 1460 : 1440)) proxy \
			-- ip netns exec "$ns" nfguard syncookie allowlist flush
		snap
		# IPv4: the SYN with IP options was answered by the routed path
		[ "$fam" = 6 ] || nfg_assert_ge $(($(stat cookie_sent) - $(stat sent_inplace))) $((routed + 1)) \
			"SYN-ACKs by the routed path (the SYN with IP options)"
	fi
	rule[2]=-D
	nfg_assert_ok "rule delete" nfg_ipt "$ns" "$v" "$fam" "${rule[@]}"
}

round router legacy 4
round router nft 6
round server nft 4
round server legacy 6

# netns teardown with proxy rules in place; then rmmod
nfg_assert_ok "rule" nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING -p tcp -j SYNCOOKIE
nfg_assert_ok "rule 6" nfg_ipt "$NFG_NS_R" nft 6 -t raw -A PREROUTING -p tcp -j SYNCOOKIE
nfg_assert_ok "add" nfg_router nfguard syncookie allowlist add 10.9.2.1
nfg_topo_down
at_base() { [ "$(live)" -eq "$base" ]; }
nfg_wait_until 60 at_base || nfg_fail "live_objects $(live) after netns teardown, baseline $base"
rmmod xt_SYNCOOKIE || nfg_fail "rmmod xt_SYNCOOKIE"
nfg_assert_fail "module gone" test -e /sys/module/xt_SYNCOOKIE
nfg_log "ok"
