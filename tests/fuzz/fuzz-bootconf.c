/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The boot configuration readers (shared/bootconf.h): sysctl.d, modprobe.d,
 * modules-load.d and the kernel command line, below a root.
 *
 * Input: files of a tree. Text before the first "@@ " line is written to
 * etc/sysctl.d/50-fuzz.conf, etc/modprobe.d/50-fuzz.conf and
 * etc/modules-load.d/50-fuzz.conf; then each section starts with a line
 *
 *   @@ D NAME            the lines up to the next "@@ " line are file D/NAME
 *   @@ D NAME -> TARGET  D/NAME is a symbolic link to TARGET (any text)
 *
 * where D is one character naming a directory (dirs[] below) and NAME is
 * kept to [A-Za-z0-9._-]. Links are made after every file, so the harness
 * itself never writes through one.
 *
 * The same tree is then read by the collectors of facts below a root
 * (procfs and sysfs files, /proc/PID, NICs in sysfs, the module's state,
 * garage.toml and the garage unit).
 *
 * Properties: the readers write nothing and open nothing outside the tree
 * (a link to / or ../.. must not lead out: fuzz-common.c's guard, which
 * sees openat2 too); keys are
 * sorted and unique, each in normal form and found by ht_conf_find(); each
 * assignment's file is one of the files read; a value is text of the input;
 * a key expanded from a glob names a file below ROOT/proc/sys; every
 * problem has a message.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/collect.h"
#include "collect/procsys.h"
#include "engine/facts.h"
#include "shared/bootconf.h"
#include "shared/util.h"

#include "fuzz-common.h"

static const struct {
	char sel;
	const char *dir;
} dirs[] = {
	{ '0', "etc/sysctl.d" },          { '1', "run/sysctl.d" },
	{ '2', "usr/local/lib/sysctl.d" }, { '3', "usr/lib/sysctl.d" },
	{ '4', "lib/sysctl.d" },          { '5', "etc" },
	{ '6', "etc/modprobe.d" },        { '7', "run/modprobe.d" },
	{ '8', "usr/local/lib/modprobe.d" }, { '9', "lib/modprobe.d" },
	{ 'a', "usr/lib/modprobe.d" },    { 'b', "etc/modules-load.d" },
	{ 'c', "run/modules-load.d" },    { 'd', "usr/lib/modules-load.d" },
	{ 'e', "lib/modules-load.d" },    { 'f', "proc/sys/net/ipv4/conf/eth0" },
	{ 'g', "proc/sys/net/netfilter" }, { 'h', "proc" },
	{ 'i', "proc/sys/kernel" },       { 'j', "proc/net" },
	{ 'k', "sys/class/net" },         { 'l', "sys/class/net/eth0" },
	{ 'm', "proc/1" },                { 'n', "proc/1/fd" },
	{ 'o', "sys/module/nf_conntrack/parameters" },
	{ 'p', "lib/modules/6.1.0" },     { 'q', "etc/systemd/system" },
	{ 's', "etc/systemd/system/garage.service.d" }, { 't', "usr/lib/systemd/system" },
	{ 'u', "usr/local/bin" },         { 'r', "" },
};

#define MAX_SECTIONS 32

struct section {
	const char *dir;
	char name[40];
	const char *body; /* file content, or link target */
	size_t len;
	bool link;
};

static char root[4096];

/* "@@ D NAME[ -> TARGET]" at @line (@len bytes, no newline): fills @s, false if not one. */
static bool parse_header(const char *line, size_t len, struct section *s)
{
	const char *arrow;
	size_t i, n = 0, name_end;

	if (len < 5 || memcmp(line, "@@ ", 3) != 0 || line[4] != ' ')
		return false;
	s->dir = NULL;
	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (dirs[i].sel == line[3])
			s->dir = dirs[i].dir;
	if (!s->dir)
		return false;
	arrow = memmem(line + 5, len - 5, " -> ", 4);
	name_end = arrow ? (size_t)(arrow - line) : len;
	for (i = 5; i < name_end && n + 1 < sizeof(s->name); i++) {
		char c = line[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-')
			s->name[n++] = c;
	}
	s->name[n] = '\0';
	if (n == 0 || strcmp(s->name, ".") == 0 || strcmp(s->name, "..") == 0)
		strcpy(s->name, "x.conf");
	s->link = arrow != NULL;
	if (arrow) {
		s->body = arrow + 4;
		s->len = len - (name_end + 4);
	}
	return true;
}

static void path_of(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s%s%s/%s", root, *dir ? "/" : "", dir, name);
}

/* Writes the tree; returns the text of ROOT/proc/cmdline (NULL if none, caller frees). */
static char *build_tree(const char *in, size_t size)
{
	struct section sec[MAX_SECTIONS];
	size_t nsec = 0, i = 0, pre_end = size;
	char path[8192], *cmdline = NULL;

	/* Split at header lines. */
	while (i < size) {
		const char *nl = memchr(in + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - in) : size;
		struct section s;

		if (nsec < MAX_SECTIONS && parse_header(in + i, end - i, &s)) {
			if (nsec == 0)
				pre_end = i;
			else if (!sec[nsec - 1].link)
				sec[nsec - 1].len = i - (size_t)(sec[nsec - 1].body - in);
			if (!s.link) {
				s.body = nl ? in + end + 1 : in + size;
				s.len = 0;
			}
			sec[nsec++] = s;
		}
		i = nl ? end + 1 : size;
	}
	if (nsec > 0 && !sec[nsec - 1].link)
		sec[nsec - 1].len = size - (size_t)(sec[nsec - 1].body - in);

	if (pre_end > 0) {
		static const char *const pre[] = { "etc/sysctl.d", "etc/modprobe.d",
			                           "etc/modules-load.d" };

		for (size_t k = 0; k < ARRAY_SIZE(pre); k++) {
			path_of(path, sizeof(path), pre[k], "50-fuzz.conf");
			fz_write_file(path, in, pre_end);
		}
	}
	for (size_t k = 0; k < nsec; k++) {
		if (sec[k].link)
			continue;
		path_of(path, sizeof(path), sec[k].dir, sec[k].name);
		fz_write_file(path, sec[k].body, sec[k].len);
		if (strcmp(sec[k].dir, "proc") == 0 && strcmp(sec[k].name, "cmdline") == 0) {
			free(cmdline);
			cmdline = fz_cstr((const uint8_t *)sec[k].body, sec[k].len);
		}
	}
	/* Links last: nothing above is written through one. */
	for (size_t k = 0; k < nsec; k++) {
		char target[256];
		size_t n = sec[k].len < sizeof(target) - 1 ? sec[k].len : sizeof(target) - 1;

		if (!sec[k].link)
			continue;
		memcpy(target, sec[k].body, n);
		target[n] = '\0';
		path_of(path, sizeof(path), sec[k].dir, sec[k].name);
		/*
		 * The directory may not exist yet: make it through a placeholder,
		 * which fz_write_file() never writes through a link an earlier
		 * section planted; without it, no link (symlink(2) would follow
		 * such a link in the directories on the way, out of the tree).
		 */
		if (fz_write_file(path, "", 0) != 0)
			continue;
		unlink(path);
		if (*target)
			(void)symlink(target, path);
	}
	return cmdline;
}

/* @in with modprobe.d's backslashes taken as kmod takes them, and its tabs as spaces. */
static char *joined(const char *in, size_t size, size_t *len)
{
	char *out = malloc(size + 1);
	size_t n = 0;

	FZ_CHECK(out, "ENOMEM");
	for (size_t i = 0; i < size; i++) {
		/* kmod's getline_wrapped(): "\\\n" joins, "\\X" is X. */
		if (in[i] == '\\' && i + 1 < size) {
			i++;
			if (in[i] != '\n')
				out[n++] = in[i] == '\t' ? ' ' : in[i];
			continue;
		}
		/* libkmod reads a tab in an options line as a space (libkmod-config.c). */
		out[n++] = in[i] == '\t' ? ' ' : in[i];
	}
	out[n] = '\0';
	*len = n;
	return out;
}

static const char *raw_in;
static size_t raw_len;

/* @s is text of the input, as it is or with modprobe.d's continued lines joined. */
static bool in_text(const char *text, size_t len, const char *s)
{
	return memmem(text, len, s, strlen(s)) != NULL || memmem(raw_in, raw_len, s, strlen(s));
}

/* The dotted sysctl key as a path below proc/sys: dots and slashes swap. */
static void key_path(char *buf, size_t size, const char *key)
{
	size_t n = (size_t)snprintf(buf, size, "%s/proc/sys/", root);

	for (; *key && n + 1 < size; key++)
		buf[n++] = *key == '.' ? '/' : *key == '/' ? '.' : *key;
	buf[n] = '\0';
}

enum kind { SYSCTL, MODPROBE, MODULES };

static void check_conf(const struct ht_conf *c, enum kind kind, const char *in, size_t size)
{
	size_t tlen;
	char *text = joined(in, size, &tlen);

	raw_in = in;
	raw_len = size;

	for (size_t i = 0; i < c->n; i++) {
		const struct ht_conf_key *k = &c->keys[i];
		bool globbed = false;

		FZ_CHECK(k->key && k->n >= 1 && k->assigns, "key %zu empty", i);
		FZ_CHECK(i == 0 || strcmp(c->keys[i - 1].key, k->key) < 0,
		         "keys not sorted and unique: '%s' then '%s'", c->keys[i - 1].key, k->key);
		FZ_CHECK(ht_conf_find(c, k->key) == k, "ht_conf_find('%s') misses it", k->key);
		FZ_CHECK(ht_conf_effective(k) == &k->assigns[k->n - 1], "effective is not the last");
		/*
		 * Normal form is a fixed point, except when the first component
		 * holds a '.' (the dotted key's first separator is then a '/', and
		 * it reads back as a path): no sysctl is named so (the first
		 * component is kernel, net, vm, fs, ...).
		 */
		if (kind == SYSCTL && *(k->key + strcspn(k->key, "./")) != '/') {
			char *norm = ht_sysctl_key_normalize(k->key);

			FZ_CHECK(norm && strcmp(norm, k->key) == 0,
			         "key '%s' is not in normal form ('%s')", k->key, norm ? norm : "");
			free(norm);
		}
		if (kind == MODULES)
			FZ_CHECK(in_text(text, tlen, k->key), "module '%s' is not in the input", k->key);
		for (size_t j = 0; j < k->n; j++) {
			const struct ht_conf_assign *a = &k->assigns[j];
			bool listed = false;

			FZ_CHECK(a->file && a->file[0] == '/' && a->line >= 1,
			         "assignment of '%s' without its place", k->key);
			FZ_CHECK(strncmp(a->file, root, strlen(root)) != 0,
			         "'%s' names the root prefix", a->file);
			for (size_t f = 0; f < c->nfiles; f++)
				listed = listed || strcmp(c->files[f], a->file) == 0;
			FZ_CHECK(listed, "'%s' (of key '%s') is not among the files read", a->file,
			         k->key);
			if (a->value)
				FZ_CHECK(in_text(text, tlen, a->value),
				         "value '%s' of '%s' is not in the input", a->value, k->key);
			globbed = globbed || a->pattern;
		}
		if (globbed) {
			char path[8192];
			struct stat st;

			key_path(path, sizeof(path), k->key);
			FZ_CHECK(lstat(path, &st) == 0 && !S_ISDIR(st.st_mode),
			         "glob gave key '%s', which is no file below proc/sys", k->key);
		}
	}
	for (size_t i = 0; i < c->nproblems; i++)
		FZ_CHECK(c->problems[i].message && c->problems[i].message[0] &&
		                 c->problems[i].file && c->problems[i].file[0] == '/',
		         "problem %zu without a message or a file", i);
	for (size_t i = 0; i < c->nmasked; i++)
		FZ_CHECK(c->masked[i] && c->masked[i][0] == '/', "masked entry %zu", i);
	free(text);
}

/*
 * The collectors that read below a root: no crash, nothing opened outside.
 * Not libkmod's (ht_collect_kmod()): libkmod reads the running kernel's
 * /proc/cmdline for any context, which hosttune then takes out of the
 * tree's facts; its opens are its own, not wrapped here.
 */
static void read_facts(void)
{
	static int (*const collectors[])(struct ht_facts *, const char *) = {
		ht_collect_mem,           ht_collect_kernel,       ht_collect_arch,
		ht_collect_cpu_count,     ht_collect_conntrack_files, ht_collect_netns_initial,
		ht_collect_net_files,     ht_collect_ctstats,      ht_collect_cttable,
		ht_collect_nstat,         ht_collect_sockstat,     ht_collect_port_range,
		ht_collect_udev,          ht_collect_ethtool,      ht_collect_module_state,
	};
	struct ht_facts *f = ht_facts_new();
	struct ht_garage_input in = { .config = "" };
	struct ht_error err = { "" };
	int r;

	if (!f)
		abort();
	for (size_t i = 0; i < ARRAY_SIZE(collectors); i++) {
		r = collectors[i](f, root);
		FZ_CHECK(r >= 0 || r == -ENOMEM, "collector %zu returned %d", i, r);
	}
	r = ht_collect_processes(f, root, "garage", NULL, 0);
	FZ_CHECK(r >= 0 || r == -ENOMEM, "ht_collect_processes returned %d", r);
	(void)ht_collect_garage(f, root, &in, false, &err);
	ht_facts_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ht_conf c = { 0 };
	char *cmdline, *param;
	int r;

	if (size > 65536)
		return 0;
	if (!root[0]) {
		snprintf(root, sizeof(root), "%s/root", fz_workdir());
		FZ_CHECK(mkdir(root, 0755) == 0, "mkdir %s", root);
	}
	fz_empty_dir(root);
	cmdline = build_tree((const char *)data, size);

	fz_guard_begin(root, false);
	r = ht_sysctl_conf_read(root, &c);
	FZ_CHECK(r == 0 || r == -ENOMEM, "ht_sysctl_conf_read returned %d", r);
	check_conf(&c, SYSCTL, (const char *)data, size);
	ht_conf_free(&c);

	r = ht_modprobe_conf_read(root, &c);
	FZ_CHECK(r == 0 || r == -ENOMEM, "ht_modprobe_conf_read returned %d", r);
	check_conf(&c, MODPROBE, (const char *)data, size);
	ht_conf_free(&c);

	r = ht_modules_load_read(root, &c);
	FZ_CHECK(r == 0 || r == -ENOMEM, "ht_modules_load_read returned %d", r);
	check_conf(&c, MODULES, (const char *)data, size);
	ht_conf_free(&c);

	read_facts();

	param = ht_kcmdline_param(root, "nf_conntrack.hashsize");
	/* (A cmdline that is a link is read through it: not checked.) */
	if (param && cmdline)
		FZ_CHECK(strstr(cmdline, param), "command line value '%s' not in it", param);
	fz_guard_end();
	free(param);
	free(cmdline);
	return 0;
}
