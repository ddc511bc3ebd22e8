// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfguard version (also nfguard -V / --version): "nfguard VERSION", the
 * release of the libnfguard the CLI was built with.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "libnfguard.h"

void usage_version(FILE *f)
{
	fprintf(f, "nfguard version | -V | --version\n"
		"  print \"nfguard VERSION\"\n");
}

int cmd_version(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage_version(stdout);
		return 0;
	}
	if (argc > 1) {
		cli_err("version", "unexpected argument \"%s\"", argv[1]);
		return CLI_EXIT_USAGE;
	}
	printf("nfguard %s\n", nfg_version());
	cli_flush_or_die("version");
	return 0;
}
