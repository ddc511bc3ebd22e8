#!/bin/bash
# What ipset users expect of nfguard set (nfguard(8), SET COMMANDS):
#  - create ... -exist succeeds when a set of that name and family exists
#    (and leaves it as it is), fails when it exists as another family or
#    maxelem; without -exist an existing name is an error;
#  - durations with units: timeout 10m, 1h30m, 2d (set default and
#    element), and a unit-less number after a unit ("1h30") is refused as a
#    bad argument (2).
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules xt_rangeset
nfg_assert_ok "create" nfguard set create ex ipv4 maxelem 50 timeout 10m
nfguard set add ex 10.0.0.1 || nfg_fail "add"
nfg_expect_exit 1 'exists' nfguard set create ex ipv4
nfg_assert_ok "create -exist of the same set" nfguard set create ex ipv4 -exist
nfg_assert_ok "create -exist, maxelem as it is" nfguard set create ex ipv4 maxelem 50 --exist
nfg_assert_eq "10.0.0.1 timeout" "$(nfguard set list ex | sed -n '/^Members:/,$p' | sed 1d | cut -d' ' -f1,2)" \
	"-exist left the set as it was"
nfg_expect_exit 1 '-exist: set "ex" exists as ipv4 maxelem 50, not as asked' nfguard set create ex ipv6 -exist
nfg_expect_exit 1 'not as asked' nfguard set create ex ipv4 maxelem 60 -exist
nfg_assert_eq "600" "$(nfguard set list ex | sed -n 's/^Timeout: //p')" "timeout 10m is the set's default"

nfg_assert_ok "add with 1h30m" nfguard set add ex 10.0.0.2 timeout 1h30m
secs=$(nfguard set list ex | sed -n 's/^10\.0\.0\.2 timeout //p')
nfg_assert_ge "$secs" 5300 "seconds left of 1h30m"
nfg_assert_le "$secs" 5400 "seconds left of 1h30m"
nfg_assert_ok "create with 2d" nfguard set create days ipv6 timeout 2d
nfg_assert_eq "172800" "$(nfguard set list days | sed -n 's/^Timeout: //p')" "timeout 2d"
nfg_expect_exit 2 'timeout "1h30": seconds from 0 to 2147483, or with units' nfguard set add ex 10.0.0.3 timeout 1h30
nfg_expect_exit 2 'timeout "25d"' nfguard set create big ipv4 timeout 25d
nfg_log "ok"
