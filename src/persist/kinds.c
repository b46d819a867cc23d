/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of target kinds (persist/kind.h): a row per kind, each in its own file. */
#include <string.h>

#include "engine/rules.h"
#include "persist/kind.h"

/*
 * In the order the plan writes their files: sysctl.d, modprobe.d and
 * modules-load.d, .link files, drop-ins.
 */
const struct ht_kind *const ht_kinds[HT_NKINDS] = {
	&ht_kind_sysctl,
	&ht_kind_module,
	&ht_kind_channels,
	&ht_kind_limit,
};

const struct ht_kind *ht_kind_of(enum ht_target_kind t)
{
	for (size_t i = 0; i < HT_NKINDS; i++)
		if (ht_kinds[i]->target == t)
			return ht_kinds[i];
	return NULL;
}

const struct ht_kind *ht_kind_of_file(const char *path)
{
	for (size_t i = 0; i < HT_NKINDS; i++)
		if (ht_kinds[i]->managed_file(path))
			return ht_kinds[i];
	return NULL;
}

const struct ht_kind *ht_kind_of_live_key(const char *key)
{
	const struct ht_kind *rest = NULL;

	for (size_t i = 0; i < HT_NKINDS; i++) {
		const struct ht_kind *k = ht_kinds[i];

		if (!k->live_path)
			continue;
		if (!k->key_prefix)
			rest = k;
		else if (strncmp(key, k->key_prefix, strlen(k->key_prefix)) == 0)
			return k;
	}
	return rest;
}
