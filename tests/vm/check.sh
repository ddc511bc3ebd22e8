#!/bin/bash
# Run VM test cases on every configured kernel.
#
# usage: tests/vm/check.sh [-t CASE_TIMEOUT] [CASE.sh...]
#
# Cases: the given ones, default tests/vm/cases/*.sh. Kernels: $KABIS (env),
# else "KABIS = ..." from build/config.mk, else the installed
# /usr/src/linux-headers-6.1.*-amd64 and 6.12.*-amd64 that have a
# /boot/vmlinuz. Results per kernel in build/vm/ABI/check/. Prints the run.sh
# lines of each kernel, then "N passed, N failed" over all kernels; exit 0
# only when everything passed (and something ran).
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

passed=0 failed=0 t0=$(date +%s)
for abi in $kabis; do
	echo "== $abi"
	out=$top/build/vm/$abi/check
	rm -f "$out/summary"
	"$here/run.sh" -k "$abi" "${topt[@]}" -o "$out" "${cases[@]}"
	rc=$?
	p=$(sed -n 's/^passed=//p' "$out/summary" 2>/dev/null)
	f=$(sed -n 's/^failed=//p' "$out/summary" 2>/dev/null)
	if [ -z "$p" ] || [ -z "$f" ]; then
		# run.sh refused to run (usage/setup error): every case failed.
		p=0 f=${#cases[@]}
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	passed=$((passed + p)) failed=$((failed + f))
done
echo "== all kernels ($(echo "$kabis" | wc -w)), $(($(date +%s) - t0))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
