# DELIBERATELY WRONG .t file: tests/xt/selftest/run.sh checks that run-xt.sh
# reports every line marked "want:" below as a failure (for all four binaries),
# and nothing else. Not part of the normal .t set.
-p tcp --dport 22;-p tcp -m tcp --dport 22;OK
# want: rule before any :CHAIN line (line 4)
:INPUT
-p tcp --dport 80;-p tcp -m tcp --dport 80;OK
# ^ positive control (line 7): must pass
-m comment --comment "two words";-m comment --comment "two words";OK
# ^ positive control with shell quoting (line 9)
-p tcp --dport 81;-p tcp -m tcp --dport 8;OK
# want: saved form differs (line 11)
-p tcp --dport 65536;=;OK
# want: rejected, but should be accepted (line 13)
-p tcp --dport 82;;FAIL
# want: accepted, but should be rejected (line 15)
-p tcp -m tcp --dport 83;=;NOMATCH
# want: saved form matches, but NOMATCH says it must not (line 17)
-p tcp --dport 84;=
# want: malformed line (line 19)
-p tcp --dport 85;=;MAYBE
# want: bad RESULT (line 21)
@exit 3
# want: setup step failed (line 23)
-j NFLOG --nflog-range 1;=;OK;NFT;NOMATCH
# want: saved form differs on nft, NOMATCH matches on legacy (line 25)
-m connlimit;;OK
# want: rejected, but should be accepted (line 27)
@true
-m comment --comment 'single q';-m comment --comment "single q";OK
# want (line 30): passes as a command, but iptables-restore cannot parse the
# shell quoting: "rules pass one by one, but not as one ... batch"
