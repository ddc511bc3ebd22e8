# nfguard kconnlimit match (IPv4 and IPv6): connlimit's options renamed, so
# the same forms save the same way (limit, mask and saddr/daddr always printed).
:INPUT,FORWARD,OUTPUT
-m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 24;-m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 24 --kconnlimit-saddr;OK
-m kconnlimit --kconnlimit-upto 10 --kconnlimit-mask 16 --kconnlimit-saddr;=;OK
-m kconnlimit --kconnlimit-upto 0 --kconnlimit-mask 0;-m kconnlimit --kconnlimit-upto 0 --kconnlimit-mask 0 --kconnlimit-saddr;OK
-m kconnlimit --kconnlimit-above 4294967295 --kconnlimit-mask 24 --kconnlimit-daddr;=;OK
-m kconnlimit ! --kconnlimit-above 2 --kconnlimit-mask 24 --kconnlimit-daddr;-m kconnlimit --kconnlimit-upto 2 --kconnlimit-mask 24 --kconnlimit-daddr;OK
-m kconnlimit ! --kconnlimit-upto 2 --kconnlimit-mask 24;-m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 24 --kconnlimit-saddr;OK
-m kconnlimit --kconnlimit-above 100 --kconnlimit-mask 24 --kconnlimit-saddr --kconnlimit-name web-24;=;OK
-m kconnlimit --kconnlimit-name web --kconnlimit-above 1 --kconnlimit-mask 8;-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask 8 --kconnlimit-saddr --kconnlimit-name web;OK
-p tcp --syn -m kconnlimit --kconnlimit-above 3 --kconnlimit-mask 24 -j REJECT --reject-with tcp-reset;-p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m kconnlimit --kconnlimit-above 3 --kconnlimit-mask 24 --kconnlimit-saddr -j REJECT --reject-with tcp-reset;OK
-m kconnlimit --kconnlimit-above 3 --kconnlimit-mask 24 -m kconnlimit --kconnlimit-upto 9 --kconnlimit-mask 16 --kconnlimit-daddr;-m kconnlimit --kconnlimit-above 3 --kconnlimit-mask 24 --kconnlimit-saddr -m kconnlimit --kconnlimit-upto 9 --kconnlimit-mask 16 --kconnlimit-daddr;OK
# every combination connlimit rejects; the plugin's option checks do not
# depend on the chain, so the rejections are checked in INPUT only
:INPUT
-m kconnlimit;;FAIL
-m kconnlimit --kconnlimit-mask 24;;FAIL
-m kconnlimit --kconnlimit-above 2 --kconnlimit-upto 3;;FAIL
-m kconnlimit --kconnlimit-above 4294967296;;FAIL
-m kconnlimit --kconnlimit-above -1;;FAIL
-m kconnlimit --kconnlimit-upto -5;;FAIL
-m kconnlimit --kconnlimit-above x;;FAIL
-m kconnlimit --kconnlimit-above "";;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-saddr --kconnlimit-daddr;;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask foo;;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask 129;;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask -1;;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-above 2;;FAIL
# and the name: too long, empty, odd characters
-m kconnlimit --kconnlimit-above 1 --kconnlimit-name aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-name "";;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-name a/b;;FAIL
# raw runs before conntrack: the rule would count nothing, so the kernel refuses it
*raw
:PREROUTING,OUTPUT
-p tcp -m kconnlimit --kconnlimit-above 5 --kconnlimit-mask 24 -j DROP;;FAIL
*mangle
:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
-m kconnlimit --kconnlimit-upto 7 --kconnlimit-mask 0 --kconnlimit-daddr;=;OK
