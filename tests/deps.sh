#!/bin/sh
# Install every Debian package the nfguard build and tests need, and fetch
# the newest Debian 6.1 and 6.12 kernels for the test guests.
#
# Headers (linux-headers-<abi>) are installed as packages: modules are built
# against them. Kernel images are NOT installed on this host: they are
# downloaded and unpacked into build/kernels/<abi>/ (vmlinuz + modules,
# depmod'ed there), so running the tests never touches the host's
# bootloader, initramfs or /boot. Idempotent: quick when all is present.
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

PKGS="build-essential autoconf automake pkg-config gcc make kmod cpio xz-utils zstd
libxtables-dev libmnl-dev libnftnl-dev iptables nftables ipset conntrack
qemu-system-x86 busybox-static iproute2 iputils-ping iperf3 socat curl hping3
netsniff-ng tcpdump ethtool python3 sparse libelf-dev bc"

have_all() {
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(echo $PKGS)" ] || return 1
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
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $PKGS "linux-headers-$k61" "linux-headers-$k612"

for abi in $k61 $k612; do
	dir=$kroot/$abi
	[ -e "$dir/.unpacked" ] && continue
	rm -rf "$dir" && mkdir -p "$dir"
	(cd "$dir" && apt-get download -q "linux-image-$abi")
	dpkg-deb -x "$dir"/linux-image-*.deb "$dir"
	rm -f "$dir"/linux-image-*.deb
	depmod -b "$dir" "$abi"
	touch "$dir/.unpacked"
done
echo $PKGS > "$stamp"
