#!/bin/bash
# Floor bench: what the receiver handles with a raw-table DROP (the floor that
# every other bench subtracts) versus no rules (full stack: routing, TCP answers
# each SYN with a RST into dummy0; the empty legacy raw and filter tables that
# nfb_init creates are traversed), plus the same DROP via iptables-nft.
# Rounds alternate the three rulesets inside one boot. Generator: NFB_GEN
# (default trafgen SYNs over veth; pktgen = UDP injected with netif_receive).
# shellcheck source=tests/bench/lib.sh
. "$NFG_TOP/tests/bench/lib.sh"

nfb_init "$NFB_GEN"

rs_drop_legacy() { nfb_rx iptables-legacy -w -t raw -A PREROUTING -i rx0 -j DROP; }
rs_drop_nft() { nfb_rx iptables-nft -w -t raw -A PREROUTING -i rx0 -j DROP; }
rs_none() { :; }

# The DROP rule must have seen every packet of the sample and none may reach L4.
chk_drop() { # VARIANT
	local c
	c=$(nfb_ipt_counter "$1" 4 raw PREROUTING 1)
	if [ "${c:-0}" -lt "$NFB_PKTS" ] || [ "$NFB_L4" -ne 0 ]; then
		nfg_log "DROP rule counted ${c:-?} of $NFB_PKTS packets, $NFB_L4 reached L4"
		return 1
	fi
}
chk_drop_legacy() { chk_drop legacy; }
chk_drop_nft() { chk_drop nft; }
# Without rules nearly every packet reaches TCP/UDP (a few random sources are
# martians, dropped by routing).
chk_none() { [ "$NFB_L4" -ge $((NFB_PKTS * 8 / 10)) ]; }

nfb_ruleset raw-drop rs_drop_legacy --floor --check chk_drop_legacy \
	--desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset raw-drop-nft rs_drop_nft --check chk_drop_nft \
	--desc "iptables-nft raw PREROUTING -j DROP"
nfb_ruleset no-rules rs_none --check chk_none --desc "no rules (empty legacy raw+filter; stack answers)"
bench=floor
[ "$NFB_GEN" = trafgen ] || bench=floor-$NFB_GEN
nfb_run "$bench" --ratio no-rules/raw-drop-nft
