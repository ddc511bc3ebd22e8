#!/bin/bash
# Local mode's admission: a valid kernel cookie ACK puts its source on the
# allowlist only if it echoes a SYN-ACK timestamp of the last 64 s (the
# TSval carries the kernel's secret offset of the address pair: 2^-16 for
# a forged echo, on top of the kernel cookie's ~2^-29). Crafted handshakes
# (scapy, syncookie_handshake.py) against the man page's local web server
# rule in --mode local, each after an allowlist flush: "badecho" (the
# cookie ACK and the request echo a timestamp whose high bits are not the
# SYN-ACK's) and "nots" (no timestamps) connect - the listener accepts the
# kernel's cookie - but leave the allowlist empty; "full" (the SYN-ACK's
# own timestamp echoed) allowlists the source. IPv4 and IPv6.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need python3 iptables-legacy ip6tables-legacy

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
port=8080 mss=1400
mkdir -p "$NFG_WORK/www" && echo small >"$NFG_WORK/www/small" || nfg_fail "www"
nfg_http_server "$NFG_NS_S" $port "$NFG_WORK/www"
ip -n "$NFG_NS_C" addr add 10.0.1.77/24 dev eth0 || nfg_fail "client 2nd IPv4"
ip -n "$NFG_NS_C" addr add fd00:1::77/64 dev eth0 nodad preferred_lft 0 || nfg_fail "client 2nd IPv6"
nfg_ipt "$NFG_NS_C" legacy 4 -A OUTPUT -s 10.0.1.77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst"
nfg_ipt "$NFG_NS_C" legacy 6 -A OUTPUT -s fd00:1::77 -p tcp --tcp-flags RST RST -j DROP || nfg_fail "client rst 6"
al=$NFG_WORK/allowlists
for fam in 4 6; do
	if [ $fam = 4 ]; then craft=10.0.1.77 dst=$NFG_S4; else craft=fd00:1::77 dst=$NFG_S6; fi
	rule=(-t raw -A PREROUTING -p tcp --dport $port -j SYNCOOKIE --mode local --mss $mss --sack-perm --timestamp)
	nfg_assert_ok "rule IPv$fam" nfg_ipt "$NFG_NS_S" legacy $fam "${rule[@]}"
	: >"$al"
	# before each variant: note the allowlist the previous one left, flush it
	nfg_assert_ok "handshakes IPv$fam" nfg_client python3 "$NFG_TOP/tests/vm/cases/syncookie_handshakes.py" \
		$craft "$dst" $port badecho,nots,full $mss local -- ip netns exec "$NFG_NS_S" sh -c \
		"echo == >>$al; nfguard syncookie allowlist list >>$al && nfguard syncookie allowlist flush"
	nfg_log "IPv$fam: $(tr '\n' ' ' <"$NFG_WORK/assert.out")"
	echo == >>"$al"
	nfg_server nfguard syncookie allowlist list >>"$al" || nfg_fail "allowlist list"
	# sections: [1] before badecho, [2] after it, [3] after nots, [4] after full
	after() { awk -v n="$1" '/^==$/ { s++; next } s == n' "$al"; }
	nfg_assert_eq "" "$(after 2 | grep "^$craft/")" "IPv$fam: allowlisted by a wrong timestamp echo"
	nfg_assert_eq "" "$(after 3 | grep "^$craft/")" "IPv$fam: allowlisted without timestamps"
	nfg_assert_match "^$craft/(32|128) expires-in" "$(after 4 | grep "^$craft/")" "IPv$fam: allowlisted by the right echo"
	rule[2]=-D
	nfg_assert_ok "rule delete" nfg_ipt "$NFG_NS_S" legacy $fam "${rule[@]}"
done
nfg_log "ok"
