#!/bin/bash
# RTCACHE bench (report only): forwarded packets/s on a router with a large
# FIB (100k routes) and 50 ip rules evaluated before the main table, with
# and without the route cache, rounds alternating inside one boot.
#
# Generator: pktgen (netif_receive on rx0 of nfb-rx), UDP to 10.200.0.1,
# which nfb-rx forwards out dummy0 (ip_forward=1; dummy drops it, cheaply).
#  - long: one flow (fixed addresses and ports): one conntrack, every packet
#    after the first can use the cache. Goal: rtcache >= 1.3x no cache.
#  - short: random source address and port: nearly every packet is a new
#    conntrack, nothing is reused, so this is the cost of the cache on flows
#    that cannot use it. Goal: rtcache >= 0.97x no cache. "rtcache" runs
#    with the default learn_after=2 (a flow that never sends a second packet
#    is never learnt); "rtcache-learn1" with learn_after=1 (every first
#    packet learnt: an allocation, a route reference and an insert each, and
#    the table at its bound churns) shows what learning would cost.
# Rulesets: "nocache" = mangle FORWARD conntrack state rule (conntrack on,
# as with the cache); "rtcache" = the same plus -j RTCACHE; "flowtable" =
# nft flowtable on rx0 and dummy0 as a reference (bypasses the forwarding
# path after the first packets); floor = raw PREROUTING DROP.
# Ratios are in the report notes (pps and overhead above the floor).
# 8 rounds unless NFB_ROUNDS says otherwise: the spread on a shared TCG
# machine is wide.
# nfg-case-timeout: 2400
: "${NFB_ROUNDS:=8}"
# shellcheck source=tests/bench/lib.sh
. "$NFG_TOP/tests/bench/lib.sh"
nfg_need nft

nfb_init pktgen
nfg_load_modules xt_RTCACHE
RTC_AFTER=/sys/module/xt_RTCACHE/parameters/learn_after
nfg_assert_eq 2 "$(cat "$RTC_AFTER")" "learn_after default"
nfb_rx sysctl -qw net.ipv4.ip_forward=1 >/dev/null || nfg_fail "ip_forward"

# 100k /24 routes out dummy0 (not covering the flow's destination), the
# destination's /16, and 50 rules that never match before main.
nfg_log "loading 100k routes and 50 rules"
python3 - "$NFG_WORK/routes.batch" <<'PY' || nfg_fail "route batch"
import sys
with open(sys.argv[1], "w") as f:
    n = 0
    for a in range(11, 255):
        for b in range(0, 256):
            for c in range(0, 2):
                if n >= 100000:
                    break
                f.write("route add %d.%d.%d.0/24 dev dummy0\n" % (a, b, c * 128))
                n += 1
    f.write("route add 10.200.0.0/16 dev dummy0\n")
    for i in range(50):
        f.write("rule add pref %d from 198.18.%d.0/24 table %d\n" % (100 + i, i, 1000 + i))
PY
ip -n "$NFB_NS_RX" -batch "$NFG_WORK/routes.batch" || nfg_fail "loading routes"
nfb_metric routes "$(ip -n "$NFB_NS_RX" route show | wc -l)" routes "main table size"
nfb_metric rules "$(ip -n "$NFB_NS_RX" rule show | wc -l)" rules "ip rules (incl. defaults)"

pg() { local c; for c; do nfb__pg rx0 "$c"; done; }
flow_long() {
	pg "dst 10.200.0.1" "src_min 198.51.100.7" "src_max 198.51.100.7" "flag !IPSRC_RND" \
		"udp_src_min 4242" "udp_src_max 4242" "flag !UDPSRC_RND"
}
flow_short() {
	pg "dst 10.200.0.1" "src_min 1.0.0.1" "src_max 9.255.255.254" "flag IPSRC_RND" \
		"udp_src_min 1024" "udp_src_max 65535" "flag UDPSRC_RND"
}

rs_floor() { nfb_rx iptables-legacy -w -t raw -A PREROUTING -i rx0 -j DROP; }
rs_nocache() { nfb_rx iptables-legacy -w -t filter -A FORWARD -m conntrack --ctstate INVALID -j DROP; }
rs_rtcache() { rs_nocache && nfb_rx iptables-legacy -w -t filter -A FORWARD -j RTCACHE; }
rs_rtcache1() { echo 1 >"$RTC_AFTER" && rs_rtcache; }
clr_rtcache1() { echo 2 >"$RTC_AFTER"; nfb_clear_rules; }
rs_flowtable() {
	rs_nocache && nfb_rx nft -f - <<-EOF
		table inet nfb_ft {
			flowtable ft { hook ingress priority 0; devices = { rx0, dummy0 }; }
			chain fwchain { type filter hook forward priority 0; meta l4proto udp flow add @ft; }
		}
	EOF
}
clr_flowtable() { nfb_rx nft delete table inet nfb_ft 2>/dev/null; nfb_clear_rules; }

rtc() { ip netns exec "$NFB_NS_RX" cat /proc/net/stat/nfguard_rtcache | awk -v k="$1" '$1 == "cpu" { for (i = 1; i <= NF; i++) f[$i] = i } $1 == "total" { print $f[k] }'; }
RTC_HIT0=0 RTC_LEARN0=0 RTC_EVICT0=0
rtc_mark() { RTC_HIT0=$(rtc hit) RTC_LEARN0=$(rtc learn) RTC_EVICT0=$(rtc evict); }
chk_forwarded() { [ "$(nfb_rx cat /sys/class/net/dummy0/statistics/tx_packets)" -gt 0 ]; }
chk_rtcache_long() { # most packets of the sample used the cache
	local h
	h=$(rtc hit)
	[ $((h - RTC_HIT0)) -ge $((NFB_PKTS / 2)) ] || { nfg_log "hits $((h - RTC_HIT0)) of $NFB_PKTS"; return 1; }
	RTC_HIT0=$h
}
chk_rtcache_short() { # learn_after 2: random flows are (nearly) never learnt
	local l
	l=$(rtc learn)
	[ $((l - RTC_LEARN0)) -le $((NFB_PKTS / 100)) ] || { nfg_log "learnt $((l - RTC_LEARN0)) of $NFB_PKTS"; return 1; }
	rtc_mark
}
chk_rtcache1_short() { # learn_after 1: every new flow is learnt or refused (table full)
	local n
	n=$(($(rtc learn) - RTC_LEARN0 + $(rtc evict) - RTC_EVICT0))
	[ "$n" -ge $((NFB_PKTS / 2)) ] || { nfg_log "learnt or refused $n of $NFB_PKTS"; return 1; }
	rtc_mark
}

for kind in long short; do
	"flow_$kind"
	rtc_mark
	ratios=(--ratio rtcache/nocache)
	nfb_ruleset raw-drop rs_floor --floor --desc "raw PREROUTING DROP (floor)"
	nfb_ruleset nocache rs_nocache --check chk_forwarded --desc "conntrack, no cache"
	nfb_ruleset rtcache rs_rtcache --check "chk_rtcache_$kind" --desc "conntrack + -j RTCACHE"
	if [ "$kind" = short ]; then
		nfb_ruleset rtcache-learn1 rs_rtcache1 --clear clr_rtcache1 --check chk_rtcache1_short \
			--desc "conntrack + -j RTCACHE, learn_after=1"
		ratios+=(--ratio rtcache-learn1/nocache)
	fi
	nfb_ruleset flowtable rs_flowtable --clear clr_flowtable --check chk_forwarded \
		--desc "conntrack + nft flowtable (reference)"
	nfb_run "rtcache-$kind" "${ratios[@]}" --ratio flowtable/nocache
done
