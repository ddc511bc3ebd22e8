#!/bin/bash
# Selftest: a real Oops (NULL dereference in module init). With oops=panic and
# panic=-1 the guest reboots, QEMU exits; the harness must report this case as
# failed (guest died, Oops on the console) and the following ones as not run.
ko=$NFG_TOP/build/vm/$NFG_KABI/selftest/splat/nfg_splat.ko
[ -f "$ko" ] || { echo "missing $ko (built by selftest.sh)"; exit 3; }
insmod "$ko" oops=1
sleep 30
exit 0
