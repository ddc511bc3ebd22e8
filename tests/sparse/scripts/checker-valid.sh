#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Kbuild's scripts/checker-valid.sh for kernel header packages that lack it
# (Debian's linux-kbuild-7.3): prints 1 when the checker given as arguments
# (CHECK CHECKFLAGS, i.e. sparse) parses what the kernel headers need from it
# (__typeof_unqual__), else 0, which makes Kbuild turn C=1/C=2 off with
# "C=N specified, but sparse is not available or not up to date".
# tests/kbuild-chroot.sh overlays this directory on such a kernel's scripts/ directory.
set -eu
command -v "$1" >/dev/null 2>&1 || { echo 0; exit 0; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cat >"$tmp" <<'SRC'
static inline int u(const int *q)
{
	__typeof_unqual__(*q) v = *q;
	return v;
}
SRC
# sparse exits 0 on errors: look for one in its output
"$@" "$tmp" 2>&1 | awk -v c=1 '/error/ { c = 0 } END { print c }'
