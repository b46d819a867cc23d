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

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>

#include "collect/collect.h"
#include "shared/ethtool-nl.h"
#include "engine/facts.h"
#include "shared/escape.h"
#include "shared/rootfs.h"
#include "shared/util.h"
#include "engine/value.h"

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
/* nic.IF.SUFFIX with IF escaped (shared/escape.h). */
#define NIC_FACT_MAX (sizeof("nic..") + HT_NAME_ESCAPED_MAX(IFNAMSIZ) + 48)

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

	if (!ht_genl_reply_parse(nlh, lm->family, ETHTOOL_MSG_LINKMODES_GET_REPLY, tb,
	                         ETHTOOL_A_LINKMODES_MAX))
		return MNL_CB_OK;
	lm->has_speed = ht_nl_attr_u32(tb[ETHTOOL_A_LINKMODES_SPEED], &lm->speed);
	if (tb[ETHTOOL_A_LINKMODES_DUPLEX] &&
	    mnl_attr_validate(tb[ETHTOOL_A_LINKMODES_DUPLEX], MNL_TYPE_U8) == 0) {
		lm->has_duplex = true;
		lm->duplex = mnl_attr_get_u8(tb[ETHTOOL_A_LINKMODES_DUPLEX]);
	}
	return MNL_CB_OK;
}

static int linkmodes_get(struct ht_ethnl *e, const char *ifname, struct linkmodes *lm,
                         struct ht_ethnl_exchange *x)
{
	union ht_ethnl_buf buf;
	struct nlmsghdr *nlh = ht_ethnl_request(e, &buf, ETHTOOL_MSG_LINKMODES_GET);

	/* Compact bitsets: the link mode masks we ignore come as bits, not names. */
	ht_ethnl_put_header(nlh, ETHTOOL_A_LINKMODES_HEADER, ifname, ETHTOOL_FLAG_COMPACT_BITSETS);
	*lm = (struct linkmodes){ .family = e->family };
	x->parse = linkmodes_cb;
	x->data = lm;
	return ht_ethnl_talk(e, nlh, x);
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
	char name[NIC_FACT_MAX];

	if (source_with(&src, base, why) < 0)
		return -ENOMEM;
	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	return ht_facts_set_unavailable(f, name, err, unit, src);
}

static int nic_int(struct ht_facts *f, const char *ifname, const char *suffix, int64_t v,
                   const char *unit, const char *source)
{
	char name[NIC_FACT_MAX];

	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	return ht_facts_set_int(f, name, v, unit, source);
}

static int nic_str(struct ht_facts *f, const char *ifname, const char *suffix, const char *v,
                   const char *source)
{
	char name[NIC_FACT_MAX];

	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	return ht_facts_set_str(f, name, v, source);
}

static int emit_linkmodes(struct ht_facts *f, struct ht_ethnl *e, const char *ifname)
{
	struct ht_ethnl_exchange x;
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

static int emit_channels(struct ht_facts *f, struct ht_ethnl *e, const char *ifname)
{
	struct ht_ethnl_exchange x;
	struct ht_ethnl_channels ch;
	int r = ht_ethnl_channels_get(e, ifname, &ch, &x);

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
	_cleanup_free_ char *path = NULL;
	int64_t rx = 0, tx = 0;
	struct dirent *de;
	DIR *d;
	int r, err = 0;

	if (asprintf(&path, "/sys/class/net/%s/queues", ifname) < 0)
		return -ENOMEM;
	d = ht_root_opendir(root, path);
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

/*
 * nic.max_speed: the fastest nic.IF.speed of a physical interface
 * (nic.IF.physical), the link a node's peers reach it over; a veth or
 * bridge reports a nominal speed that no wire limits.
 */
static int collect_max_speed(struct ht_facts *f)
{
	const struct ht_fact *list = ht_facts_get(f, "nic.list");
	_cleanup_free_ char *names = NULL, *src = NULL;
	char *save = NULL;
	int64_t best = -1;

	if (!list || list->value.type != HT_T_STR)
		return ht_facts_set_unavailable(f, "nic.max_speed", ENOENT, "Mb/s",
		                                "nic.list unavailable");
	/* A copy: a fact pointer is only valid until the next ht_facts_set(). */
	names = strdup(list->value.s);
	if (!names)
		return -ENOMEM;
	for (char *ifname = strtok_r(names, " ", &save); ifname; ifname = strtok_r(NULL, " ", &save)) {
		/* The list's names are escaped as the facts' are: used as they are. */
		char name[NIC_FACT_MAX];
		const struct ht_fact *phys, *speed;

		snprintf(name, sizeof(name), "nic.%s.physical", ifname);
		phys = ht_facts_get(f, name);
		if (!phys || phys->value.type != HT_T_BOOL || !phys->value.b)
			continue;
		snprintf(name, sizeof(name), "nic.%s.speed", ifname);
		speed = ht_facts_get(f, name);
		if (!speed || speed->value.type != HT_T_INT || speed->value.i <= best)
			continue;
		best = speed->value.i;
		free(src);
		if (asprintf(&src, "nic.%s.speed, the fastest physical interface", ifname) < 0) {
			src = NULL;
			return -ENOMEM;
		}
	}
	if (best < 0)
		return ht_facts_set_unavailable(f, "nic.max_speed", ENOENT, "Mb/s",
		                                "no physical interface of nic.list reports a speed");
	return ht_facts_set_int(f, "nic.max_speed", best, "Mb/s", src);
}

int ht_collect_ethtool(struct ht_facts *f, const char *root)
{
	const struct ht_fact *list = ht_facts_get(f, "nic.list");
	struct ht_ethnl e = { 0 };
	_cleanup_free_ char *names = NULL;
	struct ht_ethnl_exchange x;
	bool netlink = false;
	char *save = NULL;
	int r = 0;

	if (!list || list->value.type != HT_T_STR || !list->value.s[0])
		return collect_max_speed(f);
	names = strdup(list->value.s);
	if (!names)
		return -ENOMEM;
	if (ht_root_is_live(root)) {
		r = ht_ethnl_open(&e, &x);
		if (r == -ENOMEM) {
			ht_ethnl_close(&e);
			return r;
		}
		netlink = r >= 0;
	}
	r = 0;
	for (char *esc = strtok_r(names, " ", &save); esc && r >= 0;
	     esc = strtok_r(NULL, " ", &save)) {
		/* The list has the names escaped (collect-udev.c): the kernel's name. */
		_cleanup_free_ char *ifname = ht_name_unescape(esc);

		if (!ifname) {
			if (errno == ENOMEM)
				r = -ENOMEM;
			continue;
		}
		if (netlink) {
			r = emit_linkmodes(f, &e, ifname);
			if (r >= 0)
				r = emit_channels(f, &e, ifname);
		} else {
			r = sysfs_nic(f, root, ifname);
		}
	}
	ht_ethnl_close(&e);
	return r < 0 ? r : collect_max_speed(f);
}
