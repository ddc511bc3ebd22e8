#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Spoofed SYNs whose cookie SYN-ACK would be a reflection (helper of
tests/vm/cases/syncookie_hardening.sh; runs in the client's netns).

usage: syncookie_reflect.py IFACE DST_MAC DST PORT ETHSRC,IPSRC,IPOPT...

Sends one IPv4 TCP SYN to DST:PORT per ETHSRC,IPSRC,IPOPT triple, in an
Ethernet frame to DST_MAC from ETHSRC ("-": IFACE's own address), from the
IPv4 address IPSRC, with four NOP IP options when IPOPT is 1 (which makes
SYNCOOKIE answer by the routed path). Built by hand on an AF_PACKET socket:
no scapy, whose import costs seconds of a TCG guest's CPU.
"""
import random
import socket
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def mac(text):
    return bytes(int(x, 16) for x in text.split(":"))


def syn(src, dst, dport, ipopt):
    opts = b"\x01" * 4 if ipopt else b""
    tcp = struct.pack("!HHIIBBHHH", random.randint(20000, 60000), dport,
                      random.randint(1, 2**31), 0, 5 << 4, 0x02, 64240, 0, 0)
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    tcp = tcp[:16] + struct.pack("!H", csum(s + d + struct.pack("!BBH", 0, 6, len(tcp)) + tcp)) + tcp[18:]
    ihl = 5 + len(opts) // 4
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(tcp), 1, 0x4000, 64, 6, 0, s, d) + opts
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return ip + tcp


def main():
    if len(sys.argv) < 6:
        print(__doc__.strip().splitlines()[3])
        return 2
    iface, dmac, dst, port = sys.argv[1], mac(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    sk = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sk.bind((iface, 0))
    own = sk.getsockname()[4][:6]
    for spec in sys.argv[5:]:
        esrc, isrc, ipopt = spec.split(",")
        esrc = own if esrc == "-" else mac(esrc)
        sk.send(dmac + esrc + b"\x08\x00" + syn(isrc, dst, port, ipopt == "1"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
