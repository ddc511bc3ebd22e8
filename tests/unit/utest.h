/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unit tests' small harness, shared by every *_test.c here (each
 * compiles one kernel core against tests/unit/shim).
 *
 *   CHECK(cond), CHECK_EQ(a, b)   record a failed check (file:line, values)
 *   utest_begin(name)             start a test: remembers the shim's WARN
 *                                 and live-allocation counts
 *   utest_end(&mark)              after the test body and the caller's own
 *                                 leak checks (fail_at): fails the test if a
 *                                 WARN fired or an allocation leaked, prints
 *                                 "ok   NAME" or "FAIL NAME (...)"
 *   utest_summary()               prints "N passed, N failed", returns the
 *                                 exit status for main()
 *
 * fail_at() is safe to call from the tests' worker threads.
 */
#ifndef NFG_UTEST_H
#define NFG_UTEST_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/bug.h>		/* shim_warn_count */
#include <linux/slab.h>		/* shim_alloc_live, shim_fail_alloc_in() */

static unsigned int utest_passed, utest_failed;
static unsigned int cur_failures;
static const char *cur_test;
/* Serialises the failure count and its report between worker threads. */
static pthread_mutex_t utest_fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void __attribute__((format(printf, 3, 4)))
fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&utest_fail_lock);
	if (cur_failures++ < 10) {
		fprintf(stderr, "  %s:%d: %s: ", file, line, cur_test);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	pthread_mutex_unlock(&utest_fail_lock);
}

#define CHECK(cond) do {						\
	if (!(cond))							\
		fail_at(__FILE__, __LINE__, "check failed: %s", #cond);	\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long __a = (long long)(a), __b = (long long)(b);		\
	if (__a != __b)							\
		fail_at(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", \
			#a, __a, #b, __b);				\
} while (0)

struct utest_mark {
	const char *name;
	unsigned long warns;
	long live;
};

static struct utest_mark utest_begin(const char *name)
{
	cur_test = name;
	cur_failures = 0;
	return (struct utest_mark){ name, shim_warn_count, shim_alloc_live };
}

static void utest_end(const struct utest_mark *m)
{
	shim_fail_alloc_in(0);
	if (shim_warn_count != m->warns)
		fail_at(__FILE__, __LINE__, "%lu WARN(s) fired",
			shim_warn_count - m->warns);
	if (shim_alloc_live != m->live)
		fail_at(__FILE__, __LINE__, "%ld allocation(s) leaked",
			shim_alloc_live - m->live);
	if (cur_failures) {
		utest_failed++;
		printf("FAIL %s (%u failed checks)\n", m->name, cur_failures);
	} else {
		utest_passed++;
		printf("ok   %s\n", m->name);
	}
}

static int utest_summary(void)
{
	printf("%u passed, %u failed\n", utest_passed, utest_failed);
	return utest_failed ? 1 : 0;
}

#endif /* NFG_UTEST_H */
