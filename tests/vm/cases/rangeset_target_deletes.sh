#!/bin/bash
# -j RANGESET --del-set (issue 29): deletes never need room and their effect
# does not depend on when the set's fold runs. Real packets through a
# router, IPv4 (iptables-legacy) and IPv6 (iptables-nft):
#  1. a set at maxelem takes a packet-path delete: the sender leaves the set
#     (before, every --del-set of a full set was refused and counted);
#  2. one packet that adds its source (/32, /128) and then deletes the
#     source's prefix (/24, /64) in the same tick leaves the set without the
#     source, as it would if a fold had run between the two (before, the
#     delete of a prefix ignored the pending add of a longer one);
#  3. the later add wins: add /32 after --del-set --prefix 24 in one packet
#     keeps the source in the set.
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need ping

nfg_load_modules
nfg_topo_up
rs() { nfg_router nfguard set "$@"; }
hdr() { rs list "$1" | sed -n "s/^$2: //p"; }	# SET FIELD
absent() { rs test "$1" "$2" >/dev/null; [ $? = 1 ]; }	# 1: not in the set

for fam in 4 6; do
	if [ $fam = 4 ]; then
		v=legacy c=$NFG_C4 s=$NFG_S4 p=icmp ping="ping" full=ipv4 pfx=24 other=192.0.2.1 net=10.0.1.0/24
	else
		v=nft c=$NFG_C6 s=$NFG_S6 p=ipv6-icmp ping="ping -6" full=ipv6 pfx=64 other=2001:db8::1 net=fd00:1::/64
	fi
	t="ipv$fam/$v"
	nfg_wait_until 30 nfg_client $ping -c 1 -W 1 $s >/dev/null || nfg_fail "$t: server unreachable"

	# ---- 1. a full set takes deletes ----------------------------------
	rs create full$fam $full maxelem 2 && rs add full$fam $c $other || nfg_fail "$t: full set"
	nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -p $p -m length --length 500:600 \
		-j RANGESET --del-set full$fam src || nfg_fail "$t: del rule"
	nfg_assert_ok "$t: sender in the full set" rs test full$fam $c
	nfg_client $ping -c 1 -W 2 -s 520 $s >/dev/null || nfg_fail "$t: ping through the del rule"
	nfg_wait_until 60 absent full$fam $c ||
		nfg_fail "$t: a delete on a set at maxelem left the sender in it (refusals: $(hdr full$fam 'Packet refusals'))"
	nfg_assert_eq 0 "$(hdr full$fam 'Packet refusals')" "$t: refusals of the full set"
	nfg_assert_eq 1 "$(hdr full$fam 'Packet deletes')" "$t: deletes of the full set"
	nfg_assert_ok "$t: the other element stays" rs test full$fam $other

	# ---- 2. add /32 then delete its /24 in one packet -----------------
	rs create pfx$fam $full || nfg_fail "$t: create pfx"
	nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -p $p -m length --length 700:800 \
		-j RANGESET --add-set pfx$fam src &&
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -p $p -m length --length 700:800 \
			-j RANGESET --del-set pfx$fam src --prefix $pfx || nfg_fail "$t: add/del rules"
	nfg_client $ping -c 1 -W 2 -s 720 $s >/dev/null || nfg_fail "$t: ping through add/del"
	nfg_wait_until 60 eval "[ \"\$(hdr pfx$fam 'Packet deletes')\" = 1 ]" || nfg_fail "$t: no delete counted"
	nfg_assert_eq 1 "$(hdr pfx$fam 'Packet adds')" "$t: adds"
	absent pfx$fam $c || nfg_fail "$t: the /$pfx delete after the add left $c in the set"
	nfg_assert_eq "" "$(rs list pfx$fam | sed -n '/^Members:/,$p' | sed 1d)" "$t: members after add+del"

	# ---- 3. delete the /24, then add /32 in one packet: the add wins ----
	rs create late$fam $full && rs add late$fam $net || nfg_fail "$t: create late"
	nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -p $p -m length --length 900:1000 \
		-j RANGESET --del-set late$fam src --prefix $pfx &&
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -i eth0 -p $p -m length --length 900:1000 \
			-j RANGESET --add-set late$fam src || nfg_fail "$t: del/add rules"
	nfg_client $ping -c 1 -W 2 -s 920 $s >/dev/null || nfg_fail "$t: ping through del/add"
	nfg_wait_until 60 eval "[ \"\$(hdr late$fam 'Packet adds')\" = 1 ]" || nfg_fail "$t: no add counted"
	nfg_wait_until 60 eval "[ \"\$(hdr late$fam Dynamic)\" = 0 ]" || nfg_fail "$t: entries not folded"
	nfg_assert_ok "$t: the add after the prefix delete keeps $c" rs test late$fam $c
	nfg_assert_eq 1 "$(rs list late$fam | sed -n '/^Members:/,$p' | sed 1d | wc -l)" "$t: members after del+add"
	nfg_log "$t: ok"
done
