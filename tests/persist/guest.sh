#!/bin/bash
# Runs inside the persistence test guest (tests/persist/check.sh) as
# nfg-persist-test.service, on a Debian bookworm whose PID 1 is systemd, with
# the nfguard packages, iptables-persistent and nftables installed.
#
# Boot 1 (phase 1): sets (one with timeouts), iptables/ip6tables rules that
# name them, a SYNCOOKIE rule, a protect profile (/etc/nfguard/protect.conf),
# a secret (/etc/nfguard/syncookie.secret); verdicts checked; what the kernel
# holds is recorded; `netfilter-persistent save`; poweroff through systemd.
# Boot 2 (phase 2): everything is back, before network-pre.target, with the
# same verdicts; timeouts counted down over the reboot, not reset; then a
# corrupt sets.save, a missing one and a secret with a bad mode: each gives
# its journal message and the rest loads.
#
# MODE (results/env): service (nfguard.service restores), plugin
# (nfguard.service disabled: netfilter-persistent's 12-nfguard restores),
# none (both disabled: the negative control, every boot-2 check must fail).
# Writes "ok - ..." / "not ok - ..." lines to results/bootN.tap, a log to
# results/bootN.log, and results/bootN.done last.
set -u
R=/mnt/results
ST=/var/lib/nfg-persist
E=/etc/nfguard
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8
mkdir -p $R $ST
if ! mountpoint -q $R; then
	modprobe 9pnet_virtio; modprobe 9p
	mount -t 9p -o trans=virtio,version=9p2000.L,rw results $R || { echo "no results export" >/dev/console; systemctl poweroff; exit 1; }
fi
MODE=$(sed -n 's/^MODE=//p' $R/env)
phase=$(cat $ST/phase 2>/dev/null || echo 1)
tap=$R/boot$phase.tap
: >"$tap"
exec >>"$R/boot$phase.log" 2>&1
echo "== boot $phase, mode $MODE, $(uname -r), $(date -u)"
set -x

ok() { echo "ok - $*" >>"$tap"; echo "ok - $*"; }
notok() { echo "not ok - $*" >>"$tap"; echo "not ok - $*"; }
check() { # check WHAT CMD...: ok when CMD succeeds
	local what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}
finish() {
	set +x
	journalctl -b --no-pager -o short-monotonic >"$R/journal$phase.txt" 2>&1
	date +%s >"$R/boot$phase.done"
	sync
	systemctl poweroff
	exit 0
}

# ---------------------------------------------------------------- verdicts
# Client namespace "cl" behind veth v1 <-> v0 (this netns, 10.77.0.1,
# fd77::1): .2 is in bl4, .3 in no set, .5/.6/.7 in tm4; fd77::2 in bl6.
topo_up() {
	ip netns add cl
	ip link add v0 type veth peer name v1 netns cl
	ip addr add 10.77.0.1/24 dev v0
	ip addr add fd77::1/64 dev v0 nodad
	ip link set v0 up
	ip -n cl link set lo up
	for a in 2 3 5 6 7; do ip -n cl addr add 10.77.0.$a/24 dev v1; done
	ip -n cl addr add fd77::2/64 dev v1 nodad
	ip -n cl addr add fd77::3/64 dev v1 nodad
	ip -n cl link set v1 up
}
passes() { ip netns exec cl ping -c 1 -W 3 -I "$1" "$2" >/dev/null 2>&1; }
# a dropped ping: a short deadline, it must NOT be answered
dropped() { ! ip netns exec cl ping -c 1 -W 2 -I "$1" "$2" >/dev/null 2>&1; }

# ---------------------------------------------------------------- cookies
# A reference namespace pair (ref: 10.77.0.1 with SECRET and the same
# SYNCOOKIE rule; cr: 10.77.0.3) answers the same SYN as this netns does to
# cl's 10.77.0.3 only when both hold the same secret.
ref_up() { # ref_up NAME SECRETFILE
	ip netns add "$1"
	ip netns add "c$1"
	ip link add r0 netns "$1" type veth peer name r1 netns "c$1"
	ip -n "$1" addr add 10.77.0.1/24 dev r0
	ip -n "c$1" addr add 10.77.0.3/24 dev r1
	ip -n "$1" link set r0 up
	ip -n "c$1" link set r1 up
	ip netns exec "$1" iptables -t raw -A PREROUTING -p tcp --dport 80 --syn -j SYNCOOKIE
	ip netns exec "$1" nfguard syncookie secret set -f "$2"
}
mac_of() { ip ${1:+-n "$1"} -br link show "$2" | awk '{ print $3 }' | tr : -; }
# cookies: prints "SEQ_HERE SEQ_REF SEQ_OTHER" (this netns, ref with the
# file's secret, refx with another secret)
cookies() {
	python3 /usr/local/lib/nfg-persist/cookie.py \
		"cl:v1:$(mac_of '' v0):10.77.0.3:10.77.0.1" \
		"cref:r1:$(mac_of ref r0):10.77.0.3:10.77.0.1" \
		"crefx:r1:$(mac_of refx r0):10.77.0.3:10.77.0.1" | awk '{ printf "%s ", $2 } END { print "" }'
}
# same_secret: this netns' cookie = ref's, and != refx's (retried once: the
# cookie's clock may tick between the SYNs)
same_secret() {
	local c
	for _ in 1 2; do
		read -r -a c <<<"$(cookies)"
		echo "cookies: ${c[*]}"
		[ "${c[0]:-none}" != none ] && [ "${c[0]}" = "${c[1]:-}" ] && [ "${c[0]}" != "${c[2]:-}" ] && return 0
	done
	return 1
}

net_up() {
	topo_up
	ref_up ref $E/syncookie.secret
	ref_up refx $ST/other.secret
}
# the same verdicts in both boots (PREFIX names the boot)
# (each drop beside a control that passes: the drop is the set's doing; the
# control first: it resolves the neighbour, which a dropped source's own
# neighbour solicitation cannot)
verdicts() {
	check "${1}10.77.0.3 (no set) passes, 10.77.0.2 (bl4) dropped" \
		eval 'passes 10.77.0.3 10.77.0.1 && dropped 10.77.0.2 10.77.0.1'
	check "${1}10.77.0.5 (tm4) dropped" dropped 10.77.0.5 10.77.0.1
	check "${1}10.77.0.7 (tm4, permanent) dropped" dropped 10.77.0.7 10.77.0.1
	check "${1}fd77::3 (no set) passes, fd77::2 (bl6) dropped" \
		eval 'passes fd77::3 fd77::1 && dropped fd77::2 fd77::1'
}

# ---------------------------------------------------------------- state
# sets without their timeouts, sorted; rulesets as sorted table blocks
sets_now() { nfguard set save | sed 's/ timeout [0-9]*$//' | grep -v '^#' | LC_ALL=C sort; }
# the rules (iptables-nft creates built-in chains lazily: no ":CHAIN" lines)
# and the protect profile
tables_now() {
	iptables-save | grep -v '^[#:]'
	ip6tables-save | grep -v '^[#:]'
	nft -s list table ip nfguard
}
# seconds left of an element, "permanent" (no timeout, or "timeout 0": how
# save writes a permanent element of a set with a default timeout) or "absent"
left_of() { nfguard set save | awk -v e="$1" '$1 == "add" && $3 == e { print ($(NF - 1) == "timeout" && $NF > 0) ? $NF : "permanent"; f = 1 } END { if (!f) print "absent" }'; }
secs() { systemctl show -P "$2" "$1"; }

if [ "$phase" = 1 ]; then
	# ------------------------------------------------------------ boot 1
	check "boot 1: nfguard.service active with nothing saved" systemctl is-active --quiet nfguard.service
	modprobe xt_rangeset && modprobe xt_SYNCOOKIE && modprobe xt_kconnlimit
	check "modules load from updates/dkms" test -d /sys/module/xt_rangeset
	nfguard set create bl4 ipv4
	nfguard set add bl4 10.77.0.2 192.0.2.0/24 198.51.100.7-198.51.100.9
	nfguard set create bl6 ipv6
	nfguard set add bl6 fd77::2 2001:db8::/64
	nfguard set create tm4 ipv4 timeout 3600
	nfguard set add tm4 10.77.0.5 timeout 900
	nfguard set add tm4 10.77.0.6 timeout 15
	nfguard set add tm4 10.77.0.7 timeout 0
	nfguard set add tm4 203.0.113.8
	date +%s >$ST/t_add
	iptables -A INPUT -m rangeset --match-set bl4 src -j DROP
	iptables -A INPUT -m rangeset --match-set tm4 src -j DROP
	ip6tables -A INPUT -m rangeset --match-set bl6 src -j DROP
	iptables -t raw -A PREROUTING -p tcp --dport 80 --syn -j SYNCOOKIE
	echo "-4 --kconnlimit 64/24 tcp/8080 --blocklist bl4 --syncookie tcp/8443" >$E/protect.conf
	# shellcheck disable=SC2046 # the file's words are the arguments
	nfguard protect $(cat $E/protect.conf)
	check "protect profile installed" nft list table ip nfguard
	(umask 077; od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >$E/syncookie.secret)
	nfguard syncookie secret set -f $E/syncookie.secret
	(umask 077; od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >$ST/other.secret)
	net_up
	verdicts "boot 1: "
	check "boot 1: SYNCOOKIE answers with the file's secret (the cookie comparison works)" same_secret
	sets_now | grep -v '^add tm4 10.77.0.6$' >$ST/sets.expected
	tables_now >$ST/tables.expected
	nfguard set save >$R/sets1.txt; nft -s list ruleset >$R/ruleset1.txt
	check "netfilter-persistent save" netfilter-persistent save
	check "sets saved to /etc/nfguard/sets.save" grep -q '^create tm4 ipv4 .*timeout 3600' $E/sets.save
	check "rules saved to /etc/iptables/rules.v4" grep -q 'match-set bl4 src' /etc/iptables/rules.v4
	case $MODE in
	plugin) systemctl disable nfguard.service ;;
	none)
		systemctl disable nfguard.service
		chmod -x /usr/share/netfilter-persistent/plugins.d/12-nfguard
		;;
	esac
	echo 2 >$ST/phase
	sync
	finish
fi

# ---------------------------------------------------------------- boot 2
now=$(date +%s) t_add=$(cat $ST/t_add)
el=$((now - t_add))
echo "seconds since the elements were added: $el"
np_exit=$(secs netfilter-persistent.service ExecMainExitTimestampMonotonic)
np_start=$(secs netfilter-persistent.service ExecMainStartTimestampMonotonic)
net_pre=$(secs network-pre.target ActiveEnterTimestampMonotonic)
echo "netfilter-persistent $np_start..$np_exit, network-pre.target $net_pre"
# netfilter-persistent says "... failed test load. New rules NOT loaded" and
# succeeds when iptables-restore refuses rules.v4 (a set it names is missing)
rules_loaded() {
	! journalctl -b -u netfilter-persistent.service | grep -q "NOT loaded" &&
		iptables -S INPUT | grep -q "match-set bl4 src" && ip6tables -S INPUT | grep -q "match-set bl6 src"
}
check "rules.v4/v6 loaded (the sets were there) by netfilter-persistent.service, done at ${np_exit}us, before network-pre.target at ${net_pre}us" \
	eval 'rules_loaded && test "${np_exit:-0}" -gt 0 -a "${net_pre:-0}" -ge "${np_exit:-0}"'
if [ "$MODE" = plugin ]; then
	check "nfguard.service disabled, the plugin restored (netfilter-persistent's journal)" \
		sh -c 'journalctl -b -u netfilter-persistent.service | grep -q "nfguard-persistent: 3 set(s) restored"'
else
	nf_exit=$(secs nfguard.service ExecMainExitTimestampMonotonic)
	check "nfguard.service succeeded" test "$(secs nfguard.service Result)/$(secs nfguard.service ActiveState)" = success/active
	check "nfguard.service done (${nf_exit}us) before netfilter-persistent started (${np_start}us)" \
		test "${nf_exit:-0}" -gt 0 -a "${np_start:-0}" -ge "${nf_exit:-0}"
	check "nfguard.service's journal: sets restored" \
		sh -c 'journalctl -b -u nfguard.service | grep -q "nfguard-persistent: 3 set(s) restored"'
fi
sets_now >$ST/sets.now
diff $ST/sets.expected $ST/sets.now
check "sets and elements as saved (10.77.0.6, timeout 15, expired meanwhile)" cmp -s $ST/sets.expected $ST/sets.now
l5=$(left_of 10.77.0.5) l6=$(left_of 10.77.0.6) l7=$(left_of 10.77.0.7) l8=$(left_of 203.0.113.8)
echo "left: .5 $l5 .6 $l6 .7 $l7 .8 $l8"
check "10.77.0.5 (900 s) counted down over the reboot: $l5 <= $((900 - el + 2)), >= $((900 - el - 60))" \
	test "$l5" != absent -a "$l5" != permanent -a "${l5//[^0-9]/}" = "$l5" -a "$l5" -le $((900 - el + 2)) -a "$l5" -ge $((900 - el - 60))
check "203.0.113.8 (the set's default 3600 s) counted down: $l8 <= $((3600 - el + 2))" \
	test "$l8" != absent -a "$l8" != permanent -a "$l8" -le $((3600 - el + 2)) -a "$l8" -ge $((3600 - el - 60))
check "10.77.0.7 (timeout 0 in a set with a default timeout) still permanent: $l7" test "$l7" = permanent
check "10.77.0.6 (timeout 15, added ${el} s ago) expired while the host was down: $l6, in tm4" \
	eval 'test "$el" -gt 15 -a "$l6" = absent && nfguard set list tm4 >/dev/null'
check "the set's default timeout kept" sh -c 'nfguard set save | grep -q "^create tm4 ipv4 .*timeout 3600"'
tables_now >$ST/tables.now
diff $ST/tables.expected $ST/tables.now
check "iptables and ip6tables rules (sets, SYNCOOKIE) and the protect profile as before the reboot" \
	cmp -s $ST/tables.expected $ST/tables.now
check "protect profile back (table ip nfguard)" nft list table ip nfguard
net_up
verdicts ""
check "10.77.0.6 (expired) passes, 10.77.0.5 (tm4) dropped" eval 'passes 10.77.0.6 10.77.0.1 && dropped 10.77.0.5 10.77.0.1'
check "SYNCOOKIE secret back: the same cookies as a netns holding the file's secret" same_secret

# ------------------------------------------------ corrupt, missing, bad mode
not_same_secret() { ! same_secret; }
empty_state() { # stop nfguard.service (which saves), empty the kernel's state
	systemctl stop nfguard.service
	systemctl reset-failed nfguard.service
	iptables -F INPUT; ip6tables -F INPUT
	nfguard unprotect
	for s in bl4 bl6 tm4; do nfguard set destroy $s; done
	nfguard syncookie secret rotate
}
start_svc() {
	cursor=$(journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
	systemctl start nfguard.service
	echo "nfguard.service: $(secs nfguard.service Result) $(secs nfguard.service ExecMainStatus)"
	journalctl -u nfguard.service --after-cursor "$cursor" --no-pager
}
jsince() { journalctl -u nfguard.service --after-cursor "$cursor" --no-pager | grep -qF -- "$1"; }
/usr/libexec/nfguard/nfguard-persistent save
empty_state
sed -i -e 's/^add tm4 10\.77\.0\.5 /add tm4 10.77.0.300 /' -e '$a this line is garbage' $E/sets.save
start_svc
check "corrupt sets.save: nfguard.service failed with status 1" \
	test "$(secs nfguard.service Result)/$(secs nfguard.service ExecMainStatus)" = exit-code/1
check "corrupt sets.save: journal says so" jsince "nfguard-persistent: error: /etc/nfguard/sets.save is corrupt"
check "corrupt sets.save: journal names the bad address" jsince "10.77.0.300"
check "corrupt sets.save: journal says tm4 is empty" jsince "set tm4: its saved elements are invalid: it is EMPTY"
check "corrupt sets.save: copy kept" grep -q 10.77.0.300 $E/sets.save.corrupt
check "corrupt sets.save: bl4 restored" sh -c 'nfguard set save | grep -q "^add bl4 10.77.0.2$"'
check "corrupt sets.save: bl6 restored" sh -c 'nfguard set save | grep -q "^add bl6 fd77::2$"'
check "corrupt sets.save: tm4 exists (empty), rules naming it load" \
	sh -c 'nfguard set save | grep -q "^create tm4 " && ! nfguard set save | grep -q "^add tm4 " && iptables-restore --noflush </etc/iptables/rules.v4'
check "corrupt sets.save: profile installed" nft list table ip nfguard
check "corrupt sets.save: secret loaded" same_secret
check "corrupt sets.save: 10.77.0.2 (bl4) dropped" dropped 10.77.0.2 10.77.0.1

# a profile without the blocklist from here on: no sets
cp $E/protect.conf $ST/protect.conf
echo "-4 --kconnlimit 64/24 tcp/8080" >$E/protect.conf
empty_state
rm -f $E/sets.save
start_svc
check "missing sets.save: nfguard.service succeeded" test "$(secs nfguard.service Result)" = success
check "missing sets.save: journal says so" jsince "no /etc/nfguard/sets.save: no sets to restore"
check "missing sets.save: profile installed" nft list table ip nfguard
check "missing sets.save: secret loaded" same_secret

empty_state
chmod 0644 $E/syncookie.secret
start_svc
check "secret readable by others: nfguard.service failed with status 1" \
	test "$(secs nfguard.service Result)/$(secs nfguard.service ExecMainStatus)" = exit-code/1
check "secret readable by others: journal says it was not loaded" jsince "must be owned by root with mode 0600"
check "secret readable by others: not loaded" not_same_secret
check "secret readable by others: profile installed" nft list table ip nfguard
chmod 0600 $E/syncookie.secret
cp $ST/protect.conf $E/protect.conf
finish
