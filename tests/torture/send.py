#!/usr/bin/python3
"""Replay torture frames (made by tests/torture/torture.py) in the guest.

  send.py FILE IFACE DMAC               all rows, then the sentinels; prints
                                        the expected totals "COUNTER N"
  send.py [--family 4,6] FILE IFACE DMAC --diagnose CMD  row by row: CMD prints the counters
                                        ("COUNTER N" lines, sentinel4 and
                                        sentinel6 among them); waits for the
                                        sentinels after each row and prints
                                        the rows whose counts differ; exit 1
                                        if one does

Standard library only: starts in a second under TCG, where scapy takes 30.
Frames on one veth are handled in order, so once a sentinel has been counted
every frame sent before it has been too.
"""
import socket
import subprocess
import sys
import time


def load(path):
    rows, sentinel, cur = [], [], None
    with open(path) as f:
        for line in f:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "row":
                name, fam, what = (rest.split(" ", 2) + [""])[:3]
                cur = {"name": name, "fam": fam, "what": what, "expect": {}, "frames": []}
                rows.append(cur)
            elif kind == "expect":
                c, n = rest.split()
                cur["expect"][c] = int(n)
            elif kind == "frame":
                (cur["frames"] if cur is not None else sentinel).append(bytes.fromhex(rest))
            elif kind == "sentinel":
                cur = None
    return rows, sentinel


def counters(cmd):
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines() if line.strip())}


def main():
    fams = None
    if len(sys.argv) > 2 and sys.argv[1] == "--family":
        fams = set(sys.argv[2].split(","))
        del sys.argv[1:3]
    if len(sys.argv) not in (4, 6) or (len(sys.argv) == 6 and sys.argv[4] != "--diagnose"):
        print(__doc__, file=sys.stderr)
        return 2
    path, iface, dmac = sys.argv[1:4]
    rows, sentinel = load(path)
    if fams:
        rows = [r for r in rows if r["fam"] in fams]
    with open("/sys/class/net/%s/address" % iface) as f:
        smac = bytes.fromhex(f.read().strip().replace(":", ""))
    hdr = bytes.fromhex(dmac.replace(":", "")) + smac
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))

    def send(frames):
        for fr in frames:
            s.send(hdr + fr[12:])

    if len(sys.argv) == 4:
        total = {}
        for r in rows:
            send(r["frames"])
            for c, n in r["expect"].items():
                total[c] = total.get(c, 0) + n
        send(sentinel)
        for c in sorted(total):
            print(c, total[c])
        return 0
    # One counter read per row: what one row's frames and sentinels added.
    cmd, bad = sys.argv[5], 0
    prev = counters(cmd)
    for r in rows:
        send(r["frames"] + sentinel)
        deadline = time.monotonic() + 30
        while True:
            after = counters(cmd)
            if all(after.get(x, 0) > prev.get(x, 0) for x in ("sentinel4", "sentinel6")):
                break
            if time.monotonic() > deadline:
                print("row %s: the sentinels never arrived" % r["name"])
                return 1
            time.sleep(0.1)
        diff = ["%s expected +%d got +%d" % (c, n, after.get(c, 0) - prev.get(c, 0))
                for c, n in sorted(r["expect"].items()) if after.get(c, 0) - prev.get(c, 0) != n]
        prev = after
        if diff:
            bad += 1
            print("row %s (%s): %s" % (r["name"], r["what"], ", ".join(diff)), flush=True)
    print("%d of %d rows differ" % (bad, len(rows)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
