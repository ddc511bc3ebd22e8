#!/bin/bash
# Malformed packets against a SYNCOOKIE rule get the man page's verdict and
# never crash: SYN+FIN, SYN+RST, SYN with payload, data offset below 5 or
# past the packet, truncated / zero-length / overlong / wrong-length
# options, an IPv4 fragment and an IPv6 extension header are each dropped
# and counted as "malformed" (exactly one count per packet), none draws an
# answer from the server (no SYN-ACK, no RST), and a real client connects
# afterwards. IPv4 and IPv6; no conntrack in the server, so fragments reach
# the target unreassembled. SYNs from multicast, broadcast and loopback sources (IPv4)
# or to a multicast group (IPv6), sent through a rule on the router (before
# its routing drops them), are dropped and counted as malformed, never
# answered.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need python3 curl iptables-legacy ip6tables-legacy

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
port=8080
mkdir -p "$NFG_WORK/www" || nfg_fail "mkdir"
echo hello >"$NFG_WORK/www/index.html" || nfg_fail "www"
nfg_http_server "$NFG_NS_S" $port "$NFG_WORK/www"
ip -n "$NFG_NS_C" addr add 10.0.1.77/24 dev eth0 || nfg_fail "client 2nd IPv4"
ip -n "$NFG_NS_C" addr add fd00:1::77/64 dev eth0 nodad preferred_lft 0 || nfg_fail "client 2nd IPv6"
statf=$NFG_WORK/stat
snap() { nfg_server nfguard syncookie stats >"$statf" || nfg_fail "stats"; }
stat() { nfg_kv "$statf" "$1"; }
for fam in 4 6; do
	if [ "$fam" = 4 ]; then src=10.0.1.77 dst=$NFG_S4; else src=fd00:1::77 dst=$NFG_S6; fi
	nfg_assert_ok "rule" nfg_ipt "$NFG_NS_S" legacy $fam -t raw -A PREROUTING -p tcp --dport $port \
		-j SYNCOOKIE --mode local --sack-perm --timestamp
	# what the server sends back to the malformed source
	nfg_assert_ok "reply counter" nfg_ipt "$NFG_NS_S" legacy $fam -A OUTPUT -d $src -p tcp \
		-m comment --comment replies -m tcp --sport $port
	snap
	m0=$(stat malformed) c0=$(stat cookie_sent)
	sent=$(nfg_client python3 "$NFG_TOP/tests/vm/cases/syncookie_malformed.py" $src "$dst" $port) ||
		nfg_fail "sending malformed packets"
	counted() { snap; [ "$(stat malformed)" -ge $((m0 + sent)) ]; }
	nfg_wait_until 30 counted || nfg_fail "IPv$fam: malformed $(stat malformed), expected $((m0 + sent))"
	nfg_assert_eq $((m0 + sent)) "$(stat malformed)" "IPv$fam: one count per malformed packet"
	nfg_assert_eq "$c0" "$(stat cookie_sent)" "IPv$fam: no cookie for a malformed SYN"
	nfg_assert_eq 0 "$(nfg_ipt_pkts "$NFG_NS_S" legacy $fam replies)" "IPv$fam: server replies to malformed packets"
	url=http://$dst:$port/
	[ "$fam" = 6 ] && url="http://[$dst]:$port/"
	nfg_assert_ok "IPv$fam fetch after the malformed packets" nfg_client curl -sS -g -m 30 -o /dev/null "$url"

	# SYNs from multicast/broadcast/loopback sources (IPv4) or to a multicast group
	# (IPv6) reach a rule on the router before its routing's martian
	# checks: dropped and counted, never answered (a SYN-ACK to a group or
	# the whole link)
	nfg_assert_ok "router rule" nfg_ipt "$NFG_NS_R" legacy $fam -t raw -A PREROUTING -p tcp --dport $port \
		-j SYNCOOKIE --mode local --sack-perm --timestamp
	nfg_router nfguard syncookie stats >"$statf" || nfg_fail "router stats"
	m0=$(stat malformed) c0=$(stat cookie_sent)
	sent=$(nfg_client python3 "$NFG_TOP/tests/vm/cases/syncookie_malformed.py" $src "$dst" $port martian) ||
		nfg_fail "sending martian SYNs"
	rcounted() { nfg_router nfguard syncookie stats >"$statf"; [ "$(stat malformed)" -ge $((m0 + sent)) ]; }
	nfg_wait_until 30 rcounted || nfg_fail "IPv$fam: router malformed $(stat malformed), expected $((m0 + sent))"
	nfg_assert_eq $((m0 + sent)) "$(stat malformed)" "IPv$fam: one count per martian SYN"
	nfg_assert_eq "$c0" "$(stat cookie_sent)" "IPv$fam: no cookie for a martian SYN"
	nfg_assert_ok "router rule delete" nfg_ipt "$NFG_NS_R" legacy $fam -t raw -D PREROUTING -p tcp --dport $port \
		-j SYNCOOKIE --mode local --sack-perm --timestamp
done
nfg_log "ok"
