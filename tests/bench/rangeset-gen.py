#!/usr/bin/env python3
"""Deterministic IPv4 blocklist for the rangeset bench (tests/bench/cases/rangeset.sh).

usage: rangeset-gen.py [-n COUNT] [-s SEED] [--ipset-count N] OUTDIR

Writes, for the same COUNT disjoint, pairwise non-adjacent IPv4 prefixes:
  OUTDIR/cidrs.txt   one CIDR per line (nfguard set add NAME -f FILE)
  OUTDIR/nft.txt     nft -f script: table inet nfb, interval set s, add element
  OUTDIR/ipset.txt   ipset restore script: hash:net set "nfb" (first N lines, default all)
  OUTDIR/info        key=value facts: count, lengths, coverage (share of the
                     IPv4 space in the set = expected hit rate of uniformly random
                     sources), seed
Prefix lengths /10 ... /32 (23 lengths): 2 each of /10-/15, 50 each of /16-/19,
the rest spread evenly over /20-/32, so a uniformly random source is in the set
about 2% of the time (a flood from random sources mostly misses: full search).
Every prefix sits in its own /20-aligned run of blocks with a free /20 on both
sides, so nothing overlaps or touches (no backend merges anything: every
backend holds exactly COUNT elements). 0/8, 10/8 (the bench's own addresses),
127/8 and 224/3 are left out. Lines are in random order (a shuffled list),
except that the first 23 lines hold one prefix of each length.
"""
import argparse
import os
import random
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100000)
    ap.add_argument("-s", type=int, default=20260101)
    ap.add_argument("--ipset-count", type=int, default=0)
    ap.add_argument("outdir")
    a = ap.parse_args()
    n = a.n
    rnd = random.Random(a.s)

    counts = {}
    for L in range(10, 16):
        counts[L] = 2
    for L in range(16, 20):
        counts[L] = 50
    rest = n - sum(counts.values())
    if rest < 13:
        sys.exit("rangeset-gen: count too small")
    for i, L in enumerate(range(20, 33)):
        counts[L] = rest // 13 + (1 if i < rest % 13 else 0)

    NB = 1 << 20  # /20 blocks
    used = bytearray(NB)

    def block_of(octet):
        return octet << 12  # first /20 block of a /8

    # excluded /8s (and 224/3): mark as used so nothing lands there
    for o in (0, 10, 127):
        used[block_of(o):block_of(o + 1)] = b"\x01" * 4096
    used[block_of(224):] = b"\x01" * (NB - block_of(224))

    out = []
    for L in sorted(counts):
        span = 1 << max(0, 20 - L)  # /20 blocks covered
        for _ in range(counts[L]):
            for _try in range(100000):
                b = rnd.randrange(0, NB // span) * span
                lo, hi = max(0, b - 1), min(NB, b + span + 1)
                if not any(used[lo:hi]):
                    break
            else:
                sys.exit("rangeset-gen: no room for /%d" % L)
            used[b:b + span] = b"\x01" * span
            addr = b << 12
            if L > 20:
                addr += rnd.randrange(0, 1 << (L - 20)) << (32 - L)
            out.append((addr, L))
    rnd.shuffle(out)
    # one prefix of every length first: a partial load (ipset restore stopped
    # at its time budget) still has every length, which is what hash:net
    # lookups cost (one hash probe per length present)
    first = {}
    for i, (_, L) in enumerate(out):
        first.setdefault(L, i)
    head = sorted(first.values())
    hs = set(head)
    out = [out[i] for i in head] + [x for i, x in enumerate(out) if i not in hs]

    def fmt(x):
        a, L = x
        return "%d.%d.%d.%d/%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, L)

    lines = [fmt(x) for x in out]
    os.makedirs(a.outdir, exist_ok=True)
    with open(os.path.join(a.outdir, "cidrs.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.outdir, "nft.txt"), "w") as f:
        f.write("add table inet nfb\n")
        f.write("add set inet nfb s { type ipv4_addr; flags interval; }\n")
        for i in range(0, n, 1000):
            f.write("add element inet nfb s { %s }\n" % ", ".join(lines[i:i + 1000]))
    m = a.ipset_count or n
    with open(os.path.join(a.outdir, "ipset.txt"), "w") as f:
        f.write("create nfb hash:net family inet hashsize %d maxelem %d\n"
                % (1 << max(10, (m - 1).bit_length()), max(65536, 2 * m)))
        for s in lines[:m]:
            f.write("add nfb %s\n" % s)
    cov = sum(c * 2.0 ** -L for L, c in counts.items())
    with open(os.path.join(a.outdir, "info"), "w") as f:
        f.write("count=%d\nseed=%d\nlengths=%d\nminlen=%d\nmaxlen=%d\ncoverage=%.5f\n"
                % (n, a.s, len(counts), min(counts), max(counts), cov))


if __name__ == "__main__":
    main()
