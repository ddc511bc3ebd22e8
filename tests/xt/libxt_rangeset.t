# nfguard rangeset match (both families; the set's family follows the binary).
# rejections (no such set, wrong family, bad option) do not depend on the
# chain: checked in INPUT only
:INPUT
-m rangeset --match-set blk src;;FAIL
@nfguard set create blk ipv$NFG_XT_FAMILY
@nfguard set create alw ipv$NFG_XT_FAMILY
@nfguard set create other ipv$([ "$NFG_XT_FAMILY" = 6 ] && echo 4 || echo 6)
:INPUT,FORWARD,OUTPUT
-m rangeset --match-set blk src;=;OK
-m rangeset --match-set blk dst;=;OK
-m rangeset ! --match-set blk src;=;OK
-m rangeset ! --match-set alw dst -j DROP;=;OK
-m rangeset --match-set blk src -m rangeset ! --match-set alw src -j DROP;=;OK
-p tcp -m tcp --dport 80 -m rangeset --match-set blk src -j ACCEPT;=;OK
:INPUT
-m rangeset --match-set nosuch src;;FAIL
-m rangeset --match-set other src;;FAIL
-m rangeset --match-set blk;;FAIL
-m rangeset --match-set blk both;;FAIL
-m rangeset --match-set blk src,dst;;FAIL
-m rangeset;;FAIL
-m rangeset --match-set aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa src;;FAIL
-m rangeset --match-set "" src;;FAIL
*raw
:PREROUTING,OUTPUT
-m rangeset --match-set blk src -j DROP;=;OK
*mangle
:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
-m rangeset ! --match-set alw src;=;OK
