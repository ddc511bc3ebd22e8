#!/bin/sh
# Run a kernel module build inside a Debian chroot of another suite.
#
# usage: tests/kbuild-chroot.sh --make SUITE [PACKAGE...]
#        tests/kbuild-chroot.sh --check SUITE
#        tests/kbuild-chroot.sh -k ABI COMMAND [ARG...]
#        tests/kbuild-chroot.sh -s SUITE COMMAND [ARG...]
#
# A kernel newer than the host's release (trixie-backports' 7.x on a
# bookworm host) ships kbuild tools linked against a newer glibc and headers
# that name a newer gcc: its modules are built with that suite's own tools.
# --make creates the chroot with mmdebstrap (deb.debian.org; make, gcc,
# sparse, kmod, perl, and the PACKAGEs the kernel's header packages depend
# on) under $NFG_CHROOT_CACHE (default /var/cache/nfguard)/kbuild-SUITE,
# unless one with the same package list is there (key file). Machine-wide:
# every worktree of the machine shares it, as they share build/kernels.
# --check exits 0 when that chroot exists.
# Both also give the chroot a sparse that parses the newest kernels' headers
# (__typeof_unqual__, Linux 6.14+): when the suite's own does not (trixie's
# 0.6.4), --make builds the upstream tarball of that version (apt-get source
# from the same mirror, checked against the pinned sha256) with
# tests/sparse/linux-7.patch into the chroot's /usr/local/bin/sparse,
# once per patch (key file .nfg-sparse); --check fails until then.
# -k ABI COMMAND: runs COMMAND for kernel ABI (a module build: make -C
# KDIR M=...). When tests/deps.sh marked the ABI as one of a newer suite
# ($KERNELS_DIR, default build/kernels, /ABI/.kbuild-chroot holds the
# suite), COMMAND runs in that suite's chroot, in a private mount namespace
# (unshare -m: nothing stays mounted when it ends) where this repository,
# KERNELS_DIR and /proc, /dev are bind-mounted at their own (real) paths and
# /tmp is a private tmpfs; environment, cwd and exit status pass through
# (needs root: chroot, mounts), PATH with /usr/local/bin first (the sparse
# above). A kernel whose Makefile runs scripts/checker-valid.sh (the C=1/C=2
# gate) but whose kbuild package lacks it (Debian's linux-kbuild-7.3) gets
# tests/sparse/scripts/checker-valid.sh there, through a read-only overlay in that
# namespace (the unpacked tree is not changed). A kernel tree that lives
# outside both (the debug kernel, linked from KERNELS_DIR into its cache)
# lists its directories in KERNELS_DIR/ABI/.kbuild-binds, one per line: they
# are bind-mounted too. Any other ABI: COMMAND runs here as it is.
# -s SUITE COMMAND: the same for a suite named directly (a kernel build:
# tests/debug/build-kernel.sh), with the directories of $NFG_CHROOT_BINDS
# (space separated) bind-mounted besides this repository.
set -eu
cache=${NFG_CHROOT_CACHE:-/var/cache/nfguard}
base_pkgs="make gcc libc6-dev kmod sparse perl bc"

here=$(cd "$(dirname "$0")" && pwd -P)
sparse_patch=$here/sparse/linux-7.patch
sparse_src=sparse_0.6.4.orig.tar.gz
sparse_sha=bd98fd8a122ff79d38a81feb75ec728699101e80701f33f21180912c3c9e949c

# sparse_ok ROOT: the chroot has our sparse built with the current patch, or
# none of ours and a suite's own sparse that needs none of it (a probe of the
# three things the patch adds: no output at all).
sparse_ok() {
	if [ -f "$1/.nfg-sparse" ]; then
		[ "$(cat "$1/.nfg-sparse")" = "$(sha256sum <"$sparse_patch")" ]
		return
	fi
	cat >"$1/tmp/nfg-probe$$.c" <<'EOF'
static inline int u(const int *q)
{
	__typeof_unqual__(*q) v = *q;
	return v;
}
static inline long f1(long a) { long b = a; return b + 1; }
static inline long f2(long a) { long c = a; return c + 2; }
_Static_assert(!__builtin_types_compatible_p(typeof(f1), typeof(u)), "f");
_Static_assert(sizeof("ab") - 1 == __builtin_strlen("ab"), "s");
long g(long a);
long g(long a) { return f1(a) + f2(a); }
EOF
	out=$(chroot "$1" /usr/bin/sparse "/tmp/nfg-probe$$.c" 2>&1) || out=failed
	rm -f "$1/tmp/nfg-probe$$.c"
	[ -z "$out" ]
}

# make_sparse ROOT SUITE: build the patched sparse into ROOT/usr/local/bin.
make_sparse() {
	root=$1 suite=$2 w=$1/usr/local/src/nfg-sparse
	rm -rf "$w" && mkdir -p "$w/lists/partial" "$w/cache/archives/partial" "$w/empty"
	: >"$w/status"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" >"$w/sources.list"
	set -- -o Dir::Etc::SourceList="$w/sources.list" -o Dir::Etc::SourceParts="$w/empty" \
		-o Dir::Etc::PreferencesParts="$w/empty" -o Dir::State::Lists="$w/lists" \
		-o Dir::State::status="$w/status" -o Dir::Cache="$w/cache"
	apt-get "$@" -q update >"$w/log" 2>&1 || { echo "kbuild-chroot: apt-get update for sparse's source failed ($w/log)" >&2; return 1; }
	# only the upstream tarball is used (the rest may be missing from a mirror)
	(cd "$w" && apt-get "$@" -q source --download-only sparse >>"$w/log" 2>&1) || true
	echo "$sparse_sha  $w/$sparse_src" | sha256sum -c --quiet >>"$w/log" 2>&1 ||
		{ echo "kbuild-chroot: no $sparse_src with the expected sha256 ($w/log)" >&2; return 1; }
	tar -xzf "$w/$sparse_src" -C "$w"
	patch -d "$w/sparse-0.6.4" -p1 <"$sparse_patch" >>"$w/log" 2>&1 ||
		{ echo "kbuild-chroot: $sparse_patch does not apply ($w/log)" >&2; return 1; }
	chroot "$root" make -C /usr/local/src/nfg-sparse/sparse-0.6.4 -j"$(nproc)" sparse \
		HAVE_GTK=no HAVE_LLVM=no HAVE_LIBXML=no >>"$w/log" 2>&1 ||
		{ echo "kbuild-chroot: building sparse failed ($w/log)" >&2; return 1; }
	install -m 755 "$w/sparse-0.6.4/sparse" "$root/usr/local/bin/sparse.new"
	mv "$root/usr/local/bin/sparse.new" "$root/usr/local/bin/sparse"
	sha256sum <"$sparse_patch" >"$root/.nfg-sparse"
	rm -rf "$w"
	echo "kbuild-chroot: $root/usr/local/bin/sparse (0.6.4 + $(basename "$sparse_patch"))"
}

case ${1:-} in
--make | --check)
	mode=$1 suite=${2:?suite}
	shift 2
	root=$cache/kbuild-$suite
	key="$suite $base_pkgs $*"
	if [ "$mode" = --check ]; then
		[ -f "$root/.nfg-key" ] && sparse_ok "$root"
		exit
	fi
	if [ -f "$root/.nfg-key" ] && [ "$(cat "$root/.nfg-key")" = "$key" ]; then
		[ -f "$root/.nfg-needs" ] || echo "$*" >"$root/.nfg-needs"
		sparse_ok "$root" || make_sparse "$root" "$suite"
		exit
	fi
	mkdir -p "$cache"
	rm -rf --one-file-system "$root.new"
	# shellcheck disable=SC2086
	mmdebstrap --variant=apt --include="$(echo $base_pkgs "$@" | tr ' ' ',')" "$suite" "$root.new" \
		"deb http://deb.debian.org/debian $suite main" >"$cache/kbuild-$suite.log" 2>&1 ||
		{ echo "kbuild-chroot: mmdebstrap $suite failed ($cache/kbuild-$suite.log)" >&2; exit 1; }
	echo "$key" >"$root.new/.nfg-key"
	# what the kernel's header packages need, for other chroots of this suite
	echo "$*" >"$root.new/.nfg-needs"
	rm -rf --one-file-system "$root"
	mv "$root.new" "$root"
	echo "kbuild-chroot: made $root"
	sparse_ok "$root" || make_sparse "$root" "$suite"
	exit
	;;
-h | --help | '')
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac

if { [ "$1" != -k ] && [ "$1" != -s ]; } || [ $# -lt 3 ]; then
	echo "kbuild-chroot: usage: -k ABI COMMAND... | -s SUITE COMMAND..." >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd -P)
kernels=${KERNELS_DIR:-$top/build/kernels}
abi=
if [ "$1" = -s ]; then
	suite=$2
	binds="$top ${NFG_CHROOT_BINDS:-}"
else
	abi=$2
	[ -f "$kernels/$abi/.kbuild-chroot" ] || { shift 2 && exec "$@"; }
	suite=$(cat "$kernels/$abi/.kbuild-chroot")
	binds="$top $kernels"
	[ ! -f "$kernels/$abi/.kbuild-binds" ] || binds="$binds $(cat "$kernels/$abi/.kbuild-binds")"
fi
shift 2
root=$cache/kbuild-$suite
[ -f "$root/.nfg-key" ] || { echo "kbuild-chroot: no $root (run tests/deps.sh)" >&2; exit 1; }
# The kbuild scripts/ directories of this kernel that lack checker-valid.sh
# while its Makefile runs it: overlaid with tests/sparse/ below.
lack=
for mk in "$kernels/${abi:-.none}"/usr/src/*/Makefile; do
	grep -q 'scripts/checker-valid.sh' "$mk" 2>/dev/null || continue
	d=$(cd "$(dirname "$mk")/scripts" 2>/dev/null && pwd -P) || continue
	[ -e "$d/checker-valid.sh" ] || lack="$lack $d"
done
# Inner script: $1 = root, $2 = cwd, $3 = bind dirs, $4 = scripts dirs to
# overlay, $5 = the directory holding checker-valid.sh, then the command.
# shellcheck disable=SC2016
exec unshare --mount --propagation private -- sh -eu -c '
root=$1 cwd=$2 binds=$3 lack=$4 extra=$5
shift 5
for d in $lack; do
	mount -t overlay nfg-scripts -o "lowerdir=$extra:$d" "$d" ||
		echo "kbuild-chroot: no checker-valid.sh overlay on $d: C=1/C=2 will not run sparse" >&2
done
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
for d in $binds; do
	d=$(cd "$d" && pwd -P)
	mkdir -p "$root$d"
	mount --rbind "$d" "$root$d"
done
PATH=/usr/local/sbin:/usr/local/bin:$PATH exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' nfg-kbuild-chroot "$root" "$(pwd -P)" "$binds" "$lack" "$here/sparse/scripts" "$@"
