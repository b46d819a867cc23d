/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bootconf-dump - print what the readers of src/shared/bootconf.h find below a root, for
 * tests/bootconf-systemd.sh and for a person looking at a tree.
 *
 *   bootconf-dump ROOT               effective sysctl values, "key = value",
 *                                    sorted by key (keys a "-key" line leaves
 *                                    unset are left out, as systemd writes
 *                                    nothing for them)
 *   bootconf-dump --sysctl-all ROOT  every key with every assignment and the
 *                                    files, masks and problems
 *   bootconf-dump --modprobe ROOT    the same for modprobe.d
 *   bootconf-dump --modules ROOT     the same for modules-load.d
 *
 * Exit status: 0, 1 when the reader fails, 2 on a usage error.
 */
#include <stdio.h>
#include <string.h>

#include "shared/bootconf.h"

static void dump_all(const struct ht_conf *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		printf("file %s\n", c->files[i]);
	for (size_t i = 0; i < c->nmasked; i++)
		printf("masked %s\n", c->masked[i]);
	for (size_t i = 0; i < c->n; i++) {
		const struct ht_conf_key *k = &c->keys[i];

		printf("key %s%s\n", k->key, k->ignore_failure ? " (ignore failure)" : "");
		for (size_t j = 0; j < k->n; j++) {
			const struct ht_conf_assign *a = &k->assigns[j];

			printf("  %s:%u %s%s%s%s%s\n", a->file, a->line,
			       a->value ? "= " : "(no value)", a->value ? a->value : "",
			       a->ignore_failure ? " [-]" : "", a->pattern ? " via " : "",
			       a->pattern ? a->pattern : "");
		}
	}
	for (size_t i = 0; i < c->nproblems; i++)
		printf("problem %s: %s\n", ht_conf_problem_kind_name(c->problems[i].kind),
		       c->problems[i].message);
}

int main(int argc, char **argv)
{
	struct ht_conf c = { 0 };
	const char *mode = "", *root;
	int r;

	if (argc == 3 && argv[1][0] == '-') {
		mode = argv[1];
		root = argv[2];
	} else if (argc == 2) {
		root = argv[1];
	} else {
		fprintf(stderr, "usage: bootconf-dump [--sysctl-all|--modprobe|--modules] ROOT\n");
		return 2;
	}
	if (!*mode || strcmp(mode, "--sysctl-all") == 0) {
		r = ht_sysctl_conf_read(root, &c);
	} else if (strcmp(mode, "--modprobe") == 0) {
		r = ht_modprobe_conf_read(root, &c);
	} else if (strcmp(mode, "--modules") == 0) {
		r = ht_modules_load_read(root, &c);
	} else {
		fprintf(stderr, "bootconf-dump: unknown option %s\n", mode);
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "bootconf-dump: %s: %s\n", root, strerror(-r));
		return 1;
	}
	if (*mode) {
		dump_all(&c);
	} else {
		for (size_t i = 0; i < c.n; i++) {
			const struct ht_conf_assign *a = ht_conf_effective(&c.keys[i]);

			if (a->value)
				printf("%s = %s\n", c.keys[i].key, a->value);
		}
	}
	ht_conf_free(&c);
	return 0;
}
