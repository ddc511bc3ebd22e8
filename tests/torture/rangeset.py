"""rangeset's verdicts for the torture rows (tests/torture/packets.py).

rangeset matches on addresses only: every frame that reaches the router's
FORWARD hook from a listed source is matched, however broken its TCP, ICMP or
extension headers (fragments one by one: the router reassembles nothing), and
nothing from an unlisted source is. The case's rules (see
tests/vm/cases/torture_rangeset.sh) count listed frames in a first table and
drop them in a second one, legacy then nft for IPv4 and nft then legacy for
IPv6; the server's INPUT rules on the same sets must count nothing.
"""
COUNTERS = ["rs-fwd-leg4", "rs-fwd-nft4", "rs-fwd-nft6", "rs-fwd-leg6", "rs-in-leg4", "rs-in-nft6"]


def expect(row, listed, fwd):
    if not listed:
        return {}
    if row.fam == 4:
        return {"rs-fwd-leg4": fwd, "rs-fwd-nft4": fwd}
    return {"rs-fwd-nft6": fwd, "rs-fwd-leg6": fwd}
