#!/bin/bash
# Selftest: runs after st_dirty.sh and checks every case starts fresh.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_assert_eq "" "$(ip netns list)" "netns left by an earlier case"
nfg_assert_eq "lo" "$(ip -o link show | awk -F': ' '{print $2}' | tr '\n' ' ' | sed 's/ $//')" "links in the root netns"
nfg_assert_eq "" "$(nft list ruleset)" "nft ruleset"
if [ -e /proc/net/ip_tables_names ] && grep -q filter /proc/net/ip_tables_names; then
	nfg_assert_eq 0 "$(iptables-legacy-save | grep -c -- '^-A')" "iptables-legacy rules"
	nfg_assert_eq "" "$(iptables-legacy-save -t raw | grep -- '^:nfg_left')" "iptables-legacy user chain"
	nfg_assert_eq 0 "$(ip6tables-legacy-save | grep -c -- '^-A')" "ip6tables-legacy rules"
fi
nfg_assert_eq "" "$(lsmod | awk '$1 == "dummy"')" "module loaded by an earlier case"
nfg_assert_eq "" "$(ls /tmp/nfg-selftest-leftover 2>/dev/null)" "file left in /tmp"
stray=
for c in /proc/[0-9]*/comm; do
	read -r comm <"$c" 2>/dev/null && [ "$comm" = sleep ] && stray+=" ${c//[!0-9]/}"
done
nfg_assert_eq "" "$stray" "sleep processes left by an earlier case"
