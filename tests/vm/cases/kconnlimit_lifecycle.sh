#!/bin/bash
# Nothing leaks: rule tables with remembered connections are freed when the
# rule is deleted (legacy and nft), when their network namespace is deleted
# with rules and connections in place, and at rmmod; the module's
# live_objects counter (tables + keys + remembered connections) returns to 0
# each time, repeated so a per-cycle leak adds up. The cap (per netns): with
# max_conns=3, the 4th new connection is dropped (not refused: no answer)
# and counted as a cap hit; once one closes, there is room again.
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need socat iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft

nfg_load_modules xt_kconnlimit
live=/sys/module/xt_kconnlimit/parameters/live_objects
nfg_assert_eq 0 "$(cat $live)" "live objects after load"
live_is() { [ "$(cat "$live")" = "$1" ]; }

# conns NS ADDR N: hold N connections to the echo server of NS on ADDR
conns() {
	local i
	for i in $(seq "$3"); do
		nfg_assert_ok "connection $i to $2 in $1" nfg_conn_open "$1-$2-$i" "$1" "$2" 7000 30
	done
}

for cycle in 1 2 3; do
	for ns in nfg-kl1 nfg-kl2; do
		ip netns add $ns || nfg_fail "netns $ns"
		ip -n $ns link set lo up
		ip -n $ns addr add ::1/128 dev lo 2>/dev/null
		# OUTPUT: over loopback, that is where the packet creating a
		# connection passes (its conntrack is confirmed before INPUT)
		{ nfg_ipt $ns legacy 4 -A OUTPUT -p tcp --syn -m kconnlimit --kconnlimit-upto 50 --kconnlimit-name l4 -j ACCEPT &&
		nfg_ipt $ns nft 4 -A OUTPUT -p tcp --syn -m kconnlimit --kconnlimit-above 50 --kconnlimit-daddr -j DROP &&
		nfg_ipt $ns legacy 6 -A OUTPUT -p tcp -m kconnlimit --kconnlimit-above 50 --kconnlimit-mask 64 -j DROP; } ||
			nfg_fail "cycle $cycle: rules in $ns"
		nfg_echo_server $ns 7000
		conns $ns 127.0.0.1 3
		conns $ns ::1 2
	done
	# per ns: 3 tables, 3 keys, 3+3+2 remembered connections
	nfg_assert_eq 28 "$(cat $live)" "cycle $cycle: live objects with rules and connections"
	# rule deletion frees its table and releases its connections
	before=$(cat $live)
	nfg_ipt nfg-kl1 legacy 6 -D OUTPUT -p tcp -m kconnlimit --kconnlimit-above 50 --kconnlimit-mask 64 -j DROP ||
		nfg_fail "delete legacy v6 rule"
	nfg_wait_until 10 eval "[ \$(cat $live) -le $((before - 4)) ]" ||
		nfg_fail "cycle $cycle: deleting a rule freed $((before - $(cat $live))) objects, not 4"
	before=$(cat $live)
	nfg_ipt nfg-kl1 nft 4 -D OUTPUT -p tcp --syn -m kconnlimit --kconnlimit-above 50 --kconnlimit-daddr -j DROP ||
		nfg_fail "delete nft rule"
	nfg_wait_until 10 eval "[ \$(cat $live) -le $((before - 5)) ]" ||
		nfg_fail "cycle $cycle: deleting an nft rule freed $((before - $(cat $live))) objects, not 5"
	# netns teardown with rules and held connections in place
	for id in "${!NFG_CONN_PID[@]}"; do nfg_conn_close "$id"; done
	for pid in "${NFG_BG_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
	NFG_BG_PIDS=()
	ip netns del nfg-kl1
	ip netns del nfg-kl2
	nfg_wait_until 30 live_is 0 || nfg_fail "cycle $cycle: $(cat $live) live objects left after netns teardown"
done

# the global cap
nfg_topo_up
nfg_echo_server "$NFG_NS_S" 7000
echo 3 >/sys/module/xt_kconnlimit/parameters/max_conns || nfg_fail "set max_conns"
nfg_ipt "$NFG_NS_R" nft 4 -A FORWARD -p tcp --syn -m kconnlimit --kconnlimit-above 100 --kconnlimit-name cap \
	-m comment --comment kcl-cap -j ACCEPT || nfg_fail "cap rule"
for i in 1 2 3; do nfg_assert_ok "connection $i under the cap" nfg_conn_open c$i "$NFG_NS_C" "$NFG_S4" 7000 30; done
nfg_assert_fail "4th connection dropped at the cap" nfg_conn_open c4 "$NFG_NS_C" "$NFG_S4" 7000 2
line=$(nfg_router nfguard kconnlimit list cap | sed -n 2p)
nfg_log "$line"
caphits=$(awk '{ print $12 }' <<<"$line")
nfg_assert_ge "$caphits" 1 "cap hits counted"
nfg_assert_eq 3 "$(awk '{ print $7 }' <<<"$line")" "remembered connections at the cap"
nfg_assert_match '^# remembered connections \(all rules\): 3, cap 3$' \
	"$(nfg_router nfguard kconnlimit list)" "global total at the cap"
nfg_conn_close c1
nfg_assert_ok "room again after a close" nfg_wait_until 60 nfg_conn_open c5 "$NFG_NS_C" "$NFG_S4" 7000 10
echo 1048576 >/sys/module/xt_kconnlimit/parameters/max_conns
for id in c2 c3 c5; do nfg_conn_close $id; done
nfg_ipt "$NFG_NS_R" nft 4 -F FORWARD
nfg_topo_down
nfg_wait_until 30 live_is 0 || nfg_fail "$(cat $live) live objects left"

# rmmod with nothing left, reload clean
nfg_unload_modules xt_kconnlimit
[ -d /sys/module/xt_kconnlimit ] && nfg_fail "xt_kconnlimit still loaded"
nfg_load_modules xt_kconnlimit
nfg_assert_eq 0 "$(cat $live)" "live objects after reload"
nfg_unload_modules xt_kconnlimit
