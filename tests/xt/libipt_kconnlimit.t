# nfguard kconnlimit, IPv4 defaults and masks (connlimit's forms).
:INPUT,FORWARD,OUTPUT
-m kconnlimit --kconnlimit-above 2;-m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 32 --kconnlimit-saddr;OK
-m kconnlimit --kconnlimit-upto 2 --kconnlimit-mask 32 --kconnlimit-saddr;=;OK
-m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 255.255.255.0;-m kconnlimit --kconnlimit-above 2 --kconnlimit-mask 24 --kconnlimit-saddr;OK
# unlike connlimit, a mask longer than the family allows is refused, not clamped
-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask 33;;FAIL
-m kconnlimit --kconnlimit-above 1 --kconnlimit-mask 255.0.255.0;;FAIL
