#!/bin/bash
# Run VM test cases on every configured kernel.
#
# usage: tests/vm/check.sh [-t CASE_TIMEOUT] [CASE.sh...]
#
# Cases: the given ones, default tests/vm/cases/*.sh. Kernels: $KABIS (env),
# else "KABIS = ..." from build/config.mk, else the newest 6.1 and 6.12 with
# headers and image (kabis.sh). All kernels boot at the same time (with more
# kernels than QEMU slots, each kernel in one boot per slot, see below).
# Results per kernel in build/vm/ABI/check/ (run.sh output in
# build/vm/ABI/check.out), further boots of a kernel in check.N/.
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
# guest and waits for one; each single-threaded TCG guest uses one host CPU).
# When the kernels do not divide evenly among the slots (3 kernels, 2 slots),
# each kernel's cases are split into one part per slot (every other case),
# each part its own boot, so that no slot idles while the last kernel runs
# alone. Their lines are shown as they come, prefixed with the ABI; results
# of part 1 in build/vm/ABI/check (check.out), part N in check.N (check.N.out).
# NFG_VM_CHROOT_CASES=FILE (make check sets tests/vm/chroot-kernel.cases): a
# kernel built in its own Debian's chroot (tests/deps.sh marked it:
# KERNELS_DIR/ABI/.kbuild-chroot, the newest kernel from trixie-backports)
# runs only the given cases that FILE names (one case file name per line):
# make check's 40-minute budget on 2 CPUs holds two full kernels and that
# list, not three full kernels. Unset (make check-vm): every case everywhere.
case ${NFG_VM_CHROOT_CASES:-/} in /*) ;; *) NFG_VM_CHROOT_CASES=$top/$NFG_VM_CHROOT_CASES ;; esac
kdir=$(sed -n 's/^KERNELS_DIR = //p' "$top/build/config.mk" 2>/dev/null)
kdir=${kdir:-$top/build/kernels}
cases_for() { # ABI: the cases of that kernel, one per line
	if [ -n "${NFG_VM_CHROOT_CASES:-}" ] && [ -f "$kdir/$1/.kbuild-chroot" ]; then
		local c
		for c in "${cases[@]}"; do
			grep -qx "${c##*/}" <(sed 's/#.*//;s/[[:space:]]//g' "$NFG_VM_CHROOT_CASES") && echo "$c"
		done
	else
		printf '%s\n' "${cases[@]}"
	fi
}
slots=${NFG_VM_SLOTS:-$(nproc)}
nk=$(wc -w <<<"$kabis")
parts=1
[ "$nk" -le 1 ] || [ $((nk % slots)) -eq 0 ] || parts=$slots
[ "$parts" -le "${#cases[@]}" ] || parts=${#cases[@]}
part_dir() { # ABI PART
	if [ "$2" -eq 1 ]; then echo "$top/build/vm/$1/check"; else echo "$top/build/vm/$1/check.$2"; fi
}
msg=
[ "$parts" -eq 1 ] || msg=" ($parts boots per kernel)"
echo "== VM cases on: $kabis$msg"
passed=0 failed=0 t0=$(date +%s)
declare -A pid=() nparts=() kparts=()
for abi in $kabis; do
	mkdir -p "$top/build/vm/$abi"
	rm -rf "$top/build/vm/$abi"/check.[0-9]* "$top/build/vm/$abi"/check.[0-9]*.out
	mapfile -t kcases < <(cases_for "$abi")
	[ "${#kcases[@]}" -gt 0 ] || { echo "check.sh: no case to run on $abi" >&2; exit 2; }
	[ "${#kcases[@]}" -eq "${#cases[@]}" ] || echo "== $abi: ${#kcases[@]} of the ${#cases[@]} cases ($NFG_VM_CHROOT_CASES)"
	kp=$parts
	[ "$kp" -le "${#kcases[@]}" ] || kp=${#kcases[@]}
	kparts[$abi]=$kp
	for ((p = 1; p <= kp; p++)); do
		part=()
		for ((i = p - 1; i < ${#kcases[@]}; i += kp)); do part+=("${kcases[$i]}"); done
		out=$(part_dir "$abi" $p)
		log=$out.out
		rm -f "$out/summary"
		tag=$abi
		[ "$parts" -eq 1 ] || tag="$abi/$p"
		"$here/run.sh" -k "$abi" "${topt[@]}" -o "$out" "${part[@]}" 2>&1 |
			tee "$log" | sed -u "s|^|[$tag] |" &
		pid[$abi/$p]=$!
		nparts[$abi/$p]=${#part[@]}
	done
done
for abi in $kabis; do
	ap=0 af=0
	for ((p = 1; p <= kparts[$abi]; p++)); do
		wait "${pid[$abi/$p]}"
		out=$(part_dir "$abi" $p)
		pp=$(sed -n 's/^passed=//p' "$out/summary" 2>/dev/null)
		f=$(sed -n 's/^failed=//p' "$out/summary" 2>/dev/null)
		last=$(tail -n 1 "$out.out" 2>/dev/null)
		if [ -z "$pp" ] || [ -z "$f" ]; then
			# run.sh refused to run (usage/setup error): every case failed.
			pp=0 f=${nparts[$abi/$p]}
		elif [ "$last" != "$pp passed, $f failed" ]; then
			# run.sh did not finish normally (its last line is its tally)
			[ "$f" -gt 0 ] || f=1
		fi
		ap=$((ap + pp)) af=$((af + f))
	done
	echo "== $abi: $ap passed, $af failed"
	passed=$((passed + ap)) failed=$((failed + af))
done
echo "== all kernels ($kabis), $(($(date +%s) - t0))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
