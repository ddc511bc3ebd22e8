#!/bin/bash
# Run VM test cases on every configured kernel.
#
# usage: tests/vm/check.sh [-t CASE_TIMEOUT] [CASE.sh...]
#
# Cases: the given ones, default tests/vm/cases/*.sh. Kernels: $KABIS (env),
# else "KABIS = ..." from build/config.mk, else the newest 6.1 and 6.12 with
# headers and image (kabis.sh). All kernels boot at the same time, each in
# one boot per QEMU slot sharing one queue of its cases (see below).
# Results per kernel in build/vm/ABI/check/ (run.sh output in
# build/vm/ABI/check.out), further boots of a kernel in check.N/.
# Prints the run.sh lines of each kernel, then "N passed, N failed" over all
# kernels; exit 0 only when everything passed (and something ran).
# Environment: KABIS, NFG_VM_CHROOT_CASES, NFG_VM_BOOTS, NFG_VM_RESULTS (below).
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

# Every kernel's guests run at the same time (run.sh holds one QEMU slot per
# guest and waits for one; each single-threaded TCG guest uses one host CPU).
# Each kernel gets one boot per slot, sharing one queue of its cases
# (run.sh -q build/vm/ABI/check.queue): a boot claims the next unclaimed case
# when it is ready for one, so the boots of a kernel end within a case of each
# other, whichever slots they got and whenever; a boot that gets its slot when
# every case is claimed does not boot. The queue is ordered slowest first
# (tests/vm/case-secs, seconds measured per case; unknown cases 30 s), so
# what is left at the end is short. Lines are shown as they come, prefixed
# with ABI/BOOT; results of boot 1 in build/vm/ABI/check (check.out), boot N
# in check.N (check.N.out), each case's files in the results of the boot that
# ran it. A case no boot ran (its guests died first) fails here.
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
# order_cases CASE...: slowest first by tests/vm/case-secs (stable).
order_cases() {
	local c n w
	for c; do
		n=${c##*/}
		n=${n%.sh}
		w=$(awk -v n="$n" '$1 == n { print $2; exit }' "$here/case-secs" 2>/dev/null)
		printf '%s\t%s\n' "${w:-30}" "$c"
	done | sort -s -t "$(printf '\t')" -k1,1gr | cut -f2-
}
# NFG_VM_BOOTS: boots per kernel (default: the QEMU slots, NFG_VM_SLOTS or nproc).
parts=${NFG_VM_BOOTS:-${NFG_VM_SLOTS:-$(nproc)}}
case $parts in '' | *[!0-9]* | 0) echo "check.sh: NFG_VM_BOOTS must be a positive integer" >&2; exit 2 ;; esac
# NFG_VM_RESULTS (default check; the harness self-test uses its own): results
# in build/vm/ABI/NAME, NAME.2 ..., the queue in NAME.queue.
rname=${NFG_VM_RESULTS:-check}
case /$rname/ in */../* | */./* | //) echo "check.sh: bad NFG_VM_RESULTS" >&2; exit 2 ;; esac
part_dir() { # ABI PART
	if [ "$2" -eq 1 ]; then echo "$top/build/vm/$1/$rname"; else echo "$top/build/vm/$1/$rname.$2"; fi
}
msg=
[ "$parts" -eq 1 ] || msg=" (up to $parts boots per kernel, one queue)"
echo "== VM cases on: $kabis$msg"
passed=0 failed=0 t0=$(date +%s)
declare -A pid=() kparts=() kcount=()
for abi in $kabis; do
	q=$top/build/vm/$abi/$rname.queue
	mkdir -p "$top/build/vm/$abi" "$(dirname "$q")"
	rm -rf "$top/build/vm/$abi/$rname".[0-9]* "$q"
	mkdir "$q" || exit 2
	mapfile -t kcases < <(cases_for "$abi")
	mapfile -t kcases < <(order_cases "${kcases[@]}")
	[ "${#kcases[@]}" -gt 0 ] || { echo "check.sh: no case to run on $abi" >&2; exit 2; }
	[ "${#kcases[@]}" -eq "${#cases[@]}" ] || echo "== $abi: ${#kcases[@]} of the ${#cases[@]} cases ($NFG_VM_CHROOT_CASES)"
	kp=$parts
	[ "$kp" -le "${#kcases[@]}" ] || kp=${#kcases[@]}
	kparts[$abi]=$kp kcount[$abi]=${#kcases[@]}
	for ((p = 1; p <= kp; p++)); do
		out=$(part_dir "$abi" $p)
		log=$out.out
		rm -f "$out/summary"
		tag=$abi
		[ "$kp" -eq 1 ] || tag="$abi/$p"
		"$here/run.sh" -k "$abi" "${topt[@]}" -o "$out" -q "$q" "${kcases[@]}" 2>&1 |
			tee "$log" | sed -u "s|^|[$tag] |" &
		pid[$abi/$p]=$!
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
			# run.sh refused to run (usage/setup error); its cases
			# are counted below as run by no boot.
			pp=0 f=1
		elif [ "$last" != "$pp passed, $f failed" ]; then
			# run.sh did not finish normally (its last line is its tally)
			[ "$f" -gt 0 ] || f=1
		fi
		ap=$((ap + pp)) af=$((af + f))
	done
	# Every case exactly once: started in one boot's results, never two.
	first=$(part_dir "$abi" 1)
	n=0
	while IFS=$'\t' read -r _ c; do
		n=$((n + 1))
		id=$(printf %03d "$n")
		ran=0
		for ((p = 1; p <= kparts[$abi]; p++)); do
			[ ! -f "$(part_dir "$abi" $p)/case.$id.start" ] || ran=$((ran + 1))
		done
		if [ "$ran" -eq 0 ]; then
			echo "[$abi] FAIL $(basename "$c" .sh) (not run: no boot of $abi ran it)"
			af=$((af + 1))
		elif [ "$ran" -gt 1 ]; then
			echo "[$abi] FAIL $(basename "$c" .sh) (run by $ran boots of $abi)"
			af=$((af + 1))
		fi
	done <"$first/cases.list"
	[ -f "$first/cases.list" ] || [ "${kcount[$abi]}" -eq 0 ] || {
		echo "[$abi] FAIL: no cases.list in $first (run.sh did not start): ${kcount[$abi]} cases not run"
		af=$((af + kcount[$abi]))
	}
	echo "== $abi: $ap passed, $af failed"
	passed=$((passed + ap)) failed=$((failed + af))
done
echo "== all kernels ($kabis), $(($(date +%s) - t0))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
