#!/bin/bash
# Build the Debian packages of the working tree.
#
# usage: tests/package/build-deb.sh [-t TARBALL] OUTDIR [VERSION]
#
# Copies the files of the working tree git knows or would add (git ls-files
# --cached --others --exclude-standard: what `make dist`
# would ship, with uncommitted edits), or with -t the contents of a `make
# dist` tarball (tests/package/check.sh: the packages are built from the
# release tarball), to OUTDIR/src/nfguard-V/, puts
# packaging/debian at debian/, and runs dpkg-buildpackage -us -uc -b there;
# the .debs, .buildinfo and .changes land in OUTDIR/src/, moved to OUTDIR.
# VERSION (upgrade tests): rewrite AC_INIT's version and prepend a
# debian/changelog entry, so one tree gives version N and N+1.
# Log: OUTDIR/build.log. Exit status: dpkg-buildpackage's.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
tarball=
if [ "${1:-}" = -t ]; then
	tarball=$(realpath "${2:?usage: build-deb.sh [-t TARBALL] OUTDIR [VERSION]}")
	shift 2
fi
out=${1:?usage: build-deb.sh [-t TARBALL] OUTDIR [VERSION]}
newver=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$(sed -n 's/^AC_INIT(\[nfguard\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
[ -n "$newver" ] && ver=$newver
src=$out/src/nfguard-$ver
rm -rf "$out/src" && mkdir -p "$src"
if [ -n "$tarball" ]; then
	tar -xzf "$tarball" -C "$src" --strip-components=1
else
	(cd "$top" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf -) | tar -xf - -C "$src"
fi
mv "$src/packaging/debian" "$src/debian"
if [ -n "$newver" ]; then
	sed -i "s/^AC_INIT(\[nfguard\], \[[^]]*\]/AC_INIT([nfguard], [$newver]/" "$src/configure.ac"
	date=$(date -R -u -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")
	{ printf 'nfguard (%s) unstable; urgency=medium\n\n  * Test build %s.\n\n -- nfguard developers <nfguard@example.org>  %s\n\n' \
		"$newver" "$newver" "$date"; cat "$src/debian/changelog"; } > "$src/debian/changelog.new"
	mv "$src/debian/changelog.new" "$src/debian/changelog"
fi
rm -f "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
cd "$src"
if ! dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	exit 1
fi
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out"/
ls "$out"/*.deb
