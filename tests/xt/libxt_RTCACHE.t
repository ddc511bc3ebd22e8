# nfguard RTCACHE target (both families): mangle or filter, FORWARD or INPUT
# only; no options. Misuse is refused by the kernel (checkentry / hooks).
*mangle
:FORWARD,INPUT
-j RTCACHE;=;OK
-p udp -j RTCACHE;=;OK
-p tcp -m tcp --dport 80 -j RTCACHE;=;OK
-j RTCACHE --bogus;;FAIL
:PREROUTING,OUTPUT,POSTROUTING
-j RTCACHE;;FAIL
*filter
:FORWARD,INPUT
-j RTCACHE;=;OK
:OUTPUT
-j RTCACHE;;FAIL
*raw
:PREROUTING,OUTPUT
-j RTCACHE;;FAIL
