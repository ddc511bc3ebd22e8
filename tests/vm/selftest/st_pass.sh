#!/bin/bash
# Selftest: a passing case (builds the topology, so the library is exercised).
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_topo_up
nfg_assert_ok "ping" nfg_client ping -c 1 -W 2 "$NFG_S4"
