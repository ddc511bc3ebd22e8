#!/bin/bash
# Every bad rangeset input gets a clear error and changes nothing: CLI
# (malformed address, wrong family, start > end, set full, unknown set,
# duplicate name, destroy/rename while referenced, swap across families) and
# iptables rules (missing set named in the plugin's message, bad direction),
# for iptables-legacy and iptables-nft.
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules
ip netns add nfg-err || nfg_fail "netns"
nfg_on_exit ip netns del nfg-err
rs() { nfg_in nfg-err nfguard set "$@"; }

# expect_err PATTERN CMD...: CMD fails, its stderr matches PATTERN.
expect_err() {
	local pat=$1 out
	shift
	if out=$("$@" 2>&1 >/dev/null); then
		nfg_fail "accepted: $*"
	fi
	nfg_assert_match "$pat" "$out" "error message of: $*"
}
members() { rs save "$1" | grep -c '^add ' || true; }

rs create s4 ipv4 maxelem 4 || nfg_fail "create s4"
rs create s6 ipv6 || nfg_fail "create s6"
rs add s4 10.0.0.0/8 192.0.2.1 || nfg_fail "add s4"
before=$(rs save)

expect_err 'exist' rs create s4 ipv4
expect_err 'no set|not found|no such|unknown' rs add nosuch 10.0.0.1
expect_err 'no set|not found|no such|unknown' rs destroy nosuch
expect_err '10\.0\.0\.300' rs add s4 10.0.0.300
expect_err 'garbage' rs add s4 garbage
expect_err '10\.0\.0\.0/33' rs add s4 10.0.0.0/33
expect_err 'fd00::1' rs add s4 fd00::1
expect_err '10\.0\.0\.1' rs add s6 10.0.0.1
expect_err '10\.0\.0\.9-10\.0\.0\.1' rs add s4 10.0.0.9-10.0.0.1
expect_err 'ipv5|family' rs create bad ipv5
# one bad element anywhere rejects the whole batch
expect_err '1\.2\.3\.999' rs add s4 172.16.0.1 1.2.3.999
printf '172.16.0.1\n172.16.0.9\nnot-an-address\n' >"$NFG_WORK/batch"
expect_err 'not-an-address' rs add s4 -f "$NFG_WORK/batch"
# set full: 2 present + 3 new disjoint ranges > maxelem 4; nothing applied
expect_err 'full|space|maxelem' rs add s4 172.16.0.1 172.16.0.3 172.16.0.5
nfg_assert_eq "$before" "$(rs save)" "set unchanged by rejected input"
# exactly full is fine; merging into existing ranges needs no room
rs add s4 172.16.0.1 172.16.0.3 || nfg_fail "filling s4 to maxelem"
rs add s4 10.1.0.0/16 172.16.0.2 || nfg_fail "adding inside/adjacent to a full set"
nfg_assert_eq 3 "$(members s4)" "ranges after adjacent merge"
expect_err 'famil' rs swap s4 s6

# rules: missing set named by the plugin, for both iptables variants
for v in legacy nft; do
	for fam in 4 6; do
		expect_err '"?nosuch"?' nfg_ipt nfg-err $v $fam -A INPUT -m rangeset --match-set nosuch src -j DROP
		expect_err 'src|dst|direction' nfg_ipt nfg-err $v $fam -A INPUT -m rangeset --match-set s4 sideways -j DROP
		expect_err 'match-set' nfg_ipt nfg-err $v $fam -A INPUT -m rangeset -j DROP
	done
	expect_err 's6' nfg_ipt nfg-err $v 4 -A INPUT -m rangeset --match-set s6 src -j DROP
	# a referenced set can be neither destroyed nor renamed
	nfg_ipt nfg-err $v 4 -A INPUT -m rangeset --match-set s4 src -j DROP || nfg_fail "$v: rule on s4"
	expect_err 'use|referenc|busy' rs destroy s4
	expect_err 'use|referenc|busy' rs rename s4 s4new
	nfg_assert_match '^References: 1$' "$(rs list s4)" "$v: one rule references s4"
	nfg_ipt nfg-err $v 4 -F INPUT
	nfg_assert_match '^References: 0$' "$(rs list s4)" "$v: reference dropped with the rule"
done
expect_err 'exist' rs rename s4 s6
rs rename s4 s4new || nfg_fail "rename unreferenced"
rs destroy s4new || nfg_fail "destroy unreferenced"
rs destroy s6 || nfg_fail "destroy s6"
nfg_assert_eq "" "$(rs save)" "no set left"
