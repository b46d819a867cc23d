/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune's own state file as a source: the drop counters at the last apply. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "engine/value.h"
#include "shared/fsutil.h"
#include "shared/util.h"

/* A count the kernel could have printed: an integer, not negative. */
static bool counter(struct json_object *c, const char *key, int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(c, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return *out >= 0;
}

/*
 * False when the state records a tree or machine other than this one
 * ("root", "machine_id", as apply writes them): its counters are another
 * host's. A state that records neither is taken as this tree's, as revert
 * takes it. -ENOMEM as a negative number.
 */
static int state_is_ours(struct json_object *state, const char *root)
{
	_cleanup_free_ char *here = NULL, *id = NULL;
	struct json_object *rv = NULL, *mv = NULL;
	bool has_root = json_object_object_get_ex(state, "root", &rv);
	bool has_mid = json_object_object_get_ex(state, "machine_id", &mv);
	int r;

	if (!has_root && !has_mid)
		return 1;
	if (!json_object_is_type(rv, json_type_string) ||
	    (mv && !json_object_is_type(mv, json_type_string)))
		return 0;
	r = ht_root_canonical(root, &here);
	if (r == -ENOMEM || ht_machine_id_read(root, &id) < 0)
		return -ENOMEM;
	if (r < 0 || strcmp(here, json_object_get_string(rv)) != 0)
		return 0;
	return mv ? id && strcmp(id, json_object_get_string(mv)) == 0 : !id;
}

int ht_collect_apply_counters(struct ht_facts *f, const char *root, const char *state_path)
{
	_cleanup_free_ char *raw = NULL, *boot_now = NULL, *source = NULL;
	struct json_object *state, *c, *b;
	int64_t drop, early;
	int r;

	r = state_path ? ht_read_file(NULL, state_path, &raw) :
	                 ht_read_file(root, HT_STATE_FILE, &raw);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0; /* no apply recorded (or unreadable: verify reports that) */
	state = json_tokener_parse(raw);
	if (!state || !json_object_object_get_ex(state, "counters", &c) ||
	    !json_object_is_type(c, json_type_object) ||
	    !counter(c, "conntrack.stat.drop", &drop) ||
	    !counter(c, "conntrack.stat.early_drop", &early)) {
		json_object_put(state);
		return 0;
	}
	/* Another tree's or machine's (a copied state file): not these counters. */
	r = state_is_ours(state, root);
	if (r <= 0) {
		json_object_put(state);
		return r;
	}
	/* Another boot since apply: its counters started again from 0. */
	if (json_object_object_get_ex(c, "boot_id", &b) && json_object_is_type(b, json_type_string) &&
	    ht_read_file(root, "/proc/sys/kernel/random/boot_id", &boot_now) == 0 &&
	    strcmp(boot_now, json_object_get_string(b)) != 0) {
		json_object_put(state);
		return 0;
	}
	json_object_put(state);
	if (state_path)
		source = strdup(state_path);
	else
		source = ht_root_path(root, HT_STATE_FILE);
	if (!source)
		return -ENOMEM;
	r = ht_facts_set_int(f, "conntrack.stat.drop_at_apply", drop, "packets", source);
	if (r >= 0)
		r = ht_facts_set_int(f, "conntrack.stat.early_drop_at_apply", early, "packets",
		                     source);
	return r < 0 ? r : 0;
}
