#!/bin/bash
# `make check`: every stage of the nfguard test suite, in order, with a timing
# table at the end so the time budget is visible in every run.
#
# usage: tests/check.sh
#
# Stages: deps (tests/deps.sh), build (make all), unit (make check-unit),
# install (make check-install), package (tests/package/check.sh without its
# boots), selftest (harness self-test), vm (every VM case on 6.1 and 6.12, the cases of
# tests/vm/chroot-kernel.cases on the newest kernel,
# plus tests/package/package_installed.sh: the installed packages of the package stage,
# booted), persist (tests/persist/check.sh: a systemd guest with the package
# stage's .debs rebooted on each kernel; started when the package stage ends,
# its boots run when the vm stage's have freed the QEMU slots). Stages after a failed deps/build stage are not run;
# a failing test stage does not stop the later ones. Each stage's output is
# shown as it runs and kept in build/check/STAGE.log; selftest runs in the
# background from the end of deps (beside build; the vm stage starts when it
# has ended), unit, install and package from the end of build (package on
# into the vm stage; persist's seconds include its wait for package): their
# seconds overlap, their logs are shown when they are joined.
#
# Ends with the kernel ABIs tested, a per-stage table (wall seconds and CPU
# seconds: the machine's two CPUs are the budget), a per-case table
# (slowest first) and "N passed, N failed" summed over the stages' own closing
# lines (a stage that fails without one counts as one failure). Exit status
# non-zero on any failure.
#
# Environment: NFG_CHECK_BUDGET (seconds, default 2400): the run prints a
# warning line when it takes longer (it does not fail for it).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
logs=$top/build/check
mkdir -p "$logs"
budget=${NFG_CHECK_BUDGET:-2400}	# 40 minutes on a 2-CPU machine (CI stops at 90)
jobs=$(nproc 2>/dev/null || echo 2)

declare -a st_name=() st_secs=() st_cpu=() st_pass=() st_fail=() st_rc=()
total_p=0 total_f=0 t_all=$(date +%s)

kabis_now() { sed -n 's/^KABIS *= *//p' "$top/build/config.mk" 2>/dev/null; }

# cpu_secs: the CPU seconds (user + system) of the calling shell's waited-for
# children so far, from bash's `times` (second line: children), rounded.
# (`times` writes to a file: in a pipe or $(...) it would report a subshell's.)
cpu_secs() {
	local f=$logs/.times.$BASHPID
	times >"$f"
	awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%d\n", s + 0.5 }' "$f"
	rm -f "$f"
}

# record NAME RC SECS: counts from the stage's closing line in its log, the
# stage's CPU seconds from build/check/NAME.cpu (written by the stage's
# subshell: guests' QEMU included, as everything a stage waits for).
record() {
	local name=$1 rc=$2 secs=$3 line p f cpu
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$logs/$name.log" | tail -n 1)
	if [ -n "$line" ]; then
		line=${line#*: }
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed*}
	else
		p=0 f=0
	fi
	[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	cpu=$(cat "$logs/$name.cpu" 2>/dev/null)
	st_name+=("$name") st_secs+=("$secs") st_cpu+=("${cpu:--}") st_pass+=("$p") st_fail+=("$f") st_rc+=("$rc")
	total_p=$((total_p + p)) total_f=$((total_f + f))
	echo "======== [$name] exit $rc, ${secs}s"
}

# stage NAME CMD...: run, tee to the log, record time and counts.
stage() {
	local name=$1 t0 rc
	shift
	echo
	echo "======== [$name] $*"
	t0=$(date +%s)
	set -o pipefail
	(
		"$@"
		rc=$?
		cpu_secs >"$logs/$name.cpu"
		exit "$rc"
	) 2>&1 | tee "$logs/$name.log"
	rc=$?
	set +o pipefail
	record "$name" "$rc" $(($(date +%s) - t0))
	return "$rc"
}

# stage_bg NAME CMD...: start a host-only stage in the background (its output
# goes to its log only); stage_join NAME prints the log and records it.
# Used for the host-only stages that run beside the harness self-test, and
# for persist, whose guests wait for the vm stage's QEMU slots.
declare -A bg_pid=() bg_cmd=()
stage_bg() {
	local name=$1
	shift
	bg_cmd[$name]="$*"
	(
		t0=$(date +%s)
		"$@" >"$logs/$name.log" 2>&1
		rc=$?
		cpu_secs >"$logs/$name.cpu"
		echo "$rc $(($(date +%s) - t0))" >"$logs/$name.rc"
	) &
	bg_pid[$name]=$!
}
stage_join() {
	local name=$1 rc secs
	wait "${bg_pid[$name]}"
	read -r rc secs <"$logs/$name.rc" 2>/dev/null || { rc=1 secs=0; }
	echo
	echo "======== [$name] ${bg_cmd[$name]} (ran in the background; its log:)"
	cat "$logs/$name.log"
	record "$name" "$rc" "$secs"
}

# after_package CMD...: wait until the package stage (stage_bg) has ended, then CMD.
after_package() {
	local t0=$SECONDS
	while [ ! -f "$logs/package.rc" ]; do sleep 2; done
	echo "# started after the package stage ended (waited $((SECONDS - t0)) s)"
	"$@"
}

ok=1
stage deps ./tests/deps.sh || ok=
rm -f "$logs"/*.rc "$logs"/*.cpu
if [ -n "$ok" ]; then
	# The harness self-test needs no build of ours (it builds its own
	# module and boots the kernels tests/deps.sh unpacked): it starts
	# beside the build. One QEMU slot more than the CPUs for it: its
	# three kernels' boots run one after the other per kernel, and they
	# mostly wait (a case's timeout, a hung guest's grace, a stalled
	# boot), so a third guest costs little CPU. The VM stage starts when
	# it has ended (the VM stage's boots would otherwise hold the slots
	# its later boots wait for), with one slot per CPU.
	make -s build/config.mk >/dev/null 2>&1
	stage_bg selftest env NFG_VM_SLOTS="${NFG_VM_SLOTS:-$((jobs + 1))}" make check-selftest
	stage build make -j"$jobs" all || ok=
fi
if [ -n "$ok" ]; then
	echo
	echo "######## kernels under test (newest Debian 6.1, 6.12 and trixie-backports kernel that tests/deps.sh resolved): $(kabis_now)"
	stage_bg unit make check-unit
	stage_bg install make check-install
	stage_bg package env NFG_PKG_BOOT=0 ./tests/package/check.sh
	stage_join selftest
	stage_join unit
	stage_join install
	# The package stage usually outlasts the self-test (using about half
	# of two CPUs): the VM stage starts now, beside it.
	# tests/package/package_installed.sh boots with what the package stage installed
	# (build/package/root-n, root-up): one more case in each kernel's queue,
	# queued last (tests/vm/case-secs), which waits for the package stage's
	# end if it gets there first (build/package/stage.done).
	# tests/persist/check.sh: starts when the package stage has ended (its
	# image is made of the package stage's .debs); the image is built on the
	# host while the VM stage's guests run; its two boots per kernel then wait
	# for QEMU slots, which the VM stage's boots hold.
	stage_bg persist after_package ./tests/persist/check.sh
	# The newest kernel (built in its Debian's chroot) runs the cases of
	# tests/vm/chroot-kernel.cases, the others every case (budget: 40 min).
	stage vm env NFG_VM_CHROOT_CASES=tests/vm/chroot-kernel.cases \
		make check-vm CASES="$(echo tests/vm/cases/*.sh) tests/package/package_installed.sh"
	stage_join package
	stage_join persist
elif [ -n "${bg_pid[selftest]:-}" ]; then
	stage_join selftest
fi

# ------------------------------------------------------------------ tables
t_end=$(date +%s)
echo
echo "######## timing (make check on $(nproc) CPUs, kernels: $(kabis_now))"
printf '%-10s %7s %7s %7s %7s  %s\n' stage seconds cpu-sec passed failed status
for i in "${!st_name[@]}"; do
	s=ok
	[ "${st_rc[$i]}" -eq 0 ] || s="FAILED (exit ${st_rc[$i]})"
	printf '%-10s %7s %7s %7s %7s  %s\n' "${st_name[$i]}" "${st_secs[$i]}" "${st_cpu[$i]}" "${st_pass[$i]}" "${st_fail[$i]}" "$s"
done
cpu_secs >"$logs/total.cpu"	# (not in $(...): a subshell's `times`)
printf '%-10s %7s %7s\n' total $((t_end - t_all)) "$(cat "$logs/total.cpu")"

# vm_outs ABI: the results dirs of the last VM run on ABI (tests/vm/check.sh:
# check, and check.N when it split a kernel's cases over several boots).
vm_outs() {
	local d
	for d in "$top/build/vm/$1/check" "$top/build/vm/$1"/check.[0-9]*; do
		[ -d "$d" ] && echo "$d"
	done
}

# case_files ABI: "PREFIX<TAB>CASE" per case of the last VM run on ABI, where
# PREFIX.result, PREFIX.log and PREFIX.dmesg are that case's files: the boots
# of a kernel share one queue of the same cases.list (tests/vm/check.sh), and
# a case's files are in the results of the boot that started it (the first
# boot's names when none did: "no result").
case_files() {
	local outs out n c id at
	mapfile -t outs < <(vm_outs "$1")
	[ "${#outs[@]}" -gt 0 ] && [ -f "${outs[0]}/cases.list" ] || return 0
	n=0
	while IFS=$'\t' read -r _ c; do
		n=$((n + 1))
		id=$(printf %03d "$n")
		at=${outs[0]}
		for out in "${outs[@]}"; do
			[ ! -f "$out/case.$id.start" ] || { at=$out; break; }
		done
		printf '%s\t%s\n' "$at/case.$id" "$c"
	done <"${outs[0]}/cases.list"
}

# Per case (VM cases on each kernel, and the self-test's boots), slowest first.
rows=$logs/cases.tsv
: >"$rows"
for abi in $(kabis_now); do
	while IFS=$'\t' read -r r c; do
		name=${c##*/}
		name=${name%.sh}
		if [ -f "$r.result" ]; then
			printf '%s\t%s\t%s\t%s\n' "$(sed -n 's/^secs=//p' "$r.result")" "$name" "$abi" \
				"$(sed -n 's/^status=//p' "$r.result")" >>"$rows"
		else
			printf '%s\t%s\t%s\t%s\n' "-" "$name" "$abi" "no result" >>"$rows"
		fi
	done < <(case_files "$abi")
	for b in A B C; do
		l=$(sed -n "s/^   (boot $b took \([0-9]*\)s)$/\1/p" "$top/build/vm/$abi/selftest.out" 2>/dev/null)
		[ -z "$l" ] || printf '%s\t%s\t%s\t%s\n' "$l" "selftest boot $b" "$abi" "-" >>"$rows"
	done
	for out in $(vm_outs "$abi"); do
		for f in boot_secs wall_secs; do
			v=$(sed -n "s/^$f=//p" "$out/summary" 2>/dev/null)
			[ -z "$v" ] || printf '%s\t%s\t%s\t%s\n' "$v" "(vm guest $f${out##*/check})" "$abi" "-" >>"$rows"
		done
	done
done
if [ -s "$rows" ]; then
	echo
	printf '%8s  %-28s %-24s %s\n' seconds case kernel status
	sort -t "$(printf '\t')" -k1,1gr "$rows" | while IFS=$'\t' read -r secs name abi status; do
		printf '%8s  %-28s %-24s %s\n' "$secs" "$name" "$abi" "$status"
	done
fi

# What failed, last, where a reader of only the end of the output sees it:
# each failed VM case's reason and the end of its log, and the failure lines
# of any other failed stage.
fails=$(awk -F '\t' '$4 != "PASS" && $4 != "-"' "$rows" 2>/dev/null)
if [ -n "$fails" ] || [ "$total_f" -ne 0 ]; then
	echo
	echo "######## failures"
	for i in "${!st_name[@]}"; do
		[ "${st_rc[$i]}" -ne 0 ] && [ "${st_name[$i]}" != vm ] || continue
		echo "--- stage ${st_name[$i]} (build/check/${st_name[$i]}.log):"
		grep -E 'FAIL|NOT OK|rror' "$logs/${st_name[$i]}.log" | tail -n 15 | cut -c1-300
	done
	for abi in $(kabis_now); do
		while IFS=$'\t' read -r r c; do
			[ "$(sed -n 's/^status=//p' "$r.result" 2>/dev/null)" != PASS ] || continue
			echo "--- ${c##*/} on $abi: $(sed -n 's/^reason=//p' "$r.result" 2>/dev/null) ($r.log):"
			tail -n 20 "$r.log" 2>/dev/null | cut -c1-300
			grep -m 10 -E 'BUG|WARNING|Oops|Call Trace|kmemleak|KASAN|lockdep|hung_task' "$r.dmesg" 2>/dev/null | cut -c1-300
		done < <(case_files "$abi")
		# A guest that oopsed (oops=panic) leaves no case dmesg: the
		# splat is only on its console. Its first line, where it
		# happened and the call trace, so the end of a CI log says.
		for con in $(vm_outs "$abi"); do
			con=$con/console.log
			if grep -qE 'Oops|BUG:|general protection|Kernel panic' "$con" 2>/dev/null; then
				echo "--- oops on the $abi console ($con):"
				sed -n '/Oops\|BUG:\|general protection\|Kernel panic/,$p' "$con" |
					grep -E 'Oops|BUG:|general protection|Kernel panic|RIP:|Call Trace|Tainted|Modules linked|[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/0x' |
					head -n 45 | cut -c1-200
			fi
		done
	done
fi
echo
echo "######## tested kernels: $(kabis_now); total $((t_end - t_all))s (budget ${budget}s)"
[ $((t_end - t_all)) -le "$budget" ] || echo "######## WARNING: make check took longer than the ${budget}s budget"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ] && [ -n "$ok" ]
