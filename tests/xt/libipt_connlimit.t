# Mainline xt_connlimit, IPv4 defaults.
:INPUT,FORWARD,OUTPUT
-m connlimit --connlimit-above 2;-m connlimit --connlimit-above 2 --connlimit-mask 32 --connlimit-saddr;OK
-m connlimit --connlimit-upto 2 --connlimit-mask 32 --connlimit-saddr;=;OK
-m connlimit --connlimit-above 2 --connlimit-mask 255.255.255.0;-m connlimit --connlimit-above 2 --connlimit-mask 24 --connlimit-saddr;OK
# a mask longer than 32 bits is accepted by the IPv4 plugin and printed as /32
-m connlimit --connlimit-above 1 --connlimit-mask 33;=;NOMATCH
-m connlimit --connlimit-above 1 --connlimit-mask 33;-m connlimit --connlimit-above 1 --connlimit-mask 32 --connlimit-saddr;OK
