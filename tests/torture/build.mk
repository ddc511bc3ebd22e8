# Torture frames (tests/vm/cases/torture_*.sh), generated with scapy on the
# host (python3-scapy, tests/deps.d/torture.txt): the guest only replays them.
TEST_BINS += $(B)/torture/frames.txt

$(B)/torture/frames.txt: $(wildcard tests/torture/*.py)
	@mkdir -p $(@D)
	/usr/bin/python3 -B tests/torture/torture.py >$@.tmp && mv $@.tmp $@
