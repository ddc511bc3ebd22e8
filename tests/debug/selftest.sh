#!/bin/bash
# Self-check of `make check-debug`: the debug kernel and the harness must
# catch each kind of bug the debug options exist for. Builds
# tests/vm/selftest/splat/nfg_splat.ko against the debug kernel and boots it
# once with:
#   kmemleak_baseline  PASS  (boot-time reports cleared)
#   st_lockinv         FAIL  kernel: WARNING: possible circular locking dependency
#   st_uaf             FAIL  kernel: BUG: KASAN: slab-use-after-free in nfg_splat_...
#   st_leak            PASS  (leaks 1234 bytes, module stays loaded)
#   kmemleak_check     FAIL  exit 1, the report names nfg_splat and shows the bytes
# (st_uaf after st_lockinv: a KASAN report taints the kernel, which turns
# lockdep off; st_leak after st_uaf: it leaves nfg_splat loaded for good.)
#
# usage: tests/debug/selftest.sh ABI [-t CASE_TIMEOUT]
# Environment as for tests/vm/run.sh (NFG_VM_BOOT_LIMIT etc.). Results in
# build/vm/ABI/debug-selftest/. Prints "ok"/"NOT OK" per detection and
# "N passed, N failed"; exit 0 only if every detection worked.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
usage() { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
abi=$1
shift
topt=()
while getopts t:h opt; do
	case $opt in
	t) topt=(-t "$OPTARG") ;;
	*) usage ;;
	esac
done

passed=0 failed=0
ok() { echo "  ok: $*"; passed=$((passed + 1)); }
notok() { echo "  NOT OK: $*"; failed=$((failed + 1)); }

base=$top/build/vm/$abi/debug-selftest
out=$base/out
log=$base/run.out
sdir=$base/splat
kdir=$top/build/kernels/$abi/usr/src/linux-headers-$abi

echo "== check-debug self-check on $abi"
rm -rf "$sdir"
mkdir -p "$sdir"
cp "$top/tests/vm/selftest/splat/nfg_splat.c" "$top/tests/vm/selftest/splat/Kbuild" "$sdir/"
# (a kernel of a newer suite builds its modules in that suite's chroot)
if "$top/tests/kbuild-chroot.sh" -k "$abi" make -C "$kdir" M="$sdir" modules >"$sdir/build.log" 2>&1 &&
	[ -f "$sdir/nfg_splat.ko" ]; then
	ok "built nfg_splat.ko against $kdir"
else
	tail -n 20 "$sdir/build.log"
	notok "build nfg_splat.ko against $kdir"
fi

cases=("$here/kmemleak_baseline.sh" "$here/selftest/st_lockinv.sh" "$here/selftest/st_uaf.sh"
	"$here/selftest/st_leak.sh" "$here/kmemleak_check.sh")
t0=$(date +%s)
"$top/tests/vm/run.sh" -k "$abi" "${topt[@]}" -o "$out" "${cases[@]}" >"$log" 2>&1
rc=$?
sed 's/^/   | /' "$log"
echo "   (self-check boot took $(($(date +%s) - t0))s)"
if [ $rc -ne 0 ]; then ok "run.sh exit $rc (non-zero)"; else notok "run.sh exited 0 despite planted bugs"; fi
if grep -qx '2 passed, 3 failed' "$log"; then ok "summary '2 passed, 3 failed'"; else notok "summary is not '2 passed, 3 failed'"; fi

# expect STATUS NAME REASON_ERE: the run.sh line for NAME
expect() {
	local line
	line=$(grep -E "^(PASS|FAIL) $2 \(" "$log" | head -n 1)
	if [ -z "$line" ]; then
		notok "$2: no PASS/FAIL line"
	elif [[ $line != "$1 $2 ("* ]]; then
		notok "$2: expected $1, got: $line"
	elif [ -n "$3" ] && ! printf '%s\n' "$line" | grep -qE -- "$3"; then
		notok "$2: reason does not match /$3/: $line"
	else
		ok "$line"
	fi
}
# contains FILE ERE WHAT
contains() {
	if grep -qE -- "$2" "$1" 2>/dev/null; then ok "$3"; else notok "$3 (/$2/ not in $1)"; fi
}

expect PASS kmemleak_baseline ''
expect FAIL st_lockinv '\(kernel: WARNING: possible circular locking dependency detected'
contains "$out/case.002.dmesg" 'nfg_splat_lock_[ab]' "lockdep report names the planted mutexes"
contains "$out/case.002.log" 'Resource temporarily unavailable' "lockinv: nfg_splat's init ran"
expect FAIL st_uaf '\(kernel: BUG: KASAN: slab-use-after-free in nfg_splat_'
contains "$out/case.003.log" 'Resource temporarily unavailable' "uaf: nfg_splat's init ran"
expect PASS st_leak ''
expect FAIL kmemleak_check '\(exit 1;'
contains "$out/case.005.log" 'kmemleak found [0-9]+ leaked object' "kmemleak_check says why it failed"
contains "$out/case.005.log" 'nfg_splat_(leak|init).*\[nfg_splat\]' "leak report names the allocating function in nfg_splat"
contains "$out/case.005.log" 'nfg_splat leak' "leak report shows the leaked bytes"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
