# shellcheck shell=bash
# Knobs for the stress/torture/fuzz cases (sourced after tests/vm/lib.sh).
#
# The guest runner gives cases a clean environment, so a longer run is asked
# for through a file on the host tree, which the guest sees read-only:
#
#   echo NFG_STRESS_SECS=300 >  build/test-knobs.env
#   echo NFG_FUZZ_ITERS=200000 >> build/test-knobs.env
#   ./tests/vm/check.sh tests/vm/cases/stress_rangeset.sh tests/vm/cases/fuzz_rangeset_nl.sh
#   rm build/test-knobs.env
#
# A variable already in the environment wins over the file, the file over
# the case's default. Cases print the knobs they run with.

NFG_KNOBS_FILE=${NFG_KNOBS_FILE:-$NFG_TOP/build/test-knobs.env}

# nfg_knob NAME DEFAULT: print the knob's value (digits only).
nfg_knob() {
	local name=$1 def=$2 v=${!1:-} k val
	if [ -z "$v" ] && [ -r "$NFG_KNOBS_FILE" ]; then
		while IFS='=' read -r k val; do
			[ "$k" = "$name" ] && v=$val
		done <"$NFG_KNOBS_FILE"
	fi
	[[ $v =~ ^[0-9]+$ ]] || v=$def
	echo "$v"
}
