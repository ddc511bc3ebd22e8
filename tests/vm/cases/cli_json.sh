#!/bin/bash
# --json on every listing (nfguard(8)), parsed by python's json module and
# compared with the text listing: set list (all sets: an array; one set: its
# header fields and members with their seconds left), syncookie stats (the
# counters), syncookie allowlist list (prefix and seconds left), rtcache
# stats and rtcache list.
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need python3

nfg_load_modules xt_rangeset xt_SYNCOOKIE xt_RTCACHE
nfguard set create j4 ipv4 maxelem 100 || nfg_fail "create j4"
nfguard set create j6 ipv6 || nfg_fail "create j6"
nfguard set add j4 10.0.0.0/8 192.0.2.1 192.0.2.5-192.0.2.9 || nfg_fail "add j4"
nfguard set add j4 198.51.100.7 timeout 600 || nfg_fail "add j4 timeout"
nfguard set add j6 2001:db8::/32 || nfg_fail "add j6"

all=$(nfguard set list --json) || nfg_fail "list --json: exit $?"
nfg_assert_eq "j4 ipv4 4 100
j6 ipv6 1 1048576" "$(python3 -c '
import json, sys
for s in json.loads(sys.argv[1]):
    print(s["name"], s["family"], s["ranges"], s["maxelem"])' "$all")" "set list --json"
one=$(nfguard set list j4 --json) || nfg_fail "list j4 --json: exit $?"
got=$(python3 -c '
import json, sys
s = json.loads(sys.argv[1])
print(s["name"], s["family"], s["ranges"], s["references"], s["timeout"])
for m in s["members"]:
    t = m.get("timeout")
    print(m["range"], "permanent" if t is None else ("timed" if 0 < t <= 600 else "bad %s" % t))' "$one") ||
	nfg_fail "list j4 --json is not JSON: $one"
nfg_assert_eq "j4 ipv4 4 0 0
10.0.0.0/8 permanent
192.0.2.1 permanent
192.0.2.5-192.0.2.9 permanent
198.51.100.7 timed" "$got" "set list j4 --json"
nfg_assert_eq "$(nfguard set list j4 | sed -n '/^Members:/,$p' | sed '1d; s/ timeout .*//')" \
	"$(sed -n '2,$p' <<<"$got" | cut -d' ' -f1)" "the same members as the text listing"
# (seconds left may tick between the two listings)
nfg_assert_eq "$(nfguard set list --json j4 | sed 's/"timeout":[0-9]*}/}/')" \
	"$(sed 's/"timeout":[0-9]*}/}/' <<<"$one")" "--json before or after the name"

# SYNCOOKIE: counters and allowlist
nfguard syncookie allowlist add 192.0.2.1 || nfg_fail "allowlist add"
nfguard syncookie allowlist add 198.51.100.77/24 timeout 60 || nfg_fail "allowlist add /24"
al=$(nfguard syncookie allowlist list --json) || nfg_fail "allowlist list --json: exit $?"
nfg_assert_eq "192.0.2.1/32 ok
198.51.100.0/24 ok" "$(python3 -c '
import json, sys
for e in sorted(json.loads(sys.argv[1]), key=lambda e: e["prefix"]):
    print(e["prefix"], "ok" if 0 < e["expires_in"] <= 300 else e["expires_in"])' "$al")" "allowlist list --json"
text=$(nfguard syncookie stats) || nfg_fail "syncookie stats"
js=$(nfguard syncookie stats --json) || nfg_fail "syncookie stats --json"
nfg_assert_eq "$(tr -s ' ' <<<"$text" | sort)" "$(python3 -c '
import json, sys
for k, v in json.loads(sys.argv[1]).items():
    print(k, v)' "$js" | sort)" "syncookie stats --json: the text listing's counters"
# RTCACHE: counters and (no traffic: an empty) route list
text=$(nfguard rtcache stats) || nfg_fail "rtcache stats"
js=$(nfguard rtcache stats --json) || nfg_fail "rtcache stats --json"
nfg_assert_eq "$(tr ' ' '\n' <<<"$(head -n 1 <<<"$text")" | paste - - ; sed 1d <<<"$text" | tr ' ' '\t')" \
	"$(python3 -c '
import json, sys
for k, v in json.loads(sys.argv[1]).items():
    print("%s\t%s" % (k, v))' "$js")" "rtcache stats --json: the text listing's numbers"
nfg_assert_eq "0" "$(python3 -c 'import json, sys; print(len(json.loads(sys.argv[1])))' \
	"$(nfguard rtcache list --json)")" "rtcache list --json: a JSON array"
nfg_expect_exit 2 'unknown sub-command or bad arguments' nfguard rtcache list --bogus
nfg_expect_exit 2 'usage: nfguard set list \[NAME\] \[--json\]' nfguard set list j4 j6 --json
nfg_log "ok"
