#!/bin/bash
# Netlink fuzz of nfg_syncookie (tests/fuzz/nlfuzz.c, family table "syncookie"):
# malformed requests (unknown commands, missing, short, long, unknown and
# foreign (reply-only) attributes, attributes past the end, nests within
# nests, prefixes beyond the family, addresses of neither 4 nor 16 bytes,
# timeouts of 0 or above 7 days, secrets of the wrong length, deletes of
# absent entries, the dump without NLM_F_DUMP) are each answered with an
# error; a huge batch of them in one sendmsg is acked request by request; an
# oversized ADD whose last address is bad is refused; allowlist dumps of 4000
# entries closed midway leak nothing; a user namespace without
# CAP_NET_ADMIN over the netns and an unprivileged user get EPERM for every
# command; a user namespace with its own netns has its own allowlist.
# Throughout, `nfguard syncookie allowlist save` (addresses and prefixes:
# the seconds left run down) and every counter of `nfguard syncookie stats`
# are unchanged, and so are the module's live objects. (The secret cannot be
# read back: SECRET_SET/ROTATE are only checked to be refused.) Seeded
# (printed): reproduce with NFG_FUZZ_SEED, run longer with NFG_FUZZ_ITERS.
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"
. "$NFG_TOP/tests/fuzz/lib.sh"

nfg_need nfg-nlfuzz nfguard unshare setpriv
iters=$(nfg_knob NFG_FUZZ_ITERS 300)
seed=$(nfg_knob NFG_FUZZ_SEED 20261203)
nfg_log "iterations $iters seed $seed"
live=/sys/module/xt_SYNCOOKIE/parameters/live_objects
F=(-f nfg_syncookie)
NS=nfg-fzs

nfg_load_modules xt_SYNCOOKIE
# (every netns has an allowlist table: the initial one's is counted too)
objs_init=$(cat $live)
ip netns add $NS || nfg_fail "netns"
nfg_on_exit "ip netns del $NS 2>/dev/null"
in_ns() { ip netns exec $NS "$@"; }
# 4000 entries (dumps of several messages), IPv4 and IPv6, with prefixes
{
	seq 0 2999 | awk '{ printf "add 10.%d.%d.0/24 timeout 86400\n", int($1 / 250) + 1, $1 % 250 }'
	seq 0 999 | awk '{ printf "add 2001:db8:%x::/48 timeout 86400\n", $1 }'
} >"$NFG_WORK/al"
nfg_assert_ok "allowlist" in_ns nfguard syncookie allowlist restore -f "$NFG_WORK/al"

NFZ_IN="nfguard syncookie allowlist save | sed 's/ timeout [0-9]*\$//' | sort && nfguard syncookie stats"
NFZ_STATE="ip netns exec $NS sh -c \"$NFZ_IN\""
nfz_state_save
nfg_assert_eq 4000 "$(grep -c '^add ' "$NFG_WORK/state.0")" "allowlist entries"
nfg_assert_match '^allowlist_entries 4000$' "$(cat "$NFG_WORK/state.0")" "stats"
objs0=$(cat $live)
nfg_log "$objs0 live objects"

nfz "malformed requests" in_ns nfg-nlfuzz "${F[@]}" -s "$seed" -n "$iters" -b 100 -C "$NFZ_IN" fuzz
nfz "huge batch" in_ns nfg-nlfuzz "${F[@]}" -s "$((seed + 1))" -n "$iters" -C "$NFZ_IN" batch
nfz "abandoned dumps" in_ns nfg-nlfuzz "${F[@]}" -s "$seed" -n 20 -C "$NFZ_IN" abandon
nfz_same_state "privileged passes"

nfz "user namespace" in_ns unshare -U -r nfg-nlfuzz "${F[@]}" unpriv
nfz "unprivileged user" in_ns setpriv --reuid=65534 --regid=65534 --clear-groups nfg-nlfuzz "${F[@]}" unpriv
nfz_same_state "unprivileged passes"

# Its own user and network namespace: its own, empty allowlist; fuzz it
# with an entry of its own.
nfz "own user+net namespace" in_ns unshare -U -r -n sh -c '
	[ -z "$(nfguard syncookie allowlist save)" ] || { echo "FAIL: another netns'\''s allowlist seen"; exit 1; }
	nfguard syncookie allowlist add 10.9.0.0/16 timeout 86400 &&
	exec nfg-nlfuzz -f nfg_syncookie -s "$1" -n "$2" -b 100 \
		-C "nfguard syncookie allowlist save | sed \"s/ timeout [0-9]*\$//\"" fuzz' \
	sh "$((seed + 2))" "$((iters / 4))"
nfz_same_state "own-netns pass"

nfg_wait_until 30 nfz_live_is $live "$objs0" || nfg_fail "live objects: $objs0 before, $(cat $live) after"
# still usable
nfg_assert_ok "add after the fuzz" in_ns nfguard syncookie allowlist add 192.0.2.1
nfg_assert_match '^192\.0\.2\.1/32 ' "$(in_ns nfguard syncookie allowlist list)" "entry added after the fuzz"
ip netns del $NS
nfg_wait_until 30 nfz_live_is $live "$objs_init" ||
	nfg_fail "$(cat $live) live objects after the netns went, $objs_init before it was made"
