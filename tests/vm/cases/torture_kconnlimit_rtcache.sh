#!/bin/bash
# Torture through kconnlimit and RTCACHE: the malformed packets of
# tests/torture/packets.py (truncated, overlong, zero-length and unknown TCP
# options, MSS 0, wscale 15, data offset < 5 and past the packet, SYN+FIN,
# SYN+RST, SYN with data, fragmented SYNs, IPv6 hop-by-hop/routing/fragment
# headers, ICMP errors quoting a flow, bad checksums, broken IP headers) are
# sent from two sources through a router that tracks connections (its
# conntrack reassembles fragments) with kconnlimit matches (filter FORWARD)
# and RTCACHE targets (mangle FORWARD), legacy and nft, IPv4 and IPv6. The
# documented verdicts (tests/torture/kconnlimit.py, rtcache.py): under its
# limit kconnlimit matches every frame, whatever conntrack made of it, and
# its own matched counter agrees with the rule counter; RTCACHE continues
# every frame, which arrives at the server (counted after the server's own
# reassembly) whether it took a cached route or the FIB; the cache was used
# (learnt and hit). Counters must match exactly; the kernel survives
# (harness), still forwards, and every table and route reference is
# released when the rules go. The frames are made with scapy at build time
# (build/torture/frames-ct.txt, tests/torture/build.mk).
. "$NFG_TOP/tests/vm/lib.sh"

PY=/usr/bin/python3
TT=$NFG_TOP/tests/torture
nfg_need $PY nfguard iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft
FRAMES=$NFG_TOP/build/torture/frames-ct.txt
[ -s "$FRAMES" ] || nfg_fail "no $FRAMES (make all generates it; needs python3-scapy)"
KLIVE=/sys/module/xt_kconnlimit/parameters/live_objects
RLIVE=/sys/module/xt_RTCACHE/parameters/live_entries

nfg_load_modules xt_kconnlimit xt_RTCACHE
nfg_topo_up
L4=10.0.1.100 U4=10.0.1.50 L6=fd00:1::100 U6=fd00:1::50
R=$NFG_NS_R S=$NFG_NS_S
# From the client side, not the sentinels (UDP 7777); kconnlimit counts
# (no target), RTCACHE continues.
KCL=(-m kconnlimit --kconnlimit-upto 100000)
nfg_ipt $R legacy 4 -t mangle -A FORWARD -i eth0 ! -p udp -m comment --comment rtc-fwd-leg4 -j RTCACHE &&
	nfg_ipt $R nft 4 -A FORWARD -i eth0 ! -p udp "${KCL[@]}" --kconnlimit-name tor4 -m comment --comment kcl-fwd-nft4 &&
	nfg_ipt $R nft 6 -t mangle -A FORWARD -i eth0 ! -p udp -m comment --comment rtc-fwd-nft6 -j RTCACHE &&
	nfg_ipt $R legacy 6 -A FORWARD -i eth0 ! -p udp "${KCL[@]}" --kconnlimit-mask 64 --kconnlimit-name tor6 \
		-m comment --comment kcl-fwd-leg6 &&
	nfg_ipt $S legacy 4 -t raw -A PREROUTING -i eth0 -s 10.0.1.0/24 ! -p udp -m comment --comment srv-in4 &&
	nfg_ipt $S nft 6 -t raw -A PREROUTING -i eth0 -s fd00:1::/64 ! -p udp -m comment --comment srv-in6 &&
	nfg_ipt $S legacy 4 -t raw -A PREROUTING -p udp --dport 7777 -m comment --comment sentinel4 &&
	nfg_ipt $S legacy 6 -t raw -A PREROUTING -p udp --dport 7777 -m comment --comment sentinel6 ||
	nfg_fail "rules"
# The server tracks connections too (so it reassembles before raw
# PREROUTING counts) and answers nothing: the router's conntracks stay
# open and RTCACHE learns and hands out their routes.
nfg_ipt $S legacy 4 -A INPUT -s 10.0.1.0/24 ! -p udp -m conntrack --ctstate NEW,ESTABLISHED,RELATED,INVALID -j DROP &&
	nfg_ipt $S nft 6 -A INPUT -s fd00:1::/64 ! -p udp -m conntrack --ctstate NEW,ESTABLISHED,RELATED,INVALID -j DROP ||
	nfg_fail "server rules"

CT=("$TT/counters.sh" "$R:iptables-legacy" "$R:iptables-nft" "$R:ip6tables-nft" "$R:ip6tables-legacy"
	"$S:iptables-legacy" "$S:ip6tables-nft" "$S:ip6tables-legacy")
counters() { "${CT[@]}"; }
declare -A before=()
while read -r c n; do before[$c]=$n; done < <(counters)
rtc_total() { nfg_router awk '$1 == "cpu" { for (i = 1; i <= NF; i++) f[$i] = i } $1 == "total" { print $f["'"$1"'"] }' \
	/proc/net/stat/nfguard_rtcache; }
hit0=$(rtc_total hit) learn0=$(rtc_total learn)

nfg_log "set up at ${SECONDS}s"
dmac=$(nfg_router cat /sys/class/net/eth0/address)
args=("$FRAMES" eth0 "$dmac")
nfg_log "$(grep -c '^row ' "$FRAMES") rows, each from $L4/$L6 and $U4/$U6"
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

# kconnlimit's own counters agree: every frame matched, none over the limit
for t in tor4:kcl-fwd-nft4 tor6:kcl-fwd-leg6; do
	line=$(nfg_router nfguard kconnlimit list "${t%%:*}" | sed -n 2p)
	nfg_log "$line"
	read -r _ _ _ _ _ _ _ matched over _ <<<"$line"
	nfg_assert_eq "$(grep "^${t#*:} " "$NFG_WORK/expect" | cut -d' ' -f2)" "$matched" "${t%%:*}: matched"
	nfg_assert_eq 0 "$over" "${t%%:*}: over the limit"
done
# RTCACHE learnt a route from the rows' connections and handed it out
nfg_log "rtcache: $(nfg_router nfguard rtcache stats | tr '\n' ' ')"
nfg_assert_ge "$(($(rtc_total learn) - learn0))" 1 "routes learnt from the torture connections"
nfg_assert_ge "$(($(rtc_total hit) - hit0))" 1 "cached routes handed out to torture packets"

# still forwarding; everything released when the rules go
nfg_ipt $S legacy 4 -F INPUT && nfg_ipt $S nft 6 -F INPUT || nfg_fail "server rules"
nfg_assert_ok "ping after the torture" nfg_client ping -c 1 -W 5 "$NFG_S4"
nfg_assert_ok "ping6 after the torture" nfg_client ping -6 -c 1 -W 5 "$NFG_S6"
nfg_ipt $R legacy 4 -t mangle -F FORWARD && nfg_ipt $R nft 4 -F FORWARD &&
	nfg_ipt $R nft 6 -t mangle -F FORWARD && nfg_ipt $R legacy 6 -F FORWARD || nfg_fail "flush rules"
live_zero() { [ "$(cat $KLIVE)" = 0 ] && [ "$(cat $RLIVE)" = 0 ]; }
nfg_wait_until 30 live_zero || nfg_fail "left: kconnlimit $(cat $KLIVE) objects, RTCACHE $(cat $RLIVE) routes"
