# Traffic tools for the VM cases.
TEST_BINS += $(B)/bin/nfg-tcpflood

$(B)/bin/nfg-tcpflood: tests/tools/tcpflood.c tests/include/nfg_rng.h
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -o $@ $<
