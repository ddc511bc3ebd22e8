#!/bin/bash
# Every option combination connlimit rejects is rejected for kconnlimit with
# a clear message, by the iptables plugin (legacy and nft, IPv4 and IPv6)
# and by the kernel's checkentry for hand-made match blobs that bypass the
# plugin (nfg-kcl-blob, through nft_compat): upto and above together, no
# limit, unknown flags, mask out of range for the family, unterminated
# name, a name outside the plugin's alphabet (it would forge /proc and CLI
# lines), non-zero reserved bytes. The raw table (before conntrack: the rule
# could never count) is refused with the reason in the kernel log, legacy
# and iptables-nft's. A valid blob (an nft table of another name) is
# accepted. The module
# parameters slots/locks refuse values that are not powers of two, at load
# time and at run time. Nothing is left behind (live objects 0).
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft nft nfg-kcl-blob dmesg

nfg_load_modules xt_kconnlimit
live=/sys/module/xt_kconnlimit/parameters/live_objects
ip netns add nfg-kerr || nfg_fail "netns"
nfg_on_exit ip netns del nfg-kerr

# expect_err PATTERN CMD...: CMD fails and its stderr matches PATTERN.
expect_err() {
	local pat=$1 out
	shift
	if out=$("$@" 2>&1 >/dev/null); then
		nfg_fail "accepted: $*"
	fi
	nfg_assert_match "$pat" "$out" "error message of: $*"
}

for v in legacy nft; do
	for fam in 4 6; do
		ipt() { nfg_ipt nfg-kerr "$v" "$fam" "$@"; }
		k=(-A INPUT -m kconnlimit)
		expect_err 'must specify "--kconnlimit-above" or "--kconnlimit-upto"' ipt "${k[@]}"
		expect_err 'must specify' ipt "${k[@]}" --kconnlimit-mask 24 --kconnlimit-daddr
		expect_err 'cannot be used together' ipt "${k[@]}" --kconnlimit-above 2 --kconnlimit-upto 3
		expect_err 'cannot be used together' ipt "${k[@]}" --kconnlimit-upto 2 ! --kconnlimit-above 3
		expect_err 'needs a number from 0 to 4294967295, not "-1"' ipt "${k[@]}" --kconnlimit-above -1
		expect_err 'needs a number from 0 to 4294967295, not "ten"' ipt "${k[@]}" --kconnlimit-upto ten
		expect_err 'not "4294967296"' ipt "${k[@]}" --kconnlimit-above 4294967296
		expect_err 'cannot be used together' ipt "${k[@]}" --kconnlimit-above 1 --kconnlimit-saddr --kconnlimit-daddr
		if [ $fam = 4 ]; then
			expect_err 'mask 33 is out of range for IPv4 \(0-32\)' ipt "${k[@]}" --kconnlimit-above 1 --kconnlimit-mask 33
			expect_err 'not a contiguous netmask' ipt "${k[@]}" --kconnlimit-above 1 --kconnlimit-mask 255.0.255.0
		else
			expect_err 'mask 129 is out of range for IPv6 \(0-128\)' ipt "${k[@]}" --kconnlimit-above 1 --kconnlimit-mask 129
			expect_err 'prefix length \(0-128\)' ipt "${k[@]}" --kconnlimit-above 1 --kconnlimit-mask 255.255.255.0
		fi
		expect_err 'prefix length' ipt "${k[@]}" --kconnlimit-above 1 --kconnlimit-mask foo
		expect_err 'too long \(at most 31 characters\)' ipt "${k[@]}" --kconnlimit-above 1 \
			--kconnlimit-name aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
		expect_err 'is empty' ipt "${k[@]}" --kconnlimit-above 1 --kconnlimit-name ""
		nfg_assert_eq "" "$(ip netns exec nfg-kerr "$([ $fam = 4 ] && echo iptables || echo ip6tables)-$v-save" |
			grep kconnlimit)" "no kconnlimit rule left after the rejections ($v IPv$fam)"
	done
done

# blob FAM FLAGS PREFIX LIMIT [NAME] [PAD0] -> kernel verdict
blob() { nfg_in nfg-kerr nfg-kcl-blob "$@"; }
# kernel_rejects MSG ARGS...: the blob is refused and dmesg says why
kernel_rejects() {
	local msg=$1
	shift
	dmesg -C
	if blob "$@" 2>"$NFG_WORK/blob.err"; then
		nfg_fail "kernel accepted the blob: $*"
	fi
	nfg_assert_match 'rejected: (Invalid argument|Numerical result out of range)' \
		"$(cat "$NFG_WORK/blob.err")" "errno of blob $*"
	nfg_wait_until 5 eval "dmesg | grep -q -- '$msg'" ||
		nfg_fail "no kernel message '$msg' for blob $*: $(dmesg | tail -n 3)"
	nfg_in nfg-kerr nft delete table ip nfgblob 2>/dev/null
	nfg_in nfg-kerr nft delete table ip6 nfgblob 2>/dev/null
	return 0
}
kernel_rejects 'upto and --kconnlimit-above together' 4 5 24 10
kernel_rejects 'no limit' 4 0 24 10
kernel_rejects 'unknown flags 0x14' 4 0x14 24 10
kernel_rejects 'mask /33 out of range for IPv4' 4 4 33 10
kernel_rejects 'mask /200 out of range for IPv6' 6 1 200 10
kernel_rejects 'name is not NUL-terminated' 6 4 64 1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
kernel_rejects 'reserved bytes' 4 4 24 10 - 7
kernel_rejects 'name may only hold letters, digits and _ - . :' 4 4 24 10 $'x\n9 forged ipv4 src/24'
kernel_rejects 'name may only hold letters, digits and _ - . :' 6 4 64 10 'a b'
kernel_rejects 'name may only hold letters, digits and _ - . :' 4 4 24 10 $'caf\xc3\xa9'

# raw runs before conntrack: refused, and the kernel log says why
for v in legacy nft; do
	for fam in 4 6; do
		dmesg -C
		expect_err 'Invalid argument' nfg_ipt nfg-kerr $v $fam -t raw -A PREROUTING \
			-m kconnlimit --kconnlimit-above 1
		nfg_wait_until 5 eval "dmesg | grep -q 'kconnlimit: not valid in the raw table'" ||
			nfg_fail "no kernel message for kconnlimit in raw ($v IPv$fam): $(dmesg | tail -n 3)"
	done
done
nfg_assert_ok "a valid blob is accepted" blob 4 4 24 10 blobrule
nfg_assert_match '^[0-9]+ blobrule ipv4 src/24 above:10 ' "$(nfg_in nfg-kerr nfguard kconnlimit list blobrule)" \
	"the blob's rule in nfguard kconnlimit list"
nfg_in nfg-kerr nft delete table ip nfgblob || nfg_fail "delete blob table"

# module parameters: powers of two only, checked at run time and at load time
p=/sys/module/xt_kconnlimit/parameters
for bad in 1000 0 3 abc; do
	if echo $bad >$p/slots 2>/dev/null; then nfg_fail "slots=$bad accepted"; fi
	if echo $bad >$p/locks 2>/dev/null; then nfg_fail "locks=$bad accepted"; fi
done
nfg_assert_eq 8192 "$(cat $p/slots)" "default slots"
nfg_assert_eq 256 "$(cat $p/locks)" "default locks"
{ echo 1024 >$p/slots && echo 16 >$p/locks; } || nfg_fail "valid slots/locks refused"
nfg_assert_ok "rule with the new geometry" nfg_ipt nfg-kerr legacy 4 -A INPUT -m kconnlimit \
	--kconnlimit-above 3 --kconnlimit-name geo
nfg_assert_match '"slots":1024,"locks":16' "$(nfg_in nfg-kerr nfguard kconnlimit list geo --json)" "geometry in list"
nfg_ipt nfg-kerr legacy 4 -F INPUT || nfg_fail "flush"
nfg_wait_until 10 eval "[ \$(cat $live) = 0 ]" || nfg_fail "live objects $(cat $live) after the rules went"
nfg_unload_modules xt_kconnlimit
if insmod "$NFG_KMOD_DIR/xt_kconnlimit.ko" slots=1000 2>/dev/null; then nfg_fail "insmod slots=1000 accepted"; fi
if insmod "$NFG_KMOD_DIR/xt_kconnlimit.ko" locks=6 2>/dev/null; then nfg_fail "insmod locks=6 accepted"; fi
insmod "$NFG_KMOD_DIR/xt_kconnlimit.ko" slots=65536 locks=1024 || nfg_fail "insmod with valid parameters"
nfg_assert_eq 65536 "$(cat $p/slots)" "slots given at load time"
nfg_unload_modules xt_kconnlimit
