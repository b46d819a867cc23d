/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who is told of the measurements that take time (collect.h,
 * ht_collect_set_progress()): a file of its own that calls nothing, so that
 * the collectors that tell it (sample.c, collect-storage.c) and the table
 * that runs them (sources.c) do not call each other.
 */
#include <stdbool.h>
#include <stddef.h>

#include "collect/collect.h"

static ht_progress_fn progress_fn;
static void *progress_userdata;

void ht_collect_set_progress(ht_progress_fn fn, void *userdata)
{
	progress_fn = fn;
	progress_userdata = userdata;
}

void ht_collect_progress(const char *what, double left)
{
	if (progress_fn)
		progress_fn(progress_userdata, what, left < 0 ? 0 : left);
}

bool ht_collect_progress_wanted(void)
{
	return progress_fn != NULL;
}
