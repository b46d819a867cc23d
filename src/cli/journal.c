/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Priority prefixes for the journal: sd-daemon(3), systemd.exec(5) $JOURNAL_STREAM. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "cli/cli.h"
#include "shared/escape.h"

/* Whether stdout is the journal's stream: set by cli_journal_setup(). */
static bool out_journal;

/* "DEV:INO", two decimal numbers: 0, or -EINVAL. */
static int parse_stream(const char *s, uint64_t *dev, uint64_t *ino)
{
	char *end;

	if (!s || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	*dev = strtoull(s, &end, 10);
	if (errno || *end != ':' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	*ino = strtoull(end + 1, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

bool cli_journal_fd(int fd)
{
	uint64_t dev, ino;
	struct stat st;

	if (parse_stream(getenv("JOURNAL_STREAM"), &dev, &ino) < 0 || fstat(fd, &st) < 0)
		return false;
	return (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

int cli_journal_setup(bool text)
{
	out_journal = text && cli_journal_fd(STDOUT_FILENO);
	if (out_journal && ht_escape_line_prefix(stdout, "<6>") != 0)
		return -(errno ? errno : EIO);
	return 0;
}

void cli_journal_priority(FILE *out, int prio)
{
	char p[8];

	if (!out_journal || prio < LOG_EMERG || prio > LOG_DEBUG)
		return;
	snprintf(p, sizeof(p), "<%d>", prio);
	ht_escape_line_prefix(out, p);
}

const char *cli_journal_stderr_prefix(bool error, const char *msg)
{
	/* Looked at on the first error, which may come before the options are parsed. */
	static int err_journal = -1;

	if (err_journal < 0)
		err_journal = cli_journal_fd(STDERR_FILENO);
	if (!err_journal)
		return "";
	if (error)
		return "<3>";
	return strncmp(msg, "warning:", 8) == 0 ? "<4>" : "<5>";
}
