#!/bin/bash
# nfguard protect's options add up (nfguard(8), PROTECT), checked on what the
# kernel holds (protect --show decodes the dumped rules):
#  - two --kconnlimit options are two limits, each with its own chain, mask
#    and ports; two --syncookie options install both port lists; two
#    --blocklist options (an ipv4 and an ipv6 set) install a rule per set in
#    its family; a port or set given twice is installed once;
#  - the IPv6 kconnlimit key defaults to /64 (IPv4: the whole address);
#    -6 refuses a single mask of 32 or less (an IPv4 length read as an IPv6
#    prefix) and takes ",MASK6" or a mask above 32;
#  - protect --check: 0 while the live ruleset is the profile, 1 naming each
#    missing or unexpected line once it drifted (a chain deleted, a
#    different profile);
#  - --show prints a shell script (the `nfguard protect` command read back
#    from the rules, then the rules as comments): fed to sh after unprotect
#    it gives the same --show, for several profiles;
#  - --show --json: the same profile with every option's value (defaults
#    included) and the same operations; without a profile, installed false;
#  - every expression decoded (a UDP limit's ICMP reject too, no [reject]);
#  - a dry run that cannot read a set's family says what it assumed on a
#    warning: line and exits 0.
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nft python3

nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE
modprobe nft_compat || nfg_fail "modprobe nft_compat"
ns=nfg-popts
ip netns add $ns || nfg_fail "netns"
nfg_on_exit ip netns del $ns
P() { nfg_in $ns nfguard "$@"; }
P set create bl4 ipv4 || nfg_fail "set create bl4"
P set create bl6 ipv6 || nfg_fail "set create bl6"

nfg_assert_ok "protect with repeated options" P protect --kconnlimit 64/24 tcp/80 --kconnlimit 10 tcp/22,80 \
	--syncookie tcp/80 --syncookie tcp/443,80 --blocklist bl4 --blocklist bl6 --blocklist bl4
show=$(P protect --show) || nfg_fail "show"
printf '%s\n' "$show" >"$NFG_ARTIFACTS/show"
for f in ip ip6; do
	m4=24 w4=32
	[ $f = ip6 ] && m4=64 w4=64
	nfg_assert_match "add rule $f nfguard kconnlimit -m kconnlimit --kconnlimit-above 64 --kconnlimit-mask $m4 " "$show" "$f: first limit"
	nfg_assert_match "add rule $f nfguard kconnlimit-2 -m kconnlimit --kconnlimit-above 10 --kconnlimit-mask $w4 " "$show" "$f: second limit"
	for h in input forward; do
		nfg_assert_eq "kconnlimit:80 kconnlimit-2:22 kconnlimit-2:80" \
			"$(sed -n "s/^# add rule $f nfguard $h -p tcp --dport \([0-9]*\) --syn -j \(kconnlimit[-0-9]*\)\$/\2:\1/p" <<<"$show" | tr '\n' ' ' | sed 's/ $//')" \
			"$f $h: jumps to each limit's chain, in order"
	done
	nfg_assert_eq "80 443" "$(sed -n "s/^# add rule $f nfguard syncookie -p tcp --dport \([0-9]*\) .*/\1/p" <<<"$show" | tr '\n' ' ' | sed 's/ $//')" \
		"$f: SYNCOOKIE ports of both options, 80 once"
done
nfg_assert_eq "# add rule ip nfguard blocklist -m rangeset --match-set bl4 src -j DROP" \
	"$(grep 'nfguard blocklist -m' <<<"$show" | grep ' ip ')" "ip: the ipv4 set, once"
nfg_assert_eq "# add rule ip6 nfguard blocklist -m rangeset --match-set bl6 src -j DROP" \
	"$(grep 'nfguard blocklist -m' <<<"$show" | grep ' ip6 ')" "ip6: the ipv6 set"
nfg_assert_eq "" "$(grep -F '[' <<<"$show")" "every expression decoded, no [placeholder]"
# --show is a shell script: the command that gives the profile, the rules as comments
nfg_assert_eq "nfguard protect --syncookie tcp/80,443 --kconnlimit 64/24,64 tcp/80 --kconnlimit 10 tcp/22,80 --blocklist bl4 --blocklist bl6" \
	"$(head -n 1 <<<"$show")" "--show: the command, options added up"
nfg_assert_eq "" "$(sed 1d <<<"$show" | grep -v '^# ')" "--show: the rest are comments"
# --show --json: the same profile, every option with its value, the same operations
js=$(P protect --show --json) || nfg_fail "--show --json: exit $?"
printf '%s\n' "$js" >"$NFG_ARTIFACTS/show.json"
got=$(python3 -c '
import json, sys
p = json.loads(sys.argv[1])
sc = p["syncookie"]
print(p["installed"], p["exact"], ",".join(p["families"]), " ".join(p["blocklist"]), p["rtcache"])
print(sc["proto"], sc["ports"], sc["mode"], sc["mss"], sc["wscale"], sc["sack_perm"], sc["timestamp"],
      sc["allowlist_timeout"], sc["allowlist_mask"], sc["allowlist_mask6"])
for k in p["kconnlimit"]:
    print(k["chain"], k["limit"], k["mask"], k["mask6"], k["proto"], k["ports"])
for o in p["operations"]:
    print("# " + o)' "$js") || nfg_fail "--show --json is not the JSON expected: $js"
nfg_assert_eq "True True ip,ip6 bl4 bl6 False
tcp [80, 443] proxy None None False False 300 32 128
kconnlimit 64 24 64 tcp [80]
kconnlimit-2 10 32 64 tcp [22, 80]
$(sed 1d <<<"$show")" "$got" "--show --json"
nfg_expect_exit 2 '--json goes with --show' P protect --json --rtcache
roundtrip() {
	local show1 show2
	show1=$(P protect --show) || nfg_fail "show before the round trip"
	nfg_assert_ok "unprotect before the round trip" P unprotect
	nfg_in $ns sh -e <<<"$show1" || nfg_fail "--show fed to sh: exit $?"
	show2=$(P protect --show) || nfg_fail "show after the round trip"
	nfg_assert_eq "$show1" "$show2" "--show fed to sh gives the same profile: $1"
}
roundtrip "repeated options"
# a UDP limit's reject is decoded as iptables names it
nfg_assert_ok "udp limit" P protect --kconnlimit 1 udp/53
show=$(P protect --show) || nfg_fail "show udp"
nfg_assert_match 'add rule ip nfguard kconnlimit -m kconnlimit .* -j REJECT --reject-with icmp-port-unreachable' "$show" "ip: udp reject"
nfg_assert_match 'add rule ip6 nfguard kconnlimit -m kconnlimit .* -j REJECT --reject-with icmp6-port-unreachable' "$show" "ip6: udp reject"
nfg_assert_eq "" "$(grep -F '[' <<<"$show")" "udp: every expression decoded, no [placeholder]"

# -6 and the masks
nfg_expect_exit 2 'with -6 a mask of 32 or less looks like an IPv4 one; write ",24"' P protect -6 --kconnlimit 64/24 tcp/80
nfg_expect_exit 2 '-6 takes the IPv6 mask only' P protect -6 --kconnlimit 64/24,64 tcp/80
nfg_assert_ok "-6 with ,MASK6" P protect -6 --kconnlimit 64/,48 tcp/80
nfg_assert_match 'add rule ip6 nfguard kconnlimit -m kconnlimit --kconnlimit-above 64 --kconnlimit-mask 48 ' "$(P protect --show)" "-6 ,48"
nfg_assert_ok "-6 with a mask above 32" P protect -6 --kconnlimit 64/56 tcp/80
nfg_assert_match 'add rule ip6 nfguard kconnlimit -m kconnlimit --kconnlimit-above 64 --kconnlimit-mask 56 ' "$(P protect --show)" "-6 56"
nfg_assert_ok "-6 default" P protect -6 --kconnlimit 64 tcp/80
nfg_assert_match 'add rule ip6 nfguard kconnlimit -m kconnlimit --kconnlimit-above 64 --kconnlimit-mask 64 ' "$(P protect --show)" "-6 default /64"
roundtrip "-6 default mask"
nfg_assert_ok "every SYNCOOKIE option" P protect --syncookie tcp/443 --syncookie-mode local --syncookie-mss 1400 \
	--syncookie-wscale 7 --syncookie-sack-perm --syncookie-timestamp --syncookie-allowlist-timeout 60 \
	--syncookie-allowlist-mask 24,64 --kconnlimit 3/16,48 udp/53
roundtrip "every SYNCOOKIE option, masks of both families"
nfg_assert_ok "-6, a mask of 32 or less" P protect -6 --kconnlimit 64/,24 tcp/80 --syncookie tcp/80 --syncookie-allowlist-mask ,32
roundtrip "-6 ,MASK6"
many=()
for i in $(seq 17); do many+=(--kconnlimit 1 "tcp/$i"); done
nfg_expect_exit 2 'at most 16 --kconnlimit options' P protect "${many[@]}"

# protect --check: the live ruleset against a profile
args=(--kconnlimit 64/24 tcp/80 --syncookie 'tcp/80,443' --blocklist bl4 --rtcache)
nfg_assert_ok "protect for --check" P protect "${args[@]}"
nfg_assert_ok "--check: intact" P protect --check "${args[@]}"
nfg_assert_eq "" "$(P protect --check "${args[@]}")" "--check prints nothing when intact"
nfg_expect_exit 1 'differs from the one given' P protect --check --kconnlimit 64/24 tcp/80 --syncookie tcp/80 --blocklist bl4 --rtcache
nfg_assert_match 'unexpected: add rule ip nfguard input -p tcp --dport 80 --syn -j kconnlimit' \
	"$(P protect --check --kconnlimit 64/24 tcp/22 --syncookie tcp/80,443 --blocklist bl4 --rtcache 2>/dev/null)" "--check names what differs"
nfg_in $ns nft delete chain ip6 nfguard rtcache || nfg_fail "drift: delete a chain"
out=$(P protect --check "${args[@]}" 2>&1) && nfg_fail "--check missed a deleted chain: $out"
nfg_assert_match 'missing: add chain ip6 nfguard rtcache { type filter hook forward priority -150; }' "$out" "--check: the deleted chain"
nfg_assert_match 'missing: add rule ip6 nfguard rtcache -j RTCACHE' "$out" "--check: its rule"
nfg_assert_ok "protect repairs" P protect "${args[@]}"
nfg_assert_ok "--check: intact again" P protect --check "${args[@]}"

# a dry run without the set: what was assumed, on a warning: line, exit 0
nfg_expect_exit 0 'warning: .*set nosuch: .*assumed to be an ipv4 set' P protect --dry-run --blocklist nosuch
nfg_assert_ok "unprotect" P unprotect
nfg_assert_eq '{"installed":false,"families":[],"exact":true,"syncookie":null,"kconnlimit":[],"blocklist":[],"rtcache":false,"operations":[]}' \
	"$(P protect --show --json)" "--show --json without a profile"
nfg_log "ok"
