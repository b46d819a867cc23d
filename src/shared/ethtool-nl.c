/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "shared/ethtool-nl.h"
#include "shared/netlink.h"
#include "shared/util.h"

/* ---- netlink plumbing ---- */

int ht_ethnl_talk(struct ht_ethnl *e, const struct nlmsghdr *nlh, struct ht_ethnl_exchange *x)
{
	union ht_ethnl_buf buf;

	x->err = ht_nl_request(e->nl, nlh, buf.b, sizeof(buf.b), x->parse, x->data, x->extack);
	return x->err;
}

/* A generic netlink request for @type/@cmd with NLM_F_ACK, built in @buf. */
static struct nlmsghdr *genl_request(struct ht_ethnl *e, union ht_ethnl_buf *buf, uint16_t type,
                                     uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	/*
	 * libmnl writes only the headers and attributes it is given: the
	 * alignment padding after a string attribute would go to the kernel
	 * uninitialised (valgrind: sendto() points to uninitialised bytes).
	 */
	memset(buf, 0, sizeof(*buf));
	nlh = mnl_nlmsg_put_header(buf->b);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++e->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

struct nlmsghdr *ht_ethnl_request(struct ht_ethnl *e, union ht_ethnl_buf *buf, uint8_t cmd)
{
	return genl_request(e, buf, e->family, cmd, ETHTOOL_GENL_VERSION);
}

bool ht_genl_reply_parse(const struct nlmsghdr *nlh, uint16_t type, uint8_t cmd,
                         const struct nlattr **tb, uint16_t max)
{
	const struct genlmsghdr *g;

	if (nlh->nlmsg_type != type || mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return false;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != cmd)
		return false;
	/* Attributes above max (a newer kernel's) are ignored (shared/netlink.h). */
	return ht_nl_parse(nlh, sizeof(*g), tb, max) >= 0;
}

bool ht_nl_attr_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a || mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return false;
	*v = mnl_attr_get_u32(a);
	return true;
}

/* ---- CTRL_CMD_GETFAMILY ---- */

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = { 0 };
	uint16_t *family = data;

	if (ht_genl_reply_parse(nlh, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, tb, CTRL_ATTR_MAX) &&
	    tb[CTRL_ATTR_FAMILY_ID] &&
	    mnl_attr_validate(tb[CTRL_ATTR_FAMILY_ID], MNL_TYPE_U16) == 0)
		*family = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return MNL_CB_OK;
}

/* The id of the "ethtool" family into e->family; -ENOENT when the kernel has none. */
static int family_resolve(struct ht_ethnl *e, struct ht_ethnl_exchange *x)
{
	union ht_ethnl_buf buf;
	/* The controller does not look at the version; 1 as in libmnl's examples/genl. */
	struct nlmsghdr *nlh = genl_request(e, &buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	int r;

	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	e->family = 0;
	x->parse = family_cb;
	x->data = &e->family;
	r = ht_ethnl_talk(e, nlh, x);
	if (r < 0)
		return r;
	return e->family ? 0 : -ENOENT;
}

void ht_ethnl_close(struct ht_ethnl *e)
{
	if (e->nl)
		mnl_socket_close(e->nl);
	e->nl = NULL;
}

int ht_ethnl_open(struct ht_ethnl *e, struct ht_ethnl_exchange *x)
{
	int r;

	/* The socket can fail before any request: no kernel message then. */
	x->err = 0;
	x->extack[0] = '\0';
	r = ht_nl_open(NETLINK_GENERIC, &e->nl);
	if (r < 0) {
		e->nl = NULL;
		x->err = r;
		return r;
	}
	e->seq = (unsigned int)time(NULL);
	return family_resolve(e, x);
}

/* All ETHTOOL_A_*_HEADER attributes are 1 (include/uapi/linux/ethtool_netlink.h). */
void ht_ethnl_put_header(struct nlmsghdr *nlh, uint16_t attr, const char *ifname, uint32_t flags)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, attr);

	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, ifname);
	if (flags)
		mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, flags);
	mnl_attr_nest_end(nlh, nest);
}

/* ---- ETHTOOL_MSG_CHANNELS_GET ---- */

static int channels_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1] = { 0 };
	struct ht_ethnl_channels *ch = data;

	if (!ht_genl_reply_parse(nlh, ch->family, ETHTOOL_MSG_CHANNELS_GET_REPLY, tb,
	                         ETHTOOL_A_CHANNELS_MAX))
		return MNL_CB_OK;
	for (uint16_t i = ETHTOOL_A_CHANNELS_RX_MAX; i <= ETHTOOL_A_CHANNELS_MAX; i++)
		ch->has[i] = ht_nl_attr_u32(tb[i], &ch->v[i]);
	return MNL_CB_OK;
}

int ht_ethnl_channels_get(struct ht_ethnl *e, const char *ifname, struct ht_ethnl_channels *ch,
                          struct ht_ethnl_exchange *x)
{
	union ht_ethnl_buf buf;
	struct nlmsghdr *nlh = ht_ethnl_request(e, &buf, ETHTOOL_MSG_CHANNELS_GET);

	ht_ethnl_put_header(nlh, ETHTOOL_A_CHANNELS_HEADER, ifname, 0);
	*ch = (struct ht_ethnl_channels){ .family = e->family };
	x->parse = channels_cb;
	x->data = ch;
	return ht_ethnl_talk(e, nlh, x);
}
