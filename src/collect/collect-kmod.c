/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libkmod.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/dlopen.h"
#include "shared/rootfs.h"
#include "shared/util.h"
#include "engine/value.h"

/*
 * nf_conntrack as the module tools see it, in two sources: what /sys and
 * modules.builtin tell (its state when it is loaded or built in, and the
 * parameters it runs with, /sys/module/nf_conntrack/parameters), read as
 * files; and what only libkmod tells (whether modules.dep has it, when it is
 * neither loaded nor built in, and the options modprobe.d gives it for the
 * next load), with libkmod loaded (dlopen) the first time that source runs.
 * Every path is below the root.
 */

#define MODNAME "nf_conntrack"
#define PATH_MODULE "/sys/module/" MODNAME
#define PATH_INITSTATE PATH_MODULE "/initstate"
#define PATH_PARAMS PATH_MODULE "/parameters"
#define SRC_OPTIONS "libkmod modprobe.d options"

/* libkmod, loaded when the libkmod source first runs (shared/dlopen.h). */
HT_DLSYM_DECLARE(kmod_new);
HT_DLSYM_DECLARE(kmod_unref);
HT_DLSYM_DECLARE(kmod_set_log_fn);
HT_DLSYM_DECLARE(kmod_get_dirname);
HT_DLSYM_DECLARE(kmod_list_next);
HT_DLSYM_DECLARE(kmod_module_new_from_name);
HT_DLSYM_DECLARE(kmod_module_new_from_lookup);
HT_DLSYM_DECLARE(kmod_module_unref);
HT_DLSYM_DECLARE(kmod_module_unref_list);
HT_DLSYM_DECLARE(kmod_module_get_module);
HT_DLSYM_DECLARE(kmod_module_get_name);
HT_DLSYM_DECLARE(kmod_module_get_path);
HT_DLSYM_DECLARE(kmod_module_get_options);

static const struct ht_dlsym kmod_syms[] = {
	HT_DLSYM(kmod_new),
	HT_DLSYM(kmod_unref),
	HT_DLSYM(kmod_set_log_fn),
	HT_DLSYM(kmod_get_dirname),
	HT_DLSYM(kmod_list_next),
	HT_DLSYM(kmod_module_new_from_name),
	HT_DLSYM(kmod_module_new_from_lookup),
	HT_DLSYM(kmod_module_unref),
	HT_DLSYM(kmod_module_unref_list),
	HT_DLSYM(kmod_module_get_module),
	HT_DLSYM(kmod_module_get_name),
	HT_DLSYM(kmod_module_get_path),
	HT_DLSYM(kmod_module_get_options),
};

static struct ht_dlib libkmod = HT_DLIB("libkmod.so.2", kmod_syms);

static void kmod_unrefp(struct kmod_ctx **ctx)
{
	if (*ctx)
		sym_kmod_unref(*ctx);
}

static void kmod_module_unrefp(struct kmod_module **mod)
{
	if (*mod)
		sym_kmod_module_unref(*mod);
}

static void kmod_module_unref_listp(struct kmod_list **list)
{
	if (*list)
		sym_kmod_module_unref_list(*list);
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static void log_silent(void *data, int priority, const char *file, int line, const char *fn,
                       const char *format, va_list args)
{
}

/* Where libkmod reads a directory that is not in the tree: a path no open(2) gets through. */
#define NO_DIR "/dev/null/absent"

/*
 * @dir below the tree @root as a path libkmod may open (ht_root_libdir():
 * the files named @prefix* or *@suffix are those libkmod reads there), or
 * NO_DIR when it is not in the tree or holds a link libkmod would follow
 * out of it: @why (of @size bytes) names the first such link. NULL on
 * ENOMEM.
 */
static char *tree_dir(const char *root, const char *dir, const char *prefix, const char *suffix,
                      char *why, size_t size)
{
	char *path = NULL;
	int r = ht_root_libdir(root, dir, prefix, suffix, &path);

	if (r == -ENOMEM)
		return NULL;
	if (r == -ELOOP && !*why)
		snprintf(why, size, "%s is a symbolic link, which libkmod would follow out of the "
		         "tree", path);
	if (r < 0) {
		free(path);
		return strdup(NO_DIR);
	}
	return path;
}

/*
 * The libkmod context for @root: the live host's defaults, or ROOT's
 * /lib/modules/RELEASE and the modprobe.d directories libkmod reads by
 * default (libkmod.c default_config_paths), in the same order, each
 * resolved inside the tree (tree_dir(): @why says what was left out).
 * Returns NULL on ENOMEM.
 */
static struct kmod_ctx *kmod_open(const char *root, const char *release, char *why, size_t size)
{
	static const char *const conf_dirs[] = {
		"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/lib/modprobe.d",
	};
	char *paths[ARRAY_SIZE(conf_dirs) + 1] = { NULL };
	_cleanup_free_ char *dirname = NULL, *saved = NULL;
	struct kmod_ctx *ctx = NULL;
	const char *old;
	bool live = ht_root_is_live(root);

	if (!live) {
		_cleanup_free_ char *moddir = NULL;

		/* Without a release no modules.dep can be found: an empty directory name. */
		moddir = ht_strdup_printf("/lib/modules/%s", release ? release : "");
		if (!moddir)
			return NULL;
		if (!(dirname = tree_dir(root, moddir, "modules.", NULL, why, size)))
			return NULL;
		for (size_t i = 0; i < ARRAY_SIZE(conf_dirs); i++)
			if (!(paths[i] = tree_dir(root, conf_dirs[i], NULL, ".conf", why, size)))
				goto out;
	}
	/*
	 * libkmod 30 installs its stderr logger inside kmod_new() and parses
	 * modprobe.d there, before kmod_set_log_fn() can be called: a bad line
	 * would be printed. KMOD_LOG=0 (LOG_EMERG, libkmod.c log_priority())
	 * mutes that one call; the previous value is put back.
	 */
	old = getenv("KMOD_LOG");
	if (old && !(saved = strdup(old)))
		goto out;
	if (setenv("KMOD_LOG", "0", 1) < 0)
		goto out;
	ctx = sym_kmod_new(dirname, live ? NULL : (const char *const *)paths);
	if (saved)
		setenv("KMOD_LOG", saved, 1);
	else
		unsetenv("KMOD_LOG");
	if (ctx)
		sym_kmod_set_log_fn(ctx, log_silent, NULL);
out:
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		free(paths[i]);
	return ctx;
}

/* How nf_conntrack stands, and why we think so. */
struct modstate {
	const char *state; /* builtin, loaded, available, absent; NULL when unknown */
	int error;         /* positive errno when state is NULL and the files settled it */
	bool lookup;       /* the files do not settle it: modules.dep does (libkmod) */
	char source[256];
};

/*
 * "available" when modules.dep knows a file for nf_conntrack, else "absent";
 * unknown (ENOENT) without the index libkmod searches (modules.dep.bin,
 * written by depmod): a tree copied without /lib/modules says nothing.
 * @moddir: /lib/modules/RELEASE, below @root.
 */
static int state_from_moddep(struct kmod_ctx *ctx, const char *root, const char *moddir,
                             struct modstate *st)
{
	_cleanup_(kmod_module_unref_listp) struct kmod_list *list = NULL;
	_cleanup_free_ char *rel = NULL;
	struct stat sb;
	int r;

	rel = ht_strdup_printf("%s/modules.dep.bin", moddir);
	if (!rel)
		return -ENOMEM;
	if ((r = ht_root_stat(root, rel, false, &sb)) < 0) {
		if (r == -ENOMEM)
			return r;
		st->error = -r;
		snprintf(st->source, sizeof(st->source), "libkmod %s", rel);
		return 0;
	}
	snprintf(st->source, sizeof(st->source), "libkmod %s/modules.dep", moddir);
	r = sym_kmod_module_new_from_lookup(ctx, MODNAME, &list);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		st->error = -r;
		return 0;
	}
	st->state = "absent";
	/* kmod_list_foreach(), which is a macro over kmod_list_next() */
	for (struct kmod_list *l = list; l; l = sym_kmod_list_next(list, l)) {
		struct kmod_module *m = sym_kmod_module_get_module(l);
		bool found = sym_kmod_module_get_path(m) &&
		             strcmp(sym_kmod_module_get_name(m), MODNAME) == 0;

		sym_kmod_module_unref(m);
		if (found) {
			st->state = "available";
			break;
		}
	}
	return 0;
}

/* Whether modules.builtin (one module path a line) lists nf_conntrack.ko. */
static int builtin_listed(const char *root, const char *moddir, bool *listed)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	int r;

	*listed = false;
	path = ht_strdup_printf("%s/modules.builtin", moddir);
	if (!path)
		return -ENOMEM;
	r = ht_read_file(root, path, &text);
	if (r < 0)
		return r;
	for (char *line = text, *next; line; line = next) {
		char *slash, *base;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		slash = strrchr(line, '/');
		base = slash ? slash + 1 : line;
		/* Module names treat '-' and '_' alike (libkmod modname_normalize). */
		for (char *p = base; *p; p++)
			if (*p == '-')
				*p = '_';
		if (strcmp(base, MODNAME ".ko") == 0) {
			*listed = true;
			break;
		}
	}
	return 0;
}

/* initstate: loaded (live, coming, going: kernel/module/sysfs.c show_initstate()). 1 when read. */
static int state_initstate(const char *root, struct modstate *st)
{
	_cleanup_free_ char *text = NULL;
	int r = ht_read_file(root, PATH_INITSTATE, &text);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	snprintf(st->source, sizeof(st->source), PATH_INITSTATE);
	if (strcmp(text, "live") == 0 || strcmp(text, "coming") == 0 || strcmp(text, "going") == 0)
		st->state = "loaded";
	else
		st->error = EINVAL;
	return 1;
}

/* /sys/module/nf_conntrack is a directory: @state, with @source. 1 when it is. */
static int state_module_dir(const char *root, const char *state, const char *source,
                            struct modstate *st)
{
	struct stat sb;

	if (ht_root_stat(root, PATH_MODULE, false, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return 0;
	st->state = state;
	snprintf(st->source, sizeof(st->source), "%s", source);
	return 1;
}

/* modules.builtin of @release lists nf_conntrack: built in. 1 when it does. */
static int state_builtin(const char *root, const char *release, struct modstate *st)
{
	_cleanup_free_ char *moddir = NULL;
	bool listed;
	int r;

	if (!release)
		return 0;
	moddir = ht_strdup_printf("/lib/modules/%s", release);
	if (!moddir)
		return -ENOMEM;
	r = builtin_listed(root, moddir, &listed);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !listed)
		return 0;
	st->state = "builtin";
	snprintf(st->source, sizeof(st->source), "%s/modules.builtin", moddir);
	return 1;
}

/*
 * The state the files tell, without libkmod. Live: the kernel gives every
 * loaded module an initstate attribute (kernel/module/sysfs.c) and creates a
 * bare /sys/module/NAME only for built-in code with parameters
 * (kernel/params.c, param_sysfs_builtin), so initstate means loaded and the
 * directory without it built in; a built-in module without the directory
 * is in modules.builtin (as libkmod's kmod_module_get_initstate() reads it).
 * Under --root, a tree copied from another host may lack initstate: its
 * initstate, its modules.builtin, then its /sys/module directory (loaded).
 * Neither: st->lookup, modules.dep decides (libkmod: state_from_moddep()).
 */
static int state_files(const char *root, const char *release, struct modstate *st)
{
	bool live = ht_root_is_live(root);
	int r = state_initstate(root, st);

	if (r == 0 && live)
		r = state_module_dir(root, "builtin", PATH_MODULE " without initstate", st);
	if (r == 0)
		r = state_builtin(root, release, st);
	if (r == 0 && !live)
		r = state_module_dir(root, "loaded", PATH_MODULE, st);
	if (r != 0)
		return r < 0 ? r : 0;
	if (!live && !release) {
		st->error = ENOENT;
		snprintf(st->source, sizeof(st->source), "kernel.release unknown");
		return 0;
	}
	st->lookup = true;
	return 0;
}

/*
 * conntrack.module and conntrack.loaded from what the files settled; the
 * lookup in modules.dep is left to the libkmod source (conntrack.loaded
 * keeps what /sys/module said then, and when the state is unknown).
 */
static int collect_state(struct ht_facts *f, const char *root, const char *release)
{
	struct modstate st = { 0 };
	bool loaded;
	int r;

	r = state_files(root, release, &st);
	if (r < 0 || st.lookup)
		return r;
	if (!st.state)
		return ht_facts_set_errno(f, "conntrack.module", st.error, NULL, st.source);
	r = ht_facts_set_str(f, "conntrack.module", st.state, st.source);
	if (r < 0)
		return r;
	loaded = strcmp(st.state, "builtin") == 0 || strcmp(st.state, "loaded") == 0;
	return ht_facts_set_bool(f, "conntrack.loaded", loaded, st.source);
}

/*
 * hashsize and expect_hashsize count hash buckets (net/netfilter/nf_conntrack_core.c,
 * nf_conntrack_expect.c).
 */
static const char *param_unit(const char *param)
{
	if (strcmp(param, "hashsize") == 0 || strcmp(param, "expect_hashsize") == 0)
		return "buckets";
	return NULL;
}

static int collect_param(struct ht_facts *f, const char *root, const char *param)
{
	_cleanup_free_ char *name = NULL, *path = NULL, *text = NULL;
	const char *unit = param_unit(param);
	long long i;
	int r;

	name = ht_strdup_printf("module." MODNAME ".%s", param);
	path = ht_strdup_printf(PATH_PARAMS "/%s", param);
	if (!name || !path)
		return -ENOMEM;
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		r = ht_facts_set_errno(f, name, r, unit, path);
	else if (ht_parse_int64(text, &i) == 0 && ht_fact_max(name) && i > ht_fact_max(name))
		r = 0; /* above what the kernel holds: collect.c's record says so */
	else if (ht_parse_int64(text, &i) == 0)
		r = ht_facts_set_int(f, name, i, unit, path);
	else
		r = ht_facts_set_str(f, name, text, path);
	/* A name the facts file cannot hold is skipped, never fatal. */
	return r == -EINVAL ? 0 : r;
}

/*
 * module.nf_conntrack.hashsize is the conntrack sysctls source's
 * (ht_collect_conntrack_files(), the same file), which the source table
 * asks for it: set here too, it would replace a fact that a rule may have
 * read already (the engine keeps the fact's name: a use after free).
 */
#define PARAM_OTHERS "hashsize"

static int collect_params(struct ht_facts *f, const char *root)
{
	static const char *const known[] = { "expect_hashsize" };
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int r;

	d = ht_root_opendir(root, PATH_PARAMS);
	if (!d) {
		int e = errno;

		for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
			_cleanup_free_ char *name = NULL, *path = NULL;

			name = ht_strdup_printf("module." MODNAME ".%s", known[i]);
			path = ht_strdup_printf(PATH_PARAMS "/%s", known[i]);
			if (!name || !path)
				return -ENOMEM;
			r = ht_facts_set_errno(f, name, e, "buckets", path);
			if (r < 0)
				return r;
		}
		return 0;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno == ENOMEM)
				return -ENOMEM;
			break;
		}
		if (de->d_name[0] == '.' || strcmp(de->d_name, PARAM_OTHERS) == 0)
			continue;
		r = collect_param(f, root, de->d_name);
		if (r < 0)
			return r;
	}
	/* The parameters rules know are always facts: absent ones say why. */
	for (size_t i = 0; i < ARRAY_SIZE(known); i++) {
		_cleanup_free_ char *name = ht_strdup_printf("module." MODNAME ".%s", known[i]);

		if (!name)
			return -ENOMEM;
		if (!ht_facts_get(f, name) && (r = collect_param(f, root, known[i])) < 0)
			return r;
	}
	return 0;
}

/* parameq() in kernel/params.c: '-' and '_' are the same in parameter names. */
static bool param_eq(const char *a, size_t alen, const char *b)
{
	size_t i;

	for (i = 0; i < alen && b[i]; i++) {
		char ca = a[i] == '-' ? '_' : a[i], cb = b[i] == '-' ? '_' : b[i];

		if (ca != cb)
			return false;
	}
	return i == alen && !b[i];
}

/*
 * The value of the last @param=VALUE word of a module option string, split
 * as the kernel does (kernel/params.c next_arg(): blanks separate words
 * outside double quotes; quotes around the value are dropped); the last one
 * wins because parse_args() applies them in order. -ENOENT when not given.
 */
static int option_value(const char *opts, const char *param, char **out)
{
	_cleanup_free_ char *val = NULL;
	const char *p = opts;

	while (*p) {
		const char *w, *eq = NULL, *v, *end;
		bool quoted = false;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		w = p;
		for (; *p && (quoted || (*p != ' ' && *p != '\t' && *p != '\n')); p++) {
			if (*p == '"')
				quoted = !quoted;
			else if (*p == '=' && !eq && !quoted)
				eq = p;
		}
		if (!eq || !param_eq(w, (size_t)(eq - w), param))
			continue;
		v = eq + 1;
		end = p;
		if (*v == '"') {
			v++;
			if (end > v && end[-1] == '"')
				end--;
		}
		free(val);
		val = strndup(v, (size_t)(end - v));
		if (!val)
			return -ENOMEM;
	}
	if (!val)
		return -ENOENT;
	*out = TAKE_PTR(val);
	return 0;
}

/*
 * hashsize= is applied at load with param_set_uint() (nf_conntrack_set_hashsize()
 * in net/netfilter/nf_conntrack_core.c), i.e. kstrtouint(s, 0): an optional
 * '+', then decimal, 0x hex or 0 octal, an unsigned int (at most 4294967295).
 */
static int parse_uint_base0(const char *s, int64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s == '+')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE || v > UINT32_MAX)
		return -ERANGE;
	if (end == s || (*end && strcmp(end, "\n") != 0))
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

/*
 * The option words libkmod takes from the live kernel command line for
 * nf_conntrack, joined by blanks, as kmod_config_parse_kcmdline() in
 * libkmod-config.c splits it: words at every blank, the module name up to
 * the first '.', the option after the last '.', kept when a '=' follows the
 * first '.'. NULL in *out when there are none.
 */
static int kcmdline_options(char **out)
{
	_cleanup_free_ char *cmdline = NULL, *acc = NULL;
	size_t acclen = 0;
	int r;

	*out = NULL;
	r = ht_read_file(NULL, "/proc/cmdline", &cmdline);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	for (char *w = cmdline, *next; w; w = next) {
		char *dot, *last, *nl;
		size_t len;

		next = strchr(w, ' ');
		if (next)
			*next++ = '\0';
		nl = strchr(w, '\n');
		if (nl) {
			*nl = '\0';
			next = NULL;
		}
		dot = strchr(w, '.');
		if (!dot || !strchr(dot, '='))
			continue;
		*dot = '\0';
		for (char *p = w; *p; p++)
			if (*p == '-')
				*p = '_';
		if (strcmp(w, MODNAME) != 0)
			continue;
		last = strrchr(dot + 1, '.');
		last = last ? last + 1 : dot + 1;
		len = strlen(last);
		if (len == 0)
			continue;
		{
			char *na = realloc(acc, acclen + len + 2);

			if (!na)
				return -ENOMEM;
			acc = na;
		}
		if (acclen)
			acc[acclen++] = ' ';
		memcpy(acc + acclen, last, len + 1);
		acclen += len;
	}
	*out = TAKE_PTR(acc);
	return 0;
}

static int collect_options(struct ht_facts *f, struct kmod_module *mod, const char *root)
{
	_cleanup_free_ char *opts = NULL, *kcmd = NULL, *val = NULL;
	const char *o = sym_kmod_module_get_options(mod);
	int64_t hashsize;
	int r;

	opts = strdup(o ? o : "");
	if (!opts)
		return -ENOMEM;
	if (!ht_root_is_live(root)) {
		/*
		 * libkmod appends the live /proc/cmdline's nf_conntrack.PARAM=V
		 * words to every context whatever its config paths; they are this
		 * host's, not the tree's.
		 */
		r = kcmdline_options(&kcmd);
		if (r < 0)
			return r;
		if (kcmd) {
			size_t ol = strlen(opts), kl = strlen(kcmd);

			if (ol >= kl && strcmp(opts + ol - kl, kcmd) == 0 &&
			    (ol == kl || opts[ol - kl - 1] == ' '))
				opts[ol == kl ? 0 : ol - kl - 1] = '\0';
		}
	}
	/* A facts file holds UTF-8 only: a Latin-1 byte in modprobe.d makes the fact unknown. */
	if (ht_utf8_invalid(opts))
		r = ht_facts_set_errno(f, "modprobe." MODNAME ".options", EINVAL, NULL,
		                       SRC_OPTIONS " (not UTF-8)");
	else
		r = ht_facts_set_str(f, "modprobe." MODNAME ".options", opts, SRC_OPTIONS);
	if (r < 0)
		return r;
	r = option_value(opts, "hashsize", &val);
	if (r >= 0)
		r = parse_uint_base0(val, &hashsize);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, "modprobe." MODNAME ".hashsize", r, "buckets",
		                          SRC_OPTIONS);
	return ht_facts_set_int(f, "modprobe." MODNAME ".hashsize", hashsize, "buckets",
	                        SRC_OPTIONS);
}

/* kernel.release as a copy (the facts set later may move the table); NULL when unknown. */
static int release_of(struct ht_facts *f, char **out)
{
	const struct ht_fact *rel = ht_facts_get(f, "kernel.release");

	*out = NULL;
	if (!rel || rel->value.type != HT_T_STR)
		return 0;
	*out = strdup(rel->value.s);
	return *out ? 0 : -ENOMEM;
}

int ht_collect_module_state(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *release = NULL;
	int r = release_of(f, &release);

	if (r >= 0)
		r = collect_state(f, root, release);
	return r < 0 ? r : collect_params(f, root);
}

/* conntrack.module from libkmod's lookup in modules.dep (the files did not settle it). */
static int collect_lookup(struct ht_facts *f, struct kmod_ctx *ctx, const char *root,
                          const char *release)
{
	_cleanup_free_ char *moddir = NULL;
	struct modstate st = { 0 };
	int r;

	if (ht_root_is_live(root))
		r = state_from_moddep(ctx, NULL, sym_kmod_get_dirname(ctx), &st);
	else if (!(moddir = ht_strdup_printf("/lib/modules/%s", release ? release : "")))
		r = -ENOMEM;
	else
		r = state_from_moddep(ctx, root, moddir, &st);
	if (r < 0)
		return r;
	if (!st.state)
		return ht_facts_set_errno(f, "conntrack.module", st.error, NULL, st.source);
	return ht_facts_set_str(f, "conntrack.module", st.state, st.source);
}

/*
 * libkmod could not be loaded (@r, -ENOENT or -ELIBACC; @why NULL: the
 * loader's error), or may not read the tree (-EXDEV, @why): its facts are
 * unavailable with that errno and a source saying why.
 */
static int kmod_unavailable(struct ht_facts *f, bool need_state, int r, const char *why)
{
	char src[PATH_MAX + 512];
	int e;

	if (!why)
		why = ht_dlopen_error(&libkmod);
	snprintf(src, sizeof(src), SRC_OPTIONS ": %s", why);
	e = ht_facts_set_errno(f, "modprobe." MODNAME ".options", r, NULL, src);
	if (e >= 0)
		e = ht_facts_set_errno(f, "modprobe." MODNAME ".hashsize", r, "buckets", src);
	if (e < 0 || !need_state)
		return e;
	snprintf(src, sizeof(src), "libkmod modules.dep: %s", why);
	return ht_facts_set_errno(f, "conntrack.module", r, NULL, src);
}

int ht_collect_kmod(struct ht_facts *f, const char *root)
{
	_cleanup_(kmod_unrefp) struct kmod_ctx *ctx = NULL;
	_cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
	_cleanup_free_ char *release = NULL;
	bool need_state = !ht_facts_get(f, "conntrack.module");
	char why[PATH_MAX + 128] = "";
	int r;

	r = ht_dlopen(&libkmod);
	if (r < 0)
		return kmod_unavailable(f, need_state, r, NULL);
	r = release_of(f, &release);
	if (r < 0)
		return r;
	ctx = kmod_open(root, release, why, sizeof(why));
	if (!ctx)
		return -ENOMEM;
	if (why[0])
		return kmod_unavailable(f, need_state, -EXDEV, why);
	r = sym_kmod_module_new_from_name(ctx, MODNAME, &mod);
	if (r < 0)
		return -ENOMEM; /* it fails only for want of memory for this name */
	if (need_state && (r = collect_lookup(f, ctx, root, release)) < 0)
		return r;
	return collect_options(f, mod, root);
}
