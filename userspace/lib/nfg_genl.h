/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libnfguard (internal): a small generic netlink client on top of libmnl,
 * shared by the per-extension control-plane clients (nfg_rangeset.c, ...).
 *
 * - resolves a family id by name through nlctrl;
 * - requests extended acks (NETLINK_EXT_ACK) and capped acks
 *   (NETLINK_CAP_ACK, so a rejected 45 KB batch does not come back whole);
 * - turns an error ack into a positive errno plus the kernel's extack
 *   message (struct nfg_err), for doits and for dumps (NLMSG_DONE errors).
 *
 * One handle = one socket; not thread-safe, use one handle per thread.
 */
#ifndef NFG_GENL_H
#define NFG_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

#include "libnfguard.h"	/* struct nfg_err */

/* Fill e (may be NULL). Always returns -code (for "return nfg_err_set(...)"). */
int nfg_err_set(struct nfg_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct nfg_genl;

/*
 * Open a socket and resolve @family_name. On a missing family returns
 * NULL with e->code == ENOENT (the kernel module is not loaded and could
 * not be autoloaded).
 */
struct nfg_genl *nfg_genl_open(const char *family_name, struct nfg_err *e);
void nfg_genl_close(struct nfg_genl *g);

/*
 * 1 if generic netlink family @family_name is registered, 0 if not, -errno
 * on failure. Asks nlctrl for a dump of all families, so unlike a lookup
 * by name (nfg_genl_open) it never makes the kernel load a module.
 */
int nfg_genl_family_loaded(const char *family_name, struct nfg_err *e);

uint16_t nfg_genl_family_id(const struct nfg_genl *g);
uint32_t nfg_genl_family_version(const struct nfg_genl *g);

/*
 * Largest netlink message (bytes) the kernel accepts from this socket
 * (limited by SO_SNDBUF) that also fits libnfguard's request buffer.
 */
size_t nfg_genl_max_msg(const struct nfg_genl *g);

/*
 * Prepare for a request of @bytes (at most 64 MiB): grow the request buffer
 * and the socket's send buffer (SO_SNDBUFFORCE when permitted, else
 * SO_SNDBUF up to net.core.wmem_max). Returns 0 when such a request can be
 * sent, -EMSGSIZE when the kernel will not take it from this socket (the
 * buffer stays grown as far as it went), -ENOMEM. Messages built after
 * this with nfg_genl_msg() may be up to nfg_genl_max_msg() bytes.
 */
int nfg_genl_reserve(struct nfg_genl *g, size_t bytes);

/*
 * Start a request in the handle's buffer: nlmsghdr + genlmsghdr with
 * @cmd/@version. @flags are added to NLM_F_REQUEST (e.g. NLM_F_ACK,
 * NLM_F_DUMP). Add attributes with mnl_attr_put*(nlh, ...) and
 * mnl_attr_*_check(nlh, nfg_genl_bufsize(g), ...).
 */
struct nlmsghdr *nfg_genl_msg(struct nfg_genl *g, uint8_t cmd,
			      uint8_t version, uint16_t flags);
size_t nfg_genl_bufsize(const struct nfg_genl *g);

/*
 * Send @nlh and process replies until the request is finished: the ack of
 * a doit (send with NLM_F_ACK) or the NLMSG_DONE of a dump. Every data
 * message goes to @cb (may be NULL); cb returns MNL_CB_OK to go on or
 * MNL_CB_ERROR to stop delivering (the rest of a dump is then read and
 * dropped so the socket stays usable; nfg_genl_talk returns -ECANCELED
 * unless cb set an error in @e).
 * Returns 0 or -errno with @e filled in.
 */
int nfg_genl_talk(struct nfg_genl *g, struct nlmsghdr *nlh, mnl_cb_t cb,
		  void *data, struct nfg_err *e);

/*
 * Attribute table of a reply: tb[t] for each attribute type t <= maxtype
 * whose types[t] is not MNL_TYPE_UNSPEC, validated as types[t]; attributes
 * of other types (newer kernels) are ignored, a later duplicate wins.
 * Returns 0, or -1 when the message is truncated or an attribute of a known
 * type is malformed (the caller reports an ABI mismatch).
 */
int nfg_genl_parse(const struct nlmsghdr *nlh,
		   const enum mnl_attr_data_type *types, uint16_t maxtype,
		   const struct nlattr **tb);

#endif /* NFG_GENL_H */
