#!/bin/bash
# make demo: a short protection scenario inside a booted Debian kernel.
#
# A router forwards a client's downloads to a web server. A "botnet" (spoofed
# sources in 10.0.1.64/27 behind the client's link) floods the server with
# SYNs. The operator blocks the botnet's ranges with
# one nfguard range set and one rule in the raw table; the flood is dropped
# before conntrack, the client's download keeps working.
. "$NFG_TOP/tests/vm/lib.sh"

say() { printf '\n=== %s\n' "$*"; }
show() { printf '    $ %s\n' "$*"; "$@" 2>&1 | sed 's/^/      /'; }

say "kernel $(uname -r); loading nfguard modules from $NFG_KMOD_DIR"
nfg_load_modules
lsmod | grep -E '^xt_rangeset' | sed 's/^/      /'
nfg_topo_up
dd if=/dev/urandom of="$NFG_WORK/file" bs=1M count=4 status=none
nfg_http_server "$NFG_NS_S" 8080 "$NFG_WORK"
want=$(nfg_sha256 "$NFG_WORK/file")

download() {
	local t0 t1
	t0=$(date +%s.%N)
	nfg_client curl -sS -g --max-time 60 -o "$NFG_WORK/got" "$1" || return 1
	t1=$(date +%s.%N)
	[ "$(nfg_sha256 "$NFG_WORK/got")" = "$want" ] || return 1
	printf '      client download of 4 MiB: %.2f s, checksum ok\n' "$(echo "$t1 - $t0" | bc)"
}

say "1. quiet network: the client downloads from the server through the router"
download "http://$NFG_S4:8080/file" || nfg_fail "download before the attack"

say "2. attack: SYN floods to the web server from spoofed botnet sources in 10.0.1.64/27"
for i in 70 77 90; do
	nfg_bg "$NFG_NS_C" hping3 --flood -q -S -p 8080 -a 10.0.1.$i "$NFG_S4"
done
halfopen() { nfg_server ss -Hnt state syn-recv | wc -l; }
nfg_wait_until 60 eval '[ "$(halfopen)" -gt 0 ]' || nfg_fail "the flood never reached the server"
printf '      half-open connections on the server: %s\n' "$(halfopen)"
download "http://$NFG_S4:8080/file" || nfg_fail "download at the start of the attack"

say "3. the operator blocks the botnet with one range set and one raw-table rule"
show nfg_router nfguard set create botnet4 ipv4
show nfg_router nfguard set add botnet4 10.0.1.64/27 203.0.113.0/24 198.51.100.10-198.51.100.99
show nfg_router nfguard set create botnet6 ipv6
show nfg_router nfguard set add botnet6 2001:db8:bad::/48
show nfg_router iptables -t raw -A PREROUTING -m rangeset --match-set botnet4 src -j DROP
show nfg_router ip6tables -t raw -A PREROUTING -m rangeset --match-set botnet6 src -j DROP
botnet_drops() { nfg_router iptables-save -c -t raw | sed -n 's/^\[\([0-9]*\):.*--match-set botnet4.*/\1/p'; }
nfg_wait_until 60 eval '[ "$(botnet_drops)" -gt 1000 ]' || nfg_fail "the flood is not being dropped"

say "4. under attack, the client still downloads; the flood dies in the raw table"
download "http://$NFG_S4:8080/file" || nfg_fail "download during the attack"
download "http://[$NFG_S6]:8080/file" || nfg_fail "IPv6 download during the attack"
# no new SYN reaches the server; SYN-RECV entries from before the block stay
# until their SYN-ACK retries run out
printf '      half-open connections on the server: %s (left from before the block)\n' "$(halfopen)"
show nfg_router iptables -t raw -L PREROUTING -v -n
drops=$(botnet_drops)
[ "${drops:-0}" -gt 1000 ] || nfg_fail "the flood was not dropped (counter ${drops:-0})"
show nfg_router nfguard set list
show nfg_router nfguard set save

say "5. cleanup: rules and sets removed, modules unloaded"
nfg_router iptables -t raw -F
nfg_router ip6tables -t raw -F
for pid in "${NFG_BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
nfg_router nfguard set destroy botnet4
nfg_router nfguard set destroy botnet6
nfg_topo_down
nfg_unload_modules
say "done: ${drops} flood packets dropped by the range set, downloads intact over IPv4 and IPv6"
