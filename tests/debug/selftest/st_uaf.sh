#!/bin/bash
# check-debug self-check: a planted use-after-free. nfg_splat uaf=1 reads a
# kfree()d kmalloc object; KASAN must report slab-use-after-free and the
# harness must fail this case although it exits 0. Runs last in its boot:
# a KASAN report taints the kernel, which switches lockdep off.
ko=$NFG_TOP/build/vm/$NFG_KABI/debug-selftest/splat/nfg_splat.ko
[ -f "$ko" ] || { echo "missing $ko (built by tests/debug/selftest.sh)"; exit 3; }
if insmod "$ko" uaf=1; then echo "insmod unexpectedly succeeded"; exit 4; fi
exit 0
