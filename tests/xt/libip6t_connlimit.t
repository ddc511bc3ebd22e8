# Mainline xt_connlimit, IPv6 defaults.
:INPUT,FORWARD,OUTPUT
-m connlimit --connlimit-above 2;-m connlimit --connlimit-above 2 --connlimit-mask 128 --connlimit-saddr;OK
-m connlimit --connlimit-upto 2 --connlimit-mask 64 --connlimit-daddr;=;OK
-m connlimit --connlimit-above 1 --connlimit-mask 128 --connlimit-saddr;=;OK
-m connlimit --connlimit-above 1 --connlimit-mask 129;;FAIL
