#!/bin/bash
# Boot one kernel under QEMU (TCG) with the host root as the guest's root and
# run test cases inside it.
#
# usage: tests/vm/run.sh -k ABI [-t CASE_TIMEOUT] [-T BOOT_TIMEOUT] [-o OUTDIR] [-q QUEUE] [-v] CASE.sh...
#
#   -k ABI           kernel ABI, e.g. 6.12.117+deb12-amd64: build/kernels/ABI/ (unpacked by
#                    tests/deps.sh) or else the host's /boot/vmlinuz-ABI and /lib/modules/ABI
#   -t SECONDS       per-case timeout inside the guest (default 900, env NFG_VM_CASE_TIMEOUT);
#                    a case may set its own with a line "# nfg-case-timeout: N"
#   -T SECONDS       whole-boot timeout enforced on the host; default
#                    300 + the sum over cases of (case timeout + GRACE) (env NFG_VM_BOOT_TIMEOUT)
#   -o DIR           results directory (default build/vm/ABI/out); emptied first
#   -q DIR           queue mode: boots given the same cases and the same (initially empty) DIR
#                    share the work; the guest claims each case (mkdir DIR/NNN, NNN its place
#                    in the list) before running it, and skips those another boot claimed.
#                    This boot reports only the cases it ran; a case nobody claimed is for the
#                    caller to report (check.sh does). If every case is claimed before this
#                    boot gets a QEMU slot, it does not boot at all.
#   -v               copy the guest console to stdout while running
#
# Environment: NFG_VM_GRACE (default 90): seconds beyond CASE_TIMEOUT without
# progress after which the host declares the guest hung and kills QEMU.
# NFG_VM_BOOT_LIMIT (default 300): seconds allowed until the runner starts.
# NFG_VM_LOCK (default /tmp/nfguard-qemu.lock; "none" disables) and NFG_VM_SLOTS
# (default: the number of host CPUs): each QEMU holds one of the lock files
# LOCK.0 .. LOCK.(SLOTS-1), so at most SLOTS guests (one host CPU each: TCG
# thread=single) run at once on this machine. NFG_VM_QEMU_ARGS: extra QEMU arguments.
# NFG_VM_APPEND: extra kernel parameters (e.g. "slub_debug=FZPU init_on_free=1" to
# catch a use-after-free on the stock kernels, which have no KASAN).
# NFG_VM_TRACE=1: xtrace of the guest runner (with uptimes) in OUTDIR/runner.trace.
# NFG_VM_STALL=1 (harness self-test only): the guest stops before starting the
# runner, as a guest that never finishes booting would.
#
# Output: "PASS name (Ns)" / "FAIL name (reason)" per case, then
# "N passed, N failed". Exit 0 only when every case passed. OUTDIR keeps
# console.log, case.NNN.{log,dmesg,result}, boot.dmesg and summary.
set -u

usage() {
	sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
abi='' out='' queue='' verbose=0
case_timeout=${NFG_VM_CASE_TIMEOUT:-900} boot_timeout=${NFG_VM_BOOT_TIMEOUT:-}
grace=${NFG_VM_GRACE:-90}
boot_limit=${NFG_VM_BOOT_LIMIT:-300}
while getopts k:t:T:o:q:vh opt; do
	case $opt in
	k) abi=$OPTARG ;;
	t) case_timeout=$OPTARG ;;
	T) boot_timeout=$OPTARG ;;
	o) out=$OPTARG ;;
	q) queue=$OPTARG ;;
	v) verbose=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
{ [ -n "$abi" ] && [ $# -gt 0 ]; } || usage
case $case_timeout$grace$boot_limit${boot_timeout:-0} in *[!0-9]*) echo "run.sh: timeouts must be integers" >&2; exit 2 ;; esac

# NFG_VM_TIMEOUT_SCALE (default 1): multiplies the cases' own timeouts (a
# debug kernel runs cases several times slower).
scale=${NFG_VM_TIMEOUT_SCALE:-1}
case $scale in '' | *[!0-9]* | 0) echo "run.sh: NFG_VM_TIMEOUT_SCALE must be a positive integer" >&2; exit 2 ;; esac
# case_timeout_of CASE: its "# nfg-case-timeout: N" (first 20 lines) x scale, else -t.
case_timeout_of() {
	local t
	t=$(head -n 20 "$1" 2>/dev/null | sed -n 's/^# nfg-case-timeout: *\([0-9][0-9]*\) *$/\1/p' | head -n 1)
	if [ -n "$t" ]; then echo $((t * scale)); else echo "$case_timeout"; fi
}

die() { echo "run.sh: $*" >&2; exit 2; }

# Kernel image and modules: unpacked under build/kernels/ABI by tests/deps.sh
# (the host's /boot is never touched), else an installed linux-image-ABI.
# (A debug kernel may be a symlink there: the guest needs the real path.)
kroot=$(realpath -q "$top/build/kernels/$abi")
[ -n "$kroot" ] && [ -r "$kroot/boot/vmlinuz-$abi" ] || kroot=
kernel=$kroot/boot/vmlinuz-$abi
[ -r "$kernel" ] || die "no kernel $kernel (run tests/deps.sh)"
[ -d "$kroot/lib/modules/$abi/kernel" ] || die "no $kroot/lib/modules/$abi (run tests/deps.sh)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed"
# The guest mounts the kernel's modules over this (read-only) directory.
[ -z "$kroot" ] || [ -d /lib/modules ] || die "no /lib/modules on this host (run tests/deps.sh)"
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then busybox=$b; break; fi
done
[ -n "$busybox" ] || die "no static busybox (install busybox-static)"

cases=()
for c in "$@"; do
	[ -f "$c" ] || die "no such case: $c"
	c=$(cd "$(dirname "$c")" && pwd)/$(basename "$c")
	# The guest sees the host root, but with its own tmpfs on these.
	case $c in
	"$top"/*) ;;
	/tmp/* | /run/* | /var/tmp/* | /dev/* | /proc/* | /sys/*)
		die "case $c is not visible in the guest (tmpfs there); put it under $top or another path" ;;
	esac
	cases+=("$c")
done

if [ -z "$boot_timeout" ]; then
	boot_timeout=300
	for c in "${cases[@]}"; do boot_timeout=$((boot_timeout + $(case_timeout_of "$c") + grace)); done
fi

vmdir=$top/build/vm/$abi
mkdir -p "$vmdir" || die "cannot create $vmdir"

# ---------------------------------------------------------------- initramfs
# Cached under build/vm/ABI/; rebuilt when busybox, the /init script or any of
# the virtio/9p modules changes.
build_initramfs() {
	local mods=() line p key stage m dst
	while read -r line; do
		case $line in
		insmod\ *)
			p=${line#insmod }
			p=${p%% *}
			case " ${mods[*]} " in *" $p "*) ;; *) mods+=("$p") ;; esac
			;;
		esac
	done < <(modprobe ${kroot:+-d "$kroot"} -S "$abi" -a --show-depends virtio_pci 9pnet_virtio 9p 2>/dev/null)
	# Builtin modules show as "builtin NAME"; 9p itself must be available somehow.
	if [ ${#mods[@]} -eq 0 ] && ! grep -q '/9p.ko' "$kroot/lib/modules/$abi/modules.builtin" 2>/dev/null; then
		die "modprobe -S $abi found no 9p modules (depmod not run?)"
	fi
	key=$({
		echo "v1 $abi"
		sha256sum "$busybox" "$here/initramfs-init.sh" "${mods[@]}"
	} | sha256sum | cut -d' ' -f1)
	initramfs=$vmdir/initramfs.cpio
	if [ -f "$initramfs" ] && [ "$(cat "$vmdir/initramfs.key" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	echo "run.sh: building $initramfs (${#mods[@]} modules)"
	stage=$(mktemp -d "$vmdir/initramfs.XXXXXX") || die "mktemp"
	mkdir -p "$stage/bin" "$stage/lib/modules" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/newroot"
	cp "$busybox" "$stage/bin/busybox"
	for m in $("$busybox" --list); do
		[ "$m" = busybox ] || ln -s busybox "$stage/bin/$m"
	done
	: >"$stage/modules.list"
	for m in "${mods[@]}"; do
		dst=$(basename "$m")
		case $m in
		*.ko.xz) dst=${dst%.xz}; xz -dc "$m" >"$stage/lib/modules/$dst" ;;
		*.ko.zst) dst=${dst%.zst}; zstd -qdc "$m" >"$stage/lib/modules/$dst" ;;
		*.ko.gz) dst=${dst%.gz}; gzip -dc "$m" >"$stage/lib/modules/$dst" ;;
		*) cp "$m" "$stage/lib/modules/$dst" ;;
		esac || die "cannot unpack $m"
		echo "$dst" >>"$stage/modules.list"
	done
	install -m 755 "$here/initramfs-init.sh" "$stage/init"
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
		>"$stage.cpio" || die "cpio failed"
	mv "$stage.cpio" "$initramfs"
	echo "$key" >"$vmdir/initramfs.key"
	rm -rf "$stage"
}
build_initramfs

# ---------------------------------------------------------------- results dir
[ -n "$out" ] || out=$vmdir/out
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then
	[ -f "$out/.nfg-vm-out" ] || die "$out exists, is not empty and is not a run.sh results dir"
	rm -rf "${out:?}"/* "$out"/.nfg-vm-out
fi
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
: >"$out/.nfg-vm-out"
if [ -n "$queue" ]; then
	[ -d "$queue" ] || die "no queue directory $queue"
	queue=$(cd "$queue" && pwd)
	case $queue/ in "$out"/*) die "the queue directory must not be inside OUTDIR" ;; esac
fi
# all_claimed: queue mode, and every case claimed by some boot already.
all_claimed() {
	local i
	[ -n "$queue" ] || return 1
	for ((i = 1; i <= ${#cases[@]}; i++)); do
		[ -d "$queue/$(printf %03d "$i")" ] || return 1
	done
}
xtsys=$(pkg-config --variable=xtlibdir xtables 2>/dev/null)
[ -n "$xtsys" ] || xtsys=/usr/lib/x86_64-linux-gnu/xtables
{
	# The guest runs a snapshot: edits to the tree cannot disturb a running guest.
	echo "NFG_RUNNER=/run/nfg-vm/guest-runner.sh"
	echo "NFG_TOP=$top"
	echo "NFG_KABI=$abi"
	echo "NFG_KROOT=$kroot"
	echo "NFG_CASE_TIMEOUT=$case_timeout"
	echo "NFG_XTABLES_SYSDIR=$xtsys"
	echo "NFG_TRACE=${NFG_VM_TRACE:-0}"
	echo "NFG_STALL=${NFG_VM_STALL:-0}"
	echo "NFG_QUEUE=$([ -n "$queue" ] && echo 1 || echo 0)"
} >"$out/guest.env"
# One line per case: its timeout in seconds (own line x scale, else -t), a
# tab, its path. The runner takes both from here: one parser of the line.
for c in "${cases[@]}"; do printf '%s\t%s\n' "$(case_timeout_of "$c")" "$c"; done >"$out/cases.list"
cp "$here/guest-runner.sh" "$out/guest-runner.sh" || die "cannot copy the guest runner"
console=$out/console.log
: >"$console"

# ---------------------------------------------------------------- boot
lockbase=${NFG_VM_LOCK:-/tmp/nfguard-qemu.lock}
if [ "$lockbase" != none ]; then
	slots=${NFG_VM_SLOTS:-$(nproc)}
	case $slots in '' | *[!0-9]* | 0) die "NFG_VM_SLOTS must be a positive integer" ;; esac
	slot= waited=
	while [ -z "$slot" ]; do
		all_claimed && break
		for ((i = 0; i < slots; i++)); do
			exec 9>"$lockbase.$i" || die "cannot open lock file $lockbase.$i"
			if flock -n 9; then slot=$i; break; fi
			exec 9>&-
		done
		if [ -z "$slot" ]; then
			[ -n "$waited" ] || echo "run.sh: waiting for one of $slots QEMU slots (locks $lockbase.*)"
			waited=1
			sleep 1
		fi
	done
fi

# Queue mode: the other boots took every case while this one waited.
if all_claimed; then
	[ -z "$slot" ] || exec 9>&-
	echo "run.sh: $abi: every case was claimed by other boots (queue $queue): not booting"
	printf 'passed=0\nfailed=0\nboot_secs=\nwall_secs=0\n' >"$out/summary"
	echo "0 passed, 0 failed"
	exit 0
fi

cmdline="console=ttyS0,115200 panic=-1 oops=panic rdinit=/init log_buf_len=8M"
cmdline+=" mitigations=off random.trust_cpu=on 8250.nr_uarts=1 i8042.noaux i8042.nokbd"
cmdline+="${NFG_VM_APPEND:+ $NFG_VM_APPEND}"
# shellcheck disable=SC2206
extra=(${NFG_VM_QEMU_ARGS:-})
qargs=()
[ -z "$queue" ] || qargs=(-virtfs "local,path=$queue,mount_tag=queue,security_model=none,multidevs=remap")
# shellcheck disable=SC2054 # commas belong to QEMU option values
qemu=(qemu-system-x86_64 -nodefaults -no-user-config -no-reboot
	-machine pc -accel tcg,thread=single -cpu max -smp 2 -m 1024
	-display none -monitor none -serial "file:$console"
	-kernel "$kernel" -initrd "$initramfs" -append "$cmdline"
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
	-virtfs "local,path=$out,mount_tag=results,security_model=none,multidevs=remap"
	"${qargs[@]}" "${extra[@]}")
printf '%q ' "${qemu[@]}" >"$out/qemu.cmd"
echo >>"$out/qemu.cmd"

echo "run.sh: booting $abi with ${#cases[@]} case(s) (case timeout ${case_timeout}s, boot timeout ${boot_timeout}s), results in $out"
t_start=$(date +%s)
"${qemu[@]}" </dev/null >"$out/qemu.out" 2>&1 &
qpid=$!
tailpid=
if [ "$verbose" = 1 ]; then
	tail -n +1 -f --pid="$qpid" "$console" &
	tailpid=$!
fi

killed=  # why the host killed QEMU, if it did
passed=0 failed=0 reported=0 boot_secs='' elsewhere=0 started=0
last_progress=$t_start progress_sig=
report() { # $1 = index (1-based) of the case whose result file exists
	local id st secs reason f
	id=$(printf %03d "$1")
	f=$out/case.$id.result
	st=$(sed -n 's/^status=//p' "$f")
	secs=$(sed -n 's/^secs=//p' "$f")
	reason=$(sed -n 's/^reason=//p' "$f")
	if [ "$st" = PASS ]; then
		echo "PASS $(basename "${cases[$1 - 1]}" .sh) (${secs}s)"
		passed=$((passed + 1))
	else
		echo "FAIL $(basename "${cases[$1 - 1]}" .sh) ($reason; log $out/case.$id.log)"
		failed=$((failed + 1))
		# CI keeps only stdout: show why, not just where.
		tail -n "${NFG_VM_FAIL_TAIL:-25}" "$out/case.$id.log" 2>/dev/null | sed 's/^/    | /'
		if [ -s "$out/case.$id.dmesg" ]; then
			echo "    | -- kernel log of the case (tail):"
			tail -n 15 "$out/case.$id.dmesg" | sed 's/^/    | /'
		fi
	fi
}
# started: the highest NNN with a case.NNN.start (the runner starts cases in
# list order; in queue mode it skips those other boots claimed).
highest_start() {
	local f n
	started=0
	for f in "$out"/case.*.start; do
		[ -e "$f" ] || continue
		n=${f##*/case.}
		n=$((10#${n%.start}))
		[ "$n" -le "$started" ] || started=$n
	done
}
# Report, in list order, every case decided so far: its result is here, or
# (queue mode) this boot did not run it: it has no start file while a later
# case has one, or the runner is done.
advance() {
	local id
	[ -z "$queue" ] || highest_start
	while [ "$reported" -lt ${#cases[@]} ]; do
		id=$(printf %03d $((reported + 1)))
		if [ -f "$out/case.$id.result" ]; then
			reported=$((reported + 1))
			report "$reported"
		elif [ -n "$queue" ] && [ ! -f "$out/case.$id.start" ] &&
			{ [ "$started" -gt $((reported + 1)) ] || [ -f "$out/done" ]; }; then
			reported=$((reported + 1))
			elsewhere=$((elsewhere + 1))
		else
			break
		fi
	done
}
# The timeout of the case running now (its own "# nfg-case-timeout: N" line,
# which the runner writes into case.NNN.start), else CASE_TIMEOUT. After
# advance(), the running case is the next one to report.
running_case_timeout() {
	local id t
	id=$(printf %03d $((reported + 1)))
	t=$(sed -n 's/^timeout=//p' "$out/case.$id.start" 2>/dev/null)
	case $t in '' | *[!0-9]*) echo "$case_timeout" ;; *) echo "$t" ;; esac
}
while kill -0 "$qpid" 2>/dev/null; do
	sleep 0.5
	now=$(date +%s)
	advance
	if [ -z "$boot_secs" ] && [ -f "$out/runner.started" ]; then
		boot_secs=$((now - t_start))
	fi
	sig=$(find "$out" -maxdepth 1 \( -name runner.started -o -name 'case.*.start' -o -name 'case.*.result' \) | wc -l)
	if [ "$sig" != "$progress_sig" ]; then
		progress_sig=$sig last_progress=$now
	fi
	if [ $((now - t_start)) -ge "$boot_timeout" ]; then
		killed="boot timeout (${boot_timeout}s) reached"
	elif [ -z "$boot_secs" ] && [ $((now - t_start)) -ge "$boot_limit" ]; then
		killed="guest did not start the runner within ${boot_limit}s"
	elif [ -n "$boot_secs" ] && [ $((now - last_progress)) -ge $(($(running_case_timeout) + grace)) ]; then
		killed="guest hung: no progress for $((now - last_progress))s"
	fi
	if [ -n "$killed" ]; then
		kill -TERM "$qpid" 2>/dev/null
		sleep 2
		kill -KILL "$qpid" 2>/dev/null
		break
	fi
done
wait "$qpid" 2>/dev/null
qrc=$?
[ -z "$tailpid" ] || { sleep 0.2; kill "$tailpid" 2>/dev/null; wait "$tailpid" 2>/dev/null; }
t_end=$(date +%s)
advance

# A guest that oopsed or panicked: its whole console is copied where the
# next run does not wipe it ($vmdir/panics/, OUTDIR is emptied per run), and
# the report shows the splat from its first line to the end of its trace
# (RIP, CR2, call trace, "Kernel panic"), not only the console's tail.
keep_panic_console() {
	local start first from kept
	# after the interrupted case started (earlier cases' splats did not crash)
	start=$(grep -an -m 1 "NFG-CASE-START $(printf %03d $((reported + 1))) " "$console" | cut -d: -f1)
	first=$(tail -n +"${start:-1}" "$console" |
		grep -anE -m 1 'Kernel panic|Oops|BUG:|general protection|Fatal exception' | cut -d: -f1)
	[ -n "$first" ] || return 0
	first=$((first + ${start:-1} - 1))
	mkdir -p "$vmdir/panics" || return 0
	kept=$vmdir/panics/$(date -u +%Y%m%dT%H%M%SZ)-$(basename "${cases[$reported]:-boot}" .sh).console.log
	cp "$console" "$kept" && echo "run.sh: whole console of the crashed guest kept in $kept"
	# from a few lines before the first splat line to the end of the panic
	echo "run.sh: the crash on the console:"
	from=$((first - 5 > ${start:-1} ? first - 5 : ${start:-1}))
	sed -n "$from,\$p" "$console" | tr -d '\r' |
		sed -n '1,/end Kernel panic/p' | head -n "${NFG_VM_CRASH_LINES:-120}" |
		sed 's/^/  ! /'
}

# Cases without a result: the guest hung, crashed or never came up. In
# queue mode only those this boot started are its failures: the others are
# another boot's (claimed) or still in the queue for the other boots (the
# caller reports a case no boot ran).
unclaimed=0 pending=0
for ((i = reported + 1; i <= ${#cases[@]}; i++)); do
	id=$(printf %03d "$i")
	if [ -z "$queue" ] || [ -f "$out/case.$id.start" ]; then
		pending=$((pending + 1))
	elif [ -d "$queue/$id" ]; then
		elsewhere=$((elsewhere + 1))
	else
		unclaimed=$((unclaimed + 1))
	fi
done
# (queue mode: a guest that died before it claimed anything fails as a boot)
if [ "$pending" -eq 0 ] && [ -n "$queue" ] && [ ! -f "$out/done" ]; then
	pending=-1
fi
if [ "$pending" -ne 0 ]; then
	if [ -n "$killed" ]; then
		why="$killed, QEMU killed"
	elif [ ! -f "$out/runner.started" ]; then
		why="guest died before the runner started (qemu exit $qrc)"
	else
		why="guest died (qemu exit $qrc)"
	fi
	# First splat line on the console after the interrupted case started.
	id=$(printf %03d $((reported + 1)))
	splat=$(sed -n "/NFG-CASE-START $id /,\$p" "$console" |
		grep -aE -m 1 'Kernel panic|Oops|BUG:|WARNING:|general protection|sysrq: Trigger a crash' |
		sed 's/^\[[ 0-9.]*\] *//' | tr -d '\r' | cut -c1-160)
	for ((i = reported + 1; i <= ${#cases[@]}; i++)); do
		id=$(printf %03d "$i")
		[ -z "$queue" ] || [ -f "$out/case.$id.start" ] || continue
		name=$(basename "${cases[$i - 1]}" .sh)
		# A whole-boot timeout is one verdict for every unfinished case,
		# worded the same whether or not the case had started.
		if [[ $killed == "boot timeout"* ]]; then
			if [ -f "$out/case.$id.start" ]; then
				echo "FAIL $name ($why${splat:+; console: $splat}; log $out/case.$id.log)"
			else
				echo "FAIL $name ($why)"
			fi
		elif [ -f "$out/case.$id.start" ]; then
			echo "FAIL $name ($why${splat:+; console: $splat}; log $out/case.$id.log)"
		else
			echo "FAIL $name (not run: $why)"
		fi
		failed=$((failed + 1))
	done
	if [ "$pending" -lt 0 ]; then
		echo "FAIL (boot) ($why, before it claimed a case)"
		failed=$((failed + 1))
	fi
	echo "run.sh: console log $console (last 25 lines):"
	tail -n 25 "$console" | tr -d '\r' | sed 's/^/  | /'
	keep_panic_console
elif [ ! -f "$out/done" ]; then
	echo "run.sh: warning: runner did not finish cleanly; console log $console"
fi
[ -z "$queue" ] || [ "$unclaimed" -eq 0 ] ||
	echo "run.sh: $unclaimed case(s) left unclaimed in $queue (not run by this boot)"

printf 'passed=%s\nfailed=%s\nboot_secs=%s\nwall_secs=%s\n' "$passed" "$failed" "${boot_secs:-}" "$((t_end - t_start))" >"$out/summary"
echo "run.sh: $abi: boot ${boot_secs:-?}s, wall $((t_end - t_start))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
