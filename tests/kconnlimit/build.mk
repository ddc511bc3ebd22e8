# kconnlimit test helper: installs hand-made match blobs through nft_compat
# (tests/vm/cases/kconnlimit_errors.sh).
TEST_BINS += $(B)/bin/nfg-kcl-blob

$(B)/bin/nfg-kcl-blob: tests/kconnlimit/kcl_blob.c include/uapi/linux/netfilter/xt_kconnlimit.h
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -o $@ $< $(LIBNFTNL_LIBS) $(LIBMNL_LIBS)

# NFQUEUE reader that accepts everything, at once or after a hold
# (tests/vm/cases/kconnlimit_hardening.sh, kconnlimit_queued.sh).
TEST_BINS += $(B)/bin/nfg-kcl-nfqueue

$(B)/bin/nfg-kcl-nfqueue: tests/kconnlimit/kcl_nfqueue.c
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -o $@ $< $(LIBMNL_LIBS)

# Seeded random opens and closes for comparing verdicts with connlimit
# (tests/vm/cases/kconnlimit_hardening.sh, part "exact"); a client reusing
# its 4-tuples (kconnlimit_reopen.sh); a SYN held in a queue (kconnlimit_queued.sh).
TEST_BINS += $(B)/bin/nfg-kcl-race

$(B)/bin/nfg-kcl-race: tests/kconnlimit/kcl_race.c
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -o $@ $<
