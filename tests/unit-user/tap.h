/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal test helpers for tests/unit-user. */
#ifndef NFG_UT_TAP_H
#define NFG_UT_TAP_H

#include <stdio.h>
#include <string.h>

extern unsigned int ut_passed, ut_failed;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			ut_passed++;					\
		} else {						\
			ut_failed++;					\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,	\
				__LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
		}							\
	} while (0)

#define CHECK_STR(got, want)						\
	CHECK(!strcmp((got), (want)), "got \"%s\", want \"%s\"", (got), (want))

/* substring */
#define CHECK_HAS(got, part)						\
	CHECK(strstr((got), (part)) != NULL, "\"%s\" lacks \"%s\"", (got), (part))

void test_addr(void);
void test_rsfile(void);
void test_genl(void);
void test_nft(void);
void test_protect(void);

#endif
