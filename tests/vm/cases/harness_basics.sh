#!/bin/bash
# Harness basics (mainline only): the client -- router -- server topology
# forwards IPv4 and IPv6 (ping replies arrive with TTL/hop limit 63, i.e.
# through the router), an HTTP download through the router arrives intact
# (SHA-256) over both families, and iptables-legacy, iptables-nft and nft all
# filter forwarded packets in the guest.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need ping curl python3 sha256sum nft \
	iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft \
	iptables-legacy-save ip6tables-legacy-save iptables-nft-save ip6tables-nft-save

nfg_topo_up

for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$NFG_S4; else dst=$NFG_S6; fi
	nfg_assert_ok "ping -$fam $dst" nfg_client ping -"$fam" -c 3 -i 0.2 -W 30 "$dst"
	ttl=$(sed -n 's/.*\(ttl\|hlim\)=\([0-9]*\).*/\2/p' "$NFG_WORK/assert.out" | head -n 1)
	nfg_assert_eq 63 "$ttl" "TTL/hop limit of the IPv$fam echo reply (one router hop)"
	nfg_log "ping IPv$fam through the router ok (ttl $ttl)"
done

mkdir -p "$NFG_WORK/www"
head -c 3145728 /dev/urandom >"$NFG_WORK/www/blob"
want=$(nfg_sha256 "$NFG_WORK/www/blob")
nfg_http_server "$NFG_NS_S" 8080 "$NFG_WORK/www"
for url in "http://$NFG_S4:8080/blob" "http://[$NFG_S6]:8080/blob"; do
	rm -f "$NFG_WORK/got"
	nfg_assert_ok "download $url" nfg_client curl -sS -g --max-time 120 -o "$NFG_WORK/got" "$url"
	nfg_assert_eq 3145728 "$(stat -c %s "$NFG_WORK/got")" "size of $url"
	nfg_assert_eq "$want" "$(nfg_sha256 "$NFG_WORK/got")" "sha256 of $url"
	nfg_log "download $url: 3 MiB intact"
done

# Each backend must drop forwarded echo requests when told to, and count them.
for v in legacy nft; do
	for fam in 4 6; do
		if [ $fam = 4 ]; then dst=$NFG_S4 proto=icmp; else dst=$NFG_S6 proto=ipv6-icmp; fi
		tag=basics-$v-$fam
		nfg_assert_ok "iptables-$v -$fam add rule" nfg_ipt "$NFG_NS_R" $v $fam -A FORWARD \
			-p $proto -d "$dst" -m comment --comment "$tag" -j DROP
		nfg_assert_fail "ping -$fam with $v DROP rule" nfg_client ping -"$fam" -c 2 -i 0.2 -W 1 "$dst"
		pkts=$(nfg_ipt_pkts "$NFG_NS_R" $v $fam "$tag")
		nfg_assert_ge "${pkts:-0}" 2 "packets counted by the iptables-$v -$fam DROP rule"
		nfg_assert_ok "iptables-$v -$fam delete rule" nfg_ipt "$NFG_NS_R" $v $fam -D FORWARD \
			-p $proto -d "$dst" -m comment --comment "$tag" -j DROP
		nfg_assert_ok "ping -$fam after removing the $v rule" nfg_client ping -"$fam" -c 1 -W 30 "$dst"
		nfg_log "iptables-$v IPv$fam filters forwarded packets ($pkts dropped)"
	done
done
nfg_assert_ok "nft list ruleset" nfg_router nft list ruleset
nfg_assert_match 'table ip filter' "$(cat "$NFG_WORK/assert.out")" "nft sees the iptables-nft table"
