/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>

#include "shared/netlink.h"

/*
 * Plumbing shared by the ethtool generic netlink users
 * (collect/collect-ethtool.c reads, persist/ethtool-set.c writes), so it
 * lives in shared/: one socket with extended ACKs, the family id
 * resolved once, one request at a time (shared/netlink.h) with its reply
 * parsed into an attribute table and the kernel's extack text kept
 * (Documentation/networking/ethtool-netlink.rst).
 */

/*
 * Receive buffer: libmnl's MNL_SOCKET_BUFFER_SIZE is a page capped at 8 KiB;
 * ethtool replies are a few hundred bytes (compact bitsets).
 */
#define HT_ETHNL_BUF_SIZE 8192

/* Room for the kernel's extack text; NL_SET_ERR_MSG messages are short literals. */
#define HT_ETHNL_EXTACK_LEN HT_NL_EXTACK_LEN

union ht_ethnl_buf {
	struct nlmsghdr align;
	char b[HT_ETHNL_BUF_SIZE];
};

struct ht_ethnl {
	struct mnl_socket *nl;
	unsigned int seq;
	uint16_t family;
};

/* One request and its answer: the reply parser, the error and the extack text. */
struct ht_ethnl_exchange {
	mnl_cb_t parse;
	void *data;
	int err; /* 0 or a negative errno */
	char extack[HT_ETHNL_EXTACK_LEN];
};

/*
 * Opens a generic netlink socket with extended ACKs and resolves the
 * "ethtool" family (CTRL_CMD_GETFAMILY). Returns 0; -ENOENT when the kernel
 * has no ethtool family (before 5.6, or CONFIG_ETHTOOL_NETLINK=n); another
 * negative errno with x->extack filled when the kernel said why. Call
 * ht_ethnl_close() in every case.
 */
int ht_ethnl_open(struct ht_ethnl *e, struct ht_ethnl_exchange *x);
void ht_ethnl_close(struct ht_ethnl *e);

/* A request for ethtool command @cmd with NLM_F_ACK, built in @buf. */
struct nlmsghdr *ht_ethnl_request(struct ht_ethnl *e, union ht_ethnl_buf *buf, uint8_t cmd);

/* Nested ETHTOOL_A_*_HEADER naming the device; @ifname below ALTIFNAMSIZ bytes. */
void ht_ethnl_put_header(struct nlmsghdr *nlh, uint16_t attr, const char *ifname,
                         uint32_t flags);

/*
 * Sends @nlh (NLM_F_ACK set) and runs x->parse(nlh, x->data) on every reply
 * message until the ACK (ht_nl_request()). Returns 0, or a negative errno
 * with x->extack filled when the kernel said why; x->err receives the same.
 */
int ht_ethnl_talk(struct ht_ethnl *e, const struct nlmsghdr *nlh, struct ht_ethnl_exchange *x);

/*
 * Fills @tb (max + 1 entries, zeroed by the caller) from a generic netlink
 * message of @type/@cmd; attributes above @max, from newer kernels, are
 * ignored. False for any other message, and for one whose attributes run
 * past its end (ht_nl_parse()).
 */
bool ht_genl_reply_parse(const struct nlmsghdr *nlh, uint16_t type, uint8_t cmd,
                         const struct nlattr **tb, uint16_t max);

/* True and *v set when @a is present and a valid u32. */
bool ht_nl_attr_u32(const struct nlattr *a, uint32_t *v);

/* ETHTOOL_MSG_CHANNELS_GET: which counts and maximums the kernel sent, by attribute. */
struct ht_ethnl_channels {
	uint16_t family;
	bool has[ETHTOOL_A_CHANNELS_MAX + 1];
	uint32_t v[ETHTOOL_A_CHANNELS_MAX + 1];
};

/*
 * The channel counts of @ifname. The kernel leaves out a count and its
 * maximum when the maximum is 0 (channels_fill_reply() in
 * net/ethtool/channels.c). Returns 0 or a negative errno (-EOPNOTSUPP: the
 * driver has no get_channels; -ENODEV: no such device) with x->extack.
 */
int ht_ethnl_channels_get(struct ht_ethnl *e, const char *ifname, struct ht_ethnl_channels *ch,
                          struct ht_ethnl_exchange *x);
