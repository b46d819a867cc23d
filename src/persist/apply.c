/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "shared/bootconf.h"
#include "shared/fsutil.h"
#include "shared/rootfs.h"
#include "persist/kind.h"
#include "persist/persist.h"
#include "persist/persist-internal.h"

struct json_object *ht_state_parse(const char *text)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = NULL;
	size_t len = strlen(text), end;

	if (!tok || len > INT_MAX)
		goto out;
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
		goto out;
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
		if (!isspace((unsigned char)text[end])) {
			json_object_put(o);
			o = NULL;
			break;
		}
out:
	if (tok)
		json_tokener_free(tok);
	return o;
}

/*
 * A sysfs attribute prints at most a page (fs/sysfs/file.c, PAGE_SIZE: 4096
 * on x86-64); the sysctls hosttune sets are numbers. Longer is no value of ours.
 */
#define LIVE_VALUE_MAX 4096

/* The kind whose file @path is, or its HT_BACKUP_SUFFIX copy; NULL: none (or ENOMEM). */
static const struct ht_kind *managed_kind(const char *path)
{
	size_t n = strlen(path), sl = strlen(HT_BACKUP_SUFFIX);
	_cleanup_free_ char *copy = NULL;

	if (n > sl && strcmp(path + n - sl, HT_BACKUP_SUFFIX) == 0) {
		copy = strndup(path, n - sl);
		if (!copy)
			return NULL;
		path = copy;
	}
	return ht_kind_of_file(path);
}

bool ht_managed_file(const char *path)
{
	return managed_kind(path) != NULL;
}

/* True when @dir is @path or a directory above it, "/" left out. */
static bool dir_on(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	return n > 1 && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* True when @dir is a directory above @path ("/etc" above "/etc/sysctl.d/x"), "/" left out. */
static bool above(const char *dir, const char *path)
{
	return dir[0] == '/' && dir_on(dir, path) && path[strlen(dir)] == '/';
}

bool ht_managed_dir(const char *dir)
{
	/* A directory above the default state file. */
	if (above(dir, HT_STATE_FILE))
		return true;
	for (size_t k = 0; k < HT_NKINDS; k++) {
		const struct ht_kind *kind = ht_kinds[k];

		for (size_t i = 0; kind->dirs[i]; i++)
			if (dir_on(dir, kind->dirs[i]))
				return true;
		if (kind->instance_dir && kind->instance_dir(dir))
			return true;
	}
	return false;
}

int ht_state_keys(const struct ht_ruleset *rs, struct ht_paths *keys)
{
	for (size_t i = 0; rs && i < ht_ruleset_rule_count(rs); i++) {
		const struct ht_rule *r = ht_ruleset_rule_at(rs, i);
		enum ht_target_kind k = ht_rule_kind(r);

		if ((k == HT_TARGET_SYSCTL || k == HT_TARGET_MODULE || k == HT_TARGET_CHANNELS) &&
		    ht_rule_target(r) && ht_paths_add(keys, ht_rule_target(r)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static struct json_object *jstr_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static const char *jget_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool same(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

/* Where the state file is: below --root by default, or --state FILE as given. */
struct state_loc {
	const char *root;  /* --root, also for a --state FILE below it; NULL for another FILE */
	const char *path;  /* below root when root is set */
	char *shown;       /* for messages */
	char *own;         /* path's storage when made here */
	/*
	 * The state file is the tree's (the default, or a --state FILE below
	 * the tree): apply records the directories it creates for it, and
	 * revert removes them with it. A FILE elsewhere is in the caller's.
	 */
	bool in_tree;
};

/*
 * @p with no empty or "." component ("/x//./y" is "/x/y"), in place; ".."
 * stays. Returns true when a ".." is left in it.
 */
static bool path_tidy(char *p)
{
	char *out = p;
	bool dotdot = false;

	for (const char *c = p; *c;) {
		size_t len;

		c += strspn(c, "/");
		len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.')) {
			c += len;
			continue;
		}
		dotdot = dotdot || (len == 2 && c[0] == '.' && c[1] == '.');
		*out++ = '/';
		memmove(out, c, len);
		out += len;
		c += len;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
	return dotdot;
}

/*
 * A --state FILE below a --root tree is the tree's path from there on, read,
 * written and swept with no link followed, as the tree's own files are: a
 * link put in its way after the command line was checked leads nowhere.
 * Where it is in the tree is worked out once, against where the tree
 * ht_root_pin() opened is now: a path below it as written is the tree's
 * path from there on; another (through a link to the tree, or through one
 * repointed since the command line was checked) has its directory
 * resolved as far as it exists (links followed, as the command line was
 * checked) and must end in the tree.
 * Returns 0; 1 when it does not lead into the tree; -EXDEV for a '..' below
 * it; -ENOMEM.
 */
static int state_in_root(struct state_loc *sl, const char *root, const char *state_path)
{
	_cleanup_free_ char *real = ht_root_dir_real(root), *abs = NULL;
	char cwd[PATH_MAX], base[PATH_MAX];
	const char *rest = NULL;
	size_t n, cut;

	if (!real)
		return errno == ENOMEM ? -ENOMEM : 1;
	if (state_path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return 1;
	if (state_path[0] == '/' ? !(abs = strdup(state_path)) :
	    asprintf(&abs, "%s/%s", cwd, state_path) < 0)
		return -ENOMEM;
	n = strlen(real);
	if (strcmp(real, "/") == 0)
		return 1;
	if (strncmp(abs, real, n) == 0 && abs[n] == '/') {
		sl->own = strdup(abs + n);
		if (!sl->own)
			return -ENOMEM;
	} else {
		/* Its directory, as far as it exists; the file's own name is never resolved. */
		for (cut = (size_t)(strrchr(abs, '/') - abs); cut > 0; cut--) {
			char save = abs[cut];

			if (save != '/')
				continue;
			abs[cut] = '\0';
			rest = realpath(abs, base);
			abs[cut] = save;
			if (rest)
				break;
		}
		if (!rest || strncmp(base, real, n) != 0 || (base[n] != '/' && base[n] != '\0'))
			return 1;
		if (asprintf(&sl->own, "%s%s", base + n, abs + cut) < 0) {
			sl->own = NULL;
			return -ENOMEM;
		}
	}
	sl->root = root;
	sl->path = sl->own;
	sl->in_tree = true;
	/* Walked one component at a time: no '..' below the tree, and no '.' in what is recorded. */
	if (path_tidy(sl->own))
		return -EXDEV;
	return 0;
}

/* Returns 0, -ENOMEM, or -EBADMSG (@err says why) for a --state path the tree cannot have. */
static int state_loc_init(struct state_loc *sl, const char *root, const char *state_path,
                          struct ht_error *err)
{
	int r = 0;

	*sl = (struct state_loc){ .root = state_path ? NULL : root,
	                          .path = state_path ? state_path : HT_STATE_FILE,
	                          .in_tree = !state_path };
	if (state_path && ht_root_confined(root))
		r = state_in_root(sl, root, state_path);
	if (r == -EXDEV)
		return ht_error_set(err, EBADMSG, "--state %s has a '..': below --root %s hosttune "
		                    "follows none (give the path without it)", state_path, root);
	/* Nothing outside the tree is written: not even through a link repointed since. */
	if (r == 1)
		return ht_error_set(err, EBADMSG, "--state %s does not lead into the tree of "
		                    "--root %s: hosttune writes nothing outside it", state_path,
		                    root);
	if (r < 0)
		return r;
	sl->shown = state_path ? strdup(state_path) : ht_root_join(root, HT_STATE_FILE);
	return sl->shown ? 0 : -ENOMEM;
}

static void state_loc_done(struct state_loc *sl)
{
	free(sl->shown);
	free(sl->own);
}

/*
 * Errors of reading a file that say what is there, not that reading failed:
 * a symlink, a '..', a directory or another kind of file, a NUL byte, a file
 * too large. apply and revert refuse such a file (-EBADMSG); an I/O error
 * stays what it is.
 */
static bool refusal(int r)
{
	return r == -ELOOP || r == -EXDEV || r == -EISDIR || r == -EINVAL || r == -EBADMSG ||
	       r == -EFBIG || r == -ENOTDIR || r == -EBUSY;
}

/* True when the JSON text @s has a "\u0000" escape: a NUL that json-c would cut a string at. */
static bool json_nul_escape(const char *s)
{
	for (; *s; s++) {
		if (*s != '\\')
			continue;
		if (*++s == 'u' && strncmp(s + 1, "0000", 4) == 0)
			return true;
		if (!*s)
			break;
	}
	return false;
}

/* The end of the JSON string that starts at @s (its '"'): past its closing '"'. */
static const char *json_string_end(const char *s)
{
	for (s++; *s && *s != '"'; s++)
		if (*s == '\\' && s[1])
			s++;
	return *s ? s + 1 : s;
}

/*
 * True when an object of the JSON text @s (one json-c parsed) names a member
 * twice: json-c keeps the last, so that what one reader takes for an entry
 * another would not. @name gets the name. -ENOMEM as false with @name "".
 */
static bool json_dup_member(const char *s, char *name, size_t size)
{
	/* The names of each open object: where its names start in @names. */
	size_t starts[64], depth = 0, n = 0, cap = 0;
	char **names = NULL;
	bool dup = false;

	name[0] = '\0';
	while (*s && !dup) {
		const char *end, *after;

		if (*s == '{' || *s == '[') {
			if (depth < ARRAY_SIZE(starts))
				starts[depth] = n;
			depth++;
			s++;
			continue;
		}
		if (*s == '}' || *s == ']') {
			if (depth > 0 && --depth < ARRAY_SIZE(starts)) {
				for (size_t k = starts[depth]; k < n; k++)
					free(names[k]);
				n = starts[depth];
			}
			s++;
			continue;
		}
		if (*s != '"') {
			s++;
			continue;
		}
		end = json_string_end(s);
		after = end + strspn(end, " \t\r\n");
		/* A member's name is the string a ':' follows. */
		if (*after == ':' && depth > 0 && depth <= ARRAY_SIZE(starts)) {
			_cleanup_free_ char *quoted = strndup(s, (size_t)(end - s));
			struct json_object *o = quoted ? json_tokener_parse(quoted) : NULL;
			const char *v = o ? json_object_get_string(o) : NULL;
			char *copy = v ? strdup(v) : NULL;

			json_object_put(o);
			if (copy && n == cap) {
				char **more = realloc(names, (cap * 2 + 8) * sizeof(*names));

				if (more) {
					names = more;
					cap = cap * 2 + 8;
				}
			}
			if (!copy || n == cap) {
				free(copy);
				break;
			}
			for (size_t k = starts[depth - 1]; k < n && !dup; k++)
				dup = strcmp(names[k], copy) == 0;
			if (dup)
				snprintf(name, size, "%s", copy);
			names[n++] = copy;
		}
		s = end;
	}
	for (size_t k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return dup;
}

/*
 * The state file's object, or a new empty one when there is none (*raw
 * NULL). Returns -EBADMSG when it is not a state file apply wrote (not
 * JSON, a symlink, a NUL byte or "\u0000", another user's, writable by
 * others), or the error reading it (err names it).
 */
static int state_load(const struct state_loc *sl, struct json_object **out, char **raw,
                      struct ht_error *err)
{
	struct json_object *o, *files, *live;
	struct stat st;
	int r;

	r = ht_file_read_stat_at(sl->root, sl->path, raw, &st, err);
	if (r < 0)
		return refusal(r) ? -EBADMSG : r;
	/* apply writes it 0600 as the user running it: anyone else's is no state of ours. */
	if (*raw && st.st_uid != geteuid())
		return ht_error_set(err, EBADMSG, "%s: owned by uid %u, not by uid %u (the user "
		                    "running hosttune): hosttune takes only a state file of its "
		                    "own", sl->shown, (unsigned)st.st_uid, (unsigned)geteuid());
	if (*raw && (st.st_mode & (S_IWGRP | S_IWOTH)))
		return ht_error_set(err, EBADMSG, "%s: writable by its group or by others (mode "
		                    "%04o): hosttune takes only a state file no one else may "
		                    "write (chmod go-w it if it is yours)", sl->shown,
		                    (unsigned)(st.st_mode & 07777));
	if (*raw && json_nul_escape(*raw))
		return ht_error_set(err, EBADMSG, "%s: holds a NUL character (\\u0000) in a string "
		                    "or name: not a state file apply writes", sl->shown);
	if (!*raw) {
		struct json_object *v = json_object_new_int(1), *f = json_object_new_array(),
		                   *l = json_object_new_array();

		o = json_object_new_object();
		/* Every member made, or none: a state without its arrays is no state. */
		if (!o || !v || !f || !l || json_object_object_add(o, "version", v) < 0 ||
		    (v = NULL, json_object_object_add(o, "files", f) < 0) ||
		    (f = NULL, json_object_object_add(o, "live", l) < 0)) {
			json_object_put(o);
			json_object_put(v);
			json_object_put(f);
			json_object_put(l);
			return -ENOMEM;
		}
		*out = o;
		return 0;
	}
	o = ht_state_parse(*raw);
	/*
	 * json-c says nothing of why a parse failed: a state file that did not
	 * parse while memory runs out is not called foreign. Its parse needs a
	 * few times its size; when that much cannot be had now, -ENOMEM.
	 */
	if (!o) {
		void *probe = malloc(strlen(*raw) * 4 + 4096);

		if (!probe)
			return -ENOMEM;
		free(probe);
	}
	if (!o || !json_object_object_get_ex(o, "files", &files) ||
	    !json_object_is_type(files, json_type_array) ||
	    !json_object_object_get_ex(o, "live", &live) ||
	    !json_object_is_type(live, json_type_array)) {
		json_object_put(o);
		return ht_error_set(err, EBADMSG, "%s: not a hosttune state file (expected "
		                    "JSON with \"files\" and \"live\" arrays)", sl->shown);
	}
	{
		char name[128];

		if (json_dup_member(*raw, name, sizeof(name))) {
			json_object_put(o);
			return ht_error_set(err, EBADMSG, "%s: an object names \"%s\" twice: not a "
			                    "state file apply writes", sl->shown, name);
		}
	}
	*out = o;
	return 0;
}

/* ---- state validation: revert and apply act on nothing a state file could smuggle in ---- */

/* Absolute; no empty, "." or ".." component; no trailing '/'; no control character. */
static bool path_clean(const char *p)
{
	if (p[0] != '/' || !p[1])
		return false;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	for (const char *c = p; *c;) {
		size_t len;

		c++;
		len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
	}
	return true;
}

/* The procfs/sysfs file of a path-kind live key, as the plan derives it; NULL when none. */
static char *live_key_path(const char *key)
{
	const struct ht_kind *k = ht_kind_of_live_key(key);

	return k ? k->live_path(key) : NULL;
}

/*
 * A value apply writes to, or read from, a procfs/sysfs file: an integer
 * (the plan takes only a finding with an integer recommendation, and only
 * a key that reads as one integer), as the kernel prints it.
 */
static bool live_value_ok(const char *s)
{
	const char *d = s + (*s == '-');

	return strlen(s) <= 20 && *d && strspn(d, "0123456789") == strlen(d);
}

static bool count_ok(const char *s)
{
	char *end;
	unsigned long long n;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	n = strtoull(s, &end, 10);
	return !*end && errno == 0 && n >= 1 && n <= UINT32_MAX;
}

/* A JSON value for a message, quoted and escaped as JSON prints it. */
static const char *jtext(struct json_object *v)
{
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
	                                         JSON_C_TO_STRING_NOSLASHESCAPE);
}

static int entry_bad(struct ht_error *err, const char *spath, const char *arr, size_t i,
                     const char *fmt, ...) _printf_(5, 6);

static int entry_bad(struct ht_error *err, const char *spath, const char *arr, size_t i,
                     const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return ht_error_set(err, EBADMSG, "%s: %s entry %zu: %s", spath, arr, i + 1, why);
}

/* True when @o has member @key of @type (or null when @null_ok); false when absent. */
static bool jmember(struct json_object *o, const char *key, enum json_type type, bool null_ok,
                    bool *present)
{
	struct json_object *v;

	*present = json_object_object_get_ex(o, key, &v);
	if (!*present)
		return false;
	return json_object_is_type(v, type) || (null_ok && !v);
}

/* What a state file is checked against: what apply writes for this tree. */
struct state_want {
	const struct state_loc *sl;
	bool confined;               /* a --root: no channels are set there */
	const struct ht_paths *keys; /* the live keys a rule sets (ht_state_keys()) */
	char *root;                  /* this tree as one path, "/" for the host */
	char *machine_id;            /* its machine ID, NULL for none */
};

/*
 * Fills @w for a run on @root (@w->root and ->machine_id allocated here,
 * state_want_done() frees them). A tree realpath(3) cannot resolve counts
 * as the path given. 0 or -ENOMEM.
 */
static int state_want_init(struct state_want *w, const struct state_loc *sl, const char *root,
                           const struct ht_paths *keys)
{
	int r;

	*w = (struct state_want){ .sl = sl, .confined = ht_root_confined(root), .keys = keys };
	r = ht_root_canonical(root, &w->root);
	if (r < 0 && r != -ENOMEM)
		w->root = strdup(root);
	if (!w->root)
		return -ENOMEM;
	return ht_machine_id_read(root, &w->machine_id);
}

static void state_want_done(struct state_want *w)
{
	free(w->root);
	free(w->machine_id);
}

/*
 * Whether @text is a file apply writes at @path: hosttune's header, then
 * only blank lines, comments and lines its kind's file may hold
 * (file_line_ok()); no control character, no line continued with a
 * backslash (modprobe.d and systemd would join it with the next). 0 when it
 * is, else the number of the first line that is not (1: no header), its
 * text in @shown (control characters as '?', cut to 80 bytes).
 */
static size_t file_text_bad(const struct ht_kind *k, const char *path, const char *text,
                            char *shown, size_t size)
{
	size_t no = 1;

	for (const char *p = text; *p; no++) {
		size_t len = strcspn(p, "\n"), b = strspn(p, " \t");
		char line[512];
		bool ok = len < sizeof(line) && !(len > 0 && p[len - 1] == '\\');

		snprintf(shown, size, "%.*s", (int)(len < 80 ? len : 80), p);
		for (char *c = shown; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		for (size_t c = 0; ok && c < len; c++)
			ok = (unsigned char)p[c] >= 0x20 ? p[c] != 0x7f : p[c] == '\t';
		if (ok && no == 1)
			ok = strncmp(p, HT_FILE_HEADER, strlen(HT_FILE_HEADER)) == 0;
		if (ok && b < len && p[b] != '#') {
			memcpy(line, p, len);
			line[len] = '\0';
			ok = k->file_line_ok && k->file_line_ok(path, line);
		}
		if (!ok)
			return no;
		p += len + (p[len] == '\n');
	}
	return *text ? 0 : 1;
}

/* A file entry as apply records one of the plan's files. */
static int check_file_entry(struct json_object *e, size_t i, const char *sp, struct ht_error *err)
{
	static const char *const texts[] = { "content", "written" };
	struct json_object *v;
	const char *path;
	bool present;

	if (!json_object_is_type(e, json_type_object))
		return entry_bad(err, sp, "files", i, "not an object");
	if (!json_object_object_get_ex(e, "path", &v) || !json_object_is_type(v, json_type_string))
		return entry_bad(err, sp, "files", i, "no \"path\" string");
	path = json_object_get_string(v);
	/* The plan's own files; never a copy --force keeps (apply records the file it replaces). */
	if (!path_clean(path) || !ht_kind_of_file(path))
		return entry_bad(err, sp, "files", i, "path %.300s is not a file hosttune writes",
		                 jtext(v));
	for (size_t k = 0; k < ARRAY_SIZE(texts); k++)
		if (!jmember(e, texts[k], json_type_string, true, &present) &&
		    (present || k == 0))
			return entry_bad(err, sp, "files", i, "\"%s\" is %s: not a string or null",
			                 texts[k], present ? "of the wrong type" : "missing");
	/*
	 * What apply wrote is hosttune's file; so is what was there before,
	 * unless --force took over a file that was not (revert restores that
	 * one only from the copy apply kept beside it: revert_file()).
	 */
	for (size_t k = 0; k < ARRAY_SIZE(texts); k++) {
		const char *text = jget_str(e, texts[k]);
		char shown[96];
		size_t bad;

		if (!text || (k == 0 && !ht_has_header(text)))
			continue;
		bad = file_text_bad(ht_kind_of_file(path), path, text, shown, sizeof(shown));
		if (bad)
			return entry_bad(err, sp, "files", i, "\"%s\" line %zu '%s' is not a line "
			                 "hosttune writes in %s", texts[k], bad, shown, path);
	}
	if (!jmember(e, "existed", json_type_boolean, false, &present) && present)
		return entry_bad(err, sp, "files", i, "\"existed\" is not true or false");
	if (!jmember(e, "mode", json_type_int, false, &present) && present)
		return entry_bad(err, sp, "files", i, "\"mode\" is not a number");
	if (present) {
		int64_t mode;

		json_object_object_get_ex(e, "mode", &v);
		mode = json_object_get_int64(v);
		if (mode < 0 || mode > 07777)
			return entry_bad(err, sp, "files", i,
			                 "\"mode\" %lld is not a permission mode", (long long)mode);
		/* A configuration file has none of them; revert would give them to what it writes. */
		if (mode & 07000)
			return entry_bad(err, sp, "files", i, "\"mode\" 0%llo has setuid, setgid "
			                 "or sticky bits: no file hosttune writes has them",
			                 (unsigned long long)mode);
	}
	return 0;
}

/* A live entry as apply records a value of the plan: a key a rule sets, integer values. */
static int check_live_entry(struct json_object *e, size_t i, const struct state_want *w,
                            struct ht_error *err)
{
	const char *sp = w->sl->shown;
	struct json_object *v;
	const char *key, *kind, *old, *written;
	bool present;

	if (!json_object_is_type(e, json_type_object))
		return entry_bad(err, sp, "live", i, "not an object");
	key = jget_str(e, "key");
	kind = jget_str(e, "kind");
	if (!key || !*key)
		return entry_bad(err, sp, "live", i, "no \"key\" string");
	if (!jmember(e, "old", json_type_string, true, &present)) {
		json_object_object_get_ex(e, "old", &v);
		return entry_bad(err, sp, "live", i, "\"old\" is %.100s: not a string or null",
		                 present ? jtext(v) : "missing");
	}
	old = jget_str(e, "old");
	/* "written": what apply set (absent in state files of older versions). */
	if (!jmember(e, "written", json_type_string, true, &present) && present)
		return entry_bad(err, sp, "live", i, "\"written\" is not a string or null");
	written = jget_str(e, "written");
	if (kind && strcmp(kind, "path") == 0) {
		_cleanup_free_ char *want = live_key_path(key);
		const char *path = jget_str(e, "path");

		if (!w->keys || !ht_paths_has(w->keys, key))
			return entry_bad(err, sp, "live", i, "no rule sets %.100s (give the rules "
			                 "that set it with --rules)", key);
		if (!want)
			return entry_bad(err, sp, "live", i,
			                 "key \"%.100s\" names no procfs/sysfs file", key);
		if (!path || !path_clean(path) || strcmp(path, want) != 0) {
			json_object_object_get_ex(e, "path", &v);
			return entry_bad(err, sp, "live", i, "path %.300s is not the procfs/sysfs "
			                 "file of %.100s", v ? jtext(v) : "null", key);
		}
		if (old && !live_value_ok(old))
			return entry_bad(err, sp, "live", i, "\"old\" is not an integer: apply "
			                 "sets only keys that read as one");
		if (written && !live_value_ok(written))
			return entry_bad(err, sp, "live", i, "\"written\" is not an integer: apply "
			                 "writes only integers");
		return 0;
	}
	if (kind && strcmp(kind, "channels") == 0) {
		const char *ifname = jget_str(e, "ifname"), *ch = jget_str(e, "channel");
		_cleanup_free_ char *want = NULL, *target = NULL;

		if (w->confined)
			return entry_bad(err, sp, "live", i, "channels are never set under --root");
		if (!ifname || !ht_ifname_valid(ifname))
			return entry_bad(err, sp, "live", i, "\"ifname\" is not an interface name");
		if (!ch || !ht_channel_valid(ch))
			return entry_bad(err, sp, "live", i,
			                 "\"channel\" is not combined, rx or tx");
		if (!(want = ht_channels_key(ifname, ch)) ||
		    asprintf(&target, "nic.channels.%s", ch) < 0)
			return -ENOMEM;
		if (strcmp(key, want) != 0)
			return entry_bad(err, sp, "live", i, "key %.100s is not %s", key, want);
		if (!w->keys || !ht_paths_has(w->keys, target))
			return entry_bad(err, sp, "live", i, "no rule sets %s (give the rules that "
			                 "set it with --rules)", target);
		if ((old && !count_ok(old)) || (written && !count_ok(written)))
			return entry_bad(err, sp, "live", i, "\"%s\" is not a channel count",
			                 old && !count_ok(old) ? "old" : "written");
		return 0;
	}
	return entry_bad(err, sp, "live", i, "\"kind\" is not \"path\" or \"channels\"");
}

/* "--root /srv/img (machine-id 0123...)", "the host (machine-id none)"; NULL on ENOMEM. */
static char *owner_text(const char *root, const char *machine_id)
{
	char *s;

	if (asprintf(&s, "%s%s (machine-id %s)", strcmp(root, "/") == 0 ? "the host" : "--root ",
	             strcmp(root, "/") == 0 ? "" : root, machine_id ? machine_id : "none") < 0)
		return NULL;
	return s;
}

/*
 * The tree and machine the state belongs to ("root", "machine_id"): 1 when
 * it records them and they are this tree's, 0 when it records neither (a
 * state file of a hosttune that did not record them: taken as this tree's),
 * -EBADMSG (err says whose it is and what to do) otherwise.
 */
static int check_owner(struct json_object *state, const struct state_want *w,
                       struct ht_error *err)
{
	const char *sp = w->sl->shown, *root, *mid;
	_cleanup_free_ char *theirs = NULL, *ours = NULL;
	struct json_object *rv, *mv;
	bool has_root = json_object_object_get_ex(state, "root", &rv);
	bool has_mid = json_object_object_get_ex(state, "machine_id", &mv);

	if (!has_root && !has_mid)
		return 0;
	if (!has_root || !has_mid)
		return ht_error_set(err, EBADMSG, "%s: \"%s\" is missing (apply records the tree "
		                    "and the machine-id together)", sp,
		                    has_root ? "machine_id" : "root");
	root = json_object_is_type(rv, json_type_string) ? json_object_get_string(rv) : NULL;
	if (!root || root[0] != '/')
		return ht_error_set(err, EBADMSG, "%s: \"root\" is not a path", sp);
	mid = json_object_is_type(mv, json_type_string) ? json_object_get_string(mv) : NULL;
	if (mv && !mid)
		return ht_error_set(err, EBADMSG, "%s: \"machine_id\" is not a string or null", sp);
	if (strcmp(root, w->root) == 0 && same(mid, w->machine_id))
		return 1;
	theirs = owner_text(root, mid);
	ours = owner_text(w->root, w->machine_id);
	if (!theirs || !ours)
		return -ENOMEM;
	return ht_error_set(err, EBADMSG, "%s: the state of %s, not of %s: revert it there, or "
	                    "remove it to keep this %s as it is", sp, theirs, ours,
	                    strcmp(w->root, "/") == 0 ? "host" : "tree");
}

/*
 * -EBADMSG (err names the entry) unless every entry is one hosttune could
 * have written for this tree. @owned (may be NULL): whether the state
 * records its tree and machine (check_owner()).
 */
static int state_check(struct json_object *state, const struct state_want *w, bool *owned,
                       struct ht_error *err)
{
	struct json_object *files, *live, *dirs, *v;
	const char *sp = w->sl->shown;
	int r;

	if (json_object_object_get_ex(state, "version", &v) &&
	    (!json_object_is_type(v, json_type_int) || json_object_get_int(v) != 1))
		return ht_error_set(err, EBADMSG, "%s: \"version\" is not 1", sp);
	r = check_owner(state, w, err);
	if (r < 0)
		return r;
	if (owned)
		*owned = r > 0;
	json_object_object_get_ex(state, "files", &files);
	json_object_object_get_ex(state, "live", &live);
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		struct json_object *e = json_object_array_get_idx(files, i);

		r = check_file_entry(e, i, sp, err);
		if (r < 0)
			return r;
		for (size_t k = 0; k < i; k++)
			if (strcmp(jget_str(e, "path"),
			           jget_str(json_object_array_get_idx(files, k), "path")) == 0)
				return entry_bad(err, sp, "files", i, "path %s again",
				                 jget_str(e, "path"));
	}
	for (size_t i = 0; i < json_object_array_length(live); i++) {
		struct json_object *e = json_object_array_get_idx(live, i);

		r = check_live_entry(e, i, w, err);
		if (r < 0)
			return r;
		for (size_t k = 0; k < i; k++)
			if (strcmp(jget_str(e, "key"),
			           jget_str(json_object_array_get_idx(live, k), "key")) == 0)
				return entry_bad(err, sp, "live", i, "key %s again",
				                 jget_str(e, "key"));
		/* One procfs/sysfs file under two spellings of its key is the same key twice. */
		for (size_t k = 0; jget_str(e, "path") && k < i; k++)
			if (same(jget_str(e, "path"),
			         jget_str(json_object_array_get_idx(live, k), "path")))
				return entry_bad(err, sp, "live", i, "key %s sets %s again (as %s)",
				                 jget_str(e, "key"), jget_str(e, "path"),
				                 jget_str(json_object_array_get_idx(live, k), "key"));
	}
	if (!json_object_object_get_ex(state, "created_dirs", &dirs))
		return 0;
	if (!json_object_is_type(dirs, json_type_array))
		return ht_error_set(err, EBADMSG, "%s: \"created_dirs\" is not an array", sp);
	/*
	 * apply creates a directory only on the way to a file it writes: one of
	 * the state's files, or the state file itself when it is the tree's.
	 */
	for (size_t i = 0; i < json_object_array_length(dirs); i++) {
		struct json_object *d = json_object_array_get_idx(dirs, i);
		const char *dir = json_object_is_type(d, json_type_string) ?
		                  json_object_get_string(d) : NULL;
		bool ok = dir && w->sl->in_tree && above(dir, w->sl->path);

		for (size_t k = 0; dir && !ok && k < json_object_array_length(files); k++)
			ok = ht_managed_dir(dir) &&
			     above(dir, jget_str(json_object_array_get_idx(files, k), "path"));
		if (!dir)
			return entry_bad(err, sp, "created_dirs", i, "%.300s is not a directory",
			                 d ? jtext(d) : "null");
		if (!ok)
			return entry_bad(err, sp, "created_dirs", i, "%.300s holds no file of this "
			                 "state: apply creates a directory only for a file it writes",
			                 dir);
	}
	return 0;
}

/* ---- interrupted runs: temp files, and the state file's directories ---- */

/*
 * Adds each component of the directory @dir to @names ("etc", "sysctl.d"
 * for /etc/sysctl.d), the last one only with @last. 0 or -ENOMEM.
 */
static int add_components(struct ht_paths *names, const char *dir, bool last)
{
	for (const char *c = dir; *c;) {
		size_t len;
		_cleanup_free_ char *d = NULL;

		c += strspn(c, "/");
		len = strcspn(c, "/");
		if (len == 0 || (!last && !c[len]))
			break;
		d = strndup(c, len);
		if (!d || ht_paths_add(names, d) < 0)
			return -ENOMEM;
		c += len;
	}
	return 0;
}

/*
 * The names of the directories hosttune creates (the kinds' directories and
 * the state file's when it is the tree's, @sl), the only ones it builds
 * under a temp name (".var.hosttune-XXXXXX"). 0 or -ENOMEM.
 */
static int created_dir_names(struct ht_paths *names, const struct state_loc *sl)
{
	int r = 0;

	for (size_t k = 0; k < HT_NKINDS && r == 0; k++)
		for (size_t i = 0; ht_kinds[k]->dirs[i] && r == 0; i++)
			r = add_components(names, ht_kinds[k]->dirs[i], true);
	return r < 0 || !sl->in_tree ? r : add_components(names, sl->path, false);
}

/* @names->v and @more[0..n) as one NULL-terminated list (not owning them); NULL on ENOMEM. */
static const char **name_list(const struct ht_paths *names, const struct ht_paths *more)
{
	const char **v = calloc(names->n + more->n + 1, sizeof(*v));

	for (size_t i = 0; v && i < names->n; i++)
		v[i] = names->v[i];
	for (size_t i = 0; v && i < more->n; i++)
		v[names->n + i] = more->v[i];
	return v;
}

/* Adds @path's directories to @dirs: "/", "/etc", "/etc/sysctl.d" for a file in /etc/sysctl.d. */
static int add_ancestors(struct ht_paths *dirs, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return ht_paths_add(dirs, ".");
	for (const char *c = path; c <= slash; c++) {
		_cleanup_free_ char *d = NULL;

		if (*c != '/')
			continue;
		d = c == path ? strdup("/") : strndup(path, (size_t)(c - path));
		if (!d || ht_paths_add(dirs, d) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Whether host path @path is @dir or below it. */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * Removes what an interrupted apply or revert left (ht_tmp_sweep()): in the
 * directories of the files hosttune writes and of the state file, and below
 * a --root in those of the live values @live_paths (plain files there,
 * replaced through temp files too). Errors are not fatal: what stays is
 * tried again next time. @swept (may be NULL) receives the paths removed.
 * @more (@nmore): other files of hosttune's (the plan's or the state's):
 * their directories too, and a service's "UNIT.d" as a name hosttune
 * builds directories under.
 */
static int sweep(const char *root, const struct state_loc *sl, const char *const *live_paths,
                 size_t nlive, const char *const *more, size_t nmore, struct ht_paths *swept)
{
	_cleanup_(ht_paths_free) struct ht_paths dirs = { 0 }, sdirs = { 0 }, ignored = { 0 };
	_cleanup_(ht_paths_free) struct ht_paths names = { 0 }, units = { 0 }, none = { 0 };
	_cleanup_(ht_paths_free) struct ht_paths all_sdirs = { 0 };
	_cleanup_free_ const char **all = NULL, **base = NULL;
	int r = created_dir_names(&names, sl);

	if (!swept)
		swept = &ignored;
	/* The kinds' directories, but those of one instance each (UNIT.d): below. */
	for (size_t k = 0; k < HT_NKINDS && r == 0; k++) {
		const char *const *d = ht_kinds[k]->dirs;

		for (size_t i = 0; !ht_kinds[k]->dir_per_instance && d[i] && r == 0; i++) {
			r = add_ancestors(&dirs, d[i]);
			if (r == 0)
				r = ht_paths_add(&dirs, d[i]);
		}
	}
	for (size_t i = 0; i < nlive && r == 0 && ht_root_confined(root); i++)
		if (live_paths[i])
			r = add_ancestors(&dirs, live_paths[i]);
	/*
	 * A state file given as a host path (--state): its own directories
	 * only, for its own temp names (below), and none above the tree.
	 */
	if (r == 0 && sl->root == root)
		r = add_ancestors(&dirs, sl->path);
	else if (r == 0)
		r = add_ancestors(&all_sdirs, sl->path);
	for (size_t i = 0; r == 0 && i < all_sdirs.n; i++)
		if (!ht_root_confined(root) || path_within(all_sdirs.v[i], root))
			r = ht_paths_add(&sdirs, all_sdirs.v[i]);
	/* A known file in a directory of its own: that directory, and its name. */
	for (size_t i = 0; i < nmore && r == 0; i++) {
		const struct ht_kind *k = more[i] ? managed_kind(more[i]) : NULL;
		const char *p = more[i], *slash;
		size_t dl;

		if (!k || !k->dir_per_instance)
			continue;
		dl = strlen(k->dirs[0]) + 1;
		r = add_ancestors(&dirs, p);
		slash = strchr(p + dl, '/');
		if (r == 0 && slash) {
			_cleanup_free_ char *d = strndup(p + dl, (size_t)(slash - p - dl));

			r = d ? ht_paths_add(&units, d) : -ENOMEM;
		}
	}
	if (r < 0)
		return r;
	all = name_list(&names, &units);
	if (!all)
		return -ENOMEM;
	ht_tmp_sweep(root, &dirs, all, NULL, swept);
	if (sdirs.n) {
		/*
		 * Outside the tree only what writing this state file leaves: a
		 * temp file of its name, temp directories of its path's names.
		 */
		_cleanup_(ht_paths_free) struct ht_paths own = { 0 };
		const char *slash = strrchr(sl->path, '/');
		const char *file[] = { slash ? slash + 1 : sl->path, NULL };

		r = add_components(&own, sl->path, false);
		base = r < 0 ? NULL : name_list(&own, &none);
		if (!base)
			return -ENOMEM;
		ht_tmp_sweep(NULL, &sdirs, base, file, swept);
	}
	return 0;
}

/*
 * The outermost directory that apply created for the state file and that
 * holds it (from @created, host paths), or NULL: a --state FILE outside the
 * tree, or none created (/var/lib/hosttune existed before).
 */
static const char *state_top(const struct state_loc *sl, const struct ht_paths *created)
{
	const char *top = NULL;

	if (!sl->in_tree)
		return NULL;
	for (size_t i = 0; i < created->n; i++)
		if (above(created->v[i], sl->path) && (!top || strlen(created->v[i]) < strlen(top)))
			top = created->v[i];
	return top;
}

/* True when @dir is on the way to the tree's state file: it goes with the state file. */
static bool on_state_path(const struct state_loc *sl, const char *dir)
{
	return sl->in_tree && above(dir, sl->path);
}

/*
 * Removes the state file and, when apply created them (@top), its
 * directories: at once by ht_chain_remove_at() when they hold nothing else;
 * else the file, then each of them that is empty, deepest first. @report
 * (may be NULL) gets a line per directory. Returns 0 or the first error.
 */
static int state_discard(const struct state_loc *sl, const char *root, const char *top,
                         FILE *report, bool *unsynced, bool *retired, struct ht_error *err)
{
	bool changed;
	int r;

	*retired = false;
	if (top) {
		r = ht_chain_remove_at(sl->root, top, sl->path, retired, unsynced, err);
		/*
		 * Renamed away but its temp name not removed: the state file is
		 * gone from its place (*retired), what is left has a name the next
		 * apply or revert removes; the caller says so.
		 */
		if (r < 0)
			return r;
	}
	if (*retired) {
		if (report)
			for (const char *d = sl->path + strlen(sl->path); d > sl->path + strlen(top);)
				if (*--d == '/')
					fprintf(report, "removed directory %.*s\n", (int)(d - sl->path),
					        sl->path);
		return 0;
	}
	r = ht_file_remove_at(sl->root, sl->path, &changed, err);
	/* Removed, but the fsync of its directory failed: as far as anyone can see, it is gone. */
	if (r < 0 && !changed)
		return r;
	if (r < 0)
		*unsynced = true;
	if (!top)
		return 0;
	/* Something else is in them: the empty ones go, deepest first. */
	for (const char *d = sl->path + strlen(sl->path); d > sl->path + strlen(top);) {
		_cleanup_free_ char *dir = NULL;
		struct ht_error e2 = { "" };
		bool removed;

		if (*--d != '/')
			continue;
		dir = strndup(sl->path, (size_t)(d - sl->path));
		if (!dir)
			return -ENOMEM;
		r = ht_dir_remove_at(root, dir, &removed, &e2);
		if (r == -ENOTEMPTY) {
			if (report)
				fprintf(report, "left directory %s: not empty\n", dir);
			break;
		}
		if (r < 0) {
			*err = e2;
			return r;
		}
		if (removed && report)
			fprintf(report, "removed directory %s\n", dir);
	}
	return 0;
}

/* ---- apply ---- */

/* What apply did to one file of the plan, so that exactly that is undone. */
struct file_step {
	mode_t mode;      /* permission bits before apply (0644 for a new file) */
	bool backup_done; /* PATH.hosttune-orig written */
	bool main_done;   /* PATH replaced or removed */
};

/* Records what the plan changes, keeping the oldest "before" of every file and value. */
static int state_merge(struct json_object *state, const struct ht_plan *p,
                       const struct file_step *fs, const struct ht_paths *dirs,
                       const struct state_want *w)
{
	struct json_object *files, *live, *cdirs;

	json_object_object_get_ex(state, "files", &files);
	json_object_object_get_ex(state, "live", &live);
	/* Whose it is: revert refuses it in another tree or on another machine. */
	json_object_object_add(state, "root", json_object_new_string(w->root));
	json_object_object_add(state, "machine_id", jstr_or_null(w->machine_id));
	json_object_object_add(state, "profile", json_object_new_string(p->profile));
	/* The drop counters at this apply (replacing an earlier apply's): audit counts from them. */
	if (p->ct_drop >= 0 && p->ct_early_drop >= 0) {
		struct json_object *c = json_object_new_object();

		if (!c)
			return -ENOMEM;
		json_object_object_add(c, "conntrack.stat.drop", json_object_new_int64(p->ct_drop));
		json_object_object_add(c, "conntrack.stat.early_drop",
		                       json_object_new_int64(p->ct_early_drop));
		json_object_object_add(c, "boot_id", jstr_or_null(p->boot_id));
		json_object_object_add(state, "counters", c);
	} else
		json_object_object_del(state, "counters");
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ht_plan_file *f = &p->files[i];
		struct json_object *e = NULL;

		if (!ht_plan_file_changes(f))
			continue;
		for (size_t k = 0; k < json_object_array_length(files) && !e; k++)
			if (same(jget_str(json_object_array_get_idx(files, k), "path"), f->path))
				e = json_object_array_get_idx(files, k);
		if (!e) {
			e = json_object_new_object();
			if (!e)
				return -ENOMEM;
			json_object_object_add(e, "path", json_object_new_string(f->path));
			json_object_object_add(e, "existed",
			                       json_object_new_boolean(f->old != NULL));
			json_object_object_add(e, "content", jstr_or_null(f->old));
			json_object_object_add(e, "mode", json_object_new_int((int)fs[i].mode));
			json_object_array_add(files, e);
		}
		/* What hosttune wrote: revert leaves a file alone that differs from it. */
		json_object_object_add(e, "written", jstr_or_null(f->new));
	}
	for (size_t i = 0; i < p->nlive; i++) {
		const struct ht_plan_live *l = &p->live[i];
		struct json_object *e = NULL;

		if (!ht_plan_live_changes(l))
			continue;
		for (size_t k = 0; k < json_object_array_length(live) && !e; k++)
			if (same(jget_str(json_object_array_get_idx(live, k), "key"), l->key))
				e = json_object_array_get_idx(live, k);
		/* The first apply's "old" stays; "written" is this apply's value. */
		if (e) {
			json_object_object_add(e, "written", jstr_or_null(l->new));
			continue;
		}
		e = json_object_new_object();
		if (!e)
			return -ENOMEM;
		json_object_object_add(e, "key", json_object_new_string(l->key));
		json_object_object_add(e, "kind", json_object_new_string(
		                       l->kind == HT_LIVE_CHANNELS ? "channels" : "path"));
		json_object_object_add(e, "path", jstr_or_null(l->path));
		json_object_object_add(e, "ifname", jstr_or_null(l->ifname));
		json_object_object_add(e, "channel", jstr_or_null(l->channel));
		json_object_object_add(e, "old", jstr_or_null(l->old));
		json_object_object_add(e, "written", jstr_or_null(l->new));
		json_object_array_add(live, e);
	}
	if (!json_object_object_get_ex(state, "created_dirs", &cdirs)) {
		cdirs = json_object_new_array();
		if (!cdirs)
			return -ENOMEM;
		json_object_object_add(state, "created_dirs", cdirs);
	}
	for (size_t i = 0; i < dirs->n; i++) {
		bool known = false;

		for (size_t k = 0; k < json_object_array_length(cdirs) && !known; k++)
			known = same(json_object_get_string(json_object_array_get_idx(cdirs, k)),
			             dirs->v[i]);
		if (!known)
			json_object_array_add(cdirs, json_object_new_string(dirs->v[i]));
	}
	return 0;
}

/* The largest state file revert reads (ht_file_read_at()'s limit). */
#define STATE_MAX ((size_t)1024 * 1024)

/* -EFBIG (err says so) when @state's text would be more than revert reads. */
static int state_fits(const struct state_loc *sl, struct json_object *state,
                      struct ht_error *err)
{
	const char *s = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PRETTY |
	                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = s ? strlen(s) + 1 : 0;

	if (!s)
		return -ENOMEM;
	if (n > STATE_MAX)
		return ht_error_set(err, EFBIG, "%s would be %zu bytes, over the 1 MiB revert reads "
		                    "(a file taken over with --force is kept in it)", sl->shown, n);
	return 0;
}

static int state_save(const struct state_loc *sl, struct json_object *state, bool *written,
                      struct ht_error *err)
{
	const char *s = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PRETTY |
	                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *text = NULL;

	*written = false;
	if (!s || asprintf(&text, "%s\n", s) < 0)
		return -ENOMEM;
	/* revert reads at most 1 MiB: a larger state could never be reverted. */
	if (strlen(text) > STATE_MAX)
		return ht_error_set(err, EFBIG, "%s would be %zu bytes, over the 1 MiB revert reads "
		                    "(a file taken over with --force is kept in it)", sl->shown,
		                    strlen(text));
	return ht_file_write_at(sl->root, sl->path, text, 0600, written, err);
}

/*
 * Loads @p->load_module once its files are written (ht_module_load(): with
 * the modprobe.d options apply just wrote), reads the value each after_load
 * key came up with as its old value (in the plan, for the report and a
 * rollback, and in the state, for revert) and saves the state again.
 * 0 or a negative errno (@err says why).
 */
static int load_module(struct ht_plan *p, const char *root, const struct state_loc *sl,
                       struct json_object *state, struct ht_error *err)
{
	struct json_object *live = NULL;
	bool written;
	int r = ht_module_load(root, p->load_module, err);

	if (r < 0)
		return r;
	p->module_loaded = r == 0;
	json_object_object_get_ex(state, "live", &live);
	for (size_t i = 0; i < p->nlive; i++) {
		struct ht_plan_live *l = &p->live[i];
		char *v = NULL;

		if (!l->after_load)
			continue;
		r = ht_read_file(root, l->path, &v);
		if (r < 0)
			return ht_error_set(err, -r, "%s%s after loading %s: %s",
			                    ht_root_confined(root) ? root : "", l->path, p->load_module,
			                    strerror(-r));
		v[strcspn(v, "\n")] = '\0';
		if (!live_value_ok(v)) {
			free(v);
			return ht_error_set(err, EINVAL, "%s%s after loading %s: not one integer",
			                    ht_root_confined(root) ? root : "", l->path,
			                    p->load_module);
		}
		free(l->old);
		l->old = v;
		for (size_t k = 0; live && k < json_object_array_length(live); k++) {
			struct json_object *e = json_object_array_get_idx(live, k);

			if (same(jget_str(e, "key"), l->key) && !jget_str(e, "old"))
				json_object_object_add(e, "old", json_object_new_string(v));
		}
	}
	return state_save(sl, state, &written, err);
}

/* Writes one live value: a procfs/sysfs file below @root, or channels over netlink. */
static int live_set(const char *root, enum ht_live_kind kind, const char *path,
                    const char *ifname, const char *channel, const char *value, bool *changed,
                    struct ht_error *err)
{
	if (kind == HT_LIVE_CHANNELS)
		return ht_channels_write(ifname, channel, value, changed, err);
	*changed = false;
	return ht_live_write_at(root, path, value, changed, err);
}

/*
 * Puts @content (NULL: no file) back at @path with @mode. A restore that took
 * effect but whose directory fsync then failed counts as done, with
 * *@unsynced set: what anyone reads is right, a crash may undo it.
 */
static int restore_file(const char *root, const char *path, const char *content, mode_t mode,
                        bool *unsynced, struct ht_error *err)
{
	bool changed = false;
	int r = content ? ht_file_write_at(root, path, content, mode, &changed, err) :
	                  ht_file_remove_at(root, path, &changed, err);

	if (r < 0 && changed) {
		*unsynced = true;
		return 0;
	}
	return r;
}

static char *backup_path(const char *path)
{
	char *b;

	return asprintf(&b, "%s" HT_BACKUP_SUFFIX, path) < 0 ? NULL : b;
}

/*
 * Everything apply checks before it changes anything: each file is still what
 * the plan read (and resolves below the root: no symlink), a file taken over
 * has no backup in the way, and which directories the writes will create.
 */
static int preflight(const struct ht_plan *p, const char *root, struct file_step *fs,
                     struct ht_paths *dirs, struct ht_error *err)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ht_plan_file *f = &p->files[i];
		_cleanup_free_ char *cur = NULL, *backup = NULL, *bcur = NULL;
		mode_t mode = 0644;
		int r;

		if (!ht_plan_file_changes(f))
			continue;
		r = ht_file_read_at(root, f->path, &cur, &mode, err);
		if (r < 0)
			return r;
		if (!same(cur, f->old))
			return ht_error_set(err, EBUSY, "%s%s changed since the plan was made",
			                    ht_root_confined(root) ? root : "", f->path);
		fs[i].mode = cur ? mode : 0644;
		if (cur && (mode & 07000))
			return ht_error_set(err, EINVAL, "%s%s has mode %04o: hosttune replaces no "
			                    "file with setuid, setgid or sticky bits (revert would "
			                    "give them back)", ht_root_confined(root) ? root : "",
			                    f->path, (unsigned)mode);
		if (f->new && (r = ht_dirs_missing(root, f->path, dirs, err)) < 0)
			return r;
		if (!f->foreign)
			continue;
		backup = backup_path(f->path);
		if (!backup)
			return -ENOMEM;
		r = ht_file_read_at(root, backup, &bcur, NULL, err);
		if (r < 0)
			return r;
		/* It may hold what an earlier --force took over: never overwrite it. */
		if (bcur)
			return ht_error_set(err, EEXIST, "%s%s exists: hosttune keeps the file it "
			                    "takes over there; move it away first",
			                    ht_root_confined(root) ? root : "", backup);
	}
	return 0;
}

/*
 * Adds "; rollback could not restore WHAT: WHY" to @err; WHY is @e2's
 * message, or @r's errno when the step left none (it ran out of memory
 * before it could say).
 */
static void rollback_failed(struct ht_error *err, const char *what, const struct ht_error *e2,
                            int r)
{
	size_t n = strlen(err->msg);
	const char *why = e2->msg[0] ? e2->msg : strerror(r < 0 ? -r : EIO);

	if (n < sizeof(err->msg) - 1)
		snprintf(err->msg + n, sizeof(err->msg) - n, "; rollback could not restore %s: %.*s",
		         what, (int)(sizeof(err->msg) - n), why);
}

/*
 * Undoes in reverse order what apply did (fs, live_done), the step that
 * failed included when it took effect, then the directories it created
 * (@dirs), the state file last. Returns @r, or -ENOTRECOVERABLE when
 * something could not be restored: then the state file stays, so that
 * revert can finish the job.
 */
static int rollback(const struct ht_plan *p, const char *root, const struct file_step *fs,
                    const bool *live_done, const struct state_loc *sl, bool state_written,
                    const char *old_state, const struct ht_paths *dirs, int r,
                    struct ht_error *err)
{
	bool complete = true, unsynced = false;

	for (size_t i = p->nlive; i-- > 0;) {
		const struct ht_plan_live *l = &p->live[i];
		struct ht_error e2 = { "" };
		bool changed;

		if (!live_done[i] || !l->old)
			continue;
		int rr = live_set(root, l->kind, l->path, l->ifname, l->channel, l->old, &changed, &e2);

		if (rr < 0) {
			rollback_failed(err, l->key, &e2, rr);
			complete = false;
		}
	}
	for (size_t i = p->nfiles; i-- > 0;) {
		const struct ht_plan_file *f = &p->files[i];
		struct ht_error e2 = { "" };

		int rr = fs[i].main_done ? restore_file(root, f->path, f->old, fs[i].mode, &unsynced,
		                                         &e2) : 0;

		if (rr < 0) {
			rollback_failed(err, f->path, &e2, rr);
			complete = false;
		}
		if (fs[i].backup_done) {
			_cleanup_free_ char *backup = backup_path(f->path);

			e2.msg[0] = '\0';
			rr = backup ? restore_file(root, backup, NULL, 0, &unsynced, &e2) : -ENOMEM;
			if (rr < 0) {
				rollback_failed(err, backup ? backup : f->path, &e2, rr);
				complete = false;
			}
		}
	}
	/*
	 * Deepest first (each was added after the ones that hold it); the
	 * state's go with it. A directory appears only with the file written
	 * into it: one that holds no file apply wrote was never made.
	 */
	for (size_t i = dirs->n; i-- > 0 && complete;) {
		struct ht_error e2 = { "" };
		size_t dl = strlen(dirs->v[i]);
		bool removed, made = false;
		int k;

		for (size_t f = 0; f < p->nfiles && !made; f++)
			made = (fs[f].main_done || fs[f].backup_done) &&
			       strncmp(p->files[f].path, dirs->v[i], dl) == 0 &&
			       p->files[f].path[dl] == '/';
		if (!made || on_state_path(sl, dirs->v[i]))
			continue;
		k = ht_dir_remove_at(root, dirs->v[i], &removed, &e2);
		/* Not empty: something not ours appeared in it; it stays, as revert would leave it. */
		if (k < 0 && k != -ENOTEMPTY) {
			rollback_failed(err, dirs->v[i], &e2, k);
			complete = false;
		}
	}
	if (!complete) {
		size_t n = strlen(err->msg);

		if (state_written)
			snprintf(err->msg + n, sizeof(err->msg) - n, " (%s keeps the values before "
			         "hosttune: revert restores them)", sl->shown);
		return -ENOTRECOVERABLE;
	}
	if (state_written) {
		struct ht_error e2 = { "" };
		bool retired = false;
		int k = old_state ? restore_file(sl->root, sl->path, old_state, 0600, &unsynced,
		                                 &e2) :
		                    state_discard(sl, root, state_top(sl, dirs), NULL,
		                                  &unsynced, &retired, &e2);

		if (k < 0 && retired) {
			/* Everything is back; a temp name is left for the next run to remove. */
			size_t n = strlen(err->msg);

			snprintf(err->msg + n, sizeof(err->msg) - n, "; %s", e2.msg);
		} else if (k < 0) {
			size_t n;

			rollback_failed(err, sl->shown, &e2, k);
			n = strlen(err->msg);
			snprintf(err->msg + n, sizeof(err->msg) - n, " (everything else is back; "
			         "revert removes the state file)");
			return -ENOTRECOVERABLE;
		}
	}
	if (unsynced) {
		size_t n = strlen(err->msg);

		snprintf(err->msg + n, sizeof(err->msg) - n, "; the fsync of a directory failed "
		         "during the rollback: the restored files may not survive a crash");
	}
	return r;
}

int ht_plan_apply(struct ht_plan *p, const char *root, const char *state_path,
                  const struct ht_paths *keys, bool force, struct ht_paths *swept,
                  struct ht_error *err)
{
	_cleanup_(state_loc_done) struct state_loc sl = { 0 };
	_cleanup_(state_want_done) struct state_want want = { 0 };
	_cleanup_(ht_paths_free) struct ht_paths dirs = { 0 };
	_cleanup_free_ struct file_step *fs = NULL;
	_cleanup_free_ bool *live_done = NULL;
	_cleanup_free_ char *old_state = NULL;
	_cleanup_free_ const char **live_paths = NULL;
	struct json_object *state = NULL;
	struct ht_error ignored;
	bool state_written = false;
	int r;

	if (!err)
		err = &ignored;
	err->msg[0] = '\0';
	for (size_t i = 0; i < p->nfiles; i++)
		if (ht_plan_file_changes(&p->files[i]) && p->files[i].foreign && !force)
			return ht_error_set(err, EEXIST, "%s%s exists and was not written by "
			                    "hosttune (no '%s' header); --force takes it over and "
			                    "keeps a copy as %s" HT_BACKUP_SUFFIX,
			                    ht_root_confined(root) ? root : "", p->files[i].path,
			                    HT_FILE_HEADER, p->files[i].path);
	if (ht_plan_empty(p))
		return 0;
	fs = calloc(p->nfiles + 1, sizeof(*fs));
	live_done = calloc(p->nlive + 1, sizeof(*live_done));
	live_paths = calloc(p->nlive + 1, sizeof(*live_paths));
	if (!fs || !live_done || !live_paths)
		return -ENOMEM;
	r = state_loc_init(&sl, root, state_path, err);
	if (r >= 0)
		r = state_want_init(&want, &sl, root, keys);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->nlive; i++)
		live_paths[i] = p->live[i].path;

	/* Nothing changes before this block has passed: its errors are -EBADMSG. */
	r = state_load(&sl, &state, &old_state, err);
	if (r >= 0)
		r = state_check(state, &want, NULL, err);
	/* What an interrupted run left, once the state file is known to be ours. */
	if (r >= 0) {
		_cleanup_free_ const char **fp = calloc(p->nfiles + 1, sizeof(*fp));

		for (size_t i = 0; fp && i < p->nfiles; i++)
			fp[i] = p->files[i].path;
		r = fp ? sweep(root, &sl, live_paths, p->nlive, fp, p->nfiles, swept) : -ENOMEM;
	}
	if (r >= 0)
		r = preflight(p, root, fs, &dirs, err);
	/*
	 * The tree's state file: the directories made for it are recorded too.
	 * A --state FILE elsewhere is in the caller's: none recorded or removed.
	 */
	if (r >= 0 && sl.in_tree)
		r = ht_dirs_missing(sl.root, sl.path, &dirs, err);
	if (r >= 0)
		r = state_merge(state, p, fs, &dirs, &want);
	/* apply writes no state that revert would refuse. */
	if (r >= 0)
		r = state_check(state, &want, NULL, err);
	if (r >= 0)
		r = state_fits(&sl, state, err);
	if (r < 0) {
		json_object_put(state);
		/* Nothing changed: refused (what is there), or reading failed (I/O). */
		return r == -ENOMEM || r == -EEXIST ? r : refusal(r) ? -EBADMSG : -ECANCELED;
	}

	r = state_save(&sl, state, &state_written, err);
	if (r < 0)
		goto rollback;
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ht_plan_file *f = &p->files[i];

		if (!ht_plan_file_changes(f))
			continue;
		if (f->foreign) {
			_cleanup_free_ char *backup = backup_path(f->path);

			if (!backup) {
				r = -ENOMEM;
				goto rollback;
			}
			/* The copy keeps the original's mode: it may be 0600 for a reason. */
			r = ht_file_write_at(root, backup, f->old, fs[i].mode, &fs[i].backup_done,
			                     err);
			if (r < 0)
				goto rollback;
		}
		r = f->new ? ht_file_write_at(root, f->path, f->new, 0644, &fs[i].main_done, err) :
		    ht_file_remove_at(root, f->path, &fs[i].main_done, err);
		if (r < 0)
			goto rollback;
	}
	if (p->load_module && (r = load_module(p, root, &sl, state, err)) < 0)
		goto rollback;
	for (size_t i = 0; i < p->nlive; i++) {
		const struct ht_plan_live *l = &p->live[i];

		if (!ht_plan_live_changes(l))
			continue;
		/* Loaded with it already (a modprobe.d option): nothing to write. */
		if (l->after_load && l->old && ht_int_text_equal(l->old, l->new))
			continue;
		r = live_set(root, l->kind, l->path, l->ifname, l->channel, l->new, &live_done[i],
		             err);
		if (r < 0)
			goto rollback;
	}
	json_object_put(state);
	return 0;

rollback:
	r = rollback(p, root, fs, live_done, &sl, state_written, old_state, &dirs, r, err);
	/* Loaded by this apply seconds ago: unloaded again, unless something uses it now. */
	if (p->module_loaded && ht_module_unload(root, p->load_module) == 0)
		p->module_loaded = false;
	if (r == -ENOTRECOVERABLE && state_written) {
		/*
		 * The state stays for revert, but a value whose write took effect
		 * may hold neither its old value nor the one written (the kernel
		 * clamped it), and one not written yet holds an earlier apply's
		 * value: "written" is what each holds now, so that revert restores
		 * it unless someone changes it first (unreadable: unknown, and
		 * revert reports it rather than restore it).
		 */
		struct json_object *live = NULL;
		bool again = false;

		json_object_object_get_ex(state, "live", &live);
		for (size_t i = 0; live && i < p->nlive; i++)
			for (size_t k = 0; ht_plan_live_changes(&p->live[i]) &&
			                   k < json_object_array_length(live); k++) {
				struct json_object *e = json_object_array_get_idx(live, k);
				char *now = NULL;

				if (!same(jget_str(e, "key"), p->live[i].key))
					continue;
				/* What it holds now is what revert takes as hosttune's; unknown: none. */
				if (p->live[i].kind == HT_LIVE_PATH &&
				    ht_live_read_at(root, p->live[i].path, &now, NULL) == 0 && now &&
				    live_value_ok(now))
					json_object_object_add(e, "written", json_object_new_string(now));
				else
					json_object_object_add(e, "written", NULL);
				free(now);
			}
		if (live) {
			struct ht_error e2 = { "" };

			state_save(&sl, state, &again, &e2);
		}
	}
	json_object_put(state);
	return r;
}

/* ---- revert ---- */

static void say(FILE *report, const char *fmt, ...) _printf_(2, 3);

static void say(FILE *report, const char *fmt, ...)
{
	va_list ap;

	if (!report)
		return;
	va_start(ap, fmt);
	vfprintf(report, fmt, ap);
	va_end(ap);
}

/*
 * Restores one file of the state: 0 when it is as before hosttune or left
 * alone (edited since), or a negative errno (err says why) when it could not.
 */
static int revert_file(const char *root, struct json_object *e, FILE *report,
                       struct ht_error *err)
{
	const char *path = jget_str(e, "path"), *content = jget_str(e, "content");
	_cleanup_free_ char *cur = NULL, *backup = NULL, *bcur = NULL;
	const char *written = NULL;
	struct json_object *v;
	bool has_written, changed;
	mode_t mode = 0644;
	int r;

	has_written = json_object_object_get_ex(e, "written", &v);
	if (has_written && v)
		written = json_object_get_string(v);
	if (json_object_object_get_ex(e, "mode", &v))
		mode = (mode_t)json_object_get_int(v);
	r = ht_file_read_at(root, path, &cur, NULL, err);
	/* Not text any more (a NUL byte, over 1 MiB): not what hosttune wrote. */
	if (r == -EBADMSG || r == -EFBIG) {
		say(report, "left %s: edited since hosttune wrote it (%s)\n", path,
		    r == -EBADMSG ? "it holds a NUL byte now" : "it is over 1 MiB now");
		return 0;
	}
	if (r < 0)
		return r;
	backup = backup_path(path);
	if (!backup)
		return -ENOMEM;
	if (same(cur, content))
		say(report, "unchanged %s: already as before hosttune\n", path);
	/* Without "written" (an older state file), hosttune's header is the mark. */
	else if (has_written ? !same(cur, written) : !ht_has_header(cur)) {
		say(report, "left %s: edited since hosttune wrote it\n", path);
		return 0;
	} else {
		bool unsynced = false;

		/* A unit's drop-in is put back only where hosttune's own still is. */
		if (!cur && content && ht_kind_of_file(path)->dir_per_instance) {
			say(report, "left %s absent: hosttune creates no drop-in for a unit that "
			    "has none of its now\n", path);
			return 0;
		}
		/* A file --force took over comes back only as the copy apply kept of it. */
		if (content && !ht_has_header(content)) {
			r = ht_file_read_at(root, backup, &bcur, NULL, err);
			if (r < 0)
				return r;
			if (!same(bcur, content)) {
				say(report, "left %s: the state's earlier content is not hosttune's "
				    "and %s does not hold it\n", path, backup);
				return 0;
			}
			free(bcur);
			bcur = NULL;
		}
		r = restore_file(root, path, content, mode, &unsynced, err);
		if (r < 0)
			return r;
		say(report, "%s %s%s\n", content ? "restored" : "removed", path,
		    unsynced ? " (but the fsync of its directory failed: a crash may undo it)" : "");
	}
	if (!content)
		return 0;
	/* The copy --force kept goes once the original is back, and only if it is that. */
	r = ht_file_read_at(root, backup, &bcur, NULL, err);
	if (r < 0)
		return r;
	return same(bcur, content) ? ht_file_remove_at(root, backup, &changed, err) : 0;
}

static int cmp_len_desc(const void *a, const void *b)
{
	size_t x = strlen(*(const char *const *)a), y = strlen(*(const char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Removes the directories apply created (@dirs), deepest first, when they
 * are empty; not those on the way to the tree's state file (@sl), which go
 * with it.
 * @left receives those that could not be removed (not an empty one that is
 * not: it stays by design). Returns 0 or the first error (@err).
 */
static int remove_created_dirs(const char *root, struct json_object *dirs,
                               const struct state_loc *sl,
                               FILE *report, struct ht_paths *left, struct ht_error *err)
{
	size_t n = dirs ? json_object_array_length(dirs) : 0;
	_cleanup_free_ const char **v = calloc(n + 1, sizeof(*v));
	int first = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = json_object_get_string(json_object_array_get_idx(dirs, i));
	/* A directory's path is longer than the path of any directory that holds it. */
	qsort(v, n, sizeof(*v), cmp_len_desc);
	for (size_t i = 0; i < n; i++) {
		struct ht_error e2 = { "" };
		bool removed;
		int r;

		if (on_state_path(sl, v[i]))
			continue;
		r = ht_dir_remove_at(root, v[i], &removed, &e2);
		if (r == -ENOTEMPTY)
			say(report, "left directory %s: not empty\n", v[i]);
		else if (r < 0) {
			say(report, "could not remove directory %s: %s\n", v[i], e2.msg);
			if (ht_paths_add(left, v[i]) < 0)
				return -ENOMEM;
			if (!first) {
				first = r;
				*err = e2;
			}
		} else if (removed)
			say(report, "removed directory %s\n", v[i]);
	}
	return first;
}

/* The live paths of the state's "live" entries (NULL for channels), for sweep(). */
static const char **state_live_paths(struct json_object *live)
{
	size_t n = json_object_array_length(live);
	const char **v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = jget_str(json_object_array_get_idx(live, i), "path");
	return v;
}

/*
 * The state file again with only what is still to do: the files and live
 * values not restored (@keep_file, @keep_live); "created_dirs" stays whole,
 * and so does each file in one of them, restored or not: it is what makes
 * that directory one apply created (state_check()), for the revert that
 * removes it (a restored file is "unchanged" then).
 */
static int state_keep(const struct state_loc *sl, struct json_object *state,
                      const bool *keep_file, const bool *keep_live, struct ht_error *err)
{
	struct json_object *files, *live, *dirs = NULL;
	struct json_object *nfiles = json_object_new_array(), *nlive = json_object_new_array();
	bool changed;

	if (!nfiles || !nlive) {
		json_object_put(nfiles);
		json_object_put(nlive);
		return -ENOMEM;
	}
	json_object_object_get_ex(state, "files", &files);
	json_object_object_get_ex(state, "live", &live);
	json_object_object_get_ex(state, "created_dirs", &dirs);
	for (size_t i = 0; i < json_object_array_length(files); i++) {
		const char *path = jget_str(json_object_array_get_idx(files, i), "path");
		bool keep = keep_file[i];

		for (size_t k = 0; !keep && dirs && k < json_object_array_length(dirs); k++)
			keep = above(json_object_get_string(json_object_array_get_idx(dirs, k)), path);
		if (keep)
			json_object_array_add(nfiles,
			                      json_object_get(json_object_array_get_idx(files, i)));
	}
	for (size_t i = 0; i < json_object_array_length(live); i++)
		if (keep_live[i])
			json_object_array_add(nlive,
			                      json_object_get(json_object_array_get_idx(live, i)));
	json_object_object_add(state, "files", nfiles);
	json_object_object_add(state, "live", nlive);
	return state_save(sl, state, &changed, err);
}

/* What of a revert could not be restored: how many changes, and the first failure. */
struct revert_fail {
	size_t kept;
	int first;
	struct ht_error err;
};

/* @r (@e says why) failed: one more change kept; the first failure remembered. */
static void revert_failed(struct revert_fail *fail, int r, const struct ht_error *e)
{
	fail->kept++;
	if (!fail->first) {
		fail->first = r;
		fail->err = *e;
	}
}

/*
 * Restores the state's live values, the last recorded first; @keep[i] is
 * set for each one that could not be (it stays in the state file).
 */
static void revert_live(const char *root, struct json_object *live, FILE *report, bool *keep,
                        struct revert_fail *fail)
{
	for (size_t i = json_object_array_length(live); i-- > 0;) {
		struct json_object *e = json_object_array_get_idx(live, i);
		const char *key = jget_str(e, "key"), *old = jget_str(e, "old");
		const char *kind = jget_str(e, "kind");
		struct ht_error e2 = { "" };
		bool changed;
		int r;

		if (!old) {
			say(report, "skipped %s: no earlier value recorded\n", key);
			continue;
		}
		if (strcmp(kind, "path") == 0) {
			_cleanup_free_ char *now = NULL;
			const char *written = jget_str(e, "written");

			/* Unreadable: the write below says why. */
			if (ht_live_read_at(root, jget_str(e, "path"), &now, &e2) == 0 && now) {
				if (ht_int_text_equal(now, old)) {
					say(report, "%s is %s already\n", key, old);
					continue;
				}
				/* What hosttune set is not known: whatever it is now stays. */
				if (!written) {
					say(report, "left %s at %s: the state file does not say what "
					    "hosttune set (it was %s before)\n", key, now, old);
					continue;
				}
				/* Someone set it since apply: theirs stays. */
				if (!ht_int_text_equal(now, written)) {
					say(report, "left %s at %s: changed since hosttune set %s "
					    "(it was %s before)\n", key, now, written, old);
					continue;
				}
			}
			e2.msg[0] = '\0';
		} else if (!jget_str(e, "written")) {
			say(report, "left %s: the state file does not say what hosttune set (it was "
			    "%s before)\n", key, old);
			continue;
		}
		r = live_set(root, strcmp(kind, "channels") == 0 ? HT_LIVE_CHANNELS : HT_LIVE_PATH,
		             jget_str(e, "path"), jget_str(e, "ifname"), jget_str(e, "channel"),
		             old, &changed, &e2);
		/* Gone since apply (module unloaded, interface removed): nothing to restore. */
		if (r == -ENOENT || r == -ENODEV) {
			say(report, "skipped %s: does not exist now\n", key);
			continue;
		}
		if (r < 0) {
			say(report, "could not restore %s to %s: %s\n", key, old, e2.msg);
			keep[i] = true;
			revert_failed(fail, r, &e2);
			continue;
		}
		say(report, "restored %s to %s\n", key, old);
	}
}

/* Restores the state's files, the last recorded first; @keep[i] as for revert_live(). */
static void revert_files(const char *root, struct json_object *files, FILE *report, bool *keep,
                         struct revert_fail *fail)
{
	for (size_t i = json_object_array_length(files); i-- > 0;) {
		struct json_object *e = json_object_array_get_idx(files, i);
		struct ht_error e2 = { "" };
		int r = revert_file(root, e, report, &e2);

		if (r < 0) {
			say(report, "could not restore %s: %s\n", jget_str(e, "path"), e2.msg);
			keep[i] = true;
			revert_failed(fail, r, &e2);
		}
	}
}

int ht_revert(const char *root, const char *state_path, const struct ht_paths *keys,
              FILE *report, struct ht_error *err)
{
	_cleanup_(state_loc_done) struct state_loc sl = { 0 };
	_cleanup_(state_want_done) struct state_want want = { 0 };
	_cleanup_(ht_paths_free) struct ht_paths swept = { 0 }, dirs_left = { 0 }, created = { 0 };
	_cleanup_free_ bool *keep_live = NULL, *keep_file = NULL;
	_cleanup_free_ const char **live_paths = NULL;
	_cleanup_free_ char *raw = NULL;
	struct json_object *state = NULL, *files, *live, *dirs = NULL;
	struct ht_error ignored, first_err = { "" };
	size_t nl, nf, kept = 0;
	struct revert_fail fail = { 0 };
	bool unsynced = false, retired = false, owned = false;
	int r, first = 0;

	if (!err)
		err = &ignored;
	err->msg[0] = '\0';
	r = state_loc_init(&sl, root, state_path, err);
	if (r >= 0)
		r = state_want_init(&want, &sl, root, keys);
	if (r < 0)
		return r;
	/* A state file refused changes nothing, not even what an interrupted run left. */
	r = state_load(&sl, &state, &raw, err);
	if (r < 0)
		return r == -ENOMEM || r == -EBADMSG ? r : -ECANCELED;
	if (!raw) {
		json_object_put(state);
		/* What an interrupted run left, also when there is nothing else to revert. */
		r = sweep(root, &sl, NULL, 0, NULL, 0, &swept);
		if (r < 0)
			return r;
		for (size_t i = 0; i < swept.n; i++)
			say(report, "removed %s: left by an interrupted hosttune\n", swept.v[i]);
		return ht_error_set(err, ENOENT, "%s: no state file: nothing to revert", sl.shown);
	}
	r = state_check(state, &want, &owned, err);
	if (r < 0) {
		json_object_put(state);
		return r;
	}
	if (!owned) {
		_cleanup_free_ char *ours = owner_text(want.root, want.machine_id);

		if (!ours) {
			json_object_put(state);
			return -ENOMEM;
		}
		say(report, "note: %s records no tree or machine-id: taken as the state of %s\n",
		    sl.shown, ours);
	}
	json_object_object_get_ex(state, "files", &files);
	json_object_object_get_ex(state, "live", &live);
	json_object_object_get_ex(state, "created_dirs", &dirs);
	nl = json_object_array_length(live);
	nf = json_object_array_length(files);
	keep_live = calloc(nl + 1, sizeof(*keep_live));
	keep_file = calloc(nf + 1, sizeof(*keep_file));
	live_paths = state_live_paths(live);
	if (!keep_live || !keep_file || !live_paths) {
		json_object_put(state);
		return -ENOMEM;
	}
	{
		_cleanup_free_ const char **fp = calloc(nf + 1, sizeof(*fp));

		for (size_t i = 0; fp && i < nf; i++)
			fp[i] = jget_str(json_object_array_get_idx(files, i), "path");
		if (!fp || sweep(root, &sl, live_paths, nl, fp, nf, &swept) < 0) {
			json_object_put(state);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < swept.n; i++)
		say(report, "removed %s: left by an interrupted hosttune\n", swept.v[i]);

	revert_live(root, live, report, keep_live, &fail);
	revert_files(root, files, report, keep_file, &fail);
	first = fail.first;
	first_err = fail.err;
	kept = fail.kept;

	/* The directories once their files are back, the state file last (with its own). */
	if (kept == 0) {
		const char *top;
		struct ht_error e2 = { "" };

		r = remove_created_dirs(root, dirs, &sl, report, &dirs_left, &e2);
		if (r == -ENOMEM) {
			json_object_put(state);
			return r;
		}
		if (r < 0) {
			first = r;
			first_err = e2;
			kept = dirs_left.n;
		} else {
			for (size_t i = 0; dirs && i < json_object_array_length(dirs); i++)
				if (ht_paths_add(&created, json_object_get_string(
				                 json_object_array_get_idx(dirs, i))) < 0) {
					json_object_put(state);
					return -ENOMEM;
				}
			top = state_top(&sl, &created);
			r = state_discard(&sl, root, top, report, &unsynced, &retired, err);
			json_object_put(state);
			if (r == 0 && unsynced)
				say(report, "removed %s (but an fsync failed: a crash may bring it "
				    "back)\n", sl.shown);
			if (r < 0) {
				size_t n = strlen(err->msg);

				snprintf(err->msg + n, sizeof(err->msg) - n, retired ?
				         " (everything else is restored, the state file is gone)" :
				         " (everything else is restored; the state file stays)");
			}
			return r == -ENOENT ? -EIO : r;
		}
	}

	/* What could not be restored stays in the state file for another revert. */
	{
		struct ht_error e2 = { "" };
		/*
		 * Every directory apply created stays recorded: one that could not
		 * be removed, and those holding it (left "not empty" because of
		 * it); removing an absent one again is nothing.
		 */
		int k = state_keep(&sl, state, keep_file, keep_live, &e2);

		ht_error_set(err, -first, "%s (%zu change%s not restored; %s)", first_err.msg, kept,
		             kept == 1 ? "" : "s",
		             k < 0 ? "and the state file could not be rewritten" :
		                     "kept in the state file for another revert");
	}
	json_object_put(state);
	/* -ENOENT, -EBADMSG, -ECANCELED mean "nothing to revert / changed" to the caller. */
	return first == -ENOENT || first == -EBADMSG || first == -ECANCELED ? -EIO : first;
}
