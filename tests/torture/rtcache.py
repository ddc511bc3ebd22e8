"""RTCACHE's verdicts for the torture rows (tests/torture/packets.py).

RTCACHE is a target that always continues: every frame that reaches its
rule (router FORWARD, from the client side, not the UDP sentinels) is
counted and forwarded, by the route it was cached with or by a FIB lookup
(untracked and invalid packets are never cached), and arrives at the server
(srv-in4/srv-in6: the client subnet's packets in the server's raw PREROUTING, after its own
conntrack reassembled fragments). Nothing is lost or misrouted.
"""
COUNTERS = ["rtc-fwd-leg4", "rtc-fwd-nft6", "srv-in4", "srv-in6"]


def expect(row, listed, fwd):
    if row.fam == 4:
        return {"rtc-fwd-leg4": fwd, "srv-in4": fwd}
    return {"rtc-fwd-nft6": fwd, "srv-in6": fwd}
