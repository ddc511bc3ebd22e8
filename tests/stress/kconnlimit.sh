# shellcheck shell=bash
# kconnlimit stressors (see tests/stress/lib.sh). Topology: netns nfg-sk-gen
# floods netns nfg-sk-dut over a veth pair with TCP SYNs from random sources
# in 10.98.0.0/16 (trafgen: every SYN a new conntrack, remembered by the
# rules, none answered), and opens and closes real connections (refused by
# dut: conntracks that end at once). dut's INPUT has kconnlimit rules (legacy
# and nft, v4 and v6, keyed by source /24, by destination: one key with
# thousands of connections) while the stressors add and delete more rules,
# dump the tables (top, list, dumps closed midway), flush conntrack under
# them with the GC interval switched between 10 ms and 500 ms, and create
# and delete netns with rules and connections inside.

KS_GEN=nfg-sk-gen
KS_DUT=nfg-sk-dut
KS_D4=10.99.0.1 KS_G4=10.99.0.2
KS_D6=fd00:99::1 KS_G6=fd00:99::2
KS_P=/sys/module/xt_kconnlimit/parameters

ks_dut() { ip netns exec $KS_DUT "$@"; }
ks_gen() { ip netns exec $KS_GEN "$@"; }

ks_stress_setup() {
	local mac
	nfg_need trafgen nfguard nfg-nlfuzz conntrack iptables-legacy iptables-nft ip6tables-legacy ip6tables-nft
	ip -batch - <<-EOF || nfg_fail "stress topology"
		netns add $KS_GEN
		netns add $KS_DUT
		link add gen0 netns $KS_GEN type veth peer name dut0 netns $KS_DUT
	EOF
	ip -n $KS_DUT -batch - <<-EOF || nfg_fail "dut setup"
		link set lo up
		addr add $KS_D4/16 dev dut0
		addr add $KS_D6/64 dev dut0 nodad
		link set dut0 up
	EOF
	ip -n $KS_GEN -batch - <<-EOF || nfg_fail "gen setup"
		link set lo up
		addr add $KS_G4/16 dev gen0
		addr add $KS_G6/64 dev gen0 nodad
		link set gen0 up
	EOF
	ks_dut sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.dut0.rp_filter=0 >/dev/null
	nfg_wait_until 60 ks_gen ping -c 1 -W 1 $KS_D4 >/dev/null || nfg_fail "gen cannot ping dut"
	mac=$(ks_dut cat /sys/class/net/dut0/address | sed 's/^/0x/; s/:/, 0x/g')
	[ -n "$mac" ] || nfg_fail "dut mac"
	# SYN from 10.98.x.y:random to dut:80, random sequence
	cat >"$NFG_WORK/syn.cfg" <<-EOF
		{
		  $mac, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		  0x45, 0x00, const16(40), drnd(2), 0x40, 0x00, 64, 6, csumip(14, 33),
		  10, 98, drnd(), drnd(), 10, 99, 0, 1,
		  drnd(2), const16(80), drnd(4), const32(0), 0x50, 0x02, const16(65535),
		  csumtcp(14, 34), const16(0)
		}
	EOF
	{
		echo '*filter'
		echo "-A INPUT -p tcp --dport 80 -m kconnlimit --kconnlimit-upto 1000000 --kconnlimit-mask 24 --kconnlimit-name flood -m comment --comment flood-legacy -j ACCEPT"
		echo "-A INPUT -p tcp --dport 9 -m kconnlimit --kconnlimit-upto 1000000 --kconnlimit-name churn -m comment --comment churn-legacy"
		echo COMMIT
	} | ks_dut iptables-legacy-restore -w --noflush || nfg_fail "legacy rules"
	nfg_ipt $KS_DUT nft 4 -A INPUT -p tcp --dport 80 -m kconnlimit --kconnlimit-above 1000000 --kconnlimit-daddr \
		--kconnlimit-name floodd -m comment --comment flood-nft -j DROP &&
		nfg_ipt $KS_DUT legacy 6 -A INPUT -p tcp --dport 9 -m kconnlimit --kconnlimit-upto 1000000 --kconnlimit-mask 64 \
			--kconnlimit-name churn6 -m comment --comment churn6-legacy &&
		nfg_ipt $KS_DUT nft 6 -A INPUT -p tcp -m kconnlimit --kconnlimit-above 1000000 --kconnlimit-daddr \
			--kconnlimit-name churn6d -m comment --comment churn6-nft -j DROP ||
		nfg_fail "stress rules"
	old_gc=$(cat $KS_P/gc_interval_ms)
	nfg_on_exit "echo $old_gc >$KS_P/gc_interval_ms"
}

ks_stress_flood_start() {
	nfg_bg $KS_GEN trafgen -P 1 -q -o gen0 -c "$NFG_WORK/syn.cfg" -t 1ms
	KS_FLOOD_PID=$NFG_LAST_PID
}
ks_gen_flood_gone() { [ -z "$(ip netns pids $KS_GEN 2>/dev/null)" ]; }
ks_stress_flood_stop() {
	[ -n "${KS_FLOOD_PID:-}" ] || return 0
	ip netns pids $KS_GEN 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	nfg_wait_until 30 ks_gen_flood_gone || nfg_fail "the flood generator does not stop"
	wait "$KS_FLOOD_PID" 2>/dev/null
	KS_FLOOD_PID=
	return 0
}

ks_stress_teardown() {
	ks_stress_flood_stop
	ip netns del $KS_GEN 2>/dev/null
	ip netns del $KS_DUT 2>/dev/null
	return 0
}

# The flood and the connections reached every rule, which remembered them
# (inserts, the 10th column of `nfguard kconnlimit list`). Runs after the
# stressors, with the flood still on: every iptables-legacy change during the
# run re-created every rule of that table (a new instance, an empty table, as
# with connlimit), so one more round of connections is made first and the
# check waits for the flood to reach the last instances.
ks_rule_remembered() { # NAME
	local line
	line=$(ks_dut nfguard kconnlimit list "$1" | sed -n 2p)
	[ "$(awk '{ print $10 }' <<<"$line")" -ge 1 ] 2>/dev/null
}
ks_stress_flood_check() {
	local r
	ks_st_conns || nfg_fail "connections after the stress run"
	for r in flood floodd churn churn6 churn6d; do
		nfg_wait_until 30 ks_rule_remembered $r ||
			nfg_fail "rule $r remembered no connection: $(ks_dut nfguard kconnlimit list $r | sed -n 2p)"
		nfg_log "$(ks_dut nfguard kconnlimit list $r | sed -n 2p)"
	done
}

# kconnlimit's remembered connections (all rules) are 0
ks_conns_zero() {
	ks_dut nfguard kconnlimit list | grep -q '^# remembered connections (all rules): 0,'
}

# rules added and deleted, legacy and nft, v4 and v6, while packets match
ks_st_rules() {
	local n=r$BASHPID v
	v=legacy
	[ $((RANDOM % 2)) = 0 ] || v=nft
	nfg_ipt $KS_DUT $v 4 -I INPUT -p tcp -m kconnlimit --kconnlimit-above 5 --kconnlimit-mask 16 --kconnlimit-name $n &&
		nfg_ipt $KS_DUT $v 6 -I INPUT -p tcp -m kconnlimit --kconnlimit-upto 5 --kconnlimit-name ${n}6 || return 1
	ks_dut nfguard kconnlimit list $n >/dev/null || { echo "rule $n not listed"; return 1; }
	nfg_ipt $KS_DUT $v 4 -D INPUT -p tcp -m kconnlimit --kconnlimit-above 5 --kconnlimit-mask 16 --kconnlimit-name $n &&
		nfg_ipt $KS_DUT $v 6 -D INPUT -p tcp -m kconnlimit --kconnlimit-upto 5 --kconnlimit-name ${n}6 || return 1
}

# the tables dumped while they change: top, list, dumps closed midway
ks_st_dumps() {
	ks_dut nfguard kconnlimit top -n 200 >/dev/null &&
		ks_dut nfguard kconnlimit list >/dev/null &&
		ks_dut nfguard kconnlimit top flood -n 10000 >/dev/null &&
		ks_dut nfg-nlfuzz -f nfg_kconnlimit -n 6 abandon >/dev/null
}

# real connections from gen, refused by dut: conntracks created and ended
ks_st_conns() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	ks_gen bash -c 'for ((i = 0; i < 10; i++)); do
		exec 3<>"/dev/tcp/$0/9" 2>/dev/null && exit 1
		exec 3<>"/dev/tcp/$1/9" 2>/dev/null && exit 1
	done; exit 0' $KS_D4 $KS_D6 || { echo "a connection to a closed port succeeded"; return 1; }
}

# conntrack flushed under the tables, the GC run fast and slow
ks_st_ctflush() {
	echo 10 >$KS_P/gc_interval_ms || return 1
	ks_dut conntrack -F >/dev/null 2>&1
	echo 500 >$KS_P/gc_interval_ms || return 1
	ks_dut conntrack -F >/dev/null 2>&1
	return 0
}

# netns created and destroyed with rules and connections inside
ks_st_netns() {
	local ns=nfg-sk-ns$BASHPID
	ip netns add $ns || return 1
	# shellcheck disable=SC2016 # expanded by the inner bash
	ip netns exec $ns bash -c '
		ip link set lo up &&
		iptables-legacy -w -A OUTPUT -p tcp -m kconnlimit --kconnlimit-upto 10 -j ACCEPT &&
		iptables-nft -w -A OUTPUT -p tcp -m kconnlimit --kconnlimit-above 10 --kconnlimit-daddr -j DROP &&
		ip6tables-nft -w -A OUTPUT -p tcp -m kconnlimit --kconnlimit-above 10 -j DROP || exit 1
		for ((i = 0; i < 5; i++)); do exec 3<>/dev/tcp/127.0.0.1/9; done 2>/dev/null
		exit 0' || { ip netns del $ns; return 1; }
	ip netns del $ns || return 1
}

nfg_stressor rules ks_st_rules
nfg_stressor dumps ks_st_dumps
nfg_stressor conns ks_st_conns
nfg_stressor ctflush ks_st_ctflush
nfg_stressor netns ks_st_netns
