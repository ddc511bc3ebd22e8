#!/bin/bash
# nfg-case-timeout: 12
# Selftest: a case that never returns (and a child ignoring SIGTERM); the
# harness must kill it at the per-case timeout and report "timeout".
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
(trap '' TERM; exec sleep 100000) &
sleep 100000
