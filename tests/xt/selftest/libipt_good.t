# A correct file that exercises every feature of the format; run-xt.sh must pass
# it with 0 failures (tests/xt/selftest/run.sh).
*filter
:INPUT,OUTPUT
@true
-p udp --dport 53;-p udp -m udp --dport 53;OK
-p udp --dport 53:foo;;FAIL
-m connlimit --connlimit-above 1 --connlimit-mask 33;=;NOMATCH
-j NFLOG --nflog-range 1;=;OK;LEGACY;NOMATCH
-j NFLOG --nflog-range 1;=;NOMATCH;NFT
-m comment --comment "a b";=;OK
*mangle
:PREROUTING,POSTROUTING,my_chain
-j MARK --set-mark 1;-j MARK --set-xmark 0x1/0xffffffff;OK
-p icmp;=;OK
*raw
:PREROUTING
-c 5 7 -p tcp;-p tcp;OK
