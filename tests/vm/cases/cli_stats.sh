#!/bin/bash
# nfguard stats on a real kernel: with all four modules loaded and a rule of
# each extension on the router (a rangeset set + rule, a named kconnlimit
# rule, SYNCOOKIE, RTCACHE), four forwarded pings and one TCP SYN move the
# counters, and --json, --prometheus and the text report show exactly the
# change (rangeset: 4 hits and 8 lookups for 4 requests + 4 replies;
# kconnlimit: 8 packets matched; rtcache: learnt; then syncookie: the SYN);
# the JSON validates against doc/nfguard-stats.schema.json and carries the
# same numbers as the Prometheus report, which a strict exposition-format
# parser accepts (tests/unit-user/check_stats.py). Then with xt_RTCACHE
# unloaded the command still succeeds (exit 0) and reports it as not loaded
# in all three formats; without CAP_NET_ADMIN (a user namespace) every
# loaded extension is reported with its error and the exit status is 1.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
PY=/usr/bin/python3
nfg_need nfguard ping unshare timeout $PY
nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE
nfg_topo_up

R() { nfg_router "$@"; }
R nfguard set create blk ipv4 || nfg_fail "set create"
R nfguard set add blk "$NFG_C4" 192.0.2.0/24 || nfg_fail "set add"
nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -m rangeset --match-set blk src || nfg_fail "rangeset rule"
nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -p icmp -m kconnlimit --kconnlimit-upto 100 --kconnlimit-name pings ||
	nfg_fail "kconnlimit rule"
nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING -i eth0 -p tcp --dport 5001 -j SYNCOOKIE || nfg_fail "SYNCOOKIE rule"
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A FORWARD -j RTCACHE || nfg_fail "RTCACHE rule"

out=$NFG_ARTIFACTS
# prom FILE METRIC LABELS: the sample's value ("" if there is none)
prom() { sed -n "s/^$2$3 //p" "$1"; }
rs() { prom "$1" "nfguard_rangeset_$2" "{set=\"blk\",family=\"ipv4\"}"; }
kcl() { prom "$1" "nfguard_kconnlimit_$2" '{id="[0-9]*",name="pings",family="ipv4"}'; }
snap() { # NAME: the JSON and Prometheus reports, one right after the other
	R nfguard stats --json >"$out/$1.json" || nfg_fail "stats --json ($1): exit $?"
	R nfguard stats --prometheus >"$out/$1.prom" || nfg_fail "stats --prometheus ($1): exit $?"
}

snap before
nfg_assert_eq 2 "$(rs "$out/before.prom" ranges)" "blk's ranges"
nfg_assert_eq 1 "$(rs "$out/before.prom" references)" "rules using blk"
for x in rangeset kconnlimit syncookie rtcache; do
	nfg_assert_eq 1 "$(prom "$out/before.prom" nfguard_extension_loaded "{extension=\"$x\"}")" "$x loaded"
done
h0=$(rs "$out/before.prom" hits_total) l0=$(rs "$out/before.prom" lookups_total)
m0=$(kcl "$out/before.prom" matched_total)
s0=$(prom "$out/before.prom" nfguard_syncookie_syn_seen_total)
g0=$(prom "$out/before.prom" nfguard_rtcache_learn_total)

nfg_assert_ok "4 pings through the router" nfg_client ping -c 4 -i 0.2 -W 5 "$NFG_S4"
snap after
nfg_assert_eq $((h0 + 4)) "$(rs "$out/after.prom" hits_total)" "blk hits: the 4 requests"
nfg_assert_eq $((l0 + 8)) "$(rs "$out/after.prom" lookups_total)" "blk lookups: requests and replies"
nfg_assert_eq $((m0 + 8)) "$(kcl "$out/after.prom" matched_total)" "kconnlimit rule pings: packets matched"
nfg_assert_ge "$(kcl "$out/after.prom" connections)" 1 "kconnlimit connections"
nfg_assert_ge "$(prom "$out/after.prom" nfguard_rtcache_learn_total)" $((g0 + 1)) "RTCACHE learn"

txt=$(R nfguard stats) || nfg_fail "stats (text): exit $?"
nfg_log "text report: $txt"
nfg_assert_match "set blk ipv4: ranges 2, maxelem [0-9]+, references 1, memory_bytes [0-9]+, lookups $((l0 + 8)), hits $((h0 + 4))" \
	"$txt" "text report of blk"
nfg_assert_match "rule [0-9]+ pings ipv4 src/32 upto: limit 100" "$txt" "text report of the kconnlimit rule"
# one SYN to a port nobody listens on (after the text report: the server's
# answer to the proxied handshake is one more lookup of blk)
nfg_client timeout 3 bash -c "exec 3<>/dev/tcp/$NFG_S4/5001" 2>/dev/null
snap syn
nfg_assert_ge "$(prom "$out/syn.prom" nfguard_syncookie_syn_seen_total)" $((s0 + 1)) "SYNCOOKIE syn_seen"
nfg_assert_eq "$s0" "$(prom "$out/after.prom" nfguard_syncookie_syn_seen_total)" "no SYN before"

# rangeset's per-set timeout, expiry and packet-path numbers: set dyn
# (default timeout 600) filled by -j RANGESET --add-set from one ping of the
# client; set exp with a range of timeout 1, polled until it has expired
t_sets=${EPOCHREALTIME/./}
R nfguard set create dyn ipv4 timeout 600 && R nfguard set create exp ipv4 ||
	nfg_fail "dyn/exp set create"
nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING -i eth0 -p icmp --icmp-type echo-request \
	-j RANGESET --add-set dyn src || nfg_fail "RANGESET rule"
# ds NAME: the three reports, kept in $P, $J, $T for `each` (read by
# builtins: each exec is slow under TCG)
ds() {
	snap "$1"
	R nfguard stats >"$out/$1.txt" || nfg_fail "stats ($1): exit $?"
	IFS= read -r -d '' P <"$out/$1.prom"
	IFS= read -r -d '' J <"$out/$1.json"
	IFS= read -r -d '' T <"$out/$1.txt"
}
# num KEY SET FMT: KEY of SET in the last reports' FMT (prom, json or txt)
num() {
	local m=$1 re
	case $1 in lookups|hits|expiries|packet_*) m=${1}_total ;; esac
	case $3 in
	prom) re="(^|"$'\n'")nfguard_rangeset_$m\\{set=\"$2\",family=\"ipv4\"\\} ([0-9]+)"$'\n'
	      [[ $P =~ $re ]] && echo "${BASH_REMATCH[2]}" ;;
	json) re="\\{\"name\":\"$2\",[^}]*\"$1\":([0-9]+)[,}]"
	      [[ $J =~ $re ]] && echo "${BASH_REMATCH[1]}" ;;
	txt) re="(^|"$'\n'")  set $2 ipv4: ([^"$'\n'"]*, )?$1 ([0-9]+)(,|"$'\n'")"
	      [[ $T =~ $re ]] && echo "${BASH_REMATCH[3]}" ;;
	esac
}
# each KEY VALUE SET WHAT: KEY of SET is VALUE in the three last reports
each() {
	local fmt
	for fmt in prom json txt; do
		nfg_assert_eq "$2" "$(num "$1" "$3" $fmt)" "$4 ($fmt $1)"
	done
}
ds dyn0
each timeout 600 dyn "dyn's default timeout"
for k in packet_adds packet_deletes packet_refusals dynamic expiries; do
	each $k 0 dyn "dyn before the ping"
done
R nfguard set add exp 192.0.2.77 timeout 1 || nfg_fail "add with timeout 1"
nfg_assert_ok "one ping adding its source to dyn" nfg_client ping -c 1 -W 5 "$NFG_S4"
expired() {
	local re=$'\n''nfguard_rangeset_expiries_total\{set="exp",family="ipv4"\} 1'$'\n'
	[[ $(R nfguard stats --prometheus) =~ $re ]]
}
nfg_wait_until 10 expired || nfg_fail "exp: expiries_total never became 1"
ds dyn1
each packet_adds 1 dyn "dyn after the ping"
each packet_deletes 0 dyn "dyn after the ping"
each packet_refusals 0 dyn "dyn after the ping"
# the entry is in the ranges or still pending in the hash, not both
nfg_assert_eq 1 $(($(num ranges dyn json) + $(num dynamic dyn json))) "dyn ranges + dynamic"
each expiries 1 exp "exp after its range expired"
each ranges 0 exp "exp after its range expired"
each timeout 0 exp "exp's default timeout"
nfg_log "per-set counters: $(((${EPOCHREALTIME/./} - t_sets) / 1000)) ms"

# xt_RTCACHE unloaded: reported absent, not an error
nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -F FORWARD || nfg_fail "flush mangle"
nfg_unload_modules xt_RTCACHE
snap unloaded
nfg_assert_eq 0 "$(prom "$out/unloaded.prom" nfguard_extension_loaded '{extension="rtcache"}')" "rtcache not loaded"
nfg_assert_eq "" "$(grep '^nfguard_rtcache_' "$out/unloaded.prom")" "no rtcache metrics"
nfg_assert_match '"rtcache":\{"loaded":false\}' "$(cat "$out/unloaded.json")" "JSON rtcache absent"
nfg_assert_ok "text report without xt_RTCACHE" R nfguard stats
nfg_assert_match "^rtcache: not loaded \(kernel module xt_RTCACHE\)$" "$(grep ^rtcache "$NFG_WORK/assert.out")" "text"

# no CAP_NET_ADMIN over the router's netns: every loaded extension fails, exit 1
rc=0
R unshare -U nfguard stats --json >"$out/eperm.json" 2>"$NFG_WORK/eperm.err" || rc=$?
nfg_assert_eq 1 "$rc" "exit status without permission"
nfg_assert_match '"rangeset":\{"loaded":true,"error":"[^"]+"\}' "$(cat "$out/eperm.json")" "JSON rangeset error"
nfg_assert_match '"rtcache":\{"loaded":false\}' "$(cat "$out/eperm.json")" "JSON rtcache still absent"
nfg_assert_match "nfguard: stats: syncookie: " "$(cat "$NFG_WORK/eperm.err")" "message on stderr"

# every report: schema, strict exposition format, same numbers in both
nfg_assert_ok "reports valid and consistent" $PY -B "$NFG_TOP/tests/unit-user/check_stats.py" \
	"$NFG_TOP/doc/nfguard-stats.schema.json" "$out"
nfg_log "$(tail -n 1 "$NFG_WORK/assert.out")"
