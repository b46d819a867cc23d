/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory hosttune would write in that another manager owns
 * (persist-internal.h, ht_dir_manager()): below a --root a link on the way to
 * it (apply writes through none), on the host a read-only file system or the
 * Nix store. NixOS links /etc/systemd/system and, with systemd-networkd,
 * /etc/systemd/network into /nix/store through /etc/static; its own
 * sysctl.d, modprobe.d and modules-load.d files are links in directories of
 * their own, which stay writable. What NixOS offers instead for each kind of
 * setting is in its manual's options: boot.kernel.sysctl,
 * boot.extraModprobeConfig, boot.kernelModules,
 * systemd.services.<name>.serviceConfig and systemd.network.links.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "engine/facts.h"
#include "engine/rules.h"
#include "shared/fsutil.h"
#include "shared/rootfs.h"
#include "persist/kind.h"
#include "persist/persist-internal.h"

#define NIX_STORE "/nix/store"

void ht_manager_free(struct ht_manager *m)
{
	free(m->dir);
	free(m->target);
	*m = (struct ht_manager){ 0 };
}

static bool in_store(const char *path)
{
	return path && strncmp(path, NIX_STORE, strlen(NIX_STORE)) == 0 &&
	       (path[strlen(NIX_STORE)] == '/' || path[strlen(NIX_STORE)] == '\0');
}

/* Fills @m for @dir (the link or read-only directory, a host path) and @target; 1 or -ENOMEM. */
static int managed(const char *root, const char *dir, const char *target, struct ht_manager *m)
{
	struct stat st;
	_cleanup_free_ char *real = ht_root_realpath(root, dir);

	m->dir = strdup(dir);
	m->target = target ? strdup(target) : NULL;
	if (!m->dir || (target && !m->target)) {
		ht_manager_free(m);
		return -ENOMEM;
	}
	m->nixos = in_store(target) || in_store(real) ||
	           ht_root_stat(root, "/etc/NIXOS", false, &st) == 0;
	return 1;
}

int ht_dir_manager(const char *root, const char *dir, struct ht_manager *m)
{
	bool confined = ht_root_confined(root);
	char prefix[PATH_MAX];
	size_t n = strlen(dir);

	*m = (struct ht_manager){ 0 };
	if (n == 0 || n >= sizeof(prefix) || dir[0] != '/')
		return 0;
	/* Each component from the top: the first link is what someone else made. */
	for (size_t i = 1; i <= n; i++) {
		char target[PATH_MAX];
		struct stat st;
		int r;

		if (i < n && dir[i] != '/')
			continue;
		memcpy(prefix, dir, i);
		prefix[i] = '\0';
		r = ht_root_stat(root, prefix, true, &st);
		if (r == -ENOENT)
			return 0; /* apply creates it */
		if (r < 0 || !S_ISLNK(st.st_mode))
			continue;
		r = ht_root_readlink(root, prefix, target, sizeof(target));
		if (r < 0)
			target[0] = '\0';
		/* On the host a link to a writable directory is written through. */
		if (confined || in_store(target))
			return managed(root, prefix, r < 0 ? NULL : target, m);
		{
			_cleanup_free_ char *real = ht_root_realpath(root, prefix);

			if (in_store(real))
				return managed(root, prefix, target, m);
		}
	}
	if (!confined) {
		struct statvfs vfs;

		if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
			return managed(root, dir, NULL, m);
	}
	return 0;
}

/* "nf_conntrack hashsize" of "module.nf_conntrack.hashsize"; NULL when it is not that shape. */
static char *module_words(const char *target)
{
	const char *mod = target + strlen("module."), *dot;
	char *s;

	if (strncmp(target, "module.", 7) != 0 || !(dot = strchr(mod, '.')))
		return NULL;
	return asprintf(&s, "%.*s %s", (int)(dot - mod), mod, dot + 1) < 0 ? NULL : s;
}

char *ht_manager_setting(const struct ht_manager *m, const struct ht_finding *f,
                         const struct ht_facts *facts)
{
	const char *target = ht_rule_target(f->rule);
	_cleanup_free_ char *value = NULL, *words = NULL, *unit = NULL;
	char *s = NULL;
	int r = 0;

	if (f->recommended.type != HT_T_INT)
		return NULL;
	if (asprintf(&value, "%" PRId64, f->recommended.i) < 0)
		return NULL;
	switch (ht_rule_kind(f->rule)) {
	case HT_TARGET_SYSCTL:
		r = m->nixos ? asprintf(&s, "boot.kernel.sysctl.\"%s\" = %s;", target, value)
		             : asprintf(&s, "%s = %s", target, value);
		break;
	case HT_TARGET_MODULE:
		if (!(words = module_words(target)))
			return NULL;
		*strchr(words, ' ') = '\0';
		r = m->nixos ? asprintf(&s, "boot.extraModprobeConfig = \"options %s %s=%s\";", words,
		                        words + strlen(words) + 1, value)
		             : asprintf(&s, "options %s %s=%s", words, words + strlen(words) + 1,
		                        value);
		break;
	case HT_TARGET_CHANNELS: {
		const char *ch = strrchr(target, '.') + 1;
		const char *key = strcmp(ch, "rx") == 0   ? "RxChannels"
		                  : strcmp(ch, "tx") == 0 ? "TxChannels"
		                                          : "CombinedChannels";

		if (!f->instance)
			return NULL;
		r = m->nixos ? asprintf(&s, "systemd.network.links.\"90-hosttune-%s\" = { "
		                        "matchConfig.OriginalName = \"%s\"; linkConfig.%s = %s; };",
		                        f->instance, f->instance, key, value)
		             : asprintf(&s, "[Match] OriginalName=%s [Link] %s=%s", f->instance, key,
		                        value);
		break;
	}
	case HT_TARGET_LIMIT: {
		struct ht_limit_fix lf;
		_cleanup_free_ char *why = NULL;
		size_t ul;

		if (ht_limit_fix(f, facts, &lf, &why) < 0)
			return NULL;
		ul = strlen(lf.unit);
		if (ul > 8 && strcmp(lf.unit + ul - 8, ".service") == 0)
			unit = strndup(lf.unit, ul - 8);
		if (unit && m->nixos)
			r = asprintf(&s, "systemd.services.\"%s\".serviceConfig.LimitNOFILE = \"%s\";",
			             unit, lf.value);
		else if (unit)
			r = asprintf(&s, "[Service] LimitNOFILE=%s for %s", lf.value, lf.unit);
		ht_limit_fix_free(&lf);
		break;
	}
	default:
		return NULL;
	}
	return r < 0 ? NULL : s;
}

char *ht_manager_text(const struct ht_manager *m)
{
	char *s;
	int r;

	if (m->nixos && m->target)
		r = asprintf(&s, "NixOS manages %s (a link to %s)", m->dir, m->target);
	else if (m->nixos)
		r = asprintf(&s, "NixOS manages %s (read-only)", m->dir);
	else if (m->target)
		r = asprintf(&s, "%s is a link to %s, which hosttune does not write through", m->dir,
		             m->target);
	else
		r = asprintf(&s, "%s is on a read-only file system", m->dir);
	return r < 0 ? NULL : s;
}
