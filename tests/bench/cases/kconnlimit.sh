#!/bin/bash
# kconnlimit vs mainline connlimit (report only).
#
# 1. SYN flood from 64k random sources (10.0.0.0/16, random ports) through
#    filter INPUT "-p tcp --syn -m kconnlimit --kconnlimit-above 100
#    --kconnlimit-mask 24 -j DROP" (then "-j DROP": nothing reaches TCP, so
#    every flow stays SYN_SENT and counts), next to the same rule with
#    connlimit, and conntrack with no limit rule; overhead per SYN above the
#    raw-table DROP floor, rounds alternating in one boot. Goal: kconnlimit's
#    overhead at most half of connlimit's.
# 2. Established flows: 64 flows (one /24) of ACKs, every packet through the
#    rule without --syn (kconnlimit reads the count without a lock; connlimit
#    looks its tuple up in the key's list).
# 3. Memory per remembered connection: the slab object sizes
#    (nfg_kcl_conn vs nf_conncount_tuple, plus the per-key nodes).
# The conntrack table is flushed before every sample, so each ruleset starts
# from the same state.
# shellcheck source=tests/bench/lib.sh
. "$NFG_TOP/tests/bench/lib.sh"
nfg_need conntrack trafgen

nfg_load_modules xt_kconnlimit
modprobe xt_connlimit || nfg_fail "modprobe xt_connlimit"
nfb_init trafgen
nfb_rx sysctl -qw net.netfilter.nf_conntrack_tcp_be_liberal=1 >/dev/null 2>&1

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
rs_ct() { flush_ct; nfb_rx iptables-legacy -w -A INPUT -i rx0 -j DROP; }
# rs_limit EXT [--syn]: the limit rule, then DROP everything
rs_limit() {
	local e=$1
	shift
	flush_ct
	nfb_rx iptables-legacy -w -A INPUT -i rx0 -p tcp "$@" -m "$e" "--$e-above" 100 "--$e-mask" 24 -j DROP &&
		nfb_rx iptables-legacy -w -A INPUT -i rx0 -j DROP
}
rs_kcl_syn() { rs_limit kconnlimit --syn; }
rs_cl_syn() { rs_limit connlimit --syn; }
rs_kcl_all() { rs_limit kconnlimit; }
rs_cl_all() { rs_limit connlimit; }
chk_none_l4() { [ "$NFB_L4" -eq 0 ]; }
# the limit rule saw the packets and the table remembered connections
chk_kcl() {
	local line
	line=$(nfb_rx nfguard kconnlimit list | sed -n 2p)
	[ "$(awk '{ print $10 }' <<<"$line")" -gt 0 ] && [ "$NFB_L4" -eq 0 ]
}

syn_cfg >"$NFB_TGCFG"
nfb_ruleset raw-drop rs_floor --floor --check chk_none_l4 --desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset conntrack rs_ct --check chk_none_l4 --desc "filter INPUT -j DROP (conntrack, no limit rule)"
nfb_ruleset connlimit rs_cl_syn --check chk_none_l4 \
	--desc "-p tcp --syn -m connlimit --connlimit-above 100 --connlimit-mask 24 -j DROP; -j DROP"
nfb_ruleset kconnlimit rs_kcl_syn --check chk_kcl \
	--desc "-p tcp --syn -m kconnlimit --kconnlimit-above 100 --kconnlimit-mask 24 -j DROP; -j DROP"
NFB_PKTDESC="TCP SYN from 64k sources (10.0.0.0/16), random ports, to $NFB_DST4:$NFB_DPORT (trafgen over veth)"
nfb_run kconnlimit-synflood --ratio kconnlimit/connlimit --ratio conntrack/connlimit

ack_cfg >"$NFB_TGCFG"
nfb_ruleset raw-drop rs_floor --floor --check chk_none_l4 --desc "iptables-legacy raw PREROUTING -j DROP"
nfb_ruleset conntrack rs_ct --check chk_none_l4 --desc "filter INPUT -j DROP (conntrack, no limit rule)"
nfb_ruleset connlimit-all rs_cl_all --check chk_none_l4 \
	--desc "-p tcp -m connlimit --connlimit-above 100 --connlimit-mask 24 -j DROP; -j DROP"
nfb_ruleset kconnlimit-all rs_kcl_all --check chk_kcl \
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
