#!/bin/bash
# Build (or reuse) the nfguard debug kernel: Debian's linux-source-6.12 with
# tests/debug/debug.config (lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP, generic
# KASAN, kmemleak, netfilter built in) on top of allnoconfig.
#
# usage: tests/debug/build-kernel.sh
#
# NFG_DEBUG_BASE picks the source: 6.12 (default; bookworm's linux-source-6.12,
# built with the host's gcc-12) or newest: the newest linux-source-X.Y of the
# backports suite tests/deps.sh takes the newest kernel from (trixie-backports,
# resolved through its private apt state, tests/bpo-apt.sh), built inside that
# suite's kbuild chroot with its own compiler (tests/kbuild-chroot.sh -s; the
# tools it lacks for a whole kernel build are installed into it first). The
# kernel root of a newest build says so in .kbuild-chroot, and its source and
# object trees in .kbuild-binds, so module builds for it run in the chroot too.
#
# Cache: $NFG_DEBUG_KCACHE (default /var/cache/nfguard/debug-kernel)/KEY/, KEY =
# hash of the fragment, the linux-source package and version, the compiler
# version and this script's RECIPE number. The work tree is laid anew for each
# session while the machine is kept, so the kernel lives outside it and a
# second run with the same key reuses it (no rebuild). KEY/ holds:
#   src/                                   the unpacked kernel source
#   root/boot/vmlinuz-ABI, config-ABI, System.map-ABI
#   root/lib/modules/ABI/                  modules_install + depmod
#   root/usr/src/linux-headers-ABI/        the O= build tree (Module.symvers):
#                                          make -C it M=DIR modules works
#   build.log, build.secs, done
# ABI is the kernel release, 6.12.N-nfgdebug. Then links
# build/kernels/ABI -> KEY/root in the work tree (where run.sh and the Makefile
# look for kernels) and writes ABI to build/debug/kabi.
#
# Builds run under `nice -n 19` (other engineers' VM tests share the cores),
# with NFG_DEBUG_JOBS (default 2) jobs. Fails loudly when an option of the
# fragment did not make it into the final .config (unmet dependency).
set -euo pipefail

RECIPE=1 # bump when the build/layout steps below change
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
frag=${NFG_DEBUG_FRAGMENT:-$here/debug.config} # (another fragment: experiments only)
cache=${NFG_DEBUG_KCACHE:-/var/cache/nfguard/debug-kernel}
jobs=${NFG_DEBUG_JOBS:-2}
base=${NFG_DEBUG_BASE:-6.12}
# the tools a whole kernel build needs (objtool: libelf)
tools="gcc:gcc make:make flex:flex bison:bison bc:bc depmod:kmod xz:xz-utils"

say() { echo "build-kernel: $*"; }
die() { echo "build-kernel: error: $*" >&2; exit 1; }
[ $# -eq 0 ] || { sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

# ---- the source package and the build tools --------------------------------
case $base in
6.12)
	pkg=linux-source-6.12
	tarball=/usr/src/linux-source-6.12.tar.xz
	chroot_suite=
	need_pkgs=()
	dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need_pkgs+=("$pkg")
	for t in $tools; do
		command -v "${t%%:*}" >/dev/null || need_pkgs+=("${t#*:}")
	done
	[ -e /usr/include/libelf.h ] || need_pkgs+=(libelf-dev)
	if [ ${#need_pkgs[@]} -gt 0 ]; then
		say "installing ${need_pkgs[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y "${need_pkgs[@]}" >/dev/null ||
			die "apt-get install ${need_pkgs[*]} failed (apt-get update first?)"
	fi
	[ -r "$tarball" ] || die "$tarball missing although $pkg is installed"
	pkgver=$(dpkg-query -W -f='${Version}' "$pkg")
	ccver=$(gcc --version | head -n 1)
	;;
newest)
	# the options newer kernels need besides the fragment (an experiment's
	# own fragment is taken as it is)
	if [ -z "${NFG_DEBUG_FRAGMENT:-}" ]; then
		frag=$(mktemp)
		trap 'rm -f "$frag"' EXIT
		cat "$here/debug.config" "$here/debug-newest.config" >"$frag"
	fi
	# shellcheck source=tests/bpo-apt.sh
	. "$top/tests/bpo-apt.sh"
	[ -f "$bpo/sources.list" ] || die "no $bpo (run tests/deps.sh)"
	chroot_suite=$bpo_suite
	croot=${NFG_CHROOT_CACHE:-/var/cache/nfguard}/kbuild-$chroot_suite
	[ -f "$croot/.nfg-key" ] || die "no kbuild chroot $croot (run tests/deps.sh)"
	pkg=$(bpo_cache search --names-only '^linux-source-[0-9]+\.[0-9]+$' | cut -d' ' -f1 | sort -V | tail -n 1)
	[ -n "$pkg" ] || die "no linux-source-X.Y in $bpo_suite-backports"
	pkgver=$(bpo_cache show "$pkg" | sed -n 's/^Version: //p' | sort -V | tail -n 1)
	# what the chroot (made for module builds) lacks for a whole kernel build
	need_pkgs=()
	for p in flex bison bc libelf-dev xz-utils; do
		chroot "$croot" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			need_pkgs+=("$p")
	done
	if [ ${#need_pkgs[@]} -gt 0 ]; then
		say "installing ${need_pkgs[*]} into $croot"
		{ chroot "$croot" apt-get update -q && DEBIAN_FRONTEND=noninteractive \
			chroot "$croot" apt-get install -y -q --no-install-recommends "${need_pkgs[@]}"; } >/dev/null ||
			die "apt-get install ${need_pkgs[*]} in $croot failed"
	fi
	ccver=$(chroot "$croot" gcc --version | head -n 1)
	tarball=
	;;
*) die "NFG_DEBUG_BASE=$base: 6.12 or newest" ;;
esac

toolchain=$(printf 'recipe %s\n%s %s\n%s\n' "$RECIPE" "$pkg" "$pkgver" "$ccver")
key=$({
	echo "$toolchain"
	cat "$frag"
} | sha256sum | cut -c1-16)
dir=$cache/$key

# ABI from the source version and the fragment's LOCALVERSION (checked against
# the built tree's kernelrelease below).
localver=$(sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' "$frag")
[ -n "$localver" ] || die "$frag sets no CONFIG_LOCALVERSION"
upstream=${pkgver%%-*}
abi=$upstream$localver
root=$dir/root
obj=$root/usr/src/linux-headers-$abi

mkdir -p "$cache"
exec 9>"$cache/$key.lock"
flock -n 9 || { say "waiting for another build of $key"; flock 9; }

# ---- verify: every line of the fragment is in .config as written -----------
verify_config() { # $1 = .config
	local line sym bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$1" && continue
			sym=${line%%=*}
			echo "  wanted $line, got: $(grep -E "^($sym=|# $sym is not set)" "$1" || echo '(absent: unmet dependency)')" >&2
			bad=1
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			grep -q "^$sym=" "$1" || continue
			echo "  wanted $sym unset, got: $(grep "^$sym=" "$1")" >&2
			bad=1
			;;
		esac
	done <"$frag"
	return $bad
}

# A finished build of the same source and compiler (another fragment) to
# start from: its object tree is copied and rebuilt incrementally. The saved
# command lines of its objects carry the absolute paths of the source and
# object trees it was first built in (other paths: everything is rebuilt,
# ~90 min on 2 CPUs), so the copy is compiled with the same source tree and
# mounted, in a private mount namespace, over that object path.
# KEY/toolchain: what a tree was built from; KEY/srcdir, KEY/objpath: those
# two paths (absent: KEY/src and KEY's own object tree).
seed=
for d in "$cache"/*/; do
	[ -z "$chroot_suite" ] || break
	d=${d%/}
	[ "$d" != "$dir" ] && [ -f "$d/done" ] && [ -f "$d/toolchain" ] &&
		[ "$(cat "$d/toolchain")" = "$toolchain" ] || continue
	s=$(cat "$d/srcdir" 2>/dev/null || echo "$d/src")
	p=$(cat "$d/objpath" 2>/dev/null || echo "$d/root/usr/src/linux-headers-$abi")
	[ -f "$s/Makefile" ] && [ -d "$p" ] && [ -f "$d/root/usr/src/linux-headers-$abi/.config" ] || continue
	seed=$d
	break
done

if [ -f "$dir/done" ] && [ -r "$root/boot/vmlinuz-$abi" ] && [ -f "$obj/Module.symvers" ]; then
	say "reusing cached $abi ($dir; built $(cat "$dir/done"), build took $(cat "$dir/build.secs")s)"
else
	t0=$(date +%s)
	if [ -f "$obj/.config" ] && { [ -f "$dir/srcdir" ] || [ -f "$dir/src/Makefile" ]; }; then
		# an unfinished build of this key (interrupted): make goes on from there
		src=$(cat "$dir/srcdir" 2>/dev/null || echo "$dir/src")
		objpath=$(cat "$dir/objpath" 2>/dev/null || echo "$obj")
		say "resuming the unfinished build of $abi in $dir (key $key)"
	elif [ -n "$seed" ]; then
		rm -rf "$dir"
		mkdir -p "$dir" "$root/boot"
		src=$(cat "$seed/srcdir" 2>/dev/null || echo "$seed/src")
		objpath=$(cat "$seed/objpath" 2>/dev/null || echo "$seed/root/usr/src/linux-headers-$abi")
		say "building $abi into $dir (key $key) incrementally from $seed's tree (same source and compiler)"
		mkdir -p "$root/usr/src"
		nice -n 19 cp -a "$seed/root/usr/src/linux-headers-$abi" "$obj"
		echo "$src" >"$dir/srcdir"
		echo "$objpath" >"$dir/objpath"
	else
		say "building $abi from $pkg $pkgver into $dir (key $key)"
		rm -rf "$dir"
		mkdir -p "$dir" "$root/boot" "$obj"
		# the same source unpacked by another key (a fragment change): linked
		for d in "$cache"/*/; do
			[ -n "$tarball" ] || [ "$(cat "$d/source" 2>/dev/null)" != "$pkg $pkgver" ] ||
				[ ! -f "$d/src/Makefile" ] || { cp -al "$d/src" "$dir/$pkg" && break; }
		done
		if [ -e "$dir/$pkg" ]; then
			say "source: $pkg $pkgver as unpacked for another key (hard links)"
		elif [ -z "$tarball" ]; then
			# the source package of the backports suite, downloaded and
			# unpacked in the cache (not installed on the host)
			mkdir -p "$dir/deb"
			(cd "$dir/deb" && bpo_get download -q "$pkg=$pkgver") >/dev/null ||
				die "downloading $pkg $pkgver failed"
			dpkg-deb -x "$dir"/deb/*.deb "$dir/deb/x"
			tarball=$(echo "$dir/deb/x/usr/src/$pkg".tar.*)
			[ -r "$tarball" ] || die "no usr/src/$pkg.tar.* in $pkg"
		fi
		[ -e "$dir/$pkg" ] || nice -n 19 tar -xf "$tarball" -C "$dir"
		mv "$dir/$pkg" "$dir/src"
		rm -rf "$dir/deb"
		echo "$pkg $pkgver" >"$dir/source"
		src=$dir/src objpath=$obj
	fi
	srcver=$(make -s -C "$src" kernelversion)
	[ "$srcver" = "$upstream" ] || die "source says $srcver, package version says $upstream"
	# kmake ARGS...: make in the object tree, seen at $objpath
	kmake() {
		if [ -n "$chroot_suite" ]; then
			NFG_CHROOT_BINDS=$dir nice -n 19 "$top/tests/kbuild-chroot.sh" -s "$chroot_suite" \
				make -C "$src" O="$obj" "$@"
		elif [ "$objpath" = "$obj" ]; then
			nice -n 19 make -C "$src" O="$obj" "$@"
		else
			unshare -m sh -c 'o=$1 s=$2 && shift 2 && mount --bind "$0" "$o" &&
				exec nice -n 19 make -C "$s" O="$o" "$@"' "$obj" "$objpath" "$src" "$@"
		fi
	}

	log=$dir/build.log
	# the fragment as used, where a chroot build sees it (its /tmp is its own)
	[ "$frag" = "$dir/fragment.config" ] || cp "$frag" "$dir/fragment.config"
	frag=$dir/fragment.config
	say "configuring: allnoconfig + $(grep -c '^CONFIG_' "$frag") options of $frag"
	kmake KCONFIG_ALLCONFIG="$frag" allnoconfig >"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "allnoconfig failed"; }
	verify_config "$obj/.config" || die "options of $frag missing from the final .config (see above)"
	rel=$(kmake -s kernelrelease)
	[ "$rel" = "$abi" ] || die "kernelrelease is '$rel', expected '$abi'"

	say "compiling (nice -n 19 make -j$jobs; log $log) ..."
	tb=$(date +%s)
	kmake -j"$jobs" all >>"$log" 2>&1 ||
		{ tail -n 40 "$log" >&2; die "kernel build failed (log $log)"; }
	secs=$(($(date +%s) - tb))
	# Kbuild may flip options whose dependencies only resolve at build time.
	verify_config "$obj/.config" || die "options of $frag lost during the build (see above)"

	kmake INSTALL_MOD_PATH="$root" modules_install >>"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "modules_install failed"; }
	depmod -b "$root" "$abi" || die "depmod failed"
	[ -d "$root/lib/modules/$abi/kernel" ] || die "no modules installed (run.sh needs lib/modules/$abi/kernel)"
	cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$abi"
	cp "$obj/.config" "$root/boot/config-$abi"
	cp "$obj/System.map" "$root/boot/System.map-$abi"
	ln -sfn "../../../usr/src/linux-headers-$abi" "$root/lib/modules/$abi/build"
	if [ -n "$chroot_suite" ]; then
		echo "$chroot_suite" >"$root/.kbuild-chroot"
		echo "$dir" >"$root/.kbuild-binds"
	fi
	echo "$secs" >"$dir/build.secs"
	echo "$toolchain" >"$dir/toolchain"
	date -u '+%Y-%m-%d %H:%M UTC' >"$dir/done"
	say "built $abi: compile ${secs}s, total $(($(date +%s) - t0))s;" \
		"$(find "$root/lib/modules/$abi/kernel" -name '*.ko*' | wc -l) modules"
fi

# ---- link it into the work tree ------------------------------------------------
mkdir -p "$top/build/kernels" "$top/build/debug"
# Relative, so that it also resolves inside the guest, whose initramfs sees
# the host root under /newroot when it bind-mounts the modules.
ln -sfn "$(realpath --relative-to="$top/build/kernels" "$root")" "$top/build/kernels/$abi"
echo "$abi" >"$top/build/debug/kabi"
say "kernel root $top/build/kernels/$abi -> $root"
echo "ABI=$abi"
