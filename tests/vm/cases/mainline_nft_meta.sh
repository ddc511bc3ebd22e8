#!/bin/bash
# Mainline regression: the kernel's own selftest net/netfilter/nft_meta.sh passes
# with every nfguard module loaded and nfguard sets and rules in the initial
# netns, which stay intact (tests/mainline/lib.sh).
. "$NFG_TOP/tests/vm/lib.sh"
. "$NFG_TOP/tests/mainline/lib.sh"
nfg_mainline_run nft_meta.sh
