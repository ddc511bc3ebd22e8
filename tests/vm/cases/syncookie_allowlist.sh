#!/bin/bash
# nfg-case-timeout: 600
# The SYNCOOKIE allowlist and control plane: "nfguard syncookie allowlist"
# add/del/list/flush/save/restore and "secret set/rotate" over genetlink,
# with clear errors; the allowlist is bounded (module parameter
# allowlist_max, here 4) and evicts the least recently used entry
# (allowlist_evict counts it); entries expire (added by hand, and a real
# client's entry from --allowlist-timeout 2: after it expired the client's
# next connection goes through a cookie again); the allowlist is per
# netns; deleting a netns frees its allowlist (live_objects back to the
# baseline) and the module unloads cleanly with its rules gone.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need curl python3 iptables-legacy

nfg_load_modules xt_SYNCOOKIE
# again with a small bound
rmmod xt_SYNCOOKIE || nfg_fail "rmmod"
insmod "$NFG_KMOD_DIR/xt_SYNCOOKIE.ko" allowlist_max=4 || nfg_fail "insmod allowlist_max=4"
live() { cat /sys/module/xt_SYNCOOKIE/parameters/live_objects; }
base=$(live)
nfg_topo_up
sc() { nfg_server nfguard syncookie "$@"; }
statf=$NFG_WORK/stat
snap() { sc stats >"$statf" || nfg_fail "nfguard syncookie stats"; }
stat() { nfg_kv "$statf" "$1"; }
listed() { sc allowlist list | grep -q "^$1 "; }

# ---- control plane
nfg_assert_ok "add" sc allowlist add 192.0.2.1
nfg_assert_ok "add /24" sc allowlist add 198.51.100.77/24 timeout 60
nfg_assert_ok "add v6 /64" sc allowlist add 2001:db8:1:2:3::4/64
out=$(sc allowlist list | sort)
nfg_assert_match "^192\.0\.2\.1/32 expires-in (29[0-9]|300)$" "$(grep ^192.0.2.1/ <<<"$out")" "list /32"
nfg_assert_match "^198\.51\.100\.0/24 expires-in [56][0-9]$" "$(grep ^198.51.100 <<<"$out")" "list /24 masked"
nfg_assert_match "^2001:db8:1:2::/64 expires-in " "$(grep ^2001 <<<"$out")" "list v6 /64 masked"
nfg_assert_ok "not in another netns" test -z "$(nfg_client nfguard syncookie allowlist list)"
nfg_assert_fail "del absent" sc allowlist del 192.0.2.2
nfg_assert_match "not on the allowlist" "$(cat "$NFG_WORK/assert.out")" "del absent message"
nfg_assert_fail "bad address" sc allowlist add 192.0.2.300
nfg_assert_fail "bad prefix" sc allowlist add 192.0.2.1/33
nfg_assert_fail "bad timeout" sc allowlist add 192.0.2.1 timeout 0
nfg_assert_ok "del" sc allowlist del 198.51.100.5/24
nfg_assert_fail "deleted" listed 198.51.100.0/24
# save / flush / restore
sc allowlist save >"$NFG_WORK/save" || nfg_fail "save"
nfg_assert_eq 2 "$(grep -c '^add .* timeout [0-9]*$' "$NFG_WORK/save")" "saved lines"
nfg_assert_ok "flush" sc allowlist flush
nfg_assert_eq "" "$(sc allowlist list)" "empty after flush"
nfg_assert_ok "restore" nfg_server nfguard syncookie allowlist restore -f "$NFG_WORK/save"
nfg_assert_ok "restored v4" listed 192.0.2.1/32
nfg_assert_ok "restored v6" listed 2001:db8:1:2::/64
printf 'add 10.1.1.1\nbogus line\n' >"$NFG_WORK/bad"
nfg_assert_fail "restore bad line" nfg_server nfguard syncookie allowlist restore -f "$NFG_WORK/bad"
nfg_assert_match "line 2" "$(cat "$NFG_WORK/assert.out")" "restore names the bad line"
# secret
nfg_assert_ok "secret set" sc secret set 000102030405060708090a0b0c0d0e0f
nfg_assert_ok "secret rotate" sc secret rotate
nfg_assert_fail "secret short" sc secret set 0001
nfg_assert_fail "secret not hex" sc secret set 000102030405060708090a0b0c0d0e0g

# ---- bound and LRU eviction (max 4)
nfg_assert_ok "flush" sc allowlist flush
nfg_assert_ok "add a" sc allowlist add 10.9.0.1
t0=${EPOCHREALTIME%.*}
# the allowlist's clock has whole seconds: let a become the oldest
while [ "${EPOCHREALTIME%.*}" -lt $((t0 + 2)) ]; do nfg_sleep 0.2; done
for a in 10.9.0.2 10.9.0.3 10.9.0.4; do nfg_assert_ok "add $a" sc allowlist add $a; done
snap
ev=$(stat allowlist_evict)
nfg_assert_eq 4 "$(stat allowlist_entries)" "entries at the bound"
nfg_assert_ok "add e" sc allowlist add 10.9.0.5
snap
nfg_assert_eq 4 "$(stat allowlist_entries)" "entries stay at the bound"
nfg_assert_eq $((ev + 1)) "$(stat allowlist_evict)" "allowlist_evict"
nfg_assert_fail "LRU entry evicted" listed 10.9.0.1/32
for a in 10.9.0.2 10.9.0.3 10.9.0.4 10.9.0.5; do nfg_assert_ok "$a kept" listed $a/32; done

# ---- expiry by hand
nfg_assert_ok "flush" sc allowlist flush
# (a 2 s entry may be gone already when a slow kernel lists it: it is either
# listed with at most 2 s left, or not at all; the 600 s one stays)
nfg_assert_ok "add short" sc allowlist add 10.9.1.1 timeout 2
nfg_assert_ok "add long" sc allowlist add 10.9.1.2 timeout 600
nfg_assert_ok "long listed" listed 10.9.1.2/32
left=$(sc allowlist list | sed -n 's#^10\.9\.1\.1/32 expires-in \([0-9]*\).*#\1#p')
[ -z "$left" ] || nfg_assert_le "$left" 2 "seconds left of the 2 s entry"
nfg_wait_until 20 eval '! listed 10.9.1.1/32' || nfg_fail "entry did not expire"
nfg_assert_ok "the 600 s entry outlives it" listed 10.9.1.2/32
freed() { snap; [ "$(stat allowlist_entries)" = 1 ]; }
nfg_wait_until 20 freed || nfg_fail "expired entry not freed ($(stat allowlist_entries) entries)"
nfg_assert_ok "flush" sc allowlist flush

# ---- expiry of a real client's entry
port=8080
mkdir -p "$NFG_WORK/www" || nfg_fail "mkdir"
echo hello >"$NFG_WORK/www/index.html" || nfg_fail "www"
nfg_http_server "$NFG_NS_S" $port "$NFG_WORK/www"
nfg_assert_ok "rule" nfg_ipt "$NFG_NS_S" legacy 4 -t raw -A PREROUTING -p tcp --dport $port \
	-j SYNCOOKIE --mode local --sack-perm --timestamp --allowlist-timeout 2
snap
v0=$(stat ack_valid) a0=$(stat allowlist_add)
nfg_assert_ok "fetch 1" nfg_client curl -sS -m 30 -o /dev/null "http://$NFG_S4:$port/"
snap
nfg_assert_eq $((v0 + 1)) "$(stat ack_valid)" "cookie ACK of fetch 1"
# (counted, not listed: a slow kernel may list it after its 2 s are over)
nfg_assert_eq $((a0 + 1)) "$(stat allowlist_add)" "client allowlisted"
nfg_wait_until 20 eval "! listed $NFG_C4/32" || nfg_fail "client entry did not expire"
nfg_assert_ok "fetch 2" nfg_client curl -sS -m 30 -o /dev/null "http://$NFG_S4:$port/"
snap
nfg_assert_eq $((v0 + 2)) "$(stat ack_valid)" "fetch 2 went through a cookie again"

# ---- netns teardown frees its allowlist; rmmod is clean
nfg_assert_ok "add" sc allowlist add 10.9.2.1
nfg_assert_ok "add" sc allowlist add 10.9.2.2
nfg_topo_down
at_base() { [ "$(live)" -eq "$base" ]; }
nfg_wait_until 60 at_base || nfg_fail "live_objects $(live) after netns teardown, baseline $base"
rmmod xt_SYNCOOKIE || nfg_fail "rmmod xt_SYNCOOKIE"
nfg_assert_fail "module gone" test -e /sys/module/xt_SYNCOOKIE
nfg_log "ok"
