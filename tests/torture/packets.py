"""Malformed packets for tests/vm/cases/torture_*.sh (scapy).

Each row builds the frames of one malformed packet (several frames for
fragments) from a given source to the server, and says how many of those
frames the router's netfilter FORWARD hook sees: a frame that fails the IP
layer's own checks (bad header checksum, header length < 5, total length past
the frame, an IPv6 hop-by-hop option whose type says "discard") is dropped in
ip_rcv/ipv6_rcv before any hook; everything else is forwarded as it is (the
router of torture_rangeset tracks nothing and parses no TCP; on a router
that tracks connections, as in torture_kconnlimit_rtcache, conntrack
reassembles fragments first: ctfwd).

Extensions (tests/torture/<ext>.py) turn a row and a source into the counts
they expect from their rules; a new extension adds rows here when it parses
something new (SYNCOOKIE: TCP options; kconnlimit: SYNs), and a module with
an `expect` function.
"""
from scapy.layers.inet import IP, TCP, ICMP, fragment
from scapy.layers.inet6 import (IPv6, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting,
                                IPv6ExtHdrFragment, ICMPv6DestUnreach, HBHOptUnknown,
                                PadN, fragment6)
from scapy.packet import Raw

SPORT = 40000
DPORT = 80


def tcp_raw_opts(opts, doff=None, flags="S", payload=b""):
    """TCP header followed by raw option bytes; data offset covers them."""
    if doff is None:
        doff = 5 + (len(opts) + 3) // 4
        opts = opts + b"\x00" * ((doff - 5) * 4 - len(opts))
    return TCP(sport=SPORT, dport=DPORT, flags=flags, seq=1000, dataofs=doff) / Raw(opts + payload)


class Row:
    """fwd: frames the FORWARD hook sees (-1: every frame); ctfwd: the same
    on a router that tracks connections (conntrack reassembles fragments
    before the hooks: one packet), None when it is fwd."""
    def __init__(self, name, fam, build, fwd, what, ctfwd=None):
        self.name, self.fam, self.build, self.fwd, self.what = name, fam, build, fwd, what
        self.ctfwd = ctfwd


def _v4(l4):
    return lambda s, d: [IP(src=s, dst=d, ttl=64) / l4()]


def _v6(l4):
    return lambda s, d: [IPv6(src=s, dst=d, hlim=64) / l4()]


def _frag4(s, d):
    pkt = IP(src=s, dst=d, ttl=64) / TCP(sport=SPORT, dport=DPORT, flags="S",
                                        options=[("MSS", 1460), ("WScale", 7)]) / Raw(b"x" * 40)
    return fragment(pkt, fragsize=24)


def _frag6(s, d):
    pkt = IPv6(src=s, dst=d) / IPv6ExtHdrFragment() / TCP(sport=SPORT, dport=DPORT, flags="S") / Raw(b"y" * 120)
    return fragment6(pkt, 96)


def _ip4_bad(**kw):
    def b(s, d):
        p = IP(src=s, dst=d, ttl=64, **kw) / TCP(sport=SPORT, dport=DPORT, flags="S")
        return [p]
    return b


def _ip4_badsum(s, d):
    p = IP(raw(IP(src=s, dst=d, ttl=64) / TCP(sport=SPORT, dport=DPORT, flags="S")))
    p.chksum ^= 0x5a5a
    return [p]


def _ip4_shortihl(s, d):
    p = IP(raw(IP(src=s, dst=d, ttl=64) / TCP(sport=SPORT, dport=DPORT, flags="S")))
    b = bytearray(raw(p))
    b[0] = 0x44              # ihl 4
    return [IP(bytes(b))]


def _ip4_longtot(s, d):
    p = IP(src=s, dst=d, ttl=64, len=400) / TCP(sport=SPORT, dport=DPORT, flags="S")
    return [p]


def raw(p):
    return bytes(p)


def _icmp4_err(s, d):
    # a router (s) reports a server->client flow unreachable; the quoted
    # packet's source is the server, its destination a client address
    inner = IP(src=d, dst="10.0.1.2", ttl=63) / TCP(sport=DPORT, dport=SPORT, flags="SA")
    return [IP(src=s, dst=d, ttl=64) / ICMP(type=3, code=1) / raw(inner)[:28]]


def _icmp6_err(s, d):
    inner = IPv6(src=d, dst="fd00:1::2") / TCP(sport=DPORT, dport=SPORT, flags="SA")
    return [IPv6(src=s, dst=d) / ICMPv6DestUnreach(code=3) / raw(inner)]


ROWS = [
    Row("tcp-opt-truncated", 4, _v4(lambda: tcp_raw_opts(b"\x02\x04\x05", doff=6)), 1,
        "MSS option cut short by the data offset"),
    Row("tcp-opt-overlong", 4, _v4(lambda: tcp_raw_opts(b"\x02\x28\x05\xb4")), 1,
        "option length 40 past the header"),
    Row("tcp-opt-zero-len", 4, _v4(lambda: tcp_raw_opts(b"\x08\x00\x01\x01")), 1,
        "timestamp option with length 0"),
    Row("tcp-opt-unknown", 4, _v4(lambda: tcp_raw_opts(b"\x63\x06abcd")), 1,
        "unknown option kind 99"),
    Row("tcp-mss-0", 4, _v4(lambda: tcp_raw_opts(b"\x02\x04\x00\x00")), 1, "MSS 0"),
    Row("tcp-wscale-15", 4, _v4(lambda: tcp_raw_opts(b"\x01\x03\x03\x0f")), 1, "window scale 15"),
    Row("tcp-doff-3", 4, _v4(lambda: tcp_raw_opts(b"", doff=3)), 1, "data offset < 5"),
    Row("tcp-doff-past", 4, _v4(lambda: tcp_raw_opts(b"", doff=15)), 1, "data offset past the packet"),
    Row("tcp-syn-fin", 4, _v4(lambda: TCP(sport=SPORT, dport=DPORT, flags="SF")), 1, "SYN+FIN"),
    Row("tcp-syn-rst", 4, _v4(lambda: TCP(sport=SPORT, dport=DPORT, flags="SR")), 1, "SYN+RST"),
    Row("tcp-syn-payload", 4, _v4(lambda: TCP(sport=SPORT, dport=DPORT, flags="S") / Raw(b"GET / HTTP/1.0\r\n\r\n")), 1,
        "SYN carrying data"),
    Row("tcp-bad-csum", 4, _v4(lambda: TCP(sport=SPORT, dport=DPORT, flags="S", chksum=0xdead)), 1,
        "TCP checksum wrong"),
    Row("tcp-no-header", 4, lambda s, d: [IP(src=s, dst=d, proto=6, ttl=64) / Raw(b"\x00\x50")], 1,
        "protocol TCP, 2 bytes of header"),
    Row("tcp-zero-length", 4, lambda s, d: [IP(src=s, dst=d, proto=6, ttl=64)], 1,
        "protocol TCP, nothing after the IP header"),
    Row("frag-syn", 4, _frag4, -1, "SYN with options and data in 3 fragments", ctfwd=1),
    Row("icmp-err-quoting-flow", 4, _icmp4_err, 1, "port unreachable quoting a tracked flow"),
    Row("ip-bad-csum", 4, _ip4_badsum, 0, "IPv4 header checksum wrong (dropped by ip_rcv)"),
    Row("ip-ihl-4", 4, _ip4_shortihl, 0, "IPv4 header length 16 (dropped by ip_rcv)"),
    Row("ip-len-past-frame", 4, _ip4_longtot, 0, "IPv4 total length past the frame (dropped by ip_rcv)"),
    Row("v6-hbh-padn", 6, lambda s, d: [IPv6(src=s, dst=d) / IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\x00" * 4)]) /
                                          TCP(sport=SPORT, dport=DPORT, flags="S")], 1, "hop-by-hop header with PadN"),
    Row("v6-hbh-discard", 6, lambda s, d: [IPv6(src=s, dst=d) / IPv6ExtHdrHopByHop(options=[HBHOptUnknown(otype=0x9e, optdata=b"ab")]) /
                                             TCP(sport=SPORT, dport=DPORT, flags="S")], 0,
        "hop-by-hop option of unknown type 'discard' (dropped by ipv6_rcv)"),
    Row("v6-routing-0", 6, lambda s, d: [IPv6(src=s, dst=d) / IPv6ExtHdrRouting(type=0, segleft=1, addresses=["fd00:2::99"]) /
                                           TCP(sport=SPORT, dport=DPORT, flags="S")], 1, "deprecated type 0 routing header"),
    Row("v6-frag-syn", 6, _frag6, -1, "SYN in 2 fragments", ctfwd=1),
    Row("v6-atomic-frag", 6, lambda s, d: [IPv6(src=s, dst=d) / IPv6ExtHdrFragment(m=0, offset=0, id=7) /
                                             TCP(sport=SPORT, dport=DPORT, flags="S")], 1, "atomic fragment"),
    Row("v6-tcp-opt-truncated", 6, _v6(lambda: tcp_raw_opts(b"\x02\x04\x05", doff=6)), 1, "MSS option cut short"),
    Row("v6-tcp-doff-past", 6, _v6(lambda: tcp_raw_opts(b"", doff=15)), 1, "data offset past the packet"),
    Row("v6-syn-fin", 6, _v6(lambda: TCP(sport=SPORT, dport=DPORT, flags="SF")), 1, "SYN+FIN"),
    Row("v6-bad-csum", 6, _v6(lambda: TCP(sport=SPORT, dport=DPORT, flags="S", chksum=0xbeef)), 1, "TCP checksum wrong"),
    Row("v6-icmp-err-quoting-flow", 6, _icmp6_err, 1, "ICMPv6 port unreachable quoting a tracked flow"),
    Row("v6-zero-payload", 6, lambda s, d: [IPv6(src=s, dst=d, nh=6, plen=0)], 1, "next header TCP, payload length 0"),
]
