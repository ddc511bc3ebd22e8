#!/bin/bash
# Selftest: passes but leaves state behind on purpose (no cleanup): a netns, a
# veth pair, iptables-legacy (filter, a raw user chain) and ip6tables-legacy
# and nft rules in the root netns, a module, a file
# in /tmp and a daemon. st_clean.sh then checks the harness removed them.
echo dirty >/tmp/nfg-selftest-leftover
ip netns add nfg-leftover || exit 1
ip link add nfgleft0 type veth peer name nfgleft1 || exit 1
iptables-legacy -w -A INPUT -s 192.0.2.1 -j DROP || exit 1
iptables-legacy -w -t raw -N nfg_left || exit 1
iptables-legacy -w -t raw -A nfg_left -j ACCEPT || exit 1
ip6tables-legacy -w -A INPUT -s 2001:db8::1 -j DROP || exit 1
nft add table inet nfg_leftover || exit 1
modprobe dummy || exit 1
setsid sleep 100000 </dev/null >/dev/null 2>&1 &
exit 0
