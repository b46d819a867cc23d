/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "ethtool-set.h"
#include "fsutil.h"
#include "persist.h"
#include "persist-internal.h"

#define HT_BACKUP_SUFFIX ".hosttune-orig"

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

static char *state_full_path(const char *root, const char *state_path)
{
	return state_path ? strdup(state_path) : ht_root_join(root, HT_STATE_FILE);
}

/* The state file's object, or a new empty one when there is none. */
static int state_load(const char *path, struct json_object **out, char **raw,
                      struct ht_error *err)
{
	struct json_object *o, *files, *live;
	int r;

	r = ht_file_read(path, raw, NULL);
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", path, strerror(-r));
	if (!*raw) {
		o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		json_object_object_add(o, "version", json_object_new_int(1));
		json_object_object_add(o, "files", json_object_new_array());
		json_object_object_add(o, "live", json_object_new_array());
		*out = o;
		return 0;
	}
	o = json_tokener_parse(*raw);
	if (!o || !json_object_object_get_ex(o, "files", &files) ||
	    !json_object_is_type(files, json_type_array) ||
	    !json_object_object_get_ex(o, "live", &live) ||
	    !json_object_is_type(live, json_type_array)) {
		json_object_put(o);
		return ht_error_set(err, EINVAL, "%s: not a hosttune state file (expected JSON with "
		                    "\"files\" and \"live\" arrays)", path);
	}
	*out = o;
	return 0;
}

static struct json_object *state_find(struct json_object *arr, const char *key, const char *val)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *v = jget_str(e, key);

		if (v && strcmp(v, val) == 0)
			return e;
	}
	return NULL;
}

/* Records what the plan changes, keeping the oldest "before" of every file and value. */
static int state_merge(struct json_object *state, const struct ht_plan *p, const char *root)
{
	struct json_object *files, *live;

	json_object_object_get_ex(state, "files", &files);
	json_object_object_get_ex(state, "live", &live);
	json_object_object_add(state, "profile", json_object_new_string(p->profile));
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ht_plan_file *f = &p->files[i];
		struct json_object *e = state_find(files, "path", f->path);

		if (!ht_plan_file_changes(f))
			continue;
		if (!e) {
			_cleanup_free_ char *full = ht_root_join(root, f->path);
			struct stat st;
			int mode = 0644;

			if (!full)
				return -ENOMEM;
			if (f->old && lstat(full, &st) == 0)
				mode = (int)(st.st_mode & 07777);
			e = json_object_new_object();
			if (!e)
				return -ENOMEM;
			json_object_object_add(e, "path", json_object_new_string(f->path));
			json_object_object_add(e, "existed", json_object_new_boolean(f->old != NULL));
			json_object_object_add(e, "content", jstr_or_null(f->old));
			json_object_object_add(e, "mode", json_object_new_int(mode));
			json_object_array_add(files, e);
		}
		/* What hosttune wrote, so that a hand edit shows later (verify). */
		json_object_object_add(e, "written", jstr_or_null(f->new));
	}
	for (size_t i = 0; i < p->nlive; i++) {
		const struct ht_plan_live *l = &p->live[i];
		struct json_object *e;

		if (!ht_plan_live_changes(l) || state_find(live, "key", l->key))
			continue;
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
		json_object_array_add(live, e);
	}
	return 0;
}

static int state_save(const char *path, struct json_object *state)
{
	const char *s = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PRETTY |
	                                                      JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *text = NULL;

	if (!s || asprintf(&text, "%s\n", s) < 0)
		return -ENOMEM;
	return ht_file_write_atomic(path, text, 0600);
}

/* Writes one live value: a procfs/sysfs file below @root, or channels over netlink. */
static int live_set(const char *root, enum ht_live_kind kind, const char *path,
                    const char *ifname, const char *channel, const char *value,
                    struct ht_error *err)
{
	if (kind == HT_LIVE_CHANNELS) {
		char *end;
		unsigned long n = strtoul(value, &end, 10);

		if (*end || n == 0 || n > UINT32_MAX)
			return ht_error_set(err, EINVAL, "%s: bad channel count '%s'", ifname, value);
		return ht_ethtool_set_channels(ifname, channel, (uint32_t)n, NULL, err);
	}
	{
		_cleanup_free_ char *full = ht_root_join(root, path);
		int r;

		if (!full)
			return -ENOMEM;
		r = ht_live_write(full, value);
		if (r == -EIO)
			return ht_error_set(err, EIO, "%s: wrote %s but read back another value", full,
			                    value);
		if (r < 0)
			return ht_error_set(err, -r, "%s: %s", full, strerror(-r));
		return 0;
	}
}

static int restore_file(const char *root, const char *path, const char *content, int mode)
{
	_cleanup_free_ char *full = ht_root_join(root, path);

	if (!full)
		return -ENOMEM;
	if (!content)
		return ht_file_remove(full);
	return ht_file_write_atomic(full, content, (mode_t)mode);
}

int ht_plan_apply(const struct ht_plan *p, const char *root, const char *state_path, bool force,
                  struct ht_error *err)
{
	_cleanup_free_ char *spath = state_full_path(root, state_path), *old_state = NULL;
	struct json_object *state = NULL;
	size_t files_done = 0, live_done = 0;
	bool state_written = false;
	int r;

	if (!spath)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfiles; i++)
		if (ht_plan_file_changes(&p->files[i]) && p->files[i].foreign && !force)
			return ht_error_set(err, EEXIST, "%s%s exists and was not written by hosttune (no "
			                    "'%s' header); --force takes it over and keeps a copy as "
			                    "%s" HT_BACKUP_SUFFIX, root && strspn(root, "/") != strlen(root) ?
			                    root : "", p->files[i].path, HT_FILE_HEADER,
			                    p->files[i].path);
	if (ht_plan_empty(p))
		return 0;

	r = state_load(spath, &state, &old_state, err);
	if (r < 0)
		return r;
	r = state_merge(state, p, root);
	if (r >= 0) {
		r = state_save(spath, state);
		if (r < 0)
			ht_error_set(err, -r, "%s: %s", spath, strerror(-r));
		else
			state_written = true;
	}
	if (r < 0)
		goto rollback;

	for (; files_done < p->nfiles; files_done++) {
		const struct ht_plan_file *f = &p->files[files_done];
		_cleanup_free_ char *full = ht_root_join(root, f->path), *backup = NULL;

		if (!ht_plan_file_changes(f))
			continue;
		if (!full) {
			r = -ENOMEM;
			goto rollback;
		}
		if (f->foreign) {
			if (asprintf(&backup, "%s" HT_BACKUP_SUFFIX, full) < 0) {
				backup = NULL;
				r = -ENOMEM;
				goto rollback;
			}
			r = ht_file_write_atomic(backup, f->old, 0644);
			if (r < 0) {
				ht_error_set(err, -r, "%s: %s", backup, strerror(-r));
				goto rollback;
			}
		}
		r = f->new ? ht_file_write_atomic(full, f->new, 0644) : ht_file_remove(full);
		if (r < 0) {
			ht_error_set(err, -r, "%s: %s", full, strerror(-r));
			goto rollback;
		}
	}
	for (; live_done < p->nlive; live_done++) {
		const struct ht_plan_live *l = &p->live[live_done];

		if (!ht_plan_live_changes(l))
			continue;
		r = live_set(root, l->kind, l->path, l->ifname, l->channel, l->new, err);
		if (r < 0)
			goto rollback;
	}
	json_object_put(state);
	return 0;

rollback:
	/* Undo in reverse order; the first error is the one reported. */
	while (live_done-- > 0) {
		const struct ht_plan_live *l = &p->live[live_done];
		struct ht_error ignored;

		if (ht_plan_live_changes(l) && l->old)
			live_set(root, l->kind, l->path, l->ifname, l->channel, l->old, &ignored);
	}
	while (files_done-- > 0) {
		const struct ht_plan_file *f = &p->files[files_done];

		if (!ht_plan_file_changes(f))
			continue;
		restore_file(root, f->path, f->old, 0644);
		if (f->foreign) {
			_cleanup_free_ char *full = ht_root_join(root, f->path), *backup = NULL;

			if (full && asprintf(&backup, "%s" HT_BACKUP_SUFFIX, full) >= 0)
				ht_file_remove(backup);
			else
				backup = NULL;
		}
	}
	/* A file that failed half way was never renamed into place: nothing to undo there. */
	if (state_written) {
		if (old_state)
			ht_file_write_atomic(spath, old_state, 0600);
		else
			ht_file_remove(spath);
	}
	json_object_put(state);
	return r;
}

int ht_revert(const char *root, const char *state_path, FILE *report, struct ht_error *err)
{
	_cleanup_free_ char *spath = state_full_path(root, state_path), *raw = NULL;
	struct json_object *state = NULL, *files, *live;
	int r, first = 0;

	if (!spath)
		return -ENOMEM;
	r = state_load(spath, &state, &raw, err);
	if (r < 0)
		return r;
	if (!raw) {
		json_object_put(state);
		return ht_error_set(err, ENOENT, "%s: no state file: nothing to revert", spath);
	}
	json_object_object_get_ex(state, "files", &files);
	json_object_object_get_ex(state, "live", &live);

	for (size_t i = json_object_array_length(live); i-- > 0;) {
		struct json_object *e = json_object_array_get_idx(live, i);
		const char *key = jget_str(e, "key"), *old = jget_str(e, "old");
		const char *kind = jget_str(e, "kind");
		struct ht_error e2 = { "" };

		if (!key || !old || !kind)
			continue;
		r = live_set(root, strcmp(kind, "channels") == 0 ? HT_LIVE_CHANNELS : HT_LIVE_PATH,
		             jget_str(e, "path"), jget_str(e, "ifname"), jget_str(e, "channel"), old,
		             &e2);
		if (r < 0 && !first) {
			first = r;
			*err = e2;
		}
		if (report)
			fprintf(report, "%s %s to %s%s%s\n", r < 0 ? "could not restore" : "restored",
			        key, old, r < 0 ? ": " : "", r < 0 ? e2.msg : "");
	}
	for (size_t i = json_object_array_length(files); i-- > 0;) {
		struct json_object *e = json_object_array_get_idx(files, i), *v;
		const char *path = jget_str(e, "path"), *content = jget_str(e, "content");
		int mode = 0644;

		if (!path)
			continue;
		if (json_object_object_get_ex(e, "mode", &v))
			mode = json_object_get_int(v);
		r = restore_file(root, path, content, mode);
		if (r == 0 && content) {
			_cleanup_free_ char *full = ht_root_join(root, path), *backup = NULL;

			if (full && asprintf(&backup, "%s" HT_BACKUP_SUFFIX, full) >= 0)
				r = ht_file_remove(backup);
			else
				backup = NULL;
		}
		if (r < 0 && !first) {
			first = r;
			ht_error_set(err, -r, "%s: %s", path, strerror(-r));
		}
		if (report)
			fprintf(report, "%s %s%s\n", r < 0 ? "could not restore" :
			        content ? "restored" : "removed", path, r < 0 ? "" : "");
	}
	json_object_put(state);
	if (first < 0)
		return first;
	r = ht_file_remove(spath);
	if (r < 0)
		return ht_error_set(err, -r, "%s: %s", spath, strerror(-r));
	return 0;
}
