/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test tools' random numbers: xorshift64* (Vigna), reproducible from a
 * seed, fast, and good enough for addresses, ports, sequence numbers and
 * fuzz choices (not for anything secret). Used by the unit tests, the
 * netlink fuzzer and the flood tool, so one seed means the same stream in
 * all of them. The state must not be zero.
 */
#ifndef NFG_TESTS_RNG_H
#define NFG_TESTS_RNG_H

#include <stdint.h>

static inline uint64_t nfg_xorshift64s(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

#endif
