#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""NFQUEUE reader that holds packets until told to let them go.

    nfq_hold.py QUEUE DIR

Binds QUEUE (metadata only) through nfnetlink_queue and creates DIR/ready.
Every queued packet is held; DIR/held then says how many were queued so
far. Each line written to the FIFO DIR/release (made here, before
DIR/ready) accepts every packet held at that moment; DIR/released then
says how many were accepted so far. Runs until killed; exit 1 on errors.

For tests/vm/cases/rtcache_stale.sh (part "cookie"): a packet held between
its route lookup and the RTCACHE target while the route changes. Plain
sockets and struct, no extra Python package.
"""
import os
import select
import socket
import struct
import sys

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS = 1, 2
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
NF_ACCEPT = 1


def attr(kind, payload):
    """One netlink attribute, padded to 4 bytes."""
    head = struct.pack("=HH", 4 + len(payload), kind)
    return head + payload + b"\0" * (-len(payload) % 4)


def message(queue, msg, attrs, flags=NLM_F_REQUEST):
    """An nfnetlink_queue message for QUEUE: nlmsghdr, nfgenmsg, ATTRS."""
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue))
    body += b"".join(attrs)
    head = struct.pack("=IHHII", 16 + len(body),
                       NFNL_SUBSYS_QUEUE << 8 | msg, flags, 0, 0)
    return head + body


def messages(data):
    """(type, payload) of every netlink message in DATA."""
    off = 0
    while off + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, off)
        if length < 16:
            break
        yield kind, data[off + 16:off + length]
        off += (length + 3) & ~3


def attrs(data):
    """{type: payload} of the attributes in DATA (after nfgenmsg)."""
    out, off = {}, 4
    while off + 4 <= len(data):
        length, kind = struct.unpack_from("=HH", data, off)
        if length < 4:
            break
        out[kind & 0x7fff] = data[off + 4:off + length]
        off += (length + 3) & ~3
    return out


def config(sock, queue, attr_):
    """Send one CONFIG request and wait for its acknowledgement."""
    sock.send(message(queue, NFQNL_MSG_CONFIG, [attr_],
                      NLM_F_REQUEST | NLM_F_ACK))
    for kind, payload in messages(sock.recv(65536)):
        if kind == NLMSG_ERROR:
            err = struct.unpack_from("=i", payload)[0]
            if err:
                sys.exit(f"queue {queue}: config refused: "
                         f"{os.strerror(-err)}")
            return
    sys.exit(f"queue {queue}: no acknowledgement")


def write(path, value):
    """Replace PATH's content with VALUE (a reader never sees it half)."""
    with open(path + ".tmp", "w", encoding="ascii") as f:
        f.write(f"{value}\n")
    os.replace(path + ".tmp", path)


def main():
    """Bind, then hold packets and release them on request."""
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} QUEUE DIR")
    queue, where = int(sys.argv[1]), sys.argv[2]
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                         NETLINK_NETFILTER)
    sock.bind((0, 0))
    config(sock, queue, attr(NFQA_CFG_CMD,
                             struct.pack("!BBH", NFQNL_CFG_CMD_BIND, 0, 0)))
    config(sock, queue, attr(NFQA_CFG_PARAMS,
                             struct.pack("!IB", 0, NFQNL_COPY_META)))
    fifo = os.path.join(where, "release")
    os.mkfifo(fifo)
    # Read-write: the FIFO never reports end of file between writers.
    ctl = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    held, queued, released = [], 0, 0
    write(os.path.join(where, "held"), 0)
    write(os.path.join(where, "released"), 0)
    write(os.path.join(where, "ready"), 1)
    while True:
        ready, _, _ = select.select([sock, ctl], [], [])
        if sock in ready:
            for kind, payload in messages(sock.recv(65536)):
                if kind != (NFNL_SUBSYS_QUEUE << 8 | NFQNL_MSG_PACKET):
                    continue
                hdr = attrs(payload).get(NFQA_PACKET_HDR)
                if hdr is None or len(hdr) < 4:
                    continue
                held.append(hdr[:4])    # packet id, network order
                queued += 1
            write(os.path.join(where, "held"), queued)
        if ctl in ready:
            os.read(ctl, 4096)
            for pid in held:
                verdict = struct.pack("!I", NF_ACCEPT) + pid
                sock.send(message(queue, NFQNL_MSG_VERDICT,
                                  [attr(NFQA_VERDICT_HDR, verdict)]))
            released += len(held)
            held = []
            write(os.path.join(where, "released"), released)


if __name__ == "__main__":
    main()
