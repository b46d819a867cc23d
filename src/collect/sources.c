/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sources of facts and facts on demand: a table of collectors, each with
 * the facts it provides, what it costs, what it reads first and, for the
 * expensive ones, the rule that must want its evidence; a collection runs a
 * source the first time a rule asks for one of its facts.
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/collect.h"
#include "collect/procsys.h"
#include "collect/sample.h"
#include "engine/facts.h"
#include "engine/rules.h"
#include "shared/rootfs.h"
#include "shared/util.h"

/* The most sources the table may hold (static_assert below). */
#define SOURCES_MAX 48

struct ht_collect {
	char *root;        /* NULL: this host */
	unsigned flags;    /* HT_COLLECT_* */
	char *service;     /* workload.service: process names checked without a listening port */
	char *state_path;  /* --state: the apply counters' state file */
	/* The profile's [garage] section: where Garage's files are before deployment. */
	char *garage_config, *garage_metadata_dir, *garage_data_dir;
	char *warning;     /* what a source could not do that nobody asked for (one line) */
	struct ht_ruleset *rs;          /* the rules whose gates decide, or NULL (borrowed) */
	struct ht_listeners *listeners; /* the listener scan, for the owners asked one by one */
	struct ht_boot *boot;           /* the boot configuration, read once */
	struct ht_sampler *sampler;     /* the sampled sources' readings (--sample) */
	unsigned char state[SOURCES_MAX]; /* SRC_NEW, SRC_RUNNING, SRC_DONE, by source */
};

/*
 * Whether the rules want a source's evidence: the bool rule @gate, of the
 * host (@instance NULL) or of one instance, holds. Without rules, without
 * that rule, outside an evaluation, or when the rule cannot tell (a fact it
 * needs is unavailable), the evidence is collected: 1. Returns 1, 0 when
 * the rule says no, or an evaluation error (err set).
 */
static int gate_open(struct ht_collect *c, const char *gate, const char *instance,
                     struct ht_error *err)
{
	bool holds = true;
	int r;

	if (!c->rs || !gate)
		return 1;
	r = ht_ruleset_holds(c->rs, gate, instance, &holds, err);
	if (r == -ENOENT || r == -ENODATA || r == -ESRCH) {
		err->msg[0] = '\0';
		return 1;
	}
	return r < 0 ? r : holds;
}

/*
 * Why this is, or is to become, a Garage host: the profile's service is
 * garage, --set garage.config names a garage.toml, or ROOT/etc/garage.toml
 * exists (*@etc_only true then); NULL when none holds.
 */
static const char *garage_reason(const struct ht_collect *c, bool *etc_only)
{
	struct stat st;
	int r;

	*etc_only = false;
	if (ht_has_word(c->service, "garage"))
		return "the profile's workload.service is garage";
	if (c->garage_config)
		return "--set garage.config names a garage.toml";
	/* A link that loops or a file hosttune may not read is there all the
	 * same: the pre-flight reports it (ELOOP, EACCES), never as absent. */
	r = ht_root_stat(c->root, "/etc/garage.toml", false, &st);
	if (r == -ENOENT || r == -ENOTDIR)
		return NULL;
	*etc_only = true;
	return "/etc/garage.toml exists";
}

/* ---- the sources ---- */

/* A collector of the simple form: the facts of one source below the root. */
#define SIMPLE(fn)                                                                         \
	static int src_##fn(struct ht_collect *c, struct ht_facts *f, struct ht_error *err) \
	{                                                                                  \
		(void)err;                                                                 \
		return fn(f, c->root);                                                     \
	}
SIMPLE(ht_collect_mem)
SIMPLE(ht_collect_kernel)
SIMPLE(ht_collect_arch)
SIMPLE(ht_collect_host)
SIMPLE(ht_collect_cpu_count)
SIMPLE(ht_collect_page_size)
SIMPLE(ht_collect_conntrack_files)
SIMPLE(ht_collect_netns_initial)
SIMPLE(ht_collect_cttable)
SIMPLE(ht_collect_udev)
SIMPLE(ht_collect_ethtool)
SIMPLE(ht_collect_overlay)
SIMPLE(ht_collect_net_files)
SIMPLE(ht_collect_file_table)
SIMPLE(ht_collect_file_holders)
SIMPLE(ht_collect_process_sockets)
SIMPLE(ht_collect_memory_pressure)
SIMPLE(ht_collect_port_range)
SIMPLE(ht_collect_ports)
SIMPLE(ht_collect_sockstat)
SIMPLE(ht_collect_uptime)
SIMPLE(ht_collect_cgroups)
SIMPLE(ht_collect_netns)

/* A sampled source (collect/sample.h): one reading, or the second of --sample against the first. */
#define SAMPLED(fn, name)                                                                  \
	static int src_##fn(struct ht_collect *c, struct ht_facts *f, struct ht_error *err) \
	{                                                                                  \
		(void)err;                                                                 \
		return ht_sampler_collect(c->sampler, f, name);                            \
	}
SAMPLED(nstat, "nstat")
SAMPLED(peers, "tcp peers")
SAMPLED(nicstats, "interface counters")
SAMPLED(softnet, "softnet")
SAMPLED(ctstats, "conntrack counters")

static int src_sample_seconds(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	(void)err;
	return ht_sampler_seconds_fact(c->sampler, f);
}

/* nf_conntrack as files tell it: /sys/module, then initstate and modules.builtin. */
static int src_module_state(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	int r = ht_collect_conntrack_loaded(f, c->root);

	(void)err;
	return r < 0 ? r : ht_collect_module_state(f, c->root);
}

/* What only libkmod tells: modprobe.d's options, modules.dep for an unloaded module. */
static int src_kmod(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	(void)err;
	return ht_collect_kmod(f, c->root);
}

static int src_cpu(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	(void)err;
	return ht_collect_cpu(f, c->root, !(c->flags & HT_COLLECT_NO_MEASURE));
}

static int src_apply_counters(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	(void)err;
	return ht_collect_apply_counters(f, c->root, c->state_path);
}

/* What the boot gives the key of one boot.KEY fact; the configuration is read once. */
static int src_boot_fact(struct ht_collect *c, struct ht_facts *f, const char *name,
                         struct ht_error *err)
{
	(void)err;
	if (!c->boot && ht_boot_new(c->root, &c->boot) < 0)
		return -ENOMEM;
	return ht_collect_boot_fact(f, c->boot, name);
}

/* tuned's active profile and what its [sysctl] gives one key. */
static int src_tuned_fact(struct ht_collect *c, struct ht_facts *f, const char *name,
                          struct ht_error *err)
{
	(void)err;
	return ht_collect_tuned_fact(f, c->root, name);
}

/* A snapshot holds the profile and what it gives the conntrack keys. */
static int src_tuned(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	int r = src_tuned_fact(c, f, "tuned.profile", err);

	return r < 0 ? r : src_tuned_fact(c, f, "tuned.sysctl.net.netfilter.nf_conntrack_max", err);
}

/* Every boot.* fact a snapshot holds: the conntrack keys. */
static int src_boot(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	int r = src_boot_fact(c, f, "boot.net.netfilter.nf_conntrack_max", err);

	return r < 0 ? r : src_boot_fact(c, f, "boot.net.netfilter.nf_conntrack_tcp_timeout_time_wait",
	                                 err);
}

/* The listening sockets, kept for the owners asked for one port at a time. */
static int src_listeners(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	const char *skipped;
	char *w = NULL;
	int r;

	(void)err;
	r = ht_collect_listeners(f, c->root, &c->listeners);
	skipped = r < 0 ? NULL : ht_listeners_skipped(c->listeners);
	if (!skipped)
		return r;
	/* Never a listener lost in silence: say so on stderr, as for garage.toml. */
	if (asprintf(&w, "%s%snot read: %s; the listening sockets listed there are not judged",
	             c->warning ? c->warning : "", c->warning ? "; " : "", skipped) < 0)
		return -ENOMEM;
	free(c->warning);
	c->warning = w;
	return r;
}

/* The port of a name listener.PORT.SUFFIX, 0 for another name. */
static unsigned listener_port(const char *name)
{
	unsigned port = 0;
	int n = 0;

	if (sscanf(name, "listener.%5u.%n", &port, &n) != 1 || n == 0 || port > 65535)
		return 0;
	return port;
}

/*
 * The owner of one listening port, when the rules want it
 * (listener.owner_wanted of that port): a walk of every process's
 * descriptors, as far as needed.
 */
static int owner_of(struct ht_collect *c, struct ht_facts *f, unsigned port, struct ht_error *err)
{
	char inst[16];
	int r;

	if (!c->listeners || port == 0)
		return 0;
	snprintf(inst, sizeof(inst), "%u", port);
	r = gate_open(c, "listener.owner_wanted", inst, err);
	if (r <= 0)
		return r;
	return ht_listeners_owner(f, c->listeners, port);
}

static int src_owner(struct ht_collect *c, struct ht_facts *f, const char *name,
                     struct ht_error *err)
{
	const struct ht_fact *list;
	int r = ht_facts_need(f, "listener.list", 0, &list, err);

	return r < 0 ? r : owner_of(c, f, listener_port(name), err);
}

/* One listening port's addresses, from the scan. */
static int src_address(struct ht_collect *c, struct ht_facts *f, const char *name,
                       struct ht_error *err)
{
	(void)err;
	return c->listeners ? ht_listeners_addresses(f, c->listeners, listener_port(name)) : 0;
}

/* @fn for every port of listener.list (a copy: @fn may add facts). */
static int each_port(struct ht_collect *c, struct ht_facts *f,
                     int (*fn)(struct ht_collect *c, struct ht_facts *f, unsigned port,
                               struct ht_error *err),
                     struct ht_error *err)
{
	_cleanup_free_ char *ports = NULL;
	const struct ht_fact *list = ht_facts_get(f, "listener.list");
	int r = 0;

	if (!c->listeners || !list || list->value.type != HT_T_STR)
		return 0;
	ports = strdup(list->value.s);
	if (!ports)
		return -ENOMEM;
	for (char *save = NULL, *p = strtok_r(ports, " ", &save); p && r >= 0;
	     p = strtok_r(NULL, " ", &save))
		r = fn(c, f, (unsigned)atoi(p), err);
	return r;
}

static int address_of(struct ht_collect *c, struct ht_facts *f, unsigned port,
                      struct ht_error *err)
{
	(void)err;
	return ht_listeners_addresses(f, c->listeners, port);
}

/* Every listening port's addresses. */
static int src_addresses(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	return each_port(c, f, address_of, err);
}

/* The owner of every listening port the rules want (every port outside an evaluation). */
static int src_owners(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	return each_port(c, f, owner_of, err);
}

/* Whether some port of listener.list has an owner refused (listener.PORT.pid EACCES). */
static bool owner_refused(struct ht_facts *f)
{
	const struct ht_fact *list = ht_facts_get(f, "listener.list");

	if (!list || list->value.type != HT_T_STR)
		return false;
	for (const char *p = list->value.s; *p;) {
		const struct ht_fact *pf;
		char key[64];
		unsigned port;
		int k;

		if (sscanf(p, "%u%n", &port, &k) != 1)
			break;
		p += k;
		while (*p == ' ')
			p++;
		snprintf(key, sizeof(key), "listener.%u.pid", port);
		pf = ht_facts_get(f, key);
		if (pf && pf->value.type == HT_T_NONE && (pf->error == EACCES || pf->error == EPERM))
			return true;
	}
	return false;
}

/*
 * The processes: those at 90% of their descriptor limit that hold a
 * listening socket (every process's descriptors counted, the links read
 * of those near their limit only), the owners of the ports the rules
 * want, the service, Garage.
 */
static int src_processes(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	_cleanup_free_ char *names = NULL;
	_cleanup_free_ int *near = NULL;
	size_t n_near = 0, n_held = 0;
	bool etc_only;
	int r = src_owners(c, f, err);

	if (r < 0)
		return r;
	/* No listening socket to hold: nobody to count. */
	if (ht_listeners_sockets(c->listeners) > 0) {
		r = ht_processes_near_limit(c->root, &near, &n_near);
		for (size_t i = 0; r >= 0 && i < n_near; i++) {
			r = ht_listeners_held(c->listeners, near[i]);
			if (r > 0)
				near[n_held++] = near[i];
		}
		if (r < 0)
			return r;
	}
	/*
	 * A port's owner not found because some /proc/PID/fd was refused: when
	 * the refused are few enough to be named all (3), each is judged too,
	 * so that its row says what could not be read rather than vanish.
	 */
	{
		int refused[3];
		size_t nr = ht_listeners_refused(c->listeners, refused, ARRAY_SIZE(refused));
		int *np;

		if (nr > 0 && nr <= ARRAY_SIZE(refused) && owner_refused(f)) {
			np = reallocarray(near, n_held + nr, sizeof(*near));
			if (!np)
				return -ENOMEM;
			near = np;
			for (size_t i = 0; i < nr; i++)
				near[n_held++] = refused[i];
		}
	}
	/* Garage's process on a Garage host even when the profile's service is another. */
	if (!ht_has_word(c->service, "garage") && garage_reason(c, &etc_only) &&
	    asprintf(&names, "%s%sgarage", c->service ? c->service : "",
	             c->service ? " " : "") < 0)
		return -ENOMEM;
	return ht_collect_processes(f, c->root, names ? names : c->service, near, n_held);
}

/*
 * The Garage pre-flight's facts (garage.*, storage.*: ht_collect_garage())
 * on a Garage host (garage_reason()); garage.checked true then, its source
 * the reason, else unavailable ENOENT and nothing else collected, so the
 * Garage rules give no finding. When only ROOT/etc/garage.toml's existence
 * started it, a file that cannot be read as Garage would is a warning
 * (ht_collect_warning()) and garage.checked is unavailable with the message:
 * nobody asked for the pre-flight.
 */
static int src_garage(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	struct ht_garage_input in = {
		.config = c->garage_config,
		.metadata_dir = c->garage_metadata_dir,
		.data_dir = c->garage_data_dir,
	};
	_cleanup_free_ char *skipped = NULL;
	bool etc_only;
	const char *why = garage_reason(c, &etc_only);
	int r;

	if (!why)
		return ht_facts_set_unavailable(f, "garage.checked", ENOENT, NULL,
		                                "no --profile garage, no --set garage.config, no "
		                                "/etc/garage.toml: not a Garage host");
	r = ht_collect_garage(f, c->root, &in, !(c->flags & HT_COLLECT_NO_MEASURE), err);
	if (r == -ENOMEM || r >= 0)
		return r < 0 ? r : ht_facts_set_bool(f, "garage.checked", true, why);
	/* A garage.toml that cannot be reached (a loop of links): garage.config
	 * says so with its errno; the rest of the audit goes on. */
	if (!etc_only && r != -ELOOP)
		return r;
	if (asprintf(&skipped, "skipped: %s", err->msg[0] ? err->msg : strerror(-r)) < 0 ||
	    asprintf(&c->warning, "%s; the Garage pre-flight is skipped%s",
	             err->msg[0] ? err->msg : strerror(-r),
	             etc_only && r != -ELOOP ? " (--profile garage makes this an error)" : "") < 0)
		return -ENOMEM;
	err->msg[0] = '\0';
	/* A loop of links: false, so that garage.config_read shows garage.config's ELOOP. */
	if (r == -ELOOP)
		return ht_facts_set_bool(f, "garage.checked", false, skipped);
	return ht_facts_set_unavailable(f, "garage.checked", -r, NULL, skipped);
}

/* MinIO's port: --address of MINIO_OPTS in ROOT/etc/default/minio, else 9000; 0 when not there. */
static int64_t minio_port(const struct ht_collect *c, int *err)
{
	_cleanup_free_ char *text = NULL;
	const char *a;
	int r = ht_read_file(c->root, "/etc/default/minio", &text);

	*err = 0;
	if (r == -ENOMEM)
		return (*err = r), 0;
	if (r < 0)
		return ht_has_word(c->service, "minio") ? 9000 : 0;
	a = strstr(text, "--address");
	if (a) {
		const char *end;
		int64_t port = 0;

		a += 9;
		a += strspn(a, "= ");
		end = a + strcspn(a, " \"'\n");
		for (const char *q = end; q > a; q--)
			if (q[-1] == ':') {
				for (const char *d = q; d < end && *d >= '0' && *d <= '9' && port <= 65535; d++)
					port = port * 10 + (*d - '0');
				break;
			}
		if (port >= 1 && port <= 65535)
			return port;
	}
	return 9000;
}

/*
 * The reverse proxies in front of the store: the store's ports are
 * Garage's S3 and web ports (its pre-flight's garage.s3_port and
 * garage.web_port, on a Garage host), MinIO's (--address in
 * /etc/default/minio, 9000 by default) and the registry's (5000, the
 * distribution registry's http.addr default) when the profile's service is
 * one of them.
 */
static int src_proxy(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	static const char *const garage_ports[] = { "garage.s3_port", "garage.web_port" };
	static const char *const garage_roles[] = { "s3", "web" };
	struct ht_proxy_input in = { 0 };
	const struct ht_fact *g;
	int64_t ports[4];
	const char *roles[4];
	_cleanup_free_ char *text = NULL;
	int r, e;

	r = ht_facts_need(f, "garage.checked", 0, &g, err);
	if (r < 0)
		return r;
	for (size_t i = 0; g && g->value.type == HT_T_BOOL && g->value.b && i < 2; i++) {
		const struct ht_fact *p;

		r = ht_facts_need(f, garage_ports[i], 0, &p, err);
		if (r < 0)
			return r;
		if (p && p->value.type == HT_T_INT) {
			roles[in.nports] = garage_roles[i];
			ports[in.nports++] = p->value.i;
		}
	}
	ports[in.nports] = minio_port(c, &e);
	if (e < 0)
		return e;
	roles[in.nports] = "s3";
	in.nports += ports[in.nports] > 0;
	if (ht_has_word(c->service, "registry")) {
		roles[in.nports] = "registry";
		ports[in.nports++] = 5000;
	}
	in.ports = ports;
	in.roles = roles;
	{
		size_t len = 0;

		text = calloc(1, in.nports * 16 + 1);
		if (!text)
			return -ENOMEM;
		for (size_t i = 0; i < in.nports; i++)
			len += (size_t)sprintf(text + len, "%s%" PRId64 "/%s", i ? " " : "", ports[i],
			                       roles[i]);
	}
	r = ht_facts_set_str(f, "proxy.store_ports", text,
	                     "garage.s3_port and garage.web_port (a Garage host), MinIO's --address "
	                     "(/etc/default/minio, else 9000), the registry's 5000");
	if (r >= 0)
		r = ht_collect_proxies(f, c->root, &in, err);
	/*
	 * A configuration that does not read as nginx reads it (or uses a
	 * module's own syntax hosttune does not know): a warning, the proxy
	 * checks not applicable with the message, the rest of the audit goes on.
	 */
	if (r == -EINVAL && err->msg[0]) {
		_cleanup_free_ char *why = ht_strdup_printf("skipped: %s", err->msg);
		char *w = ht_strdup_printf("%s%s%s; the proxy checks are skipped",
		                           c->warning ? c->warning : "", c->warning ? "; " : "",
		                           err->msg);

		if (!why || !w) {
			free(w);
			return -ENOMEM;
		}
		free(c->warning);
		c->warning = w;
		err->msg[0] = '\0';
		r = ht_facts_set_unavailable(f, "proxy.checked", EINVAL, NULL, why);
		if (r >= 0)
			r = ht_facts_set_unavailable(f, "proxy.list", EINVAL, NULL, why);
	}
	return r;
}

/*
 * The sources, in the order `hosttune facts` runs them all. A fact is asked
 * of the first source with a pattern that matches its name (fnmatch(3), '*'
 * across dots too), so a narrower pattern comes before a wider one of the
 * same family. A source runs once per collection, whatever it is asked for;
 * one with collect_one runs for each fact asked (the owner of one port) and
 * its collect when everything is (ht_collect_all()). The same pattern in a
 * later row is a fallback: when the first source ran and left the fact
 * unset, the later one is asked (conntrack.module: the files settle it when
 * nf_conntrack is loaded or built in, libkmod's modules.dep otherwise), so
 * the cheap source comes first.
 */
static const struct ht_source {
	const char *name;
	const char *const *provides; /* NULL-terminated patterns */
	enum ht_cost cost;
	int (*collect)(struct ht_collect *c, struct ht_facts *f, struct ht_error *err);
	const char *const *needs; /* facts of other sources it reads, asked for first; or NULL */
	/*
	 * A host rule that must hold for the source to run on demand (the table
	 * is dumped only when conntrack.dump_wanted holds); NULL for none.
	 * ht_collect_all() runs every source whatever it says.
	 */
	const char *gate;
	int (*collect_one)(struct ht_collect *c, struct ht_facts *f, const char *name,
	                   struct ht_error *err);
} sources[] = {
#define P(...) ((const char *const[]){ __VA_ARGS__, NULL })
	{ "meminfo", P("mem.total"), HT_COST_FILES, src_ht_collect_mem, NULL, NULL, NULL },
	{ "kernel release", P("kernel.release", "kernel.version"), HT_COST_FILES,
	  src_ht_collect_kernel, NULL, NULL, NULL },
	{ "arch", P("cpu.arch", "kernel.pointer_size"), HT_COST_FILES, src_ht_collect_arch, NULL,
	  NULL, NULL },
	{ "host", P("host.name", "host.collected_at", "hosttune.version"), HT_COST_FILES, src_ht_collect_host, NULL, NULL,
	  NULL },
	{ "cpus online", P("cpu.count"), HT_COST_FILES, src_ht_collect_cpu_count, NULL, NULL, NULL },
	{ "page size", P("kernel.page_size"), HT_COST_FILES, src_ht_collect_page_size, NULL, NULL,
	  NULL },
	{ "conntrack sysctls",
	  P("module.nf_conntrack.hashsize", "net.netfilter.nf_conntrack_buckets",
	    "net.netfilter.nf_conntrack_count", "net.netfilter.nf_conntrack_max",
	    "net.netfilter.nf_conntrack_tcp_timeout_close_wait",
	    "net.netfilter.nf_conntrack_tcp_timeout_established",
	    "net.netfilter.nf_conntrack_tcp_timeout_fin_wait",
	    "net.netfilter.nf_conntrack_tcp_timeout_syn_sent",
	    "net.netfilter.nf_conntrack_tcp_timeout_time_wait"),
	  HT_COST_FILES, src_ht_collect_conntrack_files, NULL, NULL, NULL },
	{ "module state", P("conntrack.loaded", "conntrack.module", "module.nf_conntrack.*"),
	  HT_COST_FILES, src_module_state, P("kernel.release"), NULL, NULL },
	{ "libkmod", P("conntrack.module", "modprobe.nf_conntrack.*"), HT_COST_LIBRARY, src_kmod,
	  P("kernel.release", "conntrack.loaded"), NULL, NULL },
	{ "netns", P("netns.initial"), HT_COST_FILES, src_ht_collect_netns_initial, NULL, NULL,
	  NULL },
	{ "boot configuration", P("boot.*"), HT_COST_FILES, src_boot, NULL, NULL, src_boot_fact },
	{ "tuned", P("tuned.*"), HT_COST_FILES, src_tuned, NULL, NULL, src_tuned_fact },
	{ "apply counters", P("conntrack.stat.drop_at_apply", "conntrack.stat.early_drop_at_apply"),
	  HT_COST_FILES, src_apply_counters, NULL, NULL, NULL },
	{ "conntrack counters", P("conntrack.stat.*"), HT_COST_FILES, src_ctstats, NULL, NULL,
	  NULL },
	{ "conntrack table",
	  P("conntrack.dump.*", "conntrack.state.*", "conntrack.stale.*", "conntrack.nat.*"),
	  HT_COST_WALK, src_ht_collect_cttable,
	  P("conntrack.loaded", "net.netfilter.nf_conntrack_tcp_timeout_established"),
	  "conntrack.dump_wanted", NULL },
	{ "ethtool", P("nic.*.speed", "nic.*.duplex", "nic.*.channels.*", "nic.max_speed"),
	  HT_COST_FILES, src_ht_collect_ethtool, P("nic.list"), NULL, NULL },
	{ "interface counters", P("nic.*.stats.*"), HT_COST_FILES, src_nicstats, NULL, NULL,
	  NULL },
	{ "overlays", P("nic.*.mtu", "nic.*.overlay", "nic.*.overlay_headroom", "nic.*.underlay*"),
	  HT_COST_FILES, src_ht_collect_overlay, P("nic.list"), NULL, NULL },
	{ "udev", P("nic.*"), HT_COST_FILES, src_ht_collect_udev, NULL, NULL, NULL },
	{ "softnet", P("softnet.*"), HT_COST_FILES, src_softnet, NULL, NULL, NULL },
	{ "net sysctls", P("net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog",
	                   "net.ipv4.tcp_max_tw_buckets", "net.ipv4.tcp_syncookies",
	                   "net.ipv4.tcp_timestamps",
	                   "net.ipv4.tcp_tw_reuse"),
	  HT_COST_FILES, src_ht_collect_net_files, NULL, NULL, NULL },
	{ "memory pressure", P("mem.swap_total", "mem.swap_zram", "mem.available", "mem.oom_kills", "mem.psi.*"),
	  HT_COST_FILES, src_ht_collect_memory_pressure, NULL, NULL, NULL },
	{ "file table", P("fs.file-max", "fs.nr_open", "files.open"), HT_COST_FILES,
	  src_ht_collect_file_table, NULL, NULL, NULL },
	{ "file holders", P("files.top.*"), HT_COST_WALK, src_ht_collect_file_holders, NULL, NULL,
	  NULL },
	{ "listeners", P("listener.list", "listener.*.backlog", "listener.*.queue"),
	  HT_COST_FILES, src_listeners, NULL, NULL, NULL },
	{ "listener addresses", P("listener.*.addresses"), HT_COST_FILES, src_addresses,
	  P("listener.list"), NULL, src_address },
	{ "listener owners", P("listener.*.pid", "listener.*.process"), HT_COST_WALK,
	  src_owners, P("listener.list"), NULL, src_owner },
	{ "port range", P("net.ipv4.ip_local_port_range", "ports.range.*"), HT_COST_FILES,
	  src_ht_collect_port_range, NULL, NULL, NULL },
	{ "client sockets", P("ports.*"), HT_COST_WALK, src_ht_collect_ports, P("ports.range.low"),
	  "ports.dump_wanted", NULL },
	{ "process sockets", P("process.*.sockets", "process.*.sock_*"), HT_COST_WALK,
	  src_ht_collect_process_sockets, P("process.list"), NULL, NULL },
	{ "processes", P("process.*"), HT_COST_WALK, src_processes, P("listener.list"), NULL,
	  NULL },
	{ "nstat", P("nstat.*"), HT_COST_FILES, src_nstat, NULL, NULL, NULL },
	{ "tcp peers", P("peer.*"), HT_COST_WALK, src_peers, NULL, "path.dump_wanted", NULL },
	{ "uptime", P("host.uptime"), HT_COST_FILES, src_ht_collect_uptime, NULL, NULL, NULL },
	{ "sample", P("sample.seconds"), HT_COST_FILES, src_sample_seconds, NULL, NULL, NULL },
	{ "sockstat", P("sockstat.*"), HT_COST_FILES, src_ht_collect_sockstat, NULL, NULL, NULL },
	{ "cgroups", P("cgroup.*"), HT_COST_WALK, src_ht_collect_cgroups, NULL, NULL, NULL },
	{ "network namespaces", P("netns.list", "netns.skipped", "netns.*.*"), HT_COST_WALK,
	  src_ht_collect_netns, NULL, NULL, NULL },
	{ "cpu", P("cpu.*"), HT_COST_MEASURE, src_cpu, NULL, NULL, NULL },
	{ "garage", P("garage.*", "storage.*"), HT_COST_MEASURE, src_garage, NULL, NULL, NULL },
	{ "reverse proxies", P("proxy.*"), HT_COST_FILES, src_proxy, NULL, NULL, NULL },
#undef P
};

_Static_assert(ARRAY_SIZE(sources) <= SOURCES_MAX, "SOURCES_MAX is too small");

enum { SRC_NEW, SRC_RUNNING, SRC_DONE };

int ht_collect_new(const char *root, unsigned flags, struct ht_collect **out)
{
	struct ht_collect *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->flags = flags;
	if ((!ht_root_is_live(root) && !(c->root = strdup(root))) ||
	    ht_sampler_new(root, &c->sampler) < 0) {
		free(c->root);
		free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void ht_collect_free(struct ht_collect *c)
{
	if (!c)
		return;
	ht_listeners_free(c->listeners);
	ht_boot_free(c->boot);
	ht_sampler_free(c->sampler);
	free(c->root);
	free(c->service);
	free(c->state_path);
	free(c->garage_config);
	free(c->garage_metadata_dir);
	free(c->garage_data_dir);
	free(c->warning);
	free(c);
}

int ht_collect_input(struct ht_collect *c, const char *name, const char *value)
{
	char **slot = strcmp(name, "workload.service") == 0    ? &c->service :
	              strcmp(name, "state") == 0               ? &c->state_path :
	              strcmp(name, "garage.config") == 0       ? &c->garage_config :
	              strcmp(name, "garage.metadata_dir") == 0 ? &c->garage_metadata_dir :
	              strcmp(name, "garage.data_dir") == 0     ? &c->garage_data_dir :
	                                                         NULL;
	char *v;

	if (!slot)
		return -EINVAL;
	v = value && *value ? strdup(value) : NULL;
	if (value && *value && !v)
		return -ENOMEM;
	free(*slot);
	*slot = v;
	return 0;
}

void ht_collect_rules(struct ht_collect *c, struct ht_ruleset *rs)
{
	c->rs = rs;
}

/* Asks for the facts source @i reads first. 0, or the provider's error. */
static int source_needs(struct ht_facts *f, size_t i, struct ht_error *err)
{
	for (const char *const *n = sources[i].needs; n && *n; n++) {
		const struct ht_fact *dep;
		int r = ht_facts_need(f, *n, 0, &dep, err);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Runs source @i unless it ran (or runs: a source asking for its own facts gets none). */
static int run_source(struct ht_collect *c, struct ht_facts *f, size_t i, struct ht_error *err)
{
	int r;

	if (c->state[i] != SRC_NEW)
		return 0;
	c->state[i] = SRC_RUNNING;
	r = source_needs(f, i, err);
	if (r >= 0) {
		err->msg[0] = '\0';
		r = sources[i].collect(c, f, err);
	}
	c->state[i] = SRC_DONE;
	if (r < 0 && !err->msg[0])
		ht_error_set(err, -r, "collecting %s: %s", sources[i].name, strerror(-r));
	return r;
}

/* ht_name_cb: the sampled source of a name the rules read is wanted. */
static int want_name(const char *name, const struct ht_srcpos *pos, void *userdata)
{
	(void)pos;
	ht_sampler_want(userdata, name);
	return 0;
}

int ht_collect_sample(struct ht_collect *c, double seconds, const struct ht_ruleset *rs)
{
	if (rs)
		ht_ruleset_foreach_fact(rs, want_name, c->sampler);
	else
		ht_sampler_want(c->sampler, NULL);
	return ht_sampler_start(c->sampler, seconds);
}

const char *ht_collect_warning(const struct ht_collect *c)
{
	return c->warning;
}

/*
 * The source that provides fact @name: the first whose pattern matches,
 * that pattern in *@pattern; -1 for none.
 */
static ssize_t source_of(const char *name, const char **pattern)
{
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++)
		for (const char *const *p = sources[i].provides; *p; p++)
			if (fnmatch(*p, name, 0) == 0) {
				*pattern = *p;
				return (ssize_t)i;
			}
	return -1;
}

/* The next source after @i with the same @pattern (the fallback of the table); -1 for none. */
static ssize_t source_after(size_t i, const char *pattern)
{
	for (size_t j = i + 1; j < ARRAY_SIZE(sources); j++)
		for (const char *const *p = sources[j].provides; *p; p++)
			if (strcmp(*p, pattern) == 0)
				return (ssize_t)j;
	return -1;
}

/*
 * Source @i asked for @name: it runs the first time one of its facts is
 * asked for, when it costs no more than @flags allow and its gate is open;
 * a source of one fact at a time runs for each.
 */
static int provide_from(struct ht_collect *c, struct ht_facts *f, size_t i, const char *name,
                        unsigned flags, struct ht_error *err)
{
	int r;

	if ((flags & HT_NEED_CHEAP) && sources[i].cost != HT_COST_FILES)
		return 0;
	if (sources[i].collect_one) {
		r = source_needs(f, i, err);
		return r < 0 ? r : sources[i].collect_one(c, f, name, err);
	}
	if (c->state[i] == SRC_NEW && sources[i].gate) {
		r = gate_open(c, sources[i].gate, NULL, err);
		if (r <= 0)
			return r;
	}
	return run_source(c, f, i, err);
}

/*
 * ht_fact_provider_cb: the source of @name (provide_from()); when it ran
 * and left @name unset, the next source with the same pattern; a sysctl no
 * source provides is read by its key.
 */
static int provide(struct ht_facts *f, const char *name, unsigned flags, struct ht_error *err,
                   void *userdata)
{
	struct ht_collect *c = userdata;
	const char *pattern = NULL;
	ssize_t i = source_of(name, &pattern);
	int r = 0;

	if (i < 0 && ht_fact_def_is_sysctl(ht_fact_def_find(name)))
		return ht_collect_sysctl(f, c->root, name);
	for (; i >= 0; i = source_after((size_t)i, pattern)) {
		r = provide_from(c, f, (size_t)i, name, flags, err);
		if (r < 0 || c->state[i] != SRC_DONE || ht_facts_get(f, name))
			break;
	}
	/* A counter's interval form its source did not set: no --sample, or not in both readings. */
	if (r >= 0 && !ht_facts_get(f, name))
		r = ht_sampler_no_delta(c->sampler, f, name);
	return r;
}

static void collect_destroy(void *userdata)
{
	ht_collect_free(userdata);
}

void ht_collect_attach(struct ht_collect *c, struct ht_facts *f)
{
	ht_facts_set_provider(f, provide, c, collect_destroy);
}

int ht_collect_all(struct ht_collect *c, struct ht_facts *f, struct ht_error *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++) {
		int r = run_source(c, f, i, err);

		if (r < 0)
			return r;
	}
	return 0;
}

int ht_facts_collect(struct ht_facts *f, const char *root, unsigned flags)
{
	struct ht_error err = { "" };
	struct ht_collect *c;
	int r;

	if (!f)
		return -EINVAL;
	r = ht_collect_new(root, flags, &c);
	if (r < 0)
		return r;
	r = ht_collect_all(c, f, &err);
	ht_collect_free(c);
	return r;
}
