#!/bin/bash
# nfguard protect / unprotect (nfguard(8), PROTECT):
#  - error paths: a missing module (exit 3, names the module), bad arguments
#    (exit 2), no CAP_NET_ADMIN in an unprivileged user namespace (exit 4);
#  - what protect installs equals what iptables-nft installs for the
#    equivalent rules: every xt match/target (name, revision, info bytes as
#    the kernel dumps them) of both, IPv4 and IPv6, byte for byte, with the
#    defaults and with every SYNCOOKIE option (--syncookie-mode ... -mask);
#    -6 installs the ip6 rules only and removes the ip ones;
#  - on the router of client -- router -- server, beside an unrelated nft
#    table: a blocklisted source is dropped while the client passes, the
#    connection limit lets 2 connections open and refuses the 3rd, a SYN is
#    answered with a cookie (cookie_sent, proxied grow) and the client's
#    download completes through it, forwarded packets hit the route cache;
#    a spoofed SYN flood (IPv4 and IPv6) is answered with cookies while the
#    router's conntrack table does not grow, no flood packet reaches the
#    server, and a client with an empty allowlist still downloads through
#    a cookie handshake during the flood; -4 with a UDP limit: the 2nd IPv4
#    flow gets an ICMP port unreachable, IPv6 flows are not limited;
#  - protect again gives a byte-identical `nft list ruleset`, --show prints
#    what --dry-run planned (every option), unprotect removes our tables
#    and chains and leaves the unrelated table exactly as it was.
# nfg-case-timeout: 300
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nft iptables-nft ip6tables-nft unshare curl socat ss python3 nfg-nft-xtdump nfg-tcpflood

P() { nfg_in "$NFG_NS_R" nfguard "$@"; }

# ---- no module loaded yet -----------------------------------------------
modprobe nft_compat || nfg_fail "modprobe nft_compat"
nfg_expect_exit 3 'has no xt_SYNCOOKIE module: nfguard.s modules are not built for it' nfguard protect --syncookie tcp/80
nfg_expect_exit 3 'has no xt_kconnlimit module: nfguard.s modules are not built for it' nfguard protect --kconnlimit 2 tcp/80

# ---- bad arguments -------------------------------------------------------
nfg_expect_exit 2 'nothing to protect with' nfguard protect
nfg_expect_exit 2 'protocol must be tcp' nfguard protect --syncookie udp/53
nfg_expect_exit 2 'ports are numbers from 1 to 65535' nfguard protect --syncookie tcp/0
nfg_expect_exit 2 'LIMIT is a number' nfguard protect --kconnlimit x/24 tcp/80
nfg_expect_exit 2 'MASK is an IPv4 prefix length' nfguard protect --kconnlimit 2/33 tcp/80
nfg_expect_exit 2 'missing PROTO/PORTS' nfguard protect --kconnlimit 2/24
nfg_expect_exit 2 'not a set name' nfguard protect --blocklist 'a b'
nfg_expect_exit 2 'unexpected argument "x"' nfguard unprotect x
nfg_expect_exit 2 'takes no other option' nfguard protect --show --rtcache
nfg_expect_exit 2 '-4 and -6 together' nfguard protect -4 -6 --rtcache
nfg_expect_exit 2 'needs --syncookie tcp/PORTS' nfguard protect --rtcache --syncookie-mss 1400
nfg_expect_exit 2 '"40": a number from 88 to 65535' nfguard protect --syncookie tcp/80 --syncookie-mss 40
nfg_expect_exit 2 'proxy or local' nfguard protect --syncookie tcp/80 --syncookie-mode fast
nfg_expect_exit 2 'needs --syncookie-timestamp in local mode' nfguard protect --syncookie tcp/80 \
	--syncookie-mode local --syncookie-sack-perm
nfg_expect_exit 2 '-4 takes one mask' nfguard protect -4 --syncookie tcp/80 --syncookie-allowlist-mask 24,64
nfg_expect_exit 2 'MASK6 is an IPv6 prefix length from 1 to 128' nfguard protect --syncookie tcp/80 \
	--syncookie-allowlist-mask 24,0

nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE

# ---- no permission: unprivileged user namespace, initial netns -------------
nfg_expect_exit 4 'needs CAP_NET_ADMIN' unshare -Ur nfguard protect --rtcache
nfg_expect_exit 4 'needs CAP_NET_ADMIN' unshare -Ur nfguard unprotect
nfg_expect_exit 4 'reading the nftables ruleset' unshare -Ur nfguard protect --show

# ---- the same bytes as iptables-nft -------------------------------------------
ns=nfg-pcmp
ip netns add $ns || nfg_fail "netns"
nfg_on_exit ip netns del $ns
nfg_in $ns nfguard set create bl ipv4 || nfg_fail "set create"
for fam in 4 6; do
	# protect's IPv6 key is a /64 unless told (the plugin's: the whole address)
	km=()
	[ $fam = 6 ] && km=(--kconnlimit-mask 64)
	nfg_ipt $ns nft $fam -A INPUT -p tcp --dport 5001 -m kconnlimit --kconnlimit-above 2 "${km[@]}" ||
		nfg_fail "iptables-nft kconnlimit $fam"
	nfg_ipt $ns nft $fam -t raw -A PREROUTING -p tcp --dport 80 -j SYNCOOKIE ||
		nfg_fail "iptables-nft SYNCOOKIE $fam"
	nfg_ipt $ns nft $fam -t mangle -A FORWARD -j RTCACHE || nfg_fail "iptables-nft RTCACHE $fam"
done
nfg_ipt $ns nft 4 -t raw -A PREROUTING -m rangeset --match-set bl src -j DROP ||
	nfg_fail "iptables-nft rangeset"
nfg_assert_ok "protect beside iptables-nft" nfg_in $ns nfguard protect \
	--syncookie tcp/80 --kconnlimit 2 tcp/5001 --blocklist bl --rtcache
for f in ip ip6; do
	ipt=$( (nfg_in $ns nfg-nft-xtdump $f filter INPUT; nfg_in $ns nfg-nft-xtdump $f raw PREROUTING
		nfg_in $ns nfg-nft-xtdump $f mangle FORWARD) | sort) || nfg_fail "dump iptables-nft $f"
	ours=$(nfg_in $ns nfg-nft-xtdump $f nfguard | sort -u) || nfg_fail "dump ours $f"
	nfg_log "$f: $(wc -l <<<"$ours") xt expressions of ours"
	nfg_assert_eq "$ipt" "$ours" "$f: xt expressions of iptables-nft and of nfguard protect"
	n=3
	[ $f = ip ] && n=4
	nfg_assert_eq $n "$(wc -l <<<"$ours")" "$f: distinct xt expressions"
done
# the iptables-nft rules are still there and still work with nfguard's chains beside them
nfg_assert_match 'kconnlimit-above 2' "$(nfg_in $ns iptables-nft -S INPUT)" "iptables-nft rule kept"
# every SYNCOOKIE option, as iptables-nft encodes it; -6: the ip6 rules only
for fam in 4 6; do
	nfg_ipt $ns nft $fam -t raw -F PREROUTING || nfg_fail "flush raw $fam"
	m=24
	[ $fam = 6 ] && m=64
	nfg_ipt $ns nft $fam -t raw -A PREROUTING -p tcp --dport 443 -j SYNCOOKIE --mode local \
		--mss 1400 --wscale 7 --sack-perm --timestamp --allowlist-timeout 60 --allowlist-mask $m ||
		nfg_fail "iptables-nft SYNCOOKIE with options $fam"
done
sco=(--syncookie tcp/443 --syncookie-mode local --syncookie-mss 1400 --syncookie-wscale 7
	--syncookie-sack-perm --syncookie-timestamp --syncookie-allowlist-timeout 60)
nfg_assert_ok "protect with SYNCOOKIE options" nfg_in $ns nfguard protect "${sco[@]}" \
	--syncookie-allowlist-mask 24,64
for f in ip ip6; do
	ipt=$(nfg_in $ns nfg-nft-xtdump $f raw PREROUTING) || nfg_fail "dump iptables-nft raw $f"
	ours=$(nfg_in $ns nfg-nft-xtdump $f nfguard syncookie) || nfg_fail "dump ours raw $f"
	nfg_assert_match '^target SYNCOOKIE rev 0 ' "$ours" "$f: SYNCOOKIE with options installed"
	nfg_assert_eq "$ipt" "$ours" "$f: SYNCOOKIE with every option, iptables-nft and nfguard protect"
done
nfg_assert_ok "protect -6" nfg_in $ns nfguard protect -6 "${sco[@]}" --syncookie-allowlist-mask 64
nfg_assert_eq "$ours" "$(nfg_in $ns nfg-nft-xtdump ip6 nfguard syncookie)" "-6: ip6 rule, a single MASK is IPv6's"
show=$(nfg_in $ns nfguard protect --show) || nfg_fail "show after -6"
nfg_assert_eq "" "$(grep -e '^# add [a-z]* ip ' <<<"$show")" "-6: nothing of ours left in family ip"
nfg_assert_match 'add rule ip6 nfguard syncookie -p tcp --dport 443 -j SYNCOOKIE --mode local --mss 1400 --wscale 7 --sack-perm --timestamp --allowlist-timeout 60 --allowlist-mask 64' \
	"$show" "-6: show prints every SYNCOOKIE option"
nfg_expect_exit 2 'bl is an ipv4 set: -6 installs no IPv6 rule' nfg_in $ns nfguard protect -6 --blocklist bl
nfg_assert_ok "unprotect after -6" nfg_in $ns nfguard unprotect
nfg_assert_eq "" "$(nfg_in $ns nfguard protect --show)" "nothing shown after unprotect (-6)"
nfg_assert_eq "$(nfg_in $ns nfg-nft-xtdump ip6 raw PREROUTING)" "$ours" "iptables-nft raw rules kept"

# ---- the profile on a router, real packets -------------------------------------
nfg_topo_up
www=$NFG_WORK/www
mkdir -p "$www" && head -c 200000 /dev/urandom >"$www/blob" || nfg_fail "test file"
want=$(nfg_sha256 "$www/blob")
nfg_http_server "$NFG_NS_S" 80 "$www"
nfg_echo_server "$NFG_NS_S" 5001
nfg_client ip addr add 10.0.1.77/24 dev eth0 || nfg_fail "second client address"
# an unrelated ruleset that must survive
nfg_router nft -f - <<-'EOF' || nfg_fail "unrelated table"
	table inet keepme {
		chain keepfwd {
			type filter hook forward priority 10; policy accept;
			tcp dport 9 counter drop
		}
	}
EOF
keep0=$(nfg_router nft list table inet keepme) || nfg_fail "list keepme"
nfg_router nfguard set create bl ipv4 || nfg_fail "set create"
nfg_router nfguard set add bl 10.0.1.77 || nfg_fail "set add"

args=(--syncookie tcp/80 --kconnlimit 2/32 tcp/5001 --blocklist bl --rtcache)
P protect --dry-run "${args[@]}" >"$NFG_WORK/plan" || nfg_fail "dry-run: exit $?"
nfg_assert_eq "" "$(nfg_router nft list tables | grep -v keepme)" "dry-run touched nothing"
nfg_assert_ok "protect" P protect "${args[@]}"
nfg_router nft list ruleset >"$NFG_WORK/ruleset1" || nfg_fail "list ruleset"
P protect --show >"$NFG_WORK/show" || nfg_fail "show: exit $?"
cp "$NFG_WORK/plan" "$NFG_WORK/show" "$NFG_WORK/ruleset1" "$NFG_ARTIFACTS/" 2>/dev/null
nfg_assert_eq "$(grep -v '^# delete' "$NFG_WORK/plan")" "$(cat "$NFG_WORK/show")" "--show prints what --dry-run planned"
nfg_assert_eq "nfguard protect --syncookie tcp/80 --kconnlimit 2 tcp/5001 --blocklist bl --rtcache" \
	"$(head -n 1 "$NFG_WORK/show")" "--show: the command first"
show=$(cat "$NFG_WORK/show")
nfg_assert_match 'add rule ip nfguard blocklist -m rangeset --match-set bl src -j DROP' "$show" "show: blocklist"
nfg_assert_match 'add rule ip nfguard kconnlimit -m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 32 --kconnlimit-saddr -j REJECT' "$show" "show: kconnlimit"
nfg_assert_match 'add rule ip6 nfguard syncookie -p tcp --dport 80 -j SYNCOOKIE --mode proxy --allowlist-timeout 300 --allowlist-mask 128' "$show" "show: SYNCOOKIE"
nfg_assert_match 'add rule ip6 nfguard rtcache -j RTCACHE' "$show" "show: RTCACHE"

# blocklist: 10.0.1.77 dropped, the client's own address passes
nfg_assert_ok "client passes" nfg_client ping -c 1 -W 5 "$NFG_S4"
nfg_assert_fail "blocklisted source dropped" nfg_client ping -c 1 -W 2 -I 10.0.1.77 "$NFG_S4"
nfg_assert_ge "$(P set list bl | sed -n 's/^Hits: //p')" 1 "blocklist hits"

# kconnlimit: 2 connections open, the 3rd refused, IPv4 and IPv6
for fam in 4 6; do
	a=$NFG_S4
	[ $fam = 6 ] && a=$NFG_S6
	nfg_assert_ok "connection 1 to $a" nfg_conn_open "c1v$fam" "$NFG_NS_C" "$a" 5001
	nfg_assert_ok "connection 2 to $a" nfg_conn_open "c2v$fam" "$NFG_NS_C" "$a" 5001
	nfg_assert_fail "connection 3 to $a refused" nfg_conn_open "c3v$fam" "$NFG_NS_C" "$a" 5001 10
	nfg_conn_close "c1v$fam"
	nfg_conn_close "c2v$fam"
done

# SYNCOOKIE: the SYN is answered with a cookie, the download completes through it
statf=$NFG_WORK/sc
snap() { nfg_router cat /proc/net/stat/nfguard_syncookie >"$statf" || nfg_fail "syncookie stats"; }
snap
c0=$(nfg_kv "$statf" cookie_sent) p0=$(nfg_kv "$statf" proxied)
nfg_fetch_intact "http://$NFG_S4/blob" "$want"
nfg_fetch_intact "http://[$NFG_S6]/blob" "$want"
snap
nfg_assert_ge "$(nfg_kv "$statf" cookie_sent)" $((c0 + 1)) "cookie SYN-ACKs sent"
nfg_assert_ge "$(nfg_kv "$statf" proxied)" $((p0 + 1)) "connections proxied"

# SYNCOOKIE under a spoofed SYN flood: answered with cookies, the router's
# conntrack table does not grow, nothing reaches the server's listener, and
# a client that must prove itself again still downloads during the flood.
# The cookie SYN-ACKs to the flood's sources go back towards the client.
nfg_router ip route add 10.99.0.0/16 via "$NFG_C4" || nfg_fail "flood route"
nfg_router ip -6 route add fd00:99::/64 via "$NFG_C6" || nfg_fail "flood route 6"
nfg_server nft -f - <<-'EOF' || nfg_fail "server flood counter"
	table inet seen {
		counter flood { }
		chain in {
			type filter hook input priority -500; policy accept;
			ip saddr 10.99.0.0/16 counter name flood
			ip6 saddr fd00:99::/64 counter name flood
		}
	}
EOF
cookies_at_least() { snap; [ "$(nfg_kv "$statf" cookie_sent)" -ge "$1" ]; }
ct_count() { nfg_router cat /proc/sys/net/netfilter/nf_conntrack_count; }
for fam in 4 6; do
	a=$NFG_S4 src=10.99.0.0/16 url=http://$NFG_S4/blob
	[ $fam = 6 ] && a=$NFG_S6 src=fd00:99::/64 url="http://[$NFG_S6]/blob"
	nfg_assert_ok "allowlist flush" P syncookie allowlist flush
	snap
	c0=$(nfg_kv "$statf" cookie_sent) v0=$(nfg_kv "$statf" ack_valid)
	ct0=$(ct_count)
	t0=$SECONDS
	nfg_bg "$NFG_NS_C" nfg-tcpflood -i 1000 "$a" 80 S $src
	flood=$NFG_LAST_PID
	nfg_wait_until 120 cookies_at_least $((c0 + 200)) || nfg_fail "IPv$fam flood not answered with cookies"
	nfg_fetch_intact "$url" "$want"
	nfg_wait_until 120 cookies_at_least $((c0 + 400)) || nfg_fail "IPv$fam flood stalled"
	nfg_assert_le "$(ct_count)" $((ct0 + 10)) "IPv$fam flood: router conntrack entries (were $ct0)"
	kill "$flood" 2>/dev/null
	wait "$flood" 2>/dev/null
	snap
	nfg_assert_ge "$(nfg_kv "$statf" ack_valid)" $((v0 + 1)) "IPv$fam flood: the client's cookie ACK"
	nfg_assert_match 'packets 0 bytes 0' "$(nfg_server nft list counter inet seen flood)" \
		"IPv$fam flood: flood packets that reached the server"
	nfg_assert_eq 0 "$(nfg_server ss -Hltn 'sport = :80' | awk '{ print $2 }')" "server's accept queue"
	nfg_log "IPv$fam flood: $(($(nfg_kv "$statf" cookie_sent) - c0)) cookies, conntrack $ct0 -> $(ct_count), $((SECONDS - t0)) s"
done

# RTCACHE: the forwarded flows hit the cache
rtc_hits() { P rtcache stats | sed -n 's/^hit //p'; }
nfg_log "rtcache: $(P rtcache stats | tr '\n' ' ')"
nfg_assert_ge "$(rtc_hits)" 1 "route cache hits"

# ---- idempotent, unprotect ----------------------------------------------------
nfg_assert_ok "protect again" P protect "${args[@]}"
nfg_router nft list ruleset >"$NFG_WORK/ruleset2" || nfg_fail "list ruleset"
nfg_assert_eq "$(nfg_sha256 "$NFG_WORK/ruleset1")" "$(nfg_sha256 "$NFG_WORK/ruleset2")" "protect twice: same ruleset"
# a UDP connection limit, IPv4 only (-4): the 2nd IPv4 flow is refused with
# an ICMP port unreachable, IPv6 flows are not limited (no ip6 rules)
nfg_assert_ok "protect -4 udp" P protect -4 --kconnlimit 1 udp/5002
nfg_assert_eq "" "$(P protect --show | grep -e '^# add [a-z]* ip6 ')" "-4: nothing of ours in ip6"
nfg_bg "$NFG_NS_S" socat UDP6-RECVFROM:5002,ipv6-v6only=0,fork PIPE
nfg_wait_port "$NFG_NS_S" 5002 udp 300 "$NFG_LAST_PID"
udp=$(nfg_client python3 - "$NFG_S4" "$NFG_S6" <<-'EOF'
	import socket, sys
	socks = []
	def flow(fam, addr):
	    s = socket.socket(fam, socket.SOCK_DGRAM)
	    socks.append(s)  # the flows stay open
	    s.settimeout(30)
	    s.connect((addr, 5002))
	    s.send(b"ping")
	    try:
	        return "echo" if s.recv(16) == b"ping" else "garbled"
	    except ConnectionRefusedError:
	        return "refused"
	    except socket.timeout:
	        return "timeout"
	print(" ".join([flow(socket.AF_INET, sys.argv[1]), flow(socket.AF_INET, sys.argv[1]),
	                flow(socket.AF_INET6, sys.argv[2]), flow(socket.AF_INET6, sys.argv[2])]))
	EOF
) || nfg_fail "udp flows: exit $?"
nfg_assert_eq "echo refused echo echo" "$udp" "UDP flows: IPv4 limited to 1, IPv6 not limited"
# a smaller profile replaces the bigger one
nfg_assert_ok "protect rtcache only" P protect --rtcache
nfg_assert_eq "" "$(P protect --show | grep -e SYNCOOKIE -e kconnlimit -e rangeset)" "replaced profile"
nfg_assert_ok "protect full" P protect "${args[@]}"
nfg_assert_ok "unprotect" P unprotect
nfg_assert_eq "" "$(P protect --show)" "nothing shown after unprotect"
nfg_assert_eq "table inet keepme" "$(nfg_router nft list tables)" "only the unrelated table is left"
nfg_assert_eq "$keep0" "$(nfg_router nft list table inet keepme)" "unrelated table unchanged"
nfg_assert_ok "unprotect twice" P unprotect
# the blocklisted source passes again
nfg_assert_ok "unblocked" nfg_client ping -c 1 -W 5 -I 10.0.1.77 "$NFG_S4"
nfg_log "ok"
