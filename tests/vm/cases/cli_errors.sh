#!/bin/bash
# Every nfguard sub-command's error paths (nfguard(8), EXIT STATUS and
# PROTECT COMMANDS): each failure prints "nfguard: <what>: <reason>" naming
# the problem and exits with the documented status:
#  - one table for every command: bad arguments 2 (for set, kconnlimit,
#    syncookie, rtcache, stats, version, protect, unprotect and an unknown
#    command), found before any module is asked for: an invalid element, an
#    unknown option (never taken for a set name);
#  - no module loaded (none of ours is; the modules are not where modprobe
#    looks: the guest's /lib/modules/R is the Debian package's, without ours):
#    the command says the running kernel has no nfguard module, names the
#    missing module, where it looked, the kernels that have modules, the DKMS
#    status, the supported kernels, and never suggests a modprobe (3); with
#    a fake modules tree (NFGUARD_MODULES_DIR) and a fake dkms: the kernels
#    listed and dkms's lines shown; a module installed for the running kernel
#    but not loaded: modprobe suggested (depmod first when modules.dep lacks
#    it); stats reports each
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
rel=$(uname -r)
rel_re=${rel//./\\.}
rel_re=${rel_re//+/\\+}
nomod="the running kernel $rel_re has no"
nfg_expect_exit 3 "^nfguard: list: $nomod xt_rangeset module: nfguard's modules are not built for it \\(none in /lib/modules/$rel_re/updates/dkms, updates/nfguard or extra\\)$" nfguard set list
nfg_expect_exit 3 "^nfguard: create s: $nomod xt_rangeset module" nfguard set create s ipv4
nfg_expect_exit 3 "^nfguard: kconnlimit list: $nomod xt_kconnlimit module" nfguard kconnlimit list
nfg_expect_exit 3 "^nfguard: kconnlimit top: $nomod xt_kconnlimit module" nfguard kconnlimit top
nfg_expect_exit 3 "^nfguard: syncookie: $nomod xt_SYNCOOKIE module" nfguard syncookie stats
nfg_expect_exit 3 "^nfguard: syncookie: $nomod xt_SYNCOOKIE module" nfguard syncookie allowlist list
nfg_expect_exit 3 "^nfguard: syncookie: $nomod xt_SYNCOOKIE module" nfguard syncookie secret rotate
# the whole diagnosis, and no modprobe that cannot work
out=$(nfguard rtcache stats 2>&1) && nfg_fail "rtcache stats without a module succeeded"
nfg_assert_match "^nfguard: rtcache: $nomod xt_RTCACHE module" "$out" "rtcache without a module"
nfg_assert_match "^  nfguard's modules are installed for no kernel \\(in /lib/modules\\)$" "$out" "kernels with modules"
command -v dkms >/dev/null ||
	nfg_assert_match "^  dkms is not installed \\(the nfguard-dkms package builds nfguard's modules for each kernel\\)$" "$out" "no dkms"
[ -e "/lib/modules/$rel/build" ] ||
	nfg_assert_match "^  no headers for $rel_re \\(/lib/modules/$rel_re/build\\): apt-get install linux-headers-$rel_re" "$out" "no headers"
nfg_assert_match "^  supported kernels: 6\\.1 and later" "$out" "supported kernels"
printf '%s\n' "$out" | grep -q modprobe && nfg_fail "suggests a modprobe that cannot work: $out"
# a fake modules tree (other kernels have modules) and a fake dkms
mods=$NFG_WORK/mods
mkdir -p "$mods/6.1.0-1-amd64/updates/dkms" "$mods/6.12.9+deb12-amd64/extra" "$mods/$rel/kernel" "$NFG_WORK/bin"
: >"$mods/6.1.0-1-amd64/updates/dkms/xt_RTCACHE.ko.xz"
: >"$mods/6.12.9+deb12-amd64/extra/xt_RTCACHE.ko"
printf '#!/bin/sh\n[ "$*" = "status -m nfguard" ] || exit 9\necho "nfguard/9.9, 6.1.0-1-amd64, x86_64: installed"\necho "nfguard/9.9: added"\n' \
	>"$NFG_WORK/bin/dkms"
chmod +x "$NFG_WORK/bin/dkms"
out=$(NFGUARD_MODULES_DIR=$mods PATH=$NFG_WORK/bin:$PATH nfguard rtcache stats 2>&1) &&
	nfg_fail "rtcache stats without a module succeeded"
nfg_assert_match "^nfguard: rtcache: $nomod xt_RTCACHE module: nfguard's modules are not built for it \\(none in $mods/$rel_re/updates/dkms, updates/nfguard or extra\\)$" "$out" "fake tree"
nfg_assert_match "^  nfguard's modules are installed for: 6\\.1\\.0-1-amd64, 6\\.12\\.9\\+deb12-amd64$" "$out" "fake tree: kernels"
nfg_assert_match "^  dkms status: nfguard/9\\.9, 6\\.1\\.0-1-amd64, x86_64: installed$" "$out" "fake dkms"
nfg_assert_match "^  dkms status: nfguard/9\\.9: added$" "$out" "fake dkms"
nfg_assert_match "^  no headers for $rel_re \\($mods/$rel_re/build\\): apt-get install linux-headers-$rel_re, then dkms autoinstall -k $rel_re$" "$out" "fake tree: headers"
printf '%s\n' "$out" | grep -q modprobe && nfg_fail "fake tree: suggests a modprobe that cannot work: $out"
# headers present: dkms can build
ln -s / "$mods/$rel/build"
out=$(NFGUARD_MODULES_DIR=$mods PATH=$NFG_WORK/bin:$PATH nfguard rtcache stats 2>&1) &&
	nfg_fail "rtcache stats without a module succeeded"
nfg_assert_match "^  headers for $rel_re are installed: dkms autoinstall -k $rel_re builds the modules \\(its make\\.log says why if it fails\\)$" "$out" "fake tree: headers present"
# installed for the running kernel but not loaded: modprobe, after depmod when modules.dep lacks it
mkdir -p "$mods/$rel/updates/dkms"
: >"$mods/$rel/updates/dkms/xt_RTCACHE.ko.xz"
: >"$mods/$rel/modules.dep"
nfg_expect_exit 3 "^nfguard: rtcache: the xt_RTCACHE kernel module is installed for $rel_re \\(updates/dkms/xt_RTCACHE\\.ko\\.xz\\) but not loaded, and modules\\.dep does not list it: depmod $rel_re, then modprobe xt_RTCACHE$" \
	env NFGUARD_MODULES_DIR="$mods" nfguard rtcache stats
printf 'kernel/net/x.ko:\nupdates/dkms/xt_RTCACHE.ko.xz: kernel/net/netfilter/nf_conntrack.ko.xz\n' >"$mods/$rel/modules.dep"
nfg_expect_exit 3 "^nfguard: rtcache: the xt_RTCACHE kernel module is installed for $rel_re \\(updates/dkms/xt_RTCACHE\\.ko\\.xz\\) but not loaded: modprobe xt_RTCACHE \\(its error, or dmesg, says why it does not load\\)$" \
	env NFGUARD_MODULES_DIR="$mods" nfguard rtcache stats
# a bad address is named as such before the module is looked for
nfg_expect_exit 2 '^nfguard: syncookie allowlist add: expected ADDR\[/PREFIX\], got "10\.0\.0\.300"' \
	nfguard syncookie allowlist add 10.0.0.300
nfg_expect_exit 2 '^nfguard: syncookie allowlist del: unexpected "timeout"' nfguard syncookie allowlist del 10.0.0.1 timeout 5
nfg_expect_exit 3 "^nfguard: syncookie: $nomod xt_SYNCOOKIE module" nfguard syncookie allowlist add 10.0.0.1
nfg_expect_exit 3 "^nfguard: rtcache: $nomod xt_RTCACHE module" nfguard rtcache flush
nfg_expect_exit 3 "^nfguard: protect: $nomod xt_rangeset module" nfguard protect --blocklist bl
nfg_expect_exit 3 "^nfguard: protect: $nomod xt_RTCACHE module" nfguard protect --rtcache
out=$(nfguard protect --rtcache 2>&1) && nfg_fail "protect without a module succeeded"
printf '%s\n' "$out" | grep -q modprobe && nfg_fail "protect suggests a modprobe that cannot work: $out"
nfg_expect_exit 3 "^nfguard: protect: the xt_RTCACHE kernel module is installed for $rel_re .* but not loaded: modprobe xt_RTCACHE " \
	env NFGUARD_MODULES_DIR="$mods" nfguard protect --rtcache
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
