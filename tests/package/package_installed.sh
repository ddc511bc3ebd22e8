#!/bin/bash
# nfg-case-timeout: 900
# The Debian packages inside a booted kernel: a VM case (tests/vm/run.sh) run
# on each kernel after tests/package/check.sh left two installed trees:
#   build/package/root-n    the bookworm chroot with version N installed
#   build/package/root-up   the same after the upgrade to N+1
#   (root-n-SUITE, root-up-SUITE: the same in a chroot of a newer Debian, for
#   a kernel of that Debian: trixie-backports' 7.x)
# (hard-link snapshots of its chroot; build/package/guest.env names N and
# N+1). `make check` runs it in its VM stage, `make check-package` boots each
# kernel with it itself.
#
# Approach: the guest sees the host root read-only over 9p, so these trees
# are visible at the same path. Every nfguard command runs inside them with
# chroot (env -i: no XTABLES_LIBDIR, PATH of the system only), with /proc,
# /sys, /dev, a tmpfs /run and /tmp, and the running kernel's own modules
# (kernel/, from build/kernels) bind-mounted (unmounted again at exit).
# A chroot rather than bind mounts of single files over the guest's paths:
# inside it there is no build tree at all (checked), so modprobe can only
# find the modules DKMS installed (/lib/modules/ABI/updates/dkms, through the
# modules.dep that DKMS's depmod wrote), iptables only the plugins of the
# system xtables libdir (its built-in default), and the CLI and
# libnfguard.so.1 are the packages' files. Generic tools (ip, ping) come
# from the guest's root; module autoload (request_module) runs the guest's
# modprobe, which has no nfguard module: ours are loaded only by the
# chroot's modprobe. The loaded module is proven to be the installed file:
# /sys/module/M/notes/.note.gnu.build-id equals the installed .ko's note
# and differs from the build tree's.
#
# N: modprobe of the four modules from updates/dkms (modinfo -n path,
# version N in modinfo and /sys/module/M/version), plugins found in the
# system xtables libdir by iptables-legacy and -nft, nfguard from /usr/sbin;
# a rangeset rule drops the client's ping in the router (legacy and nft:
# verdict + rule counter + the set's hits), kconnlimit, SYNCOOKIE and
# RTCACHE rules load, `nfguard stats` reads all four.
# Upgrade: what an operator does after installing N+1: save the sets and
# rules with N's tools, remove them, rmmod, modprobe (now N+1: modinfo and
# /sys/module/M/version), restore with N+1's tools: the same ping is dropped
# and counted again, by the restored legacy and nft rules.
set -u
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need ip ping chroot objcopy xz od

pkg=$NFG_TOP/build/package
# make check's VM stage starts while the package stage may still run: wait
# for its end (tests/package/check.sh writes stage.done at exit, however it
# ended). The host root is mounted cache=loose: 7.3 keeps the negative
# dentry of a file that did not exist yet (a new file on the host stays
# invisible; 6.1 looks it up again), so the caches are dropped before each look.
pkg_stage_done() {
	echo 2 >/proc/sys/vm/drop_caches
	[ -e "$pkg/stage.done" ]
}
if [ -e "$pkg/stage.running" ] && ! pkg_stage_done; then
	nfg_log "the package stage is still running: waiting for build/package/stage.done"
	t_end=$((SECONDS + 600))
	until pkg_stage_done; do
		[ "$SECONDS" -lt "$t_end" ] ||
			nfg_fail "the package stage did not end within 600 s (build/package/stage.running left by a killed run?)"
		nfg_sleep 2
	done
	nfg_log "the package stage ended"
fi
[ -f "$pkg/guest.env" ] || nfg_fail "no $pkg/guest.env: run tests/package/check.sh first (make check-package)"
ver=$(sed -n 's/^VER=//p' "$pkg/guest.env")
up=$(sed -n 's/^UP=//p' "$pkg/guest.env")
[ -n "$ver" ] && [ -n "$up" ] && [ "$ver" != "$up" ] || nfg_fail "guest.env: VER '$ver' UP '$up'"
case " $(sed -n 's/^PKG_KABIS=//p' "$pkg/guest.env") " in
*" $NFG_KABI "*) ;;
*) nfg_fail "the package stage installed nothing for $NFG_KABI (build/package/*.log)" ;;
esac
# A kernel of a newer Debian (tests/deps.sh marks it) was installed in a chroot
# of that suite: root-n-SUITE, root-up-SUITE.
sfx=
kmark=${NFG_KROOT:-$(realpath "$NFG_TOP/build/kernels/$NFG_KABI")}/.kbuild-chroot
[ ! -f "$kmark" ] || sfx=-$(cat "$kmark")
mods="xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE"
xtlib=/usr/lib/x86_64-linux-gnu/xtables
kmods=${NFG_KROOT:-$(realpath "$NFG_TOP/build/kernels/$NFG_KABI")}/lib/modules/$NFG_KABI/kernel
[ -d "$kmods" ] || kmods=/lib/modules/$NFG_KABI/kernel

# enter ROOT: the mounts a system needs, inside ROOT (read-only 9p here);
# leave: unmount them.
entered=
leave() {
	[ -n "$entered" ] || return 0
	umount -R "$entered/proc" "$entered/sys" "$entered/dev" "$entered/run" "$entered/tmp" \
		"$entered/lib/modules/$NFG_KABI/kernel"
	entered=
}
nfg_on_exit leave
enter() {
	local r=$1
	entered=$r
	[ -x "$r/usr/sbin/nfguard" ] || nfg_fail "$r: no installed /usr/sbin/nfguard"
	[ -d "$r/lib/modules/$NFG_KABI/kernel" ] || nfg_fail "$r: no /lib/modules/$NFG_KABI/kernel mount point"
	mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" && mount --rbind /dev "$r/dev" &&
		mount -t tmpfs tmpfs "$r/run" && mount -t tmpfs tmpfs "$r/tmp" &&
		mount --bind "$kmods" "$r/lib/modules/$NFG_KABI/kernel" || nfg_fail "$r: cannot mount /proc, /sys, /dev, /run, /tmp, kernel modules"
	# The build tree is not reachable from inside.
	[ ! -e "$r$NFG_TOP" ] || nfg_fail "$r contains the build tree's path $NFG_TOP"
}
# In ROOT ($root), a clean environment; RN: the same in the router's netns.
R() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C HOME=/root "$@"; }
RN() { ip netns exec "$NFG_NS_R" chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C HOME=/root "$@"; }

# build_id FILE.ko[.xz]: the bytes of its .note.gnu.build-id, in hex.
build_id() {
	local f=$1 t=$NFG_WORK/bid.ko
	case $f in *.xz) xz -dc "$f" >"$t" ;; *) cp "$f" "$t" ;; esac
	objcopy -O binary --only-section=.note.gnu.build-id "$t" "$t.note" && od -An -tx1 "$t.note" | tr -d ' \n'
}

# load V: modprobe our modules from ROOT; each is the installed file of
# version V from updates/dkms, and nothing else.
load() {
	local v=$1 m f got
	for m in $mods; do
		[ ! -d "/sys/module/$m" ] || nfg_fail "$m loaded before modprobe"
		f=$(R modinfo -n "$m" 2>&1)
		case $f in "/lib/modules/$NFG_KABI/updates/dkms/$m.ko"*) ;;
		*) nfg_fail "modinfo -n $m in $root: '$f', not under /lib/modules/$NFG_KABI/updates/dkms" ;; esac
		nfg_assert_eq "$v" "$(R modinfo -F version "$m")" "modinfo -F version $m"
	done
	# shellcheck disable=SC2086
	nfg_assert_ok "modprobe -a $mods (in $root)" R modprobe -a $mods
	for m in $mods; do
		[ -d "/sys/module/$m" ] || nfg_fail "$m not loaded after modprobe"
		nfg_assert_eq "$v" "$(cat "/sys/module/$m/version")" "/sys/module/$m/version"
		f=$root$(R modinfo -n "$m")
		got=$(od -An -tx1 "/sys/module/$m/notes/.note.gnu.build-id" | tr -d ' \n')
		nfg_assert_eq "$(build_id "$f")" "$got" "build-id of the loaded $m vs ${f#"$root"}"
		if [ -f "$NFG_TOP/build/kernel/$NFG_KABI/$m.ko" ]; then
			nfg_assert_ne "$(build_id "$NFG_TOP/build/kernel/$NFG_KABI/$m.ko")" "$got" \
				"build-id of the loaded $m (must not be the build tree's)"
		fi
	done
	nfg_log "$v: $mods loaded by modprobe from /lib/modules/$NFG_KABI/updates/dkms"
}

# userspace V: the plugins and the CLI of ROOT, version V.
userspace() {
	local v=$1 x out
	nfg_assert_eq unset "$(R sh -c 'echo ${XTABLES_LIBDIR-unset}')" "XTABLES_LIBDIR inside $root"
	for x in rangeset kconnlimit SYNCOOKIE RTCACHE; do
		grep -qa "nfguard-version=$v" "$root$xtlib/libxt_$x.so" ||
			nfg_fail "$xtlib/libxt_$x.so in $root: not version $v"
	done
	for variant in legacy nft; do
		out=$(R iptables-$variant -m rangeset -h 2>&1)
		nfg_assert_match '^rangeset match options:' "$out" "iptables-$variant -m rangeset -h"
		out=$(R iptables-$variant -j SYNCOOKIE -h 2>&1)
		nfg_assert_match '^SYNCOOKIE target options:' "$out" "iptables-$variant -j SYNCOOKIE -h"
	done
	nfg_assert_eq "/usr/sbin/nfguard" "$(R sh -c 'command -v nfguard')" "nfguard in PATH"
	nfg_assert_eq "nfguard $v" "$(R nfguard --version 2>&1)" "nfguard --version"
}

# pkts VARIANT: packets counted by the rule tagged nfgpkg (iptables-VARIANT-save -c).
pkts() {
	RN "iptables-$1-save" -c -t filter | sed -n 's/^\[\([0-9]*\):.*--comment nfgpkg .*/\1/p'
}
# dropped VARIANT N: the client's ping to the server is dropped, and counted
# (N packets so far) by the rule.
dropped() {
	nfg_assert_fail "ping through the rangeset rule ($1)" nfg_client ping -c 1 -W 1 "$NFG_S4"
	nfg_assert_eq "$2" "$(pkts "$1")" "iptables-$1 rule counter"
}

nfg_topo_up

# ------------------------------------------------------------------ version N
root=$pkg/root-n$sfx
enter "$root"
userspace "$ver"
load "$ver"
nfg_assert_ok "nfguard set create" RN nfguard set create blk ipv4
nfg_assert_ok "nfguard set add" RN nfguard set add blk "$NFG_C4" 192.0.2.0/24
nfg_assert_ok "legacy rangeset rule" RN iptables-legacy -w -A FORWARD -m rangeset --match-set blk src \
	-m comment --comment nfgpkg -j DROP
dropped legacy 1
nfg_assert_ok "flush legacy" RN iptables-legacy -w -F FORWARD
nfg_assert_ok "ping with no rule" nfg_client ping -c 1 -W 5 "$NFG_S4"
nfg_assert_ok "nft rangeset rule" RN iptables-nft -A FORWARD -m rangeset --match-set blk src \
	-m comment --comment nfgpkg -j DROP
dropped nft 1
nfg_assert_match '^Hits: *2$' "$(RN nfguard set list blk | grep '^Hits:')" "set hits"
nfg_assert_ok "kconnlimit rule" RN iptables-nft -A FORWARD -p tcp --syn -d "$NFG_S4" \
	-m kconnlimit --kconnlimit-above 50 --kconnlimit-name pkg -j DROP
nfg_assert_ok "SYNCOOKIE rule" RN iptables-legacy -w -t raw -A PREROUTING -p tcp -d "$NFG_S4" --dport 80 -j SYNCOOKIE
nfg_assert_ok "RTCACHE rule" RN iptables-legacy -w -t mangle -A FORWARD -j RTCACHE
out=$(RN nfguard stats 2>&1) || nfg_fail "nfguard stats: $out"
for x in rangeset kconnlimit syncookie rtcache; do
	nfg_assert_match "$x" "$out" "nfguard stats names $x"
done
nfg_log "$ver: rangeset drops and counts (legacy, nft), kconnlimit/SYNCOOKIE/RTCACHE rules load"

# ------------------------------------------------------------------ upgrade
# Save with N's tools, remove, reload the modules of N+1, restore with N+1's.
# (The legacy rangeset rule again, beside the nft one: both are saved.)
nfg_assert_ok "legacy rangeset rule again" RN iptables-legacy -w -A FORWARD -m rangeset --match-set blk src \
	-m comment --comment nfgpkg -j DROP
RN nfguard set save >"$NFG_WORK/sets" || nfg_fail "nfguard set save"
for t in filter raw mangle; do
	RN iptables-legacy-save -t $t >"$NFG_WORK/legacy.$t" || nfg_fail "iptables-legacy-save -t $t"
done
RN iptables-nft-save -t filter >"$NFG_WORK/nft.filter" || nfg_fail "iptables-nft-save"
grep -q -- '--match-set blk src' "$NFG_WORK/nft.filter" || nfg_fail "iptables-nft-save lost the rangeset rule"
grep -q -- '-j SYNCOOKIE' "$NFG_WORK/legacy.raw" || nfg_fail "iptables-legacy-save lost the SYNCOOKIE rule"
grep -q -- '--match-set blk src' "$NFG_WORK/legacy.filter" || nfg_fail "iptables-legacy-save lost the rangeset rule"
for t in filter raw mangle; do RN iptables-legacy -w -t $t -F; done
RN iptables-nft -F FORWARD
nfg_assert_ok "destroy the set" RN nfguard set destroy blk
# (a rule's memory may be freed after an RCU grace period: wait for it)
for m in $mods; do
	nfg_wait_until 60 rmmod "$m" || nfg_fail "rmmod $m ($ver): $(rmmod "$m" 2>&1)"
done
leave

root=$pkg/root-up$sfx
enter "$root"
userspace "$up"
load "$up"
nfg_assert_ok "nfguard set restore ($up)" RN nfguard set restore -f - <"$NFG_WORK/sets"
for t in filter raw mangle; do
	nfg_assert_ok "iptables-legacy-restore -t $t ($up)" RN iptables-legacy-restore -w <"$NFG_WORK/legacy.$t"
done
nfg_assert_ok "iptables-nft-restore ($up)" RN iptables-nft-restore <"$NFG_WORK/nft.filter"
# The legacy and the nft FORWARD chains both see the packet: one at a time.
nfg_assert_ok "flush nft" RN iptables-nft -F FORWARD
dropped legacy 1
nfg_assert_ok "flush legacy" RN iptables-legacy -w -F FORWARD
nfg_assert_ok "nft restore again" RN iptables-nft-restore <"$NFG_WORK/nft.filter"
dropped nft 1
for m in $mods; do
	nfg_assert_eq "$up" "$(cat "/sys/module/$m/version")" "/sys/module/$m/version after the reload"
done
nfg_log "$ver -> $up: modules reloaded, restored rules drop and count again (legacy, nft)"
