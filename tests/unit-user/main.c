// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of libnfguard's userspace logic (parsing, formatting,
 * normalization, save/restore lines, netlink error reporting), built with
 * ASan + UBSan by tests/unit-user/Makefile.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"

unsigned int ut_passed, ut_failed;

int main(void)
{
	test_addr();
	test_rsfile();
	test_genl();
	test_nft();
	test_protect();
	printf("%u passed, %u failed\n", ut_passed, ut_failed);
	return ut_failed ? 1 : 0;
}
