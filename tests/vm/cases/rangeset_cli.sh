#!/bin/bash
# rangeset userspace inside a real kernel: the nfguard set CLI (every
# command, error messages, batches, maxelem, save/restore incl. ipset and
# --replace, rollback) and the libxt_rangeset plugin (iptables-legacy and
# -nft: parse, print, save/restore round trip, missing set and family
# checks, destroy/rename while referenced), plus packet verdicts.
#
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nfguard iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft \
	iptables-legacy-save iptables-nft-save iptables-legacy-restore iptables-nft-restore ping

modprobe nft_compat
nfg_load_modules xt_rangeset

S=$NFG_WORK

# expect RC MSG CMD...: CMD exits with RC and its output contains MSG
expect() {
	local rc=$1 msg=$2 out got
	shift 2
	out=$("$@" 2>&1)
	got=$?
	[ "$got" = "$rc" ] || nfg_fail "exit $got, want $rc: $* -> $out"
	# MSG may list alternatives separated by '||' (kernel extack or ours)
	local alt found=0
	while [ -n "$msg" ]; do
		alt=${msg%%||*}
		case $out in *"$alt"*) found=1 ;; esac
		[ "$alt" = "$msg" ] && break
		msg=${msg#*||}
	done
	[ $found = 1 ] || nfg_fail "'$2' not in output of $*: $out"
	# an error of nfguard (1, 2) is "nfguard: ..."; set test's "not in the set" (1) is an answer
	[ "$1" = nfguard ] || got=x
	case $got in 1 | 2) case $out in "nfguard: "* | *"rangeset: "* | *" is NOT in set "*) ;; *) nfg_fail "error format: $out" ;; esac ;; esac
}
members() { nfguard set list "$1" | sed -n '/^Members:/,$p' | sed 1d | tr '\n' ' ' | sed 's/ $//'; }
count() { nfguard set list "$1" | sed -n 's/^Ranges: //p'; }

# ------------------------------------------------------------------ create
nfg_assert_ok "create" nfguard set create blk ipv4
nfg_assert_ok "create v6" nfguard set create blk6 ipv6 maxelem 100
expect 1 'already exists' nfguard set create blk ipv4
expect 2 "nfguard: create a/b: set name \"a/b\" contains '/'" nfguard set create a/b ipv4
expect 2 'unknown family "ipv5"' nfguard set create x ipv5
expect 2 'maxelem must be a number' nfguard set create x ipv4 maxelem 0
expect 2 'maxelem must be a number' nfguard set create x ipv4 maxelem 16777217
expect 2 'too long' nfguard set create aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ipv4
expect 1 'does not exist||no set with this name' nfguard set list nosuch
expect 1 'does not exist||no set with this name' nfguard set add nosuch 10.0.0.1
expect 1 'does not exist||no set with this name' nfguard set destroy nosuch
nfg_log "create ok"

# ------------------------------------------------------------------ add / del / test / canonical output
nfg_assert_ok "add" nfguard set add blk 10.0.0.0/8 192.168.1.1 172.16.0.1-172.16.0.9
nfg_assert_eq "10.0.0.0/8 172.16.0.1-172.16.0.9 192.168.1.1" "$(members blk)" "members"
nfg_assert_ok "add present" nfguard set add blk 10.0.0.0-10.0.0.255
nfg_assert_ok "add adjacent" nfguard set add blk 11.0.0.0/8 172.16.0.10
nfg_assert_eq "10.0.0.0/7 172.16.0.1-172.16.0.10 192.168.1.1" "$(members blk)" "merged"
nfg_assert_ok "del splits" nfguard set del blk 10.1.0.0/16 172.16.0.5 192.168.9.9
nfg_assert_eq "10.0.0.0/16 10.2.0.0-11.255.255.255 172.16.0.1-172.16.0.4 172.16.0.6-172.16.0.10 192.168.1.1" \
	"$(members blk)" "after del"
before=$(members blk)
expect 2 'host bits set (the network is 10.0.0.0/8)' nfguard set add blk 1.2.3.4 10.0.0.1/8
expect 2 'expected IPv4' nfguard set add blk 1.2.3.4 ::1
expect 2 'start > end' nfguard set add blk 10.0.0.9-10.0.0.1
expect 2 'invalid IPv4 address "10.0.0.256"' nfguard set del blk 10.0.0.256
expect 2 'host names are not accepted' nfguard set add blk localhost
nfg_assert_eq "$before" "$(members blk)" "nothing changed by bad input"
expect 0 'is in set blk' nfguard set test blk 10.0.5.5
expect 0 'is in set blk' nfguard set test blk 10.0.0.0/16
expect 1 'is NOT in set blk' nfguard set test blk 10.1.0.1
expect 1 'is NOT in set blk' nfguard set test blk 172.16.0.4-172.16.0.6
expect 2 'expected IPv4' nfguard set test blk ::1
nfg_assert_ok "v6 add" nfguard set add blk6 2001:db8::/32 ::1 ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff
nfg_assert_eq "::1 2001:db8::/32 ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127" "$(members blk6)" "v6 members"
expect 2 'expected IPv6' nfguard set add blk6 10.0.0.1
nfg_assert_ok "full space" nfguard set create all4 ipv4
nfg_assert_ok "full space add" nfguard set add all4 0.0.0.0/1 128.0.0.0/1
nfg_assert_eq "0.0.0.0/0" "$(members all4)" "full v4 space"
nfg_assert_ok "full space del" nfguard set del all4 0.0.0.0 255.255.255.255
nfg_assert_eq "0.0.0.1-255.255.255.254" "$(members all4)" "edges removed"
nfg_log "add/del/test ok"

# ------------------------------------------------------------------ files, batches, maxelem
{
	echo "# blocklist"
	echo "1.10.16.0/20 ; SBL256894"
	for i in $(seq 0 4999); do echo "20.$((i / 250)).$((i % 250)).1"; done
} >"$S/list.txt"
nfg_assert_ok "create big" nfguard set create big ipv4
nfg_assert_ok "add -f (5001 elements, one request)" nfguard set add big -f "$S/list.txt"
nfg_assert_eq 5001 "$(count big)" "ranges after -f"
sed '4000s/.*/20.0.0.300/' "$S/list.txt" >"$S/bad.txt"
nfg_assert_ok "flush" nfguard set flush big
nfg_assert_eq 0 "$(count big)" "flushed"
expect 1 "$S/bad.txt:4000: invalid IPv4 address \"20.0.0.300\"" nfguard set add big -f "$S/bad.txt"
nfg_assert_eq 0 "$(count big)" "bad file: nothing added"
expect 1 "nothing was changed" nfguard set add big -f "$S/bad.txt"
nfg_assert_ok "add from stdin" sh -c "nfguard set add big -f - < '$S/list.txt'"
nfg_assert_eq 5001 "$(count big)" "ranges from stdin"
nfg_assert_ok "del -f" nfguard set del big -f "$S/list.txt"
nfg_assert_eq 0 "$(count big)" "del -f"
nfg_assert_ok "add NAME <FILE (no -f)" sh -c "nfguard set add big < '$S/list.txt'"
nfg_assert_eq 5001 "$(count big)" "ranges from redirected stdin"
nfg_assert_ok "del NAME - <FILE" sh -c "sed -n 3,1002p '$S/list.txt' | nfguard set del big -"
nfg_assert_eq 4001 "$(count big)" "del from a pipe"
nfg_assert_ok "flush big" nfguard set flush big
nfg_assert_ok "inet alias" nfguard set create alias4 inet
nfg_assert_ok "inet6 alias" nfguard set create alias6 inet6 maxelem 7
nfg_assert_match '^create alias4 ipv4' "$(nfguard set save alias4)" "inet saved as ipv4"
nfg_assert_match '^create alias6 ipv6 maxelem 7' "$(nfguard set save alias6)" "inet6 saved as ipv6"
nfg_assert_ok "destroy aliases" sh -c "nfguard set destroy alias4 && nfguard set destroy alias6"

nfg_assert_ok "create small" nfguard set create small ipv4 maxelem 3
expect 1 'small' nfguard set add small 1.0.0.1 1.0.0.3 1.0.0.5 1.0.0.7
nfg_assert_eq 0 "$(count small)" "ENOSPC: whole request refused"
nfg_assert_ok "3 fit" nfguard set add small 1.0.0.1 1.0.0.3 1.0.0.5
nfg_assert_ok "merge needs no room" nfguard set add small 1.0.0.2
nfg_assert_ok "third range" nfguard set add small 1.0.0.7
expect 1 'small' nfguard set del small 1.0.0.2
nfg_assert_eq "1.0.0.1-1.0.0.3 1.0.0.5 1.0.0.7" "$(members small)" "split over maxelem refused"
# a file bigger than one 64 KiB attribute nest still goes as ONE request:
# set full refuses the whole command, nothing is half-applied
nfg_assert_ok "create mid" nfguard set create mid ipv4 maxelem 1500
for i in $(seq 0 1999); do echo "30.$((i / 250)).$((i % 250)).1"; done >"$S/mid.txt"
expect 1 "mid" nfguard set add mid -f "$S/mid.txt"
nfg_assert_eq 0 "$(count mid)" "set full: nothing of 2000 applied"
nfg_assert_ok "1500 fit" sh -c "head -n 1500 '$S/mid.txt' | nfguard set add mid"
nfg_assert_eq 1500 "$(count mid)" "exactly maxelem"
expect 1 "mid" nfguard set add mid -f "$S/mid.txt"
nfg_assert_eq 1500 "$(count mid)" "full set unchanged by a refused add"
# without CAP_NET_ADMIN in the initial user namespace the send buffer stops
# at net.core.wmem_max: a request too big for it is split, and a failure
# says how many requests stayed applied
for i in $(seq 0 29999); do echo "31.$((i / 250 / 250)).$((i / 250 % 250)).$((i % 250))"; done |
	awk 'NR % 2' >"$S/big.txt" # 15000 disjoint addresses
sysctl -qw net.core.wmem_max=65536 || nfg_fail "wmem_max"
out=$(unshare -U -r -n sh -c "nfguard set create u ipv4 maxelem 10000 &&
	nfguard set add u -f '$S/big.txt'; echo rc=\$?; nfguard set list u" 2>&1)
sysctl -qw net.core.wmem_max=212992
nfg_assert_match 'rc=1' "$out" "userns: add over maxelem fails"
nfg_assert_match '[0-9]+ of 15 requests \([0-9]+ of 15000 merged ranges\) had been applied' "$out" \
	"userns: split add reports what stayed applied"
nfg_assert_match 'Ranges: [1-9][0-9]*' "$out" "userns: applied requests stay"
nfg_log "files/batches/maxelem ok"

# ------------------------------------------------------------------ swap / rename
nfg_assert_ok "create a" nfguard set create sa ipv4
nfg_assert_ok "create b" nfguard set create sb ipv4 maxelem 7
nfg_assert_ok "fill a" nfguard set add sa 1.1.1.1
nfg_assert_ok "fill b" nfguard set add sb 2.2.2.2
nfg_assert_ok "swap" nfguard set swap sa sb
nfg_assert_eq "2.2.2.2" "$(members sa)" "swapped a"
nfg_assert_eq "1.1.1.1" "$(members sb)" "swapped b"
nfg_assert_eq "Maxelem: 7" "$(nfguard set list sa | grep Maxelem)" "maxelem moves with contents"
expect 1 'swap' nfguard set swap sa blk6
expect 1 'does not exist||no set with this name' nfguard set swap sa nosuch
nfg_assert_ok "rename" nfguard set rename sb sc
expect 1 'does not exist||no set with this name' nfguard set list sb
expect 1 'exists' nfguard set rename sc sa
nfg_log "swap/rename ok"

# ------------------------------------------------------------------ save / restore
nfguard set save >"$S/save1" || nfg_fail "save"
grep -q '^create blk ipv4 maxelem 1048576$' "$S/save1" || nfg_fail "save create line: $(head -3 "$S/save1")"
grep -q '^add blk 10.2.0.0-11.255.255.255$' "$S/save1" || nfg_fail "save add line"
for s in $(nfguard set list | awk 'NR > 1 {print $1}'); do nfguard set destroy "$s" || nfg_fail "destroy $s"; done
nfg_assert_eq 1 "$(nfguard set list | wc -l)" "all destroyed"
nfg_assert_ok "restore" nfguard set restore -f "$S/save1"
nfguard set save >"$S/save2"
cmp "$S/save1" "$S/save2" || nfg_fail "save/restore round trip differs: $(diff "$S/save1" "$S/save2" | head)"
expect 1 'already exists (use --replace' nfguard set restore -f "$S/save1"
cmp "$S/save1" <(nfguard set save) || nfg_fail "failed restore changed something"
printf 'create new1 ipv4\nadd new1 1.2.3.4\nadd blk 10.0.0.1/8\n' >"$S/bad.restore"
expect 1 "$S/bad.restore:3: \"10.0.0.1/8\" has host bits set" nfguard set restore -f "$S/bad.restore"
expect 1 'does not exist||no set with this name' nfguard set list new1
# rollback: second set's add fails (maxelem 1) -> both new sets removed
printf 'create r1 ipv4\nadd r1 1.1.1.1\ncreate r2 ipv4 maxelem 1\nadd r2 2.2.2.2\nadd r2 2.2.2.4\n' >"$S/rb.restore"
expect 1 'were removed' nfguard set restore -f "$S/rb.restore"
expect 1 'does not exist||no set with this name' nfguard set list r1
expect 1 'does not exist||no set with this name' nfguard set list r2
# ipset save lines
cat >"$S/ipset.save" <<'EOF'
create ib hash:net family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x1234abcd
add ib 10.0.0.0/8
add ib 192.0.2.0/24 timeout 300
add ib 198.51.100.0/24 comment "feed A" packets 0 bytes 0
create ib6 hash:net family inet6 hashsize 1024 maxelem 65536
add ib6 2001:db8::/48
create ih hash:ip family inet netmask 24
add ih 203.0.113.77
EOF
nfg_assert_ok "restore ipset" nfguard set restore -f "$S/ipset.save"
# ipset's per-element timeout is kept (seconds left: 300 or just under)
nfg_assert_match '^10\.0\.0\.0/8 192\.0\.2\.0/24 timeout (299|300) 198\.51\.100\.0/24$' "$(members ib)" "ipset hash:net"
nfg_assert_eq "Maxelem: 65536" "$(nfguard set list ib | grep Maxelem)" "ipset maxelem"
nfg_assert_eq "2001:db8::/48" "$(members ib6)" "ipset inet6"
nfg_assert_eq "203.0.113.0/24" "$(members ih)" "ipset netmask"
printf 'create nm hash:net\nadd nm 10.0.0.0/8 nomatch\n' >"$S/nomatch.save"
expect 1 'nomatch' nfguard set restore -f "$S/nomatch.save"
nfg_log "save/restore/ipset ok"

# ------------------------------------------------------------------ plugin
for v in legacy nft; do
	nfg_assert_ok "$v: rule" iptables-$v -w -A INPUT -m rangeset --match-set blk src -j DROP
	nfg_assert_ok "$v: inverted dst rule" iptables-$v -w -A OUTPUT -m rangeset ! --match-set blk dst -j ACCEPT
	nfg_assert_ok "$v: v6 rule" ip6tables-$v -w -A INPUT -m rangeset --match-set blk6 dst -j DROP
	s=$(iptables-$v -w -S)
	nfg_assert_match '^-A INPUT -m rangeset --match-set blk src -j DROP$' "$(grep INPUT <<<"$s")" "$v -S INPUT"
	nfg_assert_match '^-A OUTPUT -m rangeset ! --match-set blk dst -j ACCEPT$' "$(grep OUTPUT <<<"$s")" "$v -S OUTPUT"
	nfg_assert_match 'match-set blk src' "$(iptables-$v -w -L INPUT -n)" "$v -L"
	expect 2 'rangeset: set "nosuch" does not exist' iptables-$v -w -A INPUT -m rangeset --match-set nosuch src -j DROP
	expect 2 'rangeset: set "blk6" is an ipv6 set, this is an ipv4 rule (use ip6tables)' \
		iptables-$v -w -A INPUT -m rangeset --match-set blk6 src -j DROP
	expect 2 'rangeset: set "blk" is an ipv4 set, this is an ipv6 rule (use iptables)' \
		ip6tables-$v -w -A INPUT -m rangeset --match-set blk src -j DROP
	expect 2 'direction must be "src" or "dst"' iptables-$v -w -A INPUT -m rangeset --match-set blk both
	expect 2 'needs two arguments' iptables-$v -w -A INPUT -m rangeset --match-set blk -j DROP
	expect 2 'is required' iptables-$v -w -A INPUT -m rangeset -j DROP
	expect 1 'in use' nfguard set destroy blk
	expect 1 'blk' nfguard set rename blk blk2
	nfg_assert_ok "$v: flush referenced" nfguard set add blk 9.9.9.9
	nfg_assert_eq "References: 2" "$(nfguard set list blk | grep References)" "$v refs"
	# save -> flush -> restore -> save is identical (rule compare uses userspacesize)
	iptables-$v-save -t filter >"$S/ipt1"
	nfg_assert_ok "$v: -C finds the rule" iptables-$v -w -C INPUT -m rangeset --match-set blk src -j DROP
	iptables-$v -w -F
	iptables-$v-restore <"$S/ipt1" || nfg_fail "$v restore"
	iptables-$v-save -t filter >"$S/ipt2"
	# policy counters ([pkts:bytes]) may move between the saves: compare rules
	diff <(grep -v '^#' "$S/ipt1" | sed 's/ \[[0-9]*:[0-9]*\]$//') \
		<(grep -v '^#' "$S/ipt2" | sed 's/ \[[0-9]*:[0-9]*\]$//') || nfg_fail "$v save/restore differs"
	nfg_assert_ok "$v: -D" iptables-$v -w -D INPUT -m rangeset --match-set blk src -j DROP
	iptables-$v -w -F
	ip6tables-$v -w -F
	nfg_assert_eq "References: 0" "$(nfguard set list blk | grep References)" "$v refs released"
	nfg_log "plugin $v ok"
done
# iptables-nft releases a deleted rule's match from a work item after an RCU
# grace period, after the command returned: destroy/rename right after the
# delete must not report "in use"
for i in 1 2 3 4 5 6 7 8; do
	nfguard set create tmpx ipv4 || nfg_fail "create tmpx ($i)"
	iptables-nft -w -A INPUT -m rangeset --match-set tmpx src -j DROP || nfg_fail "nft rule ($i)"
	iptables-nft -w -D INPUT -m rangeset --match-set tmpx src -j DROP || nfg_fail "nft -D ($i)"
	nfg_assert_ok "rename right after iptables-nft -D ($i)" nfguard set rename tmpx tmpy
	iptables-nft -w -A INPUT -m rangeset --match-set tmpy src -j DROP || nfg_fail "nft rule 2 ($i)"
	iptables-nft -w -F INPUT || nfg_fail "nft -F ($i)"
	nfg_assert_ok "destroy right after iptables-nft -F ($i)" nfguard set destroy tmpy
done
nfg_log "destroy/rename right after iptables-nft -D ok"
# restore --replace: a referenced set gets new contents atomically; on failure the old stay
nfg_assert_ok "create rp" nfguard set create rp ipv4
nfg_assert_ok "fill rp" nfguard set add rp 1.1.1.1
nfg_assert_ok "rule on rp" iptables-nft -w -A INPUT -m rangeset --match-set rp src -j DROP
printf 'create rp ipv4 maxelem 10\nadd rp 2.2.2.0/24\ncreate rq ipv4\nadd rq 3.3.3.3\n' >"$S/rp.restore"
expect 1 'already exists (use --replace' nfguard set restore -f "$S/rp.restore"
nfg_assert_ok "restore --replace" nfguard set restore --replace -f "$S/rp.restore"
nfg_assert_eq "2.2.2.0/24" "$(members rp)" "replaced contents"
nfg_assert_eq "Maxelem: 10" "$(nfguard set list rp | grep Maxelem)" "replaced maxelem"
nfg_assert_eq "References: 1" "$(nfguard set list rp | grep References)" "rule still on rp"
nfg_assert_eq "3.3.3.3" "$(members rq)" "new set created"
nfguard set list | grep -q nfgtmp && nfg_fail "temporary set left: $(nfguard set list)"
printf 'create rp ipv4 maxelem 1\nadd rp 4.4.4.4\nadd rp 4.4.4.6\n' >"$S/rp2.restore"
expect 1 'replaced sets keep their old contents' nfguard set restore --replace -f "$S/rp2.restore"
nfg_assert_eq "2.2.2.0/24" "$(members rp)" "failed replace keeps contents"
nfguard set list | grep -q nfgtmp && nfg_fail "temporary set left after failure: $(nfguard set list)"
printf 'create rp ipv6\n' >"$S/rp3.restore"
expect 1 'exists as ipv4, the input creates it as ipv6' nfguard set restore --replace -f "$S/rp3.restore"
iptables-nft -w -F
# names that need quoting survive iptables-save/-restore
nfg_assert_ok "dotted name" nfguard set create bl.v4 ipv4
nfg_assert_ok "rule with dotted name" iptables-nft -w -A INPUT -m rangeset --match-set bl.v4 src -j DROP
iptables-nft-save -t filter >"$S/q1"
iptables-nft -w -F
iptables-nft-restore <"$S/q1" || nfg_fail "restore of quoted name: $(grep rangeset "$S/q1")"
nfg_assert_match 'match-set (bl\.v4|"bl\.v4") src' "$(iptables-nft -w -S INPUT)" "quoted name"
iptables-nft -w -F
nft list ruleset >"$S/nft.txt" 2>&1 || true

# ------------------------------------------------------------------ packets
nfg_topo_up
nfg_router nfguard set create drop4 ipv4
nfg_router nfguard set create drop6 ipv6
expect 1 'does not exist||no set with this name' nfguard set list drop4 # netns-local
nfg_assert_ok "forward rule v4" nfg_ipt "$NFG_NS_R" nft 4 -A FORWARD -m rangeset --match-set drop4 src -j DROP
nfg_assert_ok "forward rule v6" nfg_ipt "$NFG_NS_R" legacy 6 -A FORWARD -m rangeset --match-set drop6 dst -j DROP
nfg_assert_ok "ping v4 before" nfg_client ping -4 -c 1 -W 30 "$NFG_S4"
nfg_assert_ok "ping v6 before" nfg_client ping -6 -c 1 -W 30 "$NFG_S6"
nfg_assert_ok "block client" nfg_router nfguard set add drop4 10.0.1.0-10.0.1.3
nfg_assert_ok "block server6" nfg_router nfguard set add drop6 "$NFG_S6"
nfg_assert_fail "ping v4 blocked" nfg_client ping -4 -c 2 -i 0.2 -W 1 "$NFG_S4"
nfg_assert_fail "ping v6 blocked" nfg_client ping -6 -c 2 -i 0.2 -W 1 "$NFG_S6"
hits=$(nfg_router nfguard set list drop4 | sed -n 's/^Hits: //p')
nfg_assert_ge "$hits" 2 "hits counted"
nfg_assert_ok "unblock" nfg_router nfguard set del drop4 10.0.1.2
nfg_assert_ok "ping v4 after del" nfg_client ping -4 -c 1 -W 30 "$NFG_S4"
nfg_log "packets ok (hits $hits)"

# ------------------------------------------------------------------ transcript (for the record)
{
	echo "--- transcript"
	nfguard set create tx ipv4 maxelem 2
	nfguard set create tx ipv4
	nfguard set add tx 1.1.1.1 1.1.1.3 1.1.1.5
	nfguard set add tx 10.0.0.1/8 ::1 nonsense
	nfguard set destroy blk6 2>&1; ip6tables-nft -A INPUT -m rangeset --match-set blk6 src -j DROP
	nfguard set destroy blk6; nfguard set rename blk6 x
	nfguard set swap tx blk6
	iptables-nft -A INPUT -m rangeset --match-set blk6 src
	iptables-nft -A INPUT -m rangeset --match-set gone src
	iptables-nft -A INPUT -m rangeset ! --match-set tx dst -j DROP
	nft list chain ip filter INPUT
	iptables-nft -L INPUT -n
	nfguard set list
	nfguard set list tx
	nfguard set save tx
	unshare -U -r nfguard set list
	true
} 2>&1 | sed 's/^/    /'
