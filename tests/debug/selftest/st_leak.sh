#!/bin/bash
# check-debug self-check: a planted memory leak. nfg_splat leak=1 kmalloc()s
# 1234 bytes starting "nfg_splat leak" and forgets them; the module has no
# exit function and stays loaded, so kmemleak's backtrace can name it. This
# case passes (nothing is wrong yet in the kernel log); the kmemleak_check.sh
# case run after it must fail and list the object.
ko=$NFG_TOP/build/vm/$NFG_KABI/debug-selftest/splat/nfg_splat.ko
[ -f "$ko" ] || { echo "missing $ko (built by tests/debug/selftest.sh)"; exit 3; }
insmod "$ko" leak=1 || { echo "insmod nfg_splat.ko leak=1 failed"; exit 4; }
grep -q '^nfg_splat ' /proc/modules || { echo "nfg_splat not loaded after insmod"; exit 5; }
exit 0
