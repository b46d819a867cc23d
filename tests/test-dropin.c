/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "engine/facts.h"
#include "engine/rules.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"
#include "shared/util.h"
#include "test-util.h"

/*
 * The plan of a limit nofile finding (persist.h): the systemd drop-in
 * /etc/systemd/system/UNIT.d/90-hosttune.conf, from a rule and facts made
 * here, against a --root tree made here. The content is spelled out in full:
 * the template's text, the rule's comment and LimitNOFILE=SOFT:HARD.
 */

struct fx {
	char *dir;   /* scratch: rules/ and root/ */
	char *rules;
	char *root;
	struct ht_ruleset *rs;
	struct ht_facts *facts;
	struct ht_findings fd;
	struct ht_plan plan;
	struct ht_error err;
};

static const char rules[] =
	"[nofile.test]\n"
	"title = open files of a storage service\n"
	"each = process\n"
	"target = limit nofile\n"
	"value = 42000\n"
	"severity = process.nofile < 42000 ? \"warning\" : \"ok\"\n"
	"explain = {process.name}: {process.nofile}\n";

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *dirs[1];

	assert_non_null(fx);
	fx->dir = ht_test_tmp_dir("ht-dropin");
	assert_true(asprintf(&fx->rules, "%s/rules", fx->dir) > 0);
	assert_true(asprintf(&fx->root, "%s/root", fx->dir) > 0);
	assert_int_equal(mkdir(fx->root, 0755), 0);
	ht_test_put_file(fx->rules, "a.rules", rules);
	dirs[0] = fx->rules;
	assert_int_equal(ht_ruleset_load(dirs, 1, &fx->rs, &fx->err), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), 0);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	ht_plan_free(&fx->plan);
	ht_findings_free(&fx->fd);
	ht_ruleset_free(fx->rs);
	ht_facts_free(fx->facts);
	ht_test_rm_tree(fx->dir);
	free(fx->dir);
	free(fx->rules);
	free(fx->root);
	free(fx);
	return 0;
}

static void fact_str(struct fx *fx, const char *name, const char *s)
{
	struct ht_value v = { .type = HT_T_STR, .s = (char *)s };

	assert_int_equal(ht_facts_set(fx->facts, name, &v, NULL, NULL), 0);
}

/* One process NAME with soft limit @soft, hard @hard and unit @unit (NULL: none). */
static void process(struct fx *fx, const char *name, int64_t soft, int64_t hard,
                    const char *unit)
{
	_cleanup_free_ char *n = NULL;

	assert_true(asprintf(&n, "process.%s.nofile", name) > 0);
	ht_test_fact_int(fx->facts, n, soft);
	free(n);
	assert_true(asprintf(&n, "process.%s.nofile_hard", name) > 0);
	ht_test_fact_int(fx->facts, n, hard);
	free(n);
	assert_true(asprintf(&n, "process.%s.fds", name) > 0);
	ht_test_fact_int(fx->facts, n, 40);
	free(n);
	n = NULL;
	if (unit) {
		assert_true(asprintf(&n, "process.%s.unit", name) > 0);
		fact_str(fx, n, unit);
	}
}

static void plan(struct fx *fx)
{
	int r;

	ht_plan_free(&fx->plan);
	ht_findings_free(&fx->fd);
	assert_int_equal(ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err), 0);
	r = ht_plan_build(&fx->fd, fx->facts, fx->root, "garage", NULL,
	                  HT_PLAN_PERSIST | HT_PLAN_LIVE, &fx->plan, &fx->err);
	if (r < 0)
		print_error("plan: %s\n", fx->err.msg);
	assert_int_equal(r, 0);
}

static const struct ht_plan_file *planned(const struct fx *fx, const char *path)
{
	for (size_t i = 0; i < fx->plan.nfiles; i++)
		if (strcmp(fx->plan.files[i].path, path) == 0)
			return &fx->plan.files[i];
	return NULL;
}

#define GARAGE_DROPIN "/etc/systemd/system/garage.service.d/90-hosttune.conf"

/* The drop-in for SOFT:HARD, as the template renders it for garage.service. */
#define DROPIN(value)                                                                    \
	"# This file is managed by hosttune (profile garage).\n"                           \
	"# `hosttune apply` rewrites it and `hosttune revert` removes it; change the\n"   \
	"# profile or hosttune's rules.d instead of editing it. systemd reads it at\n"    \
	"# `systemctl daemon-reload`; the process gets the limit when garage.service\n"   \
	"# is restarted. The hard limit is never lowered.\n"                              \
	"[Service]\n"                                                                      \
	"# nofile.test[garage]: open files of a storage service\n"                         \
	"LimitNOFILE=" value "\n"

static void test_dropin_content(void **state)
{
	struct fx *fx = *state;
	const struct ht_plan_file *f;

	/* systemd's default hard limit (>= 240) is higher than 42000: it stays. */
	fact_str(fx, "process.list", "garage");
	process(fx, "garage", 1024, 524288, "garage.service");
	plan(fx);
	assert_int_equal(fx->plan.nfiles, 1);
	f = planned(fx, GARAGE_DROPIN);
	assert_non_null(f);
	assert_null(f->old);
	assert_false(f->foreign);
	assert_string_equal(f->new, DROPIN("42000:524288"));
	/* No live write: the service is restarted instead. */
	assert_int_equal(fx->plan.nlive, 0);
	assert_int_equal(fx->plan.nrestart, 1);
	assert_string_equal(fx->plan.restart[0], "garage.service");
	assert_int_equal(fx->plan.nskipped, 0);
	assert_int_equal(fx->plan.nwarnings, 0);
	assert_false(ht_plan_empty(&fx->plan));

	/* A hard limit below the recommendation is raised to it: 42000:42000. */
	process(fx, "garage", 1024, 4096, "garage.service");
	plan(fx);
	assert_string_equal(planned(fx, GARAGE_DROPIN)->new, DROPIN("42000:42000"));
}

static void test_dropin_second_apply(void **state)
{
	struct fx *fx = *state;

	fact_str(fx, "process.list", "garage");
	process(fx, "garage", 1024, 524288, "garage.service");
	ht_test_put_file(fx->root, GARAGE_DROPIN + 1, DROPIN("42000:524288"));
	plan(fx);
	/* The file is as wanted: nothing to change, but the process still runs at 1024. */
	assert_true(ht_plan_empty(&fx->plan));
	assert_int_equal(fx->plan.nrestart, 1);
	assert_string_equal(fx->plan.restart[0], "garage.service");

	/* A later drop-in lowers it: a restart would not help, the warning says what does. */
	ht_test_put_file(fx->root, "etc/systemd/system/garage.service.d/99-local.conf",
	         "[Service]\nLimitNOFILE=1024\n");
	plan(fx);
	assert_int_equal(fx->plan.nwarnings, 1);
	assert_int_equal(fx->plan.nrestart, 0);
	{
		_cleanup_free_ char *p = NULL;

		assert_true(asprintf(&p, "%s/etc/systemd/system/garage.service.d/99-local.conf",
		                     fx->root) > 0);
		assert_int_equal(unlink(p), 0);
	}

	/* Restarted: 42000 now, the finding ok, the file stays (it is what gives 42000). */
	process(fx, "garage", 42000, 524288, "garage.service");
	plan(fx);
	assert_true(ht_plan_empty(&fx->plan));
	assert_int_equal(fx->plan.nfiles, 1);
	assert_string_equal(fx->plan.files[0].new, DROPIN("42000:524288"));
	assert_int_equal(fx->plan.nrestart, 0);
}

static void test_dropin_refused_units(void **state)
{
	struct fx *fx = *state;

	fact_str(fx, "process.list", "evil loose");
	process(fx, "evil", 1024, 524288, "../../x.service");
	process(fx, "loose", 1024, 524288, NULL);
	plan(fx);
	assert_int_equal(fx->plan.nfiles, 0);
	assert_int_equal(fx->plan.nrestart, 0);
	assert_int_equal(fx->plan.nskipped, 2);
	assert_string_equal(fx->plan.skipped[0].key, "process.evil.nofile");
	assert_string_equal(fx->plan.skipped[0].message,
	                    "process.evil.unit = '../../x.service' is not a service name hosttune "
	                    "writes a drop-in for ([A-Za-z0-9:_.@\\-] ending in .service, no '/'): "
	                    "nothing written");
	assert_string_equal(fx->plan.skipped[1].key, "process.loose.nofile");
	assert_string_equal(fx->plan.skipped[1].message,
	                    "loose runs outside a systemd service (process.loose.unit "
	                    "unavailable): no drop-in to write; raise its limit where it is "
	                    "started");
	/* Nothing of the kind is a file hosttune writes either. */
	assert_false(ht_managed_file("/etc/systemd/system/../../x.service.d/90-hosttune.conf"));
	assert_false(ht_managed_file("/etc/systemd/system/a/b.service.d/90-hosttune.conf"));
	assert_false(ht_managed_file("/etc/systemd/system/garage.socket.d/90-hosttune.conf"));
	assert_false(ht_managed_file("/etc/systemd/system/garage.service.d/99-hosttune.conf"));
	assert_false(ht_managed_file("/etc/systemd/system/.service.d/90-hosttune.conf"));
	assert_true(ht_managed_file(GARAGE_DROPIN));
	assert_true(ht_managed_file(GARAGE_DROPIN ".hosttune-orig"));
	assert_true(ht_managed_file("/etc/systemd/system/minio@a-1.service.d/90-hosttune.conf"));
	assert_true(ht_managed_dir("/etc/systemd/system/garage.service.d"));
	assert_true(ht_managed_dir("/etc/systemd/system"));
	assert_false(ht_managed_dir("/etc/systemd/system/x/y.service.d"));
	assert_false(ht_managed_dir("/etc/systemd/system/garage.service"));
}

static void test_dropin_removed_and_overridden(void **state)
{
	struct fx *fx = *state;
	const struct ht_plan_file *f;

	fact_str(fx, "process.list", "garage");
	process(fx, "garage", 1024, 524288, "garage.service");
	/* hosttune's drop-in for a service no finding names any more: removed. */
	ht_test_put_file(fx->root, "etc/systemd/system/old.service.d/90-hosttune.conf",
	         "# This file is managed by hosttune (profile garage).\n[Service]\n"
	         "LimitNOFILE=42000:524288\n");
	/* The same name without hosttune's header: not ours, left alone. */
	ht_test_put_file(fx->root, "etc/systemd/system/other.service.d/90-hosttune.conf",
	         "[Service]\nLimitNOFILE=5000\n");
	/* A later drop-in that lowers it; an earlier one and a higher later one do not. */
	ht_test_put_file(fx->root, "etc/systemd/system/garage.service.d/10-early.conf",
	         "[Service]\nLimitNOFILE=1024\n");
	ht_test_put_file(fx->root, "usr/lib/systemd/system/garage.service.d/95-high.conf",
	         "[Service]\nLimitNOFILE=100000:1048576\n");
	ht_test_put_file(fx->root, "run/systemd/system/garage.service.d/99-override.conf",
	         "[Service]\n# local\nLimitNOFILE=1024\n");
	plan(fx);
	assert_int_equal(fx->plan.nfiles, 2);
	assert_non_null(planned(fx, GARAGE_DROPIN));
	f = planned(fx, "/etc/systemd/system/old.service.d/90-hosttune.conf");
	assert_non_null(f);
	assert_null(f->new);
	assert_null(planned(fx, "/etc/systemd/system/other.service.d/90-hosttune.conf"));
	/* garage.service's drop-in is overridden: a restart would not give it, no restart. */
	assert_int_equal(fx->plan.nrestart, 1);
	assert_string_equal(fx->plan.restart[0], "old.service");
	assert_int_equal(fx->plan.nwarnings, 1);
	assert_string_equal(fx->plan.warnings[0].key, "process.garage.nofile");
	assert_string_equal(fx->plan.warnings[0].source,
	                    "/run/systemd/system/garage.service.d/99-override.conf:3");
	/* In /run (emptied at boot): it wins now, not after a reboot. */
	assert_true(fx->plan.warnings[0].until_reboot);
	assert_string_equal(fx->plan.warnings[0].message,
	                    "LimitNOFILE=42000:524288 in " GARAGE_DROPIN " is overridden now: "
	                    "/run/systemd/system/garage.service.d/99-override.conf:3 sets "
	                    "LimitNOFILE=1024 and is applied later; /run is emptied at boot, so "
	                    "hosttune's value holds after the next reboot, not at a restart before "
	                    "it; remove that file (or its line) to have it sooner");

	/* The same file in /etc: it will not hold at boot either. */
	ht_test_put_file(fx->root, "etc/systemd/system/garage.service.d/99-override.conf",
	         "[Service]\n# local\nLimitNOFILE=1024\n");
	plan(fx);
	assert_int_equal(fx->plan.nwarnings, 1);
	assert_false(fx->plan.warnings[0].until_reboot);
	assert_string_equal(fx->plan.warnings[0].message,
	                    "LimitNOFILE=42000:524288 in " GARAGE_DROPIN " will not hold: "
	                    "/etc/systemd/system/garage.service.d/99-override.conf:3 sets "
	                    "LimitNOFILE=1024 and is applied later (systemd applies the drop-ins "
	                    "of garage.service in file-name order across directories, the last "
	                    "value wins); edit or remove that line");
	assert_int_equal(fx->plan.nrestart, 1);
	{
		_cleanup_free_ char *p = NULL;

		assert_true(asprintf(&p, "%s/etc/systemd/system/garage.service.d/99-override.conf",
		                     fx->root) > 0);
		assert_int_equal(unlink(p), 0);
	}

	/* An empty LimitNOFILE= resets nothing (systemd ignores it): no warning from it. */
	ht_test_put_file(fx->root, "run/systemd/system/garage.service.d/99-override.conf",
	         "[Service]\nLimitNOFILE=\n");
	plan(fx);
	assert_int_equal(fx->plan.nwarnings, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dropin_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_second_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_refused_units, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropin_removed_and_overridden, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
