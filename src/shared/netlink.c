/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "shared/netlink.h"
#include "shared/util.h"

/* One request on its way: the caller's callback, and what the kernel said. */
struct request {
	mnl_cb_t cb;
	void *data;
	int err;      /* 0, or the negative errno of an NLMSG_ERROR, NLMSG_DONE or NLMSG_OVERRUN */
	char *extack; /* HT_NL_EXTACK_LEN bytes, or NULL */
};

int ht_nl_open(int bus, struct mnl_socket **out)
{
	struct mnl_socket *nl = mnl_socket_open(bus);
	int one = 1;

	if (!nl)
		return -errno;
	/* Best effort: kernels before 4.12 have no extended ACK and answer ENOPROTOOPT. */
	(void)mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int r = -errno;

		mnl_socket_close(nl);
		return r;
	}
	*out = nl;
	return 0;
}

void ht_nl_closep(struct mnl_socket **nl)
{
	if (*nl)
		mnl_socket_close(*nl);
	*nl = NULL;
}

/* Copies an extack message that ht_facts_set() accepts as part of a source. */
static void extack_copy(char *dst, const char *src)
{
	size_t n = 0;

	while (*src == ' ')
		src++;
	for (; *src && n < HT_NL_EXTACK_LEN - 1; src++)
		dst[n++] = (unsigned char)*src < 0x20 || *src == 0x7f ? ' ' : *src;
	while (n > 0 && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

static int extack_attr_cb(const struct nlattr *a, void *data)
{
	struct request *q = data;

	if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		extack_copy(q->extack, mnl_attr_get_str(a));
	return MNL_CB_OK;
}

/*
 * The extended ACK TLVs (include/uapi/linux/netlink.h, enum nlmsgerr_attrs)
 * that follow the first @off bytes of @nlh's payload; the kernel sets
 * NLM_F_ACK_TLVS when there are any.
 */
static void extack_parse(const struct nlmsghdr *nlh, size_t off, struct request *q)
{
	if (q->extack && (nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    MNL_ALIGN(off) < mnl_nlmsg_get_payload_len(nlh))
		mnl_attr_parse(nlh, (unsigned int)off, extack_attr_cb, q);
}

/*
 * NLMSG_ERROR: error 0 is the ACK that ends a request. Otherwise keep the
 * errno and the extack message, which follows the echoed request (only its
 * header with NETLINK_CAP_ACK, NLM_F_CAPPED) in struct nlmsgerr.
 */
static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct request *q = data;
	size_t off = sizeof(*err);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*err)) {
		q->err = -EBADMSG;
		return MNL_CB_ERROR;
	}
	if (err->error == 0)
		return MNL_CB_STOP;
	/* Some subsystems have sent a positive errno. */
	q->err = err->error < 0 ? err->error : -err->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (err->msg.nlmsg_len < sizeof(struct nlmsghdr))
			return MNL_CB_ERROR;
		off += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	extack_parse(nlh, off, q);
	return MNL_CB_ERROR;
}

/* A dump ends with NLMSG_DONE, whose payload is the dump's return code (netlink_dump()). */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct request *q = data;
	int code;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(code))
		return MNL_CB_STOP;
	memcpy(&code, mnl_nlmsg_get_payload(nlh), sizeof(code));
	if (code >= 0)
		return MNL_CB_STOP;
	q->err = code;
	extack_parse(nlh, sizeof(code), q);
	return MNL_CB_ERROR;
}

static int overrun_cb(const struct nlmsghdr *nlh _unused_, void *data)
{
	struct request *q = data;

	q->err = -ENOBUFS;
	return MNL_CB_ERROR;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct request *q = data;

	return q->cb ? q->cb(nlh, q->data) : MNL_CB_OK;
}

int ht_nl_request(struct mnl_socket *nl, const struct nlmsghdr *nlh, void *buf, size_t size,
                  mnl_cb_t cb, void *data, char *extack)
{
	/* Not const: libmnl 1.0.4 declares the parameter mnl_cb_t *. NULL entries are skipped. */
	static mnl_cb_t ctl_cb[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = error_cb,
		[NLMSG_DONE] = done_cb,
		[NLMSG_OVERRUN] = overrun_cb,
	};
	struct request q = { .cb = cb, .data = data, .extack = extack };
	/* Read now: @buf may be where @nlh was built, and the replies overwrite it. */
	unsigned int seq = nlh->nlmsg_seq, portid = mnl_socket_get_portid(nl);
	int r;

	if (extack)
		extack[0] = '\0';
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ssize_t n = mnl_socket_recvfrom(nl, buf, size);

		if (n < 0)
			return -errno;
		errno = 0;
		r = mnl_cb_run2(buf, (size_t)n, seq, portid, data_cb, &q, ctl_cb, ARRAY_SIZE(ctl_cb));
		if (r < 0)
			return q.err ? q.err : errno ? -errno : -EPROTO;
	} while (r > MNL_CB_STOP);
	return 0;
}

/* Attributes from @a over @len bytes into @tb by type, as ht_nl_parse() says. */
static int parse_attrs(const struct nlattr *a, int len, const struct nlattr **tb, uint16_t max)
{
	while (len >= (int)sizeof(struct nlattr)) {
		uint16_t type;

		if (!mnl_attr_ok(a, len))
			return -EINVAL;
		type = mnl_attr_get_type(a);
		if (type <= max)
			tb[type] = a;
		len -= MNL_ALIGN(a->nla_len);
		a = mnl_attr_next(a);
	}
	return 0;
}

int ht_nl_parse(const struct nlmsghdr *nlh, size_t offset, const struct nlattr **tb,
                uint16_t max)
{
	size_t len;

	if (!nlh || !tb || nlh->nlmsg_len < MNL_NLMSG_HDRLEN)
		return -EINVAL;
	len = mnl_nlmsg_get_payload_len(nlh);
	if (len < MNL_ALIGN(offset))
		return -EINVAL;
	return parse_attrs(mnl_nlmsg_get_payload_offset(nlh, offset),
	                   (int)(len - MNL_ALIGN(offset)), tb, max);
}

int ht_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb, uint16_t max)
{
	if (!nest || !tb || nest->nla_len < sizeof(*nest))
		return -EINVAL;
	return parse_attrs(mnl_attr_get_payload(nest), (int)mnl_attr_get_payload_len(nest), tb,
	                   max);
}
