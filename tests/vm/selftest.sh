#!/bin/bash
# Self-test of the VM harness: run.sh must detect every deliberately broken
# case in tests/vm/selftest/ with the right reason, pass the good ones, and
# exit non-zero.
#
# usage: tests/vm/selftest.sh
#
# Kernels as for check.sh ($KABIS, build/config.mk, or installed 6.1/6.12).
# Per kernel it builds selftest/splat/nfg_splat.ko (WARN_ON / NULL deref in
# module init) under build/vm/ABI/selftest/splat and boots three times:
#   A: pass, fail, timeout, dirty, clean, warn, oops, notrun
#      (per-case timeout, freshness between cases, WARNING from the log, a real
#       Oops killing the guest, cases after it not run)
#   B: pass, hang, notrun  (panic without reboot: host watchdog kills QEMU)
# Cases that must succeed get the default 300 s timeout, so a slow machine
# cannot turn them into failures; st_timeout (12 s) and st_hang (10 s) set
# their own short timeouts with "# nfg-case-timeout: N".
#   C: pass with -T 20 in a guest stalled before its runner (NFG_VM_STALL=1):
#      the whole-boot timeout fires before any case starts, however fast the
#      machine boots
#   D (first kernel only: the queue is host and runner logic): check.sh's
#      shared queue, two boots of pass, oops, clean, fail: every case runs
#      exactly once (the guest that oopses leaves the rest to the other
#      boot, in whatever order the boots got their slots), 2 passed, 2 failed
# The kernels are tested at the same time (one QEMU slot each); each kernel's
# output is printed as a block.
# Prints "ok"/"NOT OK" per detection and "N passed, N failed"; exit 0 only if
# every detection worked.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
st=$here/selftest
[ $# -eq 0 ] || { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

# shellcheck source=tests/vm/kabis.sh
. "$here/kabis.sh"
kabis=$(nfg_vm_kabis "$top")
[ -n "$kabis" ] || { echo "selftest.sh: no kernel ABI configured or installed" >&2; exit 2; }

passed=0 failed=0
ok() { echo "  ok: $*"; passed=$((passed + 1)); }
notok() { echo "  NOT OK: $*"; failed=$((failed + 1)); }

# expect OUTPUT_FILE STATUS NAME REASON_ERE: the run.sh line for NAME
expect() {
	local line
	line=$(grep -E "^(PASS|FAIL) $3 \(" "$1" | head -n 1)
	if [ -z "$line" ]; then
		notok "$3: no PASS/FAIL line"
	elif [[ $line != "$2 $3 ("* ]]; then
		notok "$3: expected $2, got: $line"
	elif [ -n "$4" ] && ! printf '%s\n' "$line" | grep -qE -- "$4"; then
		notok "$3: reason does not match /$4/: $line"
	else
		ok "$line"
	fi
}

# boot LABEL RC_WANTED SUMMARY_ERE [run.sh options --] CASES...
boot() {
	local label=$1 summary=$2 opts=() out log rc t0
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	out=$top/build/vm/$abi/selftest/$label
	log=$top/build/vm/$abi/selftest/$label.out
	echo "-- $abi boot $label: ${opts[*]} $(for c; do basename "$c" .sh; done | tr '\n' ' ')"
	t0=$(date +%s)
	"$here/run.sh" -k "$abi" "${opts[@]}" -o "$out" "$@" >"$log" 2>&1
	rc=$?
	sed 's/^/   | /' "$log"
	echo "   (boot $label took $(($(date +%s) - t0))s)"
	if [ $rc -ne 0 ]; then ok "run.sh exit $rc (non-zero)"; else notok "run.sh exited 0 despite failures"; fi
	if grep -qxE "$summary" "$log"; then ok "summary '$summary'"; else notok "summary line is not '$summary'"; fi
	LOG=$log
}

selftest_kernel() { # ABI: all detections on one kernel; prints passed=/failed= last
	local abi=$1 kdir sdir
	echo "== $abi"
	kdir=$(kdir_of "$abi") || { notok "no kernel build tree for $abi"; echo "passed=$passed failed=$failed"; return; }
	sdir=$top/build/vm/$abi/selftest/splat
	rm -rf "$sdir"
	mkdir -p "$sdir"
	cp "$st/splat/nfg_splat.c" "$st/splat/Kbuild" "$sdir/"
	if "$top/tests/kbuild-chroot.sh" -k "$abi" make -C "$kdir" M="$sdir" modules >"$sdir/build.log" 2>&1 &&
		[ -f "$sdir/nfg_splat.ko" ]; then
		ok "built nfg_splat.ko against $kdir"
	else
		tail -n 20 "$sdir/build.log"
		notok "build nfg_splat.ko against $kdir"
	fi

	boot A '3 passed, 5 failed' -t 300 -- "$st"/st_pass.sh "$st"/st_fail.sh "$st"/st_timeout.sh \
		"$st"/st_dirty.sh "$st"/st_clean.sh "$st"/st_warn.sh "$st"/st_oops.sh "$st"/st_notrun.sh
	expect "$LOG" PASS st_pass ''
	expect "$LOG" FAIL st_fail '\(exit 1;'
	expect "$LOG" FAIL st_timeout '\(timeout after 12s;'
	expect "$LOG" PASS st_dirty ''
	expect "$LOG" PASS st_clean ''
	expect "$LOG" FAIL st_warn '\(kernel: WARNING: .*nfg_splat'
	expect "$LOG" FAIL st_oops '\(guest died .*console: .*(BUG: kernel NULL pointer dereference|Oops)'
	expect "$LOG" FAIL st_notrun '\(not run: guest died'
	if grep -q 'run.sh: console log .*console.log' "$LOG"; then ok "console log path printed"; else notok "console log path not printed"; fi

	NFG_VM_GRACE=15 boot B '1 passed, 2 failed' -t 300 -- "$st"/st_pass.sh "$st"/st_hang.sh "$st"/st_notrun.sh
	expect "$LOG" PASS st_pass ''
	expect "$LOG" FAIL st_hang '\(guest hung: no progress for [0-9]+s, QEMU killed; console: .*(Kernel panic|sysrq)'
	expect "$LOG" FAIL st_notrun '\(not run: guest hung'

	# The guest stops before its runner on purpose, so the whole-boot timeout
	# is reached before any case starts on a machine of any speed.
	NFG_VM_STALL=1 boot C '0 passed, 2 failed' -T 20 -- "$st"/st_pass.sh "$st"/st_notrun.sh
	expect "$LOG" FAIL st_pass '^FAIL st_pass \(boot timeout \(20s\) reached, QEMU killed\)$'
	expect "$LOG" FAIL st_notrun '^FAIL st_notrun \(boot timeout \(20s\) reached, QEMU killed\)$'
	# Before the runner: it never wrote runner.started (however far the boot
	# got: a slow machine may not even reach the stall within 20 s).
	if [ ! -e "$top/build/vm/$abi/selftest/C/runner.started" ] && [ -f "$top/build/vm/$abi/selftest/C/console.log" ]; then
		ok "boot C: the boot timeout fired before the runner started$(grep -aq 'NFG-RUNNER-STALL' \
			"$top/build/vm/$abi/selftest/C/console.log" && echo ' (guest stalled on purpose)')"
	else
		notok "boot C: the runner started, the boot timeout was not proven before it"
	fi
	[ "$abi" != "$first_abi" ] || queue_boots "$abi"
	echo "passed=$passed failed=$failed"
}

# queue_boots ABI: boots D, two boots of one kernel draining one queue
# (tests/vm/check.sh, results in build/vm/ABI/selftest/D and D.2).
queue_boots() {
	local abi=$1 log=$top/build/vm/$1/selftest/D.check.out lines rc n id ran t0 d
	echo "-- $abi boots D (check.sh, 2 boots, one queue): st_pass st_oops st_clean st_fail"
	t0=$(date +%s)
	NFG_VM_RESULTS=selftest/D NFG_VM_BOOTS=2 KABIS=$abi NFG_VM_CHROOT_CASES='' \
		"$here/check.sh" -t 300 "$st"/st_pass.sh "$st"/st_oops.sh "$st"/st_clean.sh "$st"/st_fail.sh >"$log" 2>&1
	rc=$?
	sed 's/^/   | /' "$log"
	echo "   (boots D took $(($(date +%s) - t0))s)"
	if [ $rc -ne 0 ]; then ok "check.sh exit $rc (non-zero)"; else notok "check.sh exited 0 despite failures"; fi
	if [ "$(tail -n 1 "$log")" = "2 passed, 2 failed" ]; then ok "summary '2 passed, 2 failed'"; else notok "summary is not '2 passed, 2 failed'"; fi
	lines=$top/build/vm/$abi/selftest/D.lines
	sed 's/^\[[^]]*\] //' "$log" >"$lines"
	expect "$lines" PASS st_pass ''
	expect "$lines" FAIL st_oops '\(guest died .*console: .*(BUG: kernel NULL pointer dereference|Oops)'
	expect "$lines" PASS st_clean ''
	expect "$lines" FAIL st_fail '\(exit 1;'
	n=0
	for d in D D.2; do
		[ -f "$top/build/vm/$abi/selftest/$d/cases.list" ] && n=$((n + 1))
	done
	if [ "$n" -eq 2 ]; then ok "two boots were queued"; else notok "$n boots queued, not 2"; fi
	for n in 1 2 3 4; do
		id=$(printf %03d "$n")
		ran=$(ls "$top/build/vm/$abi/selftest/D/case.$id.start" "$top/build/vm/$abi/selftest/D.2/case.$id.start" 2>/dev/null | wc -l)
		if [ "$ran" -eq 1 ]; then ok "case $id started in exactly one boot"; else notok "case $id started in $ran boots"; fi
	done
}

kdir_of() { # ABI: the kernel build tree, as the Makefile picks it
	local d
	for d in "$top/build/kernels/$1/usr/src/linux-headers-$1" "/lib/modules/$1/build" "/usr/src/linux-headers-$1"; do
		[ -f "$d/Makefile" ] && { echo "$d"; return 0; }
	done
	return 1
}

t_all=$(date +%s)
first_abi=$(set -- $kabis; echo "$1")
declare -A pid=() log=()
for abi in $kabis; do
	mkdir -p "$top/build/vm/$abi/selftest"
	log[$abi]=$top/build/vm/$abi/selftest.out
	selftest_kernel "$abi" >"${log[$abi]}" 2>&1 &
	pid[$abi]=$!
done
total_p=0 total_f=0
for abi in $kabis; do
	wait "${pid[$abi]}"
	grep -v -E '^passed=[0-9]+ failed=[0-9]+$' "${log[$abi]}"
	res=$(grep -E '^passed=[0-9]+ failed=[0-9]+$' "${log[$abi]}" | tail -n 1)
	if [ -z "$res" ]; then
		echo "  NOT OK: self-test on $abi did not finish"
		total_f=$((total_f + 1))
		continue
	fi
	p=${res#passed=} p=${p%% *}
	f=${res##*failed=}
	total_p=$((total_p + p)) total_f=$((total_f + f))
done
echo "== selftest on $(echo "$kabis" | wc -w) kernel(s) ($kabis), $(($(date +%s) - t_all))s"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
