#!/bin/bash
# The route cache is bounded: with max_entries=16, 20 new flows (one packet
# each, each its own conntrack) never make it hold more than 16 routes, and
# at least 16 are learnt. Above the high-water mark (7/8 of the bound) the
# GC evicts routes idle for a second: the table shrinks below the mark on
# its own; refused newcomers and evicted routes are all counted as
# evictions; the freed room is used by new flows. Every route reference is released
# when the rule goes.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
# shellcheck source=tests/rtcache/lib.sh
. "$NFG_TOP/tests/rtcache/lib.sh"
nfg_load_modules xt_RTCACHE
old_max=$(cat /sys/module/xt_RTCACHE/parameters/max_entries)
nfg_on_exit "echo $old_max > /sys/module/xt_RTCACHE/parameters/max_entries"
echo 16 >/sys/module/xt_RTCACHE/parameters/max_entries || nfg_fail "set max_entries"
rtc_topo_up 5000
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE || nfg_fail "rule"

# flows N: one packet from each of N new UDP sockets (new source ports).
flows() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	nfg_client bash -c 'for ((i = 0; i < $1; i++)); do
		exec 3>"/dev/udp/$0/5000" && printf x >&3 && exec 3>&- || exit 1
	done' "$RTC_SVC4" "$1" || nfg_fail "sending $1 flows"
}

flows 20
rtc_wait_count 4 1 5000 20
nfg_assert_le "$(rtc_stat entries)" 16 "entries (bound 16)"
nfg_assert_ge "$(rtc_stat learn)" 16 "learnt up to the bound"

# Nothing is used any more: the GC brings the table below the high-water
# mark (14) and stops there. (It may already have started while the flows
# were sent on a slow machine: the checks below hold either way.)
below() { [ "$(rtc_stat entries)" -lt 14 ]; }
nfg_wait_until 60 below || nfg_fail "GC did not evict idle routes: $(rtc_stat entries) entries"
n=$(rtc_stat entries) e=$(rtc_stat evict) l=$(rtc_stat learn)
# Each flow was learnt or refused; each learnt route is cached or was evicted
# (conntracks live on): refused + evicted = 20 - cached.
nfg_assert_eq $((20 - n)) "$e" "refused and evicted routes counted as evictions"
nfg_assert_ge "$e" 4 "evictions"

flows 2
rtc_wait_count 4 1 5000 22
# (not the entry count: the GC may already be evicting the old idle ones)
nfg_assert_eq $((l + 2)) "$(rtc_stat learn)" "new flows use the freed room"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F FORWARD
nfg_assert_eq 0 "$(rtc_live)" "references after the rule went"
