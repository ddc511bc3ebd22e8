# Mainline xt_connlimit, forms that print the same for IPv4 and IPv6
# (explicit --connlimit-mask). Family defaults: libipt_/libip6t_connlimit.t.
:INPUT,FORWARD,OUTPUT
-m connlimit --connlimit-above 2 --connlimit-mask 24;-m connlimit --connlimit-above 2 --connlimit-mask 24 --connlimit-saddr;OK
-m connlimit --connlimit-upto 10 --connlimit-mask 16 --connlimit-saddr;=;OK
-m connlimit --connlimit-upto 0 --connlimit-mask 0;-m connlimit --connlimit-upto 0 --connlimit-mask 0 --connlimit-saddr;OK
-m connlimit --connlimit-above 4294967295 --connlimit-mask 24 --connlimit-daddr;=;OK
# "! --connlimit-above N" is stored as --connlimit-upto N
-m connlimit ! --connlimit-above 2 --connlimit-mask 24 --connlimit-daddr;-m connlimit --connlimit-upto 2 --connlimit-mask 24 --connlimit-daddr;OK
-m connlimit ! --connlimit-upto 2 --connlimit-mask 24;-m connlimit --connlimit-above 2 --connlimit-mask 24 --connlimit-saddr;OK
-p tcp --syn -m connlimit --connlimit-above 3 --connlimit-mask 24 -j REJECT --reject-with tcp-reset;-p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN -m connlimit --connlimit-above 3 --connlimit-mask 24 --connlimit-saddr -j REJECT --reject-with tcp-reset;OK
-m connlimit;;FAIL
-m connlimit --connlimit-above 2 --connlimit-upto 3;;FAIL
-m connlimit --connlimit-above 4294967296;;FAIL
-m connlimit --connlimit-above -1;;FAIL
-m connlimit --connlimit-above 1 --connlimit-saddr --connlimit-daddr;;FAIL
-m connlimit --connlimit-above 1 --connlimit-mask foo;;FAIL
