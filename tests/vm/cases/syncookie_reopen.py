#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""No server connection without a live client's handshake (helper of
tests/vm/cases/syncookie_reopen.sh; runs in the client's netns, whose kernel
must not answer with a RST: the caller drops outgoing RSTs of SRC).

usage: syncookie_reopen.py SRC DST PORT SERVER_NS SCENARIO[,SCENARIO...] [-- CMD...]

Each scenario first completes a proxied handshake with timestamps (the
target allowlists SRC) and waits for the server's window, then aborts it
with a RST and waits until the server's socket is gone. Then:
  replay:  the handshake's cookie ACK is sent again, as a retransmission
           or a replay would (the client is gone);
  synpass: an in-window ACK that carries no valid cookie, then a SYN of
           the same ports with a new ISN (the source is allowlisted: the
           SYN passes the target), never followed by an ACK.
Neither may leave a connection ESTABLISHED at the server for SRC's port
(checked for 4 s). synpass: the server's own SYN-ACK (window > 0) must
reach the client: the SYN got a plain connection, not a proxied one.
Scenarios run in order, each after CMD (an allowlist flush: each handshake
takes the cookie path) and from a new source port (one python: scapy's
import is the expensive part). Prints "ok SCENARIO" or a reason per
scenario; exits 1 if any failed.
"""
import random
import subprocess
import sys
import time

# scapy imports cryptography (for TLS/IPsec layers, unused here) only to
# learn whether it is there: a quarter of the import time of the layers
# below in a TCG guest (11.0 -> 8.2 s, 6.12). Blocked: scapy takes it as
# missing.
sys.modules["cryptography"] = None
from scapy.config import conf
from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6
from scapy.sendrecv import AsyncSniffer, send

conf.verb = 0


def opt(pkt, name):
    for o in pkt[TCP].options:
        if o[0] == name:
            return o[1]
    return None


def wait_for(got, pred, secs):
    deadline = time.time() + secs
    while time.time() < deadline:
        for p in list(got):
            if pred(p):
                return p
        time.sleep(0.1)
    return None


def server_established(sns, src, sport):
    out = subprocess.run(["ip", "netns", "exec", sns, "ss", "-Htn", "state", "established"],
                         capture_output=True, text=True, check=True).stdout
    # a dual-stack listener shows an IPv4 peer as [::ffff:A]:P
    ends = ("%s:%d" % (src, sport), "%s]:%d" % (src, sport))
    return any(w.endswith(ends) for line in out.splitlines() for w in line.split())


def main():
    cmd = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    failed = 0
    for scenario in sys.argv[5].split(","):
        if cmd and subprocess.run(cmd).returncode != 0:
            print("%s: %s failed" % (scenario, " ".join(cmd)))
            failed += 1
            continue
        failed += one(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], scenario)
    return 1 if failed else 0


def one(src, dst, dport, sns, scenario):
    ip = IPv6(src=src, dst=dst) if ":" in dst else IP(src=src, dst=dst)
    sport = random.randint(20000, 60000)
    seq = random.randint(1, 2**31)

    def ours(p):
        return TCP in p and p[TCP].sport == dport and p[TCP].dport == sport

    got = []
    sn = AsyncSniffer(iface="eth0", lfilter=ours, prn=got.append, store=False)
    sn.start()
    time.sleep(0.5)
    try:
        return run(ip, src, dport, sns, scenario, sport, seq, got)
    finally:
        sn.stop()


def run(ip, src, dport, sns, scenario, sport, seq, got):
    opts = [("MSS", 1400), ("SAckOK", b""), ("Timestamp", (1000, 0)), ("NOP", None), ("WScale", 7)]
    send(ip / TCP(sport=sport, dport=dport, flags="S", seq=seq, window=64240, options=opts))
    synack = wait_for(got, lambda p: p[TCP].flags == "SA", 10)
    if synack is None:
        print("%s: no SYN-ACK" % scenario)
        return 1
    t = synack[TCP]
    tsopt = [("NOP", None), ("NOP", None), ("Timestamp", (1001, opt(synack, "Timestamp")[0]))]
    ack = ip / TCP(sport=sport, dport=dport, flags="A", seq=seq + 1, ack=t.seq + 1, window=502,
                   options=tsopt)
    send(ack)
    update = wait_for(got, lambda p: p[TCP].flags == "A" and p[TCP].window > 0 and
                      p[TCP].seq == t.seq + 1, 15)
    if update is None:
        print("%s: no window update after the cookie ACK" % scenario)
        return 1
    # the router's ACK to the server left before the client's window
    # update, but the server may take it in a moment later: wait for it
    deadline = time.time() + 15
    while not server_established(sns, src, sport) and time.time() < deadline:
        time.sleep(0.1)
    if not server_established(sns, src, sport):
        print("%s: the proxied handshake left no connection at the server" % scenario)
        return 1
    send(ip / TCP(sport=sport, dport=dport, flags="R", seq=seq + 1))
    deadline = time.time() + 10
    while server_established(sns, src, sport):
        if time.time() > deadline:
            print("%s: the server's connection survived the RST" % scenario)
            return 1
        time.sleep(0.2)

    del got[:]
    nseq = (seq + 1000000) % 2**32
    if scenario == "replay":
        send(ack)
    else:
        # in the old connection's window, acknowledging one byte less than
        # the cookie ACK did: no valid cookie
        send(ip / TCP(sport=sport, dport=dport, flags="A", seq=seq + 1, ack=t.seq, window=502,
                      options=tsopt))
        time.sleep(0.5)
        send(ip / TCP(sport=sport, dport=dport, flags="S", seq=nseq, window=64240, options=opts))
    errs = []
    deadline = time.time() + 4
    while time.time() < deadline:
        if server_established(sns, src, sport):
            errs.append("connection ESTABLISHED at the server without a handshake")
            break
        time.sleep(0.2)
    if scenario == "synpass":
        plain = wait_for(got, lambda p: p[TCP].flags == "SA" and p[TCP].ack == nseq + 1 and
                         p[TCP].window > 0, 10)
        if plain is None:
            errs.append("the server's own SYN-ACK did not reach the client")
        send(ip / TCP(sport=sport, dport=dport, flags="R", seq=nseq + 1))
    if errs:
        print("%s: %s" % (scenario, "; ".join(errs)))
        return 1
    print("ok", scenario)
    return 0


if __name__ == "__main__":
    sys.exit(main())
