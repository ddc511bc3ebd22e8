#!/bin/bash
# nfguard protect / unprotect report what nf_tables did (nfguard(8), PROTECT):
#  - a large profile (32 SYNCOOKIE ports, 32 kconnlimit ports, blocklist,
#    RTCACHE, both families: ~230 nf_tables messages) that nf_tables rejects
#    late in the batch (the ip6 nfguard table is held by another process's
#    socket, NFT_TABLE_F_OWNER: its delete fails with EPERM) makes protect
#    exit 1 naming the refused operation, and the ruleset is byte for byte
#    what it was; also with a receive buffer default too small for the
#    kernel's answers (net.core.rmem_default): a lost answer is never taken
#    for success;
#  - a table named nfguard that protect did not create (no "managed by
#    nfguard protect" comment) is the user's: protect refuses to replace it
#    (exit 1, nothing changed), unprotect and protect --show leave it alone
#    with a warning: line;
#  - the dump's generation id goes into the batch (NFNL_BATCH_GENID): protect
#    run while another process commits a change 100 times a second retries
#    the batch nf_tables refused with ERESTART and succeeds every time.
# nfg-case-timeout: 300
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need nft python3

nfg_load_modules xt_rangeset xt_kconnlimit xt_SYNCOOKIE xt_RTCACHE
modprobe nft_compat || nfg_fail "modprobe nft_compat"
ns=nfg-ptrust
ip netns add $ns || nfg_fail "netns"
nfg_on_exit ip netns del $ns
P() { nfg_in $ns nfguard "$@"; }
rs() { nfg_in $ns nft list ruleset; }
P set create bl ipv4 || nfg_fail "set create"

ports=$(seq -s, 1001 1032)
big=(--syncookie "tcp/$ports" --kconnlimit 8/24 "tcp/$ports" --blocklist bl --rtcache)

# ---- a table named nfguard that is not ours -----------------------------------
nfg_in $ns nft -f - <<-'EOF2' || nfg_fail "user table"
	table ip nfguard {
		chain mine { type filter hook input priority 0; policy accept; tcp dport 7 counter drop; }
	}
EOF2
before=$(rs)
nfg_expect_exit 1 'table ip nfguard exists and was not created by nfguard protect' P protect --rtcache
nfg_assert_eq "$before" "$(rs)" "protect beside a user's table nfguard: ruleset unchanged"
nfg_expect_exit 0 'warning: .*table ip nfguard .*not created by nfguard protect.* left alone' P unprotect
nfg_assert_eq "$before" "$(rs)" "unprotect beside a user's table nfguard: ruleset unchanged"
nfg_assert_eq "" "$(P protect --show 2>/dev/null)" "--show shows nothing of the user's table"
nfg_in $ns nft delete table ip nfguard || nfg_fail "delete user table"

# ---- a late rejection inside a large profile ---------------------------------
nfg_log "a user's table nfguard: ok"
nfg_assert_ok "small profile, ip only" P protect -4 --rtcache
nfg_bg $ns python3 "$NFG_TOP/tests/protect/owned_table.py" ip6 nfguard "managed by nfguard protect"
owner=$NFG_LAST_PID
nfg_wait_until 60 nfg_in $ns nft list table ip6 nfguard >/dev/null || nfg_fail "owned table not created"
before=$(rs)
nfg_expect_exit 1 'nftables refused .*delete table ip6 nfguard.*: Operation not permitted' P protect "${big[@]}"
nfg_assert_eq "$before" "$(rs)" "rejected large profile: ruleset unchanged"
rmem=$(cat /proc/sys/net/core/rmem_default)
nfg_on_exit sysctl -qw net.core.rmem_default="$rmem"
sysctl -qw net.core.rmem_default=4096 || nfg_fail "rmem_default"
nfg_expect_exit 1 'nftables refused' P protect "${big[@]}"
nfg_assert_eq "$before" "$(rs)" "rejected large profile, small receive buffer: ruleset unchanged"
nfg_expect_exit 1 'nftables refused' P unprotect
nfg_assert_eq "$before" "$(rs)" "rejected unprotect: ruleset unchanged"
sysctl -qw net.core.rmem_default="$rmem" || nfg_fail "rmem_default back"
kill "$owner"
nfg_wait_until 60 eval '! nfg_in $ns nft list table ip6 nfguard >/dev/null 2>&1' ||
	nfg_fail "owned table not gone with its owner"
nfg_assert_ok "large profile once nothing holds the table" P protect "${big[@]}"
show=$(P protect --show) || nfg_fail "show"
nfg_assert_eq 192 "$(grep -c -e "--dport 10[0-9][0-9]" <<<"$show")" "port rules of the large profile (2 families x (32 SYNCOOKIE + 2 x 32 kconnlimit))"

nfg_log "late rejection: ok"
# ---- a ruleset that changes all the time -------------------------------------
nfg_bg $ns python3 "$NFG_TOP/tests/protect/owned_table.py" --churn ip churn
churn=$NFG_LAST_PID
for i in 1 2 3; do
	nfg_assert_ok "protect $i during churn" P protect "${big[@]}"
done
kill "$churn"
nfg_assert_eq "$show" "$(P protect --show)" "the profile after the churn"
nfg_assert_ok "unprotect" P unprotect
nfg_assert_eq "" "$(P protect --show)" "nothing left"
nfg_log "ok"
