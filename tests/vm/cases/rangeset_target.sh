#!/bin/bash
# -j RANGESET: packet-path adds and deletes, with real packets through a
# router, IPv4 (iptables-legacy) and IPv6 (iptables-nft):
#  1. a hashlimit-triggered --add-set puts a flooding source on the
#     blocklist: its packets are dropped from then on while another source
#     passes, and it falls off after its --timeout (bounds from clock
#     readings around the flood, measured by polling `nfguard set test`);
#     the set counts the adds; DESTROY of a set a target uses is refused;
#  2. --del-set removes an address of the set's ranges at once (the packet
#     that deletes passes the blocklist rule right after it);
#  3. a flood from random sources (trafgen) stays within maxelem, and the
#     refusals are counted; in a nearly full set, an address whose fold
#     would split a range past maxelem is refused, and expiry and DEL go on;
#  4. dynamic entries leak nothing on netns teardown and rmmod
#     (live_objects back to its value before / to 0).
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need trafgen ping

nfg_load_modules
nfg_topo_up
rs() { nfg_router nfguard set "$@"; }
ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
live=/sys/module/xt_rangeset/parameters/live_objects
hdr() { rs list "$1" | sed -n "s/^$2: //p"; }	# SET FIELD

# expect_expiry SET ELEM ADD_START_MS ADD_END_MS SECONDS WHAT: poll until
# ELEM has left SET. It was added between the first two clock readings, so
# it expires between them plus SECONDS: gone earlier fails, and a poll that
# still finds it more than 1 s after the latest expiry fails (the kernel's
# tick is a quarter second).
expect_expiry() {
	local set=$1 elem=$2 t_lo=$(($3 + $5 * 1000)) t_hi=$(($4 + $5 * 1000)) what=$6
	local seen=0 start end rc deadline=$(($(ms) + 60000))
	while :; do
		start=$(ms)
		rs test "$set" "$elem" >/dev/null
		rc=$?
		end=$(ms)
		[ $rc = 1 ] && break	# not in the set
		[ $rc = 0 ] || nfg_fail "$what: set test failed (rc $rc)"
		seen=$start
		[ "$end" -lt "$deadline" ] || nfg_fail "$what: still in the set after 60 s"
		nfg_sleep 0.05
	done
	[ "$end" -ge "$t_lo" ] || nfg_fail "$what: gone $((t_lo - end)) ms before its expiry"
	if [ "$seen" = 0 ]; then
		nfg_log "$what: already gone at the first poll, $((end - t_lo)) ms after its earliest expiry"
		return 0
	fi
	[ "$seen" -le $((t_hi + 1000)) ] ||
		nfg_fail "$what: still in the set $((seen - t_hi)) ms after its expiry"
	nfg_log "$what: present $((seen - t_hi)) ms after its latest expiry, gone $((end - t_lo)) ms after its earliest"
}

# ---- 1. hashlimit-triggered blocklist, both families --------------------
F4=10.0.1.9 F6=fd00:1::9
nfg_client ip addr add $F4/24 dev eth0 && nfg_client ip addr add $F6/64 dev eth0 nodad ||
	nfg_fail "flooder addresses"
nfg_wait_until 30 nfg_client ping -c 1 -W 1 -I $F4 $NFG_S4 >/dev/null || nfg_fail "flooder v4 unreachable"
nfg_wait_until 30 nfg_client ping -6 -c 1 -W 1 -I $F6 $NFG_S6 >/dev/null || nfg_fail "flooder v6 unreachable"
rs create blk4 ipv4 maxelem 1000 && rs create blk6 ipv6 maxelem 1000 || nfg_fail "create"

for fam in 4 6; do
	if [ $fam = 4 ]; then
		v=legacy set=blk4 f=$F4 dst=$NFG_S4 other=$NFG_C4 tmo=3 ex= p=icmp
	else
		v=nft set=blk6 f=$F6 dst=$NFG_S6 other=$NFG_C6 tmo=3 ex=--exist p=ipv6-icmp
	fi
	t="ipv$fam/$v"
	nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -p $p -m length --length 1000:1100 \
		-j RANGESET --del-set $set src &&
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -m rangeset --match-set $set src \
			-m comment --comment drop$fam -j DROP &&
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -p $p -m hashlimit \
			--hashlimit-above 10/sec --hashlimit-burst 5 --hashlimit-mode srcip \
			--hashlimit-name fl$fam -j RANGESET --add-set $set src --timeout $tmo $ex ||
		nfg_fail "$t: rules"
	nfg_assert_fail "$t: destroy of a set a target uses" rs destroy $set

	# the flood: 60 echo requests at 200/s, far above 10/s
	t0=$(ms)
	sent=$(nfg_client ping -$fam -c 60 -i 0.005 -W 1 -q -I $f $dst 2>/dev/null |
	       sed -n 's/.* \([0-9]*\) received.*/\1/p')
	t1=$(ms)
	nfg_log "$t: flood: ${sent:-?} of 60 answered"
	nfg_assert_le "${sent:-60}" 30 "$t: flood replies (the source was not blocked)"
	# membership is asserted while the entry must still live (its timeout
	# counts from an add after t0); a guest slow enough that the flood and
	# this command outlast it shows the add by the drops and counters below
	if ! rs test $set $f >/dev/null; then
		[ "$(ms)" -ge $((t0 + tmo * 1000)) ] || nfg_fail "$t: flooder not in the set within its timeout"
		nfg_log "$t: flooder already expired $(($(ms) - t0 - tmo * 1000)) ms after its earliest expiry (a slow guest)"
	fi
	nfg_client ping -$fam -c 1 -W 0.5 -I $f $dst >/dev/null &&
		[ "$(ms)" -lt $((t0 + tmo * 1000)) ] && nfg_fail "$t: flooder passed while listed"
	nfg_assert_ok "$t: another source passes" nfg_client ping -$fam -c 1 -W 5 -I $other $dst
	nfg_assert_fail "$t: the other source stays out" rs test $set $other
	nfg_assert_ge "$(nfg_ipt_pkts "$NFG_NS_R" $v $fam drop$fam)" 1 "$t: drops counted"
	nfg_assert_ge "$(hdr $set 'Packet adds')" 1 "$t: packet adds counted"
	expect_expiry $set $f "$t0" "$t1" $tmo "$t: --timeout $tmo"
	nfg_assert_ok "$t: flooder passes after its timeout" nfg_client ping -$fam -c 1 -W 5 -I $f $dst

	# ---- 2. --del-set: an address of the set's ranges leaves at once ----
	rs add $set $([ $fam = 4 ] && echo 10.0.1.0/28 || echo fd00:1::/124) || nfg_fail "$t: add range"
	nfg_client ping -$fam -c 1 -W 0.5 -I $f $dst >/dev/null && nfg_fail "$t: listed range passed"
	nfg_assert_ok "$t: the deleting packet passes" nfg_client ping -$fam -c 1 -W 5 -s 1010 -I $f $dst
	nfg_assert_fail "$t: deleted address still in the set" rs test $set $f
	nfg_assert_ok "$t: the rest of the range stays" rs test $set $other
	nfg_assert_ge "$(hdr $set 'Packet deletes')" 1 "$t: packet deletes counted"
	nfg_ipt "$NFG_NS_R" $v $fam -F FORWARD
	rs flush $set || nfg_fail "$t: flush"
done

# ---- 3. a flood from random sources stays within maxelem ---------------
mac=$(nfg_router cat /sys/class/net/eth0/address)
{
	echo "{ eth(da=$mac), ipv4(sa=drnd(), da=$NFG_S4, ttl=64), udp(sp=drnd(), dp=9), fill(0x41, 18) }"
	printf '{ eth(da=%s, type=0x86dd), 0x60, 0, 0, 0, 0, 8, 17, 64,\n' "$mac"
	printf '  0xfd, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, drnd(4),\n'
	printf '  0xfd, 0x00, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,\n'
	printf '  drnd(2), 0, 9, 0, 8, 0, 0 }\n'
} >"$NFG_WORK/flood.cfg"
rs create fl4 ipv4 maxelem 100 && rs create fl6 ipv6 maxelem 64 || nfg_fail "flood sets"
nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING -p udp --dport 9 -j RANGESET --add-set fl4 src --timeout 600 &&
	nfg_ipt "$NFG_NS_R" nft 6 -t raw -A PREROUTING -p udp --dport 9 -j RANGESET --add-set fl6 src ||
	nfg_fail "flood rules"
(cd "$NFG_WORK" && nfg_client trafgen -P 1 -q -o eth0 -c "$NFG_WORK/flood.cfg" -t 200us -n 3000 >/dev/null 2>&1) ||
	nfg_fail "trafgen"
for s in fl4:100 fl6:64; do
	n=${s%:*} max=${s#*:}
	adds=$(hdr $n 'Packet adds') refused=$(hdr $n 'Packet refusals')
	ranges=$(hdr $n Ranges) dyn=$(hdr $n Dynamic)
	nfg_log "$n: adds $adds refusals $refused ranges $ranges dynamic $dyn"
	nfg_assert_ge "$adds" $((max / 2)) "$n: packet adds"
	nfg_assert_ge "$refused" 1 "$n: refusals when full"
	nfg_assert_le $((ranges + dyn)) "$max" "$n: ranges + dynamic entries within maxelem"
	nfg_assert_le "$(rs list $n | sed -n '/^Members:/,$p' | sed 1d | wc -l)" "$max" "$n: members listed"
done

# ---- 3b. a nearly full set: what does not fit is refused by the fold ----
# A permanent address inside a range of another timeout splits it in three
# when folded: with the other range that is four, past maxelem 3 (the
# packet path let it in: two ranges and one pending entry fit). The fold
# drops it (a refusal) instead of failing for ever, and expiry and DEL go
# on: a 2 s range added after the refusal expires. (Adding the short range
# before the refusal would make it depend on the guest's speed: once it has
# expired, the split fits.)
rs create full ipv4 maxelem 3 &&
	rs add full 127.0.0.0/28 timeout 600 &&
	rs add full 127.0.2.0/28 timeout 600 || nfg_fail "full: set"
nfg_ipt "$NFG_NS_R" legacy 4 -A OUTPUT -o lo -d 127.0.0.5 -j RANGESET --add-set full dst --exist ||
	nfg_fail "full: rule"
nfg_router ping -c 1 -W 1 127.0.0.5 >/dev/null 2>&1
nfg_assert_ge "$(hdr full 'Packet adds')" 1 "full: packet add"
nfg_wait_until 30 eval '[ "$(hdr full Dynamic)" = 0 ]' || nfg_fail "full: the fold never took the entry ($(hdr full Dynamic) left)"
nfg_assert_ge "$(hdr full 'Packet refusals')" 1 "full: the entry that did not fit counted as refused"
nfg_assert_eq 2 "$(hdr full Ranges)" "full: the refused split left the ranges as they were"
# (the add may wait as a pending entry and expire there: the expiry count,
# not the range count, shows that it went)
exp0=$(hdr full Expiries)
rs add full 127.0.1.0/28 timeout 2 || nfg_fail "full: add the 2 s range after the refusal"
nfg_wait_until 30 eval '[ "$(hdr full Expiries)" -gt "$exp0" ]' ||
	nfg_fail "full: the 2 s range never expired (expiries $(hdr full Expiries), were $exp0)"
nfg_assert_fail "full: the 2 s range gone" rs test full 127.0.1.1
nfg_wait_until 30 eval '[ "$(hdr full Ranges)/$(hdr full Dynamic)" = 2/0 ]' ||
	nfg_fail "full: ranges/dynamic $(hdr full Ranges)/$(hdr full Dynamic) after the expiry, expected 2/0"
nfg_assert_ok "full: DEL works on a set whose fold refused" rs del full 127.0.0.0/30
nfg_assert_fail "full: deleted part gone" rs test full 127.0.0.2
nfg_ipt "$NFG_NS_R" legacy 4 -D OUTPUT -o lo -d 127.0.0.5 -j RANGESET --add-set full dst --exist &&
	rs destroy full || nfg_fail "full: cleanup"

# ---- 4. nothing leaks: netns teardown, then rmmod ------------------------
before=$(cat $live)
ip netns add nfg-rst || nfg_fail "netns"
nfg_in nfg-rst ip link set lo up &&
	nfg_in nfg-rst nfguard set create x ipv4 maxelem 500 timeout 600 &&
	nfg_ipt nfg-rst legacy 4 -A OUTPUT -o lo -j RANGESET --add-set x dst &&
	nfg_ipt nfg-rst nft 4 -A OUTPUT -o lo -d 127.0.1.1 -j RANGESET --del-set x dst --prefix 31 ||
	nfg_fail "set and rules in nfg-rst"
# one process: a netns exec per address is slow under TCG
nfg_in nfg-rst bash -c 'for i in $(seq 1 20); do ping -c 1 -W 0.2 127.0.$i.1; done' >/dev/null 2>&1
nfg_assert_ge "$(nfg_in nfg-rst nfguard set list x | sed -n 's/^Packet adds: //p')" 20 "nfg-rst: adds"
ip netns del nfg-rst
nfg_wait_until 30 eval '[ "$(cat '$live')" = '"$before"' ]' ||
	nfg_fail "$(cat $live) live objects after netns teardown, $before before"
nfg_topo_down
nfg_wait_until 30 eval '[ "$(cat '$live')" = 0 ]' ||
	nfg_fail "$(cat $live) live objects left after the topology's teardown"
nfg_unload_modules xt_rangeset
nfg_load_modules xt_rangeset
nfg_assert_eq 0 "$(cat $live)" "live objects after reload"
nfg_unload_modules xt_rangeset
