/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The counters of the interfaces and of the receive path, and the overlay
 * devices:
 *  - nic.IF.stats.* and nic.IF.mtu: one RTM_GETLINK dump over rtnetlink
 *    (IFLA_STATS64, IFLA_CARRIER_CHANGES, IFLA_MTU); under --root, or when
 *    rtnetlink is refused, /sys/class/net/IF/statistics/, carrier_changes
 *    and mtu below the root;
 *  - softnet.*: /proc/net/softnet_stat;
 *  - nic.IF.overlay and, for a VXLAN or Geneve device, its underlay
 *    (IFLA_VXLAN_LINK, else IFLA_LINK), the underlay's MTU and its
 *    tx-udp_tnl-segmentation feature (ethtool netlink
 *    ETHTOOL_MSG_FEATURES_GET, the bit found by name in the
 *    ETH_SS_FEATURES string set).
 */
#include <errno.h>
#include <inttypes.h>
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
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "collect/collect.h"
#include "collect/netdev.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/ethtool-nl.h"
#include "shared/netlink.h"
#include "shared/rootfs.h"
#include "shared/util.h"

#define SRC_STATS64 "rtnetlink RTM_GETLINK IFLA_STATS64"
#define SRC_CARRIER "rtnetlink RTM_GETLINK IFLA_CARRIER_CHANGES"
#define SRC_MTU "rtnetlink RTM_GETLINK IFLA_MTU"
#define SRC_KIND "rtnetlink RTM_GETLINK IFLA_INFO_KIND"
#define SRC_FEATURES "ethtool netlink ETHTOOL_MSG_FEATURES_GET"
#define PATH_SOFTNET "/proc/net/softnet_stat"
#define TNL_FEATURE "tx-udp_tnl-segmentation"

/* ---- the links of this network namespace ---- */

struct links {
	struct ht_link *v;
	size_t n, cap;
	int err; /* a message that did not parse: -EINVAL */
};

static int links_cb(const struct nlmsghdr *nlh, void *data)
{
	struct links *ls = data;
	struct ht_link l;
	int r = ht_rtnl_link_parse(nlh, &l);

	if (r == -ENOENT)
		return MNL_CB_OK;
	if (r < 0) {
		ls->err = r;
		return MNL_CB_OK;
	}
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? 2 * ls->cap : 16;
		struct ht_link *v = reallocarray(ls->v, cap, sizeof(*v));

		if (!v) {
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
		ls->v = v;
		ls->cap = cap;
	}
	ls->v[ls->n++] = l;
	return MNL_CB_OK;
}

/*
 * Every link of the caller's network namespace, one RTM_GETLINK dump
 * (rtnl_dump_ifinfo() in net/core/rtnetlink.c). 0 or a negative errno
 * with @extack filled when the kernel said why.
 */
static int links_dump(struct links *ls, char *extack)
{
	_cleanup_(ht_nl_closep) struct mnl_socket *nl = NULL;
	_cleanup_free_ char *buf = malloc(HT_NL_DUMP_BUF_SIZE);
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	int r;

	if (!buf)
		return -ENOMEM;
	r = ht_nl_open(NETLINK_ROUTE, &nl);
	if (r < 0)
		return r;
	memset(buf, 0, MNL_NLMSG_HDRLEN + sizeof(*ifm));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (unsigned)time(NULL);
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	r = ht_nl_request(nl, nlh, buf, HT_NL_DUMP_BUF_SIZE, links_cb, ls, extack);
	if (r >= 0 && ls->err)
		r = ls->err;
	return r;
}

static const struct ht_link *link_by_name(const struct links *ls, const char *name)
{
	for (size_t i = 0; i < ls->n; i++)
		if (strcmp(ls->v[i].name, name) == 0)
			return &ls->v[i];
	return NULL;
}

static const struct ht_link *link_by_index(const struct links *ls, uint32_t ifindex)
{
	for (size_t i = 0; i < ls->n; i++)
		if ((uint32_t)ls->v[i].ifindex == ifindex)
			return &ls->v[i];
	return NULL;
}

/* ---- facts ---- */

static int nic_set_int(struct ht_facts *f, const char *ifname, const char *suffix, uint64_t v,
                       const char *unit, const char *source)
{
	char name[IFNAMSIZ + 48];

	snprintf(name, sizeof(name), "nic.%s.%s", ifname, suffix);
	if (v > INT64_MAX)
		return ht_facts_set_unavailable(f, name, ERANGE, unit, source);
	return ht_facts_set_int(f, name, (int64_t)v, unit, source);
}

static int nic_set_errno(struct ht_facts *f, const char *ifname, const char *suffix, int err,
                         const char *unit, const char *source)
{
	char name[IFNAMSIZ + 48];

	snprintf(name, sizeof(name), "nic.%s.%s", ifname, suffix);
	return ht_facts_set_unavailable(f, name, err < 0 ? -err : err, unit, source);
}

static int nic_set_str(struct ht_facts *f, const char *ifname, const char *suffix,
                       const char *v, const char *source)
{
	char name[IFNAMSIZ + 48];

	snprintf(name, sizeof(name), "nic.%s.%s", ifname, suffix);
	return ht_facts_set_str(f, name, v, source);
}

static int nic_set_bool(struct ht_facts *f, const char *ifname, const char *suffix, bool v,
                        const char *source)
{
	char name[IFNAMSIZ + 48];

	snprintf(name, sizeof(name), "nic.%s.%s", ifname, suffix);
	return ht_facts_set_bool(f, name, v, source);
}

/* The interfaces of nic.list, a copy (facts may move); NULL when it names none. */
static int nic_names(struct ht_facts *f, char **out)
{
	const struct ht_fact *list = ht_facts_get(f, "nic.list");

	*out = NULL;
	if (!list || list->value.type != HT_T_STR || !list->value.s[0])
		return 0;
	*out = strdup(list->value.s);
	return *out ? 0 : -ENOMEM;
}

/* nic.IF.stats.* and nic.IF.mtu of one link of the dump. */
static int link_facts(struct ht_facts *f, const char *ifname, const struct ht_link *l)
{
	int r = 0;

	for (size_t i = 0; i < HT_LS_N && r >= 0; i++) {
		char suffix[48];

		snprintf(suffix, sizeof(suffix), "stats.%s", ht_link_stat_name(i));
		r = l->has_stats ? nic_set_int(f, ifname, suffix, l->stats[i], "packets", SRC_STATS64)
		                 : nic_set_errno(f, ifname, suffix, ENODATA, "packets",
		                                 SRC_STATS64 ": none in the reply");
	}
	if (r >= 0)
		r = l->has_carrier_changes
		            ? nic_set_int(f, ifname, "stats.carrier_changes", l->carrier_changes,
		                          "changes", SRC_CARRIER)
		            : nic_set_errno(f, ifname, "stats.carrier_changes", ENODATA, "changes",
		                            SRC_CARRIER ": none in the reply (before 4.1)");
	if (r >= 0)
		r = l->has_mtu ? nic_set_int(f, ifname, "mtu", l->mtu, "bytes", SRC_MTU)
		               : nic_set_errno(f, ifname, "mtu", ENODATA, "bytes", SRC_MTU);
	return r;
}

/* One counter file below the root: a decimal u64 (netstat_show() in net/core/net-sysfs.c). */
static int sysfs_counter(struct ht_facts *f, const char *root, const char *ifname,
                         const char *suffix, const char *path, const char *unit)
{
	_cleanup_free_ char *text = NULL;
	unsigned long long v;
	char *end;
	int r = ht_read_file(root, path, &text);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return nic_set_errno(f, ifname, suffix, r, unit, path);
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] < '0' || text[0] > '9')
		return nic_set_errno(f, ifname, suffix, EINVAL, unit, path);
	return nic_set_int(f, ifname, suffix, v, unit, path);
}

/* The same facts from /sys/class/net/IF below the root. */
static int sysfs_facts(struct ht_facts *f, const char *root, const char *ifname)
{
	char path[IFNAMSIZ + 96], suffix[48];
	int r = 0;

	for (size_t i = 0; i < HT_LS_N && r >= 0; i++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", ifname,
		         ht_link_stat_name(i));
		snprintf(suffix, sizeof(suffix), "stats.%s", ht_link_stat_name(i));
		r = sysfs_counter(f, root, ifname, suffix, path, "packets");
	}
	if (r >= 0) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/carrier_changes", ifname);
		r = sysfs_counter(f, root, ifname, "stats.carrier_changes", path, "changes");
	}
	if (r >= 0) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
		r = sysfs_counter(f, root, ifname, "mtu", path, "bytes");
	}
	return r;
}

int ht_collect_nicstats(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *names = NULL;
	struct links ls = { 0 };
	char extack[HT_NL_EXTACK_LEN] = "";
	bool netlink = false;
	char *save = NULL;
	int r = nic_names(f, &names);

	if (r < 0 || !names)
		return r;
	if (ht_root_is_live(root)) {
		r = links_dump(&ls, extack);
		if (r == -ENOMEM) {
			free(ls.v);
			return r;
		}
		netlink = r >= 0;
	}
	r = 0;
	for (char *ifname = strtok_r(names, " ", &save); ifname && r >= 0;
	     ifname = strtok_r(NULL, " ", &save)) {
		const struct ht_link *l = netlink ? link_by_name(&ls, ifname) : NULL;

		/* An interface gone since nic.list was read: its files say ENOENT. */
		r = l ? link_facts(f, ifname, l) : sysfs_facts(f, root, ifname);
	}
	free(ls.v);
	return r;
}

/* ---- softnet ---- */

int ht_collect_softnet(struct ht_facts *f, const char *root)
{
	static const char *const names[] = { "softnet.processed", "softnet.dropped",
		                             "softnet.time_squeeze", "softnet.cpus",
		                             "softnet.worst_cpu", "softnet.worst_cpu.dropped",
		                             "softnet.worst_cpu.time_squeeze",
		                             "softnet.worst_cpu.processed" };
	_cleanup_free_ char *text = NULL, *bad = NULL, *worst_src = NULL;
	struct ht_softnet s;
	unsigned line = 0;
	int r = ht_read_file(root, PATH_SOFTNET, &text);

	if (r == -ENOMEM)
		return r;
	if (r >= 0 && ht_softnet_parse(text, &s, &line) < 0) {
		if (asprintf(&bad, "%s:%u: expected a row of hexadecimal columns", PATH_SOFTNET,
		             line) < 0)
			return -ENOMEM;
		r = -EINVAL;
	}
	if (r < 0) {
		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			const struct ht_fact_def *d = ht_fact_def_find(names[i]);
			int q = ht_facts_set_errno(f, names[i], r, d ? d->unit : NULL,
			                           bad ? bad : PATH_SOFTNET);

			if (q < 0)
				return q;
		}
		return 0;
	}
	if (asprintf(&worst_src, "%s, %s", PATH_SOFTNET,
	             s.cpu_column ? "the row of the CPU with the most drops (CPU number: column 13)"
	                          : "the row with the most drops (no CPU column before 5.10: the "
	                            "row counts online CPUs from 0)") < 0)
		return -ENOMEM;
	if ((r = ht_facts_set_int(f, "softnet.processed", (int64_t)s.processed, "packets",
	                          PATH_SOFTNET " column 1, summed over CPUs")) < 0 ||
	    (r = ht_facts_set_int(f, "softnet.dropped", (int64_t)s.dropped, "packets",
	                          PATH_SOFTNET " column 2, summed over CPUs")) < 0 ||
	    (r = ht_facts_set_int(f, "softnet.time_squeeze", (int64_t)s.time_squeeze, "times",
	                          PATH_SOFTNET " column 3, summed over CPUs")) < 0 ||
	    (r = ht_facts_set_int(f, "softnet.cpus", s.rows, "CPUs",
	                          PATH_SOFTNET ", one row an online CPU")) < 0 ||
	    (r = ht_facts_set_int(f, "softnet.worst_cpu", s.worst_cpu, NULL, worst_src)) < 0 ||
	    (r = ht_facts_set_int(f, "softnet.worst_cpu.dropped", s.worst_dropped, "packets",
	                          worst_src)) < 0 ||
	    (r = ht_facts_set_int(f, "softnet.worst_cpu.time_squeeze", s.worst_time_squeeze, "times",
	                          worst_src)) < 0)
		return r;
	return ht_facts_set_int(f, "softnet.worst_cpu.processed", s.worst_processed, "packets",
	                        worst_src);
}

/* ---- overlays ---- */

/* The ethtool side: the family, the feature's bit, and why either is missing. */
struct tnl_probe {
	struct ht_ethnl e;
	bool tried;    /* tnl_probe_open() ran: ht_ethnl_close() is due */
	int err;       /* why there is no answer: a negative errno, 0 */
	int bit;       /* index of TNL_FEATURE in ETH_SS_FEATURES, or -1 */
	char why[HT_NL_EXTACK_LEN + 256];
};

struct strset_reply {
	uint16_t family;
	int index; /* -ENOENT until found */
};

static int strset_cb(const struct nlmsghdr *nlh, void *data)
{
	struct strset_reply *s = data;
	int r = ht_ethnl_strset_index(nlh, s->family, ETH_SS_FEATURES, TNL_FEATURE);

	if (r != -ESRCH)
		s->index = r;
	return MNL_CB_OK;
}

/*
 * Opens ethtool netlink and finds the feature's bit, once. The set is
 * global, but the kernel refuses the request without a header (EINVAL, no
 * message, on 6.18): it names device @dev.
 */
static void tnl_probe_open(struct tnl_probe *p, const char *dev)
{
	struct ht_ethnl_exchange x = { 0 };
	union ht_ethnl_buf buf;
	struct strset_reply s;
	struct nlattr *sets, *set;
	struct nlmsghdr *nlh;
	int r;

	p->bit = -1;
	p->tried = true;
	r = ht_ethnl_open(&p->e, &x);
	if (r < 0) {
		p->err = r;
		snprintf(p->why, sizeof(p->why), "ethtool netlink: %s%s%s", strerror(-r),
		         x.extack[0] ? ": " : "", x.extack);
		return;
	}
	nlh = ht_ethnl_request(&p->e, &buf, ETHTOOL_MSG_STRSET_GET);
	ht_ethnl_put_header(nlh, ETHTOOL_A_STRSET_HEADER, dev, 0);
	sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
	set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
	mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES);
	mnl_attr_nest_end(nlh, set);
	mnl_attr_nest_end(nlh, sets);
	s = (struct strset_reply){ .family = p->e.family, .index = -ENOENT };
	x.parse = strset_cb;
	x.data = &s;
	r = ht_ethnl_talk(&p->e, nlh, &x);
	if (r >= 0 && s.index < 0)
		r = s.index;
	if (r < 0) {
		p->err = r;
		snprintf(p->why, sizeof(p->why), "ethtool netlink ETHTOOL_MSG_STRSET_GET %s: %s%s%s",
		         r == -ENOENT ? "has no " TNL_FEATURE " in netdev-features" : "failed",
		         strerror(-r), x.extack[0] ? ": " : "", x.extack);
		return;
	}
	p->bit = s.index;
}

struct features_reply {
	uint16_t family;
	uint32_t bit;
	struct ht_features feat;
	int err;
};

static int features_cb(const struct nlmsghdr *nlh, void *data)
{
	struct features_reply *fr = data;
	int r = ht_ethnl_features_bit(nlh, fr->family, fr->bit, &fr->feat);

	if (r < 0 && r != -ESRCH)
		fr->err = r;
	return MNL_CB_OK;
}

/*
 * nic.IF.underlay_tnl_segmentation and _fixed for underlay @under:
 * ETHTOOL_MSG_FEATURES_GET with compact bitsets.
 */
static int tnl_facts(struct ht_facts *f, struct tnl_probe *p, const char *ifname,
                     const char *under)
{
	struct ht_ethnl_exchange x = { 0 };
	struct features_reply fr;
	union ht_ethnl_buf buf;
	struct nlmsghdr *nlh;
	char src[HT_NL_EXTACK_LEN + IFNAMSIZ + 256];
	int r;

	if (p->bit < 0) {
		r = nic_set_errno(f, ifname, "underlay_tnl_segmentation", p->err, NULL, p->why);
		return r < 0 ? r
		             : nic_set_errno(f, ifname, "underlay_tnl_segmentation_fixed", p->err,
		                             NULL, p->why);
	}
	nlh = ht_ethnl_request(&p->e, &buf, ETHTOOL_MSG_FEATURES_GET);
	ht_ethnl_put_header(nlh, ETHTOOL_A_FEATURES_HEADER, under, ETHTOOL_FLAG_COMPACT_BITSETS);
	fr = (struct features_reply){ .family = p->e.family, .bit = (uint32_t)p->bit };
	x.parse = features_cb;
	x.data = &fr;
	r = ht_ethnl_talk(&p->e, nlh, &x);
	if (r >= 0 && fr.err)
		r = fr.err;
	if (r >= 0 && !fr.feat.seen)
		r = -ENODATA;
	if (r < 0) {
		snprintf(src, sizeof(src), SRC_FEATURES " of %s: %s%s%s", under, strerror(-r),
		         x.extack[0] ? ": " : "", x.extack);
		r = nic_set_errno(f, ifname, "underlay_tnl_segmentation", r, NULL, src);
		return r < 0 ? r
		             : nic_set_errno(f, ifname, "underlay_tnl_segmentation_fixed", -ENODATA,
		                             NULL, src);
	}
	snprintf(src, sizeof(src), SRC_FEATURES " of %s, " TNL_FEATURE " (bit %d) in %s", under,
	         p->bit, "ETHTOOL_A_FEATURES_ACTIVE");
	r = nic_set_bool(f, ifname, "underlay_tnl_segmentation", fr.feat.active, src);
	if (r < 0)
		return r;
	/* ethtool -k prints "[fixed]" for a feature the driver does not let change. */
	snprintf(src, sizeof(src), SRC_FEATURES " of %s, " TNL_FEATURE " (bit %d): %s", under,
	         p->bit, "fixed when not in ETHTOOL_A_FEATURES_HW or in _NOCHANGE");
	return nic_set_bool(f, ifname, "underlay_tnl_segmentation_fixed",
	                    !fr.feat.hw || fr.feat.nochange, src);
}

/* The underlay facts of overlay @l: unavailable with @err and @why for each. */
static int underlay_unavailable(struct ht_facts *f, const char *ifname, int err, const char *why)
{
	static const struct {
		const char *suffix, *unit;
	} facts[] = {
		{ "underlay", NULL },
		{ "underlay_mtu", "bytes" },
		{ "underlay_tnl_segmentation", NULL },
		{ "underlay_tnl_segmentation_fixed", NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(facts); i++) {
		int r = nic_set_errno(f, ifname, facts[i].suffix, err, facts[i].unit, why);

		if (r < 0)
			return r;
	}
	return 0;
}

static int overlay_facts(struct ht_facts *f, const struct links *ls, const struct ht_link *l,
                         struct tnl_probe *p)
{
	const char *ifname = l->name;
	const struct ht_link *under;
	uint32_t index = l->vxlan_link ? l->vxlan_link : l->link;
	char src[160];
	int r;

	r = nic_set_str(f, ifname, "overlay", l->kind, SRC_KIND);
	if (r >= 0) {
		snprintf(src, sizeof(src),
		         "%s over %s: outer IP %u + UDP 8 + %s header 8 + inner Ethernet 14",
		         l->kind, l->ipv6 ? "IPv6" : "IPv4", l->ipv6 ? 40 : 20,
		         l->overlay == HT_OVERLAY_VXLAN ? "VXLAN" : "Geneve base");
		r = nic_set_int(f, ifname, "overlay_headroom", ht_overlay_headroom(l), "bytes", src);
	}
	if (r < 0)
		return r;
	if (index == 0)
		return underlay_unavailable(f, ifname, ENOENT,
		                            "the device names no underlay (no IFLA_VXLAN_LINK or "
		                            "IFLA_LINK): the route to each remote picks it");
	under = link_by_index(ls, index);
	if (!under || !under->name[0]) {
		snprintf(src, sizeof(src), "the underlay, ifindex %" PRIu32 ", is not in this "
		         "network namespace", index);
		return underlay_unavailable(f, ifname, ENOENT, src);
	}
	snprintf(src, sizeof(src), "%s of %s", l->vxlan_link ? "IFLA_VXLAN_LINK" : "IFLA_LINK",
	         ifname);
	r = nic_set_str(f, ifname, "underlay", under->name, src);
	if (r >= 0) {
		snprintf(src, sizeof(src), SRC_MTU " of %s", under->name);
		r = under->has_mtu ? nic_set_int(f, ifname, "underlay_mtu", under->mtu, "bytes", src)
		                   : nic_set_errno(f, ifname, "underlay_mtu", ENODATA, "bytes", src);
	}
	if (r < 0)
		return r;
	if (!p->tried)
		tnl_probe_open(p, under->name);
	return tnl_facts(f, p, ifname, under->name);
}

/* Under --root: the kind libudev's DEVTYPE gave (nic.IF.kind); no underlay is recorded. */
static int overlay_from_kind(struct ht_facts *f, const char *ifname)
{
	char name[IFNAMSIZ + 48];
	const struct ht_fact *kind;
	bool overlay;
	int r;

	snprintf(name, sizeof(name), "nic.%s.kind", ifname);
	kind = ht_facts_get(f, name);
	if (!kind || kind->value.type != HT_T_STR)
		return nic_set_errno(f, ifname, "overlay", ENOENT, NULL, "nic.IF.kind unavailable");
	overlay = strcmp(kind->value.s, "vxlan") == 0 || strcmp(kind->value.s, "geneve") == 0;
	r = nic_set_str(f, ifname, "overlay", overlay ? kind->value.s : "none", name);
	if (r < 0 || !overlay)
		return r;
	r = nic_set_errno(f, ifname, "overlay_headroom", ENOENT, "bytes",
	                  "the outer address family is not recorded in a --root tree");
	return r < 0 ? r
	             : underlay_unavailable(f, ifname, ENOENT,
	                                    "the underlay is not recorded in a --root tree");
}

int ht_collect_overlay(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *names = NULL;
	struct tnl_probe p = { .bit = -1 };
	struct links ls = { 0 };
	char extack[HT_NL_EXTACK_LEN] = "";
	char *save = NULL;
	int r = nic_names(f, &names), dump = -ENOENT;

	if (r < 0 || !names)
		return r;
	if (ht_root_is_live(root)) {
		dump = links_dump(&ls, extack);
		if (dump == -ENOMEM) {
			free(ls.v);
			return dump;
		}
	}
	for (char *ifname = strtok_r(names, " ", &save); ifname && r >= 0;
	     ifname = strtok_r(NULL, " ", &save)) {
		const struct ht_link *l = dump >= 0 ? link_by_name(&ls, ifname) : NULL;

		if (!l)
			r = overlay_from_kind(f, ifname);
		else if (l->overlay == HT_OVERLAY_NONE)
			r = nic_set_str(f, ifname, "overlay", "none", SRC_KIND);
		else
			r = overlay_facts(f, &ls, l, &p);
	}
	if (p.tried)
		ht_ethnl_close(&p.e);
	free(ls.v);
	return r;
}
