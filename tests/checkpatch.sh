#!/bin/sh
# Run the kernel's checkpatch.pl (from Debian's linux-source-6.12) on files.
# usage: tests/checkpatch.sh FILE...
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cp_dir=$top/build/checkpatch
if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	tarball=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -z "$tarball" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-source-6.12 >/dev/null
		tarball=$(ls /usr/src/linux-source-6.12*.tar.xz | sort -V | tail -n 1)
	fi
	mkdir -p "$cp_dir"
	base=$(basename "$tarball" .tar.xz)
	tar -xJf "$tarball" -C "$cp_dir" --strip-components=1 \
		"$base/scripts/checkpatch.pl" "$base/scripts/spelling.txt" \
		"$base/scripts/const_structs.checkpatch"
fi
fail=0
for f in "$@"; do
	if ! perl "$cp_dir/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
		--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES -f "$f"; then
		fail=1
	fi
done
exit $fail
