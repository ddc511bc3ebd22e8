#!/usr/bin/python3
"""Generate the torture frames (host side, at build time: scapy is slow to
start under TCG, so the guest only replays them with tests/torture/send.py).

  torture.py [--ext NAME]... [--conntrack] [--listed4 A --unlisted4 A --dst4 A ...] > FILE

Every row of tests/torture/packets.py is built once from a listed and once
from an unlisted source of its family (addresses of tests/vm/lib.sh's
topology by default), followed by a sentinel UDP packet per family from the
unlisted source to port 7777. Output, one record per line:

  row NAME FAMILY WHAT      a row starts
  expect COUNTER N          what the row adds to COUNTER, summed over the
                            extensions' expect() (tests/torture/<ext>.py)
  frame HEX                 an Ethernet frame; send.py fills in the MACs
  sentinel                  the sentinel frames follow
"""
import argparse
import importlib
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
import packets  # noqa: E402

MAC0 = "00:00:00:00:00:00"


def main():
    ap = argparse.ArgumentParser()
    for a, d in (("dst4", "10.0.2.2"), ("dst6", "fd00:2::2"), ("listed4", "10.0.1.100"),
                 ("unlisted4", "10.0.1.50"), ("listed6", "fd00:1::100"), ("unlisted6", "fd00:1::50")):
        ap.add_argument("--" + a, default=d)
    ap.add_argument("--ext", action="append", default=None, help="extensions (default: rangeset)")
    ap.add_argument("--conntrack", action="store_true",
                    help="the router tracks connections: fragments are reassembled (Row.ctfwd)")
    o = ap.parse_args()
    exts = [importlib.import_module(e) for e in (o.ext or ["rangeset"])]
    out = sys.stdout
    for r in packets.ROWS:
        dst = o.dst4 if r.fam == 4 else o.dst6
        expect = {c: 0 for e in exts for c in e.COUNTERS}
        frames = []
        for src, listed in ((getattr(o, "listed%d" % r.fam), True),
                            (getattr(o, "unlisted%d" % r.fam), False)):
            pkts = r.build(src, dst)
            fwd = len(pkts) if r.fwd < 0 else r.fwd
            if o.conntrack and r.ctfwd is not None:
                fwd = r.ctfwd
            for e in exts:
                for c, n in e.expect(r, listed, fwd).items():
                    expect[c] += n
            frames += [bytes(Ether(dst=MAC0, src=MAC0, type=0x800 if r.fam == 4 else 0x86dd) / p) for p in pkts]
        out.write("row %s %d %s\n" % (r.name, r.fam, r.what))
        for c in sorted(expect):
            out.write("expect %s %d\n" % (c, expect[c]))
        for f in frames:
            out.write("frame %s\n" % f.hex())
    out.write("sentinel\n")
    for p in (IP(src=o.unlisted4, dst=o.dst4) / UDP(sport=7777, dport=7777),
              IPv6(src=o.unlisted6, dst=o.dst6) / UDP(sport=7777, dport=7777)):
        out.write("frame %s\n" % bytes(Ether(dst=MAC0, src=MAC0) / p).hex())
    return 0


if __name__ == "__main__":
    sys.exit(main())
