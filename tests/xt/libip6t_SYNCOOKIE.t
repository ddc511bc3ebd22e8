# SYNCOOKIE, IPv6 only: the allowlist mask is up to 128.
*raw
:PREROUTING
-p tcp -j SYNCOOKIE --mode local --allowlist-mask 64;=;OK
-p tcp -j SYNCOOKIE --mode local --allowlist-mask 128;-p tcp -j SYNCOOKIE --mode local;OK
