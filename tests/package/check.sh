#!/bin/bash
# Debian packaging test (make check-package): dist, .debs, lintian, and the
# packages' life in a clean Debian chroot.
#
# usage: tests/package/check.sh
#
# Where: a Debian bookworm chroot made by mmdebstrap from deb.debian.org
# (dkms, iptables, kmod, gcc, make, pkgconf, libmnl-dev, libnftnl-dev; libelf1
# and libssl3 for the kernels' kbuild tools and dwarves (pahole: 6.12 makes
# BTF for modules), which linux-headers would pull in),
# cached as build/package/chroot-bookworm.tar and unpacked afresh each run
# under build/package/root; /proc, /dev and the kernel trees
# (build/kernels -> its real path, read-only) are bind-mounted into it and
# everything is unmounted and removed on exit. Installing on the host would
# leave dkms state, depmod output and dpkg records behind; the chroot keeps
# the host untouched and starts from nothing each run.
# Checks:
#   dist        `make dist` twice: identical bytes; every entry owned by 0,
#               mtime = HEAD's commit time, names in sorted order
#   version     debian/changelog's version = NFG_VERSION (configure.ac)
#   build       tests/package/build-deb.sh -t (the `make dist` tarball of the
#               dist check): the four packages, version N, and N+1 (same
#               tarball, version bumped); so the tarball builds: userspace
#               here, the modules by DKMS in install/upgrade. (A tree with
#               uncommitted changes is built as it is, with a note.)
#   lintian     no E: tag on the .changes (W: tags listed, see
#               packaging/debian/README)
#   install     dpkg -i of N in the chroot, where /lib/modules holds both
#               kernel ABIs (build -> build/kernels headers), an unsupported
#               5.10.0-fake and a failing 6.12.999-fake: the postinst builds
#               both ABIs, skips 5.10 (BUILD_EXCLUSIVE), survives the failed
#               build (warning) and every package is "ii"; modules under
#               /lib/modules/ABI/updates/dkms with vermagic ABI and modinfo
#               version N, in modules.dep; plugins load in iptables-legacy
#               from the system xtables libdir and carry version N; nfguard
#               --version; a program builds and runs against libnfguard-dev
#   relations   nfguard N Recommends nfguard-dkms (= N) and Breaks every
#               other version of it (they share the kernel ABI)
#   abort       dpkg -i of N+1 whose nfguard-dkms cannot be unpacked (a file
#               of it belongs to another package): dpkg fails, N's postinst
#               abort-upgrade runs, nfguard-dkms N stays "ii", registered
#               with DKMS and its modules installed, nothing kept aside
#   failed      dpkg -i of N+1 while the newest kernel's build fails (its
#               build link points to a tree whose make fails): dpkg exits
#               non-zero, nfguard-dkms is half-configured, N stays
#               installed for that kernel (modules of version N, in
#               modules.dep); then the tree is fixed and `dpkg --configure
#               -a` succeeds
#   upgrade     dpkg -i of N+1 (same tree, bumped version): DKMS state of N
#               gone, the postinst rebuilt the modules (in this chroot,
#               where the running kernel is the host's, dkms's
#               common.postinst builds every ABI with headers; `dkms build -k
#               ABI --kernelsourcedir DIR` + `dkms install` for the older
#               ABIs cover a postinst that builds only the newest: no-ops
#               here); every module has version N+1
#   purge       dpkg --purge of all four: no file of the packages, no
#               /etc/nfguard (a saved sets.save included), no unit link, no
#               /usr/src/nfguard-*, no /var/lib/dkms/nfguard, no module
#   boot        tests/package/package_installed.sh (see there) on each kernel, in a VM
#               (tests/vm/run.sh), on hard-link snapshots of the chroot after
#               install (build/package/root-n) and after upgrade (root-up),
#               kept after the run with build/package/guest.env;
#               NFG_PKG_BOOT=0 leaves it to the caller (make check runs it
#               in its VM stage)
# NFG_PKG_REUSE_DEBS=1: keep the .debs of the last run (debugging this script).
# Prints "ok"/"not ok" per check and "N passed, N failed"; exit 0 only if
# every check passed. Logs: build/package/*.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -eq 0 ] || { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "tests/package/check.sh: needs root (chroot, mounts)" >&2; exit 2; }
for t in mmdebstrap dpkg-buildpackage lintian dh; do
	command -v $t >/dev/null || { echo "tests/package/check.sh: needs $t (tests/deps.d/package.txt)" >&2; exit 2; }
done

pkgdir=$top/build/package
logs=$pkgdir
mkdir -p "$pkgdir" || exit 2
rm -f "$logs"/*.log
root=$pkgdir/root
base=$pkgdir/chroot-bookworm.tar
export LC_ALL=C.UTF-8

pass=0 fail=0 failed=
report() {
	if [ -z "$failed" ]; then echo "ok - $1"; pass=$((pass + 1))
	else echo "not ok - $1"; printf '%s' "$failed"; fail=$((fail + 1)); fi
	failed=
}
bad() { failed+="    $*"$'\n'; }

umount_root() {
	local m
	# deepest first; never remove a tree that still has something mounted
	for m in $(findmnt -rn -o TARGET | grep -F "$root/" | sort -r); do umount -l "$m" 2>/dev/null; done
}
cleanup() {
	[ -d "$root" ] || return 0
	umount_root
	if findmnt -rn -o TARGET | grep -qF "$root/"; then
		echo "tests/package/check.sh: $root still has mounts, not removed" >&2
	else
		rm -rf --one-file-system "$root"
	fi
}
# stage.running while this runs, stage.done once it ended (however): make
# check starts its VM stage before this ends, and package_installed.sh (near
# the end of each kernel's queue) waits for stage.done when it sees
# stage.running (a guest sees a file appear over 9p at once, not always
# one disappear: cache=loose).
rm -f "$pkgdir/stage.done"
: >"$pkgdir/stage.running"
stage_end() {
	cleanup
	: >"$pkgdir/stage.done"
	rm -f "$pkgdir/stage.running"
}
trap stage_end EXIT
trap 'exit 130' INT TERM

# The installed trees of the last run, for tests/package/package_installed.sh.
rm -f "$pkgdir/guest.env"
for d in root-n root-up; do
	[ ! -e "$pkgdir/$d" ] || rm -rf --one-file-system "${pkgdir:?}/$d"
done

cfg() { sed -n "s/^$1 = //p" "$top/build/config.mk"; }
[ -f "$top/build/config.mk" ] || make -C "$top" -s build/config.mk >/dev/null 2>&1
ver=$(cfg NFG_VERSION) kabis=$(cfg KABIS) kdirs=$(cfg KERNELS_DIR)
up=$ver.1
kdirs=$(readlink -f "$kdirs")
# A kernel whose kbuild tools need a newer Debian than this bookworm chroot
# (tests/deps.sh marks it: build/kernels/ABI/.kbuild-chroot, trixie-backports'
# 7.x) cannot be built by DKMS here: the checks below cover the others, and
# guest.env names them (PKG_KABIS) for tests/package/package_installed.sh.
# They are installed in a chroot of their own suite further down.
newer_kabis=
for k in $kabis; do
	[ -f "$kdirs/$k/.kbuild-chroot" ] && newer_kabis="$newer_kabis $k"
done
kabis=$(for k in $kabis; do [ -f "$kdirs/$k/.kbuild-chroot" ] || echo "$k"; done)
kabis=$(echo $kabis)

# ------------------------------------------------------------------ dist --
rm -f "$pkgdir"/dist-*.tar.gz
for i in 1 2; do
	if make -C "$top" -s --no-print-directory dist >"$logs/dist$i.log" 2>&1; then
		cp "$top/build/nfguard-$ver.tar.gz" "$pkgdir/dist-$i.tar.gz"
	else bad "make dist failed (build/package/dist$i.log)"; fi
	[ $i = 1 ] && sleep 1.1	# a run one second later must not differ
done
if [ -f "$pkgdir/dist-1.tar.gz" ] && [ -f "$pkgdir/dist-2.tar.gz" ]; then
	cmp -s "$pkgdir/dist-1.tar.gz" "$pkgdir/dist-2.tar.gz" || bad "two make dist runs differ"
	gzip -lv "$pkgdir/dist-1.tar.gz" >/dev/null 2>&1 || bad "not a gzip file"
	[ "$(od -An -tu1 -j4 -N4 "$pkgdir/dist-1.tar.gz" | tr -s ' ')" = " 0 0 0 0" ] ||
		bad "gzip header carries a timestamp (not gzip -n)"
	ctime=$(git -C "$top" log -1 --format=%ct HEAD)
	tar --numeric-owner --full-time -tvzf "$pkgdir/dist-1.tar.gz" >"$pkgdir/dist.list" 2>&1 || bad "tar -tvzf failed"
	odd=$(awk '$2 != "0/0" { print $2 " " $6; exit }' "$pkgdir/dist.list")
	[ -z "$odd" ] || bad "entry not owned by 0/0: $odd"
	want=$(date -u -d @"$ctime" '+%Y-%m-%d %H:%M:%S')
	odd=$(TZ=UTC tar --numeric-owner --full-time -tvzf "$pkgdir/dist-1.tar.gz" | awk -v w="$want" '($4 " " $5) != w { print $6; exit }')
	[ -z "$odd" ] || bad "mtime of $odd is not the commit time $want"
	tar -tzf "$pkgdir/dist-1.tar.gz" >"$pkgdir/dist.names"
	# git archive order: a tree's entries by name, each directory just before its contents
	# (directories keep their trailing /): byte order of the full names
	LC_ALL=C sort -c "$pkgdir/dist.names" 2>/dev/null ||
		bad "entry names are not in sorted order"
	# sources only, under one top directory
	odd=$(grep -v -e "^nfguard-$ver/" "$pkgdir/dist.names" | head -n 3)
	[ -z "$odd" ] || bad "entries outside nfguard-$ver/: $odd"
	odd=$(grep -E "^nfguard-$ver/(\.git|build|configure|config\.status|autom4te\.cache)(/|$)" "$pkgdir/dist.names" | head -n 3)
	[ -z "$odd" ] || bad "tarball carries repository or generated files: $odd"
	for f in Makefile configure.ac config.mk.in kernel/Kbuild packaging/dkms.conf packaging/debian/control; do
		grep -qx "nfguard-$ver/$f" "$pkgdir/dist.names" || bad "tarball lacks $f"
	done
fi
report "dist: two make dist runs give identical bytes (owner 0, commit mtime, sorted, gzip -n); sources only, in nfguard-$ver/"

# --------------------------------------------------------------- version --
chver=$(dpkg-parsechangelog -l "$top/packaging/debian/changelog" -SVersion)
[ "$chver" = "$ver" ] || bad "packaging/debian/changelog says $chver, NFG_VERSION is $ver"
report "version: debian/changelog = NFG_VERSION = $ver"

# ----------------------------------------------------------------- build --
debs_n=$pkgdir/deb-n debs_up=$pkgdir/deb-up
pkgs="nfguard-dkms nfguard libnfguard1 libnfguard-dev"
# From the tarball (what a release ships) when the tree is what HEAD says;
# with uncommitted changes, from the working tree, so that they are tested.
src_opt=(-t "$pkgdir/dist-1.tar.gz")
if [ -n "$(git -C "$top" status --porcelain 2>/dev/null)" ]; then
	echo "# build: uncommitted changes: packages built from the working tree, not from the make dist tarball"
	src_opt=()
fi
# N and N+1 at the same time (separate trees; each build is serial make):
# beside make check's self-test, whose guests leave CPU time idle.
declare -A bbpid=()
for d in "$debs_n:$ver" "$debs_up:$up"; do
	dir=${d%%:*} v=${d#*:}
	arg=; [ "$v" = "$ver" ] || arg=$v
	if [ -n "${NFG_PKG_REUSE_DEBS:-}" ] && ls "$dir/nfguard_${v}_"*.deb >/dev/null 2>&1; then
		: # debugging this script: keep the .debs of the last run
	else
		rm -rf "$dir"
		"$here/build-deb.sh" "${src_opt[@]}" "$dir" $arg >"$logs/build-$v.log" 2>&1 &
		bbpid[$v]=$!
	fi
done
for d in "$debs_n:$ver" "$debs_up:$up"; do
	dir=${d%%:*} v=${d#*:}
	if [ -n "${bbpid[$v]:-}" ] && ! wait "${bbpid[$v]}"; then
		bad "build-deb.sh $v failed (build/package/build-$v.log, $dir/build.log)"
		continue
	fi
	for p in $pkgs; do
		ls "$dir/${p}_${v}_"*.deb >/dev/null 2>&1 || bad "no ${p}_${v} .deb in $dir"
	done
done
report "build: dpkg-buildpackage -us -uc -b gives $pkgs ($ver and $up)"

# --------------------------------------------------------------- lintian --
if ls "$debs_n"/*.changes >/dev/null 2>&1; then
	lintian --pedantic -I "$debs_n"/*.changes >"$logs/lintian.log" 2>&1
	grep -q '^E: ' "$logs/lintian.log" && bad "lintian errors: $(grep -c '^E: ' "$logs/lintian.log") (build/package/lintian.log)"
	grep -q 'no-symbols-control-file' "$logs/lintian.log" && bad "libnfguard1 has no symbols file (packaging/debian/libnfguard1.symbols)"
	grep 'symbols-file-' "$logs/lintian.log" | sed 's/^/    /' | grep . && bad "lintian: tags on libnfguard1.symbols"
	grep '^W: ' "$logs/lintian.log" | sed 's/^/    accepted? /'
else bad "no .changes to check"; fi
report "lintian: no errors ($(grep -c '^W: ' "$logs/lintian.log" 2>/dev/null) warnings, $(grep -c '^I: ' "$logs/lintian.log" 2>/dev/null) info)"

# ---------------------------------------------------------------- chroot --
if [ ! -f "$base" ]; then
	mmdebstrap --variant=apt \
		--include=dkms,iptables,kmod,pkgconf,libmnl-dev,libnftnl-dev,gcc,libc6-dev,make,libelf1,libssl3,dwarves \
		bookworm "$pkgdir/chroot-new.tar" "deb http://deb.debian.org/debian bookworm main" >"$logs/mmdebstrap.log" 2>&1 &&
		mv "$pkgdir/chroot-new.tar" "$base"
fi
cleanup
mkdir -p "$root"
R() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root \
	DEBIAN_FRONTEND=noninteractive "$@"; }
# keep DKMS's build logs (the chroot goes at exit)
save_dkms_logs() {
	local f
	for f in "$root"/var/lib/dkms/nfguard/*/build/make.log; do
		[ -f "$f" ] && cp "$f" "$logs/dkms-make-$1-$(basename "$(dirname "$(dirname "$f")")").log"
	done
}
# The chroot's mounts: /proc, /dev, the kernel trees read-only at their own
# path (headers: /lib/modules/ABI/build), and each kernel's own modules at
# /lib/modules/ABI/kernel (read-only), as on a system with linux-image-ABI
# installed: DKMS's depmod then writes a modules.dep that resolves our
# modules' dependencies, which modprobe in the booted guest needs.
mount_root() {
	local k
	mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
		mount --bind "$kdirs" "$root$kdirs" && mount -o remount,bind,ro "$root$kdirs" || return 1
	for k in $kabis; do
		mount --bind "$kdirs/$k/lib/modules/$k/kernel" "$root/lib/modules/$k/kernel" &&
			mount -o remount,bind,ro "$root/lib/modules/$k/kernel" || return 1
	done
}
# snapshot NAME: a copy of the chroot as it is now in build/package/NAME for
# tests/package/package_installed.sh (hard links: dpkg and dkms replace files, they do
# not rewrite them), without its mounts (mount points stay, empty), except
# the kernel trees' one: $kdirs is often inside the repository (build/kernels),
# and the guest case checks that no path of the build tree exists in the copy.
snapshot() {
	local ok= d
	umount_root
	rm -rf --one-file-system "${pkgdir:?}/$1"
	cp -al "$root" "$pkgdir/$1" && ok=1
	# the modules copied, not linked: when a version replaces another that
	# is still installed, dkms install overwrites the module file in place
	for d in "$root"/lib/modules/*/updates; do
		[ -d "$d" ] || continue
		rm -rf --one-file-system "${pkgdir:?}/$1${d#"$root"}" && cp -a "$d" "$pkgdir/$1${d#"$root"}" || ok=
	done
	d=$kdirs
	while [ -n "$d" ] && [ "$d" != / ] && rmdir "$pkgdir/$1$d" 2>/dev/null; do d=$(dirname "$d"); done
	mount_root || ok=
	[ -n "$ok" ]
}
chroot_ok=
if [ -f "$base" ] && tar -xf "$base" -C "$root" 2>"$logs/chroot.log"; then
	mkdir -p "$root$kdirs" "$root/debs"
	for k in $kabis; do
		mkdir -p "$root/lib/modules/$k/kernel"
		# modules.dep & co. as linux-image-ABI's postinst (depmod) leaves
		# them: tests/deps.sh ran depmod on the unpacked kernel
		cp "$kdirs/$k/lib/modules/$k"/modules.* "$root/lib/modules/$k/" 2>>"$logs/chroot.log"
		[ -s "$root/lib/modules/$k/modules.dep" ] || echo "no modules.dep in $kdirs/$k/lib/modules/$k" >>"$logs/chroot.log"
	done
	[ -s "$root/lib/modules/${kabis%% *}/modules.dep" ] && mount_root && chroot_ok=1
	cp "$debs_n"/*.deb "$debs_up"/*.deb "$root/debs/" 2>/dev/null
fi
[ -n "$chroot_ok" ] || bad "no chroot (build/package/mmdebstrap.log, chroot.log)"
report "chroot: bookworm from mmdebstrap, kernel trees read-only inside"

# the .debs of version $1, as paths inside the chroot
debs_of() { (cd "$root/debs" && for p in $pkgs; do ls "${p}_$1_"*.deb; done) | sed 's|^|/debs/|'; }
kdir_of() { echo "$kdirs/$1/usr/src/linux-headers-$1"; }
newest=$(printf '%s\n' $kabis | sort -V | tail -n 1)

# Every package installed and configured ("ii") at version $1.
check_status() {
	local p st
	for p in $pkgs; do
		st=$(R dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$p" 2>/dev/null)
		[ "$st" = "ii $1" ] || bad "$p: dpkg status '$st', expected 'ii $1'"
	done
}

# Our modules: what the build made for the first ABI (dkms.conf must name
# them all), at least these four.
mods=$( { printf '%s\n' xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE
	for f in "$top/build/kernel/${kabis%% *}"/*.ko; do [ -f "$f" ] && basename "$f" .ko; done; } | sort -u)
# Modules of version $1 for every ABI: under updates/dkms, vermagic, modinfo
# version, in modules.dep.
check_modules() {
	local v=$1 k m f
	for k in $kabis; do
		for m in $mods; do
			# compressed as the kernel's own modules are (6.12: .ko.xz)
			f=/lib/modules/$k/updates/dkms/$m.ko
			grep -q '\.ko\.xz:' "$root/lib/modules/$k/modules.dep" 2>/dev/null && f=$f.xz
			[ -f "$root$f" ] || { bad "$k: no $f"; continue; }
			[ "$(R modinfo -F version "$f")" = "$v" ] || bad "$k: $m version '$(R modinfo -F version "$f")', expected $v"
			case "$(R modinfo -F vermagic "$f")" in "$k "*) ;; *) bad "$k: $m vermagic '$(R modinfo -F vermagic "$f")'";; esac
			grep -q "^${f#"/lib/modules/$k/"}:" "$root/lib/modules/$k/modules.dep" 2>/dev/null || bad "$k: $m not in modules.dep"
		done
	done
}

# ---------------------------------------------------------------- install --
if [ -n "$chroot_ok" ]; then
	for k in $kabis; do
		mkdir -p "$root/lib/modules/$k" && ln -sfn "$(kdir_of $k)" "$root/lib/modules/$k/build"
	done
	# 5.10.0-fake: outside BUILD_EXCLUSIVE_KERNEL; 6.12.999-fake: in it, with
	# the right config, but its build fails (the newest kernel: built last)
	for k in 5.10.0-fake 6.12.999-fake; do
		mkdir -p "$root/usr/src/linux-$k/include" "$root/lib/modules/$k"
		cp "$(kdir_of $newest)/.config" "$root/usr/src/linux-$k/.config"
		printf '%%:\n\t@echo "fake kernel tree $(MAKECMDGOALS): this build fails on purpose" >&2; exit 1\n' \
			>"$root/usr/src/linux-$k/Makefile"
		ln -sfn "/usr/src/linux-$k" "$root/lib/modules/$k/build"
	done
	debs=$(debs_of "$ver")
	R dpkg -i $debs >"$logs/install.log" 2>&1 || bad "dpkg -i $ver exits $? (build/package/install.log)"
	check_status "$ver"
	grep -q "nfguard-dkms: WARNING: building the nfguard modules failed" "$logs/install.log" ||
		bad "no warning for the failed 6.12.999-fake build"
	ls "$root/lib/modules/5.10.0-fake/updates" >/dev/null 2>&1 && bad "modules built for 5.10.0-fake (unsupported)"
	save_dkms_logs install
	R dkms status >"$logs/dkms-status.log" 2>&1
	grep -A3 "^Building initial module for 5.10.0-fake" "$logs/install.log" | grep -qx "Skipped." ||
		bad "5.10.0-fake not skipped (BUILD_EXCLUSIVE_KERNEL)"
	check_modules "$ver"
	junk=$(cd "$root/usr/src/nfguard-$ver" 2>/dev/null && find . -type l -o -name '*.o' -o -name '*.ko' -o -name '*.cmd' \
		-o -name '*.mod*' -o -name Module.symvers -o -name modules.order -o -path ./kernel/compat/gen | head -n 3)
	[ -z "$junk" ] || bad "symlinks or build products in /usr/src/nfguard-$ver: $junk"
	xtlib=$(R pkg-config --variable=xtlibdir xtables 2>/dev/null)
	[ -n "$xtlib" ] || xtlib=/usr/lib/x86_64-linux-gnu/xtables
	for x in rangeset kconnlimit; do
		R iptables-legacy -m $x -h >"$logs/plugin-$x.log" 2>&1 || bad "iptables-legacy -m $x -h exits $?"
		grep -q "^$x match options" "$logs/plugin-$x.log" || grep -qi "$x" "$logs/plugin-$x.log" ||
			bad "iptables-legacy -m $x -h: no $x help"
	done
	for x in SYNCOOKIE RTCACHE; do
		R iptables-legacy -j $x -h >"$logs/plugin-$x.log" 2>&1 || bad "iptables-legacy -j $x -h exits $?"
	done
	for x in rangeset kconnlimit SYNCOOKIE RTCACHE; do
		f=$root$xtlib/libxt_$x.so
		[ -f "$f" ] || { bad "no $xtlib/libxt_$x.so"; continue; }
		grep -qa "nfguard-version=$ver" "$f" || bad "libxt_$x.so does not carry nfguard-version=$ver"
	done
	out=$(R nfguard --version 2>&1)
	[ "$out" = "nfguard $ver" ] || bad "nfguard --version prints '$out'"
	# persistence (tests/persist/check.sh boots it): files, conffiles, unit enabled
	for f in /usr/libexec/nfguard/nfguard-persistent /usr/share/netfilter-persistent/plugins.d/12-nfguard \
		/usr/share/netfilter-persistent/plugins.d/45-nfguard; do
		[ -x "$root$f" ] || bad "no executable $f"
	done
	for f in /etc/nfguard/protect.conf /etc/nfguard/persistent.conf /etc/fail2ban/action.d/nfguard-rangeset.conf; do
		R dpkg-query -W -f='${Conffiles}\n' nfguard | grep -q "^ $f " || bad "$f is not a conffile of nfguard"
	done
	[ -L "$root/etc/systemd/system/multi-user.target.wants/nfguard.service" ] || bad "nfguard.service not enabled"
	[ "$(R dpkg-query -W -f='${Conffiles}\n' nfguard | grep -c .)" = 3 ] ||
		bad "conffiles other than protect.conf, persistent.conf and the fail2ban action"
	[ "$(R pkg-config --modversion libnfguard 2>&1)" = "$ver" ] || bad "pkg-config --modversion libnfguard: not $ver"
	printf '#include <stdio.h>\n#include <libnfguard.h>\nint main(void) { printf("%%s\\n", nfg_version()); return 0; }\n' \
		>"$root/tmp/nfgtest.c"
	R sh -c 'gcc -o /tmp/nfgtest /tmp/nfgtest.c $(pkg-config --cflags --libs libnfguard)' >"$logs/libtest.log" 2>&1 ||
		bad "a program does not build with pkg-config libnfguard (build/package/libtest.log)"
	out=$(R /tmp/nfgtest 2>&1)
	[ "$out" = "$ver" ] || bad "nfg_version() from libnfguard1 says '$out'"
	snapshot root-n || bad "cannot snapshot the chroot to build/package/root-n"
else bad "no chroot"; fi
report "install: $ver, postinst builds $kabis, skips 5.10.0-fake, survives a failed build; plugins, CLI, library, persistence files"

# ------------------------------------------------------------- relations --
f=$(ls "$debs_n"/nfguard_"${ver}"_*.deb 2>/dev/null | head -n 1)
if [ -n "$f" ]; then
	dpkg-deb -f "$f" Recommends | grep -qF "nfguard-dkms (= $ver)" ||
		bad "nfguard does not recommend nfguard-dkms (= $ver): $(dpkg-deb -f "$f" Recommends)"
	b=$(dpkg-deb -f "$f" Breaks | tr ',' '\n' | sed 's/^ *//' | sort | tr '\n' ';')
	[ "$b" = "nfguard-dkms (<< $ver);nfguard-dkms (>> $ver);" ] || bad "nfguard's Breaks is '$(dpkg-deb -f "$f" Breaks)'"
else bad "no nfguard .deb"; fi
report "relations: nfguard $ver recommends nfguard-dkms (= $ver) and breaks every other version"

# ---------------------------------------------------------------- upgrade --
if [ -n "$chroot_ok" ]; then
	rm -rf "$root/lib/modules/5.10.0-fake" "$root/lib/modules/6.12.999-fake" \
		"$root/usr/src/linux-5.10.0-fake" "$root/usr/src/linux-6.12.999-fake"
	debs=$(debs_of "$up")
	# abort-upgrade: a package that owns a file of nfguard-dkms N+1
	mkdir -p "$root/tmp/conflict/DEBIAN" "$root/tmp/conflict/usr/src/nfguard-$up"
	printf 'Package: nfguard-conflict\nVersion: 1\nArchitecture: all\nMaintainer: x <x@example.org>\nDescription: test\n' \
		>"$root/tmp/conflict/DEBIAN/control"
	: >"$root/tmp/conflict/usr/src/nfguard-$up/dkms.conf"
	R dpkg-deb -b /tmp/conflict /tmp/conflict.deb >"$logs/abort.log" 2>&1 && R dpkg -i /tmp/conflict.deb >>"$logs/abort.log" 2>&1 ||
		bad "cannot install the conflicting package (build/package/abort.log)"
	R dpkg -i $debs >>"$logs/abort.log" 2>&1 && bad "dpkg -i $up succeeded although nfguard-dkms cannot be unpacked"
	st=$(R dpkg-query -W -f='${db:Status-Abbrev}${Version}' nfguard-dkms 2>/dev/null)
	[ "$st" = "ii $ver" ] || bad "after the aborted upgrade nfguard-dkms is '$st', expected 'ii $ver'"
	for k in $kabis; do
		R dkms status -m nfguard -v "$ver" -k "$k" 2>/dev/null | grep -q ': installed' ||
			bad "$k: nfguard $ver not installed in DKMS after the aborted upgrade"
	done
	[ -e "$root/var/lib/nfguard-dkms" ] && bad "/var/lib/nfguard-dkms left after the aborted upgrade"
	check_modules "$ver"
	R dpkg --purge nfguard-conflict >>"$logs/abort.log" 2>&1 || bad "cannot remove the conflicting package"
	report "abort: an upgrade that cannot unpack nfguard-dkms $up fails; $ver stays installed, registered, its modules in place"

	# a build of N+1 that fails for the newest kernel
	mkdir -p "$root/usr/src/linux-fails"
	cp "$(kdir_of $newest)/.config" "$root/usr/src/linux-fails/.config"
	printf '%%:\n\t@echo "this build fails on purpose" >&2; exit 1\n' >"$root/usr/src/linux-fails/Makefile"
	mkdir -p "$root/usr/src/linux-fails/include"
	ln -sfn /usr/src/linux-fails "$root/lib/modules/$newest/build"
	R dpkg -i $debs >"$logs/upgrade-failed.log" 2>&1 && bad "dpkg -i $up exits 0 although the $newest build failed"
	grep -q "nfguard-dkms: ERROR: building the nfguard $up modules failed for $newest;" "$logs/upgrade-failed.log" ||
		bad "no error naming $newest (build/package/upgrade-failed.log)"
	st=$(R dpkg-query -W -f='${db:Status-Abbrev}${Version}' nfguard-dkms 2>/dev/null)
	[ "$st" = "iF $up" ] || bad "nfguard-dkms is '$st' after the failed build, expected 'iF $up' (half-configured)"
	save_dkms_logs failed
	sv=$kabis kabis=$newest
	check_modules "$ver"
	kabis=$sv
	for k in $kabis; do
		[ "$k" = "$newest" ] && continue
		f=/lib/modules/$k/updates/dkms/xt_rangeset.ko
		[ -f "$root$f" ] || f=$f.xz
		[ "$(R modinfo -F version "$f" 2>/dev/null)" = "$up" ] || bad "$k: xt_rangeset is not $up after the upgrade that failed only for $newest"
	done
	ln -sfn "$(kdir_of $newest)" "$root/lib/modules/$newest/build"
	rm -rf "$root/usr/src/linux-fails"
	R dpkg --configure -a >"$logs/upgrade.log" 2>&1 || bad "dpkg --configure -a exits $? (build/package/upgrade.log)"
	report "failed: the $up build failing for $newest: dpkg fails, $ver's modules stay there; dpkg --configure -a then succeeds"
	check_status "$up"
	[ -e "$root/var/lib/dkms/nfguard/$ver" ] && bad "/var/lib/dkms/nfguard/$ver left after the upgrade"
	[ -e "$root/usr/src/nfguard-$ver" ] && bad "/usr/src/nfguard-$ver left after the upgrade"
	[ -e "$root/var/lib/nfguard-dkms" ] && bad "/var/lib/nfguard-dkms left after the upgrade"
	for k in $kabis; do
		[ "$k" = "$newest" ] && continue
		R dkms build -m nfguard -v "$up" -k "$k" --kernelsourcedir "$(kdir_of $k)" >"$logs/dkms-build-$k.log" 2>&1 ||
			bad "dkms build -k $k exits $? (build/package/dkms-build-$k.log)"
		R dkms install -m nfguard -v "$up" -k "$k" --kernelsourcedir "$(kdir_of $k)" >"$logs/dkms-install-$k.log" 2>&1 ||
			bad "dkms install -k $k exits $? (build/package/dkms-install-$k.log)"
	done
	save_dkms_logs upgrade
	check_modules "$up"
	out=$(R nfguard --version 2>&1)
	[ "$out" = "nfguard $up" ] || bad "nfguard --version prints '$out' after the upgrade"
	snapshot root-up || bad "cannot snapshot the chroot to build/package/root-up"
else bad "no chroot"; fi
report "upgrade: $ver -> $up, DKMS state of $ver gone, modules rebuilt for $kabis"

# ------------------------------------------------------------------ purge --
if [ -n "$chroot_ok" ]; then
	R dpkg-query -L $pkgs 2>/dev/null | sort -u >"$pkgdir/files.list"
	grep -q '^/usr/sbin/nfguard$' "$pkgdir/files.list" || bad "nothing installed to purge"
	# state as nfguard-persistent saves it: purge removes it
	printf 'create x ipv4\n' >"$root/etc/nfguard/sets.save" || bad "no /etc/nfguard after the upgrade"
	R dpkg --purge $pkgs >"$logs/purge.log" 2>&1 || bad "dpkg --purge exits $? (build/package/purge.log)"
	R dpkg-query -W $pkgs >/dev/null 2>&1 && bad "packages still known to dpkg: $(R dpkg-query -W -f='${Package} ' $pkgs 2>/dev/null)"
	while read -r f; do
		[ -n "$f" ] && [ ! -d "$root$f" ] && { [ -e "$root$f" ] || [ -L "$root$f" ]; } && bad "left after purge: $f"
	done <"$pkgdir/files.list"
	# (and the state nfguard-persistent saved, the unit's enable link)
	left=$(cd "$root" && ls -d usr/src/nfguard-* var/lib/dkms/nfguard lib/modules/*/updates/dkms/xt_* usr/share/nfguard \
		etc/nfguard etc/systemd/system/*/nfguard.service 2>/dev/null)
	[ -z "$left" ] && left=$(find "$root/lib/modules" "$root/usr" "$root/var/lib/dkms" -name '*nfguard*' 2>/dev/null | head -n 5)
	[ -z "$left" ] || bad "left after purge: $(echo $left)"
	for k in $kabis; do
		grep -q 'xt_rangeset' "$root/lib/modules/$k/modules.dep" 2>/dev/null && bad "$k: modules.dep still names our modules"
	done
else bad "no chroot"; fi
report "purge: no file, DKMS tree, module, saved state or unit link of nfguard remains"

# -------------------------------------------------------------- debian 13 --
# The kernels left out above (trixie-backports' 7.x), on the Debian they are
# made for: a chroot of their suite (cached build/package/chroot-SUITE.tar;
# with what their header packages need: gcc-14, pahole, ..., as
# tests/kbuild-chroot.sh lists them, and Build-Depends) where .debs of
# version N and N+1 are built from the same tarball by build-deb.sh (as that
# Debian's own build would: the plugins fill libxtables's option table, whose
# layout changed in 1.8.10 under the same soname, so the bookworm .debs
# depend on libxtables12 (<< 1.8.10) and cannot go here), N installed (DKMS
# builds for those kernels; the plugins and the CLI run against that
# Debian's libraries), snapshot root-n-SUITE, then N+1, snapshot
# root-up-SUITE, for package_installed.sh on those kernels.
ok_kabis=$kabis
for suite in $(for k in $newer_kabis; do cat "$kdirs/$k/.kbuild-chroot"; done | sort -u); do
	cleanup
	kabis=$(for k in $newer_kabis; do [ "$(cat "$kdirs/$k/.kbuild-chroot")" = "$suite" ] && echo "$k"; done)
	kabis=$(echo $kabis)
	root=$pkgdir/root-$suite
	cleanup	# an interrupted run's tree
	needs=$(cat "${NFG_CHROOT_CACHE:-/var/cache/nfguard}/kbuild-$suite/.nfg-needs" 2>/dev/null)
	# packaging/debian/control's Build-Depends (debhelper-compat: debhelper),
	# build-essential (dpkg-checkbuilddeps wants it),
	# dpkg-dev for dpkg-buildpackage; the cache's name carries the list, so a
	# tarball made for another list is not reused
	inc=$(echo dkms iptables kmod pkgconf libmnl-dev libnftnl-dev gcc libc6-dev make \
		build-essential dpkg-dev debhelper autoconf automake libxtables-dev $needs | tr ' ' ',')
	sbase=$pkgdir/chroot-$suite-$(printf %s "$inc" | md5sum | cut -c1-8).tar
	for d in root-n-$suite root-up-$suite; do
		[ ! -e "$pkgdir/$d" ] || rm -rf --one-file-system "${pkgdir:?}/$d"
	done
	for f in "$pkgdir/chroot-$suite".tar "$pkgdir/chroot-$suite"-*.tar; do
		[ "$f" = "$sbase" ] || rm -f "$f"
	done
	if [ ! -f "$sbase" ]; then
		mmdebstrap --variant=apt --include="$inc" \
			"$suite" "$pkgdir/chroot-new.tar" "deb http://deb.debian.org/debian $suite main" \
			>"$logs/mmdebstrap-$suite.log" 2>&1 && mv "$pkgdir/chroot-new.tar" "$sbase"
	fi
	chroot_ok=
	mkdir -p "$root"
	if [ -f "$sbase" ] && tar -xf "$sbase" -C "$root" 2>"$logs/chroot-$suite.log"; then
		mkdir -p "$root$kdirs" "$root/debs"
		for k in $kabis; do
			mkdir -p "$root/lib/modules/$k/kernel"
			cp "$kdirs/$k/lib/modules/$k"/modules.* "$root/lib/modules/$k/" 2>>"$logs/chroot-$suite.log"
			ln -sfn "$(kdir_of $k)" "$root/lib/modules/$k/build"
		done
		mount_root && chroot_ok=1
	fi
	[ -n "$chroot_ok" ] || bad "no $suite chroot (build/package/mmdebstrap-$suite.log, chroot-$suite.log)"
	# N and N+1 built here, from the tarball the bookworm .debs came from
	# (the working tree's files when it has uncommitted changes)
	if [ -n "$chroot_ok" ]; then
		mkdir -p "$root/build/src"
		if [ ${#src_opt[@]} -gt 0 ]; then cp "$pkgdir/dist-1.tar.gz" "$root/build/nfguard.tar.gz"
		else
			(cd "$top" && git ls-files -z --cached --others --exclude-standard |
				while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
				tar --null -T - --transform "s|^|nfguard-$ver/|" -czf "$root/build/nfguard.tar.gz")
		fi
		tar -xzf "$root/build/nfguard.tar.gz" -C "$root/build/src" --strip-components=1
		declare -A sbpid=()
		for v in "$ver" "$up"; do
			arg=; [ "$v" = "$ver" ] || arg=$v
			R /build/src/tests/package/build-deb.sh -t /build/nfguard.tar.gz "/build/deb-$v" $arg \
				>"$logs/build-$suite-$v.log" 2>&1 &
			sbpid[$v]=$!
		done
		for v in "$ver" "$up"; do
			wait "${sbpid[$v]}" || bad "$suite: build-deb.sh $v failed (build/package/build-$suite-$v.log)"
			rm -rf "$pkgdir/deb-$suite-$v" && mkdir -p "$pkgdir/deb-$suite-$v" &&
				cp "$root/build/deb-$v"/*.deb "$root/debs/" && cp "$root/build/deb-$v"/*.deb "$pkgdir/deb-$suite-$v/" ||
				bad "$suite: no .debs of $v"
		done
		rm -rf --one-file-system "$root/build"
		# each nfguard .deb names the side of libxtables 1.8.10 it was built on
		hx='>= 1.8.10'; dpkg --compare-versions "$(pkg-config --modversion xtables)" lt 1.8.10 && hx='<< 1.8.10'
		dpkg-deb -f "$debs_n/nfguard_${ver}_"*.deb Depends | grep -qF "libxtables12 ($hx)" ||
			bad "the nfguard .deb built here does not depend on libxtables12 ($hx)"
		dpkg-deb -f "$pkgdir/deb-$suite-$ver/nfguard_${ver}_"*.deb Depends | grep -q 'libxtables12 (>= 1.8.10)' ||
			bad "the $suite nfguard .deb does not depend on libxtables12 (>= 1.8.10)"
	fi
	if [ -n "$chroot_ok" ]; then
		R dpkg -i $(debs_of "$ver") >"$logs/install-$suite.log" 2>&1 ||
			bad "dpkg -i $ver exits $? (build/package/install-$suite.log)"
		save_dkms_logs "install-$suite"
		check_status "$ver"
		check_modules "$ver"
		R iptables-legacy -m rangeset -h >"$logs/plugin-$suite.log" 2>&1 || bad "$suite: iptables-legacy -m rangeset -h exits $?"
		# Each plugin parses a rule with its options under this Debian's
		# libxtables (its option table's layout is libxtables's: a plugin
		# built against another iptables can crash in getopt here). In an
		# empty netns without our modules the rule itself is refused: only
		# a death by signal (exit > 128) fails.
		for rule in "-m kconnlimit --kconnlimit-above 50 --kconnlimit-mask 24 --kconnlimit-name pkg" \
			"-m rangeset --match-set pkg src" "-t raw -p tcp -j SYNCOOKIE" "-j RTCACHE"; do
			# shellcheck disable=SC2086
			unshare -n chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
				iptables-legacy -A FORWARD $rule >>"$logs/plugin-$suite.log" 2>&1
			rc=$?
			[ "$rc" -le 128 ] || bad "$suite: iptables-legacy -A FORWARD $rule dies with signal $((rc - 128)) (build/package/plugin-$suite.log)"
		done
		out=$(R nfguard --version 2>&1)
		[ "$out" = "nfguard $ver" ] || bad "$suite: nfguard --version prints '$out'"
		snapshot "root-n-$suite" || bad "cannot snapshot the chroot to build/package/root-n-$suite"
		R dpkg -i $(debs_of "$up") >"$logs/upgrade-$suite.log" 2>&1 ||
			bad "dpkg -i $up exits $? (build/package/upgrade-$suite.log)"
		save_dkms_logs "upgrade-$suite"
		check_status "$up"
		check_modules "$up"
		snapshot "root-up-$suite" || bad "cannot snapshot the chroot to build/package/root-up-$suite"
	fi
	[ -n "$failed" ] || ok_kabis="$ok_kabis $kabis"
	report "$suite: $ver and $up built there, $ver then $up installed, DKMS builds for $kabis, plugins and CLI run on $suite's libraries"
done
kabis=$(echo $ok_kabis)

# ------------------------------------------------------------------ boot --
# The installed trees, booted: tests/package/package_installed.sh on each kernel.
if [ -d "$pkgdir/root-n" ] && [ -d "$pkgdir/root-up" ]; then
	printf 'VER=%s\nUP=%s\nPKG_KABIS=%s\n' "$ver" "$up" "$kabis" >"$pkgdir/guest.env"
fi
if [ "${NFG_PKG_BOOT:-1}" = 0 ]; then
	echo "# boot: not here (NFG_PKG_BOOT=0): tests/package/package_installed.sh runs in make check's VM stage"
else
	declare -A bpid=()
	for k in $kabis; do
		"$top/tests/vm/run.sh" -k "$k" -o "$pkgdir/vm-$k" "$here/package_installed.sh" >"$logs/boot-$k.log" 2>&1 &
		bpid[$k]=$!
	done
	for k in $kabis; do
		wait "${bpid[$k]}" || bad "$k: $(grep -m 1 '^FAIL' "$logs/boot-$k.log") (build/package/boot-$k.log)"
		grep -q '^PASS package_installed' "$logs/boot-$k.log" || bad "$k: no PASS line (build/package/boot-$k.log)"
		sed -n 's/^    | /    /p' "$logs/boot-$k.log" | tail -n 20
	done
	report "boot: $kabis with the installed packages: modules from updates/dkms, system plugins and CLI, rules with packets; upgrade and module reload"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
