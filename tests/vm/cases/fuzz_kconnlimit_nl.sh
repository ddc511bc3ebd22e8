#!/bin/bash
# Netlink fuzz of nfg_kconnlimit (tests/fuzz/nlfuzz.c, family table "kconnlimit"):
# malformed LIST/TOP dumps (unknown commands, missing NLM_F_DUMP, short,
# long, unknown and foreign attributes, attributes past the end, nests within
# nests, TOP counts out of range, names too long or without NUL) are each
# answered with an error; a huge batch of them in one sendmsg is acked
# request by request; an oversized TOP whose last attribute is bad is
# refused; dumps over 150 rules closed midway leak nothing; a user namespace
# without CAP_NET_ADMIN over the netns and an unprivileged user get EPERM for
# every command; a user namespace with its own netns sees only its own rules.
# Throughout, `nfguard kconnlimit list` and `top` are unchanged and the
# module's live objects stay what they were. Seeded (printed): reproduce with
# NFG_FUZZ_SEED, run longer with NFG_FUZZ_ITERS (tests/stress/knobs.sh).
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/stress/knobs.sh"
. "$NFG_TOP/tests/fuzz/lib.sh"

nfg_need nfg-nlfuzz nfguard unshare setpriv socat iptables-legacy-restore ip6tables-nft
iters=$(nfg_knob NFG_FUZZ_ITERS 300)
seed=$(nfg_knob NFG_FUZZ_SEED 20261203)
nfg_log "iterations $iters seed $seed"
live=/sys/module/xt_kconnlimit/parameters/live_objects
F=(-f nfg_kconnlimit)
NS=nfg-fzk

nfg_load_modules xt_kconnlimit
ip netns add $NS || nfg_fail "netns"
nfg_on_exit "ip netns del $NS 2>/dev/null"
ip -n $NS link set lo up
ip -n $NS addr add ::1/128 dev lo 2>/dev/null
# 150 named rules (dumps of several messages), plus rules on loopback with
# held connections: keys and connections for TOP.
{
	echo '*filter'
	for i in $(seq 0 149); do
		echo "-A INPUT -p tcp --dport 9 -m kconnlimit --kconnlimit-above 1000 --kconnlimit-mask 24 --kconnlimit-name fz$i -j ACCEPT"
	done
	echo "-A OUTPUT -p tcp --dport 7000 -m kconnlimit --kconnlimit-upto 100 --kconnlimit-name held -j ACCEPT"
	echo COMMIT
} >"$NFG_WORK/rules"
nfg_assert_ok "rules" nfg_in $NS iptables-legacy-restore -w --noflush "$NFG_WORK/rules"
nfg_assert_ok "nft rule" nfg_ipt $NS nft 6 -A OUTPUT -p tcp --dport 7000 -m kconnlimit --kconnlimit-upto 100 \
	--kconnlimit-mask 64 --kconnlimit-name held6 -j ACCEPT
nfg_echo_server $NS 7000
for i in 1 2 3; do nfg_assert_ok "connection $i" nfg_conn_open c$i $NS 127.0.0.1 7000; done
for i in 4 5; do nfg_assert_ok "connection $i" nfg_conn_open c$i $NS ::1 7000; done

NFZ_IN="nfguard kconnlimit list && nfguard kconnlimit top -n 20"
NFZ_STATE="ip netns exec $NS sh -c '$NFZ_IN'"
in_ns() { ip netns exec $NS "$@"; }
# (the held connections' last ACKs may still be on their way: settled first)
nfg_wait_until 30 nfz_state_settled || nfg_fail "kconnlimit state does not settle"
nfg_assert_match '^[0-9]+ held ipv4 src/32 upto:100 1 3 ' "$(cat "$NFG_WORK/state.0")" "held rule listed"
objs0=$(cat $live)
nfg_log "$(grep -c . "$NFG_WORK/state.0") state lines, $objs0 live objects"

T=(-t fz7:4 -t held:4 -t held6:6)
nfz "malformed requests" in_ns nfg-nlfuzz "${F[@]}" -s "$seed" -n "$iters" -b 100 -C "$NFZ_IN" "${T[@]}" fuzz
nfz "huge batch" in_ns nfg-nlfuzz "${F[@]}" -s "$((seed + 1))" -n "$iters" -C "$NFZ_IN" "${T[@]}" batch
nfz "abandoned dumps" in_ns nfg-nlfuzz "${F[@]}" -s "$seed" -n 20 -C "$NFZ_IN" abandon
nfz_same_state "privileged passes"

# No CAP_NET_ADMIN over the netns: every command (both are dumps) EPERM.
nfz "user namespace" in_ns unshare -U -r nfg-nlfuzz "${F[@]}" "${T[@]}" unpriv
nfz "unprivileged user" in_ns setpriv --reuid=65534 --regid=65534 --clear-groups nfg-nlfuzz "${F[@]}" "${T[@]}" unpriv
nfz_same_state "unprivileged passes"

# Its own user and network namespace: no rules there, nothing of ours seen.
nfz "own user+net namespace" in_ns unshare -U -r -n sh -c '
	[ -z "$(nfguard kconnlimit list | sed 1d | grep -v "^#")" ] || { echo "FAIL: rules of another netns listed"; exit 1; }
	exec nfg-nlfuzz -f nfg_kconnlimit -s "$1" -n "$2" -b 100 -C "nfguard kconnlimit list" fuzz' \
	sh "$((seed + 2))" "$((iters / 4))"
nfz_same_state "own-netns pass"

nfg_wait_until 30 nfz_live_is $live "$objs0" || nfg_fail "live objects: $objs0 before, $(cat $live) after"
for i in 1 2 3 4 5; do nfg_assert_ok "connection $i still echoes" nfg_conn_send c$i ping; done
for i in 1 2 3 4 5; do nfg_conn_close c$i; done
for pid in "${NFG_BG_PIDS[@]}"; do kill -KILL "$pid" && wait "$pid"; done 2>/dev/null
NFG_BG_PIDS=()
ip netns del $NS
nfg_wait_until 30 nfz_live_is $live 0 || nfg_fail "$(cat $live) live objects after the netns went"
