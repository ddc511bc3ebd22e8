#!/bin/bash
# Torture: the malformed packets of tests/torture/packets.py (truncated,
# overlong, zero-length and unknown TCP options, MSS 0, wscale 15, data offset
# < 5 and past the packet, SYN+FIN, SYN+RST, SYN with data, fragmented SYNs,
# IPv6 hop-by-hop/routing/fragment headers, ICMP errors quoting a flow, bad
# checksums, broken IP headers) are sent from a listed and from an unlisted
# source through the router's rangeset rules (FORWARD: legacy and nft, IPv4
# and IPv6) to the server (INPUT rules on the same sets). Every extension's
# expected counts (tests/torture/<ext>.py) must match the rule counters
# exactly: rangeset matches every frame that reaches the hook from a listed
# source, whatever it carries, and drops it, and nothing else; the kernel
# survives (harness) and still forwards. On a mismatch the rows are replayed
# one by one to name the ones that differ. The frames are made with scapy at
# build time (build/torture/frames.txt, tests/torture/build.mk) and replayed
# here by tests/torture/send.py.
. "$NFG_TOP/tests/vm/lib.sh"

PY=/usr/bin/python3
TT=$NFG_TOP/tests/torture
nfg_need $PY iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft
FRAMES=$NFG_TOP/build/torture/frames.txt
[ -s "$FRAMES" ] || nfg_fail "no $FRAMES (make all generates it; needs python3-scapy)"

nfg_load_modules xt_rangeset
nfg_topo_up
L4=10.0.1.100 U4=10.0.1.50 L6=fd00:1::100 U6=fd00:1::50
for ns in "$NFG_NS_R" "$NFG_NS_S"; do
	nfg_assert_ok "sets in $ns" nfg_in "$ns" sh -c 'nfguard set create tor4 ipv4 && nfguard set add tor4 10.0.1.100/30 &&
		nfguard set create tor6 ipv6 && nfguard set add tor6 fd00:1::100/126'
done
# First table counts (no target), second drops: both see every listed frame.
R=$NFG_NS_R S=$NFG_NS_S
nfg_ipt $R legacy 4 -t mangle -A FORWARD -m rangeset --match-set tor4 src -m comment --comment rs-fwd-leg4 &&
	nfg_ipt $R nft 4 -A FORWARD -m rangeset --match-set tor4 src -m comment --comment rs-fwd-nft4 -j DROP &&
	nfg_ipt $R nft 6 -t mangle -A FORWARD -m rangeset --match-set tor6 src -m comment --comment rs-fwd-nft6 &&
	nfg_ipt $R legacy 6 -A FORWARD -m rangeset --match-set tor6 src -m comment --comment rs-fwd-leg6 -j DROP &&
	nfg_ipt $S legacy 4 -A INPUT -m rangeset --match-set tor4 src -m comment --comment rs-in-leg4 -j DROP &&
	nfg_ipt $S nft 6 -A INPUT -m rangeset --match-set tor6 src -m comment --comment rs-in-nft6 -j DROP &&
	nfg_ipt $S legacy 4 -t raw -A PREROUTING -p udp --dport 7777 -m comment --comment sentinel4 &&
	nfg_ipt $S legacy 6 -t raw -A PREROUTING -p udp --dport 7777 -m comment --comment sentinel6 ||
	nfg_fail "rules"

# "COUNTER VALUE" for every counter of every extension, and the sentinels
CT=("$TT/counters.sh" "$R:iptables-legacy" "$R:iptables-nft" "$R:ip6tables-nft" "$R:ip6tables-legacy"
	"$S:iptables-legacy" "$S:ip6tables-nft" "$S:ip6tables-legacy")
counters() { "${CT[@]}"; }
declare -A before=()
while read -r c n; do before[$c]=$n; done < <(counters)

nfg_log "set up at ${SECONDS}s"
dmac=$(nfg_router cat /sys/class/net/eth0/address)
args=("$FRAMES" eth0 "$dmac")
nfg_log "$(grep -c '^row ' "$FRAMES") rows, each from $L4/$L6 (listed) and $U4/$U6 (unlisted)"
nfg_client $PY "$TT/send.py" "${args[@]}" >"$NFG_WORK/expect" 2>"$NFG_WORK/send.err" || {
	cat "$NFG_WORK/send.err" >&2
	nfg_fail "send.py failed"
}
sentinels_in() {
	local -A now=()
	local c n
	while read -r c n; do now[$c]=$n; done < <(counters)
	[ "${now[sentinel4]:-0}" -gt "${before[sentinel4]:-0}" ] && [ "${now[sentinel6]:-0}" -gt "${before[sentinel6]:-0}" ]
}
nfg_wait_until 30 sentinels_in || nfg_fail "the sentinel packets never reached the server"
nfg_log "sent and counted at ${SECONDS}s"

declare -A now=()
while read -r c n; do now[$c]=$n; done < <(counters)
bad=
while read -r c n; do
	got=$((${now[$c]:-0} - ${before[$c]:-0}))
	if [ "$got" = "$n" ]; then
		nfg_log "$c: $got as expected"
	else
		echo "$c: expected $n, counted $got" >&2
		bad+=${bad:+,}${c: -1}	# the counters end in their family
	fi
done <"$NFG_WORK/expect"
if [ -n "$bad" ]; then
	nfg_log "replaying the IPv$bad rows one by one"
	nfg_client $PY "$TT/send.py" --family "$bad" "${args[@]}" --diagnose "${CT[*]}" >&2
	nfg_fail "rule counters differ from the documented verdicts"
fi

# still forwarding, rules and sets intact
nfg_assert_ok "ping after the torture" nfg_client ping -c 1 -W 5 "$NFG_S4"
nfg_assert_ok "ping6 after the torture" nfg_client ping -6 -c 1 -W 5 "$NFG_S6"
nfg_assert_match 'tor4' "$(nfg_router nfguard set list)" "router sets"
