#!/bin/bash
# nfg-case-timeout: 1800
# SYNCOOKIE bench (issue 9, "Bench"; report only). One boot, four reports:
#
#   syncookie-syn   per-SYN cost of a spoofed SYN flood (random sources in
#                   100.0.0.0/8, random ports, the options a Linux client
#                   sends: MSS, SACK-permitted, timestamps, window scale) to
#                   port $NFB_DPORT, as overhead above the raw-table DROP floor
#                   of the same round; rounds alternate:
#     raw-drop          iptables-legacy raw PREROUTING -i rx0 -j DROP (floor)
#     syncookie         one rule, the man page's local web server ruleset:
#                       raw PREROUTING -p tcp --dport P -j SYNCOOKIE --mode local
#                       --sack-perm --timestamp (every SYN rewritten in place
#                       into its cookie SYN-ACK and sent back out rx0, which
#                       the check proves with the sent_inplace counter)
#     syncookie-ct      the same on a stateful host: plus filter INPUT
#                       -m conntrack --ctstate INVALID -j DROP, so conntrack's
#                       hooks are active (the SYN-ACK is untracked)
#     syncookie-proxy   --mode proxy, when this build has it (probed at start;
#                       the report says when it was not there)
#     synproxy          SYNPROXY's documented ruleset: raw CT --notrack on SYNs,
#                       INPUT -m conntrack --ctstate INVALID,UNTRACKED -j SYNPROXY
#                       --sack-perm --timestamp --wscale 7 --mss 1460, INPUT
#                       --ctstate INVALID -j DROP, nf_conntrack_tcp_loose=0
#     listener-cookies  no rules: a listener on the port and the kernel's own
#                       syncookies (tcp_syncookies=1, the default: cookies once
#                       the SYN queue is full, which the flood does at once)
#                   Goal: SYNCOOKIE's overhead at most half of SYNPROXY's.
#   syncookie-ack   the same rulesets against a bogus-ACK flood (random
#                   sources, sequence and acknowledgment numbers): SYNCOOKIE
#                   and SYNPROXY check the cookie and drop, the listener's TCP
#                   answers with a RST.
#   syncookie-handshake  valid handshakes per second: a client in nfb-gen keeps
#                   32 connects in flight, each from a new source address
#                   (10.98.0.0/16, never on the allowlist: the full cookie
#                   path) and closes each with a RST once connected; the server
#                   (nfb-rx) accepts and closes. Rate = the server's
#                   Tcp PassiveOpens per second; also with all the sources on
#                   the allowlist (syncookie-allowlisted: --allowlist-mask 16
#                   and one entry for 10.98.0.0/16). Client and server
#                   share the guest's vCPUs: the rates include the client.
#   syncookie-goals the ratios against the goal, per round and overall, from
#                   two estimators: pps (overhead = 1/pps - 1/pps_floor, paired
#                   per round) and the time in ip_rcv() per packet
#                   (function_graph, median per traced second, 3 rounds per
#                   flood): a guest that loses the host CPU to other guests
#                   reads low pps at random, while the median time per packet
#                   barely moves.
#
# Every ruleset's check proves it handled the packets as claimed (counters of
# SYNCOOKIE, of the SYNPROXY rule, or TCP's own), and that none reached TCP
# where the ruleset must stop them.
#
# SC_PARTS (environment, default "syn ack handshake"): the parts to run; the
# goals report needs syn and ack. tests/bench/run.sh passes only its NFB_*
# knobs into the guest: for one part, run a case script under build/ that
# exports SC_PARTS and execs this one (doc/TESTING.md, "SYNCOOKIE and RTCACHE
# on 7.3").
: "${NFB_ROUNDS:=5}"
: "${SC_PARTS:=syn ack handshake}"
part() { [[ " $SC_PARTS " == *" $1 "* ]]; }
for p in $SC_PARTS; do
	case $p in syn | ack | handshake) ;; *) echo "SC_PARTS: unknown part '$p'" >&2; exit 2 ;; esac
done
# shellcheck source=tests/bench/lib.sh
. "$NFG_TOP/tests/bench/lib.sh"
nfg_need nfguard conntrack

SC_HS_SECS=3     # measured seconds per handshake sample
SC_HS_WARMUP=1   # seconds of handshakes before a sample
SC_HS_INFLIGHT=32

nfb_init trafgen
nfg_load_modules xt_SYNCOOKIE
modprobe -a nf_conntrack xt_conntrack xt_CT ipt_SYNPROXY || nfg_fail "modprobe conntrack/CT/SYNPROXY"
port=$NFB_DPORT
other=1
[ "$NFB_CPU" = 1 ] && other=0

# ------------------------------------------------------------------ listener
# One listener for everything: the listener-cookies ruleset's flood target and
# the handshake server (accepts and closes). Its pid names nfb-rx for /proc reads.
srv=$NFG_WORK/srv.py
cat >"$srv" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen(1024)
while True:
    c, _ = s.accept()
    c.close()
EOF
nfg_bg "$NFB_NS_RX" taskset -c "$other" python3 "$srv" "$port"
srv_pid=$NFG_LAST_PID
nfg_wait_port "$NFB_NS_RX" "$port" tcp 300 "$srv_pid"
[ "$(nfb_rx sysctl -n net.ipv4.tcp_syncookies)" != 0 ] || nfg_fail "tcp_syncookies is 0 in nfb-rx"

statf=/proc/$srv_pid/net/stat/nfguard_syncookie
# stat NAME: a SYNCOOKIE counter of nfb-rx, without a fork
stat() {
	local k v
	while read -r k v; do
		[ "$k" = "$1" ] && { echo "$v"; return 0; }
	done <"$statf"
	nfg_fail "no counter $1 in $statf"
}

# ------------------------------------------------------------------ rulesets
raw() { nfb_rx iptables-legacy -w -t raw -A PREROUTING -i rx0 "$@"; }
sc_rule() { raw -p tcp --dport "$port" -j SYNCOOKIE "$@"; }
sc_mark() { SC_C0=$(stat cookie_sent) SC_P0=$(stat sent_inplace) SC_I0=$(stat ack_invalid) SC_V0=$(stat ack_valid) SC_H0=$(stat allowlist_hit); }
rs_drop() { raw -j DROP; }
rs_sc() { sc_mark && sc_rule --mode local --sack-perm --timestamp; }
rs_sc_ct() {
	rs_sc && nfb_rx iptables-legacy -w -A INPUT -i rx0 -m conntrack --ctstate INVALID -j DROP
}
rs_sc_proxy() { sc_mark && sc_rule --mode proxy --sack-perm --timestamp; }
rs_synproxy() {
	nfb_rx sysctl -qw net.netfilter.nf_conntrack_tcp_loose=0 >/dev/null &&
		raw -p tcp -m tcp --syn --dport "$port" -j CT --notrack &&
		nfb_rx iptables-legacy -w -A INPUT -i rx0 -p tcp -m tcp --dport "$port" \
			-m conntrack --ctstate INVALID,UNTRACKED \
			-j SYNPROXY --sack-perm --timestamp --wscale 7 --mss 1460 &&
		nfb_rx iptables-legacy -w -A INPUT -i rx0 -p tcp -m tcp --dport "$port" \
			-m conntrack --ctstate INVALID -j DROP
}
clr_synproxy() {
	nfb_clear_rules
	nfb_rx sysctl -qw net.netfilter.nf_conntrack_tcp_loose=1 >/dev/null
	nfb_rx conntrack -F >/dev/null 2>&1
	return 0
}
rs_none() { :; }

# Does this build have proxy mode? (checkentry refuses it until it exists)
have_proxy=0
if sc_rule --mode proxy --sack-perm --timestamp 2>"$NFG_WORK/proxy.err"; then
	have_proxy=1
else
	nfg_log "SYNCOOKIE --mode proxy not available: $(head -1 "$NFG_WORK/proxy.err")"
fi
nfb_clear_rules

# ------------------------------------------------------------------ checks
ge() { # ge WHAT VALUE MIN
	[ "$2" -ge "$3" ] 2>/dev/null && return 0
	nfg_log "check: $1 is $2, expected >= $3"
	return 1
}
no_l4() { [ "$NFB_L4" = 0 ] && return 0; nfg_log "check: $NFB_L4 packets reached TCP"; return 1; }
chk_drop() {
	ge "raw DROP count" "$(nfb_ipt_counter legacy 4 raw PREROUTING 1)" "$NFB_PKTS" && no_l4
}
# every SYN of the sample was answered with a cookie, in place, none
# reached TCP
chk_sc_syn() {
	ge "cookie_sent" $(($(stat cookie_sent) - SC_C0)) "$NFB_PKTS" &&
		ge "sent_inplace" $(($(stat sent_inplace) - SC_P0)) "$NFB_PKTS" && no_l4
}
# every bogus ACK was checked and dropped, none reached TCP
chk_sc_ack() {
	ge "ack_invalid" $(($(stat ack_invalid) - SC_I0)) "$NFB_PKTS" && no_l4
}
# the SYNPROXY rule saw every packet (SYN: untracked; ACK: invalid) and
# consumed it: nothing reached TCP
chk_synproxy() {
	ge "SYNPROXY rule count" "$(nfb_ipt_counter legacy 4 filter INPUT 1)" "$NFB_PKTS" && no_l4
}
# the stack answers: (nearly) every packet reached TCP
chk_listener() { ge "reached L4" "$NFB_L4" $((NFB_PKTS * 95 / 100)); }

# ------------------------------------------------------------------ floods
# tg_cfg SYN|ACK: trafgen packet, random source in 100.0.0.0/8 (unicast, routed
# like any Internet source: the default route is dummy0), random port
tg_cfg() {
	local mac
	mac=$(echo "$NFB_RXMAC" | sed 's/^/0x/; s/:/, 0x/g')
	if [ "$1" = SYN ]; then
		cat <<-EOF
			{
			  $mac, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
			  0x45, 0x00, const16(60), drnd(2), 0x40, 0x00, 64, 6, csumip(14, 33),
			  100, drnd(), drnd(), drnd(), 10, 99, 0, 1,
			  drnd(2), const16($port), drnd(4), const32(0), 0xa0, 0x02, const16(64240),
			  csumtcp(14, 34), const16(0),
			  0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, drnd(4), const32(0),
			  0x01, 0x03, 0x03, 0x07
			}
		EOF
	else
		cat <<-EOF
			{
			  $mac, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
			  0x45, 0x00, const16(40), drnd(2), 0x40, 0x00, 64, 6, csumip(14, 33),
			  100, drnd(), drnd(), drnd(), 10, 99, 0, 1,
			  drnd(2), const16($port), drnd(4), drnd(4), 0x50, 0x10, const16(502),
			  csumtcp(14, 34), const16(0)
			}
		EOF
	fi
}

reg_flood() { # reg_flood CHECK_FN_FOR_SYNCOOKIE
	nfb_ruleset raw-drop rs_drop --floor --check chk_drop --desc "iptables-legacy raw PREROUTING -i rx0 -j DROP"
	nfb_ruleset syncookie rs_sc --check "$1" \
		--desc "raw PREROUTING -p tcp --dport $port -j SYNCOOKIE --mode local --sack-perm --timestamp"
	nfb_ruleset syncookie-ct rs_sc_ct --clear clr_synproxy --check "$1" \
		--desc "the same, conntrack active (filter INPUT -m conntrack --ctstate INVALID -j DROP)"
	if [ $have_proxy = 1 ]; then
		nfb_ruleset syncookie-proxy rs_sc_proxy --clear clr_synproxy --check "$1" \
			--desc "raw PREROUTING -p tcp --dport $port -j SYNCOOKIE --mode proxy --sack-perm --timestamp"
	fi
	nfb_ruleset synproxy rs_synproxy --clear clr_synproxy --check chk_synproxy \
		--desc "SYNPROXY's documented ruleset: raw CT --notrack, INPUT SYNPROXY on INVALID,UNTRACKED, INPUT DROP INVALID, tcp_loose=0"
	nfb_ruleset listener-cookies rs_none --check chk_listener \
		--desc "no rules: listener, kernel syncookies (tcp_syncookies=1)"
}
ratios=(--ratio syncookie/synproxy --ratio syncookie-ct/synproxy --ratio syncookie/listener-cookies
	--ratio synproxy/listener-cookies)
[ $have_proxy = 1 ] && ratios+=(--ratio syncookie-proxy/synproxy)

# ------------------------------------------------------------------ time per packet
# Second estimator, robust to a loaded host: under TCG a guest descheduled by
# the host loses wall time, which lowers pps at random. The time spent in
# ip_rcv() per packet (function_graph on that one function, on CPU $NFB_CPU:
# the whole L3/L4 receive path, hooks, the SYN-ACK sent or TCP, all nested in
# it) is read per packet, and its median is untouched by the rare packet
# during which the guest lost the host CPU. Overhead = median(ruleset) -
# median(floor), per round, median over rounds.
TR=/sys/kernel/tracing
TR_SECS=1 TR_ROUNDS=3
[ -e $TR/trace ] || mount -t tracefs nodev $TR || nfg_fail "mount tracefs on $TR"
grep -qx ip_rcv $TR/available_filter_functions || nfg_fail "ip_rcv is not in available_filter_functions"
trw() { echo "$2" >"$TR/$1" || nfg_fail "tracefs: '$2' > $1 failed"; }
trw tracing_on 0
trw current_tracer nop
nfg_on_exit "echo 0 > $TR/tracing_on; echo nop > $TR/current_tracer; echo > $TR/set_ftrace_filter"
trw set_ftrace_filter ip_rcv
trw buffer_size_kb 8192
trw options/overwrite 0
trw current_tracer function_graph
rx_pkts() { # rx0's received packets (builtins only)
	local l a
	while read -r l; do
		case $l in rx0:*) read -ra a <<<"${l#rx0:}"; echo "${a[1]}"; return 0 ;; esac
	done <"/proc/$srv_pid/net/dev"
}
rcv_flowing() { [ "$(rx_pkts)" -gt $((RCV_P0 + 1000)) ]; }
# rcv_time FLOOD NAME:APPLY:CLEAR...: TR_ROUNDS rounds over the rulesets, one
# traced TR_SECS window each while the generator runs; writes
# $NFG_WORK/rcv.FLOOD.NAME.ROUND (one duration in us per line)
rcv_time() {
	local flood=$1 r e name apply clear
	shift
	for ((r = 1; r <= TR_ROUNDS; r++)); do
		for e; do
			IFS=: read -r name apply clear <<<"$e"
			"$apply" || nfg_fail "applying $name"
			RCV_P0=$(rx_pkts)
			nfb_traffic_start
			nfg_wait_until 60 rcv_flowing || nfg_fail "no traffic for $name"
			trw trace ''
			trw tracing_on 1
			nfg_sleep "$TR_SECS"
			trw tracing_on 0
			nfb_traffic_stop
			grep -o '[0-9.]* us *| *ip_rcv' "$TR/per_cpu/cpu$NFB_CPU/trace" | awk '{ print $1 }' \
				>"$NFG_WORK/rcv.$flood.$name.$r"
			"$clear" || nfg_fail "clearing $name"
			nfg_log "ip_rcv timing $flood round $r $name: $(wc -l <"$NFG_WORK/rcv.$flood.$name.$r") packets"
		done
	done
	trw trace ''
}
rcv_sets=(raw-drop:rs_drop:nfb_clear_rules syncookie:rs_sc:nfb_clear_rules syncookie-ct:rs_sc_ct:clr_synproxy)
[ $have_proxy = 1 ] && rcv_sets+=(syncookie-proxy:rs_sc_proxy:clr_synproxy)
rcv_sets+=(synproxy:rs_synproxy:clr_synproxy listener-cookies:rs_none:nfb_clear_rules)

if part syn; then
	tg_cfg SYN >"$NFB_TGCFG"
	NFB_PKTDESC="TCP SYN with MSS/SACK/TS/WS options, random source in 100.0.0.0/8 and port, to $NFB_DST4:$port (trafgen over veth)"
	reg_flood chk_sc_syn
	nfb_run syncookie-syn "${ratios[@]}"
	syn_json=$NFB_OUT/syncookie-syn.json
	rcv_time syn "${rcv_sets[@]}"
fi

if part ack; then
	tg_cfg ACK >"$NFB_TGCFG"
	NFB_PKTDESC="TCP ACK (bogus cookie: random seq/ack), random source in 100.0.0.0/8 and port, to $NFB_DST4:$port (trafgen over veth)"
	reg_flood chk_sc_ack
	nfb_run syncookie-ack "${ratios[@]}"
	ack_json=$NFB_OUT/syncookie-ack.json
	rcv_time ack "${rcv_sets[@]}"
fi

# ------------------------------------------------------------------ goals
# (from both floods: only when both ran)
cat >"$NFG_WORK/goals.py" <<'EOF'
import json, statistics, sys
def line(name, val, unit, desc):
    print("%s\t%s\t%s\t%s" % (name, val, unit, desc))
for path, what in ((sys.argv[1], "SYN flood"), (sys.argv[2], "bogus-ACK flood")):
    doc = json.load(open(path))
    rs = {e["name"]: e for e in doc["rulesets"]}
    fl = rs[doc["floor"]]["max_pps"]
    tag = "syn" if what == "SYN flood" else "ack"
    cands = ["syncookie", "syncookie-ct"] + (["syncookie-proxy"] if sys.argv[3] == "1" else [])
    for a in cands:
        for b, goal in (("synproxy", 0.5), ("listener-cookies", None)):
            oa, ob = rs[a]["overhead_ns"], rs[b]["overhead_ns"]
            r = oa / ob if ob else float("inf")
            q = [x / y for x, y in zip(rs[a]["overhead_ns_rounds"], rs[b]["overhead_ns_rounds"]) if y > 0]
            best = (1 / rs[a]["max_pps"] - 1 / fl) / (1 / rs[b]["max_pps"] - 1 / fl)
            if goal is not None and tag == "syn":
                d = "**goal** %s: overhead %s / %s, medians %.0f / %.0f ns (goal <= %g): **%s**" % (
                    what, a, b, oa, ob, goal, "met" if r <= goal else "NOT met")
            else:
                d = "%s: overhead %s / %s, medians %.0f / %.0f ns" % (what, a, b, oa, ob)
            d += "; per-round ratios %s; from the best samples %.2f" % (" ".join("%.2f" % x for x in q), best)
            line("%s-%s-vs-%s" % (tag, a, b), "%.3f" % r, "x", d)
    for a in cands + ["synproxy", "listener-cookies"]:
        line("%s-overhead-%s" % (tag, a), "%.0f" % rs[a]["overhead_ns"], "ns", "%s: overhead of %s above the floor" % (what, a))
EOF
cat >"$NFG_WORK/rcv.py" <<'EOF'
import statistics, sys
work, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def line(name, val, unit, desc):
    print("%s\t%s\t%s\t%s" % (name, val, unit, desc))
for flood, what in (("syn", "SYN flood"), ("ack", "bogus-ACK flood")):
    med = {}
    for n in names:
        med[n] = []
        for r in range(1, rounds + 1):
            v = [float(x) for x in open("%s/rcv.%s.%s.%d" % (work, flood, n, r)).read().split()]
            if len(v) < 100:
                sys.exit("%s %s round %d: only %d packets timed" % (flood, n, r, len(v)))
            med[n].append(statistics.median(v))
    ov = {n: [a - b for a, b in zip(med[n], med["raw-drop"])] for n in names}
    for n in names:
        line("rcv-%s-%s" % (flood, n), "%.2f" % statistics.median(med[n]), "us",
             "%s: time in ip_rcv per packet, %s (median; per-round medians %s)"
             % (what, n, " ".join("%.2f" % x for x in med[n])))
    for n in names:
        if n != "raw-drop":
            line("rcv-%s-overhead-%s" % (flood, n), "%.2f" % statistics.median(ov[n]), "us",
                 "%s: ip_rcv overhead above the floor, %s (median of per-round differences)" % (what, n))
    for a in [n for n in names if n.startswith("syncookie")]:
        oa, ob = statistics.median(ov[a]), statistics.median(ov["synproxy"])
        r = oa / ob if ob > 0 else -1
        g = (" (goal <= 0.5): **%s**" % ("met" if 0 <= r <= 0.5 else "NOT met")) if flood == "syn" else ""
        line("rcv-%s-%s-vs-synproxy" % (flood, a), "%.3f" % r, "x",
             "%s%s: ip_rcv overhead %s / synproxy, %.2f / %.2f us%s"
             % ("**goal, ip_rcv estimator** " if flood == "syn" else "", what, a, oa, ob, g))
EOF
if part syn && part ack; then
	python3 "$NFG_WORK/goals.py" "$syn_json" "$ack_json" "$have_proxy" >"$NFG_WORK/goals.tsv" ||
		nfg_fail "goals summary failed"
	python3 "$NFG_WORK/rcv.py" "$NFG_WORK" "$TR_ROUNDS" "${rcv_sets[@]%%:*}" >>"$NFG_WORK/goals.tsv" ||
		nfg_fail "ip_rcv summary failed"
	while IFS=$'\t' read -r name val unit desc; do nfb_metric "$name" "$val" "$unit" "$desc"; done <"$NFG_WORK/goals.tsv"
	[ $have_proxy = 1 ] || nfb_metric proxy-mode-available 0 "" "SYNCOOKIE --mode proxy: not in this build (refused by checkentry), not measured"
	nfb_run syncookie-goals
fi

# ------------------------------------------------------------------ handshakes
part handshake || exit 0
# The client's sources: 10.98.0.0/16 is local to nfb-gen (AnyIP route: it can
# bind any address of it) and routed to it from nfb-rx.
ip -n "$NFB_NS_GEN" addr add 10.99.0.2/24 dev gen0 || nfg_fail "address on gen0"
ip -n "$NFB_NS_GEN" route add local 10.98.0.0/16 dev lo || nfg_fail "AnyIP route in nfb-gen"
ip -n "$NFB_NS_RX" route add 10.98.0.0/16 via 10.99.0.2 dev rx0 || nfg_fail "route to the clients in nfb-rx"
nfb_gen ping -c 1 -W 5 "$NFB_DST4" >/dev/null || nfg_fail "nfb-gen cannot reach $NFB_DST4"

cli=$NFG_WORK/hs.py
cat >"$cli" <<'EOF'
# usage: hs.py DST PORT START WARMUP SECS INFLIGHT SNMP NETSTAT
# Connects to DST:PORT with INFLIGHT connects in flight, each from the next
# address of 10.98.0.0/16 after index START, closes each with a RST once
# connected. After WARMUP s, counts for
# SECS s. Prints: elapsed passive_opens(delta of SNMP's Tcp PassiveOpens)
# connected failed next_index tsecr_rejected(delta of NETSTAT's
# TcpExtTSEcrRejected, -1 where the kernel has no such counter)
import errno, select, socket, struct, sys, time
dst, port, start, warm, secs, inflight, snmp, netstat = sys.argv[1:9]
port, warm, secs, inflight = int(port), float(warm), float(secs), int(inflight)
idx = int(start)
def counter(path, prefix, name):
    with open(path) as f:
        rows = [l.split() for l in f if l.startswith(prefix)]
    return int(rows[1][rows[0].index(name)]) if name in rows[0] else None
def popens():
    return counter(snmp, "Tcp:", "PassiveOpens")
def rejected():
    return counter(netstat, "TcpExt:", "TSEcrRejected")
def addr():
    global idx
    while True:
        idx = idx % 65534 + 1
        if idx & 255 not in (0, 255):
            return "10.98.%d.%d" % (idx >> 8, idx & 255)
ep = select.epoll()
socks = {}
ok = bad = 0
linger = struct.pack("ii", 1, 0)
def start_one():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
    s.setsockopt(socket.IPPROTO_IP, 24, 1)  # IP_BIND_ADDRESS_NO_PORT: port chosen by connect
    s.bind((addr(), 0))
    e = s.connect_ex((dst, port))
    if e not in (0, errno.EINPROGRESS):
        raise OSError(e, "connect")
    socks[s.fileno()] = s
    ep.register(s.fileno(), select.EPOLLOUT)
for _ in range(inflight):
    start_one()
t_start = time.monotonic()
phase, t0, p0, ok0 = 0, 0.0, 0, 0
while True:
    now = time.monotonic()
    if phase == 0 and now >= t_start + warm:
        phase, t0, p0, ok0, bad0, rej0 = 1, now, popens(), ok, bad, rejected()
    elif phase == 1 and now >= t0 + secs:
        rej = -1 if rej0 is None else rejected() - rej0
        print("%.4f %d %d %d %d %d" % (now - t0, popens() - p0, ok - ok0, bad - bad0, idx, rej))
        break
    for fd, _ in ep.poll(0.05):
        s = socks.pop(fd)
        ep.unregister(fd)
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
            ok += 1
        else:
            bad += 1
        s.close()
        start_one()
EOF

hs_next=1
hs_measure() { # one sample: HS_RATE (handshakes/s), HS_N, HS_OK, HS_REJ, ...
	local r
	r=$(nfb_gen taskset -c "$NFB_CPU" python3 "$cli" "$NFB_DST4" "$port" "$hs_next" \
		"$SC_HS_WARMUP" "$SC_HS_SECS" "$SC_HS_INFLIGHT" "/proc/$srv_pid/net/snmp" \
		"/proc/$srv_pid/net/netstat") ||
		nfg_fail "handshake client failed: $r"
	read -r HS_T HS_N HS_OK HS_BAD HS_IDX HS_REJ <<<"$r"
	[ -n "$HS_REJ" ] || nfg_fail "handshake client: no result ('$r')"
	hs_next=$HS_IDX
	HS_RATE=$(awk -v n="$HS_N" -v t="$HS_T" 'BEGIN { printf "%.0f", n / t }')
	HS_SAMPLE=$r
	HS_REJTXT="TSEcrRejected +$HS_REJ"
	[ "$HS_REJ" -ge 0 ] || HS_REJTXT="TSEcrRejected not counted by this kernel"
	[ "$HS_BAD" = 0 ] || nfg_fail "$HS_BAD connects failed in the sample ($r)"
}
# The sample of SYNPROXY's ruleset opened no server connection because the
# server dropped SYNPROXY's ACKs for their timestamp echo (7.x): the clients'
# handshakes completed through the SYNPROXY rule (its counter: SYN and ACK of
# each), the server's passive opens are 0 and its TcpExtTSEcrRejected grew.
# Anything else without handshakes is a failure.
hs_synproxy_blocked() {
	[ "$HS_N" = 0 ] && [ "$HS_OK" -gt 0 ] && [ "$HS_REJ" -gt 0 ] &&
		ge "SYNPROXY rule count" "$(nfb_ipt_counter legacy 4 filter INPUT 1)" $((2 * HS_OK))
}
# the server's connections still in SYN_RECV on the port (the blocked
# handshakes'); each next SYN-ACK of theirs is answered by the client's
# kernel with a RST once SYNPROXY's rules are gone
syn_recv_gone() {
	[ -z "$(nfb_rx ss -Htn state syn-recv "( sport = :$port )")" ]
}
hs_apply() { # hs_apply RULESET
	case $1 in
	listener) ;;
	syncookie)
		nfb_rx nfguard syncookie allowlist flush || nfg_fail "allowlist flush"
		rs_sc || nfg_fail "SYNCOOKIE rule"
		;;
	syncookie-allowlisted) # every client source on the allowlist: one /16 entry
		nfb_rx nfguard syncookie allowlist flush || nfg_fail "allowlist flush"
		sc_mark
		sc_rule --mode local --sack-perm --timestamp --allowlist-mask 16 || nfg_fail "SYNCOOKIE rule"
		nfb_rx nfguard syncookie allowlist add 10.98.0.0/16 || nfg_fail "allowlist add"
		;;
	syncookie-proxy)
		nfb_rx nfguard syncookie allowlist flush || nfg_fail "allowlist flush"
		rs_sc_proxy || nfg_fail "SYNCOOKIE proxy rule"
		;;
	synproxy) rs_synproxy || nfg_fail "SYNPROXY ruleset" ;;
	esac
}
# the handshakes took the path the ruleset is about
hs_check() { # hs_check RULESET
	local v h
	case $1 in
	syncookie | syncookie-proxy)
		v=$(($(stat ack_valid) - SC_V0))
		ge "ack_valid during the sample" "$v" "$HS_N" || nfg_fail "$1: handshakes did not take the cookie path"
		;;
	syncookie-allowlisted)
		h=$(($(stat allowlist_hit) - SC_H0)) v=$(($(stat ack_valid) - SC_V0))
		if ! ge "allowlist_hit during the sample" "$h" "$HS_N" || [ "$v" != 0 ]; then
			nfg_fail "$1: handshakes did not take the allowlist path (hit $h, ack_valid $v)"
		fi
		;;
	synproxy)
		ge "SYNPROXY rule count" "$(nfb_ipt_counter legacy 4 filter INPUT 1)" $((2 * HS_N)) ||
			nfg_fail "synproxy: the handshakes did not go through SYNPROXY"
		;;
	esac
}
hs_sets=(listener syncookie syncookie-allowlisted synproxy)
[ $have_proxy = 1 ] && hs_sets+=(syncookie-proxy)
declare -A hs_rates=()
hs_blocked='' # per blocked SYNPROXY sample: client connects:TSEcrRejected
nfb_clear_rules
hs_apply listener
hs_measure # warm-up, discarded
[ "$HS_N" -gt 0 ] || nfg_fail "listener: no handshake completed in the warm-up ($HS_SAMPLE)"
nfg_log "handshake warm-up: $HS_RATE/s"
for ((r = 1; r <= NFB_ROUNDS; r++)); do
	for n in "${hs_sets[@]}"; do
		hs_apply "$n"
		hs_measure
		if [ "$n" = synproxy ] && hs_synproxy_blocked; then
			clr_synproxy
			nfg_log "handshakes round $r/$NFB_ROUNDS synproxy: BLOCKED, $HS_OK client connects through SYNPROXY, 0 passive opens, server TcpExtTSEcrRejected +$HS_REJ in ${HS_T}s"
			hs_blocked+=" $HS_OK:$HS_REJ"
			nfg_wait_until 120 syn_recv_gone ||
				nfg_fail "the blocked handshakes' SYN_RECV connections at the server did not go"
			continue
		fi
		[ "$HS_N" -gt 0 ] || nfg_fail "$n: no handshake completed in the sample ($HS_SAMPLE; $HS_REJTXT)"
		hs_check "$n"
		case $n in synproxy | syncookie-proxy) clr_synproxy ;; *) nfb_clear_rules ;; esac
		hs_rates[$n]+=" $HS_RATE"
		nfg_log "handshakes round $r/$NFB_ROUNDS $n: $HS_RATE/s ($HS_N passive opens, $HS_OK client connects in ${HS_T}s, $HS_REJTXT)"
	done
done
# SYNPROXY blocked in some rounds but not in others: no honest rate either
if [ -n "$hs_blocked" ] && [ -n "${hs_rates[synproxy]:-}" ]; then
	nfg_fail "synproxy: handshakes blocked in some rounds (${hs_blocked# }) and not in others (${hs_rates[synproxy]# }/s)"
fi
if [ -n "$hs_blocked" ]; then # no rate for SYNPROXY: a finding instead
	keep=()
	for n in "${hs_sets[@]}"; do [ "$n" = synproxy ] || keep+=("$n"); done
	hs_sets=("${keep[@]}")
fi
python3 - <<EOF >"$NFG_WORK/hs.tsv" || nfg_fail "handshake summary failed"
import statistics
rates = {$(for n in "${hs_sets[@]}"; do printf '"%s": [%s], ' "$n" "$(v=${hs_rates[$n]# }; echo "${v// /,}")"; done)}
desc = {"listener": "no rules, listener (normal SYN queue)",
        "syncookie": "SYNCOOKIE --mode local, new source every connection (cookie path)",
        "syncookie-allowlisted": "SYNCOOKIE --mode local, source on the allowlist",
        "syncookie-proxy": "SYNCOOKIE --mode proxy, new source every connection",
        "synproxy": "SYNPROXY's documented ruleset"}
med = {k: statistics.median(v) for k, v in rates.items()}
for k, v in rates.items():
    print("hs-%s\t%.0f\thandshakes/s\t%s: median of %s" % (k, med[k], desc[k], " ".join("%d" % x for x in v)))
for k in rates:
    if k != "listener":
        print("hs-ratio-%s\t%.3f\tx\thandshake rate %s / listener" % (k, med[k] / med["listener"], k))
        print("hs-cost-%s\t%.1f\tus\t%s: cost per handshake above the listener's, 1/rate - 1/rate(listener)"
              % (k, 1e6 / med[k] - 1e6 / med["listener"], k))
EOF
while IFS=$'\t' read -r name val unit desc; do nfb_metric "$name" "$val" "$unit" "$desc"; done <"$NFG_WORK/hs.tsv"
if [ -n "$hs_blocked" ]; then
	read -ra blk <<<"$hs_blocked"
	nfb_metric hs-synproxy-blocked "${#blk[@]}" samples "**finding** SYNPROXY's documented ruleset completed no handshake at the server on this kernel (so no rate and no ratio): per sample (${SC_HS_SECS}s), client connects through the SYNPROXY rule : server TcpExtTSEcrRejected ${blk[*]}, 0 passive opens. nf_synproxy_core translates the timestamp echo of its ACK to the server twice; 7.x's tcp_check_req() drops an ACK echoing no TSval it sent, and these clients send nothing after connect"
fi
NFB_PKTDESC="handshakes"
nfb_run syncookie-handshake

