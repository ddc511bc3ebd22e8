#!/bin/bash
# nfg-case-timeout: 2700
# kconnlimit vs mainline connlimit (report only).
#
# 1. SYN flood from 64k random sources (10.0.0.0/16, random ports) to
#    10.99.0.1:80 through filter INPUT
#        -p tcp --syn -m kconnlimit --kconnlimit-above 100 --kconnlimit-mask 24 -j DROP
#    next to the same rule with connlimit, to conntrack alone (the same SYNs
#    tracked and dropped, no limit rule) and to the raw-table DROP floor,
#    rounds alternating in one boot. The regime is the one a limit exists
#    for: every /24 already holds 100 live half-open connections, so every
#    SYN of the sample is over the limit (checked: fewer than 1% of the
#    sample's SYNs may reach TCP). Each ruleset starts from a flushed
#    conntrack table and an empty rule table, then the flood fills it: the
#    SYNs under the limit are accepted and confirmed (port 80 is closed; the
#    RST the stack answers is dropped in raw OUTPUT, before conntrack sees it,
#    so the connection stays SYN_SENT for 120 s and counts, as the half-open
#    connections of a flood against a listener do), until exactly
#    256 x 100 SYNs reached TCP (an event, waited for). The conntrack-alone
#    ruleset is filled the same way (ACCEPT until 25600, then DROP), so every
#    ruleset but the floor measures against the same conntrack table.
#    Goal (issue 8): kconnlimit's overhead above the floor at most half of
#    connlimit's. The per-round ratios (each round against its own floor
#    sample) show the spread.
#    The same flood with nothing remembered (pending_ms 0): every SYN passes the rule and
#    is then dropped (a second rule drops all SYNs), so no connection is
#    confirmed, no key ever reaches the limit, and every SYN is an insert
#    whose conntrack dies with the packet (report kconnlimit-synflood-new).
#    Here conntrack's own work (creating and freeing the entry, paid under
#    both matches) is most of both overheads, so the rule's own cost is
#    shown too: above conntrack alone, per round.
# 2. Established flows: 64 flows of ACKs (10.1.0.1-64, one /24) made
#    ESTABLISHED and ASSURED (one reply per flow from nfb-rx), then every
#    packet passes "-p tcp -m kconnlimit --kconnlimit-above 100
#    --kconnlimit-mask 24 -j DROP" (no --syn; under the limit, so it only
#    reads the count) and is dropped by the next rule (ctstatus CONFIRMED).
#    Next to connlimit and conntrack alone. One read is a few percent of a
#    packet's cost, below the noise of a shared host, so the packets pass
#    8 copies of the rule (8 tables counting the same flows): the rule's
#    own cost is (overhead - conntrack alone's) / 8, and the ratio of the
#    two matches' own costs is the figure to read.
# 3. Memory per remembered connection: slab object sizes (nfg_kcl_conn vs
#    nf_conncount_tuple, and the per-key nodes), plus the per-round ratios of
#    1 and 2, in the kconnlimit-summary report.
: "${NFB_ROUNDS:=7}"
# shellcheck source=tests/bench/lib.sh
. "$NFG_TOP/tests/bench/lib.sh"
nfg_need conntrack trafgen python3

KCL_KEYS=256 KCL_LIMIT=100
KCL_FILL=$((KCL_KEYS * KCL_LIMIT))
# established flows pass this many copies of the rule (each its own
# table): a rule's read costs a few percent of a packet, within the noise
KCL_EST_RULES=8

nfg_load_modules xt_kconnlimit
modprobe xt_connlimit || nfg_fail "modprobe xt_connlimit"
nfb_init trafgen
nfb_rx sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=1 >/dev/null 2>&1
sysctl -qw net.netfilter.nf_conntrack_max=524288 || nfg_fail "nf_conntrack_max"

mac_bytes() { echo "$NFB_RXMAC" | sed 's/^/0x/; s/:/, 0x/g'; }
syn_cfg() { # 64k sources 10.0.x.y, random ports and sequence, SYN
	cat <<-EOF
		{
		  $(mac_bytes), 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		  0x45, 0x00, const16(40), drnd(2), 0x40, 0x00, 64, 6, csumip(14, 33),
		  10, 0, drnd(), drnd(), 10, 99, 0, 1,
		  drnd(2), const16($NFB_DPORT), drnd(4), const32(0), 0x50, 0x02, const16(65535),
		  csumtcp(14, 34), const16(0)
		}
	EOF
}
ack_cfg() { # 64 flows 10.1.0.1-64:40000 -> port, ACK
	cat <<-EOF
		{
		  $(mac_bytes), 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		  0x45, 0x00, const16(40), drnd(2), 0x40, 0x00, 64, 6, csumip(14, 33),
		  10, 1, 0, dinc(1, 64), 10, 99, 0, 1,
		  const16(40000), const16($NFB_DPORT), const32(1000), const32(1000), 0x50, 0x10, const16(65535),
		  csumtcp(14, 34), const16(0)
		}
	EOF
}

# ipt LINE...: add iptables-legacy rules in nfb-rx in one restore; each
# argument is one line of iptables-restore input, "*table" lines included
ipt() {
	local l in=''
	for l; do
		case $l in '*'*) [ -n "$in" ] && in+=$'COMMIT\n' ;; esac
		in+="$l"$'\n'
	done
	printf '%sCOMMIT\n' "$in" | nfb_rx iptables-legacy-restore -w -n
}
flush_ct() { nfb_rx conntrack -F >/dev/null 2>&1; return 0; }
# the RST of the closed port is dropped before conntrack sees it
RST_DROP=('*raw' '-A OUTPUT -p tcp --tcp-flags RST RST -j DROP')
limit_rule() { # EXT [--syn]
	echo "-A INPUT $(limit_match "$@") -j DROP"
}
limit_match() { echo "-p tcp${2:+ $2} -m $1 --$1-above $KCL_LIMIT --$1-mask 24"; }
ct_count() { nfb_rx cat /proc/sys/net/netfilter/nf_conntrack_count; }
l4() { nfb_snmp Tcp:InSegs; }
# proc columns: id name family key limit keys conns matched over_limit inserts ...
# shellcheck disable=SC2016
kcl_col() { nfb_rx awk -v c="$1" 'NR == 2 { print $c }' /proc/net/stat/nfguard_kconnlimit; }

# fill: run the flood until KCL_FILL SYNs reached TCP (all keys at the limit)
kcl_l4_reached() { [ $(($(l4) - KCL_L4_START)) -ge "$1" ]; }
fill() {
	KCL_L4_START=$(l4)
	nfb_traffic_start
	if ! nfg_wait_until 600 kcl_l4_reached "$KCL_FILL"; then
		nfb_traffic_stop
		nfg_fail "fill: $(($(l4) - KCL_L4_START)) of $KCL_FILL SYNs reached TCP in 600 s"
	fi
	nfb_traffic_stop
	nfg_log "filled: $(($(l4) - KCL_L4_START)) SYNs accepted, $(ct_count) conntracks"
}

rs_floor() { flush_ct; ipt '*raw' '-A PREROUTING -i rx0 -j DROP'; }
rs_ct_syn() {
	flush_ct
	ipt "${RST_DROP[@]}" '*filter' '-A INPUT -p tcp --syn -m conntrack --ctstate NEW -j ACCEPT' &&
		fill &&
		nfb_rx iptables-legacy -w -R INPUT 1 -p tcp --syn -m conntrack --ctstate NEW -j DROP
}
rs_syn() { flush_ct && ipt "${RST_DROP[@]}" '*filter' "$(limit_rule "$1" --syn)" && fill; }
rs_kcl_syn() { rs_syn kconnlimit; }
rs_cl_syn() { rs_syn connlimit; }
chk_floor() { [ "$NFB_L4" -eq 0 ]; }
# the flood regime: (almost) nothing under the limit, rule 1 dropped SYNs
chk_flood() {
	[ $((NFB_L4 * 100)) -le "$NFB_PKTS" ] &&
		[ "$(nfb_ipt_counter legacy 4 filter INPUT 1)" -gt 0 ]
}
chk_ct_syn() { [ "$NFB_L4" -eq 0 ]; }
chk_kcl_syn() { chk_flood && [ "$(kcl_col 7)" -ge "$KCL_FILL" ]; }

# established flows: confirmed by their first packet (accepted; RST
# dropped), then one reply each makes them ASSURED; later packets are
# dropped by "--ctstatus CONFIRMED" after the rule under test
flows_confirmed() { [ "$(nfb_rx conntrack -L -p tcp --dport "$NFB_DPORT" 2>/dev/null | grep -c .)" -ge 64 ]; }
flows_assured() { [ "$(nfb_rx conntrack -L -p tcp --dport "$NFB_DPORT" 2>/dev/null | grep -c ASSURED)" -ge 64 ]; }
reply_flows() {
	# shellcheck disable=SC2016
	nfb_rx python3 -c 'import socket, struct, sys
src, port = "10.99.0.1", int(sys.argv[1])
def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
s.bind((src, 0))
for i in range(1, 65):
    dst = "10.1.0.%d" % i
    tcp = struct.pack("!HHIIBBHHH", port, 40000, 1000, 1000, 0x50, 0x10, 65535, 0, 0)
    ph = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(ph + tcp)) + tcp[18:]
    s.sendto(tcp, (dst, 0))' "$NFB_DPORT"
}
establish() {
	nfb_traffic_start
	nfg_wait_until 300 flows_confirmed || { nfb_traffic_stop; nfg_fail "the 64 flows are not tracked"; }
	reply_flows || { nfb_traffic_stop; nfg_fail "replies to the 64 flows"; }
	nfg_wait_until 300 flows_assured || { nfb_traffic_stop; nfg_fail "the 64 flows are not ASSURED"; }
	nfb_traffic_stop
}
rs_est() { # [EXT]
	local r=() i
	for ((i = 0; $# > 0 && i < KCL_EST_RULES; i++)); do r+=("$(limit_rule "$1")"); done
	flush_ct
	ipt "${RST_DROP[@]}" '*filter' "${r[@]}" '-A INPUT -m conntrack --ctstatus CONFIRMED -j DROP' &&
		establish
}
rs_ct_est() { rs_est; }
rs_cl_est() { rs_est connlimit; }
rs_kcl_est() { rs_est kconnlimit; }
chk_est() { [ "$NFB_L4" -eq 0 ]; }
# read-only: the 64 flows were inserted once each, the sample inserted none
chk_kcl_est() { chk_est && [ "$(kcl_col 10)" -eq 64 ] && [ "$(kcl_col 7)" -eq 64 ]; }

# round_ratios BENCH A B BASE: per round, (1/pps_A - 1/pps_BASE) /
# (1/pps_B - 1/pps_BASE), in round order, then "median min max"
round_ratios() {
	awk -F'\t' -v a="$2" -v b="$3" -v f="$4" '
		NR > 1 { p[$1 "/" $2] = $3; if ($1 > n) n = $1 }
		END {
			for (i = 1; i <= n; i++) {
				x = p[i "/" a]; y = p[i "/" b]; z = p[i "/" f]
				if (x > 0 && y > 0 && z > 0 && 1 / y != 1 / z)
					v[++m] = (1 / x - 1 / z) / (1 / y - 1 / z)
			}
			for (i = 1; i <= m; i++) printf "%.2f ", v[i]
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			if (m) printf "| %.3f %.3f %.3f\n", m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2, v[1], v[m]
		}' "$NFB_OUT/$1.samples.tsv"
}
# ratio_metrics BENCH A B BASE NAME DESC: the per-round ratios as metrics
ratio_metrics() {
	local r med lo hi
	r=$(round_ratios "$1" "$2" "$3" "$4")
	nfg_log "$5 per round: $r"
	read -r med lo hi <<<"${r#*| }"
	[ -n "$hi" ] || nfg_fail "$5: no per-round ratio ($r)"
	KCL_METRICS+=("$5-median" "$med" "$6, median of per-round ratios (${r%% |*})"
		"$5-min" "$lo" "$6, lowest round" "$5-max" "$hi" "$6, highest round")
}
# cost_metric BENCH A BASE DIV NAME DESC: median over rounds of
# (1/pps_A - 1/pps_BASE) / DIV, in ns, as a metric
cost_metric() {
	local v
	v=$(awk -F'\t' -v a="$2" -v b="$3" -v d="$4" '
		NR > 1 { p[$1 "/" $2] = $3; if ($1 > n) n = $1 }
		END {
			for (i = 1; i <= n; i++)
				if (p[i "/" a] > 0 && p[i "/" b] > 0)
					v[++m] = 1e9 * (1 / p[i "/" a] - 1 / p[i "/" b]) / d
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			if (m) printf "%.0f\n", m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
		}' "$NFB_OUT/$1.samples.tsv")
	[ -n "$v" ] || nfg_fail "$5: no samples"
	KCL_METRICS+=("$5" "$v" "$6")
}
KCL_METRICS=()

syn_cfg >"$NFB_TGCFG"
nfb_ruleset raw-drop rs_floor --floor --check chk_floor --desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset conntrack rs_ct_syn --check chk_ct_syn \
	--desc "-p tcp --syn -m conntrack --ctstate NEW -j DROP (conntrack alone: every SYN tracked and dropped; table filled)"
nfb_ruleset connlimit rs_cl_syn --check chk_flood --desc "$(limit_match connlimit --syn) -j DROP (filled)"
nfb_ruleset kconnlimit rs_kcl_syn --check chk_kcl_syn --desc "$(limit_match kconnlimit --syn) -j DROP (filled)"
NFB_PKTDESC="TCP SYN from 64k sources (10.0.0.0/16), random ports, to $NFB_DST4:$NFB_DPORT, every /24 holding $KCL_LIMIT live connections (trafgen over veth)"
nfb_run kconnlimit-synflood --ratio kconnlimit/connlimit --ratio conntrack/connlimit
ratio_metrics kconnlimit-synflood kconnlimit connlimit raw-drop syn-ratio \
	"SYN flood: overhead above the floor, kconnlimit / connlimit"
ratio_metrics kconnlimit-synflood kconnlimit connlimit conntrack syn-rule-ratio \
	"SYN flood: cost above conntrack alone, kconnlimit / connlimit"

# A SYN the rule lets through counts while its conntrack is not confirmed
# for up to pending_ms (default 1 s: a queue reader may hold it); this
# flood would then fill every key to the limit in a second and become the
# filled regime above. pending_ms 0 gives connlimit's two jiffies: nothing
# remembered, every SYN an insert.
KCL_PENDING=/sys/module/xt_kconnlimit/parameters/pending_ms
kcl_pending0=$(cat $KCL_PENDING)
echo 0 >$KCL_PENDING || nfg_fail "pending_ms"
rs_new() { # EXT: every SYN through the rule, then dropped
	flush_ct
	ipt '*filter' "$(limit_rule "$1" --syn)" '-A INPUT -p tcp --syn -j DROP'
}
rs_ct_new() { flush_ct; ipt '*filter' '-A INPUT -p tcp --syn -m conntrack --ctstate NEW -j DROP'; }
rs_cl_new() { rs_new connlimit; }
rs_kcl_new() { rs_new kconnlimit; }
# nothing reached TCP, no SYN was over the limit, the second rule dropped them
chk_new() {
	[ "$NFB_L4" -eq 0 ] && [ "$(nfb_ipt_counter legacy 4 filter INPUT 1)" -eq 0 ] &&
		[ "$(nfb_ipt_counter legacy 4 filter INPUT 2)" -ge "$NFB_PKTS" ]
}
# ... and kconnlimit inserted every one of them
chk_kcl_new() { chk_new && [ "$(kcl_col 10)" -ge "$NFB_PKTS" ] && [ "$(kcl_col 9)" -eq 0 ]; }
nfb_ruleset raw-drop rs_floor --floor --check chk_floor --desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset conntrack rs_ct_new --check chk_floor \
	--desc "-p tcp --syn -m conntrack --ctstate NEW -j DROP (conntrack alone)"
nfb_ruleset connlimit-new rs_cl_new --check chk_new --desc "$(limit_match connlimit --syn) -j DROP; -p tcp --syn -j DROP"
nfb_ruleset kconnlimit-new rs_kcl_new --check chk_kcl_new --desc "$(limit_match kconnlimit --syn) -j DROP; -p tcp --syn -j DROP"
NFB_PKTDESC="TCP SYN from 64k sources (10.0.0.0/16), random ports, to $NFB_DST4:$NFB_DPORT, every SYN dropped after the rule: nothing remembered (trafgen over veth)"
nfb_run kconnlimit-synflood-new --ratio kconnlimit-new/connlimit-new --ratio conntrack/connlimit-new
echo "$kcl_pending0" >$KCL_PENDING
ratio_metrics kconnlimit-synflood-new kconnlimit-new connlimit-new raw-drop syn-new-ratio \
	"SYN flood, nothing remembered: overhead above the floor, kconnlimit / connlimit"
ratio_metrics kconnlimit-synflood-new kconnlimit-new connlimit-new conntrack syn-new-rule-ratio \
	"SYN flood, nothing remembered: cost above conntrack alone, kconnlimit / connlimit"

ack_cfg >"$NFB_TGCFG"
nfb_ruleset raw-drop rs_floor --floor --check chk_floor --desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset conntrack rs_ct_est --check chk_est --desc "-m conntrack --ctstatus CONFIRMED -j DROP (conntrack alone)"
nfb_ruleset connlimit-est rs_cl_est --check chk_est --desc "8 x $(limit_match connlimit) -j DROP; then the same"
nfb_ruleset kconnlimit-est rs_kcl_est --check chk_kcl_est --desc "8 x $(limit_match kconnlimit) -j DROP; then the same"
NFB_PKTDESC="TCP ACKs of 64 established (ASSURED) flows (10.1.0.1-64, one /24), every packet through $KCL_EST_RULES copies of the rule"
nfb_run kconnlimit-established --ratio kconnlimit-est/connlimit-est --ratio conntrack/connlimit-est
ratio_metrics kconnlimit-established kconnlimit-est connlimit-est raw-drop est-ratio \
	"established flows: overhead above the floor, kconnlimit / connlimit"
ratio_metrics kconnlimit-established kconnlimit-est connlimit-est conntrack est-rule-ratio \
	"established flows: cost above conntrack alone, kconnlimit / connlimit"
cost_metric kconnlimit-established kconnlimit-est conntrack "$KCL_EST_RULES" est-kconnlimit-ns \
	"established flows: one kconnlimit rule, per packet (median over rounds)"
cost_metric kconnlimit-established connlimit-est conntrack "$KCL_EST_RULES" est-connlimit-ns \
	"established flows: one connlimit rule, per packet (median over rounds)"

# memory per remembered connection: slab object sizes (merged caches are
# still listed in /sys/kernel/slab by name, as links)
objsize() { cat "/sys/kernel/slab/$1/object_size" 2>/dev/null || echo 0; }
kconn=$(objsize nfg_kcl_conn)
[ "$kconn" -gt 0 ] || nfg_fail "no slab nfg_kcl_conn"
ctuple=$(objsize nf_conncount_tuple)
crb=$(objsize nf_conncount_rb)
[ "$ctuple" -gt 0 ] || nfg_fail "no slab nf_conncount_tuple (connlimit loaded: $(lsmod | grep -c connlimit))"
nfb_metric mem-kconnlimit-conn "$kconn" B "kconnlimit: slab object per remembered connection (nfg_kcl_conn)"
nfb_metric mem-connlimit-conn "$ctuple" B "nf_conncount: slab object per remembered connection (nf_conncount_tuple)"
nfb_metric mem-connlimit-key "$crb" B "nf_conncount: slab object per key (nf_conncount_rb)"
# struct nfg_kcl_node is 88 bytes on 64-bit (tests/unit: sizeof), kmalloc-96
nfb_metric mem-kconnlimit-key 96 B "kconnlimit: kmalloc object per key (struct nfg_kcl_node)"
nfb_metric mem-ratio "$(awk -v a="$kconn" -v b="$ctuple" 'BEGIN { printf "%.2f", a / b }')" x \
	"bytes per remembered connection, kconnlimit / nf_conncount"
for ((i = 0; i < ${#KCL_METRICS[@]}; i += 3)); do
	u=x
	case ${KCL_METRICS[i]} in *-ns) u=ns ;; esac
	nfb_metric "${KCL_METRICS[i]}" "${KCL_METRICS[i + 1]}" "$u" "${KCL_METRICS[i + 2]}"
done
nfb_run kconnlimit-summary
