#!/bin/bash
# PID 1 inside the nfguard test guest, after switch_root into the host root.
# Usage (by the initramfs /init only): guest-runner.sh RESULTS_DIR
# run.sh copies this file into the results directory, so editing the tree
# never disturbs a running guest.
#
# Reads RESULTS_DIR/guest.env and RESULTS_DIR/cases.list, runs every case in
# order in its own process with a timeout, cleans up after it, and records
# for case NNN:
#   case.NNN.start   written when the case starts (the host watches it)
#   case.NNN.log     stdout+stderr of the case, then of the cleanup
#   case.NNN.dmesg   kernel log produced by the case and its cleanup
#   case.NNN.result  status= rc= secs= reason=
# then powers the guest off. PID 1 must never exit (the kernel would panic).
# In queue mode (guest.env NFG_QUEUE=1, run.sh -q) it mounts the queue export
# and runs only the cases it claims there (see below).
# Process start-up is slow under TCG (~0.1 s per dynamically linked exec),
# so this uses bash builtins wherever it can.
set -u
R=${1:-/run/nfg-vm}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C

say() {
	local up _
	read -r up _ </proc/uptime
	echo "[$up] nfg-runner: $*" >/dev/console
}
# Sleep without a process: read with a timeout on a FIFO nobody writes to.
exec 8<>/run/nfg-sleep.fifo
nap() { read -r -t "$1" -u 8; }
poweroff_now() {
	sync
	say "NFG-RUNNER-POWEROFF"
	echo o >/proc/sysrq-trigger
	while :; do nap 60; done
}
now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }

declare -A ENV=()
while IFS='=' read -r k v; do ENV[$k]=$v; done <"$R/guest.env"
NFG_TOP=${ENV[NFG_TOP]:-} NFG_KABI=${ENV[NFG_KABI]:-}
CASE_TIMEOUT=${ENV[NFG_CASE_TIMEOUT]:-300}
XTABLES_SYSDIR=${ENV[NFG_XTABLES_SYSDIR]:-}
if [ -z "$NFG_TOP" ] || [ -z "$NFG_KABI" ]; then say "bad guest.env"; poweroff_now; fi
if [ "${ENV[NFG_TRACE]:-0}" = 1 ]; then
	exec 19>"$R/runner.trace"
	BASH_XTRACEFD=19
	PS4='+ [${EPOCHREALTIME}] '
	set -x
fi
read -r kernel_release </proc/sys/kernel/osrelease
[ "$kernel_release" = "$NFG_KABI" ] || say "WARNING: running kernel $kernel_release is not $NFG_KABI"

# Any of these in the kernel log written during a case fails the case.
SPLAT_RE='Oops|BUG:|WARNING:|KASAN|UBSAN|kernel BUG|Kernel panic|possible circular locking|possible recursive locking|INFO: |suspicious RCU usage|scheduling while atomic|general protection|Call Trace|list_(add|del) corruption|refcount_t: |unreferenced object|stack-protector|stack guard page'

dmesg -c >"$R/boot.dmesg" 2>&1
if [ "${ENV[NFG_STALL]:-0}" = 1 ]; then
	# Harness self-test: a guest that never gets to run its cases.
	say "NFG-RUNNER-STALL (NFG_VM_STALL=1): not starting the runner"
	while :; do nap 60; done
fi
echo "${EPOCHSECONDS}" >"$R/runner.started"
say "NFG-RUNNER-START kernel $kernel_release"

# Names of loaded modules, space separated, from /proc/modules.
mods_now() {
	local m _ list=" "
	while read -r m _; do list+="$m "; done </proc/modules
	echo "$list"
}

# Mainline netfilter modules (kernel/net/{netfilter,ipv4/netfilter,
# ipv6/netfilter}) and what they depend on stay loaded once a case loaded
# them: reloading conntrack, nf_tables and their kin before every case cost
# seconds per case under TCG (signed, compressed modules). They hold no
# state a later case can see once its rules and namespaces are gone.
# (Bridge netfilter is not among them: br_netfilter changes bridging.)
resident_modules() {
	local dep=/lib/modules/$kernel_release/modules.dep
	[ -r "$dep" ] || return 0
	printf ' %s ' "$(grep -E '^kernel/net/(ipv4/|ipv6/)?netfilter/' "$dep" |
		tr ' ' '\n' | sed -n 's|.*/\([^/]*\)\.ko[^/]*$|\1|p' | tr '-' '_' | sort -u | tr '\n' ' ')"
}

# Restore a fresh state after a case: no processes but us, no netns, no
# links but lo, empty nft and legacy rulesets, modules the case loaded
# unloaded (ours included: exercises module exit; resident netfilter
# modules, above, excepted), /tmp emptied.
cleanup_case() { # $1 = modules loaded before the case (mods_now format)
	local before=$1 m t f new left ours=() links=() _
	kill -KILL -1 2>/dev/null
	nap 0.1
	wait 2>/dev/null
	f=(/run/netns/*)
	[ ! -e "${f[0]}" ] || ip -all netns delete
	for f in /sys/class/net/*; do
		[ "${f##*/}" = lo ] || [ ! -e "$f" ] || links+=("${f##*/}")
	done
	for m in "${links[@]}"; do ip link del "$m" 2>/dev/null; done
	# (nf_tables may be built in, as in the debug kernel: no /sys/module entry)
	if [ -d /sys/module/nf_tables ] ||
		grep -q '/nf_tables.ko' "/lib/modules/$kernel_release/modules.builtin" 2>/dev/null; then
		nft flush ruleset
	fi
	# One restore per family empties every legacy table (rules flushed, user
	# chains deleted, policies kept: what -F and -X per table did, with two
	# processes per table, ~0.1 s each under TCG, in every case once the
	# tables are resident).
	for f in ip_tables_names:iptables-legacy-restore ip6_tables_names:ip6tables-legacy-restore; do
		[ -e "/proc/net/${f%%:*}" ] || continue # (proc files have size 0)
		t=
		while read -r m; do t+="*$m"$'\n'"COMMIT"$'\n'; done <"/proc/net/${f%%:*}"
		[ -z "$t" ] || "${f#*:}" -w <<<"$t"
	done
	for f in "$NFG_TOP/build/kernel/$NFG_KABI"/*.ko; do
		[ -e "$f" ] || continue
		f=${f##*/}
		f=${f%.ko}
		ours+=("${f//-/_}")
	done
	for _ in 1 2 3 4 5 6 7 8; do
		new=()
		for m in $(mods_now); do
			[[ $before == *" $m "* ]] || [[ $RESIDENT == *" $m "* ]] || new+=("$m")
		done
		for m in "${ours[@]}"; do
			[ ! -d "/sys/module/$m" ] || [[ " ${new[*]} " == *" $m "* ]] || new+=("$m")
		done
		[ ${#new[@]} -gt 0 ] || break
		timeout 60 rmmod "${new[@]}" 2>/dev/null
	done
	# What a resident module holds (libcrc32c's crc32c_intel: a crypto
	# soft dependency modules.dep does not list) becomes resident too.
	left=()
	for m in "${new[@]}"; do
		if [[ " ${ours[*]} " != *" $m "* ]] && read -r t <"/sys/module/$m/refcnt" 2>/dev/null && [ "$t" -gt 0 ]; then
			RESIDENT+="$m "
		else
			left+=("$m")
		fi
	done
	[ ${#left[@]} -eq 0 ] || echo "cleanup: modules still loaded: ${left[*]}"
	# Empty /tmp and /var/tmp, but not the path down to the source tree:
	# when it lives under /tmp (a CI clone), it is carried into the guest's
	# tmpfs read-only, and walking it over 9p only to fail costs ~20 s.
	for f in /tmp/* /tmp/.[!.]* /var/tmp/*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		case $NFG_TOP/ in "$f"/*) continue ;; esac
		rm -rf "$f" 2>/dev/null
	done
	return 0
}

# Queue mode (run.sh -q): the boots of one kernel share a claim directory
# (a third 9p export) and the same cases.list; each case is run by the boot
# that claims it first (mkdir is atomic on the host), so the boots drain one
# queue and finish together. A claimed case is this boot's: it gets its
# case.NNN.start (NNN its line in cases.list) before anything later, which
# is how the host tells a case run elsewhere from one not reached yet.
Q=
if [ "${ENV[NFG_QUEUE]:-0}" = 1 ]; then
	Q=/run/nfg-vm-queue
	mkdir -p "$Q"
	if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,rw queue "$Q"; then
		say "FATAL: cannot mount the queue export"
		poweroff_now
	fi
fi

RESIDENT=$(resident_modules)
xtdir="$NFG_TOP/build/xtables"
[ -z "$XTABLES_SYSDIR" ] || xtdir="$xtdir:$XTABLES_SYSDIR"
n=0
while IFS=$'\t' read -r timeout_s case_path <&7; do
	[ -n "$case_path" ] || continue
	# run.sh wrote each case's timeout: its own "# nfg-case-timeout: N"
	# line (times NFG_VM_TIMEOUT_SCALE), else the default.
	case $timeout_s in '' | *[!0-9]*) timeout_s=$CASE_TIMEOUT ;; esac
	n=$((n + 1))
	printf -v id %03d "$n"
	if [ -n "$Q" ] && ! mkdir "$Q/$id" 2>/dev/null; then
		continue # claimed by another boot of this kernel
	fi
	name=${case_path##*/}
	name=${name%.sh}
	base="$R/case.$id"
	before=$(mods_now)
	mkdir "$base.d"
	printf '%s\ntimeout=%s\n' "$name" "$timeout_s" >"$base.start"
	say "NFG-CASE-START $id $name"
	t0=$(now_us)
	(
		set +x
		exec 7<&- 8<&- 19>&-
		cd /tmp || exit 1
		casepath=$NFG_TOP/build/bin:$PATH
		for v in $(compgen -e); do unset "$v" 2>/dev/null; done
		export HOME=/tmp TMPDIR=/tmp LANG=C TERM=dumb PATH="$casepath" \
			NFG_TOP NFG_KABI NFG_KMOD_DIR="$NFG_TOP/build/kernel/$NFG_KABI" \
			XTABLES_LIBDIR="$xtdir" NFG_CASE="$name" NFG_ARTIFACTS="$base.d" \
			NFG_CASE_TIMEOUT="$timeout_s"
		exec timeout -k 5 "$timeout_s" bash "$case_path"
	) </dev/null >"$base.log" 2>&1
	rc=$?
	t1=$(now_us)
	cleanup_case "$before" >>"$base.log" 2>&1
	nap 0.3 # let deferred work (netns teardown, RCU callbacks) report
	dmesg -c >"$base.dmesg" 2>&1
	secs=$(((t1 - t0) / 100000))
	secs=$((secs / 10)).$((secs % 10))
	splat=
	while IFS= read -r line; do
		if [[ $line =~ $SPLAT_RE ]]; then
			line=${line#\[*\] }
			splat=${line:0:160}
			break
		fi
	done <"$base.dmesg"
	if [ -n "$splat" ]; then
		status=FAIL reason="kernel: $splat"
	elif { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } &&
		[ $(((t1 - t0) / 1000000)) -ge "$timeout_s" ]; then
		status=FAIL reason="timeout after ${timeout_s}s"
	elif [ "$rc" -ne 0 ]; then
		status=FAIL reason="exit $rc"
	else
		status=PASS reason=
	fi
	rmdir "$base.d" 2>/dev/null
	printf 'status=%s\nrc=%s\nsecs=%s\nreason=%s\n' "$status" "$rc" "$secs" "$reason" >"$base.result.tmp"
	mv "$base.result.tmp" "$base.result"
	say "NFG-CASE-END $id $name $status ${secs}s"
done 7<"$R/cases.list"

echo "${EPOCHSECONDS}" >"$R/done"
poweroff_now
