/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "collect.h"
#include "facts.h"
#include "util.h"
#include "value.h"

/*
 * nic.IF.{speed,duplex} and nic.IF.channels.* for every interface of
 * nic.list, over ethtool generic netlink (Documentation/networking/
 * ethtool-netlink.rst) on one socket: CTRL_CMD_GETFAMILY once, then
 * ETHTOOL_MSG_LINKMODES_GET and ETHTOOL_MSG_CHANNELS_GET per interface.
 * Under --root, or when the kernel has no ethtool family (before 5.6, or
 * CONFIG_ETHTOOL_NETLINK=n), the same facts come from /sys/class/net.
 */

#define SRC_LINKMODES "ethtool netlink ETHTOOL_MSG_LINKMODES_GET"
#define SRC_CHANNELS "ethtool netlink ETHTOOL_MSG_CHANNELS_GET"

/*
 * Receive buffer: libmnl's MNL_SOCKET_BUFFER_SIZE is a page capped at 8 KiB;
 * these replies are a few hundred bytes (compact bitsets).
 */
#define NL_BUF_SIZE 8192

/* Room for the kernel's extack text; NL_SET_ERR_MSG messages are short literals. */
#define EXTACK_LEN 256

union nl_buf {
	struct nlmsghdr align;
	char b[NL_BUF_SIZE];
};

struct ethnl {
	struct mnl_socket *nl;
	unsigned int portid;
	unsigned int seq;
	uint16_t family;
};

/* One request and its answer: the reply parser, the error and the extack text. */
struct exchange {
	mnl_cb_t parse;
	void *data;
	int err; /* 0 or a negative errno */
	char extack[EXTACK_LEN];
};

/* ---- netlink plumbing ---- */

/* Copies an extack message that ht_facts_set() accepts as part of a source. */
static void extack_copy(char *dst, const char *src)
{
	size_t n = 0;

	while (*src == ' ')
		src++;
	for (; *src && n < EXTACK_LEN - 1; src++)
		dst[n++] = (unsigned char)*src < 0x20 || *src == 0x7f ? ' ' : *src;
	while (n > 0 && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

static int extack_attr_cb(const struct nlattr *a, void *data)
{
	struct exchange *x = data;

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
	struct exchange *x = data;
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
	struct exchange *x = data;

	return x->parse(nlh, x->data);
}

/*
 * Sends @nlh (NLM_F_ACK set) and runs @x's parser on the reply until the
 * ACK. Returns 0, or a negative errno with x->extack filled when the kernel
 * said why.
 */
static int ethnl_talk(struct ethnl *e, const struct nlmsghdr *nlh, struct exchange *x)
{
	/* Not const: libmnl 1.0.4 declares the array non-const. */
	static mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_ERROR] = error_cb,
		[NLMSG_DONE] = done_cb,
	};
	union nl_buf buf;
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
static struct nlmsghdr *genl_request(struct ethnl *e, union nl_buf *buf, uint16_t type,
                                     uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf->b);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++e->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
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

/* Fills @tb from a reply to the request for @type/@cmd; false for any other message. */
static bool genl_reply_parse(const struct nlmsghdr *nlh, uint16_t type, uint8_t cmd,
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

static bool attr_u32(const struct nlattr *a, uint32_t *v)
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

	if (genl_reply_parse(nlh, GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, tb, CTRL_ATTR_MAX) &&
	    tb[CTRL_ATTR_FAMILY_ID] && mnl_attr_validate(tb[CTRL_ATTR_FAMILY_ID], MNL_TYPE_U16) == 0)
		*family = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return MNL_CB_OK;
}

/* The id of the "ethtool" family into e->family; -ENOENT when the kernel has none. */
static int family_resolve(struct ethnl *e, struct exchange *x)
{
	union nl_buf buf;
	/* The controller does not look at the version; 1 as in libmnl's examples/genl. */
	struct nlmsghdr *nlh = genl_request(e, &buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	int r;

	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	e->family = 0;
	x->parse = family_cb;
	x->data = &e->family;
	r = ethnl_talk(e, nlh, x);
	if (r < 0)
		return r;
	return e->family ? 0 : -ENOENT;
}

static void ethnl_close(struct ethnl *e)
{
	if (e->nl)
		mnl_socket_close(e->nl);
	e->nl = NULL;
}

static int ethnl_open(struct ethnl *e, struct exchange *x)
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

		ethnl_close(e);
		return r;
	}
	e->portid = mnl_socket_get_portid(e->nl);
	e->seq = (unsigned int)time(NULL);
	return family_resolve(e, x);
}

/* Nested ETHTOOL_A_*_HEADER naming the device (all *_HEADER attributes are 1). */
static void put_header(struct nlmsghdr *nlh, uint16_t attr, const char *ifname, uint32_t flags)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, attr);

	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, ifname);
	if (flags)
		mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, flags);
	mnl_attr_nest_end(nlh, nest);
}

/* ---- ETHTOOL_MSG_LINKMODES_GET ---- */

struct linkmodes {
	uint16_t family;
	bool has_speed, has_duplex;
	uint32_t speed;
	uint8_t duplex;
};

static int linkmodes_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ETHTOOL_A_LINKMODES_MAX + 1] = { 0 };
	struct linkmodes *lm = data;

	if (!genl_reply_parse(nlh, lm->family, ETHTOOL_MSG_LINKMODES_GET_REPLY, tb,
	                      ETHTOOL_A_LINKMODES_MAX))
		return MNL_CB_OK;
	lm->has_speed = attr_u32(tb[ETHTOOL_A_LINKMODES_SPEED], &lm->speed);
	if (tb[ETHTOOL_A_LINKMODES_DUPLEX] &&
	    mnl_attr_validate(tb[ETHTOOL_A_LINKMODES_DUPLEX], MNL_TYPE_U8) == 0) {
		lm->has_duplex = true;
		lm->duplex = mnl_attr_get_u8(tb[ETHTOOL_A_LINKMODES_DUPLEX]);
	}
	return MNL_CB_OK;
}

static int linkmodes_get(struct ethnl *e, const char *ifname, struct linkmodes *lm,
                         struct exchange *x)
{
	union nl_buf buf;
	struct nlmsghdr *nlh = genl_request(e, &buf, e->family, ETHTOOL_MSG_LINKMODES_GET,
	                                    ETHTOOL_GENL_VERSION);

	/* Compact bitsets: the link mode masks we ignore come as bits, not names. */
	put_header(nlh, ETHTOOL_A_LINKMODES_HEADER, ifname, ETHTOOL_FLAG_COMPACT_BITSETS);
	*lm = (struct linkmodes){ .family = e->family };
	x->parse = linkmodes_cb;
	x->data = lm;
	return ethnl_talk(e, nlh, x);
}

/* ---- ETHTOOL_MSG_CHANNELS_GET ---- */

struct channels {
	uint16_t family;
	bool has[ETHTOOL_A_CHANNELS_MAX + 1];
	uint32_t v[ETHTOOL_A_CHANNELS_MAX + 1];
};

static int channels_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1] = { 0 };
	struct channels *ch = data;

	if (!genl_reply_parse(nlh, ch->family, ETHTOOL_MSG_CHANNELS_GET_REPLY, tb,
	                      ETHTOOL_A_CHANNELS_MAX))
		return MNL_CB_OK;
	for (uint16_t i = ETHTOOL_A_CHANNELS_RX_MAX; i <= ETHTOOL_A_CHANNELS_MAX; i++)
		ch->has[i] = attr_u32(tb[i], &ch->v[i]);
	return MNL_CB_OK;
}

static int channels_get(struct ethnl *e, const char *ifname, struct channels *ch,
                        struct exchange *x)
{
	union nl_buf buf;
	struct nlmsghdr *nlh = genl_request(e, &buf, e->family, ETHTOOL_MSG_CHANNELS_GET,
	                                    ETHTOOL_GENL_VERSION);

	put_header(nlh, ETHTOOL_A_CHANNELS_HEADER, ifname, 0);
	*ch = (struct channels){ .family = e->family };
	x->parse = channels_cb;
	x->data = ch;
	return ethnl_talk(e, nlh, x);
}

/* ---- facts ---- */

static int set_int(struct ht_facts *f, const char *name, int64_t i, const char *unit,
                   const char *source)
{
	struct ht_value v = ht_int(i);

	return ht_facts_set(f, name, &v, unit, source);
}

static int set_str(struct ht_facts *f, const char *name, const char *s, const char *source)
{
	struct ht_value v = { .type = HT_T_STR, .s = (char *)s };

	return ht_facts_set(f, name, &v, NULL, source);
}

/* "@base: @why", or @base alone when @why is empty. 0 or -ENOMEM. */
static int source_with(char **out, const char *base, const char *why)
{
	int r = why && *why ? asprintf(out, "%s: %s", base, why) : asprintf(out, "%s", base);

	if (r < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Records nic.@ifname.@suffix as unavailable (@err > 0). */
static int nic_unavailable(struct ht_facts *f, const char *ifname, const char *suffix, int err,
                           const char *unit, const char *base, const char *why)
{
	_cleanup_free_ char *src = NULL;
	char name[IFNAMSIZ + 32];

	if (source_with(&src, base, why) < 0)
		return -ENOMEM;
	snprintf(name, sizeof(name), "nic.%s.%s", ifname, suffix);
	return ht_facts_set_unavailable(f, name, err, unit, src);
}

static int nic_int(struct ht_facts *f, const char *ifname, const char *suffix, int64_t v,
                   const char *unit, const char *source)
{
	char name[IFNAMSIZ + 32];

	snprintf(name, sizeof(name), "nic.%s.%s", ifname, suffix);
	return set_int(f, name, v, unit, source);
}

static int nic_str(struct ht_facts *f, const char *ifname, const char *suffix, const char *v,
                   const char *source)
{
	char name[IFNAMSIZ + 32];

	snprintf(name, sizeof(name), "nic.%s.%s", ifname, suffix);
	return set_str(f, name, v, source);
}

static int emit_linkmodes(struct ht_facts *f, struct ethnl *e, const char *ifname)
{
	struct exchange x;
	struct linkmodes lm;
	int r = linkmodes_get(e, ifname, &lm, &x);

	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		int err = -r;

		r = nic_unavailable(f, ifname, "speed", err, "Mb/s", SRC_LINKMODES, x.extack);
		if (r < 0)
			return r;
		return nic_unavailable(f, ifname, "duplex", err, NULL, SRC_LINKMODES, x.extack);
	}

	/* SPEED_UNKNOWN (include/uapi/linux/ethtool.h); some drivers leave 0 instead. */
	if (!lm.has_speed)
		r = nic_unavailable(f, ifname, "speed", ENODATA, "Mb/s", SRC_LINKMODES,
		                    "no speed in the reply");
	else if (lm.speed == (uint32_t)SPEED_UNKNOWN || lm.speed == 0)
		r = nic_unavailable(f, ifname, "speed", ENODATA, "Mb/s", SRC_LINKMODES,
		                    "the driver reports unknown speed");
	else if (lm.speed > INT_MAX) /* ethtool_validate_speed() */
		r = nic_unavailable(f, ifname, "speed", EINVAL, "Mb/s", SRC_LINKMODES,
		                    "speed out of range");
	else
		r = nic_int(f, ifname, "speed", lm.speed, "Mb/s", SRC_LINKMODES);
	if (r < 0)
		return r;

	if (lm.has_duplex && lm.duplex == DUPLEX_FULL)
		return nic_str(f, ifname, "duplex", "full", SRC_LINKMODES);
	if (lm.has_duplex && lm.duplex == DUPLEX_HALF)
		return nic_str(f, ifname, "duplex", "half", SRC_LINKMODES);
	if (lm.has_duplex && lm.duplex != DUPLEX_UNKNOWN)
		return nic_unavailable(f, ifname, "duplex", EINVAL, NULL, SRC_LINKMODES,
		                       "duplex value out of range");
	return nic_unavailable(f, ifname, "duplex", ENODATA, NULL, SRC_LINKMODES,
	                       lm.has_duplex ? "the driver reports unknown duplex"
	                                     : "no duplex in the reply");
}

static const struct {
	const char *suffix;
	uint16_t attr;
	const char *what;
} channel_facts[] = {
	{ "channels.combined", ETHTOOL_A_CHANNELS_COMBINED_COUNT, "combined" },
	{ "channels.max.combined", ETHTOOL_A_CHANNELS_COMBINED_MAX, "combined" },
	{ "channels.max.rx", ETHTOOL_A_CHANNELS_RX_MAX, "rx" },
	{ "channels.max.tx", ETHTOOL_A_CHANNELS_TX_MAX, "tx" },
	{ "channels.rx", ETHTOOL_A_CHANNELS_RX_COUNT, "rx" },
	{ "channels.tx", ETHTOOL_A_CHANNELS_TX_COUNT, "tx" },
};

static int emit_channels(struct ht_facts *f, struct ethnl *e, const char *ifname)
{
	struct exchange x;
	struct channels ch;
	int r = channels_get(e, ifname, &ch, &x);

	if (r == -ENOMEM)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(channel_facts); i++) {
		const char *suffix = channel_facts[i].suffix;
		uint16_t attr = channel_facts[i].attr;
		char why[64];
		int q;

		if (r < 0) {
			/* EOPNOTSUPP: the driver has no get_channels; that is a state, not a fault. */
			q = nic_unavailable(f, ifname, suffix, -r, "queues", SRC_CHANNELS, x.extack);
		} else if (!ch.has[attr]) {
			/*
			 * The kernel leaves out a count and its maximum when the maximum is 0
			 * (channels_fill_reply() in net/ethtool/channels.c).
			 */
			snprintf(why, sizeof(why), "the driver reports no %s channels",
			         channel_facts[i].what);
			q = nic_unavailable(f, ifname, suffix, ENODATA, "queues", SRC_CHANNELS, why);
		} else {
			q = nic_int(f, ifname, suffix, ch.v[attr], "queues", SRC_CHANNELS);
		}
		if (q < 0)
			return q;
	}
	return 0;
}

/* ---- sysfs: under --root, and when the kernel has no ethtool netlink ---- */

static int sysfs_speed(struct ht_facts *f, const char *root, const char *ifname)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	long long v;
	int r;

	if (asprintf(&path, "/sys/class/net/%s/speed", ifname) < 0)
		return -ENOMEM;
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && ht_parse_int64(text, &v) < 0)
		r = -EINVAL;
	/* speed_show() in net/core/net-sysfs.c prints SPEED_UNKNOWN as -1. */
	if (r >= 0 && (v == SPEED_UNKNOWN || v == 0))
		return nic_unavailable(f, ifname, "speed", ENODATA, "Mb/s", path,
		                       "the driver reports unknown speed");
	if (r >= 0 && (v < 0 || v > INT_MAX))
		r = -EINVAL;
	if (r < 0)
		return nic_unavailable(f, ifname, "speed", -r, "Mb/s", path, NULL);
	return nic_int(f, ifname, "speed", v, "Mb/s", path);
}

static int sysfs_duplex(struct ht_facts *f, const char *root, const char *ifname)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	int r;

	if (asprintf(&path, "/sys/class/net/%s/duplex", ifname) < 0)
		return -ENOMEM;
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return nic_unavailable(f, ifname, "duplex", -r, NULL, path, NULL);
	/* duplex_show() in net/core/net-sysfs.c: "half", "full" or "unknown". */
	if (strcmp(text, "full") == 0 || strcmp(text, "half") == 0)
		return nic_str(f, ifname, "duplex", text, path);
	if (strcmp(text, "unknown") == 0)
		return nic_unavailable(f, ifname, "duplex", ENODATA, NULL, path,
		                       "the driver reports unknown duplex");
	return nic_unavailable(f, ifname, "duplex", EINVAL, NULL, path, NULL);
}

/* "rx-N" or "tx-N" (net/core/net-sysfs.c, rx_queue_add_kobject/netdev_queue_add_kobject). */
static bool queue_dir(const char *name, const char *prefix)
{
	size_t len = strlen(prefix);
	const char *p = name + len;

	if (strncmp(name, prefix, len) != 0 || !*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/*
 * The queues the kernel set up, one directory each: the current rx and tx
 * counts. sysfs has no maximum, and no combined count (a combined channel
 * is one rx plus one tx queue).
 */
static int sysfs_queues(struct ht_facts *f, const char *root, const char *ifname)
{
	_cleanup_free_ char *path = NULL, *full = NULL;
	int64_t rx = 0, tx = 0;
	struct dirent *de;
	DIR *d;
	int r, err = 0;

	if (asprintf(&path, "/sys/class/net/%s/queues", ifname) < 0)
		return -ENOMEM;
	full = ht_root_path(root, path);
	if (!full)
		return -ENOMEM;
	d = opendir(full);
	if (!d) {
		err = errno;
		if (err == ENOMEM)
			return -ENOMEM;
	} else {
		while ((de = readdir(d))) {
			rx += queue_dir(de->d_name, "rx-");
			tx += queue_dir(de->d_name, "tx-");
		}
		closedir(d);
	}
	for (size_t i = 0; i < ARRAY_SIZE(channel_facts); i++) {
		const char *suffix = channel_facts[i].suffix;
		uint16_t attr = channel_facts[i].attr;

		if (err)
			r = nic_unavailable(f, ifname, suffix, err, "queues", path, NULL);
		else if (attr == ETHTOOL_A_CHANNELS_RX_COUNT)
			r = nic_int(f, ifname, suffix, rx, "queues", path);
		else if (attr == ETHTOOL_A_CHANNELS_TX_COUNT)
			r = nic_int(f, ifname, suffix, tx, "queues", path);
		else
			r = nic_unavailable(f, ifname, suffix, ENOENT, "queues", path,
			                    "no maximum or combined count in sysfs");
		if (r < 0)
			return r;
	}
	return 0;
}

static int sysfs_nic(struct ht_facts *f, const char *root, const char *ifname)
{
	int r = sysfs_speed(f, root, ifname);

	if (r >= 0)
		r = sysfs_duplex(f, root, ifname);
	if (r >= 0)
		r = sysfs_queues(f, root, ifname);
	return r;
}

int ht_collect_ethtool(struct ht_facts *f, const char *root)
{
	const struct ht_fact *list = ht_facts_get(f, "nic.list");
	struct ethnl e = { 0 };
	_cleanup_free_ char *names = NULL;
	struct exchange x;
	bool netlink = false;
	char *save = NULL;
	int r = 0;

	if (!list || list->value.type != HT_T_STR || !list->value.s[0])
		return 0;
	names = strdup(list->value.s);
	if (!names)
		return -ENOMEM;
	if (ht_root_is_live(root)) {
		r = ethnl_open(&e, &x);
		if (r == -ENOMEM) {
			ethnl_close(&e);
			return r;
		}
		netlink = r >= 0;
	}
	r = 0;
	for (char *ifname = strtok_r(names, " ", &save); ifname && r >= 0;
	     ifname = strtok_r(NULL, " ", &save)) {
		if (netlink) {
			r = emit_linkmodes(f, &e, ifname);
			if (r >= 0)
				r = emit_channels(f, &e, ifname);
		} else {
			r = sysfs_nic(f, root, ifname);
		}
	}
	ethnl_close(&e);
	return r;
}
