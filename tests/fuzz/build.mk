# Netlink fuzzer for the nfguard genetlink families (tests/vm/cases/fuzz_*.sh).
TEST_BINS += $(B)/bin/nfg-nlfuzz

$(B)/bin/nfg-nlfuzz: tests/fuzz/nlfuzz.c tests/include/nfg_rng.h $(wildcard include/uapi/linux/netfilter/*.h)
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -o $@ $< $(LIBMNL_LIBS)
