#!/bin/bash
# Learning starts with a direction's second packet (learn_after 2): 20
# one-packet flows learn nothing and hold no route. The route cache is
# bounded: with max_entries=16, 20 new two-packet flows (each its own
# conntrack) never make it hold more than 16 routes, and at least 16 are
# learnt. Above the high-water mark (7/8 of the bound) the
# GC evicts routes idle for a second: the table shrinks below the mark on
# its own; refused newcomers and evicted routes are all counted as
# evictions; the freed room is used by new flows. Every route reference is released
# when the rule goes. With learn_after=1 a one-packet flow is learnt.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_load_modules xt_RTCACHE
old_max=$(cat /sys/module/xt_RTCACHE/parameters/max_entries)
nfg_on_exit "echo $old_max > /sys/module/xt_RTCACHE/parameters/max_entries"
old_after=$(cat /sys/module/xt_RTCACHE/parameters/learn_after)
nfg_assert_eq 2 "$old_after" "learn_after default"
nfg_on_exit "echo $old_after > /sys/module/xt_RTCACHE/parameters/learn_after"
echo 16 >/sys/module/xt_RTCACHE/parameters/max_entries || nfg_fail "set max_entries"
rtc_topo_up 5000
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE || nfg_fail "rule"

# flows N [P]: N new UDP sockets (new source ports, new conntracks), P
# packets each (default 2). Every socket's first packet is sent, and counted
# by the server, before any second one: a second packet processed while its
# first one's conntrack is still unconfirmed would not be learnt either.
flows() {
	local n=$1 p=${2:-2} go=$NFG_WORK/flows.go base pid w
	base=$(rtc_count 4 1 5000)
	rm -f "$go"
	mkfifo "$go" || nfg_fail "mkfifo"
	# shellcheck disable=SC2016 # expanded by the inner bash
	nfg_bg "$NFG_NS_C" bash -c 'fds=()
		for ((i = 0; i < $1; i++)); do
			exec {fd}>"/dev/udp/$0/5000" && printf x >&"$fd" || exit 1
			fds+=("$fd")
		done
		[ "$2" -gt 1 ] || exit 0
		read -r _ <"$3" || exit 1
		for fd in "${fds[@]}"; do
			for ((j = 1; j < $2; j++)); do printf x >&"$fd" || exit 1; done
		done' "$RTC_SVC4" "$n" "$p" "$go"
	pid=$NFG_LAST_PID
	rtc_wait_count 4 1 5000 $((base + n))
	if [ "$p" -gt 1 ]; then
		exec {w}<>"$go"
		echo go >&"$w"
		exec {w}>&-
	fi
	wait "$pid" || nfg_fail "sending $n flows"
	rtc_wait_count 4 1 5000 $((base + n * p))
}

flows 20 1
rtc_wait_count 4 1 5000 20
nfg_assert_eq 0 "$(rtc_stat learn)" "one-packet flows learnt"
nfg_assert_eq 0 "$(rtc_stat entries)" "entries of one-packet flows"
nfg_assert_eq 0 "$(rtc_stat evict)" "one-packet flows refused"
nfg_assert_eq 0 "$(rtc_live)" "routes held for one-packet flows"

flows 20
rtc_wait_count 4 1 5000 60
nfg_assert_le "$(rtc_stat entries)" 16 "entries (bound 16)"
nfg_assert_ge "$(rtc_stat learn)" 16 "learnt up to the bound"

# Nothing is used any more: the GC brings the table below the high-water
# mark (14) and stops there. (It may already have started while the flows
# were sent on a slow machine: the checks below hold either way.)
below() { [ "$(rtc_stat entries)" -lt 14 ]; }
nfg_wait_until 60 below || nfg_fail "GC did not evict idle routes: $(rtc_stat entries) entries"
n=$(rtc_stat entries) e=$(rtc_stat evict) l=$(rtc_stat learn)
nfg_log "counters: $(nfg_router cat "$RTC_PROC" | tr '\n' ' ')"
# Each flow was learnt or refused; each learnt route is cached or was evicted
# (conntracks live on): refused + evicted = 20 - cached.
nfg_assert_eq $((20 - n)) "$e" "refused and evicted routes counted as evictions"
nfg_assert_ge "$e" 4 "evictions"

flows 2
rtc_wait_count 4 1 5000 64
# (not the entry count: the GC may already be evicting the old idle ones)
nfg_assert_eq $((l + 2)) "$(rtc_stat learn)" "new flows use the freed room"

echo 1 >/sys/module/xt_RTCACHE/parameters/learn_after || nfg_fail "set learn_after"
flows 1 1
rtc_wait_count 4 1 5000 65
nfg_assert_eq $((l + 3)) "$(rtc_stat learn)" "learn_after=1: a one-packet flow is learnt"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F FORWARD
# (freed after an RCU grace period: wait for it, however slow the kernel)
nfg_wait_until 30 rtc_live_is 0 || nfg_fail "references after the rule went: $(rtc_live)"
