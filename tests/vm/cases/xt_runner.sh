#!/bin/bash
# iptables .t files: runs every tests/xt/*.t with tests/xt/run-xt.sh against
# iptables-legacy and iptables-nft (and ip6tables-*) inside the guest kernel,
# with XTABLES_LIBDIR as given by the harness (our plugins first).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need unshare timeout iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft \
	iptables-legacy-save iptables-nft-restore ipset

# shellcheck disable=SC2119 # no args: load all of our modules
nfg_load_modules # our matches; mainline ones autoload
files=("$NFG_TOP"/tests/xt/*.t)
[ -e "${files[0]}" ] || nfg_fail "no .t files in $NFG_TOP/tests/xt"
nfg_log "XTABLES_LIBDIR=${XTABLES_LIBDIR:-<unset>}, ${#files[@]} files"
cd "$NFG_TOP" || nfg_fail "cd $NFG_TOP"
"$NFG_TOP/tests/xt/run-xt.sh" -b both "${files[@]/#$NFG_TOP\//}" ||
	nfg_fail "run-xt.sh reported failures (see above)"
