#!/bin/bash
# nfguard protect / unprotect (nfguard(8), PROTECT):
#  - error paths: a missing module (exit 3, names the module), bad arguments
#    (exit 2), no CAP_NET_ADMIN in an unprivileged user namespace (exit 4);
#  - what protect installs equals what iptables-nft installs for the
#    equivalent rules: every xt match/target (name, revision, info bytes as
#    the kernel dumps them) of both, IPv4 and IPv6, byte for byte;
#  - on the router of client -- router -- server, beside an unrelated nft
#    table: a blocklisted source is dropped while the client passes, the
#    connection limit lets 2 connections open and refuses the 3rd, a SYN is
#    answered with a cookie (cookie_sent, proxied grow) and the client's
#    download completes through it, forwarded packets hit the route cache;
#  - protect again gives a byte-identical `nft list ruleset`, --show prints
#    what --dry-run planned (every option), unprotect removes our tables
#    and chains and leaves the unrelated table exactly as it was.
# nfg-case-timeout: 300
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nft iptables-nft ip6tables-nft unshare curl socat nfg-nft-xtdump

P() { nfg_in "$NFG_NS_R" nfguard "$@"; }
# expect_exit CODE PATTERN CMD...: CMD exits CODE and its stderr matches PATTERN
expect_exit() {
	local code=$1 pat=$2 out rc=0
	shift 2
	out=$("$@" 2>&1 >/dev/null) || rc=$?
	nfg_assert_eq "$code" "$rc" "exit status of: $*"
	nfg_assert_match "$pat" "$out" "message of: $*"
}

# ---- no module loaded yet -----------------------------------------------
modprobe nft_compat || nfg_fail "modprobe nft_compat"
expect_exit 3 'kernel module xt_SYNCOOKIE is not loaded' nfguard protect --syncookie tcp/80
expect_exit 3 'kernel module xt_kconnlimit is not loaded' nfguard protect --kconnlimit 2 tcp/80

# ---- bad arguments -------------------------------------------------------
expect_exit 2 'nothing to protect with' nfguard protect
expect_exit 2 'protocol must be tcp' nfguard protect --syncookie udp/53
expect_exit 2 'ports are numbers from 1 to 65535' nfguard protect --syncookie tcp/0
expect_exit 2 'LIMIT is a number' nfguard protect --kconnlimit x/24 tcp/80
expect_exit 2 'MASK is an IPv4 prefix length' nfguard protect --kconnlimit 2/33 tcp/80
expect_exit 2 'missing PROTO/PORTS' nfguard protect --kconnlimit 2/24
expect_exit 2 'not a set name' nfguard protect --blocklist 'a b'
expect_exit 2 'unexpected argument "x"' nfguard unprotect x
expect_exit 2 'takes no other option' nfguard protect --show --rtcache

nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE

# ---- no permission: unprivileged user namespace, initial netns -------------
expect_exit 4 'needs CAP_NET_ADMIN' unshare -Ur nfguard protect --rtcache
expect_exit 4 'needs CAP_NET_ADMIN' unshare -Ur nfguard unprotect
expect_exit 4 'reading the nftables ruleset' unshare -Ur nfguard protect --show

# ---- the same bytes as iptables-nft -------------------------------------------
ns=nfg-pcmp
ip netns add $ns || nfg_fail "netns"
nfg_on_exit ip netns del $ns
nfg_in $ns nfguard set create bl ipv4 || nfg_fail "set create"
for fam in 4 6; do
	nfg_ipt $ns nft $fam -A INPUT -p tcp --dport 5001 -m kconnlimit --kconnlimit-above 2 ||
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
	ours=$( (nfg_in $ns nfg-nft-xtdump $f nfguard; nfg_in $ns nfg-nft-xtdump $f raw nfguard-syncookie
		nfg_in $ns nfg-nft-xtdump $f mangle nfguard-rtcache) | sort -u) || nfg_fail "dump ours $f"
	nfg_log "$f: $(wc -l <<<"$ours") xt expressions of ours"
	nfg_assert_eq "$ipt" "$ours" "$f: xt expressions of iptables-nft and of nfguard protect"
	n=3
	[ $f = ip ] && n=4
	nfg_assert_eq $n "$(wc -l <<<"$ours")" "$f: distinct xt expressions"
done
# the iptables-nft rules are still there and still work with nfguard's chains beside them
nfg_assert_match 'kconnlimit-above 2' "$(nfg_in $ns iptables-nft -S INPUT)" "iptables-nft rule kept"

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
nfg_assert_eq "$(grep -v '^delete' "$NFG_WORK/plan")" "$(cat "$NFG_WORK/show")" "--show prints what --dry-run planned"
show=$(cat "$NFG_WORK/show")
nfg_assert_match 'add rule ip nfguard blocklist -m rangeset --match-set bl src -j DROP' "$show" "show: blocklist"
nfg_assert_match 'add rule ip nfguard kconnlimit -m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 32 --kconnlimit-saddr -j REJECT' "$show" "show: kconnlimit"
nfg_assert_match 'add rule ip6 raw nfguard-syncookie -p tcp --dport 80 -j SYNCOOKIE --mode proxy --allowlist-timeout 300 --allowlist-mask 128' "$show" "show: SYNCOOKIE"
nfg_assert_match 'add rule ip6 mangle nfguard-rtcache -j RTCACHE' "$show" "show: RTCACHE"

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

# RTCACHE: the forwarded flows hit the cache
rtc_hits() { P rtcache stats | sed -n 's/^hit //p'; }
nfg_log "rtcache: $(P rtcache stats | tr '\n' ' ')"
nfg_assert_ge "$(rtc_hits)" 1 "route cache hits"

# ---- idempotent, unprotect ----------------------------------------------------
nfg_assert_ok "protect again" P protect "${args[@]}"
nfg_router nft list ruleset >"$NFG_WORK/ruleset2" || nfg_fail "list ruleset"
nfg_assert_eq "$(nfg_sha256 "$NFG_WORK/ruleset1")" "$(nfg_sha256 "$NFG_WORK/ruleset2")" "protect twice: same ruleset"
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
