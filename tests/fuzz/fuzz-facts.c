/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The facts file (engine/facts.h). Properties: a failure carries a message
 * naming its place ("fuzz.facts:LINE:"), or the file's name; what was read
 * writes out as a facts file that reads back, and the texts written by the
 * first, second and third round are byte for byte the same; the JSON form
 * is UTF-8 text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine/facts.h"
#include "shared/util.h"

#include "fuzz-common.h"

/* Writes @f to a new string (caller frees). */
static char *write_text(const struct ht_facts *f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int r;

	FZ_CHECK(out, "open_memstream");
	r = ht_facts_write(f, out);
	fclose(out);
	FZ_CHECK(r == 0, "ht_facts_write returned %d", r);
	FZ_CHECK(strlen(text) == len, "facts written with a NUL byte");
	return text;
}

/* Reads @text, which a write produced: it must read. */
static struct ht_facts *read_text(const char *text, const char *round)
{
	struct ht_facts *f = ht_facts_new();
	struct ht_error err = { "" };
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int r;

	FZ_CHECK(f && in, "ht_facts_new/fmemopen");
	r = ht_facts_read(f, in, "written.facts", &err);
	fclose(in);
	FZ_CHECK(r == 0, "%s: what ht_facts_write wrote does not read back: %s\n--\n%s", round,
	         err.msg, text);
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ht_facts *f, *f2 = NULL, *f3 = NULL;
	struct ht_error err = { "" };
	char *t1 = NULL, *t2 = NULL, *t3 = NULL;
	FILE *in;
	int r;

	if (size == 0 || size > 65536)
		return 0;
	fz_guard_begin(NULL, false);
	f = ht_facts_new();
	in = fmemopen((void *)data, size, "r");
	FZ_CHECK(f && in, "ht_facts_new/fmemopen");
	r = ht_facts_read(f, in, "fuzz.facts", &err);
	fclose(in);
	if (r < 0) {
		FZ_CHECK(err.msg[0], "ht_facts_read failed (%d) without a message", r);
		FZ_CHECK(r == -EINVAL || r == -ENOMEM || r == -EIO, "ht_facts_read returned %d", r);
		if (r == -EINVAL)
			FZ_CHECK(fz_has_place(err.msg, "fuzz.facts"), "no FILE:LINE: in '%s'", err.msg);
		FZ_CHECK(ht_facts_count(f) == 0, "a failed read left %zu facts", ht_facts_count(f));
		goto out;
	}
	t1 = write_text(f);
	f2 = read_text(t1, "second read");
	t2 = write_text(f2);
	f3 = read_text(t2, "third read");
	t3 = write_text(f3);
	FZ_CHECK(strcmp(t2, t3) == 0, "second and third write differ:\n%s--\n%s", t2, t3);
	FZ_CHECK(strcmp(t1, t2) == 0, "first and second write differ:\n%s--\n%s", t1, t2);
	FZ_CHECK(ht_facts_count(f) == ht_facts_count(f2), "fact count changed: %zu, then %zu",
	         ht_facts_count(f), ht_facts_count(f2));
	{
		struct json_object *j = ht_facts_to_json(f);
		const char *s;

		FZ_CHECK(j, "ht_facts_to_json returned NULL");
		s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
		FZ_CHECK(s && !ht_utf8_invalid(s), "JSON output is not UTF-8");
		json_object_put(j);
	}
out:
	fz_guard_end();
	ht_facts_free(f);
	ht_facts_free(f2);
	ht_facts_free(f3);
	free(t1);
	free(t2);
	free(t3);
	return 0;
}
