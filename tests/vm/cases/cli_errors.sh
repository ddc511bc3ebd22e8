#!/bin/bash
# Every nfguard sub-command's error paths (nfguard(8), EXIT STATUS and
# PROTECT COMMANDS): each failure prints "nfguard: <what>: <reason>" naming
# the problem and exits with the documented status:
#  - one table for every command: bad arguments 2 (for set, kconnlimit,
#    syncookie, rtcache, stats, version, protect, unprotect and an unknown
#    command), found before any module is asked for: an invalid element, an
#    unknown option (never taken for a set name);
#  - no module loaded (none of ours is; the modules are not where modprobe
#    looks): the command names the missing module (3), stats reports each
#    extension as not loaded and succeeds, unprotect with nothing installed
#    succeeds, version needs nothing; set restore --check validates a file
#    without the module (0; an invalid line: 1, naming it);
#  - then with the modules loaded, in an unprivileged user namespace (no
#    CAP_NET_ADMIN over the initial netns): permission denied naming
#    CAP_NET_ADMIN (4; stats: 1, an extension could not be read), version
#    still works; set test of a non-member: 1.
# nfg-case-timeout: 120
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nfguard unshare

U() { unshare -Ur "$@"; }

for m in xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE; do
	[ ! -e "/sys/module/$m" ] || nfg_fail "$m is loaded before the case loads it"
done

# ---- bad arguments -------------------------------------------------------------
nfg_expect_exit 2 '^nfguard: add bl: invalid IPv4 address "10\.0\.0\.300"' nfguard set add bl 10.0.0.300
nfg_expect_exit 2 '1 invalid element: nothing was changed' nfguard set add bl 10.0.0.1 10.0.0.300
nfg_expect_exit 2 '^nfguard: test bl: invalid IPv4 address "10\.0\.0\.300"' nfguard set test bl 10.0.0.300
nfg_expect_exit 2 '^nfguard: list: unknown option "--bogus"' nfguard set list --bogus
nfg_expect_exit 2 '^nfguard: add bl: unknown option "--bogus"' nfguard set add bl --bogus 10.0.0.1
nfg_expect_exit 2 '^nfguard: destroy: unknown option "-x"' nfguard set destroy -x
nfg_expect_exit 2 '^nfguard: restore: unknown option "--bogus"' nfguard set restore --bogus
nfg_expect_exit 2 '^nfguard: create s: unknown family "ipv5"' nfguard set create s ipv5
nfg_expect_exit 2 '^nfguard set create NAME' nfguard set
nfg_expect_exit 2 '' nfguard
nfg_expect_exit 2 '^nfguard: unknown command "bogus"' nfguard bogus
nfg_expect_exit 2 '^nfguard: set: unknown command "bogus"' nfguard set bogus
nfg_expect_exit 2 'usage: nfguard set test NAME ELEM' nfguard set test
nfg_expect_exit 2 '^nfguard: kconnlimit: unknown sub-command "bogus"' nfguard kconnlimit bogus
nfg_expect_exit 2 '^nfguard: kconnlimit top: -n needs a number from 1 to 10000, not "0"' nfguard kconnlimit top -n 0
nfg_expect_exit 2 '^nfguard: syncookie: unknown sub-command or bad arguments: "bogus"' nfguard syncookie bogus
nfg_expect_exit 2 '^nfguard: syncookie: unknown sub-command or bad arguments: "allowlist frob"' \
	nfguard syncookie allowlist frob
nfg_expect_exit 2 '^nfguard: syncookie secret set: the secret is 32 hexadecimal digits' nfguard syncookie secret set zz
nfg_expect_exit 2 '^nfguard: rtcache: unknown sub-command or bad arguments: "bogus"' nfguard rtcache bogus
nfg_expect_exit 2 "^nfguard: rtcache flush: unknown family 'ipv5'" nfguard rtcache flush ipv5
nfg_expect_exit 2 '^nfguard: stats: unexpected argument "--bogus"' nfguard stats --bogus
nfg_expect_exit 2 '^nfguard: stats: --watch takes seconds' nfguard stats --watch x
nfg_expect_exit 2 '^nfguard: version: unexpected argument "x"' nfguard version x
nfg_expect_exit 2 '^nfguard: protect: unexpected argument "x"' nfguard protect --rtcache x
nfg_expect_exit 2 '^nfguard: protect: --bogus' nfguard protect --bogus
nfg_expect_exit 2 '^nfguard: unprotect: unexpected argument "x"' nfguard unprotect x

# ---- no module loaded ------------------------------------------------------------
nfg_expect_exit 3 '^nfguard: .*kernel module xt_rangeset is not loaded' nfguard set list
nfg_expect_exit 3 '^nfguard: .*kernel module xt_rangeset is not loaded' nfguard set create s ipv4
nfg_expect_exit 3 '^nfguard: kconnlimit list: the xt_kconnlimit kernel module is not loaded' nfguard kconnlimit list
nfg_expect_exit 3 '^nfguard: kconnlimit top: the xt_kconnlimit kernel module is not loaded' nfguard kconnlimit top
nfg_expect_exit 3 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie stats
nfg_expect_exit 3 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie allowlist list
nfg_expect_exit 3 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie secret rotate
# a bad address is named as such before the module is looked for
nfg_expect_exit 2 '^nfguard: syncookie allowlist add: expected ADDR\[/PREFIX\], got "10\.0\.0\.300"' \
	nfguard syncookie allowlist add 10.0.0.300
nfg_expect_exit 2 '^nfguard: syncookie allowlist del: unexpected "timeout"' nfguard syncookie allowlist del 10.0.0.1 timeout 5
nfg_expect_exit 3 '^nfguard: syncookie: the xt_SYNCOOKIE kernel module is not loaded' nfguard syncookie allowlist add 10.0.0.1
nfg_expect_exit 3 '^nfguard: rtcache: the xt_RTCACHE kernel module is not loaded$' nfguard rtcache stats
nfg_expect_exit 3 '^nfguard: rtcache: the xt_RTCACHE kernel module is not loaded$' nfguard rtcache flush
nfg_expect_exit 3 '^nfguard: protect: kernel module xt_rangeset is not loaded' nfguard protect --blocklist bl
nfg_expect_exit 3 '^nfguard: protect: kernel module xt_RTCACHE is not loaded' nfguard protect --rtcache
out=$(nfguard stats 2>&1) || nfg_fail "stats without modules: exit $?"
for x in rangeset:xt_rangeset kconnlimit:xt_kconnlimit syncookie:xt_SYNCOOKIE rtcache:xt_RTCACHE; do
	nfg_assert_match "^${x%%:*}: not loaded \(kernel module ${x#*:}\)$" "$out" "stats without modules"
done
nfg_assert_ok "unprotect with nothing installed" nfguard unprotect
# a dry run says what it assumed, on warning: lines, and succeeds
nfg_expect_exit 0 '^nfguard: warning: protect --dry-run: kernel module xt_SYNCOOKIE is not loaded: assumed' \
	nfguard protect --dry-run --syncookie tcp/80
nfg_expect_exit 0 'warning: protect --dry-run: set bl: .*not loaded.*; assumed to be an ipv4 set' \
	nfguard protect --dry-run --blocklist bl
# offline validation of a restore file
printf 'create a ipv4 maxelem 10\nadd a 10.0.0.0/8\ncreate b hash:net family inet6\nadd b 2001:db8::/32\n' >"$NFG_WORK/ok.save"
nfg_assert_ok "restore --check of a valid file, no module" nfguard set restore --check -f "$NFG_WORK/ok.save"
printf 'create a ipv4\nadd a 10.0.0.300\nadd a 2001:db8::1\n' >"$NFG_WORK/bad.save"
nfg_expect_exit 1 'bad\.save:2: .*10\.0\.0\.300' nfguard set restore --check -f "$NFG_WORK/bad.save"
nfg_expect_exit 1 '2 invalid lines$' nfguard set restore --check -f "$NFG_WORK/bad.save"
printf 'add other 10.0.0.1\n' >"$NFG_WORK/other.save"
nfg_expect_exit 1 'set "other" is not created before this line, and its family cannot be checked: .*not loaded' \
	nfguard set restore --check -f "$NFG_WORK/other.save"
for m in xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE; do
	[ ! -e "/sys/module/$m" ] || nfg_fail "$m got loaded by a command that had bad arguments or only checked"
done
nfg_assert_match '^nfguard [0-9]' "$(nfguard version)" "version"

# ---- no permission: unprivileged user namespace, initial netns ---------------------
nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE
nfguard set create s ipv4 || nfg_fail "set create"
perm='Operation not permitted \(CAP_NET_ADMIN in the network namespace is required\)'
nfg_expect_exit 4 '(permission denied|Operation not permitted) \(CAP_NET_ADMIN in the network namespace is required\)' U nfguard set list
nfg_expect_exit 4 '(permission denied|Operation not permitted) \(CAP_NET_ADMIN' U nfguard set add s 10.0.0.1
nfg_expect_exit 4 "^nfguard: kconnlimit list: $perm" U nfguard kconnlimit list
nfg_expect_exit 4 "^nfguard: syncookie stats: $perm" U nfguard syncookie stats
nfg_expect_exit 4 "^nfguard: syncookie allowlist add: 10\\.0\\.0\\.1: $perm" U nfguard syncookie allowlist add 10.0.0.1
nfg_expect_exit 4 "^nfguard: rtcache: $perm" U nfguard rtcache stats
nfg_expect_exit 4 "^nfguard: rtcache: $perm" U nfguard rtcache flush
nfg_expect_exit 1 "^nfguard: stats: syncookie: $perm" U nfguard stats
nfg_expect_exit 4 '^nfguard: protect: reading the nftables ruleset: Operation not permitted \(needs CAP_NET_ADMIN' \
	U nfguard protect --syncookie tcp/80
nfg_expect_exit 4 '^nfguard: unprotect: reading the nftables ruleset: Operation not permitted \(needs CAP_NET_ADMIN' \
	U nfguard unprotect
nfg_assert_match '^nfguard [0-9]' "$(U nfguard version)" "version in a user namespace"
nfg_expect_exit 0 '^nfguard: warning: unprotect --dry-run: cannot read the nftables ruleset \(Operation not permitted\): printed as for an empty ruleset' \
	U nfguard unprotect --dry-run
# nothing changed
nfg_expect_exit 1 '' nfguard set test s 10.0.0.1
nfg_log "ok"
