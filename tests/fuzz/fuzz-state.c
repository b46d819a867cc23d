/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file reader: ht_revert() (persist/persist.h) on a private tree
 * whose var/lib/hosttune/state holds the input.
 *
 * Input: pieces separated by lines "%%": the state file, then the files
 * apply writes and the live values it sets, in the order of tree_files[]
 * (a missing piece: no such file). The tree lives in ROOT = WORK/state/root
 * and is emptied between runs.
 *
 * Properties: ht_revert() writes, creates, removes and opens nothing
 * outside ROOT (fuzz-common.c's guard sees every such call, and what each
 * open really reached), and nothing appears beside ROOT; a failure carries
 * a message; -ENOENT only when there is no state file (there always is);
 * -EBADMSG ("refused, nothing changed") leaves the tree as it was, byte for
 * byte; success removes the state file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "persist/persist.h"
#include "shared/fsutil.h"
#include "shared/util.h"

#include "fuzz-common.h"

static const char *const tree_files[] = {
	"/etc/sysctl.d/90-hosttune.conf",
	"/etc/modprobe.d/hosttune.conf",
	"/etc/modules-load.d/hosttune.conf",
	"/sys/module/nf_conntrack/parameters/hashsize",
	"/proc/sys/net/netfilter/nf_conntrack_max",
	"/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_time_wait",
	"/proc/sys/net/netfilter/nf_conntrack_buckets",
	"/etc/sysctl.conf",
};

/* The live keys the shipped rules set (ht_state_keys()): a state naming another is refused. */
static const char *const rule_keys[] = {
	"module.nf_conntrack.hashsize",
	"net.netfilter.nf_conntrack_max",
	"net.netfilter.nf_conntrack_tcp_timeout_time_wait",
	"nic.channels.combined",
};

static char parent[4096], root[4096];
static FILE *report;
static struct ht_paths keys;

/* The names in @dir other than "root", or NULL when there are none (caller frees). */
static char *strangers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *list = NULL;
	size_t len = 0;
	FILE *out;

	FZ_CHECK(d, "opendir %s", dir);
	out = open_memstream(&list, &len);
	FZ_CHECK(out, "open_memstream");
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "root"))
			fprintf(out, " %s", de->d_name);
	closedir(d);
	fclose(out);
	if (len == 0) {
		free(list);
		return NULL;
	}
	return list;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_part parts[1 + ARRAY_SIZE(tree_files)];
	struct ht_error err = { "" };
	char path[8192], *before, *after, *extra;
	size_t np;
	struct stat st;
	int r;

	if (size > 65536)
		return 0;
	if (!root[0]) {
		snprintf(parent, sizeof(parent), "%s/state", fz_workdir());
		snprintf(root, sizeof(root), "%s/root", parent);
		FZ_CHECK(mkdir(parent, 0700) == 0 && mkdir(root, 0755) == 0, "mkdir %s", root);
		report = fopen("/dev/null", "we");
		FZ_CHECK(report, "/dev/null");
		for (size_t i = 0; i < ARRAY_SIZE(rule_keys); i++)
			FZ_CHECK(ht_paths_add(&keys, rule_keys[i]) == 0, "out of memory");
	}
	fz_empty_dir(parent);
	FZ_CHECK(mkdir(root, 0755) == 0, "mkdir %s", root);

	np = fz_split((const char *)data, size, "%%", parts, ARRAY_SIZE(parts));
	snprintf(path, sizeof(path), "%s%s", root, HT_STATE_FILE);
	FZ_CHECK(fz_write_file(path, parts[0].p, parts[0].n) == 0, "cannot write %s", path);
	for (size_t i = 1; i < np; i++) {
		snprintf(path, sizeof(path), "%s%s", root, tree_files[i - 1]);
		FZ_CHECK(fz_write_file(path, parts[i].p, parts[i].n) == 0, "cannot write %s", path);
	}
	before = fz_tree_snapshot(root);

	fz_guard_begin(root, true);
	r = ht_revert(root, NULL, &keys, report, &err);
	fz_guard_end();

	extra = strangers(parent);
	FZ_CHECK(!extra, "revert left%s beside the root", extra);
	if (r < 0) {
		FZ_CHECK(err.msg[0], "ht_revert failed (%d) without a message", r);
		FZ_CHECK(r != -ENOENT, "ht_revert says there is no state file: %s", err.msg);
	}
	snprintf(path, sizeof(path), "%s%s", root, HT_STATE_FILE);
	if (r == 0)
		FZ_CHECK(lstat(path, &st) < 0 && errno == ENOENT, "revert succeeded, state file kept");
	if (r == -EBADMSG) {
		after = fz_tree_snapshot(root);
		FZ_CHECK(strcmp(before, after) == 0, "refused (%s), but the tree changed", err.msg);
		free(after);
	}
	free(before);
	return 0;
}
