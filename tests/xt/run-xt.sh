#!/bin/bash
# run-xt.sh - nfguard's runner for iptables ".t" rule test files.
#
# Usage: tests/xt/run-xt.sh [-b legacy|nft|both] [-v] FILE.t...
#
#   -b VARIANT  iptables variant(s) to test: legacy, nft or both (default both)
#   -v          also print one line per passing check
#
# Exit status: 0 when every check passed, 1 when any failed, 2 on usage errors.
# The last line printed is always "N passed, N failed".
#
# Which binaries run a file is decided by its name:
#   libxt_*.t   iptables and ip6tables
#   libipt_*.t  iptables only
#   libip6t_*.t ip6tables only
#   other       iptables only
# each as <cmd>-legacy and/or <cmd>-nft (iptables-legacy, ip6tables-nft, ...).
# Every (file, binary) pair runs in its own private network namespace
# (unshare -n), so every table starts empty and nothing leaks into the caller's
# namespace. XTABLES_LIBDIR is taken from the environment unchanged (the VM
# harness puts our plugins first); commands are found through PATH.
#
# File format (the format of iptables' extensions/*.t files):
#   # text                comment; blank lines are ignored
#   *TABLE                select the table for the following rules (default: filter)
#   :CHAIN[,CHAIN...]     select the chains for the following rules; every rule
#                         line is checked separately in every selected chain.
#                         Built-in chain names are used as they are; any other
#                         name is created in the current table (-N) first.
#   @ SHELL-COMMAND       nfguard extension: a setup step, run with bash -c in the
#                         file's namespace when it is reached (so it applies to the
#                         rules below it). Environment: NFG_XT_CMD (iptables-nft,
#                         ip6tables-legacy, ...), NFG_XT_FAMILY (4 or 6),
#                         NFG_XT_VARIANT (legacy or nft), NFG_XT_TABLE. Example:
#                           @nfguard set create blk ipv$NFG_XT_FAMILY
#                         A setup step that exits non-zero is one failure.
#   RULE;EXPECTED;RESULT[;VARIANT[;ALTRESULT]]
#       RULE      arguments after "-A CHAIN", no ';'. It is split into words by
#                 the shell and also given to iptables-restore as it is, so
#                 quote with double quotes only.
#       EXPECTED  the rule as iptables-save must print it after "-A CHAIN ":
#                 "=" means RULE itself, any other text means exactly that text,
#                 an empty field means the bare "-A CHAIN" line. Compared as whole
#                 lines (trailing blanks ignored), never as substrings.
#       RESULT    OK       the command must succeed; the chain must then hold
#                          exactly one rule and its save line must equal
#                          "-A CHAIN EXPECTED"; "-D CHAIN RULE" (the rule as
#                          written, -c/--set-counters removed) must then delete it.
#                 FAIL     the command must be rejected: exit status 1..123 (a
#                          timeout, a crash by signal or "command not found" is not
#                          a rejection) and the chain must still be empty.
#                 NOMATCH  the command must succeed and the chain must then hold
#                          exactly one rule whose save line differs from
#                          "-A CHAIN EXPECTED" (for rules that are accepted but are
#                          printed in a form other than EXPECTED).
#       VARIANT   optional LEGACY or NFT: RESULT applies to that variant only. The
#                 other variant expects ALTRESULT if given, otherwise the opposite
#                 of RESULT (OK <-> FAIL, NOMATCH -> OK).
#
# Each (line, binary, chain) is one check. After the last line of a file, a
# round trip is one more check per (binary, table) that had OK rules: the
# expected save lines of all of them are loaded at once with <cmd>-restore and
# iptables-save must print exactly that multiset of "-A" lines again (proves
# the printed form parses back to the same rule). It runs with all setup steps
# of the file applied.
#
# Speed (each command costs ~0.3 s in a TCG guest): the lines between two
# setup steps or table changes form a segment. Its OK/NOMATCH rules are first
# checked as one batch: one "<cmd>-restore --noflush" adds them all, one save
# must list, chain by chain and in order, exactly the expected lines (OK) or
# other lines (NOMATCH), one restore of "-D CHAIN RULE" lines must delete the OK
# rules and leave exactly the NOMATCH ones. If anything in the batch goes wrong,
# the segment is re-checked one rule at a time exactly as described above
# (that is what reports file:line); if every rule then passes on its own, the
# batch failure itself is reported ("rules pass one by one, but not as one
# ...-restore batch"): a rule that cannot be given to iptables-restore, or that
# behaves differently there, is a bug too. FAIL rules are always run one
# command each; one save afterwards checks that none left a rule behind.
#
# Failures are printed as
#   FAIL FILE:LINE [BINARY CHAIN] what
#     command:  ...
#     expected: ...
#     seen:     ...
#
# Environment: NFG_XT_TIMEOUT seconds per command (default 0: no limit; the VM
# harness has its own case timeout).
set -u
set -f

PROG=${0##*/}
SELF=$(readlink -f "$0")
TIMEOUT=${NFG_XT_TIMEOUT:-0}

die_usage() {
	echo "usage: $PROG [-b legacy|nft|both] [-v] FILE.t..." >&2
	exit 2
}

# ---------------------------------------------------------------------------
# worker: runs one file with one binary, inside a private netns.
# ---------------------------------------------------------------------------

BIN='' SAVE='' RESTORE='' FILE='' VARIANT='' FAMILY='' VERBOSE=0
NPASS=0 NFAIL=0

is_builtin() {
	case $1 in
	PREROUTING | INPUT | FORWARD | OUTPUT | POSTROUTING) return 0 ;;
	esac
	return 1
}

# fail LINE CHAIN what [label value]...
fail() {
	local lineno=$1 chain=$2 what=$3 v
	shift 3
	NFAIL=$((NFAIL + 1))
	printf 'FAIL %s:%s [%s%s] %s\n' "$FILE" "$lineno" "$BIN" "${chain:+ $chain}" "$what"
	while [ $# -ge 2 ]; do
		v=${2//$'\n'/$'\n'            }
		printf '  %-9s %s\n' "$1:" "$v"
		shift 2
	done
}

pass() {
	NPASS=$((NPASS + 1))
	[ "$VERBOSE" = 1 ] && printf 'ok   %s:%s [%s%s] %s\n' "$FILE" "$1" "$BIN" "${2:+ $2}" "$3"
	return 0
}

# run CMD...: run with no stdin (and NFG_XT_TIMEOUT if set); output in $OUT,
# status in $RC. Output goes through a file and is read back without forking:
# in a TCG guest every fork costs ~80 ms, so this runner avoids them.
run() {
	if [ "$TIMEOUT" -gt 0 ]; then
		timeout "$TIMEOUT" "$@" </dev/null >"$SCRATCH" 2>&1
	else
		"$@" </dev/null >"$SCRATCH" 2>&1
	fi
	RC=$?
	OUT=''
	IFS= read -r -d '' OUT <"$SCRATCH"
	OUT=${OUT%$'\n'}
}

# run_in INPUT CMD...: like run, with INPUT on stdin
run_in() {
	local input=$1
	shift
	printf '%s\n' "$input" >"$SCRATCH.in"
	if [ "$TIMEOUT" -gt 0 ]; then
		timeout "$TIMEOUT" "$@" <"$SCRATCH.in" >"$SCRATCH" 2>&1
	else
		"$@" <"$SCRATCH.in" >"$SCRATCH" 2>&1
	fi
	RC=$?
	OUT=''
	IFS= read -r -d '' OUT <"$SCRATCH"
	OUT=${OUT%$'\n'}
}

# save_table TABLE: run $SAVE; the "-A" lines (trailing blanks stripped) of
# every chain go to SAVED[CHAIN] (newline separated) and NSAVED[CHAIN]; ALLSAVED
# holds all of them. Returns 1 (message in $SAVEERR) if the save failed.
save_table() {
	local l c
	SAVED=() NSAVED=() ALLSAVED='' SAVEERR=''
	run "$SAVE" -t "$1"
	if [ $RC -ne 0 ]; then
		SAVEERR="<$SAVE -t $1 failed, exit $RC: $OUT>"
		return 1
	fi
	while IFS= read -r l; do
		l=${l%"${l##*[![:space:]]}"}
		case $l in '-A '*) ;; *) continue ;; esac
		c=${l#-A }
		c=${c%% *}
		SAVED[$c]+=${SAVED[$c]:+$'\n'}$l
		NSAVED[$c]=$((${NSAVED[$c]:-0} + 1))
		ALLSAVED+=${ALLSAVED:+$'\n'}$l
	done <<<"$OUT"
	return 0
}

# saved_rules TABLE CHAIN: the chain's "-A" lines in $SEEN, their number in $NSEEN
saved_rules() {
	if save_table "$1"; then
		SEEN=${SAVED[$2]-} NSEEN=${NSAVED[$2]:-0}
	else
		SEEN=$SAVEERR NSEEN=-1
	fi
}

flush_chain() { # TABLE [CHAIN]
	run "$BIN" -w -t "$1" -F ${2:+"$2"}
}

# quote WORD...: the words, shell-quoted where needed, in $QUOTED (no fork)
quote() {
	local w
	QUOTED=''
	for w in "$@"; do
		case $w in
		'' | *[!A-Za-z0-9_./:,=+@%^-]*) printf -v w '%q' "$w" ;;
		esac
		QUOTED+=${QUOTED:+ }$w
	done
}

# strip_counters WORD...: the rule's words without -c/--set-counters (which -D
# refuses) in DEL
strip_counters() {
	DEL=()
	while [ $# -gt 0 ]; do
		case $1 in
		-c | --set-counters)
			case ${2-} in
			*,*) shift 2 ;;
			*) shift 3 ;;
			esac
			continue
			;;
		esac
		DEL+=("$1")
		shift
	done
}

# check_rule LINENO TABLE CHAIN RESULT EXPECTED_LINE RULE_WORDS...: the exact,
# one-command-at-a-time check of one rule in one chain (see the header).
check_rule() {
	local lineno=$1 table=$2 chain=$3 res=$4 expect=$5
	shift 5
	local cmdtxt rc addout
	quote "$BIN" -t "$table" -A "$chain" "$@"
	cmdtxt=$QUOTED
	run "$BIN" -w -t "$table" -A "$chain" "$@"
	rc=$RC addout=$OUT

	if [ "$res" = FAIL ]; then
		if [ $rc -eq 0 ]; then
			saved_rules "$table" "$chain"
			fail "$lineno" "$chain" "accepted, but should be rejected" \
				command "$cmdtxt" expected "non-zero exit (rejected)" \
				seen "exit 0, saved as: $SEEN"
			flush_chain "$table" "$chain"
			return 1
		fi
		if [ $rc -ge 124 ]; then
			fail "$lineno" "$chain" "did not exit normally (timeout, crash or missing command)" \
				command "$cmdtxt" expected "rejection (exit 1..123)" seen "exit $rc${addout:+: $addout}"
			flush_chain "$table" "$chain"
			return 1
		fi
		saved_rules "$table" "$chain"
		if [ "$NSEEN" -ne 0 ]; then
			fail "$lineno" "$chain" "rejected, but left a rule behind" \
				command "$cmdtxt" expected "empty chain" seen "$SEEN"
			flush_chain "$table" "$chain"
			return 1
		fi
		pass "$lineno" "$chain" "rejected: $cmdtxt"
		return 0
	fi

	if [ $rc -ne 0 ]; then
		fail "$lineno" "$chain" "rejected, but should be accepted" \
			command "$cmdtxt" expected "exit 0${res:+ ($res)}" seen "exit $rc${addout:+: $addout}"
		flush_chain "$table" "$chain"
		return 1
	fi
	saved_rules "$table" "$chain"
	if [ "$NSEEN" -ne 1 ]; then
		fail "$lineno" "$chain" "chain holds $NSEEN rules after adding one" \
			command "$cmdtxt" expected "$expect" seen "$SEEN"
		flush_chain "$table" "$chain"
		return 1
	fi
	if [ "$res" = NOMATCH ]; then
		flush_chain "$table" "$chain"
		if [ "$SEEN" = "$expect" ]; then
			fail "$lineno" "$chain" "saved form matches, but NOMATCH says it must not" \
				command "$cmdtxt" expected "anything but: $expect" seen "$SEEN"
			return 1
		fi
		pass "$lineno" "$chain" "accepted, saved differently: $cmdtxt"
		return 0
	fi
	# OK
	if [ "$SEEN" != "$expect" ]; then
		fail "$lineno" "$chain" "saved form differs" \
			command "$cmdtxt" expected "$expect" seen "$SEEN"
		flush_chain "$table" "$chain"
		return 1
	fi
	strip_counters "$@"
	run "$BIN" -w -t "$table" -D "$chain" "${DEL[@]}"
	if [ $RC -ne 0 ]; then
		quote "$BIN" -t "$table" -D "$chain" "${DEL[@]}"
		fail "$lineno" "$chain" "cannot delete the rule by its own specification" \
			command "$QUOTED" expected "exit 0" seen "exit $RC${OUT:+: $OUT}"
		flush_chain "$table" "$chain"
		return 1
	fi
	ROUNDTRIP[$table]+="$expect"$'\n'
	pass "$lineno" "$chain" "$cmdtxt"
}

# ---------------------------------------------------------------------------
# Parsed file: entry i has E_KIND[i] (rule|setup), E_LINE[i], E_TABLE[i],
# E_CHAINS[i] (space separated), and for rules E_RULE[i] (text), E_RES[i]
# (OK|FAIL|NOMATCH for this variant), E_EXP[i] (expected text after
# "-A CHAIN", blanks trimmed); for setups E_CMD[i].
# ---------------------------------------------------------------------------

parse_file() {
	local table=filter lineno=0 line rest rule expect res variant alt nf n=0
	local -a fields=() words=()
	local chains=''
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		line=${line%$'\r'}
		[ -z "${line//[[:space:]]/}" ] && continue
		case $line in
		'#'*) continue ;;
		'*'*)
			table=${line#\*}
			table=${table//[[:space:]]/}
			continue
			;;
		':'*)
			rest=${line#:}
			rest=${rest//[[:space:]]/}
			chains=${rest//,/ }
			continue
			;;
		'@'*)
			E_KIND[n]=setup E_LINE[n]=$lineno E_TABLE[n]=$table E_CMD[n]=${line#@}
			n=$((n + 1))
			continue
			;;
		esac

		IFS=';' read -ra fields <<<"$line"
		nf=${#fields[@]}
		# a trailing ";" (empty last field) is dropped by read; restore it
		[ "${line: -1}" = ";" ] && { fields+=(""); nf=$((nf + 1)); }
		if [ "$nf" -lt 3 ] || [ "$nf" -gt 5 ]; then
			fail "$lineno" "" "malformed line: want RULE;EXPECTED;RESULT[;VARIANT[;ALTRESULT]]" \
				line "$line"
			continue
		fi
		rule=${fields[0]}
		expect=${fields[1]}
		res=${fields[2]//[[:space:]]/}
		variant=${fields[3]-}
		variant=${variant//[[:space:]]/}
		alt=${fields[4]-}
		alt=${alt//[[:space:]]/}
		case $res in OK | FAIL | NOMATCH) ;; *)
			fail "$lineno" "" "bad RESULT '$res' (OK, FAIL or NOMATCH)" line "$line"
			continue
			;;
		esac
		if [ -n "$variant" ]; then
			case $variant in LEGACY | NFT) ;; *)
				fail "$lineno" "" "bad VARIANT '$variant' (LEGACY or NFT)" line "$line"
				continue
				;;
			esac
			case $alt in '' | OK | FAIL | NOMATCH) ;; *)
				fail "$lineno" "" "bad ALTRESULT '$alt' (OK, FAIL or NOMATCH)" line "$line"
				continue
				;;
			esac
			if [ "${variant,,}" != "$VARIANT" ]; then
				if [ -n "$alt" ]; then
					res=$alt
				else
					case $res in OK) res=FAIL ;; FAIL | NOMATCH) res=OK ;; esac
				fi
			fi
		fi
		if [ -z "${chains// /}" ]; then
			fail "$lineno" "" "rule before any :CHAIN line" line "$line"
			continue
		fi
		if ! eval "words=( $rule )" 2>/dev/null; then
			fail "$lineno" "" "cannot split RULE into words (shell quoting)" line "$line"
			continue
		fi
		[ "$expect" = "=" ] && expect=$rule
		expect=${expect%"${expect##*[![:space:]]}"}
		E_KIND[n]=rule E_LINE[n]=$lineno E_TABLE[n]=$table E_CHAINS[n]=$chains
		E_RULE[n]=$rule E_RES[n]=$res E_EXP[n]=$expect
		n=$((n + 1))
	done <"$FILE"
	NENTRIES=$n
}

# ensure_chains TABLE CHAIN...: create the user-defined chains not made yet
ensure_chains() {
	local table=$1 c input='' new=()
	shift
	for c; do
		is_builtin "$c" && continue
		[ -n "${CREATED[$table/$c]-}" ] && continue
		CREATED[$table/$c]=1
		new+=("$c")
		input+=":$c - [0:0]"$'\n'
	done
	[ ${#new[@]} -eq 0 ] && return 0
	run_in "*$table"$'\n'"${input}COMMIT" "$RESTORE" -w --noflush
	[ $RC -eq 0 ] && return 0
	fail "${E_LINE[${SEG[0]}]}" "" "cannot create chain(s) ${new[*]} in table $table" \
		command "$RESTORE --noflush" expected "exit 0" seen "exit $RC${OUT:+: $OUT}"
}

# batch_accepted TABLE: the fast path for the OK/NOMATCH rules of segment SEG.
# All of them are added with one <cmd>-restore, listed with one save, deleted
# with one restore of "-D" lines (OK rules) and checked again. Returns 0 when
# every check held (then they are counted as passed); otherwise 1 with the
# reason in $BATCHWHY, and nothing counted: the caller re-checks rule by rule.
batch_accepted() {
	local table=$1 i c input='' dinput='' want got k
	local -A want_lines=() want_res=() left=()
	BATCHWHY=''
	for i in "${SEG[@]}"; do
		[ "${E_RES[$i]}" = FAIL ] && continue
		for c in ${E_CHAINS[$i]}; do
			input+="-A $c ${E_RULE[$i]}"$'\n'
			want_lines[$c]+="-A $c${E_EXP[$i]:+ ${E_EXP[$i]}}"$'\n'
			want_res[$c]+="${E_RES[$i]} "
			if [ "${E_RES[$i]}" = OK ]; then
				strip_counters_text "${E_RULE[$i]}"
				dinput+="-D $c $STRIPPED"$'\n'
			fi
		done
	done
	[ -z "$input" ] && return 0
	run_in "*$table"$'\n'"${input}COMMIT" "$RESTORE" -w --noflush
	if [ $RC -ne 0 ]; then
		BATCHWHY="$RESTORE --noflush rejected the batch: exit $RC${OUT:+: $OUT}"
		return 1
	fi
	if ! save_table "$table"; then
		BATCHWHY=$SAVEERR
		return 1
	fi
	for c in "${!want_lines[@]}"; do
		local -a wl=() gl=() rs=()
		mapfile -t wl <<<"${want_lines[$c]%$'\n'}"
		mapfile -t gl <<<"${SAVED[$c]-}"
		read -ra rs <<<"${want_res[$c]}"
		if [ "${#wl[@]}" -ne "${NSAVED[$c]:-0}" ]; then
			BATCHWHY="chain $c holds ${NSAVED[$c]:-0} rules after adding ${#wl[@]}"
			return 1
		fi
		for k in "${!wl[@]}"; do
			if [ "${rs[$k]}" = OK ] && [ "${wl[$k]}" != "${gl[$k]}" ]; then
				BATCHWHY="rule $((k + 1)) of chain $c: expected '${wl[$k]}', saved '${gl[$k]}'"
				return 1
			fi
			if [ "${rs[$k]}" = NOMATCH ] && [ "${wl[$k]}" = "${gl[$k]}" ]; then
				BATCHWHY="rule $((k + 1)) of chain $c (NOMATCH) saved as expected: '${gl[$k]}'"
				return 1
			fi
			[ "${rs[$k]}" = NOMATCH ] && left[$c]+=${gl[$k]}$'\n'
		done
	done
	if [ -n "$dinput" ]; then
		run_in "*$table"$'\n'"${dinput}COMMIT" "$RESTORE" -w --noflush
		if [ $RC -ne 0 ]; then
			BATCHWHY="deleting the OK rules by their own specification failed: exit $RC${OUT:+: $OUT}"
			return 1
		fi
		if ! save_table "$table"; then
			BATCHWHY=$SAVEERR
			return 1
		fi
		for c in "${!want_lines[@]}"; do
			want=${left[$c]-}
			want=${want%$'\n'}
			got=${SAVED[$c]-}
			if [ "$want" != "$got" ]; then
				BATCHWHY="after deleting the OK rules chain $c holds:"$'\n'"$got"$'\n'"instead of:"$'\n'"$want"
				return 1
			fi
		done
	fi
	flush_chain "$table"
	# all good: count them
	for i in "${SEG[@]}"; do
		[ "${E_RES[$i]}" = FAIL ] && continue
		for c in ${E_CHAINS[$i]}; do
			pass "${E_LINE[$i]}" "$c" "(batch) ${E_RES[$i]}: -A $c ${E_RULE[$i]}"
			[ "${E_RES[$i]}" = OK ] &&
				ROUNDTRIP[$table]+="-A $c${E_EXP[$i]:+ ${E_EXP[$i]}}"$'\n'
		done
	done
	return 0
}

# strip_counters_text RULE: RULE without -c/--set-counters, for a restore
# line, in $STRIPPED (RULE itself when it has no counters)
strip_counters_text() {
	local -a w=()
	local x
	STRIPPED=$1
	case " $1 " in *" -c "* | *" --set-counters "*) ;; *) return 0 ;; esac
	eval "w=( $1 )"
	strip_counters "${w[@]}"
	STRIPPED=''
	for x in "${DEL[@]}"; do
		case $x in
		'' | *[[:space:]\"\']*) x="\"${x//\"/\\\"}\"" ;;
		esac
		STRIPPED+=${STRIPPED:+ }$x
	done
}

# check_one ENTRY CHAIN: check_rule for entry ENTRY in CHAIN
check_one() {
	local i=$1 c=$2
	local -a words=()
	eval "words=( ${E_RULE[$i]} )"
	check_rule "${E_LINE[$i]}" "${E_TABLE[$i]}" "$c" "${E_RES[$i]}" \
		"-A $c${E_EXP[$i]:+ ${E_EXP[$i]}}" "${words[@]}"
}

# run_segment: check the rules SEG (all in one table, no setup step between)
run_segment() {
	[ ${#SEG[@]} -eq 0 ] && return 0
	local table=${E_TABLE[${SEG[0]}]} i c before rejected=()
	local -a words=() allchains=()
	for i in "${SEG[@]}"; do
		for c in ${E_CHAINS[$i]}; do allchains+=("$c"); done
	done
	ensure_chains "$table" "${allchains[@]}"

	# OK and NOMATCH rules: fast path, or rule by rule to find what is wrong
	if ! batch_accepted "$table"; then
		flush_chain "$table"
		before=$NFAIL
		for i in "${SEG[@]}"; do
			[ "${E_RES[$i]}" = FAIL ] && continue
			for c in ${E_CHAINS[$i]}; do check_one "$i" "$c"; done
		done
		if [ "$NFAIL" -eq "$before" ]; then
			fail "${E_LINE[${SEG[0]}]}" "" \
				"rules pass one by one, but not as one $RESTORE batch (lines ${E_LINE[${SEG[0]}]}..${E_LINE[${SEG[-1]}]})" \
				seen "$BATCHWHY"
		fi
	fi

	# FAIL rules: each must be rejected; one save at the end checks that none
	# left anything behind (if one did, re-check them one by one)
	for i in "${SEG[@]}"; do
		[ "${E_RES[$i]}" = FAIL ] || continue
		eval "words=( ${E_RULE[$i]} )"
		for c in ${E_CHAINS[$i]}; do
			run "$BIN" -w -t "$table" -A "$c" "${words[@]}"
			if [ $RC -ne 0 ] && [ $RC -lt 124 ]; then
				rejected+=("$i:$c")
				continue
			fi
			quote "$BIN" -t "$table" -A "$c" "${words[@]}"
			if [ $RC -eq 0 ]; then
				saved_rules "$table" "$c"
				fail "${E_LINE[$i]}" "$c" "accepted, but should be rejected" \
					command "$QUOTED" expected "non-zero exit (rejected)" \
					seen "exit 0, saved as: $SEEN"
			else
				fail "${E_LINE[$i]}" "$c" "did not exit normally (timeout, crash or missing command)" \
					command "$QUOTED" expected "rejection (exit 1..123)" seen "exit $RC${OUT:+: $OUT}"
			fi
			flush_chain "$table" "$c"
		done
	done
	[ ${#rejected[@]} -eq 0 ] && return 0
	if save_table "$table" && [ -z "$ALLSAVED" ]; then
		for i in "${rejected[@]}"; do
			pass "${E_LINE[${i%%:*}]}" "${i#*:}" "(batch) rejected"
		done
	else
		flush_chain "$table"
		for i in "${rejected[@]}"; do check_one "${i%%:*}" "${i#*:}"; done
	fi
}

roundtrip() { # TABLE
	# The multisets are compared with bash's own arrays: sort and awk here
	# cost ~8 processes per (file, binary, table), ~0.08 s each under TCG;
	# they run only to show a difference.
	local table=$1 input l c d=0 want got
	local -A chains=() cnt=()
	while IFS= read -r l; do
		[ -n "$l" ] || continue
		c=${l#-A }
		chains[${c%% *}]=1
		cnt[$l]=$((${cnt[$l]:-0} + 1))
	done <<<"${ROUNDTRIP[$table]}"
	input="*$table"$'\n'
	for c in "${!chains[@]}"; do
		is_builtin "$c" || input+=":$c - [0:0]"$'\n'
	done
	input+="${ROUNDTRIP[$table]}COMMIT"
	run_in "$input" "$RESTORE" -w
	if [ $RC -ne 0 ]; then
		fail end "" "round trip (table $table): $RESTORE rejected the saved rules" \
			command "$RESTORE <<< saved rules" expected "exit 0" \
			seen "exit $RC${OUT:+: $OUT}"$'\n'"input was:"$'\n'"$input"
		return
	fi
	save_table "$table"
	while IFS= read -r l; do
		[ -z "$l" ] || cnt[$l]=$((${cnt[$l]:-0} - 1))
	done <<<"$ALLSAVED"
	for l in "${!cnt[@]}"; do
		[ "${cnt[$l]}" -eq 0 ] || d=1
	done
	if [ "$d" -ne 0 ]; then
		want=$(printf '%s' "${ROUNDTRIP[$table]}" | LC_ALL=C sort)
		got=$(printf '%s\n' "$ALLSAVED" | LC_ALL=C sort)
		fail end "" "round trip (table $table): save after restore differs" \
			command "$RESTORE; $SAVE -t $table" \
			expected "$want" seen "$got"$'\n'"diff:"$'\n'"$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got"))"
		return
	fi
	pass end "" "round trip (table $table)"
}

worker() { # BIN FILE COUNTSFILE
	BIN=$1 FILE=$2
	local counts=$3 base i table tablesorder='' t
	SCRATCH=$counts.out
	base=${BIN%-*}
	VARIANT=${BIN##*-}
	SAVE=$base-$VARIANT-save
	RESTORE=$base-$VARIANT-restore
	case $base in ip6tables) FAMILY=6 ;; *) FAMILY=4 ;; esac
	declare -gA ROUNDTRIP=() CREATED=() SAVED=() NSAVED=()
	declare -ga E_KIND=() E_LINE=() E_TABLE=() E_CHAINS=() E_RULE=() E_RES=() E_EXP=() E_CMD=() SEG=()

	if ! command -v "$BIN" >/dev/null || ! command -v "$SAVE" >/dev/null ||
		! command -v "$RESTORE" >/dev/null; then
		fail 0 "" "$BIN, $SAVE or $RESTORE not found in PATH"
		echo "$NPASS $NFAIL" >"$counts"
		return
	fi

	parse_file
	for ((i = 0; i < NENTRIES; i++)); do
		t=${E_TABLE[$i]}
		if [ "${E_KIND[$i]}" = setup ]; then
			run_segment
			SEG=()
			run env NFG_XT_CMD="$BIN" NFG_XT_FAMILY="$FAMILY" \
				NFG_XT_VARIANT="$VARIANT" NFG_XT_TABLE="$t" bash -c "${E_CMD[$i]}"
			if [ $RC -ne 0 ]; then
				fail "${E_LINE[$i]}" "" "setup step failed" command "${E_CMD[$i]}" \
					expected "exit 0" seen "exit $RC${OUT:+: $OUT}"
			else
				pass "${E_LINE[$i]}" "" "setup: ${E_CMD[$i]}"
			fi
			continue
		fi
		if [ ${#SEG[@]} -gt 0 ] && [ "${E_TABLE[${SEG[0]}]}" != "$t" ]; then
			run_segment
			SEG=()
		fi
		SEG+=("$i")
		case " $tablesorder " in *" $t "*) ;; *) tablesorder+=" $t" ;; esac
	done
	run_segment

	for table in $tablesorder; do
		[ -n "${ROUNDTRIP[$table]-}" ] && roundtrip "$table"
	done
	echo "$NPASS $NFAIL" >"$counts"
}

if [ "${1-}" = "--worker" ]; then
	VERBOSE=$2
	shift 2
	worker "$@"
	exit 0
fi

# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

variants="legacy nft"
while getopts "b:vh" opt; do
	case $opt in
	b)
		case $OPTARG in
		legacy | nft) variants=$OPTARG ;;
		both) variants="legacy nft" ;;
		*) die_usage ;;
		esac
		;;
	v) VERBOSE=1 ;;
	*) die_usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || die_usage

if [ "$(id -u)" != 0 ]; then
	echo "$PROG: must run as root (network namespaces, iptables)" >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-xt.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

total_pass=0 total_fail=0 k=0
for f in "$@"; do
	name=${f##*/}
	case $name in
	libip6t_*) cmds="ip6tables" ;;
	libxt_*) cmds="iptables ip6tables" ;;
	*) cmds="iptables" ;;
	esac
	if [ ! -r "$f" ]; then
		echo "FAIL $f: cannot read file"
		total_fail=$((total_fail + 1))
		continue
	fi
	for v in $variants; do
		for c in $cmds; do
			k=$((k + 1))
			cnt=$tmp/$k
			t0=$SECONDS
			unshare -n -- bash "$SELF" --worker "$VERBOSE" "$c-$v" "$f" "$cnt"
			if [ -s "$cnt" ]; then
				read -r p fl <"$cnt"
			else
				echo "FAIL $f [$c-$v] runner worker died (no result)"
				p=0 fl=1
			fi
			printf '%s [%s]: %d passed, %d failed (%ds)\n' "$f" "$c-$v" "$p" "$fl" $((SECONDS - t0))
			total_pass=$((total_pass + p))
			total_fail=$((total_fail + fl))
		done
	done
done

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
