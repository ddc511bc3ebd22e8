# nfguard protect test helper: prints the xt match/target expressions
# (name, revision, info bytes) of an nf_tables chain or table, to compare
# what iptables-nft installs with what nfguard protect installs
# (tests/vm/cases/cli_protect.sh).
TEST_BINS += $(B)/bin/nfg-nft-xtdump

$(B)/bin/nfg-nft-xtdump: tests/protect/xtdump.c
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -o $@ $< $(LIBNFTNL_LIBS) $(LIBMNL_LIBS)
