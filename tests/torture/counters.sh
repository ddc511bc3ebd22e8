#!/bin/bash
# counters.sh NS:TOOL...: print "COMMENT PACKETS" for every rule that carries
# "-m comment --comment COMMENT" in the given netns' tables, read with
# TOOL-save -c (TOOL: iptables-legacy, ip6tables-nft, ...).
for t; do
	ip netns exec "${t%%:*}" "${t#*:}-save" -c 2>/dev/null
done | sed -n 's/^\[\([0-9]*\):[0-9]*\] .*--comment "\{0,1\}\([A-Za-z0-9_-]*\)"\{0,1\}\( .*\)\{0,1\}$/\2 \1/p'
