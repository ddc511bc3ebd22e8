#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nfguard's bash completion (packaging/bash-completion/nfguard): sources it
# in this bash, fills COMP_WORDS/COMP_CWORD as bash would, calls the
# completion function and compares COMPREPLY. `nfguard set list` is a shell
# function here, so set names need no module. Run by make check-unit.
#
# usage: tests/completion/check.sh [COMPLETION_FILE]
set -u
export LC_ALL=C
top=$(cd "$(dirname "$0")/../.." && pwd)
file=${1:-$top/packaging/bash-completion/nfguard}
passed=0 failed=0

# shellcheck source=/dev/null
. "$file" || { echo "FAIL: cannot source $file"; exit 1; }
complete -p nfguard 2>/dev/null | grep -q -- '-F _nfguard nfguard$' ||
	{ echo "FAIL: $file does not register _nfguard for nfguard"; exit 1; }

# shellcheck disable=SC2317 # called by the completion function
# Stands for the CLI: a set list with a header line, as `nfguard set list`.
nfguard()
{
	[ "$*" = "set list" ] || return 1
	printf '%-31s %-6s\n' NAME FAMILY blocked ipv4 blocked6 ipv6 allow ipv4
}

# expect "WANT" WORD...: complete the last WORD (may be ''), expect the
# sorted replies to be WANT (space separated).
expect()
{
	local want=$1 got
	shift
	COMP_WORDS=(nfguard "$@")
	COMP_CWORD=$#
	COMP_LINE="nfguard $*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_nfguard nfguard "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
	got=${got% }
	if [ "$got" = "$want" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: nfguard $*|: got '$got', want '$want'"
	fi
}

expect "help kconnlimit protect rtcache set stats syncookie unprotect version" ''
expect "set stats syncookie" s
expect "--help --version -V -h" -
expect "--help -h add create del destroy flush list rename restore save swap test" set ''
expect "create" set cr
expect "ipv4 ipv6" set create foo ip
expect "-exist maxelem timeout" set create foo ipv4 ''
expect "-exist" set create foo ipv4 maxelem 10 -
expect "timeout" set create foo ipv4 maxelem 10 t
expect "allow blocked blocked6" set destroy ''
expect "blocked blocked6" set flush bl
expect "allow blocked blocked6" set swap blocked ''
expect "" set rename blocked ''
expect "-f" set add blocked ''
expect "" set add blocked 10.0.0.1 ''
expect "--check --replace -f" set restore ''
expect "--json" set list --
expect "--json" syncookie stats ''
expect "--json" syncookie allowlist list ''
expect "--json" rtcache list ''
expect "--json" rtcache stats --
expect "allow blocked blocked6" set list ''
expect "allowlist" syncookie al
expect "add del flush list restore save" syncookie allowlist ''
expect "timeout" syncookie allowlist add 10.0.0.0/8 ''
expect "rotate set" syncookie secret ''
expect "- -f" syncookie secret set ''
expect "--json" kconnlimit list ''
expect "--json -n" kconnlimit top -
expect "" kconnlimit top -n ''
expect "flush" rtcache f
expect "ipv4 ipv6" rtcache flush ''
expect "--help --json --prometheus --watch" stats --
expect "--json" stats --watch 5 --j
expect "--dry-run" protect --d
expect "--check" protect --ch
expect "--json" protect --show --j
expect "allow blocked blocked6" protect --syncookie tcp/80 --blocklist ''
expect "--syncookie --syncookie-allowlist-mask --syncookie-allowlist-timeout --syncookie-mode --syncookie-mss --syncookie-sack-perm --syncookie-timestamp --syncookie-wscale" protect --sy
expect "--syncookie-allowlist-mask --syncookie-allowlist-timeout" protect --syncookie tcp/80 --syncookie-a
expect "local proxy" protect --syncookie tcp/80 --syncookie-mode ''
expect "" protect --syncookie tcp/80 --syncookie-mss ''
expect "-6" protect -4 --rtcache -6
expect "" protect --kconnlimit ''
expect "tcp/ udp/" protect --kconnlimit 64/24 ''
expect "tcp/" protect --syncookie ''
expect "--kconnlimit" protect --kconnlimit 64/24 tcp/80 --kconn
expect "allow blocked blocked6" protect --blocklist blocked --blocklist ''
expect "--dry-run" unprotect --d
expect "" version ''
# global options before the command
expect "--json -n" -V kconnlimit top -

# file names after -f / -o
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/ranges.txt"
expect "$tmp/ranges.txt" set add blocked -f "$tmp/r"
expect "$tmp/ranges.txt" stats -o "$tmp/ra"

# No module, no permission: no set names, and no error on the terminal.
# shellcheck disable=SC2317
nfguard() { echo "nfguard: set list: Operation not permitted" >&2; return 1; }
out=$(expect "" set destroy '' 2>&1)
if [ -z "$out" ]; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	echo "FAIL: without sets: $out"
fi

echo "completion: $passed passed, $failed failed"
[ "$failed" = 0 ]
