#!/bin/bash
# make check-debug: the VM suite on a lockdep/KASAN/kmemleak debug kernel.
#
# usage: tests/debug/check.sh [CASE.sh...]
#
#  1. tests/debug/build-kernel.sh: build the debug kernel, or reuse the cached one
#  2. make modules KABIS=<debug ABI>: nfguard's modules for it
#  3. tests/debug/selftest.sh: planted lock inversion, leak and use-after-free
#     must each be reported as a failure with the right reason (own boot)
#  4. the cases (default tests/vm/cases/*.sh), dealt round-robin over
#     NFG_DEBUG_BOOTS (default 2) boots, each run as
#     kmemleak_baseline.sh, its cases, kmemleak_check.sh
#     Any splat (KASAN, lockdep, RCU, sleeping in atomic, ...) fails its case,
#     one while booting fails the run, any kmemleak report fails
#     kmemleak_check. The debug kernel is slow under TCG and each guest uses
#     one host CPU, so the boots (and 3) run at the same time, as many as
#     run.sh has QEMU slots (one per host CPU); the rest wait for a slot.
# Prints the run.sh lines, timings, writes them with the counts to
# build/debug/last-result, ends with "N passed, N failed" (suite cases +
# self-check detections) and exits non-zero on any failure. Results:
# build/vm/ABI/debug-N/ (suite boots), build/vm/ABI/debug-selftest/.
#
# Environment: NFG_DEBUG_BASE (6.12, default, or newest: the kernel source,
# tests/debug/build-kernel.sh), NFG_DEBUG_CASE_TIMEOUT (default 1200) per-case timeout,
# NFG_VM_BOOT_LIMIT (default 900) seconds until the guest runner starts;
# how the defaults were derived: tests/debug/README.md.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
case "${1:-}" in -*) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;; esac

case_timeout=${NFG_DEBUG_CASE_TIMEOUT:-1200}
nboots=${NFG_DEBUG_BOOTS:-2}
export NFG_VM_BOOT_LIMIT=${NFG_VM_BOOT_LIMIT:-900}
# Cases that set their own timeout get it 4x on this kernel (4-8x slower).
export NFG_VM_TIMEOUT_SCALE=${NFG_VM_TIMEOUT_SCALE:-4}
t_all=$(date +%s)

if [ $# -gt 0 ]; then
	cases=("$@")
else
	cases=("$top"/tests/vm/cases/*.sh)
fi
[ "${#cases[@]}" -lt "$nboots" ] && nboots=${#cases[@]}

echo "== debug kernel"
"$here/build-kernel.sh" || { echo "check-debug: kernel build failed"; echo "0 passed, 1 failed"; exit 1; }
abi=$(cat "$top/build/debug/kabi")
cache=$(readlink -f "$top/build/kernels/$abi/..")
kbuild_secs=$(cat "$cache/build.secs" 2>/dev/null || echo '?')

echo "== nfguard modules for $abi"
nice -n 19 make -C "$top" --no-print-directory modules KABIS="$abi" ||
	{ echo "check-debug: module build failed"; echo "0 passed, 1 failed"; exit 1; }

mkdir -p "$top/build/debug"
re=$(sed -n "s/^SPLAT_RE='\(.*\)'\$/\1/p" "$top/tests/vm/guest-runner.sh")
[ -n "$re" ] || { echo "check-debug: no SPLAT_RE in tests/vm/guest-runner.sh"; exit 2; }

echo "== self-check and ${#cases[@]} case(s) in $nboots boot(s) on $abi (case timeout ${case_timeout}s)"
t0=$(date +%s)
"$here/selftest.sh" "$abi" -t "$case_timeout" >"$top/build/debug/selftest.out" 2>&1 &
st_pid=$!
declare -A pid=()
for ((b = 1; b <= nboots; b++)); do
	part=()
	for ((i = b - 1; i < ${#cases[@]}; i += nboots)); do part+=("${cases[$i]}"); done
	out=$top/build/vm/$abi/debug-$b
	rm -f "$out/summary"
	"$top/tests/vm/run.sh" -k "$abi" -t "$case_timeout" -o "$out" \
		"$here/kmemleak_baseline.sh" "${part[@]}" "$here/kmemleak_check.sh" \
		>"$top/build/debug/boot-$b.out" 2>&1 &
	pid[$b]=$!
done

s_pass=0 s_fail=0 boots=
for ((b = 1; b <= nboots; b++)); do
	wait "${pid[$b]}"
	out=$top/build/vm/$abi/debug-$b
	echo "== suite boot $b of $nboots"
	cat "$top/build/debug/boot-$b.out"
	p=$(sed -n 's/^passed=//p' "$out/summary" 2>/dev/null)
	f=$(sed -n 's/^failed=//p' "$out/summary" 2>/dev/null)
	if [ -z "$p" ] || [ -z "$f" ]; then p=0 f=1; fi
	boots+=" $(sed -n 's/^boot_secs=//p' "$out/summary" 2>/dev/null)"
	# The runner checks the kernel log of each case; a splat while booting
	# (before the first case) would go unnoticed, and a lockdep report there
	# switches lockdep off for the whole boot (kmemleak_baseline.sh checks
	# that too).
	bootsplat=$(grep -aE -m 1 "$re" "$out/boot.dmesg" 2>/dev/null)
	if [ -n "$bootsplat" ]; then
		echo "FAIL boot (kernel: ${bootsplat:0:160}; log $out/boot.dmesg)"
		f=$((f + 1))
	fi
	s_pass=$((s_pass + p)) s_fail=$((s_fail + f))
done
suite_secs=$(($(date +%s) - t0))
wait "$st_pid"
echo "== self-check (planted bugs)"
cat "$top/build/debug/selftest.out"
st_pass=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$top/build/debug/selftest.out" | tail -n 1)
st_fail=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$top/build/debug/selftest.out" | tail -n 1)
[ -n "$st_pass" ] || st_pass=0
[ -n "$st_fail" ] || st_fail=1

slowest=$(cat "$top"/build/debug/boot-*.out | grep -hoE '^(PASS|FAIL) [^ ]+ \([0-9.]+s\)' |
	sed -E 's/^[A-Z]+ ([^ ]+) \(([0-9.]+)s\)/\2s \1/' | sort -rn | head -n 1)
total=$(($(date +%s) - t_all))
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "kernel: $abi ($(readlink -f "$top/build/kernels/$abi"))"
	echo "suite: $s_pass passed, $s_fail failed (${#cases[@]} cases + kmemleak baseline/check per boot," \
		"$nboots boots), ${suite_secs}s; boot to runner:${boots}s; slowest case: ${slowest:-?}"
	echo "self-check: $st_pass passed, $st_fail failed"
	echo "kernel compile (when it was built): ${kbuild_secs}s"
	echo "check-debug total: ${total}s"
} | tee "$top/build/debug/last-result"
echo "$((s_pass + st_pass)) passed, $((s_fail + st_fail)) failed"
[ "$s_fail" -eq 0 ] && [ "$st_fail" -eq 0 ] && [ "$s_pass" -gt 0 ]
