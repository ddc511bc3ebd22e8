# Mainline tcp match (a subset written for nfguard), filter and raw tables.
:INPUT,FORWARD,OUTPUT
-p tcp --dport 80;-p tcp -m tcp --dport 80;OK
-p tcp -m tcp --sport 1024:65535 --dport 22;=;OK
-p tcp -m tcp ! --dport 80:90;=;OK
-p tcp --sport :80;-p tcp -m tcp --sport 0:80;OK
-p tcp --dport 0:;-p tcp -m tcp;OK
-p tcp --syn -j DROP;-p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -j DROP;OK
-p tcp ! --syn;-p tcp -m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN;OK
-p tcp --tcp-flags ALL NONE;-p tcp -m tcp --tcp-flags FIN,SYN,RST,PSH,ACK,URG NONE;OK
-p tcp -m tcp --tcp-option 2;=;OK
-p tcp --sport 90:80;;FAIL
-p tcp --dport 65536;;FAIL
-p tcp --dport foo;;FAIL
-p tcp --tcp-flags SYN;;FAIL
# tcp without -p tcp: rejected by the kernel (legacy) or by iptables-nft itself
-m tcp --dport 80;;FAIL
*raw
:PREROUTING,OUTPUT
-p tcp --dport 80 --syn -j DROP;-p tcp -m tcp --dport 80 --tcp-flags FIN,SYN,RST,ACK SYN -j DROP;OK
-p tcp -m tcp --dport 80 -j NOTRACK;=;OK
# a user-defined chain (created by the runner)
:nfg_test
-p tcp -m tcp --dport 443 -j ACCEPT;=;OK
