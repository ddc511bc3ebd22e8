#!/bin/bash
# Selftest: a failing assertion -> exit 1; the harness must report "exit 1".
# shellcheck source=tests/vm/lib.sh
. "$NFG_TOP/tests/vm/lib.sh"
nfg_assert_eq 1 2 "deliberately failing assertion"
