# Torture frames (tests/vm/cases/torture_*.sh), generated with scapy on the
# host (python3-scapy, tests/deps.d/torture.txt): the guest only replays them.
# frames.txt: rangeset's rows on a router without conntrack; frames-ct.txt:
# kconnlimit's and RTCACHE's, on a router that tracks connections.
TEST_BINS += $(B)/torture/frames.txt $(B)/torture/frames-ct.txt

$(B)/torture/frames.txt: $(wildcard tests/torture/*.py)
	@mkdir -p $(@D)
	/usr/bin/python3 -B tests/torture/torture.py >$@.tmp && mv $@.tmp $@

$(B)/torture/frames-ct.txt: $(wildcard tests/torture/*.py)
	@mkdir -p $(@D)
	/usr/bin/python3 -B tests/torture/torture.py --conntrack --ext kconnlimit --ext rtcache >$@.tmp && mv $@.tmp $@
