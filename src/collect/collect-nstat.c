/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "collect/sample.h"
#include "collect/procfs.h"
#include "engine/facts.h"
#include "shared/util.h"

/* The nstat(8) counters of /proc/net/netstat and /proc/net/snmp. */

/* ---- parser ---- */

int ht_nstat_value(const char *text, const char *prefix, const char *field, int64_t *out)
{
	size_t plen = strlen(prefix), flen = strlen(field);

	if (!text || !out)
		return -EINVAL;
	/* Pairs of lines: "PREFIX: Name1 Name2 ..." then "PREFIX: v1 v2 ...". */
	for (const char *p = text; p && *p;) {
		const char *names, *vals, *nl;
		int idx = 0;

		nl = strchr(p, '\n');
		if (strncmp(p, prefix, plen) != 0 || p[plen] != ':') {
			p = nl ? nl + 1 : NULL;
			continue;
		}
		if (!nl)
			return -EINVAL; /* a header without its value line */
		names = p + plen + 1;
		vals = nl + 1;
		if (strncmp(vals, prefix, plen) != 0 || vals[plen] != ':')
			return -EINVAL;
		vals += plen + 1;
		for (const char *n = skip_blank(names); *n && *n != '\n'; idx++) {
			const char *ne = skip_token(n);

			if ((size_t)(ne - n) == flen && memcmp(n, field, flen) == 0) {
				const char *v = skip_blank(vals);
				long long x;
				char *end;

				for (int i = 0; i < idx; i++) {
					if (!*v || *v == '\n')
						return -EINVAL;
					v = skip_blank(skip_token(v));
				}
				if (!*v || *v == '\n')
					return -EINVAL;
				errno = 0;
				x = strtoll(v, &end, 10);
				if (errno || end == v || (*end && *end != ' ' && *end != '\n') || x < 0)
					return -EINVAL;
				*out = x;
				return 0;
			}
			n = skip_blank(ne);
		}
		nl = strchr(vals, '\n');
		p = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

/* ---- nstat ---- */

int ht_nstat_snapshot(const char *root, struct ht_snapshot *snap)
{
	static const struct {
		const char *fact, *path, *prefix, *field;
	} defs[] = {
		{ "nstat.TcpActiveOpens", "/proc/net/snmp", "Tcp", "ActiveOpens" },
		{ "nstat.TcpExtListenDrops", "/proc/net/netstat", "TcpExt", "ListenDrops" },
		{ "nstat.TcpExtListenOverflows", "/proc/net/netstat", "TcpExt", "ListenOverflows" },
		{ "nstat.TcpExtSyncookiesSent", "/proc/net/netstat", "TcpExt", "SyncookiesSent" },
		{ "nstat.TcpExtTCPReqQFullDoCookies", "/proc/net/netstat", "TcpExt",
		  "TCPReqQFullDoCookies" },
		{ "nstat.TcpExtTCPReqQFullDrop", "/proc/net/netstat", "TcpExt", "TCPReqQFullDrop" },
		{ "nstat.TcpExtTCPTimeWaitOverflow", "/proc/net/netstat", "TcpExt",
		  "TCPTimeWaitOverflow" },
		{ "nstat.TcpExtTW", "/proc/net/netstat", "TcpExt", "TW" },
		{ "nstat.TcpOutSegs", "/proc/net/snmp", "Tcp", "OutSegs" },
		{ "nstat.TcpPassiveOpens", "/proc/net/snmp", "Tcp", "PassiveOpens" },
		{ "nstat.TcpRetransSegs", "/proc/net/snmp", "Tcp", "RetransSegs" },
	};
	_cleanup_free_ char *netstat = NULL, *snmp = NULL;
	int rn, rs;

	rn = ht_read_file(root, "/proc/net/netstat", &netstat);
	rs = ht_read_file(root, "/proc/net/snmp", &snmp);
	if (rn == -ENOMEM || rs == -ENOMEM)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(defs); i++) {
		bool is_snmp = strcmp(defs[i].path, "/proc/net/snmp") == 0;
		const char *text = is_snmp ? snmp : netstat;
		char src[96];
		int64_t v;
		int r = is_snmp ? rs : rn;

		if (r >= 0)
			r = ht_nstat_value(text, defs[i].prefix, defs[i].field, &v);
		snprintf(src, sizeof(src), "%s %s: %s", defs[i].path, defs[i].prefix, defs[i].field);
		/* The kernel prints these unsigned; a negative one is no counter. */
		if (r >= 0 && v < 0)
			r = -EINVAL;
		if (r < 0)
			r = ht_snapshot_add_error(snap, defs[i].fact, r,
			                          r == -ENOENT && text ? src : defs[i].path);
		else
			r = ht_snapshot_add(snap, defs[i].fact, (uint64_t)v, src);
		if (r < 0)
			return r;
	}
	return 0;
}

int ht_collect_nstat(struct ht_facts *f, const char *root)
{
	struct ht_snapshot snap = { 0 };
	int r = ht_nstat_snapshot(root, &snap);

	if (r >= 0)
		r = ht_sample_facts_default(f, NULL, &snap, 0);
	ht_snapshot_clear(&snap);
	return r;
}

/* ---- /proc/uptime ---- */

int ht_uptime_seconds(const char *text, int64_t *out)
{
	char *end;
	double v;

	if (!text || !out)
		return -EINVAL;
	/* "SECONDS.CC IDLE.CC\n" (fs/proc/uptime.c). */
	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || (*end != ' ' && *end != '\n') || !(v >= 0) || v > 1e15)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

int ht_collect_uptime(struct ht_facts *f, const char *root)
{
	_cleanup_free_ char *text = NULL;
	int64_t v = 0;
	int r = ht_read_file(root, "/proc/uptime", &text);

	if (r >= 0)
		r = ht_uptime_seconds(text, &v);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_errno(f, "host.uptime", r, "seconds", "/proc/uptime");
	return ht_facts_set_int(f, "host.uptime", v, "seconds", "/proc/uptime");
}

/* ---- /proc/net/sockstat ---- */

int ht_sockstat_value(const char *text, const char *prefix, const char *key, int64_t *out)
{
	size_t plen = strlen(prefix), klen = strlen(key);

	if (!text || !out)
		return -EINVAL;
	/* One line a protocol: "PREFIX: key1 v1 key2 v2 ..." (net/ipv4/proc.c sockstat_seq_show()). */
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, prefix, plen) != 0 || p[plen] != ':')
			continue;
		for (const char *w = skip_blank(p + plen + 1); *w && *w != '\n';) {
			const char *end = skip_token(w), *v = skip_blank(end);
			char *vend;
			long long n;

			if (!*v || *v == '\n')
				return -EINVAL;
			if ((size_t)(end - w) == klen && strncmp(w, key, klen) == 0) {
				errno = 0;
				n = strtoll(v, &vend, 10);
				if (errno || vend == v || n < 0 ||
				    (*vend != ' ' && *vend != '\n' && *vend != '\0'))
					return -EINVAL;
				*out = n;
				return 0;
			}
			w = skip_blank(skip_token(v));
		}
		return -ENOENT;
	}
	return -ENOENT;
}

int ht_collect_sockstat(struct ht_facts *f, const char *root)
{
	static const struct {
		const char *name, *key;
	} facts[] = {
		{ "sockstat.tcp.inuse", "inuse" },
		{ "sockstat.tcp.tw", "tw" },
	};
	static const char path[] = "/proc/net/sockstat";
	_cleanup_free_ char *text = NULL;
	int r = ht_read_file(root, path, &text);

	if (r == -ENOMEM)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(facts); i++) {
		int64_t v;
		int e = r < 0 ? r : ht_sockstat_value(text, "TCP", facts[i].key, &v);

		e = e < 0 ? ht_facts_set_errno(f, facts[i].name, e, ht_fact_def_unit(facts[i].name),
		                               path)
		          : ht_facts_set_int(f, facts[i].name, v, ht_fact_def_unit(facts[i].name),
		                             path);
		if (e < 0)
			return e;
	}
	return 0;
}
