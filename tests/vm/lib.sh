# shellcheck shell=bash
# Case library for tests/vm/cases/*.sh (bash). Source it first:
#
#   . "$NFG_TOP/tests/vm/lib.sh"
#
# A case passes when it exits 0 and the kernel logged no splat while it ran.
# Every assertion prints what failed (with the case line) and exits 1; there is
# no "skip": a missing tool or module is a failure. An EXIT trap installed here
# kills background helpers, closes held connections and removes the topology;
# add more with nfg_on_exit.
#
# Topology made by nfg_topo_up (netns names in $NFG_NS_C $NFG_NS_R $NFG_NS_S):
#
#   client eth0 ---- eth0 router eth1 ---- eth0 server
#   10.0.1.2/24  10.0.1.1/24    10.0.2.1/24  10.0.2.2/24
#   fd00:1::2/64 fd00:1::1/64   fd00:2::1/64 fd00:2::2/64
#
#   $NFG_C4 $NFG_RC4 $NFG_RS4 $NFG_S4 and $NFG_C6 $NFG_RC6 $NFG_RS6 $NFG_S6

[ -n "${BASH_VERSION:-}" ] || { echo "lib.sh needs bash" >&2; exit 1; }
[ -n "${NFG_LIB_LOADED:-}" ] && return 0
NFG_LIB_LOADED=1

: "${NFG_TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${NFG_KABI:=$(uname -r)}"
: "${NFG_KMOD_DIR:=$NFG_TOP/build/kernel/$NFG_KABI}"
: "${NFG_CASE:=$(basename "$0" .sh)}"
: "${NFG_NS_C:=nfg-client}" "${NFG_NS_R:=nfg-router}" "${NFG_NS_S:=nfg-server}"
NFG_C4=10.0.1.2 NFG_RC4=10.0.1.1 NFG_RS4=10.0.2.1 NFG_S4=10.0.2.2
NFG_C6=fd00:1::2 NFG_RC6=fd00:1::1 NFG_RS6=fd00:2::1 NFG_S6=fd00:2::2
NFG_WORK=$(mktemp -d "${TMPDIR:-/tmp}/nfg-$NFG_CASE.XXXXXX")
mkfifo "$NFG_WORK/nap.fifo"
export NFG_TOP NFG_KABI NFG_KMOD_DIR NFG_CASE
NFG_BG_PIDS=()
NFG_EXIT_HOOKS=()
declare -A NFG_CONN_FD=() NFG_CONN_PID=() NFG_CONN_OUT=() NFG_CONN_N=()
NFG_CONN_SEQ=0

# ------------------------------------------------------------------ messages

# nfg_log MSG...: progress message on stdout, prefixed with the case name.
nfg_log() { echo "[$NFG_CASE +${SECONDS}s] $*"; }

# nfg_fail MSG...: print "FAIL: MSG (file:line)" on stderr and exit 1.
nfg_fail() {
	local i=0 where=
	while [ "${FUNCNAME[$i]:-}" ] && [[ ${FUNCNAME[$i]} == nfg_* ]]; do i=$((i + 1)); done
	[ $i -gt 0 ] && where=" (${BASH_SOURCE[$i]##*/}:${BASH_LINENO[$((i - 1))]})"
	echo "[$NFG_CASE +${SECONDS}s] FAIL: $*$where" >&2
	exit 1
}

# nfg_need CMD...: fail unless every command is installed.
nfg_need() {
	local c
	for c; do command -v "$c" >/dev/null 2>&1 || nfg_fail "required command '$c' not installed"; done
}

# ------------------------------------------------------------------ assertions

# nfg_assert_eq EXPECTED ACTUAL [WHAT]
nfg_assert_eq() { [ "$1" = "$2" ] || nfg_fail "${3:-value}: expected '$1', got '$2'"; }
# nfg_assert_ne UNEXPECTED ACTUAL [WHAT]
nfg_assert_ne() { [ "$1" != "$2" ] || nfg_fail "${3:-value}: must not be '$1'"; }
# nfg_assert_ge ACTUAL MIN [WHAT]   (integers)
nfg_assert_ge() { [ "$1" -ge "$2" ] 2>/dev/null || nfg_fail "${3:-value}: expected >= $2, got '$1'"; }
# nfg_assert_le ACTUAL MAX [WHAT]   (integers)
nfg_assert_le() { [ "$1" -le "$2" ] 2>/dev/null || nfg_fail "${3:-value}: expected <= $2, got '$1'"; }
# nfg_assert_match ERE STRING [WHAT]
nfg_assert_match() { printf '%s\n' "$2" | grep -qE -- "$1" || nfg_fail "${3:-value}: '$2' does not match /$1/"; }
# nfg_assert_ok WHAT CMD...: CMD must succeed; its output is shown on failure
# and kept in $NFG_WORK/assert.out. (Do not call assertions inside $(...):
# exit would only leave the subshell.)
nfg_assert_ok() {
	local what=$1 outf=$NFG_WORK/assert.out rc
	shift
	"$@" >"$outf" 2>&1 || {
		rc=$?
		sed 's/^/    | /' "$outf" >&2
		nfg_fail "$what: command failed (exit $rc): $*"
	}
}
# nfg_assert_fail WHAT CMD...: CMD must fail.
nfg_assert_fail() {
	local what=$1 outf=$NFG_WORK/assert.out
	shift
	if "$@" >"$outf" 2>&1; then
		sed 's/^/    | /' "$outf" >&2
		nfg_fail "$what: command succeeded but must fail: $*"
	fi
	return 0
}
# nfg_expect_exit CODE PATTERN CMD...: CMD exits with status CODE and its
# standard error matches the extended regexp PATTERN (the CLI's documented
# exit codes and messages).
nfg_expect_exit() {
	local code=$1 pat=$2 out rc=0
	shift 2
	out=$("$@" 2>&1 >/dev/null) || rc=$?
	nfg_assert_eq "$code" "$rc" "exit status of: $*"
	nfg_assert_match "$pat" "$out" "message of: $*"
}

# nfg_wait_until TIMEOUT_S CMD...: poll CMD every 0.1 s until it succeeds;
# returns 1 on timeout. For things that must happen: the deadline is only a
# backstop, and never shorter than NFG_WAIT_FLOOR (60 s), so a slow or busy
# machine cannot turn a late event into a failure. (To show that something
# does NOT happen, don't wait: check once after the event that would cause it.)
NFG_WAIT_FLOOR=60
nfg_wait_until() {
	local t=$1
	[ "$t" -ge "$NFG_WAIT_FLOOR" ] 2>/dev/null || t=$NFG_WAIT_FLOOR
	shift
	nfg__wait_exact "$t" "$@"
}
# nfg__wait_exact TIMEOUT_S CMD...: the same without the floor (internal).
nfg__wait_exact() {
	local end=$((${EPOCHREALTIME/./} + $1 * 1000000))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || return 1
		nfg_sleep 0.1
	done
	return 0
}

# nfg_sleep SECONDS: sleep without starting a process (fractions allowed).
nfg_sleep() { read -r -t "$1" <>"$NFG_WORK/nap.fifo"; return 0; }

# ------------------------------------------------------------------ netns

# nfg_in NS CMD...: run CMD inside network namespace NS.
nfg_in() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}
# nfg_client / nfg_router / nfg_server CMD...: shorthands for nfg_in.
nfg_client() { nfg_in "$NFG_NS_C" "$@"; }
nfg_router() { nfg_in "$NFG_NS_R" "$@"; }
nfg_server() { nfg_in "$NFG_NS_S" "$@"; }

# nfg_topo_up: create client -- router -- server (see top of file), IPv4 and
# IPv6 forwarding on the router, default routes on the ends, then check that
# client and server reach each other over both families. (Few processes:
# each exec costs ~0.1 s under TCG.)
nfg_topo_up() {
	nfg_need ip ping sysctl
	ip -batch - <<-EOF || nfg_fail "topology: cannot create netns/veth"
		netns add $NFG_NS_C
		netns add $NFG_NS_R
		netns add $NFG_NS_S
		link add eth0 netns $NFG_NS_C type veth peer name eth0 netns $NFG_NS_R
		link add eth1 netns $NFG_NS_R type veth peer name eth0 netns $NFG_NS_S
	EOF
	ip -n "$NFG_NS_C" -batch - <<-EOF || nfg_fail "topology: client setup"
		link set lo up
		addr add $NFG_C4/24 dev eth0
		addr add $NFG_C6/64 dev eth0 nodad
		link set eth0 up
		route add default via $NFG_RC4
		route add ::/0 via $NFG_RC6
	EOF
	ip -n "$NFG_NS_R" -batch - <<-EOF || nfg_fail "topology: router setup"
		link set lo up
		addr add $NFG_RC4/24 dev eth0
		addr add $NFG_RC6/64 dev eth0 nodad
		addr add $NFG_RS4/24 dev eth1
		addr add $NFG_RS6/64 dev eth1 nodad
		link set eth0 up
		link set eth1 up
	EOF
	ip -n "$NFG_NS_S" -batch - <<-EOF || nfg_fail "topology: server setup"
		link set lo up
		addr add $NFG_S4/24 dev eth0
		addr add $NFG_S6/64 dev eth0 nodad
		link set eth0 up
		route add default via $NFG_RS4
		route add ::/0 via $NFG_RS6
	EOF
	nfg_router sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 >/dev/null ||
		nfg_fail "topology: enable forwarding on the router"
	nfg_wait_until 60 nfg_client ping -c 1 -W 1 "$NFG_S4" || nfg_fail "topology: client cannot ping $NFG_S4"
	nfg_wait_until 60 nfg_client ping -6 -c 1 -W 1 "$NFG_S6" || nfg_fail "topology: client cannot ping $NFG_S6"
}

# nfg_topo_down: kill every process left in the three namespaces and delete them.
nfg_topo_down() {
	local ns pids del=
	for ns in "$NFG_NS_C" "$NFG_NS_R" "$NFG_NS_S"; do
		[ -e "/run/netns/$ns" ] || continue
		pids=$(ip netns pids "$ns" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
		del+="netns del $ns"$'\n'
	done
	[ -z "$del" ] || printf '%s' "$del" | ip -batch - 2>/dev/null
	return 0
}

# ------------------------------------------------------------------ background helpers

# nfg_bg NS CMD...: start CMD in NS in the background (output in
# $NFG_WORK/bg.PID.log); sets NFG_LAST_PID; killed at exit.
nfg_bg() {
	local ns=$1
	shift
	(
		nfg__close_conn_fds
		exec ip netns exec "$ns" "$@"
	) </dev/null >"$NFG_WORK/bg.tmp.log" 2>&1 &
	NFG_LAST_PID=$!
	mv "$NFG_WORK/bg.tmp.log" "$NFG_WORK/bg.$NFG_LAST_PID.log" 2>/dev/null
	NFG_BG_PIDS+=("$NFG_LAST_PID")
}

# nfg_port_listening NS PORT [tcp|udp]: is something listening on PORT in NS?
nfg_port_listening() {
	local opt=-Hltn
	[ "${3:-tcp}" = udp ] && opt=-Hlun
	[ -n "$(ip netns exec "$1" ss $opt "sport = :$2" 2>/dev/null)" ]
}

# nfg_wait_port NS PORT [tcp|udp] [TIMEOUT_S=120] [PID]: wait until PORT
# listens in NS. With PID (the server), fail at once if it exits first. The
# deadline is only a backstop for a server that hangs: a python server under
# TCG on a loaded machine can take tens of seconds to start.
nfg_wait_port() {
	local end=$((${EPOCHREALTIME/./} + ${4:-120} * 1000000))
	until nfg_port_listening "$1" "$2" "${3:-tcp}"; do
		if [ -n "${5:-}" ] && ! kill -0 "$5" 2>/dev/null; then
			sed 's/^/    | /' "$NFG_WORK/bg.$5.log" >&2 2>/dev/null
			nfg_fail "the server for ${3:-tcp} port $2 in $1 exited before listening"
		fi
		[ "${EPOCHREALTIME/./}" -lt "$end" ] ||
			nfg_fail "nothing listens on ${3:-tcp} port $2 in $1 after ${4:-120}s"
		nfg_sleep 0.1
	done
}

# nfg_http_server NS PORT DIR: serve DIR over HTTP on PORT (IPv4 and IPv6) in NS.
nfg_http_server() {
	nfg_need python3
	nfg_bg "$1" python3 -m http.server --bind :: --directory "$3" "$2"
	nfg_wait_port "$1" "$2" tcp 300 "$NFG_LAST_PID"
}

# nfg_echo_server NS PORT: TCP echo server (IPv4 and IPv6, one child per
# connection) on PORT in NS.
nfg_echo_server() {
	nfg_need socat
	nfg_bg "$1" socat "TCP6-LISTEN:$2,ipv6-v6only=0,reuseaddr,fork,backlog=64" PIPE
	nfg_wait_port "$1" "$2" tcp 300 "$NFG_LAST_PID"
}

# ------------------------------------------------------------------ held TCP connections

# nfg_conn_open ID NS ADDR PORT [TIMEOUT_S=30]: open a long-lived TCP connection
# from NS to ADDR:PORT (an echo server) and prove it carries bytes both ways.
# Returns 1 (and forgets ID) if it cannot connect or nothing echoes back.
# The default timeout is generous (a connection that works returns at once);
# pass a short one where the connection must NOT be made (a dropped SYN).
nfg_conn_open() {
	local id=$1 ns=$2 addr=$3 port=$4 to=${5:-30} fd pid target fifo
	[ -z "${NFG_CONN_PID[$id]:-}" ] || nfg_fail "connection $id already open"
	nfg_need socat
	if [[ $addr == *:* ]]; then target="TCP6:[$addr]:$port"; else target="TCP4:$addr:$port"; fi
	NFG_CONN_SEQ=$((NFG_CONN_SEQ + 1))
	fifo=$NFG_WORK/conn.$NFG_CONN_SEQ.in
	mkfifo "$fifo"
	exec {fd}<>"$fifo"
	NFG_CONN_OUT[$id]=$NFG_WORK/conn.$NFG_CONN_SEQ.out
	: >"${NFG_CONN_OUT[$id]}" # exists before the child opens it: nfg_conn_send reads it at once
	# The child must not hold any connection's FIFO open for writing (its
	# own included), or closing a connection would never reach its socat.
	(
		nfg__close_conn_fds "$fd"
		exec ip netns exec "$ns" socat -b 65536 STDIO "$target,connect-timeout=$to"
	) <"$fifo" >"${NFG_CONN_OUT[$id]}" 2>"$NFG_WORK/conn.$NFG_CONN_SEQ.err" &
	pid=$!
	NFG_CONN_FD[$id]=$fd NFG_CONN_PID[$id]=$pid NFG_CONN_N[$id]=0
	if ! nfg_conn_send "$id" "hello from $id" "$to"; then
		nfg_conn_close "$id"
		return 1
	fi
}

# nfg__close_conn_fds [FD...]: in a child, close the FIFO write ends of all
# held connections (and the given fds).
nfg__close_conn_fds() {
	local f
	for f in "${NFG_CONN_FD[@]}" "$@"; do exec {f}>&-; done
}

# nfg_conn_send ID TEXT [TIMEOUT_S=30]: send one line over connection ID and
# wait for its echo. Returns 1 as soon as the connection is gone, or when
# nothing came back in time.
nfg_conn_send() {
	local id=$1 text=$2 to=${3:-30} fd=${NFG_CONN_FD[$1]:-} n end alive line
	[ -n "$fd" ] || nfg_fail "connection $id is not open"
	n=$((NFG_CONN_N[$id] + 1))
	NFG_CONN_N[$id]=$n
	text="$text #$n"
	kill -0 "${NFG_CONN_PID[$id]}" 2>/dev/null || return 1
	printf '%s\n' "$text" >&"$fd" || return 1
	end=$((${EPOCHREALTIME/./} + to * 1000000))
	while :; do
		alive=0
		kill -0 "${NFG_CONN_PID[$id]}" 2>/dev/null && alive=1
		while IFS= read -r line; do
			[ "$line" != "$text" ] || return 0
		done <"${NFG_CONN_OUT[$id]}"
		[ $alive = 1 ] && [ "${EPOCHREALTIME/./}" -lt $end ] || return 1
		nfg_sleep 0.05
	done
}

# nfg_conn_alive ID: is the socat of connection ID still running?
nfg_conn_alive() { [ -n "${NFG_CONN_PID[$1]:-}" ] && kill -0 "${NFG_CONN_PID[$1]}" 2>/dev/null; }

# nfg_conn_close ID: close connection ID (FIN from the client) and reap it.
nfg_conn_close() {
	local id=$1 fd=${NFG_CONN_FD[$1]:-} pid=${NFG_CONN_PID[$1]:-}
	[ -n "$pid" ] || return 0
	exec {fd}>&-
	nfg__wait_exact 5 eval "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset "NFG_CONN_FD[$id]" "NFG_CONN_PID[$id]" "NFG_CONN_OUT[$id]" "NFG_CONN_N[$id]"
	return 0
}

# ------------------------------------------------------------------ iptables

# nfg_ipt NS legacy|nft 4|6 ARGS...: run iptables/ip6tables (-legacy or -nft)
# in NS, e.g. nfg_ipt "$NFG_NS_R" nft 6 -A FORWARD -j DROP.
nfg_ipt() {
	local ns=$1 v=$2 fam=$3 bin
	shift 3
	case $fam in 4) bin=iptables ;; 6) bin=ip6tables ;; *) nfg_fail "nfg_ipt: family '$fam'" ;; esac
	case $v in legacy | nft) ;; *) nfg_fail "nfg_ipt: variant '$v'" ;; esac
	ip netns exec "$ns" "$bin-$v" -w "$@"
}

# nfg_ipt_pkts NS legacy|nft 4|6 TAG: packet counter of the rule carrying
# "-m comment --comment TAG" (from iptables-save -c).
nfg_ipt_pkts() {
	local ns=$1 v=$2 fam=$3 tag=$4 bin line
	case $fam in 4) bin=iptables ;; 6) bin=ip6tables ;; esac
	while IFS= read -r line; do
		if [[ $line == \[*" --comment $tag "* || $line == \[*" --comment \"$tag\" "* ]]; then
			line=${line#[}
			echo "${line%%:*}"
			return 0
		fi
	done < <(ip netns exec "$ns" "$bin-$v-save" -c 2>/dev/null)
}

# ------------------------------------------------------------------ our kernel modules

nfg__mod_name() { local n=${1##*/}; n=${n%.ko}; echo "${n//-/_}"; }

# nfg_load_modules [NAME...]: insmod our modules from $NFG_KMOD_DIR (all *.ko,
# or the named ones), first modprobe'ing the mainline modules they depend on
# (from modinfo "depends"). Already loaded modules are left alone.
nfg_load_modules() {
	local kos=() ours=" " ko d pending progress n
	if [ $# -gt 0 ]; then
		for n; do kos+=("$NFG_KMOD_DIR/${n%.ko}.ko"); done
	else
		for ko in "$NFG_KMOD_DIR"/*.ko; do [ -e "$ko" ] && kos+=("$ko"); done
	fi
	[ ${#kos[@]} -gt 0 ] || nfg_fail "no kernel modules in $NFG_KMOD_DIR (build them: make modules)"
	for ko in "$NFG_KMOD_DIR"/*.ko; do ours+="$(nfg__mod_name "$ko") "; done
	# the mainline modules ours need, not loaded yet: one modprobe
	local deps=()
	for ko in "${kos[@]}"; do [ -f "$ko" ] || nfg_fail "no module $ko"; done
	for d in $(modinfo -F depends "${kos[@]}" | tr ',' ' '); do
		[[ $ours == *" $d "* ]] || [ -d "/sys/module/$d" ] || deps+=("$d")
	done
	[ ${#deps[@]} -eq 0 ] || modprobe -a "${deps[@]}" ||
		nfg_fail "modprobe -a ${deps[*]} (needed by nfguard's modules)"
	pending=("${kos[@]}")
	while [ ${#pending[@]} -gt 0 ]; do
		progress=0 n=()
		for ko in "${pending[@]}"; do
			if [ -d "/sys/module/$(nfg__mod_name "$ko")" ] || insmod "$ko" 2>"$NFG_WORK/insmod.err"; then
				progress=1
			else
				n+=("$ko")
			fi
		done
		pending=("${n[@]}")
		if [ $progress = 0 ]; then
			cat "$NFG_WORK/insmod.err" >&2
			nfg_fail "insmod failed: ${pending[*]}"
		fi
	done
}

# nfg_unload_modules [NAME...]: rmmod our modules (all loaded ones, or the
# named ones); fails if one stays loaded.
nfg_unload_modules() {
	local names=() n m left progress
	if [ $# -gt 0 ]; then
		for n; do names+=("$(nfg__mod_name "$n")"); done
	else
		for m in "$NFG_KMOD_DIR"/*.ko; do [ -e "$m" ] && names+=("$(nfg__mod_name "$m")"); done
	fi
	progress=1
	while [ $progress = 1 ]; do
		progress=0 left=()
		for m in "${names[@]}"; do
			[ -d "/sys/module/$m" ] || continue
			if rmmod "$m" 2>/dev/null; then progress=1; else left+=("$m"); fi
		done
	done
	[ ${#left[@]} -eq 0 ] || nfg_fail "cannot unload: ${left[*]}"
}

# ------------------------------------------------------------------ misc

# nfg_sha256 FILE: print the SHA-256 of FILE.
nfg_sha256() { sha256sum "$1" | cut -d' ' -f1; }

# nfg_kv FILE KEY: the value of FILE's "KEY value" line (a copy of a
# /proc/net/stat/nfguard_* file, `nfguard ... stats`), or "missing".
nfg_kv() {
	local k v
	while read -r k v; do
		[ "$k" = "$2" ] && { echo "$v"; return 0; }
	done <"$1"
	echo missing
}

# nfg_fetch_intact URL SHA256: the client downloads URL (curl, 60 s at most)
# completely, and its SHA-256 is SHA256.
nfg_fetch_intact() {
	rm -f "$NFG_WORK/fetch.out"
	nfg_assert_ok "fetch $1" nfg_client curl -sS -g -m 60 -o "$NFG_WORK/fetch.out" "$1"
	nfg_assert_eq "$2" "$(nfg_sha256 "$NFG_WORK/fetch.out")" "sha256 of $1"
}

# nfg_on_exit CMD...: run CMD (eval'd) at exit, before the topology goes away.
nfg_on_exit() { NFG_EXIT_HOOKS+=("$*"); }

nfg__on_exit() {
	local rc=$? h id pid
	set +e
	for h in "${NFG_EXIT_HOOKS[@]}"; do eval "$h"; done
	{
		for id in "${!NFG_CONN_PID[@]}"; do nfg_conn_close "$id"; done
		for pid in "${NFG_BG_PIDS[@]}"; do kill -KILL "$pid"; done
		nfg_topo_down
		wait
	} 2>/dev/null
	rm -rf "$NFG_WORK"
	if [ $rc = 0 ]; then nfg_log "ok"; else nfg_log "failed (exit $rc)"; fi
	exit $rc
}
trap nfg__on_exit EXIT
