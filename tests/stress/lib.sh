# shellcheck shell=bash
# Stress framework for tests/vm/cases/stress_*.sh (source after tests/vm/lib.sh).
#
# An extension contributes a file tests/stress/<ext>.sh that defines
#   <ext>_stress_setup      build what its stressors need (may start floods)
#   <ext>_stress_teardown   remove it again (netns, rules, sets)
# and registers any number of stressors:
#   nfg_stressor NAME FUNC  FUNC runs one iteration, returns non-zero (after
#                           printing why) when something it checks is wrong.
# nfg_stress_run SECS runs every registered stressor in its own process, all at
# once, each repeating FUNC until SECS have passed, then checks that each one
# made progress and finished its last iteration. A stressor that does not
# finish while a task stays in D state for 20 s is reported as deadlocked,
# with the kernel stacks of those tasks (slowness alone is not a failure);
# the case also lowers the hung-task timeout so the kernel reports them.
#
# Leak checks: nfg_slab_bytes prints the bytes held by the kmalloc caches
# after asking every cache to give back its per-CPU slabs, so a baseline
# taken before a run can be compared with the state after it.

NFG_STRESSORS=()
declare -A NFG_STRESS_FN=()

# nfg_stressor NAME FUNC
nfg_stressor() {
	NFG_STRESSORS+=("$1")
	NFG_STRESS_FN[$1]=$2
}

# Lower the hung-task timeout for the rest of the case (restored at exit).
nfg_stress_hung_task() {
	local f=/proc/sys/kernel/hung_task_timeout_secs old
	[ -w $f ] || nfg_fail "no $f"
	read -r old <$f
	echo "$1" >$f || nfg_fail "cannot set $f"
	nfg_on_exit "echo $old >$f"
}

# nfg_stress_run SECS runs every registered stressor in its own process, all at
# once, each repeating FUNC until SECS have passed, then checks that each one
# made progress and finished its last iteration. A stressor that does not
# finish while a task stays in D state for 20 s is reported as deadlocked,
# with the kernel stacks of those tasks (slowness alone is not a failure);
# the case also lowers the hung-task timeout so the kernel reports them.
#
# Leak checks: nfg_slab_bytes prints the bytes held by the kmalloc caches
# after asking every cache to give back its per-CPU slabs, so a baseline
# taken before a run can be compared with the state after it.

NFG_STRESSORS=()
declare -A NFG_STRESS_FN=()

# nfg_stressor NAME FUNC
nfg_stressor() {
	NFG_STRESSORS+=("$1")
	NFG_STRESS_FN[$1]=$2
}

# Lower the hung-task timeout for the rest of the case (restored at exit).
nfg_stress_hung_task() {
	local f=/proc/sys/kernel/hung_task_timeout_secs old
	[ -w $f ] || nfg_fail "no $f"
	read -r old <$f
	echo "$1" >$f || nfg_fail "cannot set $f"
	nfg_on_exit "echo $old >$f"
}

# nfg_stress_once: one iteration of every stressor, one after the other
# (warm-up: loads what the first use loads, before a baseline is taken).
nfg_stress_once() {
	local s
	for s in "${NFG_STRESSORS[@]}"; do
		"${NFG_STRESS_FN[$s]}" >"$NFG_WORK/stress.$s.once" 2>&1 || {
			sed 's/^/    | /' "$NFG_WORK/stress.$s.once" | tail -n 20 >&2
			nfg_fail "stressor $s failed in the warm-up"
		}
	done
}

# nfg_stress_run SECS [STALL_S=20]: run all stressors concurrently for SECS
# (each at least one iteration).
nfg_stress_run() {
	local secs=$1 stall=${2:-20} s end n fails=0 stuck=() p st now
	local -A pids=()
	end=$((${EPOCHREALTIME/./} + secs * 1000000))
	for s in "${NFG_STRESSORS[@]}"; do
		(
			fn=${NFG_STRESS_FN[$s]} n=0
			# at least one iteration, however late this subshell starts
			# (a slow guest may reach here after the end): "made no
			# progress" below then means a stressor that cannot finish one
			while [ $n = 0 ] || [ "${EPOCHREALTIME/./}" -lt $end ]; do
				if ! "$fn" >"$NFG_WORK/stress.$s.iter" 2>&1; then
					{ echo "iteration $((n + 1)):"; cat "$NFG_WORK/stress.$s.iter"; } \
						>"$NFG_WORK/stress.$s.fail"
					exit 1
				fi
				n=$((n + 1))
				echo $n >"$NFG_WORK/stress.$s.count"
			done
			exit 0
		) </dev/null &
		pids[$s]=$!
	done
	# Wait for every stressor to finish its last iteration, however slow
	# the machine; a task that stays in D state (uninterruptible: a kernel
	# lock) for STALL_S is a deadlock: report the stacks and fail.
	nfg_sleep "$secs"
	local -A dsince=() seen=()
	while :; do
		stuck=()
		for s in "${NFG_STRESSORS[@]}"; do
			kill -0 "${pids[$s]}" 2>/dev/null && stuck+=("$s")
		done
		[ ${#stuck[@]} -gt 0 ] || break
		now=${EPOCHSECONDS}
		seen=()
		for p in /proc/[0-9]*; do
			read -r _ _ st _ 2>/dev/null <"$p/stat" || continue
			[ "$st" = D ] || continue
			p=${p#/proc/}
			seen[$p]=1
			: "${dsince[$p]:=$now}"
			[ $((now - dsince[$p])) -lt "$stall" ] && continue
			echo "tasks in D state for ${stall}s or more (stressors left: ${stuck[*]}):" >&2
			for p in "${!dsince[@]}"; do
				[ -r /proc/$p/stack ] || continue
				echo "  $p $(tr '\0' ' ' </proc/$p/cmdline)" >&2
				sed 's/^/    /' /proc/$p/stack >&2
			done
			nfg_fail "stressors deadlocked: ${stuck[*]}"
		done
		for p in "${!dsince[@]}"; do [ -n "${seen[$p]:-}" ] || unset "dsince[$p]"; done
		nfg_sleep 1
	done
	for s in "${NFG_STRESSORS[@]}"; do
		wait "${pids[$s]}" || fails=1
		n=0
		[ -r "$NFG_WORK/stress.$s.count" ] && read -r n <"$NFG_WORK/stress.$s.count"
		if [ -e "$NFG_WORK/stress.$s.fail" ]; then
			sed 's/^/    | /' "$NFG_WORK/stress.$s.fail" | tail -n 20 >&2
			echo "stressor $s failed after $n iterations" >&2
		fi
		nfg_log "stressor $s: $n iterations"
		[ "$n" -ge 1 ] || [ -e "$NFG_WORK/stress.$s.fail" ] || {
			echo "stressor $s made no progress" >&2
			fails=1
		}
	done
	[ $fails = 0 ] || nfg_fail "stress run failed"
}

# nfg_slab_bytes: bytes in use in the kmalloc caches (kmalloc-*, kmalloc-cg-*,
# kmalloc-rcl-*), after shrinking them (per-CPU slabs count as full).
nfg_slab_bytes() {
	local f name active _ size total=0
	for f in /sys/kernel/slab/kmalloc-*/shrink; do
		echo 1 >"$f" 2>/dev/null
	done
	while read -r name active _ size _; do
		[[ $name == kmalloc-* ]] || continue
		total=$((total + active * size))
	done </proc/slabinfo
	echo $total
}

# nfg_slab_settled BASELINE BOUND: true when the kmalloc caches hold at most
# BOUND bytes more than BASELINE (prints the difference to $NFG_WORK/slab.delta).
nfg_slab_settled() {
	local now
	now=$(nfg_slab_bytes)
	echo $((now - $1)) >"$NFG_WORK/slab.delta"
	[ $((now - $1)) -le "$2" ]
}
