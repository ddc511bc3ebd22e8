#!/bin/bash
# check-debug self-check: a planted lock inversion. nfg_splat lockinv=1 takes
# two mutexes as A-B, then as B-A (no deadlock: one task, one after the
# other); lockdep must report "possible circular locking dependency" and the
# harness must fail this case although it exits 0.
ko=$NFG_TOP/build/vm/$NFG_KABI/debug-selftest/splat/nfg_splat.ko
[ -f "$ko" ] || { echo "missing $ko (built by tests/debug/selftest.sh)"; exit 3; }
# Init must have run and failed with -EAGAIN (not, say, EEXIST because an
# earlier case left nfg_splat loaded).
if insmod "$ko" lockinv=1 2>insmod.err; then echo "insmod unexpectedly succeeded"; exit 4; fi
cat insmod.err
grep -q 'Resource temporarily unavailable' insmod.err || { echo "insmod failed, but not in nfg_splat's init"; exit 5; }
exit 0
