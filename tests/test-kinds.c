/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "engine/fix.h"
#include "engine/rules.h"
#include "persist/kind.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"
#include "shared/util.h"

/*
 * The table of target kinds (persist/kind.h): its rows, each kind's line,
 * live path, files and directories, and the fix the plan makes for a
 * finding of each kind (the one source of audit's fix lines).
 */

/* ---- the table alone ---- */

static void test_rows(void **state)
{
	(void)state;
	/* A row for each kind hosttune writes; advice and named values have none. */
	assert_ptr_equal(ht_kind_of(HT_TARGET_SYSCTL), &ht_kind_sysctl);
	assert_ptr_equal(ht_kind_of(HT_TARGET_MODULE), &ht_kind_module);
	assert_ptr_equal(ht_kind_of(HT_TARGET_CHANNELS), &ht_kind_channels);
	assert_ptr_equal(ht_kind_of(HT_TARGET_LIMIT), &ht_kind_limit);
	assert_null(ht_kind_of(HT_TARGET_ADVICE));
	assert_null(ht_kind_of(HT_TARGET_NONE));
	for (size_t i = 0; i < HT_NKINDS; i++) {
		const struct ht_kind *k = ht_kinds[i];

		/* What the plan, apply and revert call on every row. */
		assert_non_null(k->setting);
		assert_non_null(k->fix);
		assert_non_null(k->files);
		assert_non_null(k->line);
		assert_non_null(k->managed_file);
		assert_non_null(k->dirs);
		assert_non_null(k->dirs[0]);
		/* A live value is a path or a write, never both (a limit has neither: a restart). */
		assert_false(k->live && k->live_path);
		/* A directory per instance comes with the test of which one it is. */
		assert_int_equal(k->dir_per_instance, k->instance_dir != NULL);
		/* A boot value is read and keyed together. */
		assert_int_equal(k->boot_read != NULL, k->boot_key != NULL);
		/* The one file of a kind is its own, in the first of its directories. */
		if (k->file) {
			size_t dl = strlen(k->dirs[0]);

			assert_true(k->managed_file(k->file));
			assert_int_equal(strncmp(k->file, k->dirs[0], dl), 0);
			assert_int_equal(k->file[dl], '/');
			assert_null(strchr(k->file + dl + 1, '/'));
		}
	}
	/* The kinds with one file are read first, sysctl.d before modprobe.d. */
	assert_ptr_equal(ht_kinds[0], &ht_kind_sysctl);
	assert_ptr_equal(ht_kinds[1], &ht_kind_module);
	assert_null(ht_kind_channels.file);
	assert_null(ht_kind_limit.file);
}

/* Each kind's line, and that its line of "" is what precedes the value (how its file is read). */
static void test_lines(void **state)
{
	static const struct {
		const struct ht_kind *k;
		const char *target, *value, *line;
	} c[] = {
		{ &ht_kind_sysctl, "net.core.somaxconn", "4096", "net.core.somaxconn = 4096" },
		{ &ht_kind_module, "module.nf_conntrack.hashsize", "65536",
		  "options nf_conntrack hashsize=65536" },
		{ &ht_kind_channels, "nic.channels.combined", "4", "CombinedChannels=4" },
		{ &ht_kind_channels, "nic.channels.rx", "2", "RxChannels=2" },
		{ &ht_kind_channels, "nic.channels.tx", "2", "TxChannels=2" },
		{ &ht_kind_limit, "process.nofile", "42000:524288", "LimitNOFILE=42000:524288" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		_cleanup_free_ char *line = c[i].k->line(c[i].target, c[i].value);
		_cleanup_free_ char *prefix = c[i].k->line(c[i].target, "");

		assert_non_null(line);
		assert_non_null(prefix);
		assert_string_equal(line, c[i].line);
		assert_int_equal(strncmp(line, prefix, strlen(prefix)), 0);
		assert_string_equal(line + strlen(prefix), c[i].value);
	}
	/* module.MODULE.PARAM or nothing. */
	assert_null(ht_kind_module.line("module.nf_conntrack", "1"));
	assert_null(ht_kind_module.line("module..hashsize", "1"));
}

static void expect_live_path(const char *key, const struct ht_kind *kind, const char *path)
{
	const struct ht_kind *k = ht_kind_of_live_key(key);
	_cleanup_free_ char *p = NULL;

	assert_ptr_equal(k, kind);
	p = k->live_path(key);
	if (path) {
		assert_non_null(p);
		assert_string_equal(p, path);
	} else
		assert_null(p);
}

/* Live keys: module.* are module parameters, every other path key a sysctl. */
static void test_live(void **state)
{
	(void)state;
	expect_live_path("net.netfilter.nf_conntrack_max", &ht_kind_sysctl,
	                 "/proc/sys/net/netfilter/nf_conntrack_max");
	expect_live_path("net.ipv4.tcp_tw_reuse", &ht_kind_sysctl, "/proc/sys/net/ipv4/tcp_tw_reuse");
	expect_live_path("module.nf_conntrack.hashsize", &ht_kind_module,
	                 "/sys/module/nf_conntrack/parameters/hashsize");
	/* A module key without a parameter names no file, nor does an empty key. */
	expect_live_path("module.nf_conntrack", &ht_kind_module, NULL);
	expect_live_path("", &ht_kind_sysctl, NULL);
	/* Channels are written over netlink: no path, a key of their own. */
	assert_null(ht_kind_channels.live_path);
	assert_non_null(ht_kind_channels.live);
	{
		_cleanup_free_ char *k = ht_channels_key("eth0", "combined");

		assert_string_equal(k, "nic.eth0.channels.combined");
	}
	assert_true(ht_channel_valid("combined"));
	assert_true(ht_channel_valid("rx"));
	assert_true(ht_channel_valid("tx"));
	assert_false(ht_channel_valid("other"));
	assert_false(ht_channel_valid(""));
	/* The limit takes effect at a restart: no live value at all. */
	assert_null(ht_kind_limit.live_path);
	assert_null(ht_kind_limit.live);
	/* Boot values: sysctl.d names the key, modprobe.d MODULE.PARAM. */
	assert_string_equal(ht_kind_sysctl.boot_key("net.core.somaxconn"), "net.core.somaxconn");
	assert_string_equal(ht_kind_module.boot_key("module.nf_conntrack.hashsize"),
	                    "nf_conntrack.hashsize");
	assert_null(ht_kind_channels.boot_read);
	assert_null(ht_kind_limit.boot_read);
}

/* Each file of hosttune's is one kind's, and its directories are ones hosttune may create. */
static void test_files(void **state)
{
	static const struct {
		const char *path;
		const struct ht_kind *k;
	} c[] = {
		{ "/etc/sysctl.d/90-hosttune.conf", &ht_kind_sysctl },
		{ "/etc/modprobe.d/hosttune.conf", &ht_kind_module },
		{ "/etc/modules-load.d/hosttune.conf", &ht_kind_module },
		{ "/etc/systemd/network/90-hosttune-eth0.link", &ht_kind_channels },
		{ "/etc/systemd/system/garage.service.d/90-hosttune.conf", &ht_kind_limit },
		{ "/etc/sysctl.d/99-sysctl.conf", NULL },
		{ "/etc/systemd/network/10-eth0.link", NULL },
		{ "/etc/systemd/system/garage.service.d/99-local.conf", NULL },
		{ "/etc/systemd/system/garage.socket.d/90-hosttune.conf", NULL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		size_t claims = 0;

		for (size_t k = 0; k < HT_NKINDS; k++)
			claims += ht_kinds[k]->managed_file(c[i].path);
		/* One kind claims each of hosttune's files, none any other file. */
		assert_int_equal(claims, c[i].k ? 1 : 0);
		assert_ptr_equal(ht_kind_of_file(c[i].path), c[i].k);
		assert_int_equal(ht_managed_file(c[i].path), c[i].k != NULL);
	}
	/* Every kind's directory, and the directories above it but "/". */
	for (size_t k = 0; k < HT_NKINDS; k++)
		for (size_t i = 0; ht_kinds[k]->dirs[i]; i++)
			assert_true(ht_managed_dir(ht_kinds[k]->dirs[i]));
	assert_true(ht_managed_dir("/etc"));
	assert_true(ht_managed_dir("/etc/systemd"));
	assert_false(ht_managed_dir("/"));
	assert_false(ht_managed_dir("/etc/"));
	assert_false(ht_managed_dir("/etc/sysctl"));
	/* The state file's directories, not the file itself. */
	assert_true(ht_managed_dir("/var"));
	assert_true(ht_managed_dir("/var/lib/hosttune"));
	assert_false(ht_managed_dir(HT_STATE_FILE));
	/* A service's own directory for its drop-in, for a service name only. */
	assert_true(ht_managed_dir("/etc/systemd/system/garage.service.d"));
	assert_false(ht_managed_dir("/etc/systemd/system/garage.socket.d"));
	assert_false(ht_managed_dir("/etc/systemd/network/garage.service.d"));
}

/* ---- the fixes a plan makes ---- */

struct fx {
	char *dir; /* scratch: rules/ and root/ */
	char *rules;
	char *root;
	struct ht_ruleset *rs;
	struct ht_facts *facts;
	struct ht_findings fd;
	struct ht_plan plan;
	struct ht_error err;
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Writes @text to @dir/@rel, making the directories on the way. */
static void put_file(const char *dir, const char *rel, const char *text)
{
	_cleanup_free_ char *p = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);

	assert_true(asprintf(&p, "%s/%s", dir, rel) > 0);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) < 0)
			assert_int_equal(errno, EEXIST);
		*s = '/';
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
}

/* A rule of each kind hosttune writes, and advice: every one asks for a change. */
static const char rules[] =
	"[k.sysctl]\n"
	"target = sysctl net.core.somaxconn\n"
	"value = 4096\n"
	"severity = \"warning\"\n"
	"explain = somaxconn\n"
	"\n"
	"[k.module]\n"
	"target = module nf_conntrack hashsize\n"
	"value = 65536\n"
	"severity = \"warning\"\n"
	"explain = hashsize\n"
	"\n"
	"[k.channels]\n"
	"each = nic\n"
	"target = channels combined\n"
	"value = 4\n"
	"severity = \"warning\"\n"
	"explain = queues\n"
	"\n"
	"[k.limit]\n"
	"each = process\n"
	"target = limit nofile\n"
	"value = 42000\n"
	"severity = process.nofile < 42000 ? \"warning\" : \"ok\"\n"
	"explain = nofile\n"
	"\n"
	"[k.advice]\n"
	"target = advice\n"
	"severity = \"info\"\n"
	"explain = advice\n";

static void fact_int(struct fx *fx, const char *name, int64_t i)
{
	struct ht_value v = ht_int(i);

	assert_int_equal(ht_facts_set(fx->facts, name, &v, NULL, NULL), 0);
}

static void fact_str(struct fx *fx, const char *name, const char *s)
{
	struct ht_value v = { .type = HT_T_STR, .s = (char *)s };

	assert_int_equal(ht_facts_set(fx->facts, name, &v, NULL, NULL), 0);
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");
	struct fx *fx = calloc(1, sizeof(*fx));
	const char *dirs[1];

	assert_non_null(fx);
	assert_true(asprintf(&fx->dir, "%s/ht-kinds-XXXXXX", t && *t ? t : "/tmp") > 0);
	assert_non_null(mkdtemp(fx->dir));
	assert_true(asprintf(&fx->rules, "%s/rules", fx->dir) > 0);
	assert_true(asprintf(&fx->root, "%s/root", fx->dir) > 0);
	assert_int_equal(mkdir(fx->root, 0755), 0);
	put_file(fx->rules, "a.rules", rules);
	dirs[0] = fx->rules;
	assert_int_equal(ht_ruleset_load(dirs, 1, &fx->rs, &fx->err), 0);
	assert_int_equal(ht_ruleset_check(fx->rs, &fx->err), 0);
	fx->facts = ht_facts_new();
	assert_non_null(fx->facts);
	/* Every value below the recommendation: each finding asks for a change. */
	fact_int(fx, "net.core.somaxconn", 128);
	fact_int(fx, "module.nf_conntrack.hashsize", 16384);
	fact_str(fx, "conntrack.module", "module");
	fact_str(fx, "nic.list", "eth0");
	fact_int(fx, "nic.eth0.channels.combined", 1);
	fact_str(fx, "process.list", "garage");
	fact_int(fx, "process.garage.nofile", 1024);
	fact_int(fx, "process.garage.nofile_hard", 524288);
	fact_int(fx, "process.garage.fds", 40);
	fact_str(fx, "process.garage.unit", "garage.service");
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
	assert_int_equal(nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	free(fx->dir);
	free(fx->rules);
	free(fx->root);
	free(fx);
	return 0;
}

static void plan(struct fx *fx, unsigned flags)
{
	int r;

	ht_plan_free(&fx->plan);
	ht_findings_free(&fx->fd);
	assert_int_equal(ht_ruleset_evaluate(fx->rs, fx->facts, &fx->fd, &fx->err), 0);
	r = ht_plan_build(&fx->fd, fx->facts, fx->root, "default", NULL, flags, &fx->plan,
	                  &fx->err);
	if (r < 0)
		print_error("plan: %s\n", fx->err.msg);
	assert_int_equal(r, 0);
	/* One fix per finding, in the findings' order. */
	assert_int_equal(fx->plan.nfixes, fx->fd.n);
}

/* The fix of rule @id's finding. */
static const struct ht_fix *fix_of(const struct fx *fx, const char *id)
{
	for (size_t i = 0; i < fx->fd.n; i++)
		if (strcmp(ht_rule_id(fx->fd.items[i].rule), id) == 0)
			return &fx->plan.fixes[i];
	fail_msg("no finding of %s", id);
	return NULL;
}

static void test_fixes(void **state)
{
	struct fx *fx = *state;
	const struct ht_fix *f;

	/* The fixes alone, as audit builds them: no file, no live value. */
	plan(fx, 0);
	/* Five rules, one interface, one process: five findings. */
	assert_int_equal(fx->fd.n, 5);
	assert_int_equal(fx->plan.nfiles, 0);
	assert_int_equal(fx->plan.nlive, 0);
	assert_int_equal(fx->plan.nrestart, 0);

	f = fix_of(fx, "k.sysctl");
	assert_int_equal(f->kind, HT_FIX_FILE);
	assert_string_equal(f->file, "/etc/sysctl.d/90-hosttune.conf");
	assert_string_equal(f->line, "net.core.somaxconn = 4096");
	assert_string_equal(f->live, "/proc/sys/net/core/somaxconn");
	assert_false(f->live_absent);
	assert_null(f->restart);

	f = fix_of(fx, "k.module");
	assert_int_equal(f->kind, HT_FIX_FILE);
	assert_string_equal(f->file, "/etc/modprobe.d/hosttune.conf");
	assert_string_equal(f->line, "options nf_conntrack hashsize=65536");
	assert_string_equal(f->live, "/sys/module/nf_conntrack/parameters/hashsize");
	assert_null(f->cmdline);

	f = fix_of(fx, "k.channels");
	assert_int_equal(f->kind, HT_FIX_FILE);
	assert_string_equal(f->file, "/etc/systemd/network/90-hosttune-eth0.link");
	assert_string_equal(f->line, "[Link] CombinedChannels=4");
	assert_string_equal(f->live, "ethtool netlink CHANNELS_SET eth0 combined 4 "
	                             "(ethtool -L eth0 combined 4)");

	/* The hard limit 524288 is above 42000: it stays, SOFT:HARD = 42000:524288. */
	f = fix_of(fx, "k.limit");
	assert_int_equal(f->kind, HT_FIX_DROPIN);
	assert_string_equal(f->file, "/etc/systemd/system/garage.service.d/90-hosttune.conf");
	assert_string_equal(f->line, "[Service] LimitNOFILE=42000:524288");
	assert_string_equal(f->restart, "garage.service");
	assert_null(f->live);

	/* Advice: nothing of hosttune's can fix it. */
	assert_int_equal(fix_of(fx, "k.advice")->kind, HT_FIX_NONE);

	/* The same fixes from a plan that writes: one source whatever the flags. */
	plan(fx, HT_PLAN_PERSIST | HT_PLAN_LIVE);
	assert_string_equal(fix_of(fx, "k.sysctl")->line, "net.core.somaxconn = 4096");
	assert_string_equal(fix_of(fx, "k.limit")->line, "[Service] LimitNOFILE=42000:524288");
	/*
	 * 5 files: sysctl.d, modprobe.d, modules-load.d (nf_conntrack is a
	 * module whose hashsize hosttune sets), the .link of eth0, garage's drop-in.
	 */
	assert_int_equal(fx->plan.nfiles, 5);
}

/* A built-in nf_conntrack: the kernel command line, no modprobe.d line. */
static void test_fix_builtin(void **state)
{
	struct fx *fx = *state;
	const struct ht_fix *f;

	fact_str(fx, "conntrack.module", "builtin");
	plan(fx, 0);
	f = fix_of(fx, "k.module");
	assert_int_equal(f->kind, HT_FIX_CMDLINE);
	assert_null(f->file);
	assert_null(f->line);
	assert_string_equal(f->cmdline, "nf_conntrack.hashsize=65536");
	assert_string_equal(f->live, "/sys/module/nf_conntrack/parameters/hashsize");
}

/* The unit's own files give enough (65536 >= 42000): a restart, no drop-in; unless no disk. */
static void test_fix_unit_gives(void **state)
{
	struct fx *fx = *state;
	const struct ht_fix *f;

	/* Line 2 of the unit file: "[Service]" is line 1. */
	put_file(fx->root, "etc/systemd/system/garage.service", "[Service]\nLimitNOFILE=65536\n");
	plan(fx, 0);
	f = fix_of(fx, "k.limit");
	assert_int_equal(f->kind, HT_FIX_UNIT_GIVES);
	assert_null(f->file);
	assert_string_equal(f->source, "/etc/systemd/system/garage.service:2");
	assert_int_equal(f->given, 65536);
	assert_string_equal(f->line, "LimitNOFILE=65536");
	assert_string_equal(f->restart, "garage.service");

	/* Another host's facts: its unit files are not here, the drop-in stays the fix. */
	plan(fx, HT_PLAN_NO_DISK);
	assert_int_equal(fix_of(fx, "k.limit")->kind, HT_FIX_DROPIN);
}

/* A process outside a service: no drop-in, the reason instead. */
static void test_fix_none_here(void **state)
{
	struct fx *fx = *state;
	const struct ht_fix *f;

	assert_int_equal(ht_facts_set_unavailable(fx->facts, "process.garage.unit", ENOENT, NULL,
	                                          NULL), 0);
	plan(fx, 0);
	f = fix_of(fx, "k.limit");
	assert_int_equal(f->kind, HT_FIX_NONE_HERE);
	assert_string_equal(f->reason, "garage runs outside a systemd service (process.garage.unit "
	                    "unavailable): no drop-in to write; raise its limit where it is "
	                    "started");
	assert_null(f->file);
	assert_null(f->restart);
}

/* The value in hosttune's file is found after the kind's line of "" (ht_file_value()). */
static void test_file_value(void **state)
{
	struct fx *fx = *state;

	plan(fx, 0);
	for (size_t i = 0; i < fx->fd.n; i++) {
		const struct ht_finding *f = &fx->fd.items[i];
		const struct ht_kind *k = ht_kind_of(ht_rule_kind(f->rule));
		struct ht_setting s = { .f = f, .kind = k };
		_cleanup_free_ char *line = NULL, *content = NULL, *v = NULL, *none = NULL;

		if (!k)
			continue;
		line = k->line(ht_rule_target(f->rule), "1234");
		assert_non_null(line);
		assert_true(asprintf(&content, "%s\n# a comment\n%s\n", HT_FILE_HEADER, line) > 0);
		v = ht_file_value(content, &s);
		assert_non_null(v);
		assert_string_equal(v, "1234");
		/* Not hosttune's file (no header): it gives nothing. */
		none = ht_file_value(content + strlen(HT_FILE_HEADER), &s);
		assert_null(none);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_files),
		cmocka_unit_test_setup_teardown(test_fixes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fix_builtin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fix_unit_gives, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fix_none_here, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_value, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
