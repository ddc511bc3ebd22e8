# shellcheck shell=bash
# Helpers for tests/vm/cases/fuzz_<ext>_nl.sh (source after tests/vm/lib.sh
# and tests/stress/knobs.sh).
#
# A case sets NFZ_STATE to a shell command printing the family's visible
# state (run with `sh -c`, in the netns the case calls nfz_state_* from),
# then:
#   nfz_state_save          remember the state now
#   nfz NAME CMD...         run nfg-nlfuzz (or a wrapper), fail with its
#                           first failures and the seed if it fails
#   nfz_same_state WHEN     fail if the state differs from the saved one
#   nfz_live_is PARAM N     (for nfg_wait_until) /sys/module/.../PARAM is N

nfz() {
	local what=$1
	shift
	nfg_log "$what (at ${SECONDS}s)"
	if ! "$@" >"$NFG_WORK/fuzz.out" 2>&1; then
		head -n 1 "$NFG_WORK/fuzz.out" | sed 's/^/    | /' >&2
		grep -m 3 -A 12 '^FAIL' "$NFG_WORK/fuzz.out" | sed 's/^/    | /' >&2
		tail -n 1 "$NFG_WORK/fuzz.out" | sed 's/^/    | /' >&2
		nfg_fail "$what: nfg-nlfuzz failed"
	fi
	tail -n 2 "$NFG_WORK/fuzz.out" | sed 's/^/    /'
}

nfz_state_save() {
	sh -c "$NFZ_STATE" >"$NFG_WORK/state.0" || nfg_fail "state: $NFZ_STATE failed"
}

nfz_same_state() {
	sh -c "$NFZ_STATE" >"$NFG_WORK/state.1" || nfg_fail "$1: $NFZ_STATE failed"
	cmp -s "$NFG_WORK/state.0" "$NFG_WORK/state.1" || {
		diff "$NFG_WORK/state.0" "$NFG_WORK/state.1" | head -n 20 >&2
		nfg_fail "$1: state changed"
	}
}

nfz_live_is() { [ "$(cat "$1")" = "$2" ]; }

# nfz_state_settled: save the state; true if it equals the previous save
# (for nfg_wait_until: state that traffic in flight may still change).
nfz_state_settled() {
	[ -e "$NFG_WORK/state.0" ] && mv "$NFG_WORK/state.0" "$NFG_WORK/state.prev"
	nfz_state_save
	[ -e "$NFG_WORK/state.prev" ] && cmp -s "$NFG_WORK/state.prev" "$NFG_WORK/state.0"
}
