#!/bin/bash
# check-debug self-check: a planted use-after-free. nfg_splat uaf=1 reads a
# kfree()d kmalloc object; KASAN must report slab-use-after-free and the
# harness must fail this case although it exits 0. Runs after st_lockinv:
# a KASAN report taints the kernel, which switches lockdep off; and before
# st_leak, which leaves nfg_splat loaded.
ko=$NFG_TOP/build/vm/$NFG_KABI/debug-selftest/splat/nfg_splat.ko
[ -f "$ko" ] || { echo "missing $ko (built by tests/debug/selftest.sh)"; exit 3; }
# Init must have run and failed with -EAGAIN (not, say, EEXIST because an
# earlier case left nfg_splat loaded).
if insmod "$ko" uaf=1 2>insmod.err; then echo "insmod unexpectedly succeeded"; exit 4; fi
cat insmod.err
grep -q 'Resource temporarily unavailable' insmod.err || { echo "insmod failed, but not in nfg_splat's init"; exit 5; }
exit 0
