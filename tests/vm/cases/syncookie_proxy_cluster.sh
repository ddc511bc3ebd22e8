#!/bin/bash
# nfg-case-timeout: 600
# Scale-out in proxy mode: two routers in front of one server, the client's
# SYNs through router 1 and everything else (its ACKs, its data) through
# router 2, as behind ECMP when the hash changes between the SYN and the
# ACK. Router 1 answers the SYN with a cookie; router 2, which never saw the
# SYN, validates the ACK and opens the connection to the server. With the
# routers' own random secrets router 2 refuses the ACK (ack_invalid) and the
# connection is not made; once both share one secret ("nfguard syncookie
# secret set", read from stdin on one and from a file on the other),
# connections complete and downloads are intact (sha256),
# IPv4 and IPv6. When router 2 changes to a new secret first (a cluster
# changes box by box), router 1's cookies, made under router 2's previous
# secret, are still accepted.
#
#   client eth0 -- eth0 router1 eth1 -- eth0 server   (10.0.1/24, 10.0.2/24)
#   client eth1 -- eth0 router2 eth1 -- eth1 server   (10.0.3/24, 10.0.4/24)
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need curl iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
R2=nfg-router2
nfg_on_exit "ip netns pids $R2 2>/dev/null | xargs -r kill -KILL; ip netns del $R2 2>/dev/null"
ip -batch - <<-EOF || nfg_fail "router 2: netns/veth"
	netns add $R2
	link add eth1 netns $NFG_NS_C type veth peer name eth0 netns $R2
	link add eth1 netns $R2 type veth peer name eth1 netns $NFG_NS_S
EOF
ip -n $R2 -batch - <<-EOF || nfg_fail "router 2 setup"
	link set lo up
	addr add 10.0.3.1/24 dev eth0
	addr add fd00:3::1/64 dev eth0 nodad
	addr add 10.0.4.1/24 dev eth1
	addr add fd00:4::1/64 dev eth1 nodad
	link set eth0 up
	link set eth1 up
	route add $NFG_S4/32 via 10.0.4.2
	route add $NFG_S6/128 via fd00:4::2
EOF
nfg_in $R2 sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 >/dev/null ||
	nfg_fail "router 2 forwarding"
# client: everything via router 2 (source 10.0.3.2 / fd00:3::2), but SYNs
# (marked) via router 1; it accepts the SYN-ACKs coming back on eth0
ip -n "$NFG_NS_C" -batch - <<-EOF || nfg_fail "client setup"
	addr add 10.0.3.2/24 dev eth1
	addr add fd00:3::2/64 dev eth1 nodad
	link set eth1 up
	route replace default via 10.0.3.1
	route replace ::/0 via fd00:3::1
	route add default via $NFG_RC4 table 100
	route add ::/0 via $NFG_RC6 table 100
	rule add fwmark 1 table 100
EOF
ip -n "$NFG_NS_C" -6 rule add fwmark 1 table 100 || nfg_fail "client rule 6"
nfg_client sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.eth0.rp_filter=0 >/dev/null ||
	nfg_fail "client rp_filter"
nfg_ipt "$NFG_NS_C" legacy 4 -t mangle -A OUTPUT -p tcp --syn -j MARK --set-mark 1 || nfg_fail "client SYN mark"
nfg_ipt "$NFG_NS_C" legacy 6 -t mangle -A OUTPUT -p tcp --syn -j MARK --set-mark 1 || nfg_fail "client SYN mark 6"
# router 1 answers the client's new addresses back through the client
nfg_router ip route add 10.0.3.0/24 via "$NFG_C4" || nfg_fail "router 1 route"
nfg_router ip -6 route add fd00:3::/64 via "$NFG_C6" || nfg_fail "router 1 route 6"
# the server answers them through router 2
ip -n "$NFG_NS_S" -batch - <<-EOF || nfg_fail "server setup"
	addr add 10.0.4.2/24 dev eth1
	addr add fd00:4::2/64 dev eth1 nodad
	link set eth1 up
	route add 10.0.3.0/24 via 10.0.4.1
	route add fd00:3::/64 via fd00:4::1
EOF

port=8080
www=$NFG_WORK/www
mkdir -p "$www" || nfg_fail "mkdir"
head -c 1000000 /dev/urandom >"$www/blob" || nfg_fail "test file"
want=$(nfg_sha256 "$www/blob")
nfg_http_server "$NFG_NS_S" $port "$www"
nfg_wait_until 60 nfg_client ping -c 1 -W 1 "$NFG_S4" || nfg_fail "client cannot ping the server via router 2"
nfg_wait_until 60 nfg_client ping -6 -c 1 -W 1 "$NFG_S6" || nfg_fail "client cannot ping6 the server via router 2"

statf=$NFG_WORK/stat
snap() { nfg_in "$1" cat /proc/net/stat/nfguard_syncookie >"$statf" || nfg_fail "read counters"; }
stat() { nfg_kv "$statf" "$1"; }
sval() { snap "$1"; stat "$2"; }

for fam in 4 6; do
	if [ "$fam" = 4 ]; then dst=$NFG_S4; else dst=$NFG_S6; fi
	nfg_assert_ok "router 1 rule" nfg_ipt "$NFG_NS_R" legacy $fam -t raw -A PREROUTING -i eth0 -p tcp \
		-d "$dst" --dport $port -j SYNCOOKIE --wscale 7 --sack-perm --timestamp
	nfg_assert_ok "router 2 rule" nfg_ipt $R2 nft $fam -t raw -A PREROUTING -i eth0 -p tcp \
		-d "$dst" --dport $port -j SYNCOOKIE --wscale 7 --sack-perm --timestamp
done

fetch() { # fetch ADDR: one complete, intact download, SYN via router 1
	local url=http://$1:$port/blob c1 v2 p2
	[[ $1 == *:* ]] && url="http://[$1]:$port/blob"
	c1=$(sval "$NFG_NS_R" cookie_sent) v2=$(sval $R2 ack_valid) p2=$(sval $R2 proxied)
	nfg_fetch_intact "$url" "$want"
	nfg_assert_ge "$(sval "$NFG_NS_R" cookie_sent)" $((c1 + 1)) "router 1 answered the SYN"
	nfg_assert_ge "$(sval $R2 ack_valid)" $((v2 + 1)) "router 2 validated the ACK"
	nfg_assert_ge "$(sval $R2 proxied)" $((p2 + 1)) "router 2 opened the connection"
}

# different (random) secrets: router 2 refuses router 1's cookies
nfg_log "random secrets"
inv=$(sval $R2 ack_invalid)
nfg_assert_fail "fetch without a shared secret" nfg_client curl -sS -m 3 -o /dev/null "http://$NFG_S4:$port/blob"
nfg_assert_ge "$(sval $R2 ack_invalid)" $((inv + 1)) "router 2 refused the ACK"
nfg_assert_eq 0 "$(sval $R2 proxied)" "router 2 proxied nothing"

nfg_log "shared secret"
secret=00112233445566778899aabbccddeeff
# off the command line: router 1 from stdin, router 2 from a file
nfg_assert_ok "secret router 1 (stdin)" nfg_router nfguard syncookie secret set - <<<"$secret"
echo "$secret" >"$NFG_WORK/secret" || nfg_fail "secret file"
nfg_assert_ok "secret router 2 (-f)" nfg_in $R2 nfguard syncookie secret set -f "$NFG_WORK/secret"
fetch "$NFG_S4"
fetch "$NFG_S6"
# the client is now on router 2's allowlist only: its SYNs still get cookies
# from router 1, and router 2 still proxies (the cookie is checked first)
fetch "$NFG_S4"
nfg_assert_eq 0 "$(sval "$NFG_NS_R" ack_valid)" "router 1 saw no ACK"
nfg_assert_eq 0 "$(sval $R2 cookie_sent)" "router 2 saw no SYN"

# router 2 changes its secret first: its previous one (router 1's) stays valid
nfg_log "secret change"
nfg_assert_ok "secret router 2 again" nfg_in $R2 nfguard syncookie secret set ffeeddccbbaa99887766554433221100
fetch "$NFG_S4"
nfg_log "ok"
