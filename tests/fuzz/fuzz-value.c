/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Values (engine/value.h): the token syntax of the facts file. Properties:
 * a value parsed and formatted parses back, whole, to the same value, and
 * formatting that gives the same text again (the text is canonical); the
 * end pointer stays inside the input; a version parsed is 1 to 4 parts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/value.h"
#include "shared/util.h"

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ht_value v = { 0 }, back = { 0 };
	struct ht_version ver;
	const char *end = NULL;
	char *text, *f1 = NULL, *f2 = NULL;
	int r;

	if (size > 4096)
		return 0;
	text = fz_cstr(data, size);
	fz_guard_begin(NULL, false);

	r = ht_version_parse(text, &ver, &end);
	if (r == 0) {
		FZ_CHECK(ver.n >= 1 && ver.n <= 4, "version of %u parts", ver.n);
		FZ_CHECK(end > text && end <= text + strlen(text), "version end outside the text");
	} else {
		FZ_CHECK(r == -EINVAL || r == -ERANGE, "ht_version_parse returned %d", r);
	}

	end = NULL;
	r = ht_value_parse(text, &v, &end);
	if (r < 0) {
		FZ_CHECK(r == -EINVAL || r == -ERANGE || r == -ENOMEM, "ht_value_parse returned %d", r);
		goto out;
	}
	FZ_CHECK(end && end > text && end <= text + strlen(text), "value end outside the text");
	if (v.type == HT_T_NONE)
		goto out; /* "unavailable" */
	fz_value_round_trip(&v);
	/* Canonical: the text of the value read back is the same text. */
	f1 = ht_value_format(&v);
	FZ_CHECK(f1 && ht_value_parse(f1, &back, NULL) == 0, "format did not parse");
	f2 = ht_value_format(&back);
	FZ_CHECK(f2 && strcmp(f1, f2) == 0, "format not canonical: '%s' then '%s'", f1,
	         f2 ? f2 : "(null)");
out:
	fz_guard_end();
	ht_value_clear(&v);
	ht_value_clear(&back);
	free(f1);
	free(f2);
	free(text);
	return 0;
}
