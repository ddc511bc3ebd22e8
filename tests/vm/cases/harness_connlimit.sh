#!/bin/bash
# Harness proof with real packets (mainline xt_connlimit only): on the router,
# "--connlimit-above 2 -j REJECT --reject-with tcp-reset" for new TCP
# connections to the server's echo port. From the client: two long-lived
# connections open and carry bytes, the third is refused (and counted by the
# rule), the first two still carry bytes; after closing one, a new one opens,
# and the next is refused again. For IPv4 and IPv6, iptables-legacy and
# iptables-nft.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need socat iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft

nfg_topo_up
port=5001
nfg_echo_server "$NFG_NS_S" $port

for v in legacy nft; do
	for fam in 4 6; do
		if [ $fam = 4 ]; then dst=$NFG_S4 mask=32; else dst=$NFG_S6 mask=128; fi
		tag=connlimit-$v-$fam
		rule=(FORWARD -p tcp --syn -d "$dst" --dport "$port" -m connlimit --connlimit-above 2
			--connlimit-mask "$mask" -m comment --comment "$tag" -j REJECT --reject-with tcp-reset)
		nfg_assert_ok "iptables-$v -$fam connlimit rule" nfg_ipt "$NFG_NS_R" $v $fam -A "${rule[@]}"

		nfg_assert_ok "1st connection ($v IPv$fam)" nfg_conn_open c1 "$NFG_NS_C" "$dst" $port
		nfg_assert_ok "2nd connection ($v IPv$fam)" nfg_conn_open c2 "$NFG_NS_C" "$dst" $port
		nfg_assert_fail "3rd connection must be refused ($v IPv$fam)" \
			nfg_conn_open c3 "$NFG_NS_C" "$dst" $port 3
		pkts=$(nfg_ipt_pkts "$NFG_NS_R" $v $fam "$tag")
		nfg_assert_eq 1 "${pkts:-0}" "SYNs rejected by the $v IPv$fam connlimit rule"
		nfg_assert_ok "1st connection still carries bytes" nfg_conn_send c1 "more data on c1"
		nfg_assert_ok "2nd connection still carries bytes" nfg_conn_send c2 "more data on c2"

		nfg_conn_close c1
		nfg_assert_ok "new connection after closing one ($v IPv$fam)" \
			nfg_wait_until 60 nfg_conn_open c4 "$NFG_NS_C" "$dst" $port 3
		nfg_assert_fail "connection over the limit again ($v IPv$fam)" \
			nfg_conn_open c5 "$NFG_NS_C" "$dst" $port 3
		nfg_assert_ok "2nd connection carries bytes at the end" nfg_conn_send c2 "last data on c2"
		nfg_assert_ok "4th connection carries bytes" nfg_conn_send c4 "data on c4"
		pkts=$(nfg_ipt_pkts "$NFG_NS_R" $v $fam "$tag")
		nfg_log "iptables-$v IPv$fam: 2 connections held, 3rd refused, reopen after close ok ($pkts SYNs rejected)"
		nfg_conn_close c2
		nfg_conn_close c4
		nfg_assert_ok "remove rule" nfg_ipt "$NFG_NS_R" $v $fam -D "${rule[@]}"
	done
done
