# shellcheck shell=sh
# nfg_vm_kabis TOP: print the kernel ABIs to test, space separated:
# $KABIS if set, else "KABIS = ..." from TOP/build/config.mk, else the newest
# 6.1, 6.12 and later (7.x from trixie-backports) Debian kernels with headers (build/kernels/ABI/usr/src or
# /usr/src) and an image (build/kernels/ABI/boot or /boot).
nfg_vm_kabis() {
	if [ -n "${KABIS:-}" ]; then
		echo "$KABIS"
		return 0
	fi
	if [ -f "$1/build/config.mk" ]; then
		_k=$(sed -n 's/^[[:space:]]*KABIS[[:space:]]*[:?]\{0,1\}=[[:space:]]*//p' "$1/build/config.mk" | tail -n 1)
		if [ -n "$_k" ]; then
			echo "$_k"
			return 0
		fi
	fi
	_k=
	# the newest series: any after 6.12 (trixie-backports' 7.x)
	for _series in '6.1.[0-9]*-amd64' '6.12.[0-9]*-amd64' '6.1[3-9].[0-9]*-amd64 [7-9].[0-9]*-amd64'; do
		# shellcheck disable=SC2086 # the series are globs
		_new=$(for _s in $_series; do
			printf '%s\n' "$1"/build/kernels/$_s /usr/src/linux-headers-$_s
		done | while read -r _d; do
			_a=${_d##*/}
			_a=${_a#linux-headers-}
			{ [ -f "$1/build/kernels/$_a/usr/src/linux-headers-$_a/Makefile" ] ||
				[ -f "/usr/src/linux-headers-$_a/Makefile" ]; } &&
				{ [ -r "$1/build/kernels/$_a/boot/vmlinuz-$_a" ] || [ -r "/boot/vmlinuz-$_a" ]; } &&
				echo "$_a"
		done | sort -V | tail -n 1)
		[ -z "$_new" ] || _k="$_k $_new"
	done
	echo "${_k# }"
}
