#!/bin/bash
# Self-test of tests/xt/run-xt.sh: a deliberately wrong .t file must be
# reported as exactly the expected failures (file:line, binary, reason), a
# correct file that uses every feature must pass, a missing file must fail, and
# nothing may leak into the caller's network namespace.
# Usage: tests/xt/selftest/run.sh   (root; prints "N passed, N failed")
set -u
here=$(cd "$(dirname "$0")" && pwd)
runner=$here/../run-xt.sh
npass=0 nfail=0
ok() { npass=$((npass + 1)); echo "ok   $*"; }
bad() { nfail=$((nfail + 1)); echo "FAIL $*"; }
# check OKMSG BADMSG TEST...: ok OKMSG if TEST succeeds, else bad BADMSG
check() {
	local okmsg=$1 badmsg=$2
	shift 2
	if "$@"; then ok "$okmsg"; else bad "$badmsg"; fi
}

snapshot() {
	local b
	for b in iptables-legacy-save ip6tables-legacy-save iptables-nft-save ip6tables-nft-save; do
		"$b" 2>&1 | grep -v '^#'
	done
}
before=$(snapshot)

# --- the wrong file ---------------------------------------------------------
out=$("$runner" "$here/libxt_wrong.t" 2>&1)
rc=$?
check "wrong file: exit status 1" "wrong file: exit status $rc, want 1" [ $rc -eq 1 ]
last=$(printf '%s\n' "$out" | tail -n 1)
check "wrong file: summary '$last'" "wrong file: summary '$last', want '20 passed, 44 failed'" \
	[ "$last" = "20 passed, 44 failed" ]

f=$here/libxt_wrong.t
for bin in iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft; do
	nflog="saved form differs"
	[ "${bin##*-}" = legacy ] && nflog="saved form matches, but NOMATCH"
	while IFS='|' read -r line chain reason; do
		pat="FAIL $f:$line [$bin${chain:+ $chain}] $reason"
		if printf '%s\n' "$out" | grep -qF -- "$pat"; then
			ok "reported: $bin line $line: $reason"
		else
			bad "not reported: $pat"
		fi
	done <<LIST
4||rule before any :CHAIN line
11|INPUT|saved form differs
13|INPUT|rejected, but should be accepted
15|INPUT|accepted, but should be rejected
17|INPUT|saved form matches, but NOMATCH
19||malformed line
21||bad RESULT 'MAYBE'
23||setup step failed
25|INPUT|$nflog
27|INPUT|rejected, but should be accepted
30||rules pass one by one, but not as one ${bin%-*}-${bin##*-}-restore batch
LIST
done
n=$(printf '%s\n' "$out" | grep -c '^FAIL ')
check "no unexpected failures (44 FAIL lines)" "$n FAIL lines, want 44"$'\n'"$out" \
	[ "$n" -eq 44 ]
for l in 7 9; do
	if printf '%s\n' "$out" | grep -q "^FAIL $f:$l "; then
		bad "positive control line $l reported as failure"
	else
		ok "positive control line $l passed"
	fi
done
# a failure block names the command, what was expected and what was seen
blk=$(printf '%s\n' "$out" | grep -A3 -F "FAIL $f:11 [iptables-nft INPUT]")
if printf '%s\n' "$blk" | grep -qF "command:  iptables-nft -t filter -A INPUT -p tcp --dport 81" &&
	printf '%s\n' "$blk" | grep -qF "expected: -A INPUT -p tcp -m tcp --dport 8" &&
	printf '%s\n' "$blk" | grep -qF "seen:     -A INPUT -p tcp -m tcp --dport 81"; then
	ok "failure block shows command, expected and seen"
else
	bad "failure block incomplete:"$'\n'"$blk"
fi

# --- the good file ------------------------------------------------------------
out=$("$runner" "$here/libipt_good.t" 2>&1)
rc=$?
last=$(printf '%s\n' "$out" | tail -n 1)
if [ $rc -eq 0 ] && [ "$last" = "46 passed, 0 failed" ]; then
	ok "good file: exit 0, '$last'"
else
	bad "good file: exit $rc, '$last', want exit 0, '46 passed, 0 failed'"$'\n'"$out"
fi
out=$("$runner" -b nft "$here/libipt_good.t" 2>&1)
last=$(printf '%s\n' "$out" | tail -n 1)
check "-b nft runs one variant" "-b nft: '$last', want '23 passed, 0 failed'" \
	[ "$last" = "23 passed, 0 failed" ]

# --- a missing file, a bad option ---------------------------------------------
out=$("$runner" "$here/does-not-exist.t" 2>&1)
rc=$?
last=$(printf '%s\n' "$out" | tail -n 1)
check "missing file is a failure" "missing file: exit $rc: $out" \
	[ "$rc/$last" = "1/0 passed, 1 failed" ]
"$runner" -b bogus "$here/libipt_good.t" >/dev/null 2>&1
rc=$?
check "bad -b value: usage error" "bad -b value: exit $rc, want 2" [ $rc -eq 2 ]

# --- nothing leaked -------------------------------------------------------------
after=$(snapshot)
check "caller's namespace unchanged" \
	"caller's namespace changed:"$'\n'"$(diff <(echo "$before") <(echo "$after"))" \
	[ "$before" = "$after" ]

echo "$npass passed, $nfail failed"
[ $nfail -eq 0 ]
