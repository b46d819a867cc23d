/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/util.h"

/*
 * The storage collector from the shell (tests/storage-live.sh compares it
 * with stat -f, findmnt and sysfs):
 *
 *   storage-probe collect ROOT NAME ROLE PATH measure|no-measure
 *       ht_collect_storage() (ROOT "/" for the live host), the facts file on stdout
 *   storage-probe fstype DIR
 *       ht_fs_type_name() of statfs(DIR).f_type, "unknown" when it has none
 *   storage-probe fsync DIR BUDGET_MS MAX_ROUNDS
 *       ht_fsync_rate(): "rc=0 rounds=N elapsed_ns=N rate=R", or "rc=-ERRNO ENAME"
 */

static int usage(void)
{
	fprintf(stderr, "usage: storage-probe collect ROOT NAME ROLE PATH measure|no-measure\n"
	                "       storage-probe fstype DIR\n"
	                "       storage-probe fsync DIR BUDGET_MS MAX_ROUNDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "collect") == 0) {
		struct ht_facts *f = ht_facts_new();
		int r;

		if (!f)
			return 1;
		r = ht_collect_storage(f, argv[2], argv[3], argv[4], argv[5],
		                       strcmp(argv[6], "measure") == 0);
		if (r < 0) {
			fprintf(stderr, "ht_collect_storage: %s\n", strerror(-r));
			ht_facts_free(f);
			return 1;
		}
		r = ht_facts_write(f, stdout);
		ht_facts_free(f);
		return r < 0 ? 1 : 0;
	}
	if (argc == 3 && strcmp(argv[1], "fstype") == 0) {
		struct statfs s;
		const char *name;

		if (statfs(argv[2], &s) < 0) {
			perror(argv[2]);
			return 1;
		}
		name = ht_fs_type_name((int64_t)s.f_type);
		printf("%s\n", name ? name : "unknown");
		return 0;
	}
	if (argc == 5 && strcmp(argv[1], "fsync") == 0) {
		unsigned rounds = 0;
		uint64_t ns = 0;
		double rate = 0;
		int r = ht_fsync_rate(argv[2], (unsigned)strtoul(argv[3], NULL, 10),
		                      (unsigned)strtoul(argv[4], NULL, 10), &rate, &rounds, &ns);

		if (r < 0) {
			const char *e = ht_errno_name(-r);

			printf("rc=%d %s\n", r, e ? e : "?");
			return 1;
		}
		printf("rc=0 rounds=%u elapsed_ns=%" PRIu64 " rate=%.1f\n", rounds, ns, rate);
		return 0;
	}
	return usage();
}
