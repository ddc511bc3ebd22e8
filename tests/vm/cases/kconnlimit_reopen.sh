#!/bin/bash
# A client cannot hold more connections than its limit by reusing its own
# 4-tuples (issue 28): on the router, "--above 2 -j REJECT --reject-with
# tcp-reset" for TCP to the server's port, with --syn and without it (every
# packet of the connections, their resets included, passes the rule). The
# client (nfg-kcl-race reopen) opens 2 connections, then 4 rounds of: reset
# its newest connection, reopen the same source port at once (conntrack
# replaces the closed entry with a new one for the same tuple), try one more
# connection on a new port. Run with mainline connlimit and with kconnlimit
# on the same pattern: each reopen is allowed and each extra connection
# refused (11 then 10 per round), kconnlimit's verdicts equal connlimit's,
# and the client never holds more than 2 connections. IPv4 with
# iptables-legacy, IPv6 with iptables-nft. The sweep runs every 10 ms, and
# each round starts after 10 clock ticks: the remembered connections are
# then resolved to their conntrack, as they are on a busy host (the defect
# this catches took the reopened connection for the old one only then).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need conntrack iptables-legacy ip6tables-nft nfg-kcl-race

nfg_load_modules xt_kconnlimit
p=/sys/module/xt_kconnlimit/parameters
nfg_topo_up
old=$(cat $p/gc_interval_ms)
nfg_on_exit "echo $old >$p/gc_interval_ms"
echo 10 >$p/gc_interval_ms || nfg_fail "gc_interval_ms"

limit=2 rounds=4 port=5011
expect=11$(printf '10%.0s' $(seq $rounds))
bad=0
for vf in legacy/4 nft/6; do
	v=${vf%/*} fam=${vf#*/}
	dst=$NFG_S4
	[ "$fam" = 6 ] && dst=$NFG_S6
	for syn in --syn all; do
		sel=(-p tcp --dport $port)
		[ $syn = --syn ] && sel+=(--syn)
		declare -A got=()
		for e in connlimit kconnlimit; do
			nfg_router conntrack -F >/dev/null 2>&1
			rule=(FORWARD "${sel[@]}" -m $e --$e-above $limit -j REJECT --reject-with tcp-reset)
			nfg_ipt "$NFG_NS_R" $v $fam -A "${rule[@]}" || nfg_fail "$v IPv$fam $e rule"
			out=$(nfg-kcl-race reopen $rounds $limit "$NFG_NS_C" "$NFG_NS_S" $port "$dst" 10) ||
				nfg_fail "$v IPv$fam $syn $e: nfg-kcl-race: $out"
			nfg_ipt "$NFG_NS_R" $v $fam -D "${rule[@]}" || nfg_fail "$v IPv$fam $e: delete rule"
			nfg_log "$v IPv$fam $syn $e: $out"
			got[$e]=$out
		done
		[ "${got[connlimit]}" = "verdicts $expect maxlive $limit" ] || {
			nfg_log "$v IPv$fam $syn: mainline connlimit: ${got[connlimit]}, expected verdicts $expect maxlive $limit"
			bad=1
		}
		[ "${got[kconnlimit]}" = "${got[connlimit]}" ] || {
			nfg_log "$v IPv$fam $syn: kconnlimit (${got[kconnlimit]}) differs from connlimit (${got[connlimit]})"
			bad=1
		}
		unset got
	done
done
[ $bad = 0 ] || nfg_fail "a reopened 4-tuple let a client past its limit, or verdicts differ from connlimit"
