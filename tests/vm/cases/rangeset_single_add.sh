#!/bin/bash
# nfguard set add/del of one address on a set of 100k ranges goes through
# the set's hash, as a packet-path update (issue 29): each one is a member at
# once (`set test`, a packet through a rule), the fold work (once the set has
# been quiet for a second) or the next listing publishes them (Dynamic back
# to 0, Ranges = 100k + N), deletes take them out
# again, nothing is counted as a packet-path update. The time per add and per
# delete is logged beside ipset's (report only: under TCG both are mostly the
# tools' process start; ipset's hash insert does not depend on the set's size,
# so its set is small).
# nfg-case-timeout: 600
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need ipset python3 ping

nfg_load_modules
nfg_topo_up
rs() { nfg_router nfguard set "$@"; }
hdr() { rs list "$1" | sed -n "s/^$2: //p"; }	# SET FIELD
absent() { rs test "$1" "$2" >/dev/null; [ $? = 1 ]; }	# 1: not in the set
ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
N=40 COUNT=100000

python3 "$NFG_TOP/tests/bench/rangeset-gen.py" -n $COUNT "$NFG_WORK/data" >/dev/null ||
	nfg_fail "rangeset-gen.py"
rs create big ipv4 maxelem 200000 && rs add big -f "$NFG_WORK/data/cidrs.txt" || nfg_fail "load"
nfg_assert_eq $COUNT "$(hdr big Ranges)" "ranges loaded"
# a packet from the client is dropped once its address is in the set
nfg_ipt "$NFG_NS_R" legacy 4 -A FORWARD -i eth0 -m rangeset --match-set big src \
	-m comment --comment big -j DROP || nfg_fail "rule"
nfg_wait_until 30 nfg_client ping -c 1 -W 1 $NFG_S4 >/dev/null || nfg_fail "server unreachable"

# ---- N single adds (10/8 is not in the generated set) ------------------
t0=$(ms)
for i in $(seq 1 $N); do
	nfg_router nfguard set add big 10.200.0.$((2 * i)) || nfg_fail "add $i"
done
t1=$(ms)
rs add big $NFG_C4 || nfg_fail "add client"
nfg_assert_fail "client dropped at once" nfg_client ping -c 1 -W 1 $NFG_S4
nfg_assert_eq 1 "$(nfg_ipt_pkts "$NFG_NS_R" legacy 4 big)" "packets dropped by the set"
nfg_assert_eq 0 "$(hdr big 'Packet adds')" "single adds not counted as packet-path adds"
nfg_wait_until 60 eval '[ "$(hdr big Dynamic)" = 0 ]' || nfg_fail "the fold never took the adds"
nfg_assert_eq $((COUNT + N + 1)) "$(hdr big Ranges)" "ranges after the adds"
for i in 1 $((N / 2)) $N; do
	nfg_assert_ok "10.200.0.$((2 * i)) in the set" rs test big 10.200.0.$((2 * i))
done

# ---- N single deletes ------------------------------------------------------
t2=$(ms)
for i in $(seq 1 $N); do
	nfg_router nfguard set del big 10.200.0.$((2 * i)) || nfg_fail "del $i"
done
t3=$(ms)
rs del big $NFG_C4 || nfg_fail "del client"
nfg_assert_ok "client passes at once" nfg_client ping -c 1 -W 1 $NFG_S4
nfg_wait_until 60 eval '[ "$(hdr big Dynamic)" = 0 ]' || nfg_fail "the fold never took the deletes"
nfg_assert_eq $COUNT "$(hdr big Ranges)" "ranges after the deletes"
absent big 10.200.0.2 || nfg_fail "a deleted address is still in the set"
nfg_assert_eq 0 "$(hdr big 'Packet deletes')" "single deletes not counted as packet-path deletes"

# ---- the whole path for comparison: two elements per request -----------
# (what every single add cost before: fold, tree insert, array rebuild)
t7=$(ms)
for i in $(seq 1 $((N / 2))); do
	nfg_router nfguard set add big 10.201.0.$((2 * i)) 10.201.1.$((2 * i)) || nfg_fail "pair add $i"
done
t8=$(ms)
nfg_assert_eq $((COUNT + N)) "$(hdr big Ranges)" "ranges after the pair adds"

# ---- ipset, the same N adds and deletes ----------------------------------
nfg_router ipset create ib hash:net || nfg_fail "ipset create"
t4=$(ms)
for i in $(seq 1 $N); do
	nfg_router ipset add ib 10.200.0.$((2 * i)) || nfg_fail "ipset add $i"
done
t5=$(ms)
for i in $(seq 1 $N); do
	nfg_router ipset del ib 10.200.0.$((2 * i)) || nfg_fail "ipset del $i"
done
t6=$(ms)
nfg_router ipset destroy ib

add=$(((t1 - t0) * 1000 / N)) del=$(((t3 - t2) * 1000 / N))
iadd=$(((t5 - t4) * 1000 / N)) idel=$(((t6 - t5) * 1000 / N))
nfg_log "single add on $COUNT ranges: $add us/add (ipset: $iadd us/add), del: $del us/del (ipset: $idel us/del)"
nfg_log "adds/s: nfguard $((1000000 / add)), ipset $((1000000 / iadd)); dels/s: nfguard $((1000000 / del)), ipset $((1000000 / idel))"
nfg_log "whole path (2 elements per request, array rebuilt): $(((t8 - t7) * 1000 / (N / 2))) us/request"
