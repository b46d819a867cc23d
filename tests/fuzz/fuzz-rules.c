/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rules and profile loader with --set (engine/rules.h), checked and
 * evaluated against a field host's facts.
 *
 * Input: pieces separated by lines "%%": a rules file (DIR/fuzz.rules), a
 * profile (DIR/profiles/fuzz.profile), then --set arguments, one a line.
 *
 * Properties: a failure carries a message; a malformed file's names its
 * place, "FILE:LINE:" of the rules file or the profile; a refused --set
 * names the argument ("--set ..."); the loaders write nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/facts.h"
#include "engine/rules.h"
#include "shared/util.h"

#include "fuzz-common.h"

static char dir[4096], rules_path[4096], profile_path[4096];
static struct ht_facts *facts;

/* A failure of a stage that reads a file: a message naming rules or profile, line first. */
static void check_file_error(const char *stage, int r, const struct ht_error *err)
{
	FZ_CHECK(err->msg[0], "%s failed (%d) without a message", stage, r);
	if (r == -EINVAL)
		FZ_CHECK(fz_has_place(err->msg, rules_path) || fz_has_place(err->msg, profile_path),
		         "%s: no FILE:LINE: in '%s'", stage, err->msg);
}

static void load_facts(void)
{
	char path[4096];
	struct ht_error err = { "" };
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/fixtures/registry-worker/host.facts", FUZZ_SRCDIR);
	facts = ht_facts_new();
	f = fopen(path, "re");
	FZ_CHECK(facts && f, "cannot read %s", path);
	FZ_CHECK(ht_facts_read(facts, f, path, &err) == 0, "%s", err.msg);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_part parts[3];
	struct ht_ruleset *rs = NULL;
	struct ht_findings fs = { 0 };
	struct ht_error err = { "" };
	const char *dirs[1];
	char *sets = NULL;
	size_t np;
	int r;

	if (size > 131072)
		return 0;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/rules", fz_workdir());
		snprintf(rules_path, sizeof(rules_path), "%s/fuzz.rules", dir);
		snprintf(profile_path, sizeof(profile_path), "%s/profiles/fuzz.profile", dir);
		load_facts();
	}
	np = fz_split((const char *)data, size, "%%", parts, ARRAY_SIZE(parts));
	FZ_CHECK(fz_write_file(rules_path, parts[0].p, parts[0].n) == 0, "write %s", rules_path);
	FZ_CHECK(fz_write_file(profile_path, np > 1 ? parts[1].p : "", np > 1 ? parts[1].n : 0) == 0,
	         "write %s", profile_path);
	dirs[0] = dir;

	fz_guard_begin(dir, false);
	r = ht_ruleset_load(dirs, 1, &rs, &err);
	if (r < 0) {
		check_file_error("ht_ruleset_load", r, &err);
		goto out;
	}
	r = ht_ruleset_load_profile(rs, "fuzz", &err);
	if (r < 0) {
		check_file_error("ht_ruleset_load_profile", r, &err);
		goto out;
	}
	if (np > 2) {
		char *line, *save = NULL;

		sets = fz_part_str(&parts[2]);
		for (line = strtok_r(sets, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			err.msg[0] = '\0';
			r = ht_ruleset_set_var(rs, line, &err);
			if (r < 0) {
				FZ_CHECK(err.msg[0], "--set failed (%d) without a message", r);
				if (r == -EINVAL)
					FZ_CHECK(strncmp(err.msg, "--set ", 6) == 0,
					         "--set error does not name the argument: '%s'",
					         err.msg);
			}
		}
	}
	err.msg[0] = '\0';
	r = ht_ruleset_check(rs, &err);
	if (r < 0) {
		check_file_error("ht_ruleset_check", r, &err);
		goto out;
	}
	err.msg[0] = '\0';
	r = ht_ruleset_evaluate(rs, facts, &fs, &err);
	if (r < 0) {
		check_file_error("ht_ruleset_evaluate", r, &err);
		goto out;
	}
	for (size_t i = 0; i < fs.n; i++) {
		const struct ht_finding *f = &fs.items[i];

		FZ_CHECK(f->rule && (!f->applicable || f->explanation),
		         "an applicable finding without an explanation");
		FZ_CHECK(f->applicable || f->reason, "a finding not applicable without a reason");
	}
	for (size_t i = 0; i < ht_ruleset_rule_count(rs); i++) {
		struct ht_value v = { 0 };

		err.msg[0] = '\0';
		r = ht_ruleset_value(rs, ht_rule_id(ht_ruleset_rule_at(rs, i)), &v, &err);
		FZ_CHECK(r == 0 || r == -ENOENT || err.msg[0], "ht_ruleset_value failed (%d) silently",
		         r);
		ht_value_clear(&v);
	}
out:
	fz_guard_end();
	ht_findings_free(&fs);
	ht_ruleset_free(rs);
	free(sets);
	return 0;
}
