#!/bin/sh
# Build nfguard-extensions.8 from its header and one roff fragment per
# extension:
#   man/assemble.sh HEADER --matches FRAGMENT... --targets FRAGMENT... > nfguard-extensions.8
# Each fragment is placed under a subsection named after its file, in the
# header's MATCH EXTENSIONS (@MATCHES@) or TARGET EXTENSIONS (@TARGETS@)
# section: NAME.man is the match "NAME", NAME-target.man or a target
# fragment the target "NAME" in capitals (targets are uppercase, as
# iptables names them).
set -eu
head=$1
shift
matches= targets= to=
for a in "$@"; do
	case "$a" in
	--matches) to=m ;;
	--targets) to=t ;;
	*)
		[ -n "$to" ] || { echo "assemble.sh: $a: --matches or --targets first" >&2; exit 2; }
		if [ "$to" = m ]; then matches="$matches $a"; else targets="$targets $a"; fi
		;;
	esac
done
frags() { # upper|lower FRAGMENT...
	case_=$1
	shift
	for f in "$@"; do
		name=$(basename "$f" .man)
		name=${name%-target}
		[ "$case_" = lower ] || name=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
		printf '.SS %s\n' "$name"
		cat "$f"
	done
}
sed -n '/^@MATCHES@/q;p' "$head"
# shellcheck disable=SC2086
frags lower $matches
sed -n '/^@MATCHES@/,/^@TARGETS@/p' "$head" | sed '1d;$d'
# shellcheck disable=SC2086
frags upper $targets
sed -n '/^@TARGETS@/,$p' "$head" | sed 1d
