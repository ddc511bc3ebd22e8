#!/bin/bash
# Selftest: triggers a real kernel WARNING (module init WARN_ON(1), -EAGAIN)
# and exits 0; the harness must fail it from the kernel log.
ko=$NFG_TOP/build/vm/$NFG_KABI/selftest/splat/nfg_splat.ko
[ -f "$ko" ] || { echo "missing $ko (built by selftest.sh)"; exit 3; }
if insmod "$ko"; then echo "insmod unexpectedly succeeded"; exit 4; fi
exit 0
