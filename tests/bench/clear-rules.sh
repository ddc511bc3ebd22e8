#!/bin/bash
# Remove every iptables rule from the current netns, for tests/bench/lib.sh
# (nfb_clear_rules, run inside nfb-rx): all iptables-legacy / ip6tables-legacy
# tables are replaced by empty ones (one restore per family), and the nft
# tables iptables-nft uses (ip/ip6 filter raw mangle nat security) are deleted
# in one nft transaction. Other nft tables, ipsets and nfguard sets stay.
# Few commands on purpose: each costs 0.1-0.3 s in a TCG guest.
set -u
nl=$'\n'
for fam in 4 6; do
	if [ $fam = 4 ]; then b=iptables n=/proc/net/ip_tables_names; else b=ip6tables n=/proc/net/ip6_tables_names; fi
	in=''
	if [ -r $n ]; then
		while read -r t; do in+="*$t${nl}COMMIT$nl"; done <$n
	fi
	if [ -n "$in" ]; then printf '%s' "$in" | "$b-legacy-restore" -w || exit 1; fi
done
del=''
while read -r _ fam name _; do
	case $fam/$name in
	ip/filter | ip/raw | ip/mangle | ip/nat | ip/security | ip6/filter | ip6/raw | ip6/mangle | ip6/nat | ip6/security)
		del+="delete table $fam $name$nl"
		;;
	esac
done < <(nft list tables 2>/dev/null)
if [ -n "$del" ]; then printf '%s' "$del" | nft -f - || exit 1; fi
exit 0
