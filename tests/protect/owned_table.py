#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Hold an nf_tables table with the owner flag (NFT_TABLE_F_OWNER) for the
VM cases of nfguard protect: owned_table.py FAMILY NAME [COMMENT].
owned_table.py --churn FAMILY NAME: add and delete table NAME 100 times a
second (each one commit of its own) until killed: a ruleset that keeps
changing under nfguard protect.

Creates table FAMILY NAME (ip or ip6) owned by this process's netlink socket
(other sockets may not change or delete it: -EPERM), with COMMENT as its
comment (nftnl userdata), prints "ready" and keeps the socket open until
the process is killed; the kernel then deletes the table.
Plain netlink, no scapy: nft 1.0.6 cannot create an owned table.
"""
import os
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_NFTABLES = 10
NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END = 0x10, 0x11
NFT_MSG_NEWTABLE = 0
NFTA_TABLE_NAME, NFTA_TABLE_FLAGS, NFTA_TABLE_USERDATA = 1, 2, 6
NFT_TABLE_F_OWNER = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_CREATE = 1, 4, 0x400
NLMSG_ERROR = 2


def attr(kind, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)


def msg(kind, flags, seq, family, res_id, payload=b""):
    body = struct.pack("=BBH", family, 0, socket.htons(res_id)) + payload
    return struct.pack("=IHHII", 16 + len(body), kind, flags, seq, 0) + body


def churn(fam, name):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    seq = 0
    while True:
        for kind in (NFT_MSG_NEWTABLE, 2):  # NFT_MSG_DELTABLE
            seq += 3
            s.send(msg(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, seq, 0, NFNL_SUBSYS_NFTABLES) +
                   msg((NFNL_SUBSYS_NFTABLES << 8) | kind, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK,
                       seq + 1, fam, 0, attr(NFTA_TABLE_NAME, name)) +
                   msg(NFNL_MSG_BATCH_END, NLM_F_REQUEST, seq + 2, 0, NFNL_SUBSYS_NFTABLES))
            s.recv(65536)
            time.sleep(0.01)  # a pace, not a wait for anything


def main():
    if sys.argv[1] == "--churn":
        churn({"ip": 2, "ip6": 10}[sys.argv[2]], sys.argv[3].encode() + b"\0")
    fam = {"ip": 2, "ip6": 10}[sys.argv[1]]
    name = sys.argv[2].encode() + b"\0"
    payload = attr(NFTA_TABLE_NAME, name) + attr(NFTA_TABLE_FLAGS, struct.pack(">I", NFT_TABLE_F_OWNER))
    if len(sys.argv) > 3:
        comment = sys.argv[3].encode() + b"\0"
        # nftnl udata: type NFTNL_UDATA_TABLE_COMMENT (0), length, bytes
        payload += attr(NFTA_TABLE_USERDATA, struct.pack("=BB", 0, len(comment)) + comment)
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    batch = (msg(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 1, 0, NFNL_SUBSYS_NFTABLES) +
             msg((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE,
                 NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, 2, fam, 0, payload) +
             msg(NFNL_MSG_BATCH_END, NLM_F_REQUEST, 3, 0, NFNL_SUBSYS_NFTABLES))
    s.send(batch)
    reply = s.recv(65536)
    kind = struct.unpack_from("=H", reply, 4)[0]
    err = struct.unpack_from("=i", reply, 16)[0] if kind == NLMSG_ERROR else -1
    if err:
        print("owned_table: NEWTABLE failed: %s" % os.strerror(-err), file=sys.stderr)
        return 1
    print("ready", flush=True)
    while True:
        signal.pause()


sys.exit(main())
