# The kernel's own netfilter selftests (tests/vm/cases/mainline_selftests.sh),
# taken from Debian's linux-source-6.12 (tests/deps.d/mainline.txt): only
# tools/testing/selftests/net/lib.sh and net/netfilter/ are extracted.
MAINLINE_TAR := $(lastword $(sort $(wildcard /usr/src/linux-source-6.12*.tar.xz)))
MAINLINE_DIR := $(B)/mainline
TEST_BINS += $(MAINLINE_DIR)/.extracted

$(MAINLINE_DIR)/.extracted: $(MAINLINE_TAR) tests/mainline/build.mk
	@[ -n "$(MAINLINE_TAR)" ] || { echo "no /usr/src/linux-source-6.12*.tar.xz: apt-get install linux-source-6.12" >&2; exit 1; }
	rm -rf $(MAINLINE_DIR) && mkdir -p $(MAINLINE_DIR)
	tar -xJf $(MAINLINE_TAR) -C $(MAINLINE_DIR) --strip-components=1 --wildcards \
		'*/tools/testing/selftests/net/lib.sh' '*/tools/testing/selftests/net/netfilter/*'
	@echo "$(notdir $(MAINLINE_TAR))" >$@
