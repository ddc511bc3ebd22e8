# make check-debug: the VM suite on a lockdep/KASAN/kmemleak debug kernel
# (tests/debug/README.md). Not part of `make check`: the kernel build alone
# takes longer than CI allows; it is cached outside the work tree.
.PHONY: check-debug debug-kernel
check-debug: all
	./tests/debug/check.sh $(CASES)

# Only build (or find in the cache) the debug kernel and link it under build/kernels.
debug-kernel:
	./tests/debug/build-kernel.sh
