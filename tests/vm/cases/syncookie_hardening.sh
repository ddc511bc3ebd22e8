#!/bin/bash
# SYNCOOKIE proxy mode hardening, through a rule on the router (IPv4 and
# IPv6, real clients, no scapy):
#  - admission: a client whose handshake has no timestamps gets its
#    connection (ack_valid, proxied) but is not allowlisted (its 24-bit
#    cookie alone is forgeable by a few million ACKs); with timestamps (the
#    echo is 32 more bits of proof) it is;
#  - bogus ACKs spoofing an allowlisted source (invalid cookie, no
#    conntrack entry) never reach the server: all of them are dropped and
#    counted as ack_invalid;
#  - a lost proxied SYN is sent again: the server drops the first SYN the
#    target opens the connection with, and the connection still completes
#    (the client's zero-window probe makes the target send it again);
#  - no reflection: a SYN with IP options (answered by the routed path)
#    from the client link's broadcast address or from the router's own
#    inner address gets no SYN-ACK (send_fail), and a SYN in a frame from a
#    group MAC address is answered by the routed path, not in place to
#    that group;
#  - idle: 30 namespaces without a rule, read through /proc, stats, list
#    and del, hold no allowlist table (live_objects unchanged);
#  - memcg: a tenant's netns whose first rule was installed from inside a
#    memory cgroup: 12000 entries added from outside it are charged to it
#    (memory.current), uncharged when flushed, refused above memory.max,
#    and everything is freed with the netns (live_objects);
#  - prefix: rules with /24 and /16 masks (IPv6: /64, /48) do not share
#    entries whose masked addresses are equal, and each entry serves the
#    rule of its own length;
#  - xfrm6: with ESP required between client and router (transport mode,
#    null cipher), a decrypted IPv6 SYN's SYN-ACK (the routed path) goes
#    out through the outbound SA and the connection completes;
#  - secret: a replaced secret and a deleted netns' secret are freed with
#    kfree_sensitive() (a kprobe sees the object holding the key).
# Each part runs and reports on its own; the case fails if any part failed.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need socat nfg-tcpflood iptables-legacy ip6tables-legacy

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
nfg_echo_server "$NFG_NS_S" 5001
nfg_echo_server "$NFG_NS_S" 5002
statf=$NFG_WORK/stat
snap() { nfg_router cat /proc/net/stat/nfguard_syncookie >"$statf" || nfg_fail "read counters"; }
stat() { nfg_kv "$statf" "$1"; }
sc() { nfg_router nfguard syncookie "$@"; }
listed() { sc allowlist list | grep -q "^$1/"; }
# the plugin reads getopt's other spellings of -t raw: --table=raw, -vt raw
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$NFG_S4 mss=1460 t=--table=raw; else dst=$NFG_S6 mss=1440 t="-vt raw"; fi
	# shellcheck disable=SC2086 # $t is one or two words
	nfg_assert_ok "rule IPv$fam ($t)" nfg_ipt "$NFG_NS_R" legacy $fam $t -A PREROUTING -i eth0 -p tcp \
		-d "$dst" --dport 5001:5009 -j SYNCOOKIE --mss $mss --wscale 7 --sack-perm --timestamp
done

admission() {
	local n p
	nfg_log "== admission needs the timestamp echo"
	sc allowlist flush >/dev/null || nfg_fail "flush"
	nfg_client sysctl -qw net.ipv4.tcp_timestamps=0 || nfg_fail "client timestamps off"
	snap
	n=$(stat ack_valid) p=$(stat proxied)
	nfg_assert_ok "IPv4 connection without timestamps" nfg_conn_open nots "$NFG_NS_C" "$NFG_S4" 5001
	snap
	nfg_assert_ge "$(stat ack_valid)" $((n + 1)) "ack_valid (no timestamps)"
	nfg_assert_ge "$(stat proxied)" $((p + 1)) "proxied (no timestamps)"
	nfg_assert_fail "client without timestamps allowlisted" listed "$NFG_C4"
	nfg_client sysctl -qw net.ipv4.tcp_timestamps=1 || nfg_fail "client timestamps on"
	nfg_assert_ok "IPv4 connection with timestamps" nfg_conn_open ts4 "$NFG_NS_C" "$NFG_S4" 5001
	nfg_assert_ok "client with timestamps allowlisted" listed "$NFG_C4"
	nfg_assert_ok "IPv6 connection with timestamps" nfg_conn_open ts6 "$NFG_NS_C" "$NFG_S6" 5001
	nfg_assert_ok "IPv6 client with timestamps allowlisted" listed "$NFG_C6"
}

bogus() {
	local fam src dst inv0 n=200 reached
	nfg_log "== bogus ACKs from an allowlisted source"
	for fam in 4 6; do
		if [ $fam = 4 ]; then src=$NFG_C4/32 dst=$NFG_S4; else src=$NFG_C6/128 dst=$NFG_S6; fi
		sc allowlist add "$src" >/dev/null 2>&1 || listed "${src%/*}" || nfg_fail "allowlist $src"
		nfg_ipt "$NFG_NS_S" legacy $fam -A INPUT -p tcp --dport 5009 -m comment --comment bogus$fam -j ACCEPT ||
			nfg_fail "bogus counter"
		snap
		inv0=$(stat ack_invalid)
		nfg_client nfg-tcpflood -c $n "$dst" 5009 A "$src" >/dev/null || nfg_fail "IPv$fam ACK flood"
		# every ACK ends up either dropped (counted) or at the server
		accounted() {
			snap
			reached=$(nfg_ipt_pkts "$NFG_NS_S" legacy $fam bogus$fam)
			[ $((reached + $(stat ack_invalid) - inv0)) -ge $n ]
		}
		nfg_wait_until 30 accounted || nfg_fail "IPv$fam: of $n ACKs, $reached reached the server," \
			"$(($(stat ack_invalid) - inv0)) counted"
		nfg_assert_eq 0 "$reached" "IPv$fam: bogus ACKs from an allowlisted source that reached the server"
		nfg_assert_eq $n $(($(stat ack_invalid) - inv0)) "IPv$fam: ack_invalid"
	done
}

lostsyn() {
	local fam r0
	nfg_log "== a lost proxied SYN is sent again"
	for fam in 4 6; do
		if [ $fam = 4 ]; then dst=$NFG_S4; else dst=$NFG_S6; fi
		# the server drops the first SYN to 5002 (nth: --packet 0 is the first)
		nfg_ipt "$NFG_NS_S" legacy $fam -I INPUT -p tcp --syn --dport 5002 -m statistic --mode nth \
			--every 1000000 --packet 0 -m comment --comment lost$fam -j DROP || nfg_fail "drop rule"
		# through the cookie path, not the allowlist
		sc allowlist flush >/dev/null || nfg_fail "flush"
		snap
		r0=$(stat syn_resent)
		nfg_assert_ok "IPv$fam connection whose proxied SYN was lost" \
			nfg_conn_open lost$fam "$NFG_NS_C" "$dst" 5002
		nfg_assert_eq 1 "$(nfg_ipt_pkts "$NFG_NS_S" legacy $fam lost$fam)" "IPv$fam: SYNs the server dropped"
		snap
		nfg_assert_ge "$(stat syn_resent)" $((r0 + 1)) "IPv$fam: syn_resent"
	done
}

reflect() {
	local rmac c0 f0 i0 refl
	nfg_log "== no cookie SYN-ACK to a broadcast address, into the router, or to a group MAC"
	sc allowlist flush >/dev/null || nfg_fail "flush"
	rmac=$(nfg_router cat /sys/class/net/eth0/address) || nfg_fail "router MAC"
	# preconditions: the client link's broadcast address has a broadcast route
	nfg_assert_match "^broadcast " "$(nfg_router ip route get 10.0.1.255)" "route to 10.0.1.255"
	for refl in 10.0.1.255 "$NFG_RS4"; do
		nfg_ipt "$NFG_NS_R" legacy 4 -A OUTPUT -d $refl -p tcp -m comment --comment "refl-$refl" -j ACCEPT ||
			nfg_fail "counter"
	done
	snap
	c0=$(stat cookie_sent) f0=$(stat send_fail) i0=$(stat sent_inplace)
	# with IP options (the routed path) from the link's broadcast address and
	# from the router's own inner address; in place from a group MAC address
	nfg_client python3 "$NFG_TOP/tests/vm/cases/syncookie_reflect.py" eth0 "$rmac" "$NFG_S4" 5001 \
		"-,10.0.1.255,1" "-,$NFG_RS4,1" "01:00:5e:00:00:01,$NFG_C4,0" || nfg_fail "sending SYNs"
	answered() { snap; [ $(($(stat cookie_sent) - c0 + $(stat send_fail) - f0)) -ge 3 ]; }
	nfg_wait_until 30 answered || nfg_fail "3 SYNs sent, cookie_sent +$(($(stat cookie_sent) - c0))," \
		"send_fail +$(($(stat send_fail) - f0))"
	for refl in 10.0.1.255 "$NFG_RS4"; do
		nfg_assert_eq 0 "$(nfg_ipt_pkts "$NFG_NS_R" legacy 4 "refl-$refl")" "SYN-ACKs sent to $refl"
	done
	nfg_assert_eq 2 $(($(stat send_fail) - f0)) "send_fail (SYN-ACKs refused a route)"
	nfg_assert_eq 1 $(($(stat cookie_sent) - c0)) "cookie_sent (the SYN from a group MAC, by the routed path)"
	nfg_assert_eq 0 $(($(stat sent_inplace) - i0)) "sent_inplace (SYN-ACK to a group MAC)"
}

# netns, cgroup and kprobe the parts below make (a part runs in a subshell)
P=/sys/module/xt_SYNCOOKIE/parameters
CG=/sys/fs/cgroup/nfg-tenant
T=/sys/kernel/tracing
cleanup() {
	local ns
	for ns in $(ip netns list | grep -Eo '^nfg-(pn[0-9]+|tenant|sec)'); do ip netns del "$ns"; done
	rmdir $CG
	[ ! -d $T/events/kprobes/nfg_ks ] || { echo 0 >$T/events/kprobes/nfg_ks/enable; echo -:nfg_ks >>$T/kprobe_events; }
}
nfg_on_exit cleanup
live() { cat $P/live_objects; }

idle() {
	local l0 i
	nfg_log "== namespaces without a rule cost no allowlist, no worker"
	l0=$(live)
	for ((i = 0; i < 30; i++)); do echo "netns add nfg-pn$i"; done | ip -batch - || nfg_fail "30 netns"
	# every read-only interface, in namespaces that never had a rule
	nfg_in nfg-pn0 cat /proc/net/stat/nfguard_syncookie >"$NFG_WORK/pn0" || nfg_fail "proc"
	nfg_assert_eq 0 "$(nfg_kv "$NFG_WORK/pn0" allowlist_entries)" "allowlist_entries without a rule"
	nfg_assert_eq 65536 "$(nfg_kv "$NFG_WORK/pn0" allowlist_max)" "allowlist_max without a rule"
	nfg_assert_ok "stats without a rule" nfg_in nfg-pn1 nfguard syncookie stats
	nfg_assert_eq "" "$(nfg_in nfg-pn2 nfguard syncookie allowlist list)" "listing without a rule"
	nfg_assert_fail "del without a rule" nfg_in nfg-pn3 nfguard syncookie allowlist del 10.9.9.9
	nfg_assert_eq "$l0" "$(live)" "live objects after 30 netns without a rule (before: $l0)"
	for ((i = 0; i < 30; i++)); do echo "netns del nfg-pn$i"; done | ip -batch - || nfg_fail "netns del"
}

memcg() {
	local l0 m0 m1 i n=12000 f=$NFG_WORK/fill
	nfg_log "== a tenant's allowlist is charged to its memory cgroup, and freed with its netns"
	grep -qw memory /sys/fs/cgroup/cgroup.controllers || nfg_fail "no memory controller"
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control || nfg_fail "enable memory controller"
	mkdir $CG || nfg_fail "mkdir $CG"
	l0=$(live)
	ip netns add nfg-tenant || nfg_fail "tenant netns"
	# the tenant installs its netns' first rule from inside its cgroup
	nfg_assert_ok "tenant's rule" sh -c 'echo $$ >"$1/cgroup.procs" &&
		exec ip netns exec nfg-tenant iptables-legacy -w -t raw -A PREROUTING -p tcp --dport 80 \
		-j SYNCOOKIE --mode local' sh $CG
	nfg_assert_eq $((l0 + 1)) "$(live)" "live objects with the tenant's rule (its table)"
	for ((i = 0; i < n; i++)); do echo "add 10.$((i >> 16)).$((i >> 8 & 255)).$((i & 255)) timeout 600"; done >"$f"
	# filled from outside the cgroup (as packets, in softirq, fill it)
	m0=$(cat $CG/memory.current)
	nfg_assert_ok "restore $n entries" nfg_in nfg-tenant nfguard syncookie allowlist restore -f "$f"
	m1=$(cat $CG/memory.current)
	nfg_log "memory.current $m0 -> $m1 for $n entries"
	# 64 bytes each; per-CPU charge batches blur the figure by up to 256 KiB
	nfg_assert_ge $((m1 - m0)) $((n * 32)) "memory.current growth for $n entries"
	nfg_assert_ok "flush" nfg_in nfg-tenant nfguard syncookie allowlist flush
	uncharged() { [ "$(cat $CG/memory.current)" -le $((m0 + 262144)) ]; }
	nfg_wait_until 30 uncharged || nfg_fail "memory.current after flush: $(cat $CG/memory.current) (before: $m0)"
	# memory.max enforced: 128 KiB of room refuses most of the entries
	echo $(($(cat $CG/memory.current) + 131072)) >$CG/memory.max || nfg_fail "memory.max"
	nfg_assert_fail "restore $n entries above memory.max" nfg_in nfg-tenant nfguard syncookie allowlist restore -f "$f"
	nfg_in nfg-tenant cat /proc/net/stat/nfguard_syncookie >"$NFG_WORK/tenant" || nfg_fail "proc"
	nfg_log "under memory.max $(cat $CG/memory.max): $(nfg_kv "$NFG_WORK/tenant" allowlist_entries) entries"
	nfg_assert_le "$(nfg_kv "$NFG_WORK/tenant" allowlist_entries)" $((n / 2)) "entries admitted under memory.max"
	nfg_assert_le "$(cat $CG/memory.current)" "$(cat $CG/memory.max)" "memory.current under memory.max"
	echo max >$CG/memory.max || nfg_fail "memory.max"
	ip netns del nfg-tenant || nfg_fail "netns del"
	back() { [ "$(live)" = "$l0" ]; }
	nfg_wait_until 30 back || nfg_fail "live objects after the tenant's netns went: $(live) (before: $l0)"
}

prefix() {
	local fam dst long short e1 s1 in1 e2 s2 in2 bits c0 h0
	nfg_log "== the prefix length is part of the allowlist key"
	sc allowlist flush >/dev/null || nfg_fail "flush"
	for fam in 4 6; do
		if [ $fam = 4 ]; then
			dst=$NFG_S4 long=24 short=16 bits=32
			e1=10.1.0.0/24 s1=10.1.99.9 in1=10.1.0.77 e2=10.2.0.0/16 s2=10.2.0.9 in2=10.2.200.1
		else
			dst=$NFG_S6 long=64 short=48 bits=128
			e1=fd00:31::/64 s1=fd00:31:0:99::9 in1=fd00:31::77 e2=fd00:32::/48 s2=fd00:32::9 in2=fd00:32:0:200::1
		fi
		nfg_ipt "$NFG_NS_R" legacy $fam -t raw -A PREROUTING -i eth0 -p tcp -d "$dst" --dport 5010 \
			-j SYNCOOKIE --allowlist-mask $long || nfg_fail "rule /$long"
		nfg_ipt "$NFG_NS_R" legacy $fam -t raw -A PREROUTING -i eth0 -p tcp -d "$dst" --dport 5011 \
			-j SYNCOOKIE --allowlist-mask $short || nfg_fail "rule /$short"
		sc allowlist add $e1 >/dev/null && sc allowlist add $e2 >/dev/null || nfg_fail "allowlist add"
		snap
		c0=$(stat syn_seen) h0=$(stat allowlist_hit)
		# $e1 (a /$long) is not the /$short around it, and $e2 (a /$short) not the /$long in it
		nfg_client nfg-tcpflood -c 1 "$dst" 5011 S $s1/$bits >/dev/null || nfg_fail "SYN"
		nfg_client nfg-tcpflood -c 1 "$dst" 5010 S $s2/$bits >/dev/null || nfg_fail "SYN"
		seen() { snap; [ $(($(stat syn_seen) - c0 + $(stat allowlist_hit) - h0)) -ge "$1" ]; }
		nfg_wait_until 30 seen 2 || nfg_fail "IPv$fam: 2 SYNs sent, none counted"
		nfg_assert_eq 0 $(($(stat allowlist_hit) - h0)) "IPv$fam: SYNs passed by another prefix length's entry"
		nfg_assert_eq 2 $(($(stat syn_seen) - c0)) "IPv$fam: SYNs answered with a cookie"
		# each entry still serves the rule of its own prefix length
		nfg_client nfg-tcpflood -c 1 "$dst" 5010 S $in1/$bits >/dev/null || nfg_fail "SYN"
		nfg_client nfg-tcpflood -c 1 "$dst" 5011 S $in2/$bits >/dev/null || nfg_fail "SYN"
		nfg_wait_until 30 seen 4 || nfg_fail "IPv$fam: 4 SYNs sent, $(($(stat syn_seen) - c0 + $(stat allowlist_hit) - h0)) counted"
		nfg_assert_eq 2 $(($(stat allowlist_hit) - h0)) "IPv$fam: SYNs passed by their own prefix's entry"
	done
}

xfrm6() {
	local c0 i0 spi
	nfg_log "== an IPv6 SYN-ACK sent by the routed path follows the IPsec policy"
	# ESP (null cipher, transport mode) between the client and the router's
	# own address, required both ways: a SYN-ACK in clear is dropped by the
	# client's inbound policy
	for ns in "$NFG_NS_C" "$NFG_NS_R"; do
		ip -n "$ns" -batch - <<-EOF || nfg_fail "xfrm setup in $ns"
			xfrm state add src $NFG_C6 dst $NFG_RC6 proto esp spi 0x1001 mode transport enc cipher_null ""
			xfrm state add src $NFG_RC6 dst $NFG_C6 proto esp spi 0x1002 mode transport enc cipher_null ""
		EOF
	done
	ip -n "$NFG_NS_C" -batch - <<-EOF || nfg_fail "client policies"
		xfrm policy add src $NFG_C6 dst $NFG_RC6 proto tcp dport 5020 dir out tmpl src $NFG_C6 dst $NFG_RC6 proto esp mode transport
		xfrm policy add src $NFG_RC6 dst $NFG_C6 proto tcp sport 5020 dir in tmpl src $NFG_RC6 dst $NFG_C6 proto esp mode transport
	EOF
	ip -n "$NFG_NS_R" -batch - <<-EOF || nfg_fail "router policies"
		xfrm policy add src $NFG_RC6 dst $NFG_C6 proto tcp sport 5020 dir out tmpl src $NFG_RC6 dst $NFG_C6 proto esp mode transport
		xfrm policy add src $NFG_C6 dst $NFG_RC6 proto tcp dport 5020 dir in tmpl src $NFG_C6 dst $NFG_RC6 proto esp mode transport
	EOF
	nfg_echo_server "$NFG_NS_R" 5020
	nfg_ipt "$NFG_NS_R" legacy 6 -t raw -A PREROUTING -i eth0 -p tcp -d $NFG_RC6 --dport 5020 \
		-j SYNCOOKIE --mode local || nfg_fail "rule"
	snap
	c0=$(stat cookie_sent) i0=$(stat sent_inplace)
	NFG_CONN_SEQ=100 # past the earlier parts' connections (subshells)
	# the SYN was decrypted: answered by the routed path, which must encrypt
	nfg_assert_ok "connection over ESP through the cookie" nfg_conn_open esp6 "$NFG_NS_C" $NFG_RC6 5020 15
	snap
	nfg_assert_ge "$(stat cookie_sent)" $((c0 + 1)) "cookie_sent"
	nfg_assert_eq 0 $(($(stat sent_inplace) - i0)) "sent_inplace (a decrypted SYN)"
	spi=$(nfg_router ip -s xfrm state get src $NFG_RC6 dst $NFG_C6 proto esp spi 0x1002)
	nfg_assert_match '[1-9][0-9]*\(packets\)' "$spi" "router's outbound SA used"
	nfg_conn_close esp6
}

secret() {
	local k=11223344556677880000000000000001 k2=a1a2a3a4a5a6a7a80000000000000002
	nfg_log "== the kernel's copies of the secret are freed with kfree_sensitive (zeroed)"
	[ -d $T/events ] || mount -t tracefs nodev $T || nfg_fail "tracefs"
	# the first 8 bytes of every object kfree_sensitive() frees: a secret's
	# object starts with its current key
	echo 'p:nfg_ks kfree_sensitive obj=+0(%di):x64' >>$T/kprobe_events || nfg_fail "kprobe"
	echo 1 >$T/events/kprobes/nfg_ks/enable || nfg_fail "enable kprobe"
	: >$T/trace
	freed() { grep -q "obj=$1" $T/trace; }
	# replaced: the secret set is replaced by a rotation, freed after a grace period
	sc secret set $k >/dev/null || nfg_fail "secret set"
	sc secret rotate >/dev/null || nfg_fail "secret rotate"
	nfg_wait_until 30 freed 0x8877665544332211 || nfg_fail "the replaced secret was not freed by kfree_sensitive"
	# netns exit (module unload frees each netns' state the same way)
	ip netns add nfg-sec || nfg_fail "netns"
	nfg_in nfg-sec nfguard syncookie secret set $k2 >/dev/null || nfg_fail "secret set in nfg-sec"
	ip netns del nfg-sec || nfg_fail "netns del"
	nfg_wait_until 30 freed 0xa8a7a6a5a4a3a2a1 || nfg_fail "the secret of a deleted netns was not freed by kfree_sensitive"
}

failed=()
for part in admission bogus lostsyn reflect idle memcg prefix xfrm6 secret; do
	t0=$SECONDS
	if ($part); then
		nfg_log "part $part: ok ($((SECONDS - t0)) s)"
	else
		nfg_log "part $part: FAILED ($((SECONDS - t0)) s)"
		failed+=("$part")
	fi
done
[ ${#failed[@]} -eq 0 ] || nfg_fail "failed parts: ${failed[*]}"
nfg_log "ok"
