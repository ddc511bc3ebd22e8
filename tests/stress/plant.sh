#!/bin/bash
# Prove the stress/torture/fuzz suites catch what they guard: build copies of
# the kernel modules with one bug planted each (under build/plant/BUG/ABI/kernel),
# then boot each kernel once and run, per bug, the case that must catch it
# with those modules. Every case is expected to FAIL; the script prints
# "caught" or "MISSED" per bug and exits non-zero if one was missed.
#
#   tests/stress/plant.sh [-r] [-k ABI]... [BUG...]  (default: every bug, KABIS)
#   -r: reuse the planted modules already built
#
# Bugs (sed on a copy of kernel/; the tree is not touched):
#   parser     fuzz: element address length not checked (v4 set takes 16 bytes)
#   policy     fuzz: the name policy has no maximum length (long names pass)
#   uaf        stress: a dump's .done drops its set reference twice
#   leak       stress: a released set keeps its tree (nodes never freed)
#   counter    stress: live-object counter not decremented when a set is freed
#   inversion  stress: swap locks the two sets in argument order (ABBA),
#              with a 1 ms sleep between the two locks
#   fragment   torture: the IPv4 match ignores non-first fragments
#   kcl-policy    fuzz (kconnlimit): TOP's count has no range (0 accepted)
#   sc-parser     fuzz (syncookie): addresses of 5..15 bytes taken as IPv6
#   rtc-policy    fuzz (rtcache): FLUSH takes any family
#   kcl-invalid   torture: kconnlimit ignores packets without a conntrack
#   rtc-untracked torture: RTCACHE drops packets without a conntrack
#   kcl-leak      stress (kconnlimit): the GC never frees a key left empty
#   rtc-counter   stress (rtcache): live_entries not decremented on free
#   rtc-leak      stress (rtcache): a freed entry's memory is never freed
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
kabis=() reuse=0
while getopts rk: o; do
	case $o in k) kabis+=("$OPTARG") ;; r) reuse=1 ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ ${#kabis[@]} -gt 0 ] || read -r -a kabis <<<"${KABIS:-$(sed -n "s/^KABIS *= *//p" build/config.mk)}"
all=(parser policy uaf leak counter inversion fragment kcl-policy sc-parser rtc-policy
	kcl-invalid rtc-untracked kcl-leak rtc-counter rtc-leak)
bugs=("$@")
[ ${#bugs[@]} -gt 0 ] || bugs=("${all[@]}")

declare -A CASE=([parser]=fuzz_rangeset_nl [policy]=fuzz_rangeset_nl [uaf]=stress_rangeset
	[leak]=stress_rangeset [counter]=stress_rangeset [inversion]=stress_rangeset
	[fragment]=torture_rangeset [kcl-policy]=fuzz_kconnlimit_nl [sc-parser]=fuzz_syncookie_nl
	[rtc-policy]=fuzz_rtcache_nl [kcl-invalid]=torture_kconnlimit_rtcache
	[rtc-untracked]=torture_kconnlimit_rtcache [kcl-leak]=stress_kconnlimit
	[rtc-counter]=stress_rtcache [rtc-leak]=stress_rtcache)
# the modules each bug's case loads (built from the planted copy)
declare -A MODS=([kcl-policy]=xt_kconnlimit [sc-parser]=xt_SYNCOOKIE [rtc-policy]=xt_RTCACHE
	[kcl-invalid]="xt_kconnlimit xt_RTCACHE" [rtc-untracked]="xt_kconnlimit xt_RTCACHE"
	[kcl-leak]=xt_kconnlimit [rtc-counter]=xt_RTCACHE [rtc-leak]=xt_RTCACHE)

plant() { # BUG DIR: apply BUG to the copy in DIR; fail if the pattern is gone
	local f e
	case $1 in
	parser) f=rangeset_nl.c e='s/if (nla_len(tb\[NFG_RS_E_START\]) != alen ||/if (0 \&\& (nla_len(tb[NFG_RS_E_START]) != alen) \&\&/' ;;
	policy) f=rangeset_nl.c e='s/{ .type = NLA_NUL_STRING, .len = XT_RANGESET_MAXNAMELEN - 1 }/{ .type = NLA_NUL_STRING }/' ;;
	uaf) f=rangeset_nl.c e='s/^\(\t*\)nfg_rs_put_deferred(d->set);/&\n\1nfg_rs_put_deferred(d->set);/' ;;
	leak) f=rangeset_core.c e='s/^\trs_tree_free(&core->root);/\tcore->root = RB_ROOT;/' ;;
	counter) f=rangeset_nl.c e='0,/atomic_dec(&nfg_rs_live_objects);/s//(void)0;/' ;;
	# (msleep: under TCG the vCPUs take turns every few ms, so without a
	# wider window the ABBA interleaving almost never happens)
	inversion) f=rangeset_core.c e='s/^\tif (a > b)$/\tif (0)/; s/^\tdown_write(&a->lock);$/&\n\tmsleep(1);/; 0,/^#include/s//#include <linux\/delay.h>\n&/' ;;
	fragment) f=rangeset_mt.c e='s/^\tconst struct iphdr \*iph = ip_hdr(skb);/&\n\n\tif (par->fragoff)\n\t\treturn false;/' ;;
	kcl-policy) f=kconnlimit_nl.c e='s/NLA_POLICY_RANGE(NLA_U32, 1, NFG_KCL_TOP_MAX)/{ .type = NLA_U32 }/' ;;
	sc-parser) f=syncookie_nl.c e='s/^\tif (plen != 4 \&\& plen != 16) {$/\tif (plen < 4) {/' ;;
	rtc-policy) f=rtcache_nl.c e='s/^\t\tif (family != NFPROTO_IPV4 \&\& family != NFPROTO_IPV6) {$/\t\tif (0) {/' ;;
	kcl-invalid) f=kconnlimit_mt.c e='s/^\tct = nf_ct_get(skb, \&ctinfo);$/&\n\tif (!ct)\n\t\treturn false;/' ;;
	rtc-untracked) f=rtcache_tg.c e='s/^\tif (nfg_rtc_skip_skb(skb, ct) || nfg_rtc_skip_dev(xt_in(par)) ||$/\tif (!ct)\n\t\treturn NF_DROP;\n&/' ;;
	kcl-leak) f=kconnlimit_core.c e='s/^\t\t\tif (!node->count)$/\t\t\tif (0)/' ;;
	rtc-counter) f=rtcache_net.c e='0,/^\tatomic_dec(&nfg_rtc_live_entries);$/s//\t(void)0;/' ;;
	rtc-leak) f=rtcache_net.c e='0,/^\tkfree(e);$/s//\t(void)e;/' ;;
	*) echo "unknown bug $1" >&2; return 1 ;;
	esac
	cp "$2/$f" "$2/$f.orig"
	sed -i "$e" "$2/$f"
	! cmp -s "$2/$f" "$2/$f.orig" || { echo "plant $1: pattern not found in $f" >&2; return 1; }
	rm "$2/$f.orig"
}

kdir() {
	local k
	for k in "build/kernels/$1/usr/src/linux-headers-$1" "/lib/modules/$1/build" "/usr/src/linux-headers-$1"; do
		[ -e "$k/Makefile" ] && { echo "$k"; return; }
	done
}

rc=0
for abi in "${kabis[@]}"; do
	cases=()
	for bug in "${bugs[@]}"; do
		# kernel/Kbuild finds the tree through ../include from kernel/
		d=$top/build/plant/$bug/$abi/kernel
		m=${MODS[$bug]:-xt_rangeset}
		[ $reuse = 1 ] && [ -e "$d/${m%% *}.ko" ] || {
		rm -rf "${d%/kernel}" && mkdir -p "$d" && ln -s "$top/include" "${d%/kernel}/include" &&
			cp -r kernel/. "$d/" && rm -rf "$d/compat/gen" &&
			find "$d" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \) -delete &&
			keep=${MODS[$bug]:-xt_rangeset} &&
			sed -i "/^obj-m += /{/${keep// /\\|}/!d}" "$d/Kbuild"	# only the modules under test
		plant "$bug" "$d" || exit 1
		"$top/tests/kbuild-chroot.sh" -k "$abi" make -s -C "$(kdir "$abi")" M="$d" modules >"$d/build.log" 2>&1 || {
			cat "$d/build.log" >&2
			echo "plant $bug: build failed for $abi" >&2
			exit 1
		}
		}
		w=$top/build/plant/cases/$abi/plant_${bug}.sh
		mkdir -p "${w%/*}"
		printf '#!/bin/bash\n# planted bug: %s\nexport NFG_KMOD_DIR=%s\nexec bash %s\n' \
			"$bug" "$d" "$top/tests/vm/cases/${CASE[$bug]}.sh" >"$w"
		chmod +x "$w"
		cases+=("$w")
	done
	out=$top/build/plant/out/$abi
	mkdir -p "$out"
	./tests/vm/run.sh -k "$abi" -t 150 -o "$out" "${cases[@]}" >"$out.log" 2>&1
	for bug in "${bugs[@]}"; do
		line=$(grep -E "^(PASS|FAIL) plant_$bug " "$out.log")
		if [[ $line == FAIL* ]]; then
			echo "$abi $bug (${CASE[$bug]}): caught: ${line#FAIL plant_$bug }"
		else
			echo "$abi $bug (${CASE[$bug]}): MISSED: ${line:-no result}"
			rc=1
		fi
	done
done
exit $rc
