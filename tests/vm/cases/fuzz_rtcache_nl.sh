#!/bin/bash
# Netlink fuzz of nfg_rtcache (tests/fuzz/nlfuzz.c, family table "rtcache"):
# malformed requests (unknown commands, STATS and LIST with any attribute,
# FLUSH with a family that is neither ipv4 nor ipv6 or of the wrong size,
# short, long, unknown and foreign (reply-only) attributes, attributes past
# the end, nests within nests, the dump without NLM_F_DUMP) are each
# answered with an error; a huge batch of them in one sendmsg is acked
# request by request; an oversized FLUSH whose last family is bad flushes
# nothing; dumps of 400 cached routes closed midway leak nothing; a user
# namespace without CAP_NET_ADMIN over the netns and an unprivileged user
# get EPERM for every command; a user namespace with its own netns sees an
# empty cache. Throughout, `nfguard rtcache list` (without the ages) and
# `stats` are unchanged and the module's live entries stay what they were.
# Seeded (printed): reproduce with NFG_FUZZ_SEED, run longer with NFG_FUZZ_ITERS.
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"
. "$NFG_TOP/tests/fuzz/lib.sh"
. "$NFG_TOP/tests/rtcache/lib.sh"

nfg_need nfg-nlfuzz nfguard unshare setpriv trafgen
iters=$(nfg_knob NFG_FUZZ_ITERS 300)
seed=$(nfg_knob NFG_FUZZ_SEED 20261203)
nfg_log "iterations $iters seed $seed"
F=(-f nfg_rtcache)
P=/sys/module/xt_RTCACHE/parameters

nfg_load_modules xt_RTCACHE
old_after=$(cat $P/learn_after)
nfg_on_exit "echo $old_after >$P/learn_after"
echo 1 >$P/learn_after || nfg_fail "learn_after"
rtc_topo_up 5000
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE &&
	nfg_ipt "$NFG_NS_R" nft 6 -t mangle -A FORWARD -j RTCACHE || nfg_fail "rules"
# the cached routes live as long as their (unreplied) conntracks
nfg_router sysctl -qw net.netfilter.nf_conntrack_udp_timeout=3600 >/dev/null || nfg_fail "udp timeout"

# 300 IPv4 and 100 IPv6 one-packet flows (learn_after 1, a source port
# each, trafgen): 400 cached routes
mac=$(nfg_router cat /sys/class/net/eth0/address)
echo "{ eth(da=$mac), ipv4(sa=$NFG_C4, da=$RTC_SVC4, ttl=64), udp(sp=dinc(30000, 30299), dp=5000), fill(0x41, 8) }" \
	>"$NFG_WORK/v4.cfg"
{
	printf '{ eth(da=%s, type=0x86dd), 0x60, 0, 0, 0, 0, 16, 17, 64,\n' "$mac"
	printf '  0xfd, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,\n'
	printf '  0xfd, 0x00, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9,\n'
	printf '  0x75, dinc(0, 99), 0x13, 0x88, 0, 16, csumudp6(14, 54), fill(0x42, 8) }\n'
} >"$NFG_WORK/v6.cfg"
nfg_client trafgen -P 1 -q -o eth0 -c "$NFG_WORK/v4.cfg" -n 300 -t 1ms >/dev/null &&
	nfg_client trafgen -P 1 -q -o eth0 -c "$NFG_WORK/v6.cfg" -n 100 -t 1ms >/dev/null || nfg_fail "flows"
entries_are() { [ "$(rtc_stat entries)" = "$1" ]; }
nfg_wait_until 60 entries_are 400 || nfg_fail "$(rtc_stat entries) cached routes, not 400 (server got $(rtc_count 4 1 5000) IPv4, $(rtc_count 6 1 5000) IPv6 packets)"

NFZ_IN="nfguard rtcache list | sed 's/ age .*//' | sort && nfguard rtcache stats"
NFZ_STATE="ip netns exec $NFG_NS_R sh -c \"$NFZ_IN\""
nfz_state_save
nfg_assert_eq 400 "$(grep -c ' src ' "$NFG_WORK/state.0")" "routes listed"
live0=$(rtc_live)
nfg_log "$live0 live entries"

nfz "malformed requests" nfg_router nfg-nlfuzz "${F[@]}" -s "$seed" -n "$iters" -b 100 -C "$NFZ_IN" fuzz
nfz "huge batch" nfg_router nfg-nlfuzz "${F[@]}" -s "$((seed + 1))" -n "$iters" -C "$NFZ_IN" batch
nfz "abandoned dumps" nfg_router nfg-nlfuzz "${F[@]}" -s "$seed" -n 20 -C "$NFZ_IN" abandon
nfz_same_state "privileged passes"

nfz "user namespace" nfg_router unshare -U -r nfg-nlfuzz "${F[@]}" unpriv
nfz "unprivileged user" nfg_router setpriv --reuid=65534 --regid=65534 --clear-groups nfg-nlfuzz "${F[@]}" unpriv
nfz_same_state "unprivileged passes"

nfz "own user+net namespace" nfg_router unshare -U -r -n sh -c '
	[ -z "$(nfguard rtcache list)" ] || { echo "FAIL: another netns'\''s routes listed"; exit 1; }
	exec nfg-nlfuzz -f nfg_rtcache -s "$1" -n "$2" -b 100 -C "nfguard rtcache list && nfguard rtcache stats" fuzz' \
	sh "$((seed + 2))" "$((iters / 4))"
nfz_same_state "own-netns pass"

# (a flush frees after an RCU grace period: wait for it)
nfg_wait_until 30 rtc_live_is "$live0" || nfg_fail "live entries after the fuzz: $(rtc_live), before $live0"
# still usable: a real flush drops them all and releases the routes
nfg_assert_match '^400 routes dropped$' "$(nfg_router nfguard rtcache flush)" "flush after the fuzz"
nfg_wait_until 30 rtc_live_is 0 || nfg_fail "$(rtc_live) route references after the flush"
