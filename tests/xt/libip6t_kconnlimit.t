# nfguard kconnlimit, IPv6 defaults and masks.
:INPUT,FORWARD,OUTPUT
-m kconnlimit --kconnlimit-above 2;-m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 128 --kconnlimit-saddr;OK
-m kconnlimit --kconnlimit-upto 2 --kconnlimit-mask 64 --kconnlimit-daddr;=;OK
-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask 128;-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask 128 --kconnlimit-saddr;OK
-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask 255.255.255.0;;FAIL
