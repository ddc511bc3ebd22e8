#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Crafted TCP handshake against a SYNCOOKIE-protected listener (helper of
tests/vm/cases/syncookie_*.sh; runs in the client's netns, whose kernel
must not answer the SYN-ACK with a RST: the caller drops outgoing RSTs).

usage: syncookie_handshake.py SRC DST PORT VARIANT EXPECT_MSS [local|proxy]
  VARIANT: full | nots | nosack | nows | mss536 | ipopt (IPv4: full, the SYN
           with IP options, which SYNCOOKIE answers by the routed path) |
           badecho (local mode: full, but the ACKs echo a timestamp whose
           high bits are not the SYN-ACK's; the kernel still accepts the
           cookie, the target must not allowlist the source)
  EXPECT_MSS: the MSS option the SYN-ACK must carry (the rule's --mss)
  mode: the rule's --mode (default local)

Sends a SYN with the variant's options, checks the SYN-ACK (MSS, and that
window scaling / SACK / timestamps are offered exactly when they can be
remembered: local mode only together with timestamps, proxy mode whenever
the client offers them; proxy mode's SYN-ACK offers a zero window),
completes the handshake with the cookie (proxy mode: then waits for the
window the server's connection opens), sends an HTTP request and checks
the server acknowledges it (a socket exists) and answers with data.
Prints "ok VARIANT" or a reason and exits 1.
"""
import random
import sys
import time

# scapy imports cryptography (for TLS/IPsec layers, unused here) only to
# learn whether it is there: a quarter of the import time of the layers
# below in a TCG guest (11.0 -> 8.2 s, 6.12). Blocked: scapy takes it as
# missing.
sys.modules["cryptography"] = None

# Only the layers used: scapy.all loads every layer, ~3x the import time
# (10-20 s of a TCG guest's CPU).
from scapy.config import conf
from scapy.layers.inet import IP, TCP, IPOption_NOP
from scapy.layers.inet6 import IPv6
from scapy.sendrecv import AsyncSniffer, send

conf.verb = 0


def opt(pkt, name):
    for o in pkt[TCP].options:
        if o[0] == name:
            return o[1]
    return None


def main():
    src, dst, dport, variant, expect_mss = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                                           sys.argv[4], int(sys.argv[5]))
    proxy = len(sys.argv) > 6 and sys.argv[6] == "proxy"
    v6 = ":" in dst
    ts = variant != "nots"
    sack = variant != "nosack"
    ws = variant != "nows"
    mss = 536 if variant == "mss536" else 1460
    opts = [("MSS", mss)]
    if sack:
        opts.append(("SAckOK", b""))
    if ts:
        opts.append(("Timestamp", (12345, 0)))
    if ws:
        opts += [("NOP", None), ("WScale", 7)]
    sport = random.randint(20000, 60000)
    ip = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst)
    seq = random.randint(1, 2**31)

    def ours(p):
        return TCP in p and p[TCP].sport == dport and p[TCP].dport == sport

    got = []
    sn = AsyncSniffer(iface="eth0", lfilter=ours, prn=got.append, store=False)
    sn.start()
    time.sleep(0.5)
    synip = ip
    if variant == "ipopt":
        synip = IP(src=src, dst=dst, options=[IPOption_NOP()] * 4)
    send(synip / TCP(sport=sport, dport=dport, flags="S", seq=seq, window=64240, options=opts))
    deadline = time.time() + 10
    synack = None
    while time.time() < deadline and synack is None:
        for p in list(got):
            if p[TCP].flags == "SA":
                synack = p
                break
        time.sleep(0.1)
    if synack is None:
        sn.stop()
        print("no SYN-ACK for", variant)
        return 1
    t = synack[TCP]
    errs = []
    if t.ack != seq + 1:
        errs.append("SYN-ACK acks %d, not %d" % (t.ack, seq + 1))
    if opt(synack, "MSS") != expect_mss:
        errs.append("SYN-ACK MSS %s, expected %d" % (opt(synack, "MSS"), expect_mss))
    has_ts = opt(synack, "Timestamp") is not None
    has_ws = opt(synack, "WScale") is not None
    has_sack = opt(synack, "SAckOK") is not None
    if has_ts != ts:
        errs.append("SYN-ACK timestamp %s, client offered %s" % (has_ts, ts))
    want_ws, want_sack = (ws, sack) if proxy else (ts and ws, ts and sack)
    if has_ws != want_ws:
        errs.append("SYN-ACK window scale %s, expected %s" % (has_ws, want_ws))
    if has_sack != want_sack:
        errs.append("SYN-ACK SACK %s, expected %s" % (has_sack, want_sack))
    if proxy and t.window != 0:
        errs.append("SYN-ACK window %d, expected 0" % t.window)
    aopts = []
    win = 502 if has_ws else 64000  # about 64 KB either way
    if has_ts:
        echo = opt(synack, "Timestamp")[0]
        if variant == "badecho":
            echo ^= 0x40000000  # the low bits (the options) intact
        aopts = [("NOP", None), ("NOP", None), ("Timestamp", (12346, echo))]
    send(ip / TCP(sport=sport, dport=dport, flags="A", seq=seq + 1, ack=t.seq + 1, window=win, options=aopts))
    if proxy:
        # the server's connection opens the window
        update = None
        deadline = time.time() + 15
        while time.time() < deadline and update is None:
            for p in list(got):
                if p[TCP].flags == "A" and p[TCP].window > 0 and p[TCP].seq == t.seq + 1:
                    update = p
                    break
            time.sleep(0.1)
        if update is None:
            sn.stop()
            print("%s: no window update after the cookie ACK" % variant)
            return 1
        if has_ts and opt(update, "Timestamp") is not None:
            aopts = [("NOP", None), ("NOP", None), ("Timestamp", (12347, opt(update, "Timestamp")[0]))]
    req = b"GET /small HTTP/1.0\r\n\r\n"
    send(ip / TCP(sport=sport, dport=dport, flags="PA", seq=seq + 1, ack=t.seq + 1, window=win, options=aopts) / req)
    acked = data = False
    deadline = time.time() + 15
    while time.time() < deadline and not (acked and data):
        for p in list(got):
            if p[TCP].ack == seq + 1 + len(req):
                acked = True
            if len(p[TCP].payload) and bytes(p[TCP].payload).startswith(b"HTTP/1."):
                data = True
            if p[TCP].flags & 0x04:
                errs.append("server sent RST")
                deadline = 0
                break
        time.sleep(0.1)
    sn.stop()
    if not acked:
        errs.append("request not acknowledged (no socket from the cookie ACK)")
    if not data:
        errs.append("no HTTP answer")
    send(ip / TCP(sport=sport, dport=dport, flags="R", seq=seq + 1 + len(req)))
    if errs:
        print("%s: %s" % (variant, "; ".join(sorted(set(errs)))))
        return 1
    print("ok", variant)
    return 0


if __name__ == "__main__":
    sys.exit(main())
