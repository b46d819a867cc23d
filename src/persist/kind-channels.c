/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The NIC channels kind (persist/kind.h): a target nic.channels.KIND of an
 * interface, persisted as its [Link] key (channel_keys[] below) in a
 * systemd .link file of hosttune's for that interface (systemd.link(5):
 * udev applies it when the device appears), written live over ethtool
 * netlink (CHANNELS_SET, never under --root). A .link file of hosttune's for
 * an interface that no longer needs one is removed.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/fix.h"
#include "engine/rules.h"
#include "shared/escape.h"
#include "shared/fsutil.h"
#include "shared/rootfs.h"
#include "persist/ethtool-set.h"
#include "persist/kind.h"
#include "persist/persist-internal.h"
#include "persist/templates.h"

#define LINK_DIR "/etc/systemd/network"
#define LINK_PREFIX "90-hosttune-"
#define LINK_SUFFIX ".link"
#define TARGET_PREFIX "nic.channels."

static const char *const channels_dirs[] = { LINK_DIR, NULL };

/* ethtool -L's names of the channel counts, and systemd.link(5)'s [Link] keys for them. */
static const struct {
	const char *name;
	const char *link_key;
} channel_keys[] = {
	{ "combined", "CombinedChannels" },
	{ "rx", "RxChannels" },
	{ "tx", "TxChannels" },
};

bool ht_channel_valid(const char *channel)
{
	for (size_t i = 0; i < ARRAY_SIZE(channel_keys); i++)
		if (strcmp(channel, channel_keys[i].name) == 0)
			return true;
	return false;
}

char *ht_channels_key(const char *ifname, const char *channel)
{
	_cleanup_free_ char *suffix = NULL;

	if (asprintf(&suffix, "channels.%s", channel) < 0)
		return NULL;
	return ht_instance_fact("nic", ifname, suffix);
}

/* "/etc/systemd/network/90-hosttune-IF.link"; NULL on ENOMEM. */
static char *link_path(const char *ifname)
{
	char *p;

	return asprintf(&p, LINK_DIR "/" LINK_PREFIX "%s" LINK_SUFFIX, ifname) < 0 ? NULL : p;
}

static bool channels_managed_file(const char *path)
{
	const char *pre = LINK_DIR "/" LINK_PREFIX;
	size_t n = strlen(path), pl = strlen(pre), sl = strlen(LINK_SUFFIX);
	_cleanup_free_ char *ifname = NULL;

	if (n <= pl + sl || strncmp(path, pre, pl) != 0 || strcmp(path + n - sl, LINK_SUFFIX) != 0)
		return false;
	ifname = strndup(path + pl, n - pl - sl);
	return ifname && ht_ifname_valid(ifname);
}

/* "combined" of nic.channels.combined. */
static const char *channel_of(const char *target)
{
	return target + strlen(TARGET_PREFIX);
}

static char *channels_line(const char *target, const char *value)
{
	const char *ch = channel_of(target);
	const char *key = channel_keys[ARRAY_SIZE(channel_keys) - 1].link_key;
	char *s;

	/* As before the table: a name that is neither combined nor rx is tx. */
	for (size_t i = 0; i + 1 < ARRAY_SIZE(channel_keys); i++)
		if (strcmp(ch, channel_keys[i].name) == 0)
			key = channel_keys[i].link_key;
	return asprintf(&s, "%s=%s", key, value) < 0 ? NULL : s;
}

/*
 * The .link file: a line of its template, its [Match] line
 * (MACAddress=xx:xx:.. or OriginalName=IFNAME) or a channel count.
 */
static bool channels_file_line_ok(const char *path _unused_, const char *line)
{
	const char *eq = strchr(line, '=');
	size_t k = eq ? (size_t)(eq - line) : 0;

	if (ht_template_line(ht_tmpl_channels_link, line))
		return true;
	if (!eq)
		return false;
	if (k == 10 && strncmp(line, "MACAddress", k) == 0)
		return eq[1] && strspn(eq + 1, "0123456789abcdefABCDEF:") == strlen(eq + 1);
	if (k == 12 && strncmp(line, "OriginalName", k) == 0)
		return ht_ifname_valid(eq + 1);
	for (size_t i = 0; i < ARRAY_SIZE(channel_keys); i++)
		if (strlen(channel_keys[i].link_key) == k &&
		    strncmp(line, channel_keys[i].link_key, k) == 0)
			return ht_int_text(eq + 1, false);
	return false;
}

int ht_channels_write(const char *ifname, const char *channel, const char *value, bool *changed,
                      struct ht_error *err)
{
	unsigned long n;
	char *end;
	int r;

	*changed = false;
	errno = 0;
	n = strtoul(value, &end, 10);
	if (*end || errno || n == 0 || n > UINT32_MAX)
		return ht_error_set(err, EINVAL, "%s: bad channel count '%s'", ifname, value);
	r = ht_ethtool_set_channels(ifname, channel, (uint32_t)n, NULL, err);
	/* -EIO: CHANNELS_SET took, the read-back differs. */
	*changed = r == 0 || r == -EIO;
	return r;
}

static int channels_live(const struct ht_plan_ctx *c, const struct ht_setting *s,
                         struct ht_plan_live *l)
{
	l->kind = HT_LIVE_CHANNELS;
	l->ifname = strdup(s->f->instance);
	l->channel = strdup(channel_of(ht_rule_target(s->f->rule)));
	if (!l->ifname || !l->channel)
		return -ENOMEM;
	if (!c->live_root)
		l->note = strdup("not changed under --root: channels are set over netlink");
	return 0;
}

static int channels_setting(struct ht_plan_ctx *c, const struct ht_finding *f,
                            struct ht_setting *s)
{
	_cleanup_free_ char *suffix = NULL;

	if (asprintf(&suffix, "channels.%s", channel_of(ht_rule_target(f->rule))) < 0)
		return -ENOMEM;
	return ht_setting_init(s, f, NULL, ht_finding_fact(f, "nic", suffix), true);
}

static int channels_fix(const struct ht_plan_ctx *c, const struct ht_finding *f,
                        struct ht_fix *fix)
{
	_cleanup_free_ char *val = ht_value_display(&f->recommended), *line = NULL;
	const char *target = ht_rule_target(f->rule), *ch = channel_of(target);

	if (!val || !(line = channels_line(target, val)))
		return -ENOMEM;
	fix->kind = HT_FIX_FILE;
	fix->file = link_path(f->instance);
	fix->live_absent = f->no_live;
	if (asprintf(&fix->line, "[Link] %s", line) < 0)
		fix->line = NULL;
	if (asprintf(&fix->live, "ethtool netlink CHANNELS_SET %s %s %s (ethtool -L %s %s %s)",
	             f->instance, ch, val, f->instance, ch, val) < 0)
		fix->live = NULL;
	return fix->file && fix->line && fix->live ? 0 : -ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names of hosttune's .link files in ROOT/LINK_DIR, sorted, so that one
 * no longer wanted is removed. An absent directory has none; another error
 * of opendir(3) is returned.
 */
static int old_link_files(const char *root, struct ht_paths *names)
{
	struct dirent *de;
	DIR *d;

	d = ht_root_opendir(root, LINK_DIR);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] == '.' || l <= strlen(LINK_SUFFIX) ||
		    strcmp(de->d_name + l - strlen(LINK_SUFFIX), LINK_SUFFIX) != 0 ||
		    strncmp(de->d_name, LINK_PREFIX, strlen(LINK_PREFIX)) != 0)
			continue;
		if (ht_paths_add(names, de->d_name) < 0) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	if (names->n > 1) /* qsort() of a NULL array is undefined, even of none */
		qsort(names->v, names->n, sizeof(*names->v), cmp_str);
	return 0;
}

/* The .link file of one interface's setting @s, when the setting goes in it. */
static int link_file(struct ht_plan_ctx *c, const struct ht_setting *s)
{
	_cleanup_free_ char *path = link_path(s->f->instance), *old = NULL;
	_cleanup_free_ char *match = NULL, *mac_name = NULL;
	struct ht_setting one;
	size_t n1 = 0;
	const char *mac;
	int r;

	if (!path)
		return -ENOMEM;
	if ((r = ht_plan_read(c, path, &old)) < 0)
		return r;
	r = ht_plan_select(s, 1, old, &one, &n1);
	if (r < 0 || n1 == 0)
		return r;
	/* Matched by its hardware address when known: that stays when udev renames it. */
	mac_name = ht_finding_fact(s->f, "nic", "mac");
	mac = mac_name ? ht_fact_string(c->facts, mac_name) : NULL;
	if (asprintf(&match, mac ? "MACAddress=%s" : "OriginalName=%s",
	             mac ? mac : s->f->instance) < 0) {
		free(one.value);
		return -ENOMEM;
	}
	r = ht_plan_settings_file(c, path, ht_tmpl_channels_link, s->f->instance, match, NULL,
	                          &one, 1);
	free(one.value);
	return r;
}

/* One .link file per interface with channel settings; those no longer wanted removed. */
static int channels_files(struct ht_plan_ctx *c, const struct ht_setting *all, size_t n,
                          const struct ht_setting *chosen, size_t nchosen)
{
	_cleanup_(ht_paths_free) struct ht_paths names = { 0 };
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++)
		if (all[i].kind == &ht_kind_channels)
			r = link_file(c, &all[i]);
	if (r < 0 || c->no_disk)
		return r;
	r = old_link_files(c->root, &names);
	for (size_t i = 0; r >= 0 && i < names.n; i++) {
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, LINK_DIR "/%s", names.v[i]) < 0)
			return -ENOMEM;
		r = ht_plan_drop_file(c, path);
	}
	return r;
}

const struct ht_kind ht_kind_channels = {
	.target = HT_TARGET_CHANNELS,
	.dirs = channels_dirs,
	.managed_file = channels_managed_file,
	.file_line_ok = channels_file_line_ok,
	.line = channels_line,
	.files = channels_files,
	.live = channels_live,
	.setting = channels_setting,
	.fix = channels_fix,
};
