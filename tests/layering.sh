#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel layering check (issue 18: "no file of a lower layer calls a higher
# one"). For every module of kernel/Kbuild, each object may reference only
# symbols defined by objects of its own layer or below, by file suffix:
#
#   _ct    conntrack side of a core (below it: the core calls it, the unit
#          harness replaces it)
#   _core  the extension's state and logic, also compiled by tests/unit
#   _net   per-netns state on top of a core that must stay pure (tables,
#          entries' lifetime, counters; kernel only), shared by the layers
#          above
#   _nl    genetlink control plane
#   _mt/_tg  the xt match/target, module init/exit (top)
#
# Known exceptions, "object symbol" per line, are in tests/layering.exceptions
# (the owner of the code empties them); an exception no longer needed is
# reported. Reads the built objects with nm, so run it after `make modules`.
#
# usage: tests/layering.sh BUILD_DIR...   (e.g. build/kernel/<abi>)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
exceptions=$top/tests/layering.exceptions
[ $# -gt 0 ] || { echo "usage: $0 BUILD_DIR..." >&2; exit 2; }

layer_of() {
	case $1 in
	*_ct.o) echo 0 ;;
	*_core.o) echo 1 ;;
	*_net.o) echo 2 ;;
	*_nl.o) echo 3 ;;
	*_mt.o | *_tg.o) echo 4 ;;
	*) echo "layering: $1: unknown layer (name it *_ct, _core, _net, _nl, _mt or _tg)" >&2
	   return 1 ;;
	esac
}

# "module obj obj ..." from the xt_NAME-y lines of the Kbuild.
modules=$(sed -n 's/^\(xt_[A-Za-z0-9_]*\)-y[[:space:]]*:=[[:space:]]*\(.*\)$/\1 \2/p' \
	  "$top/kernel/Kbuild")
[ -n "$modules" ] || { echo "layering: no module in kernel/Kbuild" >&2; exit 1; }

fail=0
used_exc=$(mktemp)
trap 'rm -f "$used_exc"' EXIT
for dir in "$@"; do
	while read -r mod objs; do
		# symbol -> layer and object that define it, within this module
		declare -A def_layer=() def_obj=()
		for o in $objs; do
			[ -f "$dir/$o" ] || { echo "layering: $dir/$o: not built" >&2; exit 1; }
			l=$(layer_of "$o")
			for s in $(nm -g --defined-only "$dir/$o" | awk '{ print $3 }'); do
				def_layer[$s]=$l
				def_obj[$s]=$o
			done
		done
		for o in $objs; do
			l=$(layer_of "$o")
			for s in $(nm -u "$dir/$o" | awk '{ print $2 }'); do
				[ -n "${def_layer[$s]:-}" ] || continue
				[ "${def_layer[$s]}" -gt "$l" ] || continue
				if grep -qx "${o%.o} $s" <(sed 's/[[:space:]]*#.*//; /^$/d' "$exceptions"); then
					echo "${o%.o} $s" >>"$used_exc"
					echo "layering: known exception: $mod: ${o%.o} uses $s from ${def_obj[$s]%.o}"
					continue
				fi
				echo "layering: $dir: $mod: ${o%.o} (lower) uses $s, defined by ${def_obj[$s]%.o} (higher)"
				fail=1
			done
		done
		unset def_layer def_obj
	done <<<"$modules"
done
sed 's/[[:space:]]*#.*//; /^$/d' "$exceptions" | while read -r o s; do
	grep -qx "$o $s" "$used_exc" ||
		echo "layering: exception no longer needed, remove it from tests/layering.exceptions: $o $s"
done
[ $fail = 0 ] && echo "layering: ok ($*)"
exit $fail
