#!/bin/bash
# fail2ban bans into a rangeset (packaging/fail2ban/action.d/nfguard-rangeset.conf,
# installed by the nfguard package): a real fail2ban-server (Debian's
# fail2ban, tests/deps.d/fail2ban.txt) with a private configuration (its own
# socket, pid file, in-memory database; the action next to Debian's
# iptables.conf it includes) and a jail that watches a log file:
#  - two failures of an IPv4 source in the log: fail2ban bans it; the action
#    created set f2b-nfg (ipv4) and one iptables rule that rejects the set's
#    members on the jail's port, and the source is in the set;
#  - fail2ban-client banip of an IPv6 source: set f2b-nfg6 (ipv6), an
#    ip6tables rule, the source in it;
#  - unbanip: the source leaves the set, the other stays;
#  - a ban with bantime: the element carries fail2ban's bantime as its
#    timeout when the jail sets rstime to it;
#  - stopping the jail removes the rules and destroys the sets.
# nfg-case-timeout: 240
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nfguard fail2ban-server fail2ban-client iptables ip6tables
nfg_load_modules xt_rangeset

action=$NFG_TOP/packaging/fail2ban/action.d/nfguard-rangeset.conf
[ -f "$action" ] || nfg_fail "no $action"
conf=$NFG_WORK/f2b
mkdir -p "$conf/action.d" "$conf/filter.d" "$conf/jail.d"
cp /etc/fail2ban/action.d/iptables.conf "$action" "$conf/action.d/"
cp /etc/fail2ban/paths-common.conf /etc/fail2ban/paths-debian.conf "$conf/" 2>/dev/null || true
cat >"$conf/fail2ban.conf" <<EOC
[Definition]
loglevel = INFO
logtarget = $NFG_WORK/f2b.log
socket = $NFG_WORK/f2b.sock
pidfile = $NFG_WORK/f2b.pid
dbfile = :memory:
EOC
cat >"$conf/filter.d/nfg.conf" <<'EOC'
[Definition]
failregex = ^fail <HOST>$
datepattern = {NONE}
EOC
: >"$NFG_WORK/auth.log"
cat >"$conf/jail.conf" <<EOC
[DEFAULT]
backend = polling
[nfg]
enabled = true
filter = nfg
logpath = $NFG_WORK/auth.log
maxretry = 2
findtime = 600
bantime = 600
action = nfguard-rangeset[name=nfg, port=80, protocol=tcp]
[nfgt]
enabled = true
filter = nfg
logpath = $NFG_WORK/auth-t.log
bantime = 3600
action = nfguard-rangeset[name=nfgt, port=81, protocol=tcp, rstime="<timeout-bantime>"]
EOC
: >"$NFG_WORK/auth-t.log"
F() { fail2ban-client -c "$conf" "$@"; }
F start >"$NFG_WORK/start.log" 2>&1 || nfg_fail "fail2ban-client start: $(cat "$NFG_WORK/start.log" "$NFG_WORK/f2b.log")"
nfg_on_exit "fail2ban-client -c '$conf' stop >/dev/null 2>&1"
nfg_wait_until 60 F status nfg || nfg_fail "jail nfg did not start: $(tail -n 20 "$NFG_WORK/f2b.log")"

in_set() { nfguard set test "$1" "$2" >/dev/null 2>&1; }
# a ban from the log
printf 'fail 192.0.2.7\nfail 192.0.2.7\n' >>"$NFG_WORK/auth.log"
nfg_wait_until 60 in_set f2b-nfg 192.0.2.7 ||
	nfg_fail "192.0.2.7 not banned into f2b-nfg: $(nfguard set list 2>&1; tail -n 20 "$NFG_WORK/f2b.log")"
nfg_assert_match '^Family: ipv4$' "$(nfguard set list f2b-nfg 2>&1)" "f2b-nfg is an ipv4 set"
iptables -C INPUT -p tcp --dport 80 -m rangeset --match-set f2b-nfg src \
	-j REJECT --reject-with icmp-port-unreachable 2>/dev/null ||
	nfg_fail "no rangeset rule for f2b-nfg: $(iptables -S INPUT)"
nfg_assert_eq 1 "$(iptables -S INPUT | grep -c 'match-set f2b-nfg src')" "rules for f2b-nfg"
# a ban by command, IPv6
F set nfg banip 2001:db8::7 >/dev/null || nfg_fail "banip 2001:db8::7"
nfg_wait_until 60 in_set f2b-nfg6 2001:db8::7 || nfg_fail "2001:db8::7 not banned into f2b-nfg6: $(tail -n 20 "$NFG_WORK/f2b.log")"
ip6tables -C INPUT -p tcp --dport 80 -m rangeset --match-set f2b-nfg6 src \
	-j REJECT --reject-with icmp6-port-unreachable 2>/dev/null ||
	nfg_fail "no rangeset rule for f2b-nfg6: $(ip6tables -S INPUT)"
F set nfg banip 192.0.2.9 >/dev/null || nfg_fail "banip 192.0.2.9"
nfg_wait_until 60 in_set f2b-nfg 192.0.2.9 || nfg_fail "192.0.2.9 not banned"
# no timeout on the elements by default: fail2ban unbans
nfg_assert_eq "" "$(nfguard set list f2b-nfg | grep ' timeout ')" "elements of f2b-nfg without timeout"
# unban
F set nfg unbanip 192.0.2.7 >/dev/null || nfg_fail "unbanip 192.0.2.7"
nfg_wait_until 60 bash -c '! nfguard set test f2b-nfg 192.0.2.7 >/dev/null 2>&1' || nfg_fail "192.0.2.7 still in f2b-nfg"
in_set f2b-nfg 192.0.2.9 || nfg_fail "unbanning 192.0.2.7 removed 192.0.2.9"
F set nfg unbanip 2001:db8::7 >/dev/null || nfg_fail "unbanip 2001:db8::7"
nfg_wait_until 60 bash -c '! nfguard set test f2b-nfg6 2001:db8::7 >/dev/null 2>&1' || nfg_fail "2001:db8::7 still in f2b-nfg6"
# rstime = <timeout-bantime>: the element expires with the ban
F set nfgt banip 198.51.100.3 >/dev/null || nfg_fail "banip 198.51.100.3"
nfg_wait_until 60 in_set f2b-nfgt 198.51.100.3 || nfg_fail "198.51.100.3 not banned into f2b-nfgt"
left=$(nfguard set list f2b-nfgt | sed -n 's/^198\.51\.100\.3 timeout \([0-9]*\)$/\1/p')
nfg_assert_ge "${left:-0}" 3500 "timeout of 198.51.100.3 (bantime 3600)"
nfg_assert_le "${left:-0}" 3600 "timeout of 198.51.100.3 (bantime 3600)"
# stop: rules and sets gone
F stop >/dev/null 2>&1 || nfg_fail "fail2ban-client stop"
nfg_wait_until 60 bash -c '! nfguard set list f2b-nfg >/dev/null 2>&1' || nfg_fail "f2b-nfg not destroyed at stop"
for s in f2b-nfg6 f2b-nfgt; do
	nfguard set list "$s" >/dev/null 2>&1 && nfg_fail "$s not destroyed at stop"
done
iptables -S INPUT | grep -q rangeset && nfg_fail "rangeset rules left at stop: $(iptables -S INPUT)"
ip6tables -S INPUT | grep -q rangeset && nfg_fail "rangeset rules left at stop: $(ip6tables -S INPUT)"
nfg_log "ok"
