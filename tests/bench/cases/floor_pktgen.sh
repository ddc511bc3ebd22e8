#!/bin/bash
# The floor bench (tests/bench/cases/floor.sh) with pktgen in netif_receive
# mode: UDP from random sources injected straight into rx0's receive path. No
# generator process and no veth hop, so the per-packet cost of a ruleset is a
# much larger share of the figure than with trafgen: use this generator for
# lookup-cost benches that do not need TCP SYNs.
NFB_GEN=pktgen
# shellcheck source=tests/bench/cases/floor.sh
. "$NFG_TOP/tests/bench/cases/floor.sh"
