#!/bin/bash
# nfguard protect keeps its profile in tables of its own (ip/ip6 nfguard),
# and the extensions take an nft chain wherever its priority puts it
# (nfguard(8) PROTECT, nfguard-extensions(8) SYNCOOKIE):
#  - after protect, iptables-nft-restore of a *raw and a *mangle section
#    (which replaces iptables-nft's raw and mangle tables) leaves the
#    profile intact (protect --check exits 0) and working (a download
#    through a cookie handshake);
#  - what nfguard(8) tells an nft user to save: their own tables
#    (nft list table ...) and the profile (protect --show, a shell script);
#    after nft flush ruleset, nft -f of the one and sh of the other give
#    back the same profile and the same table. Whether stock nft loads a
#    whole `nft list ruleset` with xt expressions is logged;
#  - an older protect's chains (raw nfguard-syncookie, mangle
#    nfguard-rtcache) are removed, and the raw table it created; a user's
#    chain in mangle stays;
#  - SYNCOOKIE in a chain after conntrack (iptables-nft-restore into mangle
#    PREROUTING, priority -150; the plugin refuses that on a command line):
#    the client's connection passes untouched (no cookie sent), counted in
#    after_conntrack, IPv4 and IPv6;
#  - iptables-legacy still refuses SYNCOOKIE outside raw: the plugin on a
#    command line, the kernel (its log says where it is valid) on restore.
# (SYNCOOKIE at raw priority in table nfguard under a real spoofed SYN
# flood, with a client downloading through it: cli_protect.)
# nfg-case-timeout: 300
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nft iptables-nft ip6tables-nft iptables-nft-restore ip6tables-nft-restore iptables-legacy \
	iptables-legacy-restore curl dmesg python3

P() { nfg_in "$NFG_NS_R" nfguard "$@"; }
modprobe nft_compat || nfg_fail "modprobe nft_compat"
nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE
nfg_topo_up
www=$NFG_WORK/www
mkdir -p "$www" && head -c 100000 /dev/urandom >"$www/blob" || nfg_fail "test file"
want=$(nfg_sha256 "$www/blob")
nfg_http_server "$NFG_NS_S" 80 "$www"
statf=$NFG_WORK/sc
snap() { nfg_router cat /proc/net/stat/nfguard_syncookie >"$statf" || nfg_fail "syncookie stats"; }

nfg_router nfguard set create bl ipv4 || nfg_fail "set create"
args=(--syncookie tcp/80 --kconnlimit 20 tcp/5001 --blocklist bl --rtcache)
nfg_assert_ok "protect" P protect "${args[@]}"
nfg_router nft list ruleset >"$NFG_ARTIFACTS/ruleset" 2>&1
nfg_assert_eq "table ip nfguard
table ip6 nfguard" "$(nfg_router nft list tables)" "the profile's tables, nothing else"

# ---- iptables-nft-restore of raw and mangle leaves the profile alone --------
for fam in 4 6; do
	cmd=iptables-nft-restore
	[ $fam = 6 ] && cmd=ip6tables-nft-restore
	nfg_router $cmd <<-'EOF' || nfg_fail "$cmd"
		*raw
		:PREROUTING ACCEPT [0:0]
		:OUTPUT ACCEPT [0:0]
		-A PREROUTING -p udp --dport 9 -j ACCEPT
		COMMIT
		*mangle
		:PREROUTING ACCEPT [0:0]
		:FORWARD ACCEPT [0:0]
		-A FORWARD -p udp --dport 9 -j ACCEPT
		COMMIT
	EOF
done
out=$(P protect --check "${args[@]}" 2>&1) || nfg_fail "profile changed by iptables-nft-restore: $out"
snap
c0=$(nfg_kv "$statf" cookie_sent)
nfg_fetch_intact "http://$NFG_S4/blob" "$want"
nfg_fetch_intact "http://[$NFG_S6]/blob" "$want"
snap
nfg_assert_ge "$(nfg_kv "$statf" cookie_sent)" $((c0 + 2)) "cookies after iptables-nft-restore"

# ---- what an nft user saves, and loads after a reboot ---------------------------
nfg_router nft -f - <<-'EOF' || nfg_fail "a table of the user's"
	table inet mine {
		chain myfwd {
			type filter hook forward priority 10; policy accept;
			tcp dport 9 counter drop
		}
	}
EOF
nfg_router nft list ruleset >"$NFG_WORK/all.nft" || nfg_fail "nft list ruleset"
if nfg_router nft -c -f "$NFG_WORK/all.nft" >"$NFG_WORK/all.err" 2>&1; then
	nfg_log "stock nft would load the whole ruleset"
else
	nfg_log "stock nft does not load a whole ruleset with xt expressions: $(head -n 2 "$NFG_WORK/all.err" | tr '\n' ' ')"
fi
nfg_router nft list table inet mine >"$NFG_WORK/mine.nft" || nfg_fail "save the user's table"
P protect --show >"$NFG_WORK/profile.sh" || nfg_fail "save the profile"
cp "$NFG_WORK/all.nft" "$NFG_WORK/mine.nft" "$NFG_WORK/profile.sh" "$NFG_ARTIFACTS/"
nfg_router nft flush ruleset || nfg_fail "flush"
nfg_assert_eq "" "$(nfg_router nft list tables)" "flushed"
nfg_assert_ok "nft -f the user's table" nfg_router nft -f "$NFG_WORK/mine.nft"
nfg_assert_ok "sh the profile" nfg_router sh -e "$NFG_WORK/profile.sh"
out=$(P protect --check "${args[@]}" 2>&1) || nfg_fail "profile after reload: $out"
nfg_assert_eq "$(cat "$NFG_WORK/mine.nft")" "$(nfg_router nft list table inet mine)" "the user's table after reload"
snap
c0=$(nfg_kv "$statf" cookie_sent)
nfg_fetch_intact "http://$NFG_S4/blob" "$want"
snap
nfg_assert_ge "$(nfg_kv "$statf" cookie_sent)" $((c0 + 1)) "cookies after reload"
nfg_assert_ok "unprotect" P unprotect
nfg_router nft delete table inet mine

# ---- an older protect's chains in raw/mangle are removed ---------------------------
nfg_router nft -f - <<-'EOF' || nfg_fail "an older protect's layout"
	table ip raw {
		comment "managed by nfguard protect"
		chain nfguard-syncookie { type filter hook prerouting priority -300; }
	}
	table ip mangle {
		chain keep { type filter hook forward priority -150; }
		chain nfguard-rtcache { type filter hook forward priority -150; }
	}
EOF
nfg_assert_ok "protect over an older layout" P protect --rtcache
nfg_assert_eq "table ip mangle
table ip nfguard
table ip6 nfguard" "$(nfg_router nft list tables)" "older raw table (protect's, empty) removed"
nfg_assert_eq "keep" "$(nfg_router nft -j list chains ip | python3 -c '
import json, sys
print(" ".join(c["chain"]["name"] for c in json.load(sys.stdin)["nftables"] if "chain" in c and c["chain"]["table"] == "mangle"))')" \
	"older nfguard-rtcache removed, the user's mangle chain kept"
nfg_assert_ok "unprotect" P unprotect
nfg_router nft delete table ip mangle

# ---- SYNCOOKIE after conntrack: passes untouched, counted ------------------------
# the plugin refuses -t mangle on a command line (iptables' tables have fixed
# priorities); restore input is the kernel's to judge, which accepts any nft
# table: the packet path tells a chain after conntrack
nfg_expect_exit 2 'SYNCOOKIE: only valid in the raw table' \
	nfg_ipt "$NFG_NS_R" nft 4 -t mangle -A PREROUTING -p tcp --dport 80 -j SYNCOOKIE
for fam in 4 6; do
	cmd=iptables-nft-restore
	[ $fam = 6 ] && cmd=ip6tables-nft-restore
	nfg_router $cmd <<-'EOF' || nfg_fail "$cmd: SYNCOOKIE in mangle PREROUTING"
		*mangle
		:PREROUTING ACCEPT [0:0]
		-A PREROUTING -p tcp --dport 80 -j SYNCOOKIE
		COMMIT
	EOF
done
snap
c0=$(nfg_kv "$statf" cookie_sent) a0=$(nfg_kv "$statf" after_conntrack)
nfg_fetch_intact "http://$NFG_S4/blob" "$want"
nfg_fetch_intact "http://[$NFG_S6]/blob" "$want"
snap
nfg_assert_eq "$c0" "$(nfg_kv "$statf" cookie_sent)" "after conntrack: no cookie sent"
nfg_assert_ge "$(nfg_kv "$statf" after_conntrack)" $((a0 + 2)) "after conntrack: counted"
P syncookie stats >"$NFG_WORK/cli" || nfg_fail "nfguard syncookie stats"
nfg_assert_eq "$(nfg_kv "$statf" after_conntrack)" "$(nfg_kv "$NFG_WORK/cli" after_conntrack)" \
	"nfguard syncookie stats: after_conntrack as in /proc"
for fam in 4 6; do
	nfg_ipt "$NFG_NS_R" nft $fam -t mangle -F PREROUTING || nfg_fail "flush mangle ($fam)"
done

# ---- legacy iptables: raw only ---------------------------------------------------
# the command line: the plugin says so; restore input: the kernel does
nfg_expect_exit 2 'SYNCOOKIE: only valid in the raw table' \
	nfg_ipt "$NFG_NS_R" legacy 4 -t mangle -A PREROUTING -p tcp --dport 80 -j SYNCOOKIE
dmesg -C
nfg_assert_fail "iptables-legacy-restore: SYNCOOKIE in mangle" nfg_router iptables-legacy-restore <<-'EOF'
	*mangle
	:PREROUTING ACCEPT [0:0]
	-A PREROUTING -p tcp --dport 80 -j SYNCOOKIE
	COMMIT
EOF
nfg_wait_until 5 eval "dmesg | grep -q 'SYNCOOKIE: only valid in the raw table, not mangle'" ||
	nfg_fail "no kernel message for SYNCOOKIE in mangle: $(dmesg | tail -n 3)"
nfg_assert_ok "iptables-legacy -t raw SYNCOOKIE" \
	nfg_ipt "$NFG_NS_R" legacy 4 -t raw -A PREROUTING -p tcp --dport 80 -j SYNCOOKIE
nfg_ipt "$NFG_NS_R" legacy 4 -t raw -F PREROUTING
nfg_log "ok"
