#!/bin/bash
# Self-test of the .t runner inside the guest: a deliberately wrong .t file
# (tests/xt/selftest/libxt_wrong.t) must be reported as exactly the expected
# failures, a correct one must pass, nothing may leak out of the runner's netns.
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_need unshare timeout iptables-legacy ip6tables-legacy iptables-nft ip6tables-nft
"$NFG_TOP/tests/xt/selftest/run.sh" || nfg_fail "the .t runner self-test failed (see above)"
