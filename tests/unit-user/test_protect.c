// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnfguard's protection profiles (nfg_protect.c) without the CLI and
 * without a kernel: profiles are checked (every bad input refused with its
 * errno and a message), planned offline (nfg_protect_build() with no
 * handle: the batch for an empty ruleset), and rendered as the command, the
 * script and JSON, byte for byte what `nfguard protect --dry-run` and
 * `--show --json` print for the same profile. Applying, checking and
 * reading need a kernel: tests/vm/cases/cli_protect*.sh.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "libnfguard.h"
#include "tap.h"

static void ports(struct nfg_profile_ports *p, uint8_t proto, unsigned int n, ...)
{
	va_list ap;
	unsigned int i;

	p->proto = proto;
	p->n = n;
	va_start(ap, n);
	for (i = 0; i < n; i++)
		p->port[i] = (uint16_t)va_arg(ap, int);
	va_end(ap);
}

/* A profile of every part: -4 if @only4. */
static void full(struct nfg_profile *p, bool only4)
{
	nfg_profile_init(p);
	if (only4)
		p->families = NFG_PROFILE_IP;
	ports(&p->syncookie, 6, 2, 80, 443);
	p->sc.wscale = 7;
	p->sc.timeout = 60;
	p->nkcl = 2;
	p->kcl[0] = (struct nfg_profile_kcl){ .limit = 64, .prefix = 24, .prefix6 = 64 };
	ports(&p->kcl[0].ports, 6, 1, 80);
	p->kcl[1] = (struct nfg_profile_kcl){ .limit = 10, .prefix = -1, .prefix6 = 64 };
	ports(&p->kcl[1].ports, 17, 1, 53);
	p->nbl = 1;
	strcpy(p->bl[0], "bl4");
	p->bl_family[0] = NFG_FAMILY_IPV4;
	p->rtcache = true;
}

static const char *const full4_ops[] = {
	"add table ip nfguard { comment \"managed by nfguard protect\"; }",
	"add chain ip nfguard blocklist { type filter hook prerouting priority -310; }",
	"add rule ip nfguard blocklist -m rangeset --match-set bl4 src -j DROP",
	"add chain ip nfguard kconnlimit",
	"add rule ip nfguard kconnlimit -m kconnlimit --kconnlimit-above 64 --kconnlimit-mask 24 --kconnlimit-saddr -j REJECT --reject-with tcp-reset",
	"add chain ip nfguard kconnlimit-2",
	"add rule ip nfguard kconnlimit-2 -m kconnlimit --kconnlimit-above 10 --kconnlimit-mask 32 --kconnlimit-saddr -j REJECT --reject-with icmp-port-unreachable",
	"add chain ip nfguard input { type filter hook input priority 0; }",
	"add rule ip nfguard input -p tcp --dport 80 --syn -j kconnlimit",
	"add rule ip nfguard input -p udp --dport 53 -j kconnlimit-2",
	"add chain ip nfguard forward { type filter hook forward priority 0; }",
	"add rule ip nfguard forward -p tcp --dport 80 --syn -j kconnlimit",
	"add rule ip nfguard forward -p udp --dport 53 -j kconnlimit-2",
	"add chain ip nfguard syncookie { type filter hook prerouting priority -300; }",
	"add rule ip nfguard syncookie -p tcp --dport 80 -j SYNCOOKIE --mode proxy --wscale 7 --allowlist-timeout 60 --allowlist-mask 32",
	"add rule ip nfguard syncookie -p tcp --dport 443 -j SYNCOOKIE --mode proxy --wscale 7 --allowlist-timeout 60 --allowlist-mask 32",
	"add chain ip nfguard rtcache { type filter hook forward priority -150; }",
	"add rule ip nfguard rtcache -j RTCACHE",
};

#define CMD4 "nfguard protect -4 --syncookie tcp/80,443 --syncookie-wscale 7 " \
	"--syncookie-allowlist-timeout 60 --kconnlimit 64/24 tcp/80 --kconnlimit 10 udp/53 " \
	"--blocklist bl4 --rtcache\n"

static void test_build_render(void)
{
	struct nfg_protect_plan *plan = NULL;
	struct nfg_profile p;
	struct nfg_err e;
	size_t i, n = sizeof(full4_ops) / sizeof(full4_ops[0]);
	char *out = NULL, *want;
	int ret;

	full(&p, true);
	CHECK(nfg_profile_check(&p, &e) == 0, "%s", nfg_err_str(&e));
	ret = nfg_protect_build(NULL, &p, &plan, &e);
	CHECK(ret == 0 && plan, "build: %d %s", ret, nfg_err_str(&e));
	if (!plan)
		return;
	CHECK(nfg_protect_plan_count(plan) == n, "%zu operations", nfg_protect_plan_count(plan));
	for (i = 0; i < n && i < nfg_protect_plan_count(plan); i++)
		CHECK_STR(nfg_protect_plan_op(plan, i), full4_ops[i]);
	CHECK(nfg_protect_plan_op(plan, n) == NULL, "past the end");
	CHECK(nfg_protect_plan_foreign(plan) == 0, "offline: nothing foreign");
	CHECK(nfg_protect_plan_refused(plan) == NULL, "nothing refused before an apply");

	ret = nfg_protect_render(plan, NFG_PROTECT_FMT_COMMAND, &out, &e);
	CHECK(ret > 0 && out && (size_t)ret == strlen(out), "command: %d", ret);
	if (out)
		CHECK_STR(out, CMD4);
	free(out);

	/* the script: the command, then each operation as a comment */
	ret = nfg_protect_render(plan, NFG_PROTECT_FMT_SCRIPT, &out, &e);
	CHECK(ret > 0 && out, "script: %d", ret);
	want = calloc(1, 8192);
	strcpy(want, CMD4);
	for (i = 0; i < n; i++)
		sprintf(want + strlen(want), "# %s\n", full4_ops[i]);
	if (out)
		CHECK_STR(out, want);
	free(want);
	free(out);

	ret = nfg_protect_render(plan, NFG_PROTECT_FMT_JSON, &out, &e);
	CHECK(ret > 0 && out, "json: %d", ret);
	if (out) {
		static const char head[] = "{\"installed\":true,\"families\":[\"ip\"],\"exact\":true,"
			       "\"syncookie\":{\"proto\":\"tcp\",\"ports\":[80,443],\"mode\":\"proxy\","
			       "\"mss\":null,\"wscale\":7,\"sack_perm\":false,\"timestamp\":false,"
			       "\"allowlist_timeout\":60,\"allowlist_mask\":32,\"allowlist_mask6\":null},"
			       "\"kconnlimit\":[{\"chain\":\"kconnlimit\",\"limit\":64,\"mask\":24,"
			       "\"mask6\":null,\"proto\":\"tcp\",\"ports\":[80]},{\"chain\":\"kconnlimit-2\","
			       "\"limit\":10,\"mask\":32,\"mask6\":null,\"proto\":\"udp\",\"ports\":[53]}],"
			       "\"blocklist\":[\"bl4\"],\"rtcache\":true,\"operations\":[\"add table ip "
			       "nfguard { comment \\\"managed by nfguard protect\\\"; }\",";

		CHECK(!strncmp(out, head, strlen(head)), "json: %s", out);
		CHECK(strlen(out) > 2 && !strcmp(out + strlen(out) - 4, "\"]}\n"), "json end: %s", out);
	}
	free(out);

	/* without a handle there is nothing to apply to or compare with */
	CHECK(nfg_protect_apply(NULL, plan, &e) == -EINVAL && e.code == EINVAL, "apply offline");
	CHECK(nfg_protect_check(NULL, plan, NULL, NULL, &e) == -EINVAL, "check offline");
	CHECK(nfg_protect_render(plan, (enum nfg_protect_fmt)7, &out, &e) == -EINVAL && !out,
	      "unknown format");
	CHECK(nfg_protect_render(plan, NFG_PROTECT_FMT_JSON, NULL, &e) == -EINVAL, "no out");
	nfg_protect_plan_free(plan);
}

/* Both families: IPv6 masks and the -6 command. */
static void test_families(void)
{
	struct nfg_protect_plan *plan = NULL;
	struct nfg_profile p;
	struct nfg_err e;
	char *out = NULL;

	nfg_profile_init(&p);
	ports(&p.syncookie, 6, 1, 80);
	p.sc_prefix6 = 64;
	p.sc.mode = NFG_SC_MODE_LOCAL;
	p.sc.timestamp = true;
	p.sc.sack_perm = true;
	p.sc.mss = 1400;
	CHECK(nfg_protect_build(NULL, &p, &plan, &e) == 0, "%s", nfg_err_str(&e));
	if (plan && nfg_protect_render(plan, NFG_PROTECT_FMT_COMMAND, &out, &e) > 0)
		CHECK_STR(out, "nfguard protect --syncookie tcp/80 --syncookie-mode local "
			  "--syncookie-sack-perm --syncookie-timestamp --syncookie-mss 1400 "
			  "--syncookie-allowlist-mask 32,64\n");
	CHECK(plan && nfg_protect_plan_count(plan) == 6, "ip and ip6: table, chain, rule each");
	if (plan)
		CHECK_STR(nfg_protect_plan_op(plan, 5), "add rule ip6 nfguard syncookie -p tcp "
			  "--dport 80 -j SYNCOOKIE --mode local --mss 1400 --sack-perm --timestamp "
			  "--allowlist-timeout 300 --allowlist-mask 64");
	free(out);
	nfg_protect_plan_free(plan);

	/* -6: a kconnlimit limit with the default /64 */
	nfg_profile_init(&p);
	p.families = NFG_PROFILE_IP6;
	p.nkcl = 1;
	p.kcl[0] = (struct nfg_profile_kcl){ .limit = 5, .prefix = -1, .prefix6 = 64 };
	ports(&p.kcl[0].ports, 6, 2, 22, 80);
	plan = NULL;
	out = NULL;
	CHECK(nfg_protect_build(NULL, &p, &plan, &e) == 0, "%s", nfg_err_str(&e));
	if (plan && nfg_protect_render(plan, NFG_PROTECT_FMT_COMMAND, &out, &e) > 0)
		CHECK_STR(out, "nfguard protect -6 --kconnlimit 5 tcp/22,80\n");
	free(out);
	nfg_protect_plan_free(plan);
}

/* unprotect's plan on an empty ruleset: nothing to do, no command */
static void test_remove(void)
{
	struct nfg_protect_plan *plan = NULL;
	struct nfg_err e;
	char *out = NULL;

	CHECK(nfg_protect_build(NULL, NULL, &plan, &e) == 0, "%s", nfg_err_str(&e));
	CHECK(plan && nfg_protect_plan_count(plan) == 0, "no operation");
	CHECK(plan && nfg_protect_render(plan, NFG_PROTECT_FMT_SCRIPT, &out, &e) == 0 &&
	      out && !out[0], "empty script");
	free(out);
	out = NULL;
	if (plan && nfg_protect_render(plan, NFG_PROTECT_FMT_JSON, &out, &e) > 0)
		CHECK_STR(out, "{\"installed\":false,\"families\":[],\"exact\":true,\"syncookie\":null,"
			  "\"kconnlimit\":[],\"blocklist\":[],\"rtcache\":false,\"operations\":[]}\n");
	free(out);
	nfg_protect_plan_free(plan);
	CHECK(nfg_protect_read(NULL, &plan, &e) == -EINVAL && !plan, "read needs a handle");
	CHECK(nfg_protect_build(NULL, NULL, NULL, &e) == -EINVAL, "no plan pointer");
	nfg_protect_plan_free(NULL);
	nfg_protect_close(NULL);
	CHECK(nfg_protect_plan_count(NULL) == 0 && !nfg_protect_plan_op(NULL, 0) &&
	      !nfg_protect_plan_foreign(NULL) && !nfg_protect_plan_refused(NULL), "NULL plan");
}

/* Each bad profile: refused by check and by build, with errno and message. */
static void test_bad(void)
{
	static const struct {
		const char *what;
		int code;
		const char *msg;
	} cases[] = {
		{ "no family", EINVAL, "families 0" },
		{ "unknown family bit", EINVAL, "families 0x5" },
		{ "empty", EINVAL, "nothing to protect with" },
		{ "port 0", EINVAL, "syncookie: port 0" },
		{ "port twice", EINVAL, "syncookie: port 80 given twice" },
		{ "udp syncookie", EINVAL, "syncookie: protocol 17" },
		{ "no port", ERANGE, "kconnlimit: 0 ports" },
		{ "65 ports", ERANGE, "syncookie: 65 ports" },
		{ "kcl mask 33", ERANGE, "kconnlimit: mask 33 out of range 0-32" },
		{ "kcl mask6 129", ERANGE, "kconnlimit: mask 129 out of range 0-128" },
		{ "kcl proto icmp", EINVAL, "kconnlimit: protocol 1" },
		{ "17 limits", ERANGE, "17 kconnlimit limits" },
		{ "mss 10", ERANGE, "SYNCOOKIE: mss 10" },
		{ "local sack", EINVAL, "--sack-perm needs --timestamp" },
		{ "sc mask6 129", ERANGE, "allowlist mask 129" },
		{ "set name", EINVAL, "" },
		{ "set unterminated", EINVAL, "not terminated" },
		{ "set family 0", EINVAL, "family 0" },
		{ "ipv6 set, -4", EINVAL, "bl6 is an ipv6 set" },
		{ "17 sets", ERANGE, "17 blocklist sets" },
	};
	unsigned int c, i;

	CHECK(nfg_profile_check(NULL, NULL) == -EINVAL, "NULL profile");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct nfg_protect_plan *plan = (void *)1;
		struct nfg_profile p;
		struct nfg_err e;
		int ret;

		nfg_profile_init(&p);
		p.rtcache = true;
		switch (c) {
		case 0: p.families = 0; break;
		case 1: p.families = 5; break;
		case 2: p.rtcache = false; break;
		case 3: ports(&p.syncookie, 6, 2, 80, 0); break;
		case 4: ports(&p.syncookie, 6, 3, 80, 443, 80); break;
		case 5: ports(&p.syncookie, 17, 1, 53); break;
		case 6:
			p.nkcl = 1;
			p.kcl[0].ports.proto = 6;
			break;
		case 7:
			p.syncookie.proto = 6;
			p.syncookie.n = NFG_PROFILE_MAX_PORTS;
			for (i = 0; i < NFG_PROFILE_MAX_PORTS; i++)
				p.syncookie.port[i] = (uint16_t)(i + 1);
			/* one more than a profile holds, beyond the array: the count is checked first */
			p.syncookie.n++;
			break;
		case 8: case 9: case 10:
			p.nkcl = 1;
			p.kcl[0] = (struct nfg_profile_kcl){ .limit = 1, .prefix = c == 8 ? 33 : -1,
							     .prefix6 = c == 9 ? 129 : -1 };
			ports(&p.kcl[0].ports, c == 10 ? 1 : 6, 1, 80);
			break;
		case 11: p.nkcl = NFG_PROFILE_MAX_KCL + 1; break;
		case 12: ports(&p.syncookie, 6, 1, 80); p.sc.mss = 10; break;
		case 13:
			ports(&p.syncookie, 6, 1, 80);
			p.sc.mode = NFG_SC_MODE_LOCAL;
			p.sc.sack_perm = true;
			break;
		case 14: ports(&p.syncookie, 6, 1, 80); p.sc_prefix6 = 129; break;
		case 15: case 16: case 17: case 18:
			p.nbl = 1;
			strcpy(p.bl[0], c == 15 ? "" : c == 18 ? "bl6" : "bl");
			if (c == 16)
				memset(p.bl[0], 'x', sizeof(p.bl[0]));
			p.bl_family[0] = c == 17 ? 0 : c == 18 ? NFG_FAMILY_IPV6 : NFG_FAMILY_IPV4;
			if (c == 18)
				p.families = NFG_PROFILE_IP;
			break;
		case 19: p.nbl = NFG_PROFILE_MAX_BL + 1; break;
		}
		memset(&e, 0, sizeof(e));
		ret = nfg_profile_check(&p, &e);
		CHECK(ret == -cases[c].code && e.code == cases[c].code, "%s: %d (%s)",
		      cases[c].what, ret, e.msg);
		CHECK(e.msg[0] && strstr(e.msg, cases[c].msg), "%s: message \"%s\"", cases[c].what,
		      e.msg);
		ret = nfg_protect_build(NULL, &p, &plan, NULL);
		CHECK(ret == -cases[c].code && plan == NULL, "%s: build %d", cases[c].what, ret);
	}
}

/* JSON strings: quotes, backslashes and control bytes escaped */
static void test_json_names(void)
{
	struct nfg_protect_plan *plan = NULL;
	struct nfg_profile p;
	struct nfg_err e;
	char *out = NULL;

	nfg_profile_init(&p);
	p.families = NFG_PROFILE_IP;
	p.nbl = 1;
	strcpy(p.bl[0], "a:b.c+d");
	p.bl_family[0] = NFG_FAMILY_IPV4;
	CHECK(nfg_protect_build(NULL, &p, &plan, &e) == 0, "%s", nfg_err_str(&e));
	if (plan && nfg_protect_render(plan, NFG_PROTECT_FMT_JSON, &out, &e) > 0)
		CHECK_HAS(out, "\"blocklist\":[\"a:b.c+d\"]");
	free(out);
	nfg_protect_plan_free(plan);
}

void test_protect(void)
{
	test_build_render();
	test_families();
	test_remove();
	test_bad();
	test_json_names();
}
