# Mainline NFLOG target (subset); shows the VARIANT field: --nflog-range is kept
# by iptables-legacy but dropped from the rule by iptables-nft.
:INPUT,FORWARD,OUTPUT
-j NFLOG --nflog-group 1;=;OK
-j NFLOG --nflog-group 0;-j NFLOG;OK
-j NFLOG --nflog-group 65536;;FAIL
-j NFLOG --nflog-prefix "nfguard test";-j NFLOG --nflog-prefix "nfguard test";OK
-j NFLOG --nflog-size 0;=;OK
-j NFLOG --nflog-range 1;=;OK;LEGACY;NOMATCH
