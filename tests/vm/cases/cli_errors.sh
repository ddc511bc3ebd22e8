#!/bin/bash
# Every nfguard sub-command's error paths (nfguard(8), EXIT STATUS and
# PROTECT COMMANDS): each failure prints "nfguard: <what>: <reason>" naming
# the problem and exits with the documented status:
#  - bad arguments, for set, kconnlimit, syncookie, rtcache, stats, version,
#    protect, unprotect and an unknown command (1; protect/unprotect 2);
#  - no module loaded (none of ours is; the modules are not where modprobe
#    looks): the command names the missing module (1; protect 3), stats
#    reports each extension as not loaded and succeeds, unprotect with
#    nothing installed succeeds, version needs nothing;
#  - then with the modules loaded, in an unprivileged user namespace (no
#    CAP_NET_ADMIN over the initial netns): permission denied naming
#    CAP_NET_ADMIN (1; protect/unprotect 4), version still works.
# nfg-case-timeout: 120
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nfguard unshare

U() { unshare -Ur "$@"; }

for m in xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE; do
	[ ! -e "/sys/module/$m" ] || nfg_fail "$m is loaded before the case loads it"
done

# ---- bad arguments -------------------------------------------------------------
nfg_expect_exit 1 '^nfguard: unknown command "bogus"' nfguard bogus
nfg_expect_exit 1 '^nfguard: set: unknown command "bogus"' nfguard set bogus
nfg_expect_exit 1 'usage: nfguard set test NAME ELEM' nfguard set test
nfg_expect_exit 1 '^nfguard: kconnlimit: unknown sub-command "bogus"' nfguard kconnlimit bogus
nfg_expect_exit 1 '^nfguard: kconnlimit top: -n needs a number from 1 to 10000, not "0"' nfguard kconnlimit top -n 0
nfg_expect_exit 1 '^nfguard: syncookie: unknown sub-command or bad arguments: "bogus"' nfguard syncookie bogus
nfg_expect_exit 1 '^nfguard: syncookie: unknown sub-command or bad arguments: "allowlist frob"' \
	nfguard syncookie allowlist frob
nfg_expect_exit 1 '^nfguard: syncookie secret set: the secret is 32 hexadecimal digits' nfguard syncookie secret set zz
nfg_expect_exit 1 '^nfguard: rtcache: unknown sub-command or bad arguments: "bogus"' nfguard rtcache bogus
nfg_expect_exit 1 "^nfguard: rtcache flush: unknown family 'ipv5'" nfguard rtcache flush ipv5
nfg_expect_exit 1 '^nfguard: stats: unexpected argument "--bogus"' nfguard stats --bogus
nfg_expect_exit 1 '^nfguard: stats: --watch takes seconds' nfguard stats --watch x
nfg_expect_exit 1 '^nfguard: version: unexpected argument "x"' nfguard version x
nfg_expect_exit 2 '^nfguard: protect: unexpected argument "x"' nfguard protect --rtcache x
nfg_expect_exit 2 '^nfguard: protect: --bogus' nfguard protect --bogus
nfg_expect_exit 2 '^nfguard: unprotect: unexpected argument "x"' nfguard unprotect x

# ---- no module loaded ------------------------------------------------------------
nfg_expect_exit 1 '^nfguard: .*kernel module xt_rangeset is not loaded' nfguard set list
nfg_expect_exit 1 '^nfguard: .*kernel module xt_rangeset is not loaded' nfguard set create s ipv4
nfg_expect_exit 1 '^nfguard: kconnlimit list: the xt_kconnlimit kernel module is not loaded' nfguard kconnlimit list
nfg_expect_exit 1 '^nfguard: kconnlimit top: the xt_kconnlimit kernel module is not loaded' nfguard kconnlimit top
nfg_expect_exit 1 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie stats
nfg_expect_exit 1 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie allowlist list
nfg_expect_exit 1 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie secret rotate
# a bad address is named as such before the module is looked for
nfg_expect_exit 1 '^nfguard: syncookie allowlist add: expected ADDR\[/PREFIX\], got "10\.0\.0\.300"' \
	nfguard syncookie allowlist add 10.0.0.300
nfg_expect_exit 1 '^nfguard: syncookie allowlist del: unexpected "timeout"' nfguard syncookie allowlist del 10.0.0.1 timeout 5
nfg_expect_exit 1 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie allowlist add 10.0.0.1
nfg_expect_exit 1 '^nfguard: rtcache: the xt_RTCACHE kernel module is not loaded$' nfguard rtcache stats
nfg_expect_exit 1 '^nfguard: rtcache: the xt_RTCACHE kernel module is not loaded$' nfguard rtcache flush
nfg_expect_exit 3 '^nfguard: protect: kernel module xt_rangeset is not loaded' nfguard protect --blocklist bl
nfg_expect_exit 3 '^nfguard: protect: kernel module xt_RTCACHE is not loaded' nfguard protect --rtcache
out=$(nfguard stats 2>&1) || nfg_fail "stats without modules: exit $?"
for x in rangeset:xt_rangeset kconnlimit:xt_kconnlimit syncookie:xt_SYNCOOKIE rtcache:xt_RTCACHE; do
	nfg_assert_match "^${x%%:*}: not loaded \(kernel module ${x#*:}\)$" "$out" "stats without modules"
done
nfg_assert_ok "unprotect with nothing installed" nfguard unprotect
nfg_assert_match '^nfguard [0-9]' "$(nfguard version)" "version"

# ---- no permission: unprivileged user namespace, initial netns ---------------------
nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE
nfguard set create s ipv4 || nfg_fail "set create"
perm='Operation not permitted \(CAP_NET_ADMIN in the network namespace is required\)'
nfg_expect_exit 1 '(permission denied|Operation not permitted) \(CAP_NET_ADMIN in the network namespace is required\)' U nfguard set list
nfg_expect_exit 1 '(permission denied|Operation not permitted) \(CAP_NET_ADMIN' U nfguard set add s 10.0.0.1
nfg_expect_exit 1 "^nfguard: kconnlimit list: $perm" U nfguard kconnlimit list
nfg_expect_exit 1 "^nfguard: syncookie stats: $perm" U nfguard syncookie stats
nfg_expect_exit 1 "^nfguard: syncookie allowlist add: 10\\.0\\.0\\.1: $perm" U nfguard syncookie allowlist add 10.0.0.1
nfg_expect_exit 1 "^nfguard: rtcache: $perm" U nfguard rtcache stats
nfg_expect_exit 1 "^nfguard: rtcache: $perm" U nfguard rtcache flush
nfg_expect_exit 1 "^nfguard: stats: syncookie: $perm" U nfguard stats
nfg_expect_exit 4 '^nfguard: protect: reading the nftables ruleset: Operation not permitted \(needs CAP_NET_ADMIN' \
	U nfguard protect --syncookie tcp/80
nfg_expect_exit 4 '^nfguard: unprotect: reading the nftables ruleset: Operation not permitted \(needs CAP_NET_ADMIN' \
	U nfguard unprotect
nfg_assert_match '^nfguard [0-9]' "$(U nfguard version)" "version in a user namespace"
# nothing changed
nfg_expect_exit 2 '' nfguard set test s 10.0.0.1
nfg_log "ok"
