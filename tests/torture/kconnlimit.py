"""kconnlimit's verdicts for the torture rows (tests/torture/packets.py).

kconnlimit keys on addresses only and counts conntrack entries: a packet
that creates a connection is remembered, every other packet (conntrack
found it invalid, or it belongs to a known connection) only looks its key
up; under the limit every one of them matches, whatever its TCP, ICMP or
extension headers. The rules of tests/vm/cases/torture_kconnlimit_rtcache.sh
(router FORWARD, from the client side, not the UDP sentinels, limit far
above what the rows create) therefore count every frame the FORWARD hook
sees, from listed and unlisted sources alike (ctfwd: conntrack reassembles
fragments first).
"""
COUNTERS = ["kcl-fwd-nft4", "kcl-fwd-leg6"]


def expect(row, listed, fwd):
    return {"kcl-fwd-nft4" if row.fam == 4 else "kcl-fwd-leg6": fwd}
