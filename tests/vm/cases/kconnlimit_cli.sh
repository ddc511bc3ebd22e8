#!/bin/bash
# nfguard kconnlimit list/top show what the tables hold, with real TCP
# connections through a router: keys are the masked addresses, counts follow
# connections as they open, close (the count drops promptly, without a new
# connection for the key), and are deleted by conntrack -D / -F; top sorts by
# count, filters by --kconnlimit-name, honours -n, prints JSON, and keeps
# answering (well-formed, sorted) while connections churn. Per-rule counters
# (matched, over limit, inserts, GC evictions) and /proc/net/stat follow.
# Keys in another conntrack zone show their zone in top (text and JSON).
# iptables-save -> iptables-restore round trips (legacy and nft, v4 and v6).
# nfg-case-timeout: 1200
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need socat conntrack python3 iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft

nfg_load_modules xt_kconnlimit
nfg_topo_up
port=5001
nfg_echo_server "$NFG_NS_S" $port
ip -n "$NFG_NS_C" addr add 10.0.1.3/24 dev eth0 || nfg_fail "client 2nd IPv4"
ip -n "$NFG_NS_C" addr add fd00:1::3/64 dev eth0 nodad || nfg_fail "client 2nd IPv6"

kcl() { nfg_router nfguard kconnlimit "$@"; }
# field NAME COLUMN: a column of rule NAME's line in "list"
field() {
	local col
	case $2 in keys) col=6 ;; conns) col=7 ;; matched) col=8 ;; over) col=9 ;;
	inserts) col=10 ;; evict) col=11 ;; *) nfg_fail "field $2" ;; esac
	kcl list "$1" | awk -v c=$col 'NR == 2 { print $c }'
}
conns_are() { [ "$(field "$1" conns)" = "$2" ]; }
try() { # ID SRC DST
	if [[ $3 == *:* ]]; then
		nfg_conn_open "$1" "$NFG_NS_C" "$3" "$port,bind=[$2]" 30
	else
		nfg_conn_open "$1" "$NFG_NS_C" "$3" "$port,bind=$2" 30
	fi
}

nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -p tcp --syn --dport $port -m kconnlimit --kconnlimit-above 5 \
	--kconnlimit-mask 24 --kconnlimit-name web -j REJECT --reject-with tcp-reset || nfg_fail "rule web"
nfg_ipt "$NFG_NS_R" nft 6 -A FORWARD -p tcp --syn --dport $port -m kconnlimit --kconnlimit-upto 100 \
	--kconnlimit-mask 128 --kconnlimit-name web6 -j ACCEPT || nfg_fail "rule web6"
nfg_ipt "$NFG_NS_R" nft 4 -A FORWARD -p tcp --dport $port -m kconnlimit --kconnlimit-above 1000 \
	--kconnlimit-daddr || nfg_fail "unnamed rule"

out=$(kcl list) || nfg_fail "list"
nfg_log "$out"
nfg_assert_eq 3 "$(grep -c '^[0-9]' <<<"$out")" "three instances listed"
nfg_assert_match '^[0-9]+ web ipv4 src/24 above:5 0 0 ' "$out" "web before traffic"
nfg_assert_match '^[0-9]+ web6 ipv6 src/128 upto:100 0 0 ' "$out" "web6 before traffic"
nfg_assert_match '^[0-9]+ - ipv4 dst/32 above:1000 0 0 ' "$out" "unnamed rule"
nfg_assert_match '^# remembered connections \(all rules\): 0, cap 1048576$' "$out" "global line"

# --- counts follow connections: 3 from .2, 2 from .3, all in 10.0.1.0/24
for i in 1 2 3; do nfg_assert_ok "conn a$i" try a$i $NFG_C4 $NFG_S4; done
for i in 1 2; do nfg_assert_ok "conn b$i" try b$i 10.0.1.3 $NFG_S4; done
nfg_assert_fail "6th connection of the /24 refused" try x 10.0.1.3 $NFG_S4
# the refused SYN's conntrack counted for a moment: gone within a GC pass
nfg_wait_until 20 conns_are web 5 || nfg_fail "web: $(field web conns) connections, not 5"
nfg_assert_eq 1 "$(field web keys)" "web: one key"
nfg_assert_eq 6 "$(field web inserts)" "web: six inserts (the refused SYN too)"
nfg_assert_ge "$(field web over)" 1 "web: over-limit packets"
nfg_assert_ge "$(field web matched)" 1 "web: matched packets"
top=$(kcl top web) || nfg_fail "top web"
nfg_assert_eq "10.0.1.0/24 5" "$(sed -n 2p <<<"$top")" "top web: the /24 with 5"
nfg_assert_match '^# [0-9]+ web ipv4 src/24 above:5: 1 keys, 5 connections$' "$top" "top header"
# the unnamed rule (no --syn, above 1000) let the refused SYN through: its
# unconfirmed conntrack counts there until its pending grace (pending_ms) ends
server_has_5() { kcl top | grep -qx '10\.0\.2\.2 5'; }
nfg_wait_until 20 server_has_5 || nfg_fail "unnamed daddr rule: the server not at 5: $(kcl top)"
nfg_assert_match '^[0-9]+ web ipv4 src/24 >5 1 5 ' "$(nfg_router cat /proc/net/stat/nfguard_kconnlimit)" \
	"/proc/net/stat/nfguard_kconnlimit"

# --- closing: the count drops by itself (GC worker), no new connection needed
nfg_conn_close a1
nfg_conn_close b1
nfg_wait_until 20 conns_are web 3 || nfg_fail "web: count after closing two is $(field web conns), not 3"
nfg_assert_ge "$(field web evict)" 2 "web: GC evictions counted"
nfg_assert_eq "10.0.1.0/24 3" "$(kcl top web | sed -n 2p)" "top after closing"
# conntrack -D of one client, then -F
nfg_router conntrack -D -s 10.0.1.3 >/dev/null 2>&1 || nfg_fail "conntrack -D"
nfg_wait_until 20 conns_are web 2 || nfg_fail "web: count after conntrack -D is $(field web conns), not 2"
nfg_router conntrack -F >/dev/null 2>&1 || nfg_fail "conntrack -F"
nfg_wait_until 20 conns_are web 0 || nfg_fail "web: count after conntrack -F is $(field web conns), not 0"
nfg_assert_eq 0 "$(field web keys)" "web: no key left"
for id in a2 a3 b2; do nfg_conn_close $id; done

# --- IPv6 rule, top -n and ordering across keys
for i in 1 2 3; do nfg_assert_ok "v6 conn c$i" try c$i $NFG_C6 $NFG_S6; done
nfg_assert_ok "v6 conn d1" try d1 fd00:1::3 $NFG_S6
top=$(kcl top web6 -n 1)
nfg_assert_eq 2 "$(wc -l <<<"$top")" "top -n 1: header and one key"
nfg_assert_eq "fd00:1::2 3" "$(sed -n 2p <<<"$top")" "top web6: the busiest address first"
nfg_assert_eq "fd00:1::3 1" "$(kcl top web6 | sed -n 3p)" "top web6: second key"
kcl top web6 --json >"$NFG_WORK/top.json" || nfg_fail "top --json"
python3 - "$NFG_WORK/top.json" <<'EOF' || nfg_fail "JSON output: $(cat "$NFG_WORK/top.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d) == 1 and d[0]["name"] == "web6" and d[0]["mode"] == "upto", d
assert d[0]["connections"] == 4 and d[0]["keys"] == 2, d
assert [(e["key"], e["connections"]) for e in d[0]["top"]] == [("fd00:1::2", 3), ("fd00:1::3", 1)], d
EOF
kcl list --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d) == 3, d' ||
	nfg_fail "list --json"
for id in c1 c2 c3 d1; do nfg_conn_close $id; done

# --- errors
out=$(kcl top nosuch 2>&1) && nfg_fail "top of an unknown name succeeded"
nfg_assert_match 'no kconnlimit rule named "nosuch"' "$out" "unknown name"
out=$(kcl top web -n 0 2>&1) && nfg_fail "top -n 0 succeeded"
nfg_assert_match '1 to 10000' "$out" "-n 0"
out=$(kcl frob 2>&1) && nfg_fail "unknown sub-command succeeded"

# --- top while connections churn: every answer well-formed and sorted
inserted() { [ "$(field web inserts)" -gt "$1" ]; }
ins=$(field web inserts)
nfg_bg "$NFG_NS_C" bash -c "while :; do
	echo x | socat -t 0.1 - TCP4:$NFG_S4:$port,bind=10.0.1.\$((2 + RANDOM % 2)),connect-timeout=5 >/dev/null 2>&1
done"
churn=$NFG_LAST_PID
for i in $(seq 20); do
	# the rounds start once connections are churning
	[ "$i" -gt 1 ] || nfg_wait_until 30 inserted "$ins" || nfg_fail "no connection churns"
	top=$(kcl top web) || nfg_fail "top during churn (round $i)"
	# (awk, not python: 30 python starts cost ~40 s of a TCG guest)
	printf '%s\n' "$top" | awk '
		NR == 1 { if ($0 !~ /^# [0-9]+ web ipv4 src\/24 above:5: [0-9]+ keys, [0-9]+ connections$/) exit 1; next }
		{ if ($0 !~ /^10\.0\.1\.0\/24 [0-9]+$/) exit 1; if (++n > 1 && $2 > prev) exit 1; prev = $2 }
		END { if (n > 1) exit 1 }' || nfg_fail "top during churn malformed or unsorted: $top"
done
nfg_log "top answered 20 times while $(($(field web inserts) - ins)) connections churned"
kill "$churn" 2>/dev/null
wait "$churn" 2>/dev/null
nfg_wait_until 30 conns_are web 0 || nfg_fail "web: $(field web conns) connections left after the churn"

# --- zones: a key is a masked address in one conntrack zone (each zone
# counts apart); top shows the zone of each key (text: when not 0)
zrules=("-s 10.0.1.3 -p tcp --dport $port" "-d 10.0.1.3 -p tcp --sport $port")
for r in "${zrules[@]}"; do
	# shellcheck disable=SC2086
	nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING $r -j CT --zone 7 || nfg_fail "CT --zone rule"
done
nfg_assert_ok "zone conn z1" try z1 10.0.1.3 $NFG_S4
nfg_assert_ok "zone conn z2" try z2 10.0.1.3 $NFG_S4
nfg_assert_ok "zone conn z3" try z3 $NFG_C4 $NFG_S4
top=$(kcl top web) || nfg_fail "top web (zones)"
nfg_log "$top"
nfg_assert_eq "10.0.1.0/24 2 zone 7" "$(sed -n 2p <<<"$top")" "top web: the /24 in zone 7 first"
nfg_assert_eq "10.0.1.0/24 1" "$(sed -n 3p <<<"$top")" "top web: the /24 in the default zone"
kcl top web --json >"$NFG_WORK/topz.json" || nfg_fail "top --json (zones)"
python3 - "$NFG_WORK/topz.json" <<'EOF' || nfg_fail "JSON zones: $(cat "$NFG_WORK/topz.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert [(e["key"], e["zone"], e["connections"]) for e in d[0]["top"]] == \
	[("10.0.1.0/24", 7, 2), ("10.0.1.0/24", 0, 1)], d
EOF
for id in z1 z2 z3; do nfg_conn_close $id; done
for r in "${zrules[@]}"; do
	# shellcheck disable=SC2086
	nfg_ipt "$NFG_NS_R" legacy 4 -t raw -D PREROUTING $r -j CT --zone 7 || nfg_fail "delete CT --zone rule"
done
nfg_wait_until 30 conns_are web 0 || nfg_fail "web: $(field web conns) connections left after the zones part"

# --- save/restore round trips
for v in legacy nft; do
	for fam in 4 6; do
		bin=$([ $fam = 4 ] && echo iptables || echo ip6tables)-$v
		ip netns add nfg-ksr || nfg_fail "netns"
		for r in "--kconnlimit-above 3 --kconnlimit-mask 24 --kconnlimit-saddr --kconnlimit-name a" \
			"--kconnlimit-upto 10 --kconnlimit-mask 0 --kconnlimit-daddr" \
			"--kconnlimit-above 0 --kconnlimit-mask $([ $fam = 4 ] && echo 32 || echo 128) --kconnlimit-saddr"; do
			# shellcheck disable=SC2086
			ip netns exec nfg-ksr "$bin" -A INPUT -p tcp -m kconnlimit $r -j DROP || nfg_fail "$bin rule $r"
		done
		ip netns exec nfg-ksr "$bin"-save | grep -v '^#' | sed 's/ \[[0-9]*:[0-9]*\]$//' >"$NFG_WORK/s1"
		ip netns exec nfg-ksr "$bin" -F INPUT
		ip netns exec nfg-ksr "$bin"-restore <"$NFG_WORK/s1" || nfg_fail "$bin-restore"
		ip netns exec nfg-ksr "$bin"-save | grep -v '^#' | sed 's/ \[[0-9]*:[0-9]*\]$//' >"$NFG_WORK/s2"
		nfg_assert_eq 3 "$(grep -c kconnlimit "$NFG_WORK/s2")" "$bin: rules after restore"
		cmp -s "$NFG_WORK/s1" "$NFG_WORK/s2" ||
			nfg_fail "$bin: save after restore differs: $(diff "$NFG_WORK/s1" "$NFG_WORK/s2")"
		nfg_assert_match '-A INPUT -p tcp -m kconnlimit --kconnlimit-above 3 --kconnlimit-mask 24 --kconnlimit-saddr --kconnlimit-name a -j DROP' \
			"$(cat "$NFG_WORK/s2")" "$bin: saved form"
		ip netns del nfg-ksr
	done
done
