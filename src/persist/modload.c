/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading and unloading a kernel module through libkmod (persist-internal.h,
 * ht_module_load()): what `modprobe MODULE` does, without running it. The
 * context is made after apply has written its modprobe.d file, so that
 * kmod_module_probe_insert_module() loads the module with the options just
 * written (libkmod reads the configuration when the context is created).
 *
 * Compiled a second time into tests/hosttune-hooks with HT_TEST_HOOKS: there
 * HOSTTUNE_TEST_MODLOAD=DIR "loads" the module into a --root tree by copying
 * DIR's files into it (what the kernel would create: /sys/module/NAME and
 * the module's /proc/sys keys) and HOSTTUNE_TEST_MODLOAD_FAIL=ERRNO makes the
 * load or the unload fail, so that apply's order and rollback can be tested
 * without changing the host. The installed hosttune has none of it.
 */
#include <errno.h>
#include <libkmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/dlopen.h"
#include "shared/fsutil.h"
#include "shared/util.h"
#include "persist/persist-internal.h"

#ifdef HT_TEST_HOOKS
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

HT_DLSYM_DECLARE(kmod_new);
HT_DLSYM_DECLARE(kmod_unref);
HT_DLSYM_DECLARE(kmod_set_log_fn);
HT_DLSYM_DECLARE(kmod_module_new_from_name);
HT_DLSYM_DECLARE(kmod_module_unref);
HT_DLSYM_DECLARE(kmod_module_probe_insert_module);
HT_DLSYM_DECLARE(kmod_module_remove_module);
HT_DLSYM_DECLARE(kmod_module_get_initstate);

static const struct ht_dlsym modload_syms[] = {
	HT_DLSYM(kmod_new),
	HT_DLSYM(kmod_unref),
	HT_DLSYM(kmod_set_log_fn),
	HT_DLSYM(kmod_module_new_from_name),
	HT_DLSYM(kmod_module_unref),
	HT_DLSYM(kmod_module_probe_insert_module),
	HT_DLSYM(kmod_module_remove_module),
	HT_DLSYM(kmod_module_get_initstate),
};

static struct ht_dlib libkmod_load = HT_DLIB("libkmod.so.2", modload_syms);

static void log_silent(void *data, int priority, const char *file, int line, const char *fn,
                       const char *format, va_list args)
{
}

#ifdef HT_TEST_HOOKS
static const char *hook_root;
static size_t hook_src_len;

static int hook_copy(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	_cleanup_free_ char *dst = NULL, *text = NULL;
	FILE *f;
	int r;

	if (ftw->level == 0)
		return 0;
	if (asprintf(&dst, "%s%s", hook_root, path + hook_src_len) < 0)
		return -1;
	if (type == FTW_D)
		return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
	if (ht_read_file(NULL, path, &text) < 0 || !(f = fopen(dst, "we")))
		return -1;
	r = fputs(text, f) < 0;
	return fclose(f) != 0 || r ? -1 : 0;
}

/* Unloading removes what loading copied (directories once empty). */
static int hook_remove(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	_cleanup_free_ char *dst = NULL;

	if (ftw->level == 0)
		return 0;
	if (asprintf(&dst, "%s%s", hook_root, path + hook_src_len) < 0)
		return -1;
	if (type == FTW_DP)
		(void)rmdir(dst);
	else
		(void)unlink(dst);
	return 0;
}

/*
 * As the kernel takes module options: each "options NAME PARAM=VALUE" of the
 * tree's etc/modprobe.d/hosttune.conf (as apply wrote it just before) into
 * sys/module/NAME/parameters/PARAM.
 */
static int hook_options(const char *root, const char *name)
{
	_cleanup_free_ char *text = NULL;
	char *save = NULL;

	if (ht_read_file(root, "/etc/modprobe.d/hosttune.conf", &text) < 0)
		return 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char mod[64], param[64], value[64];
		_cleanup_free_ char *path = NULL;
		FILE *f;

		if (sscanf(line, "options %63s %63[^=]=%63s", mod, param, value) != 3 ||
		    strcmp(mod, name) != 0)
			continue;
		if (asprintf(&path, "%s/sys/module/%s/parameters/%s", root, mod, param) < 0)
			return -ENOMEM;
		if (!(f = fopen(path, "we")))
			return -errno;
		fprintf(f, "%s\n", value);
		if (fclose(f) != 0)
			return -EIO;
	}
	return 0;
}

/* The test's stand-in for the kernel; 0, 1 (loaded already) or a negative errno. */
static int hook_load(const char *root, const char *name, struct ht_error *err)
{
	const char *dir = getenv("HOSTTUNE_TEST_MODLOAD");
	const char *fail = getenv("HOSTTUNE_TEST_MODLOAD_FAIL");
	_cleanup_free_ char *mod = NULL;
	struct stat st;

	if (!dir)
		return 2;
	if (fail && *fail)
		return ht_error_set(err, atoi(fail), "loading %s (libkmod): %s", name,
		                    strerror(atoi(fail)));
	if (asprintf(&mod, "%s/sys/module/%s", root, name) < 0)
		return -ENOMEM;
	if (stat(mod, &st) == 0)
		return 1;
	hook_root = root;
	hook_src_len = strlen(dir);
	if (nftw(dir, hook_copy, 16, FTW_PHYS) != 0)
		return ht_error_set(err, EIO, "HOSTTUNE_TEST_MODLOAD: copying %s failed", dir);
	return hook_options(root, name);
}
#endif

int ht_module_load(const char *root, const char *name, struct ht_error *err)
{
	struct kmod_ctx *ctx;
	struct kmod_module *mod = NULL;
	int r;

#ifdef HT_TEST_HOOKS
	if ((r = hook_load(root, name, err)) != 2)
		return r;
#endif
	/* Never below a tree: a module is the running kernel's, not the tree's. */
	if (ht_root_confined(root))
		return -EPERM;
	r = ht_dlopen(&libkmod_load);
	if (r < 0)
		return ht_error_set(err, -r, "loading %s: %s", name, ht_dlopen_error(&libkmod_load));
	ctx = sym_kmod_new(NULL, NULL);
	if (!ctx)
		return ht_error_set(err, ENOMEM, "loading %s: libkmod could not start", name);
	sym_kmod_set_log_fn(ctx, log_silent, NULL);
	r = sym_kmod_module_new_from_name(ctx, name, &mod);
	if (r >= 0 && sym_kmod_module_get_initstate(mod) == KMOD_MODULE_LIVE)
		r = 1;
	else if (r >= 0)
		r = sym_kmod_module_probe_insert_module(mod, KMOD_PROBE_APPLY_BLACKLIST, NULL, NULL,
		                                        NULL, NULL);
	if (mod)
		sym_kmod_module_unref(mod);
	sym_kmod_unref(ctx);
	if (r == KMOD_PROBE_APPLY_BLACKLIST)
		return ht_error_set(err, EPERM, "loading %s: a modprobe.d blacklist line names it",
		                    name);
	if (r < 0)
		return ht_error_set(err, -r, "loading %s (libkmod): %s", name, strerror(-r));
	return r > 0 ? 1 : 0;
}

int ht_module_unload(const char *root, const char *name)
{
	struct kmod_ctx *ctx;
	struct kmod_module *mod = NULL;
	int r;

#ifdef HT_TEST_HOOKS
	if (getenv("HOSTTUNE_TEST_MODLOAD")) {
		const char *dir = getenv("HOSTTUNE_TEST_MODLOAD");
		const char *fail = getenv("HOSTTUNE_TEST_MODUNLOAD_FAIL");

		if (fail && *fail)
			return -atoi(fail);
		hook_root = root;
		hook_src_len = strlen(dir);
		return nftw(dir, hook_remove, 16, FTW_PHYS | FTW_DEPTH) != 0 ? -EIO : 0;
	}
#endif
	if (ht_root_confined(root))
		return -EPERM;
	r = ht_dlopen(&libkmod_load);
	if (r < 0)
		return r;
	ctx = sym_kmod_new(NULL, NULL);
	if (!ctx)
		return -ENOMEM;
	sym_kmod_set_log_fn(ctx, log_silent, NULL);
	r = sym_kmod_module_new_from_name(ctx, name, &mod);
	/* Not forced: a module in use (a firewall's rules) stays, -EBUSY. */
	if (r >= 0)
		r = sym_kmod_module_remove_module(mod, 0);
	if (mod)
		sym_kmod_module_unref(mod);
	sym_kmod_unref(ctx);
	return r < 0 ? r : 0;
}

bool ht_module_load_here(const char *root)
{
#ifdef HT_TEST_HOOKS
	if (getenv("HOSTTUNE_TEST_MODLOAD"))
		return true;
#endif
	return !ht_root_confined(root);
}
