#!/bin/bash
# Proxy mode opens a server connection only for a live client's handshake.
# A proxied connection's conntrack entry carries nf_synproxy_core's
# extension, whose hooks answer the server's SYN-ACK themselves (the ACK to
# the server in the client's name) whenever that entry goes through SYN_SENT
# again. Through the man page's router rule, after a crafted proxied
# handshake (which allowlists its source) that the client then aborts with
# a RST (syncookie_reopen.py):
#  - replay: the handshake's cookie ACK again (a retransmission, a replay:
#    the client is gone) opens no server connection;
#  - synpass: an in-window ACK without a valid cookie, then a SYN of the same
#    ports (an allowlisted source's SYN passes the rule), never ACKed: no
#    connection ESTABLISHED at the server; the server's own SYN-ACK reaches
#    the client (the SYN made a plain connection, as any allowlisted SYN).
# IPv4 (iptables-legacy) and IPv6 (iptables-nft). The server's kernel, where
# it counts them (7.x: TcpExtTSEcrRejected), drops no ACK for echoing a
# timestamp it never sent: the router's ACK in the client's name echoes the
# server's SYN-ACK exactly (nf_synproxy_core translated it twice before).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need python3 ss nstat iptables-legacy ip6tables-nft

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
port=8080
mkdir -p "$NFG_WORK/www" && echo hello >"$NFG_WORK/www/index.html" || nfg_fail "www"
nfg_http_server "$NFG_NS_S" $port "$NFG_WORK/www"
ip -n "$NFG_NS_C" addr add 10.0.1.77/24 dev eth0 || nfg_fail "client 2nd IPv4"
ip -n "$NFG_NS_C" addr add fd00:1::77/64 dev eth0 nodad preferred_lft 0 || nfg_fail "client 2nd IPv6"
nfg_ipt "$NFG_NS_C" legacy 4 -A OUTPUT -s 10.0.1.77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst"
nfg_ipt "$NFG_NS_C" legacy 6 -A OUTPUT -s fd00:1::77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst 6"

for fam in 4 6; do
	if [ $fam = 4 ]; then v=legacy src=10.0.1.77 dst=$NFG_S4 mss=1460; else v=nft src=fd00:1::77 dst=$NFG_S6 mss=1440; fi
	rule=(-t raw -A PREROUTING -i eth0 -p tcp -d "$dst" --dport $port -j SYNCOOKIE
		--mss $mss --wscale 7 --sack-perm --timestamp)
	nfg_assert_ok "rule IPv$fam" nfg_ipt "$NFG_NS_R" $v $fam "${rule[@]}"
	nfg_assert_ok "IPv$fam replay, synpass" nfg_client python3 "$NFG_TOP/tests/vm/cases/syncookie_reopen.py" \
		$src "$dst" $port "$NFG_NS_S" replay,synpass -- ip netns exec "$NFG_NS_R" nfguard syncookie allowlist flush
	nfg_log "IPv$fam: $(tr '\n' ' ' <"$NFG_WORK/assert.out")"
	rule[2]=-D
	nfg_assert_ok "rule delete" nfg_ipt "$NFG_NS_R" $v $fam "${rule[@]}"
done
rej=$(ip netns exec "$NFG_NS_S" nstat -az TcpExtTSEcrRejected | awk '$1 == "TcpExtTSEcrRejected" { print $2 }')
nfg_log "server TcpExtTSEcrRejected: ${rej:-not counted by this kernel}"
nfg_assert_eq 0 "${rej:-0}" "ACKs the server dropped for their timestamp echo"
nfg_log "ok"
