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
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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
#include "collect/sample.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/escape.h"
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
/* nic.IF.SUFFIX with IF escaped (shared/escape.h): the longest suffix is 31 bytes. */
#define NIC_FACT_MAX (sizeof("nic..") + HT_NAME_ESCAPED_MAX(IFNAMSIZ) + 64)

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
	char name[NIC_FACT_MAX];

	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	if (v > INT64_MAX)
		return ht_facts_set_unavailable(f, name, ERANGE, unit, source);
	return ht_facts_set_int(f, name, (int64_t)v, unit, source);
}

static int nic_set_errno(struct ht_facts *f, const char *ifname, const char *suffix, int err,
                         const char *unit, const char *source)
{
	char name[NIC_FACT_MAX];

	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	return ht_facts_set_unavailable(f, name, err < 0 ? -err : err, unit, source);
}

static int nic_set_str(struct ht_facts *f, const char *ifname, const char *suffix,
                       const char *v, const char *source)
{
	char name[NIC_FACT_MAX];

	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	return ht_facts_set_str(f, name, v, source);
}

static int nic_set_bool(struct ht_facts *f, const char *ifname, const char *suffix, bool v,
                        const char *source)
{
	char name[NIC_FACT_MAX];

	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
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

/* ---- interface counters (a sampled source: collect/sample.h) ---- */

/* Counter @stat of @ifname into @s: nic.IF.stats.STAT. 0 or -ENOMEM. */
static int add_counter(struct ht_snapshot *s, const char *ifname, const char *stat, uint64_t v,
                       const char *source)
{
	char name[NIC_FACT_MAX], suffix[64];

	snprintf(suffix, sizeof(suffix), "stats.%s", stat);
	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	return ht_snapshot_add(s, name, v, source);
}

static int add_counter_error(struct ht_snapshot *s, const char *ifname, const char *stat,
                             int err, const char *source)
{
	char name[NIC_FACT_MAX], suffix[64];

	snprintf(suffix, sizeof(suffix), "stats.%s", stat);
	ht_instance_fact_to(name, sizeof(name), "nic", ifname, suffix);
	return ht_snapshot_add_error(s, name, err, source);
}

/* The counters of one link of the dump. */
static int link_counters(struct ht_snapshot *s, const struct ht_link *l)
{
	int r = 0;

	for (size_t i = 0; i < HT_LS_N && r >= 0; i++)
		r = l->has_stats ? add_counter(s, l->name, ht_link_stat_name(i), l->stats[i],
		                               SRC_STATS64)
		                 : add_counter_error(s, l->name, ht_link_stat_name(i), ENODATA,
		                                     SRC_STATS64 ": none in the reply");
	if (r >= 0)
		r = l->has_carrier_changes
		            ? add_counter(s, l->name, "carrier_changes", l->carrier_changes, SRC_CARRIER)
		            : add_counter_error(s, l->name, "carrier_changes", ENODATA,
		                                SRC_CARRIER ": none in the reply (before 4.1)");
	return r;
}

/*
 * A decimal u64 file below the root (netstat_show() in net/core/net-sysfs.c
 * prints "%lu"): 0 with *@v, or a negative errno (-EINVAL: no counter).
 */
static int read_u64(const char *root, const char *path, uint64_t *v)
{
	_cleanup_free_ char *text = NULL;
	unsigned long long n;
	char *end;
	int r = ht_read_file(root, path, &text);

	if (r < 0)
		return r;
	errno = 0;
	n = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == text || *end || text[0] < '0' || text[0] > '9')
		return -EINVAL;
	*v = n;
	return 0;
}

/* One counter file of /sys/class/net/IF below the root. */
static int sysfs_counter(struct ht_snapshot *s, const char *root, const char *ifname,
                         const char *stat, const char *path)
{
	uint64_t v;
	int r = read_u64(root, path, &v);

	if (r == -ENOMEM)
		return r;
	return r < 0 ? add_counter_error(s, ifname, stat, r, path)
	             : add_counter(s, ifname, stat, v, path);
}

/* The counters of @ifname from /sys/class/net/IF below the root. */
static int sysfs_counters(struct ht_snapshot *s, const char *root, const char *ifname)
{
	char path[PATH_MAX];
	int r = 0;

	for (size_t i = 0; i < HT_LS_N && r >= 0; i++) {
		if ((size_t)snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", ifname,
		                     ht_link_stat_name(i)) >= sizeof(path))
			return -ENAMETOOLONG;
		r = sysfs_counter(s, root, ifname, ht_link_stat_name(i), path);
	}
	if (r >= 0) {
		if ((size_t)snprintf(path, sizeof(path), "/sys/class/net/%s/carrier_changes",
		                     ifname) >= sizeof(path))
			return -ENAMETOOLONG;
		r = sysfs_counter(s, root, ifname, "carrier_changes", path);
	}
	return r;
}

/*
 * An interface name hosttune reports (nic.list's rule: a name the kernel
 * allows, not lo; its facts have it escaped).
 */
static bool counted(const char *name)
{
	return ht_ifname_valid(name) && strcmp(name, "lo") != 0;
}

int ht_nicstats_snapshot(const char *root, struct ht_snapshot *s)
{
	char extack[HT_NL_EXTACK_LEN] = "";
	struct links ls = { 0 };
	struct dirent *de;
	DIR *d;
	int r = -ENOENT;

	if (ht_root_is_live(root)) {
		r = links_dump(&ls, extack);
		if (r >= 0)
			for (size_t i = 0; i < ls.n && r >= 0; i++)
				if (counted(ls.v[i].name))
					r = link_counters(s, &ls.v[i]);
		free(ls.v);
		if (r >= 0 || r == -ENOMEM)
			return r;
	}
	/* Under --root, or rtnetlink refused: the files of each interface. */
	d = ht_root_opendir(root, "/sys/class/net");
	if (!d)
		return errno == ENOMEM ? -ENOMEM : 0;
	r = 0;
	while (r >= 0 && (de = readdir(d)))
		if (counted(de->d_name))
			r = sysfs_counters(s, root, de->d_name);
	closedir(d);
	return r;
}

int ht_collect_nicstats(struct ht_facts *f, const char *root)
{
	struct ht_snapshot s = { 0 };
	int r = ht_nicstats_snapshot(root, &s);

	if (r >= 0)
		r = ht_sample_facts_default(f, NULL, &s, 0);
	ht_snapshot_clear(&s);
	return r;
}

/* ---- softnet (a sampled source) ---- */

static int softnet_row(void *data, int64_t cpu, uint32_t processed, uint32_t dropped,
                       uint32_t time_squeeze)
{
	static const char *const what[] = { "processed", "dropped", "time_squeeze" };
	struct ht_snapshot *s = data;
	uint32_t v[] = { processed, dropped, time_squeeze };

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		char name[64];
		int r;

		snprintf(name, sizeof(name), "softnet.cpu.%" PRId64 ".%s", cpu, what[i]);
		r = ht_snapshot_add(s, name, v[i], PATH_SOFTNET);
		if (r < 0)
			return r;
	}
	return 0;
}

int ht_softnet_snapshot(const char *root, struct ht_snapshot *s)
{
	_cleanup_free_ char *text = NULL, *bad = NULL;
	struct ht_softnet sn;
	unsigned line = 0;
	int r = ht_read_file(root, PATH_SOFTNET, &text);

	if (r == -ENOMEM)
		return r;
	if (r >= 0) {
		r = ht_softnet_parse_rows(text, &sn, &line, softnet_row, s);
		if (r == -ENOMEM)
			return r;
		if (r < 0 && asprintf(&bad, "%s:%u: expected a row of hexadecimal columns",
		                      PATH_SOFTNET, line) < 0)
			return -ENOMEM;
	}
	if (r < 0)
		return ht_snapshot_add_error(s, "softnet.cpus", r, bad ? bad : PATH_SOFTNET);
	return ht_snapshot_add(s, "softnet.cpus", sn.rows, PATH_SOFTNET);
}

/* Per-CPU figures of one reading, or of the interval between two. */
struct cpu_figures {
	int64_t cpu;
	uint64_t v[3]; /* processed, dropped, time_squeeze */
};

/*
 * The CPUs of reading @snap, in the order of their rows; with @first, each
 * CPU's increase since @first ((uint32_t)(b - a): the kernel's counters are
 * 32-bit and wrap), CPUs absent from @first left out. *@n receives the
 * count, *@missing how many were left out. Returns the array (caller frees),
 * or NULL with *@n 0 (none, or ENOMEM: *@oom).
 */
static struct cpu_figures *cpu_figures(struct ht_snapshot *snap, struct ht_snapshot *first,
                                       size_t *n, size_t *missing, bool *oom)
{
	static const char *const what[] = { "processed", "dropped", "time_squeeze" };
	struct cpu_figures *v = calloc(snap->n / 3 + 1, sizeof(*v));

	*n = *missing = 0;
	if (!v) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < snap->n; i++) {
		const struct ht_counter *c = &snap->v[i];
		long long cpu;
		int len = 0;
		bool in_first = true;

		if (sscanf(c->name, "softnet.cpu.%lld.processed%n", &cpu, &len) != 1 ||
		    c->name[len] || c->error)
			continue;
		v[*n].cpu = cpu;
		for (size_t k = 0; k < ARRAY_SIZE(what); k++) {
			char name[64];
			const struct ht_counter *b, *a;

			snprintf(name, sizeof(name), "softnet.cpu.%lld.%s", cpu, what[k]);
			b = ht_snapshot_find(snap, name);
			a = first ? ht_snapshot_find(first, name) : NULL;
			if (first && (!a || a->error))
				in_first = false;
			v[*n].v[k] = !b ? 0 : !first ? b->value : a ? (uint32_t)(b->value - a->value) : 0;
		}
		if (in_first)
			(*n)++;
		else
			(*missing)++;
	}
	return v;
}

/* The worst of @v: the most drops, then time_squeeze, then the lowest CPU. */
static size_t worst_of(const struct cpu_figures *v, size_t n)
{
	size_t w = 0;

	for (size_t i = 1; i < n; i++)
		if (v[i].v[1] > v[w].v[1] || (v[i].v[1] == v[w].v[1] && v[i].v[2] > v[w].v[2]) ||
		    (v[i].v[1] == v[w].v[1] && v[i].v[2] == v[w].v[2] && v[i].cpu < v[w].cpu))
			w = i;
	return w;
}

static int set_u64(struct ht_facts *f, const char *name, uint64_t v, const char *source)
{
	const char *unit = ht_fact_def_unit(name);

	if (v > INT64_MAX)
		return ht_facts_set_unavailable(f, name, ERANGE, unit, source);
	return ht_facts_set_int(f, name, (int64_t)v, unit, source);
}

int ht_softnet_facts(struct ht_facts *f, struct ht_snapshot *first, struct ht_snapshot *second,
                     double seconds)
{
	static const char *const names[] = { "softnet.processed", "softnet.dropped",
		                             "softnet.time_squeeze", "softnet.cpus",
		                             "softnet.worst_cpu", "softnet.worst_cpu.processed",
		                             "softnet.worst_cpu.dropped",
		                             "softnet.worst_cpu.time_squeeze" };
	static const char *const sums[] = { "softnet.processed", "softnet.dropped",
		                            "softnet.time_squeeze" };
	static const char *const worst[] = { "softnet.worst_cpu.processed",
		                             "softnet.worst_cpu.dropped",
		                             "softnet.worst_cpu.time_squeeze" };
	_cleanup_free_ struct cpu_figures *now = NULL, *delta = NULL;
	_cleanup_free_ char *src = NULL, *dsrc = NULL, *wsrc = NULL;
	const struct ht_counter *cpus = ht_snapshot_find(second, "softnet.cpus");
	size_t n = 0, nd = 0, missing = 0, skip, w;
	bool oom = false;
	int r;

	if (!cpus || cpus->error) {
		int err = cpus ? cpus->error : ENOENT;
		const char *why = cpus && cpus->source ? cpus->source : PATH_SOFTNET;

		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			char d[64];

			r = ht_facts_set_unavailable(f, names[i], err, ht_fact_def_unit(names[i]), why);
			snprintf(d, sizeof(d), "%s.delta", names[i]);
			if (r >= 0 && first && ht_fact_has_delta(names[i]))
				r = ht_facts_set_unavailable(f, d, err, ht_fact_def_unit(names[i]), why);
			if (r < 0)
				return r;
		}
		return 0;
	}
	now = cpu_figures(second, NULL, &n, &skip, &oom);
	if (first)
		delta = cpu_figures(second, first, &nd, &missing, &oom);
	if (oom)
		return -ENOMEM;
	r = set_u64(f, "softnet.cpus", cpus->value, PATH_SOFTNET ", one row an online CPU");
	for (size_t k = 0; k < ARRAY_SIZE(sums) && r >= 0; k++) {
		uint64_t total = 0, dtotal = 0;

		for (size_t i = 0; i < n; i++)
			total += now[i].v[k];
		for (size_t i = 0; i < nd; i++)
			dtotal += delta[i].v[k];
		free(src);
		if (asprintf(&src, PATH_SOFTNET " column %zu, summed over CPUs", k + 1) < 0)
			return -ENOMEM;
		r = set_u64(f, sums[k], total, src);
		if (r >= 0 && first) {
			char d[64];

			free(dsrc);
			if (asprintf(&dsrc, "%s, over --sample's %.3g s (32-bit counters per CPU, a wrap "
			             "counted)%s", src, seconds,
			             missing ? "; CPUs not online at the first reading left out" : "") < 0)
				return -ENOMEM;
			snprintf(d, sizeof(d), "%s.delta", sums[k]);
			r = set_u64(f, d, dtotal, dsrc);
		}
	}
	if (r < 0)
		return r;
	/* The worst CPU: over the interval when there is one, else since boot. */
	w = delta && nd ? worst_of(delta, nd) : n ? worst_of(now, n) : 0;
	if (!n || (delta && !nd)) {
		for (size_t i = 4; i < ARRAY_SIZE(names) && r >= 0; i++)
			r = ht_facts_set_unavailable(f, names[i], ENODATA, ht_fact_def_unit(names[i]),
			                             PATH_SOFTNET ": no CPU row in both readings");
		return r;
	}
	if (asprintf(&wsrc, PATH_SOFTNET ", the CPU with the most drops%s (its number: column "
	             "13, or the row from 0 before 5.10, which prints none)",
	             delta ? " over --sample's interval" : " since boot") < 0)
		return -ENOMEM;
	{
		int64_t cpu = delta ? delta[w].cpu : now[w].cpu;
		size_t at = 0;

		/* The same CPU's since-boot figures. */
		while (at < n && now[at].cpu != cpu)
			at++;
		r = ht_facts_set_int(f, "softnet.worst_cpu", cpu, NULL, wsrc);
		for (size_t k = 0; k < ARRAY_SIZE(worst) && r >= 0; k++) {
			r = set_u64(f, worst[k], at < n ? now[at].v[k] : 0, wsrc);
			if (r >= 0 && delta) {
				char d[64];

				free(dsrc);
				if (asprintf(&dsrc, PATH_SOFTNET " column %zu of CPU %" PRId64 ", over "
				             "--sample's %.3g s (a 32-bit counter, a wrap counted)", k + 1,
				             cpu, seconds) < 0)
					return -ENOMEM;
				snprintf(d, sizeof(d), "%s.delta", worst[k]);
				r = set_u64(f, d, delta[w].v[k], dsrc);
			}
		}
	}
	return r;
}

int ht_collect_softnet(struct ht_facts *f, const char *root)
{
	struct ht_snapshot s = { 0 };
	int r = ht_softnet_snapshot(root, &s);

	if (r >= 0)
		r = ht_softnet_facts(f, NULL, &s, 0);
	ht_snapshot_clear(&s);
	return r;
}

/* ---- overlays ---- */

/*
 * The two features an overlay's large packets need of the underlay: 0 for an
 * overlay without outer UDP checksums (SKB_GSO_UDP_TUNNEL), 1 with them
 * (SKB_GSO_UDP_TUNNEL_CSUM); skb_gso_ok() in include/linux/netdevice.h wants
 * the feature of every GSO type bit of the packet.
 */
static const char *const tnl_features[2] = { "tx-udp_tnl-segmentation",
	                                     "tx-udp_tnl-csum-segmentation" };

/* The ethtool side: the family, the features' bits, and why they are missing. */
struct tnl_probe {
	struct ht_ethnl e;
	bool tried;    /* tnl_probe_open() ran: ht_ethnl_close() is due */
	int err[2];    /* why a feature has no bit: a negative errno, 0 */
	int bit[2];    /* index of tnl_features[i] in ETH_SS_FEATURES, or -1 */
	char why[2][HT_NL_EXTACK_LEN + 256];
};

struct strset_reply {
	uint16_t family;
	int index[2]; /* -ENOENT until found */
};

static int strset_cb(const struct nlmsghdr *nlh, void *data)
{
	struct strset_reply *s = data;

	for (size_t i = 0; i < 2; i++) {
		int r = ht_ethnl_strset_index(nlh, s->family, ETH_SS_FEATURES, tnl_features[i]);

		if (r != -ESRCH)
			s->index[i] = r;
	}
	return MNL_CB_OK;
}

/*
 * Opens ethtool netlink and finds the features' bits, once. The set is
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

	p->tried = true;
	r = ht_ethnl_open(&p->e, &x);
	if (r >= 0) {
		nlh = ht_ethnl_request(&p->e, &buf, ETHTOOL_MSG_STRSET_GET);
		ht_ethnl_put_header(nlh, ETHTOOL_A_STRSET_HEADER, dev, 0);
		sets = mnl_attr_nest_start(nlh, ETHTOOL_A_STRSET_STRINGSETS);
		set = mnl_attr_nest_start(nlh, ETHTOOL_A_STRINGSETS_STRINGSET);
		mnl_attr_put_u32(nlh, ETHTOOL_A_STRINGSET_ID, ETH_SS_FEATURES);
		mnl_attr_nest_end(nlh, set);
		mnl_attr_nest_end(nlh, sets);
		s = (struct strset_reply){ .family = p->e.family, .index = { -ENOENT, -ENOENT } };
		x.parse = strset_cb;
		x.data = &s;
		r = ht_ethnl_talk(&p->e, nlh, &x);
	}
	for (size_t i = 0; i < 2; i++) {
		int e = r < 0 ? r : s.index[i] < 0 ? s.index[i] : 0;

		p->bit[i] = e < 0 ? -1 : s.index[i];
		p->err[i] = e;
		if (e == -ENOENT && r >= 0)
			snprintf(p->why[i], sizeof(p->why[i]), "ethtool netlink ETHTOOL_MSG_STRSET_GET: "
			         "no %s in netdev-features (an older kernel)", tnl_features[i]);
		else if (e < 0)
			snprintf(p->why[i], sizeof(p->why[i]), "ethtool netlink: %s%s%s", strerror(-e),
			         x.extack[0] ? ": " : "", x.extack);
	}
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
 * nic.IF.underlay_tnl_feature, nic.IF.underlay_tnl_segmentation and _fixed
 * for overlay @l over underlay @under: ETHTOOL_MSG_FEATURES_GET with compact
 * bitsets, the feature the overlay's packets need.
 */
static int tnl_facts(struct ht_facts *f, struct tnl_probe *p, const struct ht_link *l,
                     const char *under)
{
	const char *ifname = l->name, *feature = tnl_features[l->udp_csum];
	int bit = p->bit[l->udp_csum];
	struct ht_ethnl_exchange x = { 0 };
	struct features_reply fr;
	union ht_ethnl_buf buf;
	struct nlmsghdr *nlh;
	char src[HT_NL_EXTACK_LEN + IFNAMSIZ + 256];
	int r;

	snprintf(src, sizeof(src), "%s sends %souter UDP checksums (IFLA_%s_%s)", ifname,
	         l->udp_csum ? "" : "no ", l->overlay == HT_OVERLAY_VXLAN ? "VXLAN" : "GENEVE",
	         l->ipv6 ? "UDP_ZERO_CSUM6_TX" : "UDP_CSUM");
	r = nic_set_str(f, ifname, "underlay_tnl_feature", feature, src);
	if (r < 0)
		return r;
	if (bit < 0) {
		r = nic_set_errno(f, ifname, "underlay_tnl_segmentation", p->err[l->udp_csum], NULL,
		                  p->why[l->udp_csum]);
		return r < 0 ? r
		             : nic_set_errno(f, ifname, "underlay_tnl_segmentation_fixed",
		                             p->err[l->udp_csum], NULL, p->why[l->udp_csum]);
	}
	nlh = ht_ethnl_request(&p->e, &buf, ETHTOOL_MSG_FEATURES_GET);
	ht_ethnl_put_header(nlh, ETHTOOL_A_FEATURES_HEADER, under, ETHTOOL_FLAG_COMPACT_BITSETS);
	fr = (struct features_reply){ .family = p->e.family, .bit = (uint32_t)bit };
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
	snprintf(src, sizeof(src), SRC_FEATURES " of %s, %s (bit %d) in ETHTOOL_A_FEATURES_ACTIVE",
	         under, feature, bit);
	r = nic_set_bool(f, ifname, "underlay_tnl_segmentation", fr.feat.active, src);
	if (r < 0)
		return r;
	/* ethtool -k prints "[fixed]" for a feature the driver does not let change. */
	snprintf(src, sizeof(src), SRC_FEATURES " of %s, %s (bit %d): fixed when not in "
	         "ETHTOOL_A_FEATURES_HW or in _NOCHANGE", under, feature, bit);
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
		{ "underlay_tnl_feature", NULL },
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
	return tnl_facts(f, p, l, under->name);
}

/*
 * Under --root, or without the dump: the kind libudev's DEVTYPE gave
 * (nic.IF.kind); the underlay is unknown, @why says why.
 */
static int overlay_from_kind(struct ht_facts *f, const char *ifname, const char *why)
{
	char name[NIC_FACT_MAX];
	const struct ht_fact *kind;
	bool overlay;
	int r;

	ht_instance_fact_to(name, sizeof(name), "nic", ifname, "kind");
	kind = ht_facts_get(f, name);
	if (!kind || kind->value.type != HT_T_STR)
		return nic_set_errno(f, ifname, "overlay", ENOENT, NULL, "nic.IF.kind unavailable");
	overlay = strcmp(kind->value.s, "vxlan") == 0 || strcmp(kind->value.s, "geneve") == 0;
	r = nic_set_str(f, ifname, "overlay", overlay ? kind->value.s : "none", name);
	if (r < 0 || !overlay)
		return r;
	r = nic_set_errno(f, ifname, "overlay_headroom", ENOENT, "bytes", why);
	return r < 0 ? r : underlay_unavailable(f, ifname, ENOENT, why);
}

/* nic.IF.mtu: IFLA_MTU of the dump's link @l, else /sys/class/net/IF/mtu below the root. */
static int mtu_fact(struct ht_facts *f, const char *root, const char *ifname,
                    const struct ht_link *l)
{
	char path[sizeof("/sys/class/net//mtu") + IFNAMSIZ];
	uint64_t v;
	int r;

	if (l)
		return l->has_mtu ? nic_set_int(f, ifname, "mtu", l->mtu, "bytes", SRC_MTU)
		                  : nic_set_errno(f, ifname, "mtu", ENODATA, "bytes", SRC_MTU);
	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
	r = read_u64(root, path, &v);
	if (r == -ENOMEM)
		return r;
	return r < 0 ? nic_set_errno(f, ifname, "mtu", r, "bytes", path)
	             : nic_set_int(f, ifname, "mtu", v, "bytes", path);
}

int ht_collect_overlay(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *names = NULL;
	struct tnl_probe p = { .bit = { -1, -1 } };
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
	for (char *esc = strtok_r(names, " ", &save); esc && r >= 0;
	     esc = strtok_r(NULL, " ", &save)) {
		/* The list has the names escaped (collect-udev.c): the kernel's name. */
		_cleanup_free_ char *ifname = ht_name_unescape(esc);
		const struct ht_link *l;

		if (!ifname) {
			if (errno == ENOMEM)
				r = -ENOMEM;
			continue;
		}
		l = dump >= 0 ? link_by_name(&ls, ifname) : NULL;
		r = mtu_fact(f, root, ifname, l);
		if (r < 0)
			break;
		if (!l)
			r = overlay_from_kind(f, ifname,
			                      ht_root_is_live(root)
			                              ? "no rtnetlink RTM_GETLINK reply for the device"
			                              : "the underlay and the outer address family are "
			                                "not recorded in a --root tree");
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
