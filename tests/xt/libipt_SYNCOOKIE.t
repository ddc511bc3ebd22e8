# SYNCOOKIE, IPv4 only: the allowlist mask is at most 32.
*raw
:PREROUTING
-p tcp -j SYNCOOKIE --mode local --allowlist-mask 32;-p tcp -j SYNCOOKIE --mode local;OK
-p tcp -j SYNCOOKIE --mode local --allowlist-mask 33;;FAIL
