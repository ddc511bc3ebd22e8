#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Spoofed-source TCP flood for tests/vm/cases/syncookie_*.sh (IPv6, which
hping3 cannot send; IPv4 floods use hping3 --rand-source).

usage: syncookie_flood.py DST PORT S|A PREFIX COUNT
Sends COUNT SYNs (S) or bare ACKs (A) with random sequence numbers and
ports from random sources inside the /64 PREFIX (e.g. fd00:1::), through
the kernel's routing (L3 socket), as fast as it can. COUNT 0: until killed,
in batches of 200 (one process: importing scapy costs 10-20 s of a TCG
guest's only host CPU, so a flood must not restart it).
"""
import random
import sys

from scapy.all import IPv6, TCP, conf, send

conf.verb = 0


def main():
    dst, port, flags, prefix, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    while True:
        pkts = []
        for _ in range(count or 200):
            src = prefix + ":".join("%x" % random.randint(1, 0xffff) for _ in range(4))
            pkts.append(IPv6(src=src, dst=dst) /
                        TCP(sport=random.randint(1024, 65535), dport=port, flags=flags,
                            seq=random.randint(0, 2**32 - 1),
                            ack=random.randint(0, 2**32 - 1) if flags == "A" else 0))
        send(pkts)
        if count:
            return 0


if __name__ == "__main__":
    sys.exit(main())
