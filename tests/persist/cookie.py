#!/usr/bin/python3
# The SYN-ACK sequence number (SYNCOOKIE's cookie) that each of several
# network namespaces answers to one and the same SYN.
#
# usage: cookie.py NS:IFACE:DSTMAC:SRC:DST ...   (port 80, source port 40000, ISN 1000)
#
# One line per argument: "NS SEQ" (SEQ "none" when no SYN-ACK came within 5 s).
# The cookie is a keyed hash of the flow, the ISN and a coarse clock: two
# namespaces answer the same cookie only when they hold the same secret.
# One python for all (scapy's import is the expensive part): each socket is
# opened inside its namespace (setns), then used from here.
import ctypes
import os
import sys

from scapy.config import conf
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


def enter(ns):
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        sys.exit("setns %s: errno %d" % (ns, ctypes.get_errno()))
    os.close(fd)


conf.verb = 0
socks = []
for arg in sys.argv[1:]:
    ns, iface, mac, src, dst = arg.split(":", 4)
    mac = mac.replace("-", ":")
    enter(ns)
    socks.append((ns, conf.L2socket(iface=iface), iface, mac, src, dst))
for ns, s, iface, mac, src, dst in socks:
    syn = Ether(dst=mac) / IP(src=src, dst=dst) / TCP(sport=40000, dport=80, flags="S", seq=1000,
                                                      options=[("MSS", 1460)])
    ans = s.sr1(syn, timeout=5)
    if ans is not None and TCP in ans and ans[TCP].flags & 0x12 == 0x12:
        print(ns, ans[TCP].seq)
    else:
        print(ns, "none")
    sys.stdout.flush()
