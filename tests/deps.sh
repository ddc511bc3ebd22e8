#!/bin/sh
# Install every Debian package the nfguard build and tests need, and fetch
# the newest Debian 6.1 and 6.12 kernels and the newest Debian kernel of all
# (trixie-backports, e.g. 7.3.4+deb13-amd64) for the test guests.
#
# Kernels are NOT installed on this host. For each ABI, the image and the
# header packages (linux-image-ABI, linux-headers-ABI, its -common package
# and linux-kbuild) are downloaded and unpacked into build/kernels/ABI/:
#   boot/vmlinuz-ABI, lib/modules/ABI/ (depmod'ed there)  -> the test guests
#   usr/src/linux-headers-ABI/ (+ -common, usr/lib/linux-kbuild-*) -> M= builds
# so running the tests never touches the host's /boot, bootloader, initramfs
# or /usr/src. (Installing linux-headers-6.12.* as a package would pull in
# linux-image-6.12.* and run update-initramfs on the host.)
#
# The backports kernel is resolved and downloaded through a private apt state
# (build/apt-trixie-backports: its own sources list, lists and cache), so the
# host's apt sources stay as they are. Its kbuild tools need trixie's glibc
# and its headers trixie's gcc-14: its modules are built in a trixie chroot
# (tests/kbuild-chroot.sh, made here with mmdebstrap from the same mirror);
# build/kernels/ABI/.kbuild-chroot names that chroot's suite, and the
# Makefile runs that ABI's kernel builds inside it.
#
# Extra packages for individual test suites: tests/deps.d/*.txt, one name per
# line (# comments allowed). Idempotent: quick when all is present.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
kroot=$top/build/kernels

# The backports suite the newest kernel comes from (bpo_suite), and the
# private apt state it is resolved with (bpo_setup, bpo_cache, bpo_get).
# shellcheck source=tests/bpo-apt.sh
. "$top/tests/bpo-apt.sh"
host_cache() { apt-cache "$@"; }

pick_kernel() { # $1 = apt-cache function, $2 = regex of the ABI; prints the newest ABI with image+headers
	cache=$1
	$cache search --names-only "^linux-image-$2-amd64\$" |
		sed -n 's/^linux-image-\([^ ]*\)-amd64 .*/\1/p' | sort -V |
		while read -r abi; do
			if $cache show "linux-headers-$abi-amd64" >/dev/null 2>&1; then
				echo "$abi-amd64"
			fi
		done | tail -n 1
}

# gcc-12: the compiler Debian builds both kernels with (the headers' Makefile
# names it). libssl3/libelf1: run-time libraries of linux-kbuild's tools.
PKGS="build-essential autoconf automake pkg-config gcc gcc-12 make kmod cpio xz-utils zstd
libxtables-dev libmnl-dev libnftnl-dev iptables nftables ipset conntrack
qemu-system-x86 busybox-static iproute2 iputils-ping iperf3 socat curl hping3
netsniff-ng tcpdump ethtool python3 sparse patch libelf-dev libelf1 libssl3 bc man-db groff procps"
for f in "$top"/tests/deps.d/*.txt; do
	[ -f "$f" ] || continue
	PKGS="$PKGS $(sed 's/#.*//' "$f")"
done
PKGS=$(echo $PKGS)

have_all() {
	[ -d /lib/modules ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$PKGS" ] || return 1
	n=0
	for d in "$kroot"/*/.unpacked; do
		[ -e "$d" ] && n=$((n + 1))
	done
	[ "$n" -ge 3 ] && "$top"/tests/kbuild-chroot.sh --check "$bpo_suite"
}

stamp=${NFG_DEPS_STAMP:-/var/lib/nfguard-deps.stamp}
have_all && exit 0

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
k61=$(pick_kernel host_cache '6\.1\.0-[0-9]+')
k612=$(pick_kernel host_cache '6\.12\.[0-9]+\+deb[0-9]+')
[ -n "$k61" ] && [ -n "$k612" ] || { echo "deps: no 6.1/6.12 kernel found by apt-cache" >&2; exit 1; }
bpo_setup
knew=$(pick_kernel bpo_cache '[0-9]+\.[0-9]+\.[0-9]+\+deb[0-9]+')
[ -n "$knew" ] || { echo "deps: no kernel found in $bpo_suite-backports" >&2; exit 1; }
echo "deps: kernels $k61 $k612 $knew ($bpo_suite-backports)"
# kernel_pkgs ABI: the header packages of ABI to unpack (linux-headers-ABI
# and the linux-headers-*/linux-kbuild-*/linux-compiler-* it depends on), one
# per line as "unpack NAME", and what they need from the host as "need NAME"
# (pahole, gcc-12, ...: installed as usual). linux-image-* and linux-base are
# left out: the image is unpacked on its own, linux-base only serves
# installed kernels.
kernel_pkgs() { # ABI apt-cache-function
	cache=$2 todo="linux-headers-$1" seen=" "
	while [ -n "$todo" ]; do
		# shellcheck disable=SC2086
		set -- $todo
		p=$1
		shift
		todo=$*
		case $seen in *" $p "*) continue ;; esac
		seen="$seen$p "
		echo "unpack $p"
		for d in $($cache show "$p" | sed -n 's/^Depends: //p' | head -n 1 | tr ',' '\n' |
			sed 's/|.*//; s/^ *//; s/ .*//'); do
			case $d in
			linux-image-* | linux-base) ;;
			linux-headers-* | linux-kbuild-* | linux-compiler-* | linux-base-[0-9]*) todo="$todo $d" ;;
			*) echo "need $d" ;;
			esac
		done
	done
}
# image_pkgs ABI apt-cache-function: linux-image-ABI and, since 6.19 split
# it, the linux-base-ABI, linux-binary-ABI and linux-modules-ABI it depends on.
image_pkgs() {
	echo "linux-image-$1"
	$2 show "linux-image-$1" | sed -n 's/^Depends: //p' | head -n 1 | tr ',' '\n' |
		sed 's/|.*//; s/^ *//; s/ .*//' |
		awk -v a="$1" '$0 == "linux-base-" a || $0 == "linux-binary-" a || $0 == "linux-modules-" a'
}
need='' bpo_need=''
mkdir -p "$kroot"
for abi in $k61 $k612 $knew; do
	cache=host_cache
	[ "$abi" != "$knew" ] || cache=bpo_cache
	list=$(kernel_pkgs "$abi" $cache)
	echo "$list" | grep -q "^unpack linux-kbuild-" ||
		{ echo "deps: cannot resolve the header packages of $abi" >&2; exit 1; }
	if [ $cache = bpo_cache ]; then
		bpo_need=$(echo "$list" | sed -n 's/^need //p' | tr '\n' ' ')
	else
		need="$need $(echo "$list" | sed -n 's/^need //p' | tr '\n' ' ')"
	fi
	{ image_pkgs "$abi" $cache; echo "$list" | sed -n 's/^unpack //p'; } >"$kroot.$abi.pkgs"
done
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $PKGS $need
# The chroot the backports kernel's modules build in: what its headers need
# (gcc-14-for-host, pahole, trixie's libc, libelf and libssl) + make, sparse
# (rebuilt from its upstream tarball with tests/sparse/linux-7.patch when the
# suite's cannot check the newest kernel's headers: kbuild-chroot.sh).
# shellcheck disable=SC2086
"$top"/tests/kbuild-chroot.sh --make "$bpo_suite" $bpo_need

for abi in $k61 $k612 $knew; do
	dir=$kroot/$abi
	get=apt-get
	[ "$abi" != "$knew" ] || get=bpo_get
	[ -e "$dir/.unpacked" ] && continue
	rm -rf "$dir" && mkdir -p "$dir/.debs"
	# Downloaded as root into a root-owned dir: tell apt not to drop to _apt.
	# shellcheck disable=SC2046
	(cd "$dir/.debs" && $get download -q -o APT::Sandbox::User=root $(cat "$kroot.$abi.pkgs"))
	for deb in "$dir"/.debs/*.deb; do
		dpkg-deb -x "$deb" "$dir"
	done
	rm -rf "$dir/.debs"
	# The arch headers' Makefile includes the -common tree by absolute path
	# (and, since 6.19, names itself as KBUILD_OUTPUT): the real path, the
	# same from every worktree whose build/kernels links here.
	hdr=$dir/usr/src/linux-headers-$abi
	rdir=$(cd "$dir" && pwd -P)
	sed -i -e "s|^include /usr/src/|include $rdir/usr/src/|" \
		-e "s|^KBUILD_OUTPUT=/usr/src/|KBUILD_OUTPUT=$rdir/usr/src/|" "$hdr/Makefile"
	[ -e "$hdr/scripts/basic/fixdep" ] || { echo "deps: $hdr/scripts is not usable" >&2; exit 1; }
	# trixie's packages ship /usr/lib/modules (merged /usr): the guests and
	# depmod -b look in lib/modules, as on the host.
	[ -e "$dir/lib" ] || [ ! -d "$dir/usr/lib/modules" ] || ln -s usr/lib "$dir/lib"
	# 6.19+ ship the image as lib/modules/ABI/vmlinuz (+ config): the
	# harness boots boot/vmlinuz-ABI, as on the older kernels.
	for f in vmlinuz config System.map; do
		[ -e "$dir/boot/$f-$abi" ] || [ ! -e "$dir/lib/modules/$abi/$f" ] ||
			{ mkdir -p "$dir/boot" && ln -s "../lib/modules/$abi/$f" "$dir/boot/$f-$abi"; }
	done
	depmod -b "$dir" "$abi"
	[ "$abi" != "$knew" ] || echo "$bpo_suite" >"$dir/.kbuild-chroot"
	touch "$dir/.unpacked"
	echo "deps: unpacked $abi ($(wc -l <"$kroot.$abi.pkgs") packages: image and headers) in $dir"
done
rm -f "$kroot".*.pkgs
# The guests mount their own kernel's modules over the host's /lib/modules
# (read-only 9p root): the directory must exist, as it does on any host with a
# kernel installed (a minimal chroot or container may lack it).
mkdir -p /lib/modules
echo "$PKGS" >"$stamp"
