# nfguard RANGESET target, IPv6 only: prefixes up to 128.
@nfguard set create blk6 ipv6
:INPUT
-j RANGESET --add-set blk6 src --prefix 128;=;OK
-j RANGESET --add-set blk6 src --prefix 64;=;OK
-j RANGESET --add-set blk6 src --prefix 129;;FAIL
