/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch-dump INTERVAL_MS DURATION_MS [HEADROOM [RECORD]] - a test and bench
 * driver of the watch library until `hosttune watch` calls it: samples the
 * conntrack table of its network namespace every INTERVAL_MS for DURATION_MS
 * (0: until SIGINT or SIGTERM), writes each sample line to stderr, the
 * samples to RECORD if given, and prints the JSON summary on stdout.
 * HEADROOM defaults to 2 (workload.burst of the default profile).
 * Exits 0, 1 on a sampling error, 2 on bad arguments.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "shared/util.h"
#include "cli/watch-print.h"
#include "collect/watch.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig _unused_)
{
	stop = 1;
}

static int parse_ms(const char *s, long long *out)
{
	return ht_parse_int64(s, out) < 0 || *out < 0 ? -EINVAL : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake the sleep */
	struct ht_watch_config cfg = { .headroom = 2 };
	_cleanup_fclose_ FILE *rec = NULL;
	struct ht_watch_summary sum;
	struct ht_watch *w = NULL;
	struct ht_error err = { "" };
	struct json_object *j;
	long long interval, duration;
	int r, status = 0;

	if (argc < 3 || argc > 5 || parse_ms(argv[1], &interval) < 0 || interval == 0 ||
	    parse_ms(argv[2], &duration) < 0) {
		fprintf(stderr, "usage: watch-dump INTERVAL_MS DURATION_MS [HEADROOM [RECORD]]\n");
		return 2;
	}
	if (argc >= 4) {
		char *end;

		cfg.headroom = strtod(argv[3], &end);
		if (*end || end == argv[3]) {
			fprintf(stderr, "watch-dump: HEADROOM: expected a number, got '%s'\n",
			        argv[3]);
			return 2;
		}
	}
	cfg.interval = (double)interval / 1000.0;
	cfg.duration = (double)duration / 1000.0;
	if (argc == 5) {
		rec = fopen(argv[4], "we");
		if (!rec) {
			fprintf(stderr, "watch-dump: %s: %s\n", argv[4], strerror(errno));
			return 1;
		}
	}
	/* Installed explicitly: a background job of sh starts with SIGINT ignored. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	r = ht_watch_new(&cfg, &w, &err);
	if (r < 0) {
		fprintf(stderr, "watch-dump: %s\n", err.msg[0] ? err.msg : strerror(-r));
		return r == -EINVAL ? 2 : 1;
	}
	ht_watch_format_header(stderr);
	if (rec)
		ht_watch_record_header(rec);
	while (!stop) {
		struct ht_watch_sample s;

		r = ht_watch_sample(w, &s, &err);
		if (r < 0) {
			fprintf(stderr, "watch-dump: %s\n", err.msg[0] ? err.msg : strerror(-r));
			status = 1;
			break;
		}
		ht_watch_format_sample(stderr, &s);
		if (rec && ht_watch_record_sample(rec, &s) < 0) {
			fprintf(stderr, "watch-dump: writing %s failed\n", argv[4]);
			status = 1;
			break;
		}
		if (ht_watch_done(w))
			break;
		r = ht_watch_wait(w);
		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "watch-dump: waiting: %s\n", strerror(-r));
			status = 1;
			break;
		}
	}
	r = ht_watch_summary(w, &sum);
	ht_watch_free(w);
	if (r < 0) {
		fprintf(stderr, "watch-dump: no sample taken\n");
		return 1;
	}
	ht_watch_format_summary(stderr, &sum);
	j = ht_watch_summary_json(&sum);
	if (!j)
		return 1;
	puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
	if (rec && fflush(rec) != 0) {
		fprintf(stderr, "watch-dump: writing %s failed\n", argv[4]);
		status = 1;
	}
	return status;
}
