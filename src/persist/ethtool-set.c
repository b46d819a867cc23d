/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/if.h>

#include "shared/ethtool-nl.h"
#include "persist/ethtool-set.h"
#include "shared/util.h"

/*
 * The live half of nic.queues: ETHTOOL_MSG_CHANNELS_GET for the count to
 * restore, ETHTOOL_MSG_CHANNELS_SET with the one count, and
 * ETHTOOL_MSG_CHANNELS_GET again because a driver may round or clamp
 * (Documentation/networking/ethtool-netlink.rst, CHANNELS_SET). The
 * kernel checks the count against the maximum and that one rx and one tx
 * channel remain, then calls the driver's set_channels()
 * (ethnl_set_channels() in net/ethtool/channels.c); both say why in the
 * extended ACK or with a bare errno.
 */

static const struct {
	const char *name;
	uint16_t attr;
} kinds[] = {
	{ "combined", ETHTOOL_A_CHANNELS_COMBINED_COUNT },
	{ "rx", ETHTOOL_A_CHANNELS_RX_COUNT },
	{ "tx", ETHTOOL_A_CHANNELS_TX_COUNT },
};

/* "IFNAME: REQUEST: why", the kernel's extack text when it gave one. */
static int request_error(struct ht_error *err, int r, const char *ifname, const char *request,
                         const char *extack, const char *hint)
{
	const char *why = strerrordesc_np(-r);

	if (extack && *extack)
		return ht_error_set(err, -r, "%s: %s: %s", ifname, request, extack);
	return ht_error_set(err, -r, "%s: %s: %s%s", ifname, request, why ? why : "unknown error",
	                    hint ? hint : "");
}

/* CHANNELS_SET answers with the ACK alone (no reply message for this command). */
static int no_reply_cb(const struct nlmsghdr *nlh _unused_, void *data _unused_)
{
	return MNL_CB_OK;
}

static int channels_set(struct ht_ethnl *e, const char *ifname, uint16_t attr, uint32_t count,
                        struct ht_ethnl_exchange *x)
{
	union ht_ethnl_buf buf;
	struct nlmsghdr *nlh = ht_ethnl_request(e, &buf, ETHTOOL_MSG_CHANNELS_SET);

	ht_ethnl_put_header(nlh, ETHTOOL_A_CHANNELS_HEADER, ifname, 0);
	mnl_attr_put_u32(nlh, attr, count);
	x->parse = no_reply_cb;
	x->data = NULL;
	return ht_ethnl_talk(e, nlh, x);
}

int ht_ethtool_set_channels(const char *ifname, const char *kind, uint32_t count, uint32_t *old,
                            struct ht_error *err)
{
	_cleanup_(ht_ethnl_close) struct ht_ethnl e = { 0 };
	struct ht_ethnl_exchange x;
	struct ht_ethnl_channels ch;
	uint16_t attr = 0;
	int r;

	if (!ifname || !*ifname)
		return ht_error_set(err, EINVAL, "empty interface name");
	/* The kernel looks up names and altnames: ALTIFNAMSIZ (include/uapi/linux/if.h). */
	if (strlen(ifname) >= ALTIFNAMSIZ)
		return ht_error_set(err, EINVAL, "%.32s...: interface name longer than %d bytes",
		                    ifname, ALTIFNAMSIZ - 1);
	for (size_t i = 0; kind && i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kind, kinds[i].name) == 0)
			attr = kinds[i].attr;
	if (!attr)
		return ht_error_set(err, EINVAL,
		                    "%s: unknown channel kind '%s' (combined, rx or tx)", ifname,
		                    kind ? kind : "");
	if (count == 0)
		return ht_error_set(err, EINVAL, "%s: %s channel count 0: must be at least 1",
		                    ifname, kind);

	r = ht_ethnl_open(&e, &x);
	if (r == -ENOENT)
		return ht_error_set(err, EOPNOTSUPP,
		                    "%s: no ethtool generic netlink family (kernel before 5.6 or "
		                    "CONFIG_ETHTOOL_NETLINK=n)", ifname);
	if (r < 0)
		return request_error(err, r, ifname, "CTRL_CMD_GETFAMILY", x.extack, NULL);

	r = ht_ethnl_channels_get(&e, ifname, &ch, &x);
	if (r < 0)
		return request_error(err, r, ifname, "ETHTOOL_MSG_CHANNELS_GET", x.extack,
		                     r == -EOPNOTSUPP ? " (the driver has no get_channels)" : NULL);
	if (old)
		*old = ch.has[attr] ? ch.v[attr] : 0;

	r = channels_set(&e, ifname, attr, count, &x);
	if (r < 0)
		return request_error(err, r, ifname, "ETHTOOL_MSG_CHANNELS_SET", x.extack,
		                     r == -EOPNOTSUPP ? " (the driver has no set_channels)" : NULL);

	r = ht_ethnl_channels_get(&e, ifname, &ch, &x);
	if (r < 0)
		return request_error(err, r, ifname, "ETHTOOL_MSG_CHANNELS_GET", x.extack, NULL);
	if (!ch.has[attr])
		return ht_error_set(err, EIO,
		                    "%s: ETHTOOL_MSG_CHANNELS_GET: no %s count after setting %u",
		                    ifname, kind, count);
	if (ch.v[attr] != count)
		return ht_error_set(err, EIO,
		                    "%s: ETHTOOL_MSG_CHANNELS_GET: %s count reads back as %u after "
		                    "setting %u", ifname, kind, ch.v[attr], count);
	return 0;
}
