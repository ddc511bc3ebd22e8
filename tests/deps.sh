#!/bin/sh
# Install every Debian package the nfguard build and tests need, and fetch
# the newest Debian 6.1 and 6.12 kernels for the test guests.
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
# Extra packages for individual test suites: tests/deps.d/*.txt, one name per
# line (# comments allowed). Idempotent: quick when all is present.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
kroot=$top/build/kernels

pick_kernel() { # $1 = regex of the ABI; prints the newest ABI with image+headers
	apt-cache search --names-only "^linux-image-$1-amd64\$" |
		sed -n 's/^linux-image-\([^ ]*\)-amd64 .*/\1/p' | sort -V |
		while read -r abi; do
			if apt-cache show "linux-headers-$abi-amd64" >/dev/null 2>&1; then
				echo "$abi-amd64"
			fi
		done | tail -n 1
}

# gcc-12: the compiler Debian builds both kernels with (the headers' Makefile
# names it). libssl3/libelf1: run-time libraries of linux-kbuild's tools.
PKGS="build-essential autoconf automake pkg-config gcc gcc-12 make kmod cpio xz-utils zstd
libxtables-dev libmnl-dev libnftnl-dev iptables nftables ipset conntrack
qemu-system-x86 busybox-static iproute2 iputils-ping iperf3 socat curl hping3
netsniff-ng tcpdump ethtool python3 sparse libelf-dev libelf1 libssl3 bc man-db groff procps"
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
	[ "$n" -ge 2 ]
}

stamp=${NFG_DEPS_STAMP:-/var/lib/nfguard-deps.stamp}
have_all && exit 0

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
k61=$(pick_kernel '6\.1\.0-[0-9]+')
k612=$(pick_kernel '6\.12\.[0-9]+\+deb[0-9]+')
[ -n "$k61" ] && [ -n "$k612" ] || { echo "deps: no 6.1/6.12 kernel found by apt-cache" >&2; exit 1; }
echo "deps: kernels $k61 $k612"
# kernel_pkgs ABI: the header packages of ABI to unpack (linux-headers-ABI
# and the linux-headers-*/linux-kbuild-*/linux-compiler-* it depends on), one
# per line as "unpack NAME", and what they need from the host as "need NAME"
# (pahole, gcc-12, ...: installed as usual). linux-image-* and linux-base are
# left out: the image is unpacked on its own, linux-base only serves
# installed kernels.
kernel_pkgs() {
	todo="linux-headers-$1" seen=" "
	while [ -n "$todo" ]; do
		# shellcheck disable=SC2086
		set -- $todo
		p=$1
		shift
		todo=$*
		case $seen in *" $p "*) continue ;; esac
		seen="$seen$p "
		echo "unpack $p"
		for d in $(apt-cache show "$p" | sed -n 's/^Depends: //p' | head -n 1 | tr ',' '\n' |
			sed 's/|.*//; s/^ *//; s/ .*//'); do
			case $d in
			linux-image-* | linux-base) ;;
			linux-headers-* | linux-kbuild-* | linux-compiler-*) todo="$todo $d" ;;
			*) echo "need $d" ;;
			esac
		done
	done
}
need=
mkdir -p "$kroot"
for abi in $k61 $k612; do
	list=$(kernel_pkgs "$abi")
	echo "$list" | grep -q "^unpack linux-kbuild-" ||
		{ echo "deps: cannot resolve the header packages of $abi" >&2; exit 1; }
	need="$need $(echo "$list" | sed -n 's/^need //p' | tr '\n' ' ')"
	echo "$list" | sed -n 's/^unpack //p' >"$kroot.$abi.pkgs"
done
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $PKGS $need

for abi in $k61 $k612; do
	dir=$kroot/$abi
	[ -e "$dir/.unpacked" ] && continue
	rm -rf "$dir" && mkdir -p "$dir/.debs"
	# Downloaded as root into a root-owned dir: tell apt not to drop to _apt.
	# shellcheck disable=SC2046
	(cd "$dir/.debs" && apt-get download -q -o APT::Sandbox::User=root \
		"linux-image-$abi" $(cat "$kroot.$abi.pkgs"))
	for deb in "$dir"/.debs/*.deb; do
		dpkg-deb -x "$deb" "$dir"
	done
	rm -rf "$dir/.debs"
	# The arch headers' Makefile includes the -common tree by absolute path.
	hdr=$dir/usr/src/linux-headers-$abi
	sed -i "s|^include /usr/src/|include $dir/usr/src/|" "$hdr/Makefile"
	[ -e "$hdr/scripts/basic/fixdep" ] || { echo "deps: $hdr/scripts is not usable" >&2; exit 1; }
	depmod -b "$dir" "$abi"
	touch "$dir/.unpacked"
	echo "deps: unpacked $abi (image and $(wc -l <"$kroot.$abi.pkgs") header packages) in $dir"
done
rm -f "$kroot".*.pkgs
# The guests mount their own kernel's modules over the host's /lib/modules
# (read-only 9p root): the directory must exist, as it does on any host with a
# kernel installed (a minimal chroot or container may lack it).
mkdir -p /lib/modules
echo "$PKGS" >"$stamp"
