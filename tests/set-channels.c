/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * set-channels IFNAME KIND COUNT - a test driver for ht_ethtool_set_channels()
 * until `hosttune apply` calls it: prints the count before the change and
 * exits 0; or prints "ERRNO-NAME: message" on stderr and exits 1; exits 2
 * on bad arguments. KIND is passed through unchecked, so the library's own
 * checks can be tested.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "persist/ethtool-set.h"
#include "shared/util.h"

int main(int argc, char **argv)
{
	struct ht_error err = { .msg = "" };
	uint32_t old = 0;
	long long count;
	const char *name;
	int r;

	if (argc != 4 || ht_parse_int64(argv[3], &count) < 0 || count < 0 ||
	    count > UINT32_MAX) {
		fprintf(stderr, "usage: set-channels IFNAME combined|rx|tx COUNT (0..%" PRIu32 ")\n",
		        UINT32_MAX);
		return 2;
	}
	r = ht_ethtool_set_channels(argv[1], argv[2], (uint32_t)count, &old, &err);
	if (r < 0) {
		name = ht_errno_name(-r);
		fprintf(stderr, "%s: %s\n", name ? name : "?", err.msg[0] ? err.msg : strerror(-r));
		return 1;
	}
	printf("%" PRIu32 "\n", old);
	return 0;
}
