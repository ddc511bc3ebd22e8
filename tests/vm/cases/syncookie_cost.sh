#!/bin/bash
# What an ACK costs in proxy mode, as the man page states it: every ACK
# through the rule a conntrack lookup; the cookie check (SipHash) only for
# an ACK of no tracked flow, of a connection whose server handshake is not
# over, or of a closed one - never for the segments of an established
# connection. Counted with a kprobe on the cookie check
# (nfg_sc_cookie_check) and on conntrack's lookup (nf_conntrack_find_get):
# through the man page's router rule a client downloads 2 MB over a
# proxied connection (dozens of ACKs): the cookie check runs for its
# handshake only, the lookups for every ACK; a bogus-ACK flood is checked,
# every packet (ack_invalid). IPv4 (iptables-legacy) and IPv6
# (iptables-nft).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need curl python3 nfg-tcpflood iptables-legacy ip6tables-nft

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
port=8080
www=$NFG_WORK/www
mkdir -p "$www" && head -c 2000000 /dev/urandom >"$www/blob" || nfg_fail "test file"
want=$(nfg_sha256 "$www/blob")
nfg_http_server "$NFG_NS_S" $port "$www"
nfg_router ip route add default via "$NFG_C4" || nfg_fail "router default route"
nfg_router ip -6 route add fd00:99::/64 via "$NFG_C6" || nfg_fail "router flood route"

T=/sys/kernel/tracing
cleanup() {
	local e
	for e in nfg_ck nfg_ctl; do
		[ ! -d $T/events/kprobes/$e ] || { echo 0 >$T/events/kprobes/$e/enable; echo "-:$e" >>$T/kprobe_events; }
	done
}
nfg_on_exit cleanup
[ -d $T/events ] || mount -t tracefs nodev $T || nfg_fail "tracefs"
echo 'p:nfg_ck xt_SYNCOOKIE:nfg_sc_cookie_check' >>$T/kprobe_events || nfg_fail "kprobe on the cookie check"
echo 'p:nfg_ctl nf_conntrack_find_get' >>$T/kprobe_events || nfg_fail "kprobe on the conntrack lookup"
echo 1 >$T/events/kprobes/nfg_ck/enable && echo 1 >$T/events/kprobes/nfg_ctl/enable || nfg_fail "enable kprobes"
hits() { awk -v e="$1" '$1 == e { print $2 }' $T/kprobe_profile; }
statf=$NFG_WORK/stat
snap() { nfg_router cat /proc/net/stat/nfguard_syncookie >"$statf" || nfg_fail "read counters"; }
stat() { nfg_kv "$statf" "$1"; }

for fam in 4 6; do
	if [ $fam = 4 ]; then v=legacy dst=$NFG_S4 url=http://$NFG_S4:$port/blob mss=1460
	else v=nft dst=$NFG_S6 url="http://[$NFG_S6]:$port/blob" mss=1440; fi
	rule=(-t raw -A PREROUTING -i eth0 -p tcp -d "$dst" --dport $port -j SYNCOOKIE
		--mss $mss --wscale 7 --sack-perm --timestamp)
	nfg_assert_ok "rule IPv$fam" nfg_ipt "$NFG_NS_R" $v $fam "${rule[@]}"
	nfg_assert_ok "flush allowlist" nfg_router nfguard syncookie allowlist flush
	snap
	a0=$(stat ack_valid) i0=$(stat ack_invalid) p0=$(stat proxied)
	ck0=$(hits nfg_ck) ct0=$(hits nfg_ctl)
	nfg_fetch_intact "$url" "$want"
	snap
	ck=$(($(hits nfg_ck) - ck0)) ct=$(($(hits nfg_ctl) - ct0))
	nfg_log "IPv$fam download: $ck cookie checks, $ct conntrack lookups; ack_valid +$(($(stat ack_valid) - a0)), ack_invalid +$(($(stat ack_invalid) - i0))"
	nfg_assert_eq $((p0 + 1)) "$(stat proxied)" "IPv$fam: the download's connection proxied"
	nfg_assert_eq "$i0" "$(stat ack_invalid)" "IPv$fam: ack_invalid during the download"
	# the client's ACKs of 2 MB (dozens: GRO, delayed ACKs), each looked up
	nfg_assert_ge "$ct" 20 "IPv$fam: conntrack lookups during the download"
	# the handshake's ACK, and perhaps its retransmission or a window probe
	nfg_assert_le "$ck" 4 "IPv$fam: cookie checks during the download"

	# positive control: bogus ACKs of no flow are checked, each one
	ck0=$(hits nfg_ck)
	if [ $fam = 4 ]; then
		nfg_assert_ok "bogus ACKs" nfg_client nfg-tcpflood -i 2000 -c 200 "$dst" $port A 10.0.1.0/24
	else
		nfg_assert_ok "bogus ACKs" nfg_client nfg-tcpflood -i 2000 -c 200 "$dst" $port A fd00:99::/64
	fi
	checked() { snap; [ "$(stat ack_invalid)" -ge $((i0 + 150)) ]; }
	nfg_wait_until 30 checked || nfg_fail "IPv$fam: bogus ACKs: ack_invalid +$(($(stat ack_invalid) - i0)) of 200"
	nfg_assert_ge $(($(hits nfg_ck) - ck0)) $(($(stat ack_invalid) - i0)) "IPv$fam: cookie checks of the bogus ACKs"
	rule[2]=-D
	nfg_assert_ok "rule delete" nfg_ipt "$NFG_NS_R" $v $fam "${rule[@]}"
done
nfg_log "ok"
