/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bootconf-internal.h"
#include "shared/bootconf.h"
#include "shared/util.h"

/* bootconf: modules-load.d, as systemd-modules-load reads it. */

int ht_modules_load_read(const char *root, struct ht_conf *out)
{
	struct ht_conf c = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	char *dirs[5] = { 0 };
	size_t ndirs = 0, ne = 0;
	int r;

	if (!out)
		return -EINVAL;
	r = bootconf_systemd_dirs(root, "modules-load.d", dirs, &ndirs);
	if (r >= 0)
		r = bootconf_list_files(&c, root, (const char *const *)dirs, ndirs, STYLE_SYSTEMD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };
		const char *raw;
		size_t pos = 0, len;
		unsigned lineno = 0;

		r = bootconf_read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		/* apply_file() in src/modules-load/modules-load.c: one name a stripped line */
		while (r >= 0 && bootconf_next_line(&ct, &pos, &raw, &len)) {
			_cleanup_free_ char *copy = NULL;
			struct pending t = { .file = c.files[c.nfiles - 1] };
			char *l;

			lineno++;
			if (len > LONG_LINE_MAX) {
				r = bootconf_add_problem(&c, HT_CONF_UNREADABLE, t.file, lineno, NULL,
							 "line longer than %u bytes: systemd-modules-load "
							 "stops reading the file here", LONG_LINE_MAX);
				break;
			}
			if (!(copy = strndup(raw, len))) {
				r = -ENOMEM;
				break;
			}
			l = bootconf_strstrip(copy);
			if (!*l || strchr(SYSTEMD_COMMENTS, *l))
				continue;
			t.line = lineno;
			r = bootconf_pending_add(&p, l, l, &t);
		}
		free(ct.buf);
	}
	if (r >= 0)
		r = bootconf_group(&c, &p);
	bootconf_pendings_free(&p);
	bootconf_entries_free(e, ne);
	bootconf_dirs_free(dirs, ndirs);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}
