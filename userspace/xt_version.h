/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included by the Makefile into every libxt_*.so: the package version
 * (NFG_VERSION, from configure.ac) as a string in the plugin, so an installed
 * plugin tells which nfguard it belongs to (`strings libxt_X.so | grep
 * nfguard-version=`; tests/install and tests/package check it).
 */
__attribute__((used)) static const char nfg_xt_version[] = "nfguard-version=" NFG_VERSION;
