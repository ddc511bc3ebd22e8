#!/bin/bash
# Netlink fuzz of every nfguard genetlink family (today nfg_rangeset):
# malformed requests (unknown commands, missing, short, long, unknown and
# foreign attributes, attributes past the end, nests within nests, bad
# elements after good ones, semantic errors) are each answered with an error
# and leave `nfguard set save` unchanged (checked every 100 requests); a huge
# batch of them in one sendmsg is acked request by request; an oversized ADD
# whose last range is bad changes nothing; dumps closed midway leak nothing;
# a user namespace without CAP_NET_ADMIN over the netns and an unprivileged
# user get EPERM for every command; a user namespace with its own netns may
# fuzz its own sets without touching ours. Seeded (printed): reproduce with
# NFG_FUZZ_SEED, run longer with NFG_FUZZ_ITERS (tests/stress/knobs.sh).
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"

nfg_need nfg-nlfuzz nfguard unshare setpriv iptables-legacy ip6tables-nft
iters=$(nfg_knob NFG_FUZZ_ITERS 800)
seed=$(nfg_knob NFG_FUZZ_SEED 20261203)
nfg_log "iterations $iters seed $seed"
live=/sys/module/xt_rangeset/parameters/live_objects

nfg_load_modules
# The sets under fuzz: one referenced by a legacy rule, one by an nft rule,
# and a large one for abandoned dumps.
seq 0 19999 | awk '{ printf "10.%d.%d.%d\n", int($1 / 5000) + 100, int($1 / 100) % 50, ($1 % 100) * 2 }' >"$NFG_WORK/big"
nfg_assert_ok "sets" eval 'nfguard set create fz4 ipv4 maxelem 5000 &&
	nfguard set add fz4 10.0.0.0/8 192.168.1.1 172.16.0.1-172.16.0.9 &&
	nfguard set create fz6 ipv6 &&
	nfguard set add fz6 2001:db8::/32 fd00::1 &&
	nfguard set create big ipv4 &&
	nfguard set add big -f "$NFG_WORK/big"'
nfg_assert_ok "rules" eval 'iptables-legacy -w -A INPUT -m rangeset --match-set fz4 src -j ACCEPT &&
	ip6tables-nft -w -A INPUT -m rangeset --match-set fz6 src -j ACCEPT'
nfguard set save >"$NFG_WORK/save.0" || nfg_fail "save"
objs0=$(cat $live)

fuzz() { # name expected-output... -- args
	local what=$1
	shift
	nfg_log "$what"
	if ! "$@" >"$NFG_WORK/fuzz.out" 2>&1; then
		head -n 1 "$NFG_WORK/fuzz.out" | sed 's/^/    | /' >&2
		grep -m 3 -A 12 '^FAIL' "$NFG_WORK/fuzz.out" | sed 's/^/    | /' >&2
		tail -n 1 "$NFG_WORK/fuzz.out" | sed 's/^/    | /' >&2
		nfg_fail "$what: nfg-nlfuzz failed"
	fi
	tail -n 2 "$NFG_WORK/fuzz.out" | sed 's/^/    /'
}
same_state() {
	nfguard set save >"$NFG_WORK/save.1" || nfg_fail "$1: save"
	cmp -s "$NFG_WORK/save.0" "$NFG_WORK/save.1" || {
		diff "$NFG_WORK/save.0" "$NFG_WORK/save.1" | head -n 20 >&2
		nfg_fail "$1: sets changed"
	}
}

T=(-t fz4:4 -t fz6:6)
fuzz "malformed requests" nfg-nlfuzz -s "$seed" -n "$iters" -b 100 -C "nfguard set save" "${T[@]}" fuzz
fuzz "huge batch" nfg-nlfuzz -s "$((seed + 1))" -n "$iters" -C "nfguard set save" "${T[@]}" batch
fuzz "abandoned dumps" nfg-nlfuzz -s "$seed" -n 40 -C "nfguard set save" -t big:4 abandon
same_state "privileged passes"

# No CAP_NET_ADMIN over the initial netns: every command, dumps included, EPERM.
fuzz "user namespace" unshare -U -r nfg-nlfuzz "${T[@]}" unpriv
fuzz "unprivileged user" setpriv --reuid=65534 --regid=65534 --clear-groups nfg-nlfuzz "${T[@]}" unpriv
same_state "unprivileged passes"

# A user namespace with its own netns administers its own sets: fuzz them
# there; ours must not notice.
fuzz "own user+net namespace" unshare -U -r -n sh -c '
	nfguard set create fz4 ipv4 && nfguard set add fz4 10.9.0.0/16 &&
	nfguard set create fz6 ipv6 && nfguard set add fz6 2001:db8:9::/48 &&
	exec nfg-nlfuzz -s "$1" -n "$2" -b 100 -C "nfguard set save" -t fz4:4 -t fz6:6 fuzz' \
	sh "$((seed + 2))" "$((iters / 4))"
same_state "own-netns pass"

# The kernel still works: rules intact, sets usable, nothing leaked.
nfg_assert_match 'rangeset --match-set fz4 src' "$(iptables-legacy -S INPUT)" "legacy rule"
nfg_assert_match 'rangeset --match-set fz6 src' "$(ip6tables-nft -S INPUT)" "nft rule"
nfg_assert_ok "test fz4" nfguard set test fz4 10.1.2.3
nfg_wait_until 30 eval '[ "$(cat '$live')" = "'"$objs0"'" ]' ||
	nfg_fail "live objects: $objs0 before, $(cat $live) after"
nfg_assert_ok "remove rules" eval 'iptables-legacy -w -F INPUT && ip6tables-nft -w -F INPUT'
nfg_assert_ok "destroy" eval 'nfguard set destroy fz4 && nfguard set destroy fz6 && nfguard set destroy big'
nfg_wait_until 30 eval '[ "$(cat '$live')" = 0 ]' || nfg_fail "$(cat $live) live objects after destroy"
