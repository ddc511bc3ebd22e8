# nfguard: the one entry point.
#
#   make               modules for every configured kernel + userspace + man pages
#   make install       modules (updates/, depmod), plugins, CLI, man pages, libnfguard
#                      (shared + static, libnfguard.h, libnfguard.pc), the stats JSON
#                      schema, bash completion; DESTDIR honoured
#   make uninstall
#   make check         everything: deps, build, unit, install, package, VM (both kernels), harness self-test
#   make check-unit    userspace unit tests (ASan/UBSan), bash completion
#   make check-install install/uninstall into temporary dirs (host only)
#   make check-vm      every tests/vm/cases/*.sh on every configured kernel
#                      (CASES="tests/vm/cases/a.sh ..." KABIS="ABI ..." narrow it)
#   make check-style   checkpatch + sparse (C=1) on the kernel code, layering
#   make demo          boot a Debian kernel, load nfguard, run a protection scenario
#   make bench         side-by-side benchmarks (report only)
#   make dist          source tarball (reproducible: same commit, same bytes)
#   make dkms          install the module source for DKMS
#   make deb           Debian packages (packaging/debian) in build/deb/
#   make check-package dist, the .debs from it, install/upgrade/purge in a chroot, boot both kernels with them
#   make check-persist boot a systemd Debian guest with the .debs twice: sets, rules, profile, secret survive the reboot
#
# A fresh clone needs no manual configure: build/config.mk is made on demand.

SHELL := /bin/bash
TOP := $(CURDIR)
B := $(TOP)/build

# `make` with no target builds everything (the first rule below would otherwise
# be build/config.mk).
.DEFAULT_GOAL := all

# check and demo fetch the kernels first (tests/deps.sh), then configure.
ifeq ($(filter distclean deps check demo,$(MAKECMDGOALS)),)
include $(B)/config.mk
endif

# --- configuration --------------------------------------------------------

$(B)/config.mk: configure.ac config.mk.in
	@command -v autoreconf >/dev/null && pkg-config --exists xtables libmnl libnftnl || ./tests/deps.sh
	@mkdir -p $(B)/aux
	autoreconf -fi
	./configure $(CONFIGURE_FLAGS)

.PHONY: deps
deps:
	./tests/deps.sh

# --- kernel modules ---------------------------------------------------------

# Build tree of kernel ABI $(1): the headers tests/deps.sh unpacked under
# build/kernels/ABI (KERNELS_DIR; or a debug kernel linked there), else the host's.
KERNELS_DIR ?= $(B)/kernels
kdir = $(firstword $(wildcard $(KERNELS_DIR)/$(1)/usr/src/linux-headers-$(1)/Makefile \
	/lib/modules/$(1)/build/Makefile /usr/src/linux-headers-$(1)/Makefile))
KSRC := $(wildcard kernel/*.c kernel/*.h kernel/Kbuild kernel/compat/*.h kernel/compat/*.sh kernel/compat/probes/*.c) \
	$(wildcard include/uapi/linux/netfilter/*.h)
KMOD_W ?= 1
# Runs a kernel build for ABI $(1): in the chroot of a newer Debian suite for a
# kernel whose kbuild tools need it (trixie-backports' 7.x: tests/deps.sh marks
# it), as it is for the others.
kbuild = KERNELS_DIR=$(KERNELS_DIR) $(TOP)/tests/kbuild-chroot.sh -k $(1)

.PHONY: all modules userspace man
all: modules userspace man test-bins


modules: $(foreach k,$(KABIS),$(B)/kernel/$(k)/.built)

# One symlinked copy of kernel/ per kernel ABI, so builds don't collide.
$(B)/kernel/%/.built: $(KSRC) $(B)/config.mk
	@mkdir -p $(@D)
	@cd kernel && find . -path ./compat/gen -prune -o -type f -print | while read -r f; do \
		mkdir -p "$(@D)/$${f%/*}" && ln -sfn "$(TOP)/kernel/$$f" "$(@D)/$$f"; done
	$(call kbuild,$*) $(MAKE) -C $(dir $(call kdir,$*)) M=$(@D) W=$(KMOD_W) NFG_VERSION=$(NFG_VERSION) modules
	@touch $@

.PHONY: check-style
# sparse (C=2: check every file) and W=1 on every kernel, then checkpatch,
# then the layering of the built objects (tests/layering.sh). A kernel whose
# Kbuild could not run sparse (7.3's header package lacks
# scripts/checker-valid.sh) fails: a check that did not run is no pass.
check-style: modules
	@set -o pipefail; $(foreach k,$(KABIS),echo "== sparse + W=1 $(k)" && \
		$(call kbuild,$(k)) $(MAKE) -s -C $(dir $(call kdir,$(k))) M=$(B)/kernel/$(k) C=2 W=1 modules 2>&1 | \
			tee $(B)/kernel/$(k)/sparse.log && \
		! grep -E '(warning|error):|sparse is not available' $(B)/kernel/$(k)/sparse.log &&) true
	./tests/checkpatch.sh kernel/*.c kernel/*.h kernel/compat/*.h
	./tests/layering.sh $(foreach k,$(KABIS),$(B)/kernel/$(k))

# --- userspace ----------------------------------------------------------------

UCFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -fPIC -I$(TOP)/include/uapi -I$(TOP)/userspace/lib \
	$(LIBXTABLES_CFLAGS) $(LIBMNL_CFLAGS) $(LIBNFTNL_CFLAGS) $(EXTRA_CFLAGS)
LIB_SRC := $(wildcard userspace/lib/*.c)
LIB_OBJ := $(patsubst userspace/lib/%.c,$(B)/userspace/lib/%.o,$(LIB_SRC))
LIB_HDR := $(wildcard userspace/lib/*.h include/uapi/linux/netfilter/*.h)
CLI_SRC := $(wildcard userspace/cli/*.c)
CLI_OBJ := $(patsubst userspace/cli/%.c,$(B)/userspace/cli/%.o,$(CLI_SRC))
XT_SRC := $(wildcard userspace/libxt_*.c)
XT_SO := $(patsubst userspace/%.c,$(B)/xtables/%.so,$(XT_SRC))
LIBNFG := $(B)/userspace/libnfguard.a
# libnfguard's shared library: soname libnfguard.so.1 (bump LIBNFG_MAJOR when
# the public interface, userspace/lib/libnfguard.h, changes incompatibly).
LIBNFG_MAJOR := 1
LIBNFG_SONAME := libnfguard.so.$(LIBNFG_MAJOR)
LIBNFG_REAL := $(LIBNFG_SONAME).0.0
LIBNFG_SO := $(B)/userspace/$(LIBNFG_REAL)
LIBNFG_PC := $(B)/userspace/libnfguard.pc
LIBNFG_PUBHDR := userspace/lib/libnfguard.h
# JSON Schema of `nfguard stats --json` (installed, named in nfguard(8))
STATS_SCHEMA := doc/nfguard-stats.schema.json
# bash completion of nfguard, loaded on demand by bash-completion
BASHCOMP := packaging/bash-completion/nfguard
BASHCOMPDIR = $(datarootdir)/bash-completion/completions

userspace: $(LIBNFG) $(LIBNFG_SO) $(LIBNFG_PC) $(if $(CLI_SRC),$(B)/bin/nfguard) $(XT_SO)

# Only what libnfguard.h marks NFG_API is exported from the shared library;
# the CLI and the plugins link the static archive (plugins stay one file).
$(B)/userspace/lib/%.o: userspace/lib/%.c $(LIB_HDR) $(B)/config.mk
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -fvisibility=hidden -DNFG_BUILDING_LIB -DNFG_VERSION='"$(NFG_VERSION)"' -c -o $@ $<

$(LIBNFG): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBNFG_SO): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIBNFG_SONAME) -Wl,-z,defs -o $@ $(LIB_OBJ) $(LIBNFTNL_LIBS) $(LIBMNL_LIBS)
	ln -sfn $(LIBNFG_REAL) $(B)/userspace/$(LIBNFG_SONAME)
	ln -sfn $(LIBNFG_SONAME) $(B)/userspace/libnfguard.so

$(LIBNFG_PC): userspace/lib/libnfguard.pc.in $(B)/config.mk
	@mkdir -p $(@D)
	sed -e 's|@prefix@|$(prefix)|' -e 's|@libdir@|$(libdir)|' \
		-e 's|@includedir@|$(includedir)|' -e 's|@VERSION@|$(NFG_VERSION)|' $< > $@

$(B)/userspace/cli/%.o: userspace/cli/%.c $(LIB_HDR) $(wildcard userspace/cli/*.h) $(B)/config.mk Makefile
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) -c -o $@ $<

$(B)/bin/nfguard: $(CLI_OBJ) $(LIBNFG)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIBNFG) $(LIBNFTNL_LIBS) $(LIBMNL_LIBS)

# Each plugin carries the package version ("nfguard-version=V" in .rodata).
$(B)/xtables/%.so: userspace/%.c $(LIBNFG) $(LIB_HDR) $(B)/config.mk
	@mkdir -p $(@D)
	$(CC) $(UCFLAGS) $(LDFLAGS) -shared -o $@ $< $(LIBNFG) \
		-include $(TOP)/userspace/xt_version.h -DNFG_VERSION='"$(NFG_VERSION)"' $(LIBXTABLES_LIBS) $(LIBMNL_LIBS)

# Test helpers: tests/*/build.mk append their binaries to TEST_BINS and give
# the rules (they may also add check-* targets of their own).
TEST_BINS :=
include $(sort $(wildcard tests/*/build.mk))
.PHONY: test-bins
test-bins: $(TEST_BINS)

# --- man pages ----------------------------------------------------------------

# man/NAME.man: match NAME; man/NAME-target.man and the targets' fragments
# (syncookie.man, rtcache.man): target NAME, shown in capitals.
MAN_TARGET_FRAGS := $(sort $(wildcard man/*-target.man) $(wildcard man/syncookie.man man/rtcache.man))
MAN_MATCH_FRAGS := $(filter-out $(MAN_TARGET_FRAGS),$(sort $(wildcard man/*.man)))
MAN_FRAGS := $(MAN_MATCH_FRAGS) $(MAN_TARGET_FRAGS)
MAN_PAGES := $(B)/man/nfguard-extensions.8 $(if $(wildcard man/nfguard.8),$(B)/man/nfguard.8)
man: $(MAN_PAGES)

# The installed paths of this configuration, "-" escaped for roff.
roffpath = $(subst -,\\-,$(1))
MAN_SUBST = sed -e 's|@datarootdir@|$(call roffpath,$(datarootdir))|g' \
	-e 's|@XTLIBDIR@|$(call roffpath,$(XTLIBDIR))|g' -e 's|@VERSION@|$(NFG_VERSION)|g'

$(B)/man/nfguard-extensions.8: man/nfguard-extensions.8.in man/assemble.sh $(MAN_FRAGS) $(B)/config.mk
	@mkdir -p $(@D)
	./man/assemble.sh man/nfguard-extensions.8.in --matches $(MAN_MATCH_FRAGS) \
		--targets $(MAN_TARGET_FRAGS) | $(MAN_SUBST) > $@.tmp && mv $@.tmp $@

$(B)/man/nfguard.8: man/nfguard.8 $(B)/config.mk
	@mkdir -p $(@D)
	$(MAN_SUBST) $< > $@

# --- install ------------------------------------------------------------------

.PHONY: install uninstall
# not test-bins: a package build has no linux-source-6.12 (tests/mainline)
install: modules userspace man
	@for k in $(KABIS); do \
		install -d $(DESTDIR)/lib/modules/$$k/updates/nfguard; \
		install -m 0644 $(B)/kernel/$$k/*.ko $(DESTDIR)/lib/modules/$$k/updates/nfguard/; \
		if [ -z "$(DESTDIR)" ]; then depmod -a $$k; fi; \
	done
	install -d $(DESTDIR)$(XTLIBDIR) $(DESTDIR)$(sbindir) $(DESTDIR)$(mandir)/man8
	$(if $(XT_SO),install -m 0644 $(XT_SO) $(DESTDIR)$(XTLIBDIR)/)
	$(if $(CLI_SRC),install -m 0755 $(B)/bin/nfguard $(DESTDIR)$(sbindir)/nfguard)
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(mandir)/man8/
	install -d $(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(includedir)
	install -m 0644 $(LIBNFG_SO) $(LIBNFG) $(DESTDIR)$(libdir)/
	ln -sfn $(LIBNFG_REAL) $(DESTDIR)$(libdir)/$(LIBNFG_SONAME)
	ln -sfn $(LIBNFG_SONAME) $(DESTDIR)$(libdir)/libnfguard.so
	install -m 0644 $(LIBNFG_PC) $(DESTDIR)$(libdir)/pkgconfig/
	install -m 0644 $(LIBNFG_PUBHDR) $(DESTDIR)$(includedir)/
	install -d $(DESTDIR)$(datarootdir)/nfguard
	install -m 0644 $(STATS_SCHEMA) $(DESTDIR)$(datarootdir)/nfguard/
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 $(BASHCOMP) $(DESTDIR)$(BASHCOMPDIR)/nfguard
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi

uninstall:
	@for k in $(KABIS); do \
		rm -rf $(DESTDIR)/lib/modules/$$k/updates/nfguard; \
		if [ -z "$(DESTDIR)" ]; then depmod -a $$k; fi; \
	done
	rm -f $(addprefix $(DESTDIR)$(XTLIBDIR)/,$(notdir $(XT_SO)))
	rm -f $(DESTDIR)$(sbindir)/nfguard $(addprefix $(DESTDIR)$(mandir)/man8/,$(notdir $(MAN_PAGES)))
	rm -f $(addprefix $(DESTDIR)$(libdir)/,$(LIBNFG_REAL) $(LIBNFG_SONAME) libnfguard.so libnfguard.a) \
		$(DESTDIR)$(libdir)/pkgconfig/libnfguard.pc $(DESTDIR)$(includedir)/$(notdir $(LIBNFG_PUBHDR))
	rm -f $(DESTDIR)$(datarootdir)/nfguard/$(notdir $(STATS_SCHEMA))
	-rmdir $(DESTDIR)$(datarootdir)/nfguard 2>/dev/null
	rm -f $(DESTDIR)$(BASHCOMPDIR)/nfguard
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi

# --- tests ----------------------------------------------------------------------

.PHONY: check check-unit check-install check-vm check-selftest demo bench
# Stages, a timing table and the closing "N passed, N failed": tests/check.sh.
check:
	./tests/check.sh

check-unit:
	$(MAKE) -C tests/unit check
	$(if $(wildcard tests/unit-user/Makefile),$(MAKE) -C tests/unit-user check)
	./tests/completion/check.sh $(BASHCOMP)

check-install: all
	./tests/install/check.sh

check-vm: all
	./tests/vm/check.sh $(CASES)

check-selftest:
	./tests/vm/selftest.sh

DEMO_KABI ?= $(lastword $(KABIS))
demo: deps
	$(MAKE) all
	$(MAKE) demo-run

.PHONY: demo-run
demo-run:
	@rc=0; ./tests/vm/run.sh -k $(DEMO_KABI) -t 600 -o $(B)/vm/demo tests/demo/demo.sh tests/demo/syncookie.sh || rc=$$?; \
		cat $(B)/vm/demo/case.001.log $(B)/vm/demo/case.002.log 2>/dev/null; \
		echo "(guest console: $(B)/vm/demo/console.log)"; exit $$rc

bench: all
	./tests/bench/run.sh

# --- packaging ------------------------------------------------------------------

.PHONY: dist dkms deb check-package check-persist clean distclean
# Reproducible: git archive writes HEAD's tree in sorted order, every mtime =
# the commit time (SOURCE_DATE_EPOCH of the tree), owner/group 0 (root), and
# a pax header holding the commit id; gzip -n stores no name or time.
# Two runs on one commit give identical bytes (tests/package checks it).
dist:
	@mkdir -p $(B)
	git archive --format=tar --prefix=nfguard-$(NFG_VERSION)/ HEAD | gzip -9n > $(B)/nfguard-$(NFG_VERSION).tar.gz.tmp
	mv $(B)/nfguard-$(NFG_VERSION).tar.gz.tmp $(B)/nfguard-$(NFG_VERSION).tar.gz
	@echo $(B)/nfguard-$(NFG_VERSION).tar.gz

# Debian packages (packaging/debian) from the tracked files of the working
# tree, built in build/deb/nfguard-VERSION with dpkg-buildpackage -us -uc -b:
# build/deb/*.deb. The version is debian/changelog's, which debian/rules
# checks against configure.ac's (NFG_VERSION).
deb:
	./tests/package/build-deb.sh $(B)/deb

check-package:
	./tests/package/check.sh

# nfguard-persistent across a real reboot (systemd guest; root): tests/persist/check.sh
check-persist:
	./tests/persist/check.sh

# Sources only: no objects or compat/gen from an in-place build of kernel/.
DKMS_DIR := $(DESTDIR)/usr/src/nfguard-$(NFG_VERSION)
DKMS_SRC := $(filter-out %.mod.c,$(KSRC)) kernel/Makefile
dkms:
	install -d $(DKMS_DIR)
	cp --parents $(DKMS_SRC) $(DKMS_DIR)/
	sed 's/@VERSION@/$(NFG_VERSION)/' packaging/dkms.conf > $(DKMS_DIR)/dkms.conf
	chmod 0644 $(DKMS_DIR)/dkms.conf
	$(if $(DESTDIR),,dkms add -m nfguard -v $(NFG_VERSION) || true)

clean:
	rm -rf $(B)/kernel $(B)/userspace $(B)/xtables $(B)/bin $(B)/man $(B)/torture $(B)/plant
	-$(MAKE) -C tests/unit clean

distclean:
	rm -rf build configure config.status config.log autom4te.cache aclocal.m4
