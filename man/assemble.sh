#!/bin/sh
# Build nfguard-extensions.8 from its header and one roff fragment per
# extension: man/assemble.sh HEADER FRAGMENT... > nfguard-extensions.8
# Each fragment is placed under a subsection named after its file.
set -eu
head=$1
shift
sed -n '/^@MATCHES@/q;p' "$head"
for f in "$@"; do
	name=$(basename "$f" .man)
	printf '.SS %s\n' "$name"
	cat "$f"
done
sed -n '/^@MATCHES@/,$p' "$head" | sed 1d
