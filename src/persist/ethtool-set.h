/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "shared/util.h"

/*
 * ht_ethtool_set_channels - set one channel count of interface @ifname over
 * ethtool generic netlink (ETHTOOL_MSG_CHANNELS_SET with
 * ETHTOOL_A_CHANNELS_{COMBINED,RX,TX}_COUNT), the live half of `hosttune
 * apply` for nic.queues, then read it back with ETHTOOL_MSG_CHANNELS_GET.
 * Works on the live host's current network namespace only (never under
 * --root).
 * @kind: "combined", "rx" or "tx"; @count: 1..UINT32_MAX.
 * @old: if not NULL, receives the count before the change (so it can be
 *       restored), as soon as it is known: also when the change then fails
 *       or reads back wrong. 0 when the driver has no channels of @kind (the
 *       kernel leaves the count out when its maximum is 0), in which case
 *       the kernel refuses any @count.
 *
 * Returns 0; -EINVAL for a bad kind, count or interface name; -EOPNOTSUPP
 * when the driver cannot set channels (or the kernel has no ethtool netlink);
 * -EIO when the read-back differs; the kernel's negative errno otherwise
 * (-ENODEV: no such interface; -EINVAL: a count the kernel or the driver
 * refuses). @err (if not NULL) gets a one-line message that includes the
 * kernel's extended-ack text when there is one, e.g.
 * "eth0: ETHTOOL_MSG_CHANNELS_SET: requested channel count exceeds maximum".
 */
int ht_ethtool_set_channels(const char *ifname, const char *kind, uint32_t count, uint32_t *old,
                            struct ht_error *err);
