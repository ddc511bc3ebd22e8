#!/bin/bash
# nfg-case-timeout: 10
# Selftest: a whole-guest hang: panic without reboot (kernel.panic=0), so
# nothing in the guest can report anymore; the host must kill QEMU.
echo 0 >/proc/sys/kernel/panic
echo c >/proc/sysrq-trigger
sleep 30
exit 0
