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
#include "shared/util.h"

/* ---- netlink plumbing ---- */

/* Copies an extack message that ht_facts_set() accepts as part of a source. */
static void extack_copy(char *dst, const char *src)
{
	size_t n = 0;

	while (*src == ' ')
		src++;
	for (; *src && n < HT_ETHNL_EXTACK_LEN - 1; src++)
		dst[n++] = (unsigned char)*src < 0x20 || *src == 0x7f ? ' ' : *src;
	while (n > 0 && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

static int extack_attr_cb(const struct nlattr *a, void *data)
{
	struct ht_ethnl_exchange *x = data;

	if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		extack_copy(x->extack, mnl_attr_get_str(a));
	return MNL_CB_OK;
}

/*
 * NLMSG_ERROR: error 0 is the ACK that ends a request. Otherwise keep the
 * errno and the extack message, which follows the echoed request (only its
 * header with NETLINK_CAP_ACK) when NLM_F_ACK_TLVS is set
 * (include/uapi/linux/netlink.h, struct nlmsgerr).
 */
static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct ht_ethnl_exchange *x = data;
	size_t off = sizeof(*err);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		x->err = -EBADMSG;
		return MNL_CB_ERROR;
	}
	if (err->error == 0)
		return MNL_CB_STOP;
	x->err = err->error < 0 ? err->error : -err->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return MNL_CB_ERROR;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (err->msg.nlmsg_len < sizeof(struct nlmsghdr))
			return MNL_CB_ERROR;
		off += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	if (MNL_ALIGN(off) < mnl_nlmsg_get_payload_len(nlh))
		mnl_attr_parse(nlh, (unsigned int)off, extack_attr_cb, x);
	return MNL_CB_ERROR;
}

static int done_cb(const struct nlmsghdr *nlh _unused_, void *data _unused_)
{
	return MNL_CB_STOP;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ht_ethnl_exchange *x = data;

	return x->parse(nlh, x->data);
}

int ht_ethnl_talk(struct ht_ethnl *e, const struct nlmsghdr *nlh, struct ht_ethnl_exchange *x)
{
	/* Not const: libmnl 1.0.4 declares the array non-const. */
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = error_cb,
		[NLMSG_DONE] = done_cb,
	};
	union ht_ethnl_buf buf;
	int r;

	x->err = 0;
	x->extack[0] = '\0';
	if (mnl_socket_sendto(e->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ssize_t n = mnl_socket_recvfrom(e->nl, buf.b, sizeof(buf.b));

		if (n < 0)
			return -errno;
		errno = 0;
		r = mnl_cb_run2(buf.b, (size_t)n, nlh->nlmsg_seq, e->portid, data_cb, x, ctl,
		                ARRAY_SIZE(ctl));
		if (r < 0)
			return x->err ? x->err : (errno ? -errno : -EPROTO);
	} while (r > MNL_CB_STOP);
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

/* A reply parser's table: attributes up to max by type; newer ones are ignored. */
struct attr_table {
	const struct nlattr **tb;
	uint16_t max;
};

static int attr_table_cb(const struct nlattr *a, void *data)
{
	const struct attr_table *t = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type <= t->max)
		t->tb[type] = a;
	return MNL_CB_OK;
}

bool ht_genl_reply_parse(const struct nlmsghdr *nlh, uint16_t type, uint8_t cmd,
                         const struct nlattr **tb, uint16_t max)
{
	struct attr_table t = { tb, max };
	const struct genlmsghdr *g;

	if (nlh->nlmsg_type != type || mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return false;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != cmd)
		return false;
	return mnl_attr_parse(nlh, sizeof(*g), attr_table_cb, &t) >= 0;
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
	int one = 1;

	e->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!e->nl)
		return -errno;
	/* Best effort: kernels before 4.12 have no extended ACK and answer ENOPROTOOPT. */
	mnl_socket_setsockopt(e->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(e->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(e->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int r = -errno;

		ht_ethnl_close(e);
		return r;
	}
	e->portid = mnl_socket_get_portid(e->nl);
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
