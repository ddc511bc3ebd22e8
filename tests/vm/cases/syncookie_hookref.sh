#!/bin/bash
# nfg-case-timeout: 600
# Proxy-mode rules hold nf_synproxy_core's per-netns hooks (IPv4 and IPv6):
# the first rule of a family registers them, the last one unregisters them.
# Rules come and go from three contexts at once - iptables-legacy's
# checkentry/destroy, iptables-nft's checkentry (nf_tables' commit mutex) and
# its destroy (nf_tables' destroy work, after the command returned) - and a
# lost update of the count leaves the hooks registered with no rule, or
# missing under a rule (that rule's proxied connections never complete), or
# unregisters them twice ("hook not found" warning: the harness fails the
# case on it).
# Here four loops (legacy and nft, IPv4 and IPv6) replace the router's raw
# table with proxy rules and with an empty one, concurrently, in one netns.
# The hooks are counted by what they do: a kprobe on each family's synproxy
# hook function counts its calls for pings from the client to the router
# (each crosses the router's LOCAL_IN and POST_ROUTING; only the router's
# netns can have the hooks; 6.1 has no nfnetlink_hook to list them). Then,
# with no rule left: no call (waited for: nf_tables destroys its rules
# late); then a fresh rule works (a download through it is proxied and
# intact), its hooks are called as often as a single rule's were before
# the loops, not twice as often (registered twice), and its deletion
# removes them.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need ping curl python3 iptables-legacy-restore ip6tables-legacy-restore iptables-nft-restore ip6tables-nft-restore

nfg_load_modules xt_SYNCOOKIE
nfg_topo_up
R=$NFG_NS_R
rounds=${NFG_SC_HOOKREF_ROUNDS:-40}	# 40 x 4 loops at once; make check budget (100 ran in ~140 s)
rules=${NFG_SC_HOOKREF_RULES:-1}

T=/sys/kernel/tracing
cleanup() {
	local f
	for f in 4 6; do
		[ ! -d $T/events/kprobes/nfg_sp$f ] ||
			{ echo 0 >$T/events/kprobes/nfg_sp$f/enable; echo "-:nfg_sp$f" >>$T/kprobe_events; }
	done
}
nfg_on_exit cleanup
[ -d $T/events ] || mount -t tracefs nodev $T || nfg_fail "tracefs"
# MOD:SYM waits for a module that is not loaded yet; a built-in
# nf_synproxy_core (the debug kernel) is probed by its symbol alone
mod=nf_synproxy_core:
! grep -q '/nf_synproxy_core\.ko' "/lib/modules/$(uname -r)/modules.builtin" 2>/dev/null || mod=
for f in 4 6; do
	echo "p:nfg_sp$f ${mod}ipv${f}_synproxy_hook" >>$T/kprobe_events || nfg_fail "kprobe IPv$f hook"
	echo 1 >$T/events/kprobes/nfg_sp$f/enable || nfg_fail "enable kprobe IPv$f"
done
hits() { awk -v e="$1" '$1 == e { print $2 }' $T/kprobe_profile; }
# calls of the IPv4 or IPv6 synproxy hook for 3 pings to the router
calls() {
	local h0
	h0=$(hits nfg_sp$1)
	if [ "$1" = 4 ]; then
		nfg_client ping -q -c 3 -i 0.2 -W 5 "$NFG_RC4" >/dev/null || nfg_fail "ping router"
	else
		nfg_client ping -6 -q -c 3 -i 0.2 -W 5 "$NFG_RC6" >/dev/null || nfg_fail "ping6 router"
	fi
	echo $(($(hits nfg_sp$1) - h0))
}
no_hooks() { [ "$(calls 4)" = 0 ] && [ "$(calls 6)" = 0 ]; }

# the restore files: a batch of proxy rules, and an empty raw table
for fam in 4 6; do
	{
		echo '*raw'
		for i in $(seq "$rules"); do
			echo "-A PREROUTING -p tcp --dport $((9000 + i)) -j SYNCOOKIE"
		done
		echo COMMIT
	} >"$NFG_WORK/full$fam"
	printf '*raw\nCOMMIT\n' >"$NFG_WORK/empty$fam"
done

# positive control: one rule per family, the hook calls it makes
declare -A one
for fam in 4 6; do
	nfg_assert_eq 0 "$(calls $fam)" "IPv$fam synproxy hook calls before any rule"
	nfg_assert_ok "one rule" nfg_ipt "$R" legacy $fam -t raw -A PREROUTING -p tcp -j SYNCOOKIE
	one[$fam]=$(calls $fam)
	nfg_assert_ge "${one[$fam]}" 1 "IPv$fam synproxy hook calls under a proxy rule"
	nfg_assert_ok "delete it" nfg_ipt "$R" legacy $fam -t raw -D PREROUTING -p tcp -j SYNCOOKIE
	nfg_assert_eq 0 "$(calls $fam)" "IPv$fam synproxy hook calls after its deletion"
done

loop() { # loop legacy|nft 4|6: one shell in the router's netns runs the
	# restores (an "ip netns exec" per restore doubled each one's cost)
	local bin=iptables
	[ "$2" = 6 ] && bin=ip6tables
	# shellcheck disable=SC2016
	ip netns exec "$R" bash -c 'for ((n = 0; n < $1; n++)); do
			"$2" -w <"$3" || exit 1
			"$2" -w <"$4" || exit 1
		done' loop "$rounds" "$bin-$1-restore" "$NFG_WORK/full$2" "$NFG_WORK/empty$2"
}
pids=()
for v in legacy nft; do
	for fam in 4 6; do
		loop "$v" "$fam" >"$NFG_WORK/loop.$v$fam.log" 2>&1 &
		pids+=($!)
	done
done
for p in "${pids[@]}"; do
	wait "$p" || nfg_fail "a restore loop failed: $(cat "$NFG_WORK"/loop.*.log)"
done
nfg_log "$rounds rounds of $rules rules x 4 loops done at ${SECONDS}s"

for v in legacy nft; do
	for fam in 4 6; do
		nfg_assert_eq "" "$(nfg_ipt "$R" "$v" "$fam" -t raw -S PREROUTING | grep SYNCOOKIE)" "$v IPv$fam rules left"
	done
done
nfg_wait_until 60 no_hooks ||
	nfg_fail "no rule left, yet the synproxy hooks are called: IPv4 $(calls 4), IPv6 $(calls 6) times for 3 pings"

# a fresh rule per family still works: its hooks finish proxied handshakes
www=$NFG_WORK/www
mkdir -p "$www" && head -c 200000 /dev/urandom >"$www/blob" || nfg_fail "test file"
want=$(nfg_sha256 "$www/blob")
nfg_http_server "$NFG_NS_S" 8080 "$www"
proxied() { nfg_kv <(ip netns exec "$R" cat /proc/net/stat/nfguard_syncookie) proxied; }
for fam in 4 6; do
	if [ $fam = 4 ]; then url=http://$NFG_S4:8080/blob v=legacy; else url="http://[$NFG_S6]:8080/blob" v=nft; fi
	nfg_assert_ok "fresh rule IPv$fam" nfg_ipt "$R" $v $fam -t raw -A PREROUTING -i eth0 -p tcp --dport 8080 -j SYNCOOKIE
	nfg_assert_ok "flush allowlist" nfg_router nfguard syncookie allowlist flush
	p=$(proxied)
	nfg_fetch_intact "$url" "$want"
	nfg_assert_ge "$(proxied)" $((p + 1)) "IPv$fam download proxied"
	# registered once: as many calls as one rule made before the loops;
	# twice: twice the calls. IPv4's 3 pings make a fixed count; IPv6's
	# vary by the neighbour messages of the moment (7 against 8 seen), so
	# there the lower bound is "called at all", the upper one below double.
	n=$(calls $fam)
	lo=${one[$fam]}
	[ $fam = 4 ] || lo=1
	nfg_assert_ge "$n" "$lo" "IPv$fam synproxy hook calls under the fresh rule"
	nfg_assert_le "$n" $((2 * one[$fam] - 1)) "IPv$fam synproxy hook calls under the fresh rule (${one[$fam]} for one rule before the loops)"
	nfg_assert_ok "delete it" nfg_ipt "$R" $v $fam -t raw -D PREROUTING -i eth0 -p tcp --dport 8080 -j SYNCOOKIE
done
nfg_wait_until 60 no_hooks ||
	nfg_fail "fresh rules deleted, yet the synproxy hooks are called: IPv4 $(calls 4), IPv6 $(calls 6) times"
nfg_log "ok"
