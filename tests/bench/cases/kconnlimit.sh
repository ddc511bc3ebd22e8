#!/bin/bash
# kconnlimit vs mainline connlimit (report only).
#
# 1. SYN flood from 64k random sources (10.0.0.0/16, random ports) to a
#    listener on port 80 through filter INPUT "-p tcp --syn -m kconnlimit
#    --kconnlimit-above 100 --kconnlimit-mask 24 -j DROP", next to the same
#    rule with connlimit and to conntrack alone (-m conntrack --ctstate NEW);
#    SYNs under the limit are answered (SYN cookies, replies into dummy0), so
#    their conntracks are confirmed and count: each /24 soon holds 100 and
#    most SYNs are over the limit, the regime the issue measured. Overhead per
#    SYN above the raw-table DROP floor, rounds alternating in one boot; a
#    10 s warm-up before each sample fills the keys (NFB_KCL_SYN_WARMUP).
#    Goal: kconnlimit's overhead at most half of connlimit's.
# 2. Established flows: 64 flows (one /24) of ACKs, every packet through the
#    rule without --syn (kconnlimit reads the count without a lock; connlimit
#    looks its tuple up in the key's list), then DROP.
# 3. Memory per remembered connection: the slab object sizes
#    (nfg_kcl_conn vs nf_conncount_tuple, plus the per-key nodes).
# The conntrack table is flushed before every sample, so each ruleset starts
# from the same state; nf_conntrack_max is raised so the table never fills.
# shellcheck source=tests/bench/lib.sh
. "$NFG_TOP/tests/bench/lib.sh"
nfg_need conntrack trafgen

nfg_load_modules xt_kconnlimit
modprobe xt_connlimit || nfg_fail "modprobe xt_connlimit"
nfb_init trafgen
nfb_rx sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=1 >/dev/null 2>&1
sysctl -qw net.netfilter.nf_conntrack_max=524288 || nfg_fail "nf_conntrack_max"
# the flooded service: SYNs under the limit get a SYN-ACK (cookies when full)
nfg_bg "$NFB_NS_RX" python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", '"$NFB_DPORT"'))
s.listen(1024)
time.sleep(10 ** 6)'
nfg_wait_port "$NFB_NS_RX" "$NFB_DPORT" tcp 30 || nfg_fail "listener on port $NFB_DPORT"

syn_cfg() { # 64k sources 10.0.x.y, random ports and sequence, SYN
	cat <<-EOF
		{
		  $(echo "$NFB_RXMAC" | sed 's/^/0x/; s/:/, 0x/g'), 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		  0x45, 0x00, const16(40), drnd(2), 0x40, 0x00, 64, 6, csumip(14, 33),
		  10, 0, drnd(), drnd(), 10, 99, 0, 1,
		  drnd(2), const16($NFB_DPORT), drnd(4), const32(0), 0x50, 0x02, const16(65535),
		  csumtcp(14, 34), const16(0)
		}
	EOF
}
ack_cfg() { # 64 established-looking flows 10.1.0.1-64 -> port, ACK
	cat <<-EOF
		{
		  $(echo "$NFB_RXMAC" | sed 's/^/0x/; s/:/, 0x/g'), 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
		  0x45, 0x00, const16(40), drnd(2), 0x40, 0x00, 64, 6, csumip(14, 33),
		  10, 1, 0, dinc(1, 64), 10, 99, 0, 1,
		  const16(40000), const16($NFB_DPORT), const32(1000), const32(1000), 0x50, 0x10, const16(65535),
		  csumtcp(14, 34), const16(0)
		}
	EOF
}

flush_ct() { nfb_rx conntrack -F >/dev/null 2>&1; return 0; }
rs_floor() { flush_ct; nfb_rx iptables-legacy -w -t raw -A PREROUTING -i rx0 -j DROP; }
rs_ct_syn() { flush_ct; nfb_rx iptables-legacy -w -A INPUT -i rx0 -p tcp --syn -m conntrack --ctstate NEW -j ACCEPT; }
rs_ct_all() {
	flush_ct
	nfb_rx iptables-legacy -w -A INPUT -i rx0 -m conntrack --ctstate NEW,ESTABLISHED -j DROP &&
		nfb_rx iptables-legacy -w -A INPUT -i rx0 -j DROP
}
# rs_syn EXT: the limit rule on SYNs; the rest reaches the listener
rs_syn() {
	flush_ct
	nfb_rx iptables-legacy -w -A INPUT -i rx0 -p tcp --syn -m "$1" "--$1-above" 100 "--$1-mask" 24 -j DROP
}
# rs_all EXT: every packet through the limit rule, then DROP
rs_all() {
	flush_ct
	nfb_rx iptables-legacy -w -A INPUT -i rx0 -p tcp -m "$1" "--$1-above" 100 "--$1-mask" 24 -j DROP &&
		nfb_rx iptables-legacy -w -A INPUT -i rx0 -j DROP
}
rs_kcl_syn() { rs_syn kconnlimit; }
rs_cl_syn() { rs_syn connlimit; }
rs_kcl_all() { rs_all kconnlimit; }
rs_cl_all() { rs_all connlimit; }
chk_none_l4() { [ "$NFB_L4" -eq 0 ]; }
chk_l4() { [ "$NFB_L4" -gt 0 ]; }
# the limit rule dropped SYNs over the limit (rule 1 of INPUT counted
# packets); once every key is full no SYN reaches the listener, so L4 may be 0
chk_limit_syn() { [ "$(nfb_ipt_counter legacy 4 filter INPUT 1)" -gt 0 ]; }
# the table remembered connections (inserts, column 10 of list)
kcl_inserts() { nfb_rx nfguard kconnlimit list | awk 'NR == 2 { print $10 }'; }
chk_kcl_syn() { chk_limit_syn && [ "$(kcl_inserts)" -gt 0 ]; }
chk_kcl_all() { [ "$NFB_L4" -eq 0 ] && [ "$(kcl_inserts)" -gt 0 ]; }

syn_cfg >"$NFB_TGCFG"
nfb_ruleset raw-drop rs_floor --floor --check chk_none_l4 --desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset conntrack rs_ct_syn --check chk_l4 \
	--desc "-p tcp --syn -m conntrack --ctstate NEW -j ACCEPT (conntrack, no limit; all answered)"
nfb_ruleset connlimit rs_cl_syn --check chk_limit_syn \
	--desc "-p tcp --syn -m connlimit --connlimit-above 100 --connlimit-mask 24 -j DROP"
nfb_ruleset kconnlimit rs_kcl_syn --check chk_kcl_syn \
	--desc "-p tcp --syn -m kconnlimit --kconnlimit-above 100 --kconnlimit-mask 24 -j DROP"
NFB_PKTDESC="TCP SYN from 64k sources (10.0.0.0/16), random ports, to a listener on $NFB_DST4:$NFB_DPORT (trafgen over veth)"
# Each rule's table starts empty: 256 keys x 100 connections must be seen
# before SYNs are over the limit. A long warm-up (traffic before each
# sample, not measured) fills them, so the samples measure the flood regime.
warmup=$NFB_WARMUP
NFB_WARMUP=${NFB_KCL_SYN_WARMUP:-10}
nfb_run kconnlimit-synflood --ratio kconnlimit/connlimit --ratio conntrack/connlimit
NFB_WARMUP=$warmup

ack_cfg >"$NFB_TGCFG"
nfb_ruleset raw-drop rs_floor --floor --check chk_none_l4 --desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset conntrack rs_ct_all --check chk_none_l4 --desc "-m conntrack --ctstate NEW,ESTABLISHED -j DROP (conntrack, no limit)"
nfb_ruleset connlimit-all rs_cl_all --check chk_none_l4 \
	--desc "-p tcp -m connlimit --connlimit-above 100 --connlimit-mask 24 -j DROP; -j DROP"
nfb_ruleset kconnlimit-all rs_kcl_all --check chk_kcl_all \
	--desc "-p tcp -m kconnlimit --kconnlimit-above 100 --kconnlimit-mask 24 -j DROP; -j DROP"
NFB_PKTDESC="TCP ACKs of 64 flows (10.1.0.1-64, one /24), every packet through the rule"
nfb_run kconnlimit-established --ratio kconnlimit-all/connlimit-all

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
nfb_metric mem-kconnlimit-key 64 B "kconnlimit: kmalloc object per key (struct nfg_kcl_node)"
nfb_metric mem-ratio "$(awk -v a="$kconn" -v b="$ctuple" 'BEGIN { printf "%.2f", a / b }')" x \
	"bytes per remembered connection, kconnlimit / nf_conncount"
nfb_run kconnlimit-memory
