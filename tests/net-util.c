/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "net-util.h"

int ht_net_wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = poll(&p, 1, timeout_ms);

	if (r < 0)
		return -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

int ht_net_read_eof(int fd, int timeout_ms)
{
	char buf[64];

	for (;;) {
		ssize_t n;
		int r = ht_net_wait_fd(fd, POLLIN, timeout_ms);

		if (r < 0)
			return r;
		n = read(fd, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
	}
}
