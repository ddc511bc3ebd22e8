#!/bin/bash
# Persistence across a real reboot (make check-persist; the persist stage of
# make check): nfguard-persistent(8) as it runs on a Debian host.
#
# usage: tests/persist/check.sh
#
# Builds a Debian bookworm root filesystem (mmdebstrap: systemd as PID 1,
# udev, iptables-persistent, nftables, dkms and what DKMS needs, python3-scapy
# for the cookie check; cached as build/persist/rootfs-bookworm.tar), installs
# the built nfguard-dkms, nfguard and libnfguard1 .debs into it in a chroot
# (DKMS builds the modules for every kernel ABI of build/config.mk, against
# the headers in build/kernels, mounted read-only), adds each kernel's own
# modules and tests/persist/guest.sh as the unit nfg-persist-test.service,
# and makes an ext4 image of it (mke2fs -d, no loop mount). Each kernel
# boots its own copy of the image twice under QEMU (TCG, thread=single,
# -smp 2; a busybox initramfs loads virtio_blk and ext4 and switch_roots to
# /sbin/init = systemd): boot 1 sets state up and saves it, boot 2 checks it
# came back (see guest.sh). The kernels boot at the same time, each holding
# one of the harness's QEMU slot locks (/tmp/nfguard-qemu.lock.N).
#
# Debs: NFG_PERSIST_DEBS (a directory), else build/package/deb-n (the package
# stage's, when it holds this version), else build/deb (make deb when empty).
# NFG_PERSIST_MODE: service|plugin|none for every kernel (default: the first
# ABI restores through the netfilter-persistent plugin with nfguard.service
# disabled, the others through nfguard.service; none = neither, the negative
# control: boot 2 must fail). NFG_PERSIST_BOOT_TIMEOUT (default 900): seconds
# per boot before QEMU is killed. KABIS: the kernels (default build/config.mk's; those a bookworm image can build).
# Prints "ok"/"not ok" per check (ABI first), "N passed, N failed"; exit 0
# only if every check passed. Logs and consoles: build/persist/ABI/.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -eq 0 ] || { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "tests/persist/check.sh: needs root (chroot, mounts)" >&2; exit 2; }
for t in mmdebstrap mke2fs qemu-system-x86_64 cpio; do
	command -v $t >/dev/null || { echo "tests/persist/check.sh: needs $t (tests/deps.d/persist.txt)" >&2; exit 2; }
done
export LC_ALL=C.UTF-8
pdir=$top/build/persist
root=$pdir/root
mkdir -p "$pdir" || exit 2
t0=$(date +%s)

cfg() { sed -n "s/^$1 = //p" "$top/build/config.mk"; }
[ -f "$top/build/config.mk" ] || make -C "$top" -s build/config.mk >/dev/null 2>&1
ver=$(cfg NFG_VERSION) kdirs=$(readlink -f "$(cfg KERNELS_DIR)")
kabis=${KABIS:-$(cfg KABIS)}
# The image is Debian 12 (bookworm): DKMS there builds the kernels whose
# headers bookworm's tools can use. A kernel tests/deps.sh marked as needing
# its own Debian's chroot (.kbuild-chroot: trixie-backports' 7.x) is not one
# of them; its persistence run needs a trixie image (not built yet).
kabis=$(for k in $kabis; do [ -f "$kdirs/$k/.kbuild-chroot" ] || echo "$k"; done)
kabis=$(echo $kabis)
boot_timeout=${NFG_PERSIST_BOOT_TIMEOUT:-900}

pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
die() { notok "$*"; echo "$pass passed, $fail failed"; exit 1; }

umount_root() {
	local m
	for m in $(findmnt -rn -o TARGET | grep -F "$root/" | sort -r); do umount -l "$m" 2>/dev/null; done
}
cleanup() {
	umount_root
	[ -z "${qpids:-}" ] || kill $qpids 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ debs --
debs=${NFG_PERSIST_DEBS:-}
if [ -z "$debs" ]; then
	if ls "$top/build/package/deb-n/nfguard_${ver}_"*.deb >/dev/null 2>&1; then
		debs=$top/build/package/deb-n
	else
		debs=$top/build/deb
		ls "$debs/nfguard_${ver}_"*.deb >/dev/null 2>&1 ||
			make -C "$top" -s deb >"$pdir/make-deb.log" 2>&1 || die "make deb failed (build/persist/make-deb.log)"
	fi
fi
pkgfiles=()
for p in nfguard-dkms nfguard libnfguard1; do
	f=$(ls "$debs/${p}_${ver}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || die "no ${p}_${ver} .deb in $debs"
	pkgfiles+=("$f")
done

# ------------------------------------------------------------ base rootfs --
# Cached; rebuilt when this list changes.
pkgs=systemd,systemd-sysv,udev,dbus,kmod,iproute2,iputils-ping,procps,iptables,nftables
pkgs+=,dkms,gcc,libc6-dev,make,libelf1,libssl3,dwarves,libmnl0,libnftnl11,python3-scapy,xz-utils
base=$pdir/rootfs-bookworm.tar
if [ ! -f "$base" ] || [ "$(cat "$base.key" 2>/dev/null)" != "$pkgs iptables-persistent" ]; then
	# iptables-persistent's postinst must not save the build host's rules
	mmdebstrap --variant=apt --include="$pkgs" \
		--customize-hook='printf "%s\n" "iptables-persistent iptables-persistent/autosave_v4 boolean false" "iptables-persistent iptables-persistent/autosave_v6 boolean false" | chroot "$1" debconf-set-selections' \
		--customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iptables-persistent' \
		--customize-hook='chroot "$1" apt-get clean' \
		bookworm "$pdir/rootfs-new.tar" "deb http://deb.debian.org/debian bookworm main" >"$pdir/mmdebstrap.log" 2>&1 ||
		die "mmdebstrap failed (build/persist/mmdebstrap.log)"
	mv "$pdir/rootfs-new.tar" "$base" && echo "$pkgs iptables-persistent" >"$base.key"
fi

# ------------------------------------------------------------ the image --
umount_root
rm -rf --one-file-system "$root" "$pdir/disk.img"
mkdir -p "$root" && tar -xf "$base" -C "$root" || die "cannot unpack $base"
R() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root \
	DEBIAN_FRONTEND=noninteractive "$@"; }
for k in $kabis; do
	[ -d "$kdirs/$k/lib/modules/$k/kernel" ] || die "no $kdirs/$k (tests/deps.sh)"
	# the kernel's own modules (hard links: read only, by mke2fs)
	mkdir -p "$root/lib/modules/$k"
	cp -al "$kdirs/$k/lib/modules/$k/." "$root/lib/modules/$k/" 2>/dev/null ||
		cp -a "$kdirs/$k/lib/modules/$k/." "$root/lib/modules/$k/" || die "cannot copy the modules of $k"
	rm -f "$root/lib/modules/$k/build" "$root/lib/modules/$k/source"
	# depmod rewrites these: own copies, never links into build/kernels
	for m in "$kdirs/$k/lib/modules/$k"/modules.*; do
		cp --remove-destination "$m" "$root/lib/modules/$k/" || die "cannot copy $m"
	done
	ln -s "$kdirs/$k/usr/src/linux-headers-$k" "$root/lib/modules/$k/build"
done
mkdir -p "$root$kdirs" "$root/debs"
cp "${pkgfiles[@]}" "$root/debs/"
{ mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
	mount --bind "$kdirs" "$root$kdirs" && mount -o remount,bind,ro "$root$kdirs"; } || die "cannot mount into $root"
R sh -c 'dpkg -i /debs/*.deb' >"$pdir/install.log" 2>&1 || die "dpkg -i failed (build/persist/install.log)"
umount_root
rm -rf "$root/debs"
d=$kdirs
while [ -n "$d" ] && [ "$d" != / ] && rmdir "$root$d" 2>/dev/null; do d=$(dirname "$d"); done
for k in $kabis; do
	rm -f "$root/lib/modules/$k/build"
	ls "$root/lib/modules/$k/updates/dkms/xt_rangeset.ko"* >/dev/null 2>&1 ||
		die "$k: DKMS built no modules (build/persist/install.log)"
done
for u in nfguard.service netfilter-persistent.service; do
	[ -L "$root/etc/systemd/system/multi-user.target.wants/$u" ] || die "$u is not enabled in the image"
done
ok "image: bookworm, systemd, iptables-persistent, nftables; nfguard $ver installed, DKMS built for $kabis"

# The test: a unit after what it tests, results over 9p.
mkdir -p "$root/usr/local/lib/nfg-persist"
install -m 0755 "$here/guest.sh" "$here/cookie.py" "$root/usr/local/lib/nfg-persist/"
cat >"$root/etc/systemd/system/nfg-persist-test.service" <<'EOF'
[Unit]
Description=nfguard persistence test (tests/persist/guest.sh)
After=nfguard.service netfilter-persistent.service network-pre.target systemd-modules-load.service
[Service]
Type=oneshot
ExecStart=/usr/local/lib/nfg-persist/guest.sh
StandardOutput=journal+console
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/nfg-persist-test.service "$root/etc/systemd/system/multi-user.target.wants/"
# Nothing else that would run on its own during the test.
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer man-db.timer \
	e2scrub_reap.service systemd-timesyncd.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
echo "/dev/vda / ext4 rw 0 0" >"$root/etc/fstab"
echo nfg-persist >"$root/etc/hostname"
mb=$(($(du -sm "$root" | cut -f1) + 512))
mke2fs -q -t ext4 -L nfgroot -d "$root" "$pdir/disk.img" "${mb}M" >"$pdir/mke2fs.log" 2>&1 ||
	die "mke2fs -d failed (build/persist/mke2fs.log)"
rm -rf --one-file-system "$root"
echo "# image: ${mb} MB, $(($(date +%s) - t0)) s"

# ------------------------------------------------------------- initramfs --
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then busybox=$b; break; fi
done
[ -n "$busybox" ] || die "no static busybox (busybox-static)"
# initramfs ABI DIR: busybox, virtio_blk + ext4 and their dependencies, an
# /init that mounts /dev/vda and hands over to systemd.
initramfs() {
	local k=$1 st=$2/initramfs m dst
	rm -rf "$st" && mkdir -p "$st/bin" "$st/lib/modules" "$st/dev" "$st/proc" "$st/sys" "$st/newroot"
	cp "$busybox" "$st/bin/busybox"
	for m in $("$busybox" --list); do [ "$m" = busybox ] || ln -s busybox "$st/bin/$m"; done
	: >"$st/modules.list"
	modprobe -d "$kdirs/$k" -S "$k" -a --show-depends virtio_pci virtio_blk ext4 2>/dev/null |
		sed -n 's/^insmod \([^ ]*\).*/\1/p' | awk '!seen[$0]++' >"$2/modules.src"
	while read -r m; do
		dst=$(basename "$m")
		case $m in
		*.ko.xz) dst=${dst%.xz}; xz -dc "$m" >"$st/lib/modules/$dst" ;;
		*.ko.zst) dst=${dst%.zst}; zstd -qdc "$m" >"$st/lib/modules/$dst" ;;
		*) cp "$m" "$st/lib/modules/$dst" ;;
		esac || return 1
		echo "$dst" >>"$st/modules.list"
	done <"$2/modules.src"
	cat >"$st/init" <<'EOF'
#!/bin/sh
# nfguard persistence test: load virtio_blk/ext4, mount /dev/vda, run systemd.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do insmod "/lib/modules/$m" 2>/dev/null; done </modules.list
i=0
until [ -b /dev/vda ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "nfg-init: no /dev/vda" >/dev/console; echo o >/proc/sysrq-trigger; }
	sleep 0.1
done
mount -t ext4 -o rw /dev/vda /newroot || { echo "nfg-init: cannot mount /dev/vda" >/dev/console; echo o >/proc/sysrq-trigger; }
umount /proc /sys
mount -o move /dev /newroot/dev
exec switch_root /newroot /sbin/init
EOF
	chmod 755 "$st/init"
	(cd "$st" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$2/initramfs.cpio" || return 1
	rm -rf "$st"
}

# -------------------------------------------------------------- the boots --
# boot ABI N: one boot of ABI's disk; returns when QEMU has exited (the guest
# powered off, or the host killed it after NFG_PERSIST_BOOT_TIMEOUT).
boot() {
	local k=$1 n=$2 kd=$pdir/$1 slot='' i q start
	exec 9>&-
	while [ -z "$slot" ]; do
		for ((i = 0; i < ${NFG_VM_SLOTS:-$(nproc)}; i++)); do
			exec 9>"/tmp/nfguard-qemu.lock.$i"
			if flock -n 9; then slot=$i; break; fi
			exec 9>&-
		done
		[ -n "$slot" ] || sleep 1
	done
	start=$(date +%s)
	qemu-system-x86_64 -nodefaults -no-user-config -no-reboot \
		-machine pc -accel tcg,thread=single -cpu max -smp 2 -m 1024 \
		-display none -monitor none -serial "file:$kd/console$n.log" \
		-kernel "$kdirs/$k/boot/vmlinuz-$k" -initrd "$kd/initramfs.cpio" \
		-append "console=ttyS0,115200 panic=-1 oops=panic rdinit=/init mitigations=off random.trust_cpu=on 8250.nr_uarts=1 i8042.noaux i8042.nokbd" \
		-drive "file=$kd/disk.img,if=virtio,format=raw" \
		-virtfs "local,path=$kd/results,mount_tag=results,security_model=none,multidevs=remap" \
		</dev/null >"$kd/qemu$n.out" 2>&1 &
	q=$!
	while kill -0 $q 2>/dev/null; do
		if [ $(($(date +%s) - start)) -ge "$boot_timeout" ]; then
			echo "boot $n: timeout (${boot_timeout}s), QEMU killed" >>"$kd/host.log"
			kill -TERM $q; sleep 2; kill -KILL $q 2>/dev/null
			break
		fi
		sleep 1
	done
	wait $q 2>/dev/null
	echo "boot $n: $(($(date +%s) - start)) s (slot $slot)" >>"$kd/host.log"
	exec 9>&-
}

# run ABI MODE: both boots of one kernel, then its verdicts.
run() {
	local k=$1 mode=$2 kd=$pdir/$1 n
	rm -rf "$kd" && mkdir -p "$kd/results" || return 1
	echo "MODE=$mode" >"$kd/results/env"
	initramfs "$k" "$kd" || { echo "initramfs failed" >"$kd/host.log"; return 1; }
	cp --sparse=always "$pdir/disk.img" "$kd/disk.img" || return 1
	for n in 1 2; do
		boot "$k" $n
		[ -f "$kd/results/boot$n.done" ] || break
	done
}

declare -A mode_of=()
first=1
for k in $kabis; do
	if [ -n "${NFG_PERSIST_MODE:-}" ]; then mode_of[$k]=$NFG_PERSIST_MODE
	elif [ -n "$first" ]; then mode_of[$k]=plugin
	else mode_of[$k]=service; fi
	first=
done
qpids=
for k in $kabis; do
	run "$k" "${mode_of[$k]}" >"$pdir/run-$k.log" 2>&1 &
	qpids+=" $!"
done
wait
qpids=

for k in $kabis; do
	kd=$pdir/$k
	echo "# $k (mode ${mode_of[$k]}): $(tr '\n' ';' <"$kd/host.log" 2>/dev/null)"
	for n in 1 2; do
		if [ -f "$kd/results/boot$n.tap" ]; then
			sed -E "s/^((not )?ok - )(boot $n: )?/\1$k: boot $n: /" "$kd/results/boot$n.tap"
			pass=$((pass + $(grep -c '^ok - ' "$kd/results/boot$n.tap")))
			fail=$((fail + $(grep -c '^not ok - ' "$kd/results/boot$n.tap")))
		fi
		if [ ! -f "$kd/results/boot$n.done" ]; then
			notok "$k: boot $n did not finish (build/persist/$k/console$n.log, results/boot$n.log)"
			tail -n 15 "$kd/console$n.log" 2>/dev/null | tr -d '\r' | sed 's/^/    | /'
			tail -n 15 "$kd/results/boot$n.log" 2>/dev/null | sed 's/^/    | /'
			break
		fi
		splat=$(grep -aE -m 1 'Oops|BUG:|WARNING:|Call Trace|general protection|Kernel panic' "$kd/console$n.log" | tr -d '\r')
		[ -z "$splat" ] || notok "$k: boot $n: kernel: $splat"
	done
done
echo "# $(($(date +%s) - t0)) s"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
