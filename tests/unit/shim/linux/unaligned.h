/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: 6.12 moved asm/unaligned.h here. */
#include <asm/unaligned.h>
