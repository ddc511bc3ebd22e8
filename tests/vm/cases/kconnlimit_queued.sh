#!/bin/bash
# A new connection whose SYN an NFQUEUE reader holds counts while it is held
# and after (issue 28): on the router, "--syn -m kconnlimit --above 1 -j
# REJECT --reject-with tcp-reset", then "--syn -j NFQUEUE" to a reader
# (nfg-kcl-nfqueue) that accepts each packet 100 ms after it came. The
# client (nfg-kcl-race queued) starts a connection, and once its SYN is in
# the reader's hands (and 3 clock ticks later) a second: it must be refused
# (the held one counts, unconfirmed as it is); once the first is open, a
# third is refused too (it still counts). Verdicts 100. Mainline connlimit
# forgets a SYN that is not confirmed two jiffies later: its verdicts on the
# same pattern are printed, not asserted. IPv4 with iptables-legacy, IPv6
# with iptables-nft.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need conntrack iptables-legacy ip6tables-nft nfg-kcl-nfqueue nfg-kcl-race

nfg_load_modules xt_kconnlimit
modprobe nfnetlink_queue || nfg_fail "modprobe nfnetlink_queue"
nfg_topo_up
port=5012 ready=$NFG_WORK/nfq.ready
nfg_bg "$NFG_NS_R" nfg-kcl-nfqueue 7 "$ready" 100
nfg_wait_until 60 test -s "$ready" || nfg_fail "nfqueue reader not bound"

bad=0
for vf in legacy/4 nft/6; do
	v=${vf%/*} fam=${vf#*/}
	dst=$NFG_S4
	[ "$fam" = 6 ] && dst=$NFG_S6
	for e in connlimit kconnlimit; do
		nfg_router conntrack -F >/dev/null 2>&1
		r1=(FORWARD -p tcp --syn --dport $port -m $e --$e-above 1 -j REJECT --reject-with tcp-reset)
		r2=(FORWARD -p tcp --syn --dport $port -j NFQUEUE --queue-num 7)
		nfg_ipt "$NFG_NS_R" $v $fam -A "${r1[@]}" && nfg_ipt "$NFG_NS_R" $v $fam -A "${r2[@]}" ||
			nfg_fail "$v IPv$fam $e rules"
		out=$(nfg-kcl-race queued "$NFG_NS_C" "$NFG_NS_S" $port "$dst" "$ready.seen") ||
			nfg_fail "$v IPv$fam $e: nfg-kcl-race: $out"
		nfg_ipt "$NFG_NS_R" $v $fam -F FORWARD
		nfg_log "$v IPv$fam $e: $out (SYNs through the queue so far: $(cat "$ready"))"
		if [ $e = kconnlimit ] && [ "$out" != "verdicts 100" ]; then
			nfg_log "$v IPv$fam: expected verdicts 100: a held SYN was not counted"
			bad=1
		fi
	done
done
[ $bad = 0 ] || nfg_fail "kconnlimit forgot a connection whose SYN the queue held"
