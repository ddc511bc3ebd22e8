#!/bin/sh
# /init of the nfguard test initramfs (busybox-static). Loads the virtio/9p
# modules listed in /modules.list, mounts the host root read-only over 9p,
# tmpfs on /tmp /run /var/tmp /dev/shm, the writable results export at
# /run/nfg-vm, and switch_roots into the host root, exec'ing the runner named
# in /run/nfg-vm/guest.env (NFG_RUNNER) as PID 1. Everything that can be done
# here is done here: busybox from RAM starts much faster than binaries over 9p.
# Must never exit: PID 1 exiting panics the kernel.
export PATH=/bin
say() {
	read -r up _ </proc/uptime
	echo "[$up] nfg-init: $*" >/dev/console
}
die() {
	say "FATAL: $*"
	echo o >/proc/sysrq-trigger
	while :; do sleep 60; done
}
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
while read -r m; do
	[ -n "$m" ] || continue
	insmod "/lib/modules/$m" || say "insmod $m failed"
done </modules.list

R=/newroot/run/nfg-vm
opts=trans=virtio,version=9p2000.L,msize=512000
i=0
until mount -t 9p -o "$opts,ro,cache=loose" hostroot /newroot 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 50 ] || die "cannot mount hostroot over 9p"
	sleep 0.1
done
mkdir -p /res /hold
mount -t 9p -o "$opts,rw" results /res || die "cannot mount results export"
# A tree under /tmp, /run or /var/tmp (a CI checkout in /tmp, say) would be
# hidden by the tmpfs mounts below: carry it over them.
NFG_TOP=$(sed -n 's/^NFG_TOP=//p' /res/guest.env)
hidden=
case $NFG_TOP/ in
/tmp/* | /run/* | /var/tmp/*)
	mount -o bind "/newroot$NFG_TOP" /hold || die "bind $NFG_TOP"
	hidden=1
	;;
esac
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp || die "tmpfs /tmp"
mount -t tmpfs -o mode=755 tmpfs /newroot/run || die "tmpfs /run"
mount -t tmpfs -o mode=1777 tmpfs /newroot/var/tmp || die "tmpfs /var/tmp"
if [ -n "$hidden" ]; then
	mkdir -p "/newroot$NFG_TOP" || die "mkdir $NFG_TOP"
	mount -o move /hold "/newroot$NFG_TOP" || die "move $NFG_TOP"
fi
mkdir -p "$R"
mount -o move /res "$R" || die "cannot move the results export"
[ -r "$R/guest.env" ] || die "no guest.env in results export"
NFG_RUNNER=$(sed -n 's/^NFG_RUNNER=//p' "$R/guest.env")
{ [ -n "$NFG_RUNNER" ] && [ -r "/newroot$NFG_RUNNER" ]; } || die "runner '$NFG_RUNNER' not found"

mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
hostname nfg-vm
ip link set lo up
# Warnings are detected from the log; they must not panic the guest.
echo 0 >/proc/sys/kernel/panic_on_warn
# Kernels unpacked by tests/deps.sh (build/kernels/ABI) are not in the
# host's /lib/modules: show the guest their modules there.
NFG_KROOT=$(sed -n 's/^NFG_KROOT=//p' "$R/guest.env")
NFG_KABI=$(sed -n 's/^NFG_KABI=//p' "$R/guest.env")
if [ -n "$NFG_KROOT" ]; then
	mount -t tmpfs -o mode=755 tmpfs /newroot/lib/modules || die "tmpfs /lib/modules"
	mkdir -p "/newroot/lib/modules/$NFG_KABI"
	mount -o bind "/newroot$NFG_KROOT/lib/modules/$NFG_KABI" "/newroot/lib/modules/$NFG_KABI" ||
		die "bind $NFG_KROOT/lib/modules/$NFG_KABI"
fi
# request_module() runs the host's modprobe on the guest's /lib/modules.
echo /sbin/modprobe >/proc/sys/kernel/modprobe
mkfifo /newroot/run/nfg-sleep.fifo

for d in dev proc sys; do
	mount -o move "/$d" "/newroot/$d" || die "move /$d"
done
read -r up _ </newroot/proc/uptime
echo "[$up] nfg-init: switch_root to $NFG_RUNNER" >/dev/console
# shellcheck disable=SC2093 # exec only returns on failure
exec switch_root /newroot /bin/bash "$NFG_RUNNER" /run/nfg-vm
die "switch_root failed"
