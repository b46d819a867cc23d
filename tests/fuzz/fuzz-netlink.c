/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The interface parsers of collect/netdev.h: an RTM_NEWLINK message
 * (ht_rtnl_link_parse()), the ethtool STRSET and FEATURES replies
 * (ht_ethnl_strset_index(), ht_ethnl_features_bit()) and the text of
 * /proc/net/softnet_stat (ht_softnet_parse()).
 *
 * Input: the first byte picks the parser (mod 4: link, strset, features,
 * softnet); for the netlink ones the rest is the message after its
 * struct nlmsghdr (which the harness writes, with nlmsg_len covering the
 * input, as libmnl has checked it before a callback runs); for softnet the
 * rest is the text.
 *
 * Properties: a link that parses has a NUL-terminated name below IFNAMSIZ
 * that is in the input, the ifindex of its ifinfomsg, an overlay kind only
 * when the kind says so, and a headroom of 50 or 70; a string index found
 * is the index of a string the input holds; a feature bit past every
 * bitset is clear in all four sets; a softnet text that parses has rows,
 * the worst row's counters at most the sums, without a CPU column a
 * worst row among the rows, and the same sums when read
 * again line by line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>

#include "collect/netdev.h"

#include "fuzz-common.h"

/* The generic netlink family id the harness gives the ethtool replies. */
#define FAMILY 0x1d

/* A message of @type whose payload is @data, aligned as libmnl hands it over. */
static struct nlmsghdr *message(uint16_t type, const uint8_t *data, size_t size)
{
	struct nlmsghdr *nlh = calloc(1, MNL_NLMSG_HDRLEN + size + 8);

	if (!nlh)
		abort();
	nlh->nlmsg_len = (uint32_t)(MNL_NLMSG_HDRLEN + size);
	nlh->nlmsg_type = type;
	memcpy((char *)nlh + MNL_NLMSG_HDRLEN, data, size);
	return nlh;
}

static void check_link(const uint8_t *data, size_t size)
{
	struct nlmsghdr *nlh = message(RTM_NEWLINK, data, size);
	struct ht_link l;
	int r = ht_rtnl_link_parse(nlh, &l);

	FZ_CHECK(r == 0 || r == -EINVAL, "link: unexpected result %d", r);
	if (r == 0) {
		const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
		size_t len = strnlen(l.name, sizeof(l.name));

		FZ_CHECK(len < sizeof(l.name), "link: name not terminated");
		FZ_CHECK(!len || memmem(data, size, l.name, len), "link: name %s not in the input",
		         l.name);
		FZ_CHECK(l.ifindex == ifm->ifi_index, "link: ifindex %d, message says %d", l.ifindex,
		         ifm->ifi_index);
		FZ_CHECK(l.overlay == HT_OVERLAY_NONE || strcmp(l.kind, "vxlan") == 0 ||
		                 strcmp(l.kind, "geneve") == 0,
		         "link: overlay from kind '%s'", l.kind);
		FZ_CHECK(ht_overlay_headroom(&l) == 50 || ht_overlay_headroom(&l) == 70,
		         "link: headroom %u", ht_overlay_headroom(&l));
		FZ_CHECK(l.has_stats || !l.stats[HT_LS_RX_PACKETS], "link: counters without stats");
	}
	free(nlh);
}

static void check_strset(const uint8_t *data, size_t size)
{
	static const char want[] = "tx-udp_tnl-segmentation";
	struct nlmsghdr *nlh = message(FAMILY, data, size);
	int r = ht_ethnl_strset_index(nlh, FAMILY, ETH_SS_FEATURES, want);

	FZ_CHECK(r >= 0 || r == -ENOENT || r == -EINVAL || r == -ESRCH,
	         "strset: unexpected result %d", r);
	FZ_CHECK(r < 0 || memmem(data, size, want, sizeof(want)),
	         "strset: index %d for a string the input does not hold", r);
	free(nlh);
}

static void check_features(const uint8_t *data, size_t size)
{
	struct nlmsghdr *nlh = message(FAMILY, data, size);
	struct ht_features ft;
	/* More bits than the input has: no bitset of it can set this one. */
	uint32_t far = (uint32_t)size * 8 + 64;

	for (uint32_t bit = 0; bit < 40; bit += 13) {
		int r = ht_ethnl_features_bit(nlh, FAMILY, bit, &ft);

		FZ_CHECK(r == 0 || r == -EINVAL || r == -ESRCH, "features: unexpected result %d", r);
		FZ_CHECK(r < 0 || ft.seen, "features: parsed but not seen");
	}
	/* A verbose bitset may list any index the input spells out. */
	if (ht_ethnl_features_bit(nlh, FAMILY, far, &ft) == 0 && !memmem(data, size, &far, sizeof(far)))
		FZ_CHECK(!ft.hw && !ft.wanted && !ft.active && !ft.nochange,
		         "features: bit %u past every bitset is set", far);
	free(nlh);
}

/* An independent reading of one softnet row's first three columns. */
static void check_softnet(const char *text)
{
	struct ht_softnet s;
	unsigned line = 0, rows = 0;
	uint64_t processed = 0, dropped = 0, squeeze = 0;
	int r = ht_softnet_parse(text, &s, &line);

	FZ_CHECK(r == 0 || r == -EINVAL, "softnet: unexpected result %d", r);
	FZ_CHECK(line >= 1, "softnet: no line number");
	if (r < 0)
		return;
	FZ_CHECK(s.rows > 0, "softnet: parsed without rows");
	FZ_CHECK(s.worst_dropped <= s.dropped && s.worst_time_squeeze <= s.time_squeeze &&
	                 s.worst_processed <= s.processed,
	         "softnet: the worst row exceeds the sums");
	FZ_CHECK(s.cpu_column || (s.worst_cpu >= 0 && s.worst_cpu < (int64_t)s.rows),
	         "softnet: row %lld of %u", (long long)s.worst_cpu, s.rows);
	for (const char *p = text; *p;) {
		unsigned a, b, c;

		FZ_CHECK(sscanf(p, "%8x %8x %8x", &a, &b, &c) == 3, "softnet: row %u unread", rows);
		processed += a;
		dropped += b;
		squeeze += c;
		rows++;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	FZ_CHECK(s.rows == rows, "softnet: %u rows, %u lines", s.rows, rows);
	FZ_CHECK(processed == s.processed && dropped == s.dropped && squeeze == s.time_squeeze,
	         "softnet: sums differ from a line-by-line reading");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (size < 1 || size > 65536)
		return 0;
	fz_guard_begin(NULL, false);
	switch (data[0] % 4) {
	case 0:
		check_link(data + 1, size - 1);
		break;
	case 1:
		check_strset(data + 1, size - 1);
		break;
	case 2:
		check_features(data + 1, size - 1);
		break;
	default:
		text = fz_cstr(data + 1, size - 1);
		check_softnet(text);
		free(text);
		break;
	}
	fz_guard_end();
	return 0;
}
