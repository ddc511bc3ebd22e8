#!/bin/bash
# Host-side packaging test: make install / uninstall.
#
# usage: tests/install/check.sh
#
# Kernels: KABIS from build/config.mk (made on demand by `make install`).
# Nothing is loaded into the host kernel and nothing is installed on the
# host: install goes to a DESTDIR under a fresh temporary directory,
# removed on exit. Checks:
#   install     `make install DESTDIR` installs exactly the modules (per ABI,
#               vermagic = ABI), iptables plugins, CLI, man pages and
#               libnfguard (shared library with soname symlinks, static
#               archive, libnfguard.h, libnfguard.pc) and the JSON Schema of
#               nfguard stats; each plugin loads in
#               iptables-legacy, the CLI runs, the man pages are found by
#               man(1) and render without warnings; the shared library has
#               soname libnfguard.so.1, exports exactly what libnfguard.h
#               declares and calls no printing function; a program built
#               with `pkg-config --cflags --libs libnfguard` against the
#               staged tree links (shared, and static with --static) and runs
#   uninstall   `make uninstall DESTDIR` removes every file install put there
# (make dist and make dkms: tests/package/check.sh, which builds the Debian
# packages from the tarball and has DKMS build and install the modules.)
# Prints "ok"/"not ok" per check and "N passed, N failed"; exit 0 only if
# every check passed. Build logs: build/check-install/*.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -eq 0 ] || { sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }

logs=$top/build/check-install
mkdir -p "$logs" || exit 2
rm -f "$logs"/*.log
work=$(mktemp -d "${TMPDIR:-/tmp}/nfguard-install.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
export LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1
jobs=$(nproc 2>/dev/null || echo 2)
t0=$(date +%s)

passed=0 failed=0
# A check collects problems with `bad`; `report NAME` prints its verdict.
problems=()
bad() { problems+=("$*"); }
report() {
	if [ ${#problems[@]} -eq 0 ]; then
		echo "ok     $1"
		passed=$((passed + 1))
	else
		echo "not ok $1"
		printf '         %s\n' "${problems[@]}"
		failed=$((failed + 1))
	fi
	problems=()
}

# run [-d WHAT] LOG CMD...: run CMD with output to build/check-install/LOG.log;
# on failure note it (as WHAT, default the command), with the log's tail.
run() {
	local what='' log
	[ "$1" = -d ] && { what=$2; shift 2; }
	log=$logs/$1.log
	shift
	if "$@" >"$log" 2>&1; then
		return 0
	fi
	bad "failed: ${what:-$*} (log: $log):"
	while IFS= read -r l; do bad "  | $l"; done < <(tail -n 12 "$log")
	return 1
}

# cfg VAR: value of VAR from build/config.mk, expanded by make.
cfg() {
	make -s --no-print-directory -f "$top/build/config.mk" -f - nfg-print <<<"nfg-print: ; @echo \$($1)"
}

# kdir ABI: the kernel build tree, as the Makefile picks it.
kdir() {
	local d
	for d in "$top/build/kernels/$1/usr/src/linux-headers-$1" "/lib/modules/$1/build" "/usr/src/linux-headers-$1"; do
		[ -f "$d/Makefile" ] && { echo "$d"; return 0; }
	done
	return 1
}

# vermagic KO ABI: the module's vermagic names exactly ABI.
vermagic() {
	local v
	v=$(modinfo -F vermagic "$1" 2>/dev/null)
	[ "${v%% *}" = "$2" ] || bad "$1: vermagic '$v', expected $2"
}

# ---------------------------------------------------------------- install --
stage=$work/stage
mkdir -p "$stage"
install_ok=0
run install make -C "$top" -j"$jobs" install DESTDIR="$stage" && install_ok=1
report "install: make install DESTDIR=\$stage succeeds"

if [ -f "$top/build/config.mk" ]; then
	ver=$(cfg NFG_VERSION) kabis=$(cfg KABIS) xtlibdir=$(cfg XTLIBDIR)
	sbindir=$(cfg sbindir) mandir=$(cfg mandir) libdir=$(cfg libdir) includedir=$(cfg includedir)
	datarootdir=$(cfg datarootdir)
else
	ver='' kabis='' xtlibdir='' sbindir='' mandir='' libdir='' includedir='' datarootdir=''
fi
if [ -z "$ver" ] || [ -z "$kabis" ] || [ -z "$xtlibdir" ] || [ -z "$sbindir" ] || [ -z "$mandir" ] ||
	[ -z "$libdir" ] || [ -z "$includedir" ] || [ -z "$datarootdir" ]; then
	bad "no usable build/config.mk (NFG_VERSION, KABIS, XTLIBDIR, sbindir, mandir, libdir, includedir, datarootdir): nothing else to check"
	report "install: configured"
	echo "$passed passed, $failed failed"
	exit 1
fi

# What the build made (and so what install must install).
kos() { # ABI: .ko basenames built for ABI, at least xt_rangeset.ko
	{ echo xt_rangeset.ko; (cd "$top/build/kernel/$1" 2>/dev/null && ls -- *.ko 2>/dev/null); } | sort -u
}
plugins=$(cd "$top/build/xtables" 2>/dev/null && ls -- libxt_*.so 2>/dev/null)
[ -n "$plugins" ] || plugins=libxt_rangeset.so
manpages="nfguard.8 nfguard-extensions.8"
# libnfguard: regular files, then the symlinks (name -> target)
libfiles="$libdir/libnfguard.so.1.0.0 $libdir/libnfguard.a $libdir/pkgconfig/libnfguard.pc $includedir/libnfguard.h"
liblinks="libnfguard.so.1:libnfguard.so.1.0.0 libnfguard.so:libnfguard.so.1"
# data: the JSON Schema of nfguard stats --json, nfguard's bash completion
datafiles="$datarootdir/nfguard/nfguard-stats.schema.json $datarootdir/bash-completion/completions/nfguard"

expected=$work/install.expected
{
	for abi in $kabis; do
		kos "$abi" | sed "s|^|/lib/modules/$abi/updates/nfguard/|"
	done
	for p in $plugins; do echo "$xtlibdir/$p"; done
	echo "$sbindir/nfguard"
	for m in $manpages; do echo "$mandir/man8/$m"; done
	for f in $libfiles; do echo "$f"; done
	for l in $liblinks; do echo "$libdir/${l%%:*}"; done
	for f in $datafiles; do echo "$f"; done
} | sort >"$expected"
(cd "$stage" && find . ! -type d | sed 's|^\.||' | sort) >"$work/install.found"
while IFS= read -r f; do bad "not installed: $f"; done < <(comm -23 "$expected" "$work/install.found")
while IFS= read -r f; do bad "unexpected file installed: $f"; done < <(comm -13 "$expected" "$work/install.found")
report "install: installs exactly the modules, plugins, CLI, man pages, libnfguard, the stats schema and the bash completion ($(wc -l <"$expected") files)"

# The installed bash completion is the one tests/completion/check.sh passes.
run completion "$top/tests/completion/check.sh" "$stage$datarootdir/bash-completion/completions/nfguard"
report "install: the installed bash completion completes nfguard's commands"

for abi in $kabis; do
	n=0
	for ko in $(kos "$abi"); do
		f=$stage/lib/modules/$abi/updates/nfguard/$ko
		if [ -f "$f" ]; then
			vermagic "$f" "$abi"
			n=$((n + 1))
		else
			bad "missing: ${f#"$stage"}"
		fi
	done
	report "install: $n module(s) in /lib/modules/$abi/updates/nfguard/, vermagic $abi"
done

for p in $plugins; do
	f=$stage$xtlibdir/$p
	ext=${p#libxt_} ext=${ext%.so}
	# lower-case extensions are matches, upper-case ones targets
	if [[ $ext == [[:lower:]]* ]]; then opt=(-m "$ext") what=match; else opt=(-j "$ext") what=target; fi
	if [ ! -f "$f" ]; then
		bad "missing: $xtlibdir/$p"
	else
		u=$(ldd -r "$f" 2>&1 | grep -e 'undefined symbol' -e 'not found' | sed 's/[[:space:]]*(.*//')
		[ -z "$u" ] || bad "ldd -r $p: $(wc -l <<<"$u") unresolved: $(head -n 3 <<<"$u" | tr '\n\t' '  ')..."
		out=$(XTABLES_LIBDIR=$stage$xtlibdir iptables-legacy "${opt[@]}" -h 2>&1)
		grep -q "^$ext $what options:" <<<"$out" ||
			bad "XTABLES_LIBDIR=\$stage$xtlibdir iptables-legacy ${opt[*]} -h: no '$ext $what options:' in: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
	fi
	report "install: plugin $xtlibdir/$p loads (ldd -r, iptables-legacy ${opt[*]} -h)"
done

cli=$stage$sbindir/nfguard
if [ ! -x "$cli" ]; then
	bad "missing or not executable: $sbindir/nfguard"
else
	out=$("$cli" --help 2>&1) || bad "nfguard --help exits $?"
	grep -q '^Usage: nfguard' <<<"$out" || bad "nfguard --help: no 'Usage: nfguard' line"
	out=$("$cli" --version 2>&1) || bad "nfguard --version exits $?"
	[ "$out" = "nfguard $ver" ] || bad "nfguard --version prints '$out', expected 'nfguard $ver'"
fi
report "install: $sbindir/nfguard runs --help and --version (nfguard $ver)"

for m in $manpages; do
	f=$stage$mandir/man8/$m
	if [ ! -f "$f" ]; then
		bad "missing: $mandir/man8/$m"
	else
		w=$(MANPATH=$stage$mandir man -w 8 "${m%.8}" 2>&1)
		[ "$w" = "$f" ] || bad "MANPATH=\$stage$mandir man -w 8 ${m%.8}: '$w'"
		out=$(man --warnings -l "$f" 2>"$work/man.err")
		[ ! -s "$work/man.err" ] || bad "man --warnings -l $m: $(head -n 3 "$work/man.err" | tr '\n' ' ')"
		grep -q '^NAME' <<<"$out" || bad "man -l $m: rendered page has no NAME section"
		out=$(groff -t -ww -z -man "$f" 2>&1)
		[ -z "$out" ] || bad "groff -ww -z $m: $(head -n 3 <<<"$out" | tr '\n' ' ')"
	fi
	report "install: man page $mandir/man8/$m found by man -w, renders without warnings"
done

# The pages name the paths of this installation (substituted by the man
# rule), no placeholder is left; nfguard-extensions(8) has a MATCH and a
# TARGET section (targets in capitals), -j TARGET in its SYNOPSIS, and its
# SYNCOOKIE example reads the cluster secret from a file.
ext=$stage$mandir/man8/nfguard-extensions.8 cli8=$stage$mandir/man8/nfguard.8
roffpath() { sed 's/-/\\-/g' <<<"$1"; }
if [ -f "$ext" ] && [ -f "$cli8" ]; then
	left=$(grep -ho '@[A-Za-z_]*@' "$ext" "$cli8" | sort -u | tr '\n' ' ')
	[ -z "$left" ] || bad "placeholders left in the man pages: $left"
	for f in "$ext" "$cli8"; do
		grep -qF "$(roffpath "$datarootdir/nfguard/nfguard-stats.schema.json")" "$f" ||
			bad "${f##*/} does not name $datarootdir/nfguard/nfguard-stats.schema.json"
	done
	[ "$datarootdir" = /usr/local/share ] || ! grep -q '/usr/local/share' "$ext" "$cli8" ||
		bad "a man page names /usr/local/share although datarootdir is $datarootdir"
	grep -qF "$(roffpath "$xtlibdir")/libxt_" "$ext" || bad "nfguard-extensions.8 does not name the plugins under $xtlibdir"
	layout=$(awk '/^\.SH /{sh=substr($0,5)} /^\.SS /{print sh ": " substr($0,5)}' "$ext" | tr '\n' ';')
	[ "$layout" = "MATCH EXTENSIONS: kconnlimit;MATCH EXTENSIONS: rangeset;TARGET EXTENSIONS: RANGESET;TARGET EXTENSIONS: RTCACHE;TARGET EXTENSIONS: SYNCOOKIE;" ] ||
		bad "nfguard-extensions.8 sections: $layout"
	sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$ext" | grep -q 'fB\\-j\\fP \\fItarget\\fP' ||
		bad "nfguard-extensions.8: no -j target in SYNOPSIS"
	grep -q 'secret set \\-f ' "$ext" || bad "nfguard-extensions.8: the SYNCOOKIE example does not read the secret from a file"
	! grep -qE 'secret set [0-9a-f]{32}' "$ext" || bad "nfguard-extensions.8: a secret on a command line"
else bad "no installed man pages"; fi
report "install: man pages name this installation's paths; nfguard-extensions(8) has MATCH and TARGET sections, -j in SYNOPSIS, the secret from a file"

# ------------------------------------------------------------- libnfguard --
so=$stage$libdir/libnfguard.so.1.0.0
hdr=$stage$includedir/libnfguard.h
for l in $liblinks; do
	t=$(readlink "$stage$libdir/${l%%:*}" 2>/dev/null)
	[ "$t" = "${l#*:}" ] || bad "$libdir/${l%%:*} links to '$t', expected ${l#*:}"
done
if [ -f "$so" ] && [ -f "$hdr" ]; then
	sn=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
	[ "$sn" = libnfguard.so.1 ] || bad "libnfguard.so.1.0.0 has SONAME '$sn', expected libnfguard.so.1"
	# Exported: exactly the functions libnfguard.h declares NFG_API.
	nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort >"$work/exported"
	grep -v '^#' "$hdr" | tr '\n' ' ' | grep -o 'NFG_API [^;(]*(' | sed 's/($//; s/.*[ *]//' | sort >"$work/declared"
	[ "$(wc -l <"$work/declared")" -ge 40 ] || bad "libnfguard.h: only $(wc -l <"$work/declared") NFG_API functions found"
	while IFS= read -r f; do bad "exported but not in libnfguard.h: $f"; done < <(comm -23 "$work/exported" "$work/declared")
	while IFS= read -r f; do bad "declared in libnfguard.h but not exported: $f"; done < <(comm -13 "$work/exported" "$work/declared")
	# The library prints nothing and never exits: errors go back to the caller.
	u=$(nm -D --undefined-only "$so" | awk '{ sub(/@.*/, "", $2); print $2 }' |
		grep -x -E '(v?f?printf|v?dprintf|puts|fputs|putchar|fputc|putc|perror|fwrite|err|errx|warn|warnx|syslog|exit|_exit|abort|stdout|stderr)' | tr '\n' ' ')
	[ -z "$u" ] || bad "libnfguard.so calls printing/exiting functions: $u"
else
	bad "libnfguard.so.1.0.0 or libnfguard.h not installed"
fi
report "install: libnfguard.so.1.0.0 (soname libnfguard.so.1, symlinks) exports exactly libnfguard.h's $(wc -l <"$work/declared" 2>/dev/null || echo 0) functions, prints nothing"

# A user's program, built the documented way against the staged tree.
cat >"$work/nfgtest.c" <<'EOF_C'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libnfguard.h>

int main(void)
{
	struct nfg_range r;
	struct nfg_err e = { .code = ENOENT };
	char buf[NFG_RANGE_STRLEN], err[128];

	if (nfg_range_parse("192.0.2.0-192.0.2.255", 0, &r, err, sizeof(err)) < 0 ||
	    nfg_range_format(&r, buf, sizeof(buf)) < 0 || strcmp(buf, "192.0.2.0/24") ||
	    r.family != NFG_FAMILY_IPV4 || strcmp(nfg_ext_name(NFG_EXT_SYNCOOKIE), "syncookie") ||
	    strcmp(nfg_err_str(&e), strerror(ENOENT)))
		return 1;
	printf("%s\n", nfg_version());
	return 0;
}
EOF_C
pc() { PKG_CONFIG_PATH=$stage$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage pkg-config "$@"; }
if ! flags=$(pc --cflags --libs libnfguard 2>&1); then
	bad "pkg-config --cflags --libs libnfguard (staged): $flags"
elif run -d "cc -std=c11 -pedantic nfgtest.c \$(pkg-config --cflags --libs libnfguard)" pkgconfig-shared \
	bash -c 'cc -std=c11 -Wall -Wextra -Werror -pedantic -o "$1/nfgtest" "$1/nfgtest.c" $2' - "$work" "$flags"; then
	out=$(LD_LIBRARY_PATH=$stage$libdir "$work/nfgtest" 2>&1) || bad "nfgtest exits $?: $out"
	[ "$out" = "$ver" ] || bad "nfgtest printed '$out', expected the version '$ver'"
	l=$(LD_LIBRARY_PATH=$stage$libdir ldd "$work/nfgtest" | awk '$1 == "libnfguard.so.1" { print $3 }')
	[ "$l" = "$stage$libdir/libnfguard.so.1" ] || bad "nfgtest uses libnfguard.so.1 from '$l', expected the staged one"
fi
report "install: a program built with pkg-config --cflags --libs libnfguard links against libnfguard.so.1 and runs"
# Static: the archive plus Requires.private (libmnl) from --static.
if ! flags=$(pc --static --libs libnfguard 2>&1); then
	bad "pkg-config --static --libs libnfguard (staged): $flags"
elif run -d "cc nfgtest.c libnfguard.a \$(pkg-config --static --libs libnfguard)" pkgconfig-static \
	bash -c 'cc -std=c11 -Wall -Werror $(PKG_CONFIG_PATH=$3 PKG_CONFIG_SYSROOT_DIR=$4 pkg-config --cflags libnfguard) -o "$1/nfgtest-static" "$1/nfgtest.c" -Wl,-Bstatic -lnfguard -Wl,-Bdynamic ${2//-lnfguard/}' - \
	"$work" "$flags" "$stage$libdir/pkgconfig" "$stage"; then
	out=$("$work/nfgtest-static" 2>&1) || bad "nfgtest-static exits $?: $out"
	[ "$out" = "$ver" ] || bad "nfgtest-static printed '$out', expected '$ver'"
	! ldd "$work/nfgtest-static" | grep -q libnfguard || bad "nfgtest-static is linked to a shared libnfguard"
fi
report "install: the same program links statically with pkg-config --static --libs libnfguard and runs"

# -------------------------------------------------------------- uninstall --
if [ "$install_ok" = 1 ]; then
	(cd "$stage" && find . ! -type d | sort) >"$work/before"
	[ -s "$work/before" ] || bad "install put no files in \$stage"
	run uninstall make -C "$top" uninstall DESTDIR="$stage"
	while IFS= read -r f; do bad "left behind: ${f#.}"; done < <(cd "$stage" && find . ! -type d | sort)
else
	bad "make install failed"
fi
report "uninstall: make uninstall DESTDIR=\$stage removes every installed file ($(sort -u "$work/before" 2>/dev/null | wc -l) files)"

# make dist and make dkms: tests/package/check.sh (make check-package, and
# the package stage of make check) checks the tarball (reproducible, its
# contents) and builds the Debian packages from it, DKMS building the modules
# of its nfguard-dkms for every ABI in a chroot.

echo "== $(($(date +%s) - t0))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
