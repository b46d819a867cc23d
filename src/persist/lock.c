/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "persist/persist.h"
#include "shared/fsutil.h"

/* How often a waiting run tries the lock again: 20 ms. */
#define LOCK_POLL_NS (20 * 1000 * 1000L)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ht_persist_lock(const char *root, double wait_s, struct ht_error *err)
{
	const char *dir = ht_root_confined(root) ? root : "/";
	_cleanup_close_ int fd = -1;
	double end = now_s() + (wait_s > 0 ? wait_s : 0);

	/* A directory, not a lock file: nothing is created, nothing is left to remove. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ht_error_set(err, errno, "%s: %s", dir, strerror(errno));
	for (;;) {
		struct timespec ts = { 0, LOCK_POLL_NS };

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return TAKE_FD(fd);
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return ht_error_set(err, errno, "locking %s: %s", dir, strerror(errno));
		if (now_s() >= end)
			break;
		nanosleep(&ts, NULL);
	}
	return ht_error_set(err, EWOULDBLOCK, "another hosttune apply or revert is running on %s "
	                    "(it holds flock(2) on that directory); waited %gs: try again when "
	                    "it has finished, or give --wait a longer time", dir,
	                    wait_s > 0 ? wait_s : 0);
}
