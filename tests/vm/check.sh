#!/bin/bash
# Run VM test cases on every configured kernel.
#
# usage: tests/vm/check.sh [-t CASE_TIMEOUT] [CASE.sh...]
#
# Cases: the given ones, default tests/vm/cases/*.sh. Kernels: $KABIS (env),
# else "KABIS = ..." from build/config.mk, else the newest 6.1 and 6.12 with
# headers and image (kabis.sh). All kernels boot at the same time. Results per
# kernel in build/vm/ABI/check/ (run.sh output in build/vm/ABI/check.out).
# Prints the run.sh lines of each kernel, then "N passed, N failed" over all
# kernels; exit 0 only when everything passed (and something ran).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

topt=()
while getopts t:h opt; do
	case $opt in
	t) topt=(-t "$OPTARG") ;;
	*) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

# shellcheck source=tests/vm/kabis.sh
. "$here/kabis.sh"
kabis=$(nfg_vm_kabis "$top")
[ -n "$kabis" ] || { echo "check.sh: no kernel ABI configured or installed" >&2; exit 2; }

if [ $# -gt 0 ]; then
	cases=("$@")
else
	cases=("$here"/cases/*.sh)
	[ -e "${cases[0]}" ] || { echo "check.sh: no cases in $here/cases" >&2; exit 2; }
fi

# Every kernel's guest runs at the same time (run.sh holds one QEMU slot per
# guest; each single-threaded TCG guest uses one host CPU). Their lines are
# shown as they come, prefixed with the ABI; build/vm/ABI/check.out keeps each
# kernel's own output.
echo "== VM cases on: $kabis"
passed=0 failed=0 t0=$(date +%s)
declare -A pid=()
for abi in $kabis; do
	out=$top/build/vm/$abi/check
	rm -f "$out/summary"
	mkdir -p "$top/build/vm/$abi"
	"$here/run.sh" -k "$abi" "${topt[@]}" -o "$out" "${cases[@]}" 2>&1 |
		tee "$top/build/vm/$abi/check.out" | sed -u "s/^/[$abi] /" &
	pid[$abi]=$!
done
for abi in $kabis; do
	wait "${pid[$abi]}"
	out=$top/build/vm/$abi/check
	p=$(sed -n 's/^passed=//p' "$out/summary" 2>/dev/null)
	f=$(sed -n 's/^failed=//p' "$out/summary" 2>/dev/null)
	last=$(tail -n 1 "$top/build/vm/$abi/check.out" 2>/dev/null)
	if [ -z "$p" ] || [ -z "$f" ]; then
		# run.sh refused to run (usage/setup error): every case failed.
		p=0 f=${#cases[@]}
	elif [ "$last" != "$p passed, $f failed" ]; then
		# run.sh did not finish normally (its last line is its tally)
		[ "$f" -gt 0 ] || f=1
	fi
	echo "== $abi: $p passed, $f failed"
	passed=$((passed + p)) failed=$((failed + f))
done
echo "== all kernels ($kabis), $(($(date +%s) - t0))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
