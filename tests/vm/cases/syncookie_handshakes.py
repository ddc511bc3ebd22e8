#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Several crafted handshakes (syncookie_handshake.py) in one process.

usage: syncookie_handshakes.py SRC DST PORT VARIANT[,VARIANT...] EXPECT_MSS [local|proxy] [-- CMD...]

Runs syncookie_handshake.py's check once per VARIANT, in order, with the
same arguments otherwise. CMD (e.g. an allowlist flush, so that every
variant takes the cookie path) runs before each variant and must succeed.
Why one process: importing scapy costs 10-20 s of a TCG guest's CPU, and a
case that started one python per variant spent most of its time there.
Prints each variant's line; exits 1 if any variant failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import syncookie_handshake  # noqa: E402  (after the path is set)


def main():
    args = sys.argv[1:]
    cmd = []
    if "--" in args:
        cmd = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    if len(args) < 5:
        print(__doc__.strip().splitlines()[2])
        return 2
    failed = []
    for variant in args[3].split(","):
        if cmd and subprocess.run(cmd).returncode != 0:
            print("%s: %s failed" % (variant, " ".join(cmd)))
            failed.append(variant)
            continue
        sys.argv = [sys.argv[0]] + args[:3] + [variant] + args[4:]
        if syncookie_handshake.main() != 0:
            failed.append(variant)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
