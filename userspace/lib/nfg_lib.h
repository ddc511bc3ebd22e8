/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard (internal): small helpers of the library itself (nfg_lib.c).
 */
#ifndef NFG_LIB_H
#define NFG_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Append @size bytes at @elem to the array *arr of *n elements (capacity
 * *cap, grown by doubling). Returns 0 or -ENOMEM (the array is unchanged).
 */
int nfg_vec_push(void **arr, size_t *n, size_t *cap, const void *elem,
		 size_t size);

/*
 * Length (2..4) of the well-formed UTF-8 sequence at @s, whose first byte is
 * 0x80 or more, with its code point in *cp; 0 if the bytes are not one
 * (overlong forms, surrogates, beyond U+10FFFF, a sequence cut by the NUL).
 */
int nfg_utf8_seq(const unsigned char *s, uint32_t *cp);

/*
 * A growing NUL-terminated string (s stays valid, "" at first); after a
 * failed allocation @oom is set and later additions are dropped.
 */
struct nfg_sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

void nfg_sbuf_add(struct nfg_sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * @s (bytes) as a JSON string, quotes included: valid UTF-8 as it is,
 * control characters \u00NN, each byte that is not UTF-8 \udcNN.
 */
void nfg_sbuf_json_str(struct nfg_sbuf *b, const char *s);
/* Hand the string over (NULL on oom, which frees it). */
char *nfg_sbuf_take(struct nfg_sbuf *b);

#endif /* NFG_LIB_H */
