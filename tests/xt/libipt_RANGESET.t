# nfguard RANGESET target, IPv4 only: the prefix bound of the family.
@nfguard set create blk4 ipv4
:INPUT
-j RANGESET --add-set blk4 src --prefix 32;=;OK
-j RANGESET --add-set blk4 src --prefix 33;;FAIL
