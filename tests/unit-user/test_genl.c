// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfg_genl against the running kernel's nlctrl (present in every kernel):
 * family resolution, ENOENT for a missing family, and an extack message
 * surfaced from a request the kernel's strict policy rejects.
 */
#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>

#include "nfg_genl.h"
#include "tap.h"

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(unsigned int *)data)++;
	return MNL_CB_OK;
}

static int stop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(unsigned int *)data)++;
	return MNL_CB_ERROR;
}

/* nfg_genl_parse: typed table, unknown types ignored, malformed refused */
static void test_parse(void)
{
	static const enum mnl_attr_data_type types[4] = {
		[1] = MNL_TYPE_U32, [2] = MNL_TYPE_NUL_STRING, [3] = MNL_TYPE_U8,
	};
	const struct nlattr *tb[4];
	char buf[256] __attribute__((aligned(4))) = { 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsghdr *bad;

	mnl_nlmsg_put_extra_header(nlh, GENL_HDRLEN);
	mnl_attr_put_u32(nlh, 1, 7);
	mnl_attr_put_strz(nlh, 2, "x");
	mnl_attr_put_u64(nlh, 9, 1);		/* newer kernel's attribute */
	CHECK(nfg_genl_parse(nlh, types, 3, tb) == 0, "parse of a good message");
	CHECK(tb[1] && mnl_attr_get_u32(tb[1]) == 7, "u32 attribute");
	CHECK(tb[2] && !strcmp(mnl_attr_get_str(tb[2]), "x"), "string attribute");
	CHECK(!tb[0] && !tb[3], "absent attributes are NULL");

	bad = mnl_nlmsg_put_header(buf);
	mnl_nlmsg_put_extra_header(bad, GENL_HDRLEN);
	mnl_attr_put_u32(bad, 3, 1);		/* a u8 of 4 bytes */
	CHECK(nfg_genl_parse(bad, types, 3, tb) == -1, "malformed u8 refused");
}

void test_genl(void)
{
	struct nfg_err e;
	struct nfg_genl *g;
	struct nlmsghdr *nlh;
	unsigned int n = 0, n2 = 0;
	int ret;

	test_parse();
	nfg_err_set(&e, -EPERM, "x %d", 1);
	CHECK(e.code == EPERM && !strcmp(e.msg, "x 1"), "err_set");
	nfg_err_clear(&e);
	CHECK(e.code == 0 && e.msg[0] == '\0', "err_clear");
	e.code = ENOENT;
	CHECK(!strcmp(nfg_err_str(&e), strerror(ENOENT)), "err_str fallback");

	g = nfg_genl_open("nlctrl", &e);
	CHECK(g != NULL, "open nlctrl: %s", nfg_err_str(&e));
	if (!g)
		return;
	CHECK(nfg_genl_family_id(g) == GENL_ID_CTRL, "nlctrl id %u",
	      nfg_genl_family_id(g));
	CHECK(nfg_genl_max_msg(g) > 45 * 1024, "max msg %zu", nfg_genl_max_msg(g));

	/* a dump: every family, ended by NLMSG_DONE */
	nlh = nfg_genl_msg(g, CTRL_CMD_GETFAMILY, 1, NLM_F_DUMP);
	ret = nfg_genl_talk(g, nlh, count_cb, &n, &e);
	CHECK(ret == 0 && n > 1, "dump: ret %d, %u families", ret, n);

	/* a callback stopping a dump early leaves the handle usable */
	nlh = nfg_genl_msg(g, CTRL_CMD_GETFAMILY, 1, NLM_F_DUMP);
	ret = nfg_genl_talk(g, nlh, stop_cb, &n2, &e);
	CHECK(ret == -ECANCELED && n2 == 1, "abort: ret %d after %u", ret, n2);
	n2 = 0;
	nlh = nfg_genl_msg(g, CTRL_CMD_GETFAMILY, 1, NLM_F_DUMP);
	ret = nfg_genl_talk(g, nlh, count_cb, &n2, &e);
	CHECK(ret == 0 && n2 == n, "dump after abort: %d, %u vs %u", ret, n2, n);

	/* doit with ack + reply */
	n = 0;
	nlh = nfg_genl_msg(g, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "nlctrl");
	ret = nfg_genl_talk(g, nlh, count_cb, &n, &e);
	CHECK(ret == 0 && n == 1, "doit: ret %d, %u replies", ret, n);

	/* policy rejection: the kernel's extack message comes through */
	nlh = nfg_genl_msg(g, CTRL_CMD_GETFAMILY, 1, NLM_F_ACK);
	mnl_attr_put(nlh, CTRL_ATTR_FAMILY_NAME, 3, "abc");	/* no NUL */
	ret = nfg_genl_talk(g, nlh, NULL, NULL, &e);
	CHECK(ret == -EINVAL && e.code == EINVAL, "policy: ret %d", ret);
	CHECK(e.kernel_msg && e.msg[0], "extack message: \"%s\"", e.msg);
	nfg_genl_close(g);

	/* presence without a lookup by name (which would load modules) */
	ret = nfg_genl_family_loaded("nlctrl", &e);
	CHECK(ret == 1, "nlctrl loaded: %d %s", ret, ret < 0 ? nfg_err_str(&e) : "");
	ret = nfg_genl_family_loaded("nfg_no_such_fam", &e);
	CHECK(ret == 0, "missing family loaded: %d", ret);
	ret = nfg_genl_family_loaded("nlctr", NULL);
	CHECK(ret == 0, "a prefix of a name is not the name: %d", ret);

	/* missing family */
	g = nfg_genl_open("nfg_no_such_fam", &e);
	CHECK(g == NULL && e.code == ENOENT, "missing family: %d", e.code);
	CHECK_HAS(e.msg, "nfg_no_such_fam");
	nfg_genl_close(g);

	/* GENL_NAMSIZ is 16 with the NUL: a 16-character name is refused */
	g = nfg_genl_open("abcdefghijklmnop", &e);
	CHECK(g == NULL && e.code == EINVAL && e.kernel_msg,
	      "16-char family name: %d %s", e.code, e.msg);
	nfg_genl_close(g);
}
