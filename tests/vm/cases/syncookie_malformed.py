#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Malformed TCP packets for tests/vm/cases/syncookie_malformed.sh.

usage: syncookie_malformed.py SRC DST PORT [martian]
Sends, once each, every malformed case of the SYNCOOKIE man page that
applies to the family of DST and prints how many it sent. Each must be
dropped and counted as "malformed" by the target. With "martian": SYNs
from multicast/broadcast/loopback sources (IPv4) or to a multicast group (IPv6).
"""
import sys

# scapy imports cryptography (for TLS/IPsec layers, unused here) only to
# learn whether it is there: a quarter of the import time of the layers
# below in a TCG guest (11.0 -> 8.2 s, 6.12). Blocked: scapy takes it as
# missing.
sys.modules["cryptography"] = None

# Only the layers used (scapy.all: ~3x the import time, 10-20 s under TCG).
from scapy.config import conf
from scapy.layers.inet import IP, TCP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrDestOpt
from scapy.packet import Raw
from scapy.sendrecv import send

conf.verb = 0


def martians(src, dst, port):
    """SYNs no host sends: IPv4 from multicast, broadcast and loopback
    sources (over Ethernet); IPv6
    to a multicast group (ipv6_rcv drops multicast sources before any
    hook). A cookie SYN-ACK would go to a group or the whole link."""
    t = dict(sport=40002, dport=port, seq=1000, flags="S")
    if ":" in dst:
        return [IPv6(src=src, dst="ff0e::1") / TCP(**t)]
    return [IP(src="224.0.0.5", dst=dst) / TCP(**t),
            IP(src="255.255.255.255", dst=dst) / TCP(**t),
            IP(src="239.1.2.3", dst=dst) / TCP(**t),
            IP(src="127.0.0.9", dst=dst) / TCP(**t)]


def main():
    src, dst, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if len(sys.argv) > 4 and sys.argv[4] == "martian":
        pkts = martians(src, dst, port)
        for p in pkts:
            send(p)
        print(len(pkts))
        return 0
    v6 = ":" in dst
    ip = IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst)
    t = dict(sport=40001, dport=port, seq=1000)
    pkts = [
        ip / TCP(flags="SF", **t),                      # SYN+FIN
        ip / TCP(flags="SR", **t),                      # SYN+RST
        ip / TCP(flags="S", **t) / b"payload",          # SYN with data
        ip / TCP(flags="S", dataofs=4, **t),            # data offset < 5
        ip / TCP(flags="S", dataofs=15, **t),           # data offset past the packet
        # timestamp option cut short (length 10, 4 bytes left)
        ip / TCP(flags="S", dataofs=6, **t) / Raw(b"\x08\x0a\x00\x00"),
        # option length 0
        ip / TCP(flags="S", dataofs=6, **t) / Raw(b"\x02\x00\x00\x00"),
        # overlong: second option claims 40 bytes
        ip / TCP(flags="S", dataofs=7, **t) / Raw(b"\x02\x04\x05\xb4\x1e\x28\x00\x00"),
        # MSS option with length 3
        ip / TCP(flags="S", dataofs=6, **t) / Raw(b"\x02\x03\x05\x01"),
    ]
    if v6:
        pkts.append(IPv6(src=src, dst=dst) / IPv6ExtHdrDestOpt() / TCP(flags="S", **t))
    else:
        frag = IP(src=src, dst=dst, flags="MF", id=77) / TCP(flags="S", **t)
        pkts.append(frag)
    for p in pkts:
        send(p)
    print(len(pkts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
