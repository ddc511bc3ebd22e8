# nfguard RANGESET target (both families; the sets' family follows the binary).
# Print/save re-parse to the same rule; bad options, missing sets, a set of
# the other family and prefixes beyond the family are refused.
:INPUT
-j RANGESET --add-set blk src;;FAIL
@nfguard set create blk ipv$NFG_XT_FAMILY maxelem 1000
@nfguard set create alw ipv$NFG_XT_FAMILY
@nfguard set create other ipv$([ "$NFG_XT_FAMILY" = 6 ] && echo 4 || echo 6)
:INPUT,FORWARD,OUTPUT
-j RANGESET --add-set blk src;=;OK
-j RANGESET --add-set blk dst;=;OK
-j RANGESET --add-set blk src --timeout 60;=;OK
-j RANGESET --add-set blk src --timeout 0 --exist;=;OK
-j RANGESET --add-set blk src --exist;=;OK
-j RANGESET --del-set alw src;=;OK
-j RANGESET --add-set blk src --timeout 600 --del-set alw dst;=;OK
-j RANGESET --add-set blk src --prefix 24;=;OK
-j RANGESET --del-set blk dst --prefix 0;=;OK
-m rangeset --match-set blk src -j RANGESET --add-set blk src --timeout 60 --exist;=;OK
-j RANGESET --exist --timeout 60 --add-set blk src;-j RANGESET --add-set blk src --timeout 60 --exist;OK
:INPUT
-j RANGESET;;FAIL
-j RANGESET --add-set nosuch src;;FAIL
-j RANGESET --del-set nosuch src;;FAIL
-j RANGESET --add-set other src;;FAIL
-j RANGESET --add-set blk;;FAIL
-j RANGESET --add-set blk both;;FAIL
-j RANGESET --add-set blk src --add-set alw src;;FAIL
-j RANGESET --add-set blk src --timeout 2147484;;FAIL
-j RANGESET --add-set blk src --timeout -1;;FAIL
-j RANGESET --add-set blk src --timeout x;;FAIL
-j RANGESET --del-set blk src --timeout 5;;FAIL
-j RANGESET --del-set blk src --exist;;FAIL
-j RANGESET --add-set blk src --prefix 129;;FAIL
-j RANGESET --add-set aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa src;;FAIL
-j RANGESET --add-set "" src;;FAIL
*raw
:PREROUTING,OUTPUT
-j RANGESET --add-set blk src;=;OK
*mangle
:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
-j RANGESET --del-set alw dst;=;OK
