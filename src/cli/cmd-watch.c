/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hosttune watch: the sampler (collect/watch.h) run until its duration or Ctrl-C. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/watch-print.h"
#include "collect/watch.h"
#include "engine/rules.h"
#include "shared/escape.h"
#include "shared/util.h"

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

int cmd_watch(const struct options *o)
{
	struct ht_ruleset *rs = NULL;
	struct ht_watch *w = NULL;
	struct ht_watch_summary sum;
	struct ht_watch_config cfg;
	struct ht_error err = { "" };
	struct sigaction sa = { .sa_handler = on_interrupt };
	_cleanup_fclose_ FILE *rec = NULL;
	const char *term = getenv("TERM");
	struct ht_watch_view view;
	bool live;
	int r;

	/* The run ends at the first sample at or after --duration: the second is one interval in. */
	if (o->duration > 0 && o->duration < o->interval)
		return cli_usage_error("--duration %gs is shorter than --interval %gs: expected 0"
		                       " (until Ctrl-C) or at least one interval", o->duration,
		                       o->interval);
	r = cli_load_rules(o, &rs);
	if (r)
		return r;
	cfg = (struct ht_watch_config){ .root = o->root, .interval = o->interval,
		                        .duration = o->duration,
		                        .headroom = cli_profile_headroom(rs),
		                        .stop = &interrupted };
	ht_ruleset_free(rs);
	r = ht_watch_new(&cfg, &w, &err);
	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "watch: %s", err.msg[0] ? err.msg : strerror(-r));
	/* Only once the sources are open: a watch that cannot run keeps the old file. */
	if (o->record) {
		rec = fopen(o->record, "we");
		if (!rec) {
			cli_error("%s: %s\n", o->record, strerror(errno));
			ht_watch_free(w);
			return EXIT_COLLECT;
		}
		if (ht_watch_record_header(rec) < 0)
			goto write_error;
	}
	/* No SA_RESTART: Ctrl-C must end the sleep; a background job may start with it ignored. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* On a terminal that moves its cursor, a view redrawn in place; else the table. */
	live = !o->json && o->terminal && !(term && strcmp(term, "dumb") == 0);
	if (live)
		ht_watch_view_init(&view, o->width, o->interval, o->duration, ht_watch_source(w),
		                   o->color, ht_watch_view_utf8());
	else if (!o->json)
		ht_watch_format_header(stdout);
	while (!interrupted) {
		struct ht_watch_sample smp;

		r = ht_watch_sample(w, &smp, &err);
		if (r < 0) {
			ht_watch_free(w);
			return cli_fail(r, EXIT_COLLECT, "watch: %s",
			                err.msg[0] ? err.msg : strerror(-r));
		}
		/*
		 * A reader that went away (watch | head) ends the watch, quietly:
		 * nobody reads the rest (cli_stdout_gone()). Any other write error
		 * ends it as a failure.
		 */
		if (!o->json && ((live ? ht_watch_view_draw(stdout, &view, &smp)
		                       : ht_watch_format_sample(stdout, &smp)) < 0 ||
		                 ht_escape_flush(stdout) != 0)) {
			int e = errno ? errno : EIO;

			r = cli_stdout_gone() ? EXIT_CLEAN :
			    cli_fail(-e, EXIT_COLLECT, "writing the output: %s", strerror(e));
			ht_watch_free(w);
			return r;
		}
		if (rec && (ht_watch_record_sample(rec, &smp) < 0 || fflush(rec) != 0))
			goto write_error;
		if (ht_watch_done(w) || ht_watch_wait(w) == -EINTR)
			break;
	}
	r = ht_watch_summary(w, &sum);
	ht_watch_free(w);
	w = NULL;
	if (r < 0)
		return cli_fail(r, EXIT_COLLECT, "watch: %s", strerror(-r));
	if (o->json)
		return cli_print_json(ht_watch_summary_json(&sum));
	/* Below the last frame, over a "^C" the terminal may have echoed. */
	if (live) {
		ht_escape_raw(stdout, "\r\033[K");
		fputc('\n', stdout);
	}
	return cli_printed(ht_watch_format_summary(stdout, &sum));
write_error:
	cli_error("%s: %s\n", o->record, strerror(errno ? errno : EIO));
	ht_watch_free(w);
	return EXIT_COLLECT;
}
