#!/bin/sh
# Run a kernel module build inside a Debian chroot of another suite.
#
# usage: tests/kbuild-chroot.sh --make SUITE [PACKAGE...]
#        tests/kbuild-chroot.sh --check SUITE
#        tests/kbuild-chroot.sh -k ABI COMMAND [ARG...]
#
# A kernel newer than the host's release (trixie-backports' 7.x on a
# bookworm host) ships kbuild tools linked against a newer glibc and headers
# that name a newer gcc: its modules are built with that suite's own tools.
# --make creates the chroot with mmdebstrap (deb.debian.org; make, gcc,
# sparse, kmod, perl, and the PACKAGEs the kernel's header packages depend
# on) under $NFG_CHROOT_CACHE (default /var/cache/nfguard)/kbuild-SUITE,
# unless one with the same package list is there (key file). Machine-wide:
# every worktree of the machine shares it, as they share build/kernels.
# --check exits 0 when that chroot exists.
# -k ABI COMMAND: runs COMMAND for kernel ABI (a module build: make -C
# KDIR M=...). When tests/deps.sh marked the ABI as one of a newer suite
# ($KERNELS_DIR, default build/kernels, /ABI/.kbuild-chroot holds the
# suite), COMMAND runs in that suite's chroot, in a private mount namespace
# (unshare -m: nothing stays mounted when it ends) where this repository,
# KERNELS_DIR and /proc, /dev are bind-mounted at their own (real) paths and
# /tmp is a private tmpfs; environment, cwd and exit status pass through
# (needs root: chroot, mounts). Any other ABI: COMMAND runs here as it is.
set -eu
cache=${NFG_CHROOT_CACHE:-/var/cache/nfguard}
base_pkgs="make gcc libc6-dev kmod sparse perl bc"

case ${1:-} in
--make | --check)
	mode=$1 suite=${2:?suite}
	shift 2
	root=$cache/kbuild-$suite
	key="$suite $base_pkgs $*"
	[ "$mode" = --make ] || [ ! -f "$root/.nfg-key" ] || exit 0
	if [ -f "$root/.nfg-key" ] && [ "$(cat "$root/.nfg-key")" = "$key" ]; then
		[ -f "$root/.nfg-needs" ] || echo "$*" >"$root/.nfg-needs"
		exit 0
	fi
	[ "$mode" = --make ] || exit 1
	mkdir -p "$cache"
	rm -rf --one-file-system "$root.new"
	# shellcheck disable=SC2086
	mmdebstrap --variant=apt --include="$(echo $base_pkgs "$@" | tr ' ' ',')" "$suite" "$root.new" \
		"deb http://deb.debian.org/debian $suite main" >"$cache/kbuild-$suite.log" 2>&1 ||
		{ echo "kbuild-chroot: mmdebstrap $suite failed ($cache/kbuild-$suite.log)" >&2; exit 1; }
	echo "$key" >"$root.new/.nfg-key"
	# what the kernel's header packages need, for other chroots of this suite
	echo "$*" >"$root.new/.nfg-needs"
	rm -rf --one-file-system "$root"
	mv "$root.new" "$root"
	echo "kbuild-chroot: made $root"
	exit 0
	;;
-h | --help | '')
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac

if [ "$1" != -k ] || [ $# -lt 3 ]; then
	echo "kbuild-chroot: usage: -k ABI COMMAND..." >&2
	exit 2
fi
abi=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd -P)
kernels=${KERNELS_DIR:-$top/build/kernels}
[ -f "$kernels/$abi/.kbuild-chroot" ] || exec "$@"
suite=$(cat "$kernels/$abi/.kbuild-chroot")
root=$cache/kbuild-$suite
[ -f "$root/.nfg-key" ] || { echo "kbuild-chroot: no $root (run tests/deps.sh)" >&2; exit 1; }
binds="$top $kernels"
# Inner script: $1 = root, $2 = cwd, $3 = bind dirs, then the command.
# shellcheck disable=SC2016
exec unshare --mount --propagation private -- sh -eu -c '
root=$1 cwd=$2 binds=$3
shift 3
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
for d in $binds; do
	d=$(cd "$d" && pwd -P)
	mkdir -p "$root$d"
	mount --rbind "$d" "$root$d"
done
exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' nfg-kbuild-chroot "$root" "$(pwd -P)" "$binds" "$@"
