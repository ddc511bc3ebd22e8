#!/bin/bash
# The SYNCOOKIE allowlist listing is complete whatever the hash chains'
# lengths: with one bucket (module parameter allowlist_buckets=1) holding
# 400 IPv4 and 400 IPv6 entries (far more than one dump callback copies,
# and IPv6 messages that do not fit one skb together), "nfguard syncookie
# allowlist list" shows every entry exactly once; and with the default
# parameters the hash table is sized from the bound (allowlist_max 65536,
# allowlist_buckets 0 = auto).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"

nfg_load_modules xt_SYNCOOKIE
rmmod xt_SYNCOOKIE || nfg_fail "rmmod"
insmod "$NFG_KMOD_DIR/xt_SYNCOOKIE.ko" allowlist_buckets=1 allowlist_max=2000 ||
	nfg_fail "insmod allowlist_buckets=1"
ns=nfg-dump
ip netns add $ns || nfg_fail "netns"
nfg_on_exit "ip netns del $ns 2>/dev/null"
f=$NFG_WORK/restore
for ((i = 0; i < 400; i++)); do
	echo "add 10.20.$((i / 256)).$((i % 256))/32 timeout 600"
	echo "add fd00:20::$((i / 256)):$((i % 256))/128 timeout 600"
done >"$f"
nfg_assert_ok "restore 800 entries" nfg_in $ns nfguard syncookie allowlist restore -f "$f"
nfg_in $ns nfguard syncookie allowlist list >"$NFG_WORK/list" || nfg_fail "list: $(cat "$NFG_WORK/list")"
nfg_assert_eq 800 "$(nfg_in $ns cat /proc/net/stat/nfguard_syncookie | sed -n 's/^allowlist_entries //p')" \
	"entries in the table"
nfg_assert_eq 400 "$(grep -c '^10\.20\.' "$NFG_WORK/list")" "IPv4 entries listed"
nfg_assert_eq 400 "$(grep -c '^fd00:20::' "$NFG_WORK/list")" "IPv6 entries listed"
nfg_assert_eq 800 "$(cut -d' ' -f1 "$NFG_WORK/list" | sort -u | wc -l)" "distinct entries listed"
ip netns del $ns || nfg_fail "netns del"
nfg_wait_until 30 rmmod xt_SYNCOOKIE || nfg_fail "rmmod"
insmod "$NFG_KMOD_DIR/xt_SYNCOOKIE.ko" || nfg_fail "insmod"
P=/sys/module/xt_SYNCOOKIE/parameters
nfg_assert_eq 65536 "$(cat $P/allowlist_max)" "default allowlist_max"
nfg_assert_eq 0 "$(cat $P/allowlist_buckets)" "default allowlist_buckets (auto)"
nfg_log "ok"
