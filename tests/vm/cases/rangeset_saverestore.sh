#!/bin/bash
# Save/restore round trips: `nfguard set save` -> destroy -> `restore` gives
# the same sets (and the restored set drops the same packets); iptables-save
# -> flush -> iptables-restore gives the same rules, for legacy and nft, v4
# and v6; `nft list ruleset` shows the compat match; ipset save
# lines of hash:ip/hash:net sets restore as range sets.
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules
nfg_topo_up
rs() { nfg_router nfguard set "$@"; }

rs create edges4 ipv4 maxelem 1000 || nfg_fail "create edges4"
rs add edges4 0.0.0.0 10.0.0.0/8 10.0.1.2 192.0.2.7-192.0.2.200 255.255.255.255 || nfg_fail "add edges4"
rs create edges6 ipv6 || nfg_fail "create edges6"
rs add edges6 :: fd00:1::/64 2001:db8::5-2001:db8::1:0 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ||
	nfg_fail "add edges6"
rs create all4 ipv4 && rs add all4 0.0.0.0/0 || nfg_fail "full v4 space"
rs create all6 ipv6 && rs add all6 ::/0 || nfg_fail "full v6 space"
nfg_assert_eq "0.0.0.0/0" "$(rs save all4 | sed -n 's/^add all4 //p')" "full v4 space saved as /0"
nfg_assert_eq "::/0" "$(rs save all6 | sed -n 's/^add all6 //p')" "full v6 space saved as /0"
nfg_assert_match '^add edges4 192\.0\.2\.7-192\.0\.2\.200$' "$(rs save edges4)" "range saved as a-b"
nfg_assert_match '^add edges4 255\.255\.255\.255$' "$(rs save edges4)" "top address saved bare"

rs save >"$NFG_WORK/sets.1" || nfg_fail "save"
for s in edges4 edges6 all4 all6; do rs destroy $s || nfg_fail "destroy $s"; done
nfg_assert_eq "" "$(rs save)" "all destroyed"
rs restore -f "$NFG_WORK/sets.1" || nfg_fail "restore"
rs save >"$NFG_WORK/sets.2"
cmp "$NFG_WORK/sets.1" "$NFG_WORK/sets.2" || nfg_fail "save after restore differs: $(diff "$NFG_WORK/sets.1" "$NFG_WORK/sets.2")"
rs restore <"$NFG_WORK/sets.1" 2>/dev/null && nfg_fail "restoring over existing sets must fail without --replace"
nfg_assert_eq "$(cat "$NFG_WORK/sets.1")" "$(rs save)" "failed restore changed nothing"

# rules: save -> flush -> restore -> save is identical, and still works
for v in legacy nft; do
	for fam in 4 6; do
		set=edges$fam
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -m rangeset --match-set $set src -m comment --comment src-$v -j DROP &&
		nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD -m rangeset ! --match-set $set dst -j ACCEPT &&
		nfg_ipt "$NFG_NS_R" $v $fam -I INPUT -m rangeset --match-set $set dst -j DROP ||
			nfg_fail "$v/$fam: add rules"
		if [ $fam = 4 ]; then save=iptables-$v-save; else save=ip6tables-$v-save; fi
		restore=${save/-save/-restore}
		# chain policy counters ([pkts:bytes]) move with stray IPv6 ND/MLD
		# traffic between the two saves: compare rules, not counters
		nfg_router $save -t filter | grep -v '^#' | sed 's/ \[[0-9]*:[0-9]*\]$//' >"$NFG_WORK/rules.1"
		grep -q -- '-m rangeset --match-set '"$set"' src' "$NFG_WORK/rules.1" ||
			nfg_fail "$v/$fam: save lacks the match: $(cat "$NFG_WORK/rules.1")"
		grep -q -- '-m rangeset ! --match-set '"$set"' dst' "$NFG_WORK/rules.1" ||
			nfg_fail "$v/$fam: save lacks the inverted match"
		nfg_ipt "$NFG_NS_R" $v $fam -F
		nfg_router $restore <"$NFG_WORK/rules.1" || nfg_fail "$v/$fam: restore"
		nfg_router $save -t filter | grep -v '^#' | sed 's/ \[[0-9]*:[0-9]*\]$//' >"$NFG_WORK/rules.2"
		cmp -s "$NFG_WORK/rules.1" "$NFG_WORK/rules.2" ||
			nfg_fail "$v/$fam: rules differ after restore: $(diff "$NFG_WORK/rules.1" "$NFG_WORK/rules.2")"
		# the restored rule works: the client is in edges4 (10.0.1.2) / edges6 (fd00:1::/64)
		dst=$NFG_S4
		[ $fam = 6 ] && dst=$NFG_S6
		nfg_client ping -$fam -c 1 -W 1 "$dst" >/dev/null && nfg_fail "$v/$fam: restored rule did not drop"
		nfg_assert_ge "$(nfg_ipt_pkts "$NFG_NS_R" $v $fam src-$v)" 1 "$v/$fam: restored rule counted"
		if [ $v = nft ]; then
			out=$(nfg_router nft list ruleset 2>&1)
			# no .xlate (nft has no equivalent of our sets): nft names the
			# compat match; iptables-nft-save above showed its options
			nfg_assert_match 'xt match "?rangeset"?' "$out" "nft list ruleset shows the match"
		fi
		nfg_ipt "$NFG_NS_R" $v $fam -F
	done
done

# ipset migration: hash:ip and hash:net save lines (with options we ignore)
cat >"$NFG_WORK/ipset.save" <<'IPSET'
create bad4 hash:net family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x5d3b3a2c
add bad4 198.51.100.0/24
add bad4 203.0.113.7
add bad4 198.51.101.0/24
create bad6 hash:ip family inet6 hashsize 1024 maxelem 65536
add bad6 2001:db8::1
add bad6 2001:db8::2
IPSET
rs restore -f "$NFG_WORK/ipset.save" || nfg_fail "ipset restore"
nfg_assert_eq "$(printf 'add bad4 198.51.100.0/23\nadd bad4 203.0.113.7')" "$(rs save bad4 | grep '^add')" "ipset hash:net migrated and merged"
nfg_assert_eq "add bad6 2001:db8::1-2001:db8::2" "$(rs save bad6 | grep '^add')" "ipset hash:ip migrated"
