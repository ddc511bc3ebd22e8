# Mainline ipset match: shows "@" setup steps (the runner gives NFG_XT_FAMILY).
:INPUT,FORWARD,OUTPUT
-m set --match-set blk src;;FAIL
@ipset create blk hash:net family "$([ "$NFG_XT_FAMILY" = 6 ] && echo inet6 || echo inet)"
@ipset create pp hash:ip,port family "$([ "$NFG_XT_FAMILY" = 6 ] && echo inet6 || echo inet)"
-m set --match-set blk src;=;OK
-m set ! --match-set blk dst -j DROP;=;OK
-m set --match-set pp src,dst --return-nomatch ! --update-counters;=;OK
-m set --match-set blk src --packets-gt 5;=;OK
-m set --match-set nosuch src;;FAIL
-m set --match-set blk;;FAIL
