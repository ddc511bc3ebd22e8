# nfguard SYNCOOKIE target (IPv4 and IPv6): raw PREROUTING, -p tcp only.
# save prints --mode always, the other options when set or not default.
*raw
:PREROUTING
-p tcp -j SYNCOOKIE --mode local;=;OK
-p tcp --dport 80 -j SYNCOOKIE --mode local --sack-perm --timestamp;-p tcp -m tcp --dport 80 -j SYNCOOKIE --mode local --sack-perm --timestamp;OK
-p tcp -j SYNCOOKIE --mode local --mss 1460 --wscale 7 --sack-perm --timestamp;=;OK
-p tcp -j SYNCOOKIE --timestamp --mode local --mss 536;-p tcp -j SYNCOOKIE --mode local --mss 536 --timestamp;OK
-p tcp -j SYNCOOKIE --mode local --mss 88 --wscale 0;=;OK
-p tcp -j SYNCOOKIE --mode local --mss 65535 --wscale 14;=;OK
-p tcp -j SYNCOOKIE --mode local --allowlist-timeout 60 --allowlist-mask 24;=;OK
-p tcp -j SYNCOOKIE --mode local --allowlist-timeout 300;-p tcp -j SYNCOOKIE --mode local;OK
-p tcp -j SYNCOOKIE --mode local --allowlist-timeout 604800 --allowlist-mask 1;=;OK
# proxy mode, the default (the man page's router ruleset among them)
-p tcp -j SYNCOOKIE;-p tcp -j SYNCOOKIE --mode proxy;OK
-p tcp -j SYNCOOKIE --mode proxy;=;OK
-p tcp --dport 80 -j SYNCOOKIE --mss 1460 --wscale 7 --sack-perm --timestamp;-p tcp -m tcp --dport 80 -j SYNCOOKIE --mode proxy --mss 1460 --wscale 7 --sack-perm --timestamp;OK
-p tcp -j SYNCOOKIE --mode proxy --sack-perm;=;OK
-p tcp -j SYNCOOKIE --mode proxy --wscale 0 --allowlist-timeout 30 --allowlist-mask 24;=;OK
-p tcp -j SYNCOOKIE --timestamp --mode proxy;-p tcp -j SYNCOOKIE --mode proxy --timestamp;OK
-p tcp -j SYNCOOKIE --mode proxy --mss 0;;FAIL
-p tcp -j SYNCOOKIE --mode proxy --wscale 15;;FAIL
-p tcp -j SYNCOOKIE --mss 87;;FAIL
-p tcp -j SYNCOOKIE --wscale 15;;FAIL
-p tcp -j SYNCOOKIE --allowlist-timeout 0;;FAIL
-p tcp -j SYNCOOKIE --mode;;FAIL
# every refused value
-p tcp -j SYNCOOKIE --mode bogus;;FAIL
-p tcp -j SYNCOOKIE --mode local --mss 0;;FAIL
-p tcp -j SYNCOOKIE --mode local --mss 87;;FAIL
-p tcp -j SYNCOOKIE --mode local --mss 65536;;FAIL
-p tcp -j SYNCOOKIE --mode local --mss -1;;FAIL
-p tcp -j SYNCOOKIE --mode local --mss x;;FAIL
-p tcp -j SYNCOOKIE --mode local --wscale 15;;FAIL
-p tcp -j SYNCOOKIE --mode local --wscale -1;;FAIL
-p tcp -j SYNCOOKIE --mode local --sack-perm;;FAIL
-p tcp -j SYNCOOKIE --mode local --allowlist-timeout 0;;FAIL
-p tcp -j SYNCOOKIE --mode local --allowlist-timeout 604801;;FAIL
-p tcp -j SYNCOOKIE --mode local --allowlist-mask 0;;FAIL
-p tcp -j SYNCOOKIE --mode local --allowlist-mask 129;;FAIL
-p tcp -j SYNCOOKIE --mode local --allowlist-mask "";;FAIL
# wrong protocol
-p udp -j SYNCOOKIE --mode local;;FAIL
-p udp -j SYNCOOKIE;;FAIL
-j SYNCOOKIE --mode local;;FAIL
! -p tcp -j SYNCOOKIE --mode local;;FAIL
# wrong hook
:OUTPUT
-p tcp -j SYNCOOKIE --mode local;;FAIL
-p tcp -j SYNCOOKIE;;FAIL
# wrong table
*filter
:INPUT,FORWARD
-p tcp -j SYNCOOKIE --mode local;;FAIL
-p tcp -j SYNCOOKIE;;FAIL
*mangle
:PREROUTING
-p tcp -j SYNCOOKIE --mode local;;FAIL
