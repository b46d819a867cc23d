/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/nginx.h"
#include "shared/util.h"

/*
 * The reverse proxies in front of the store: each path from a proxy's
 * listening port to the store's S3 or web port (struct ht_proxy_input), as
 * one proxy.NAME.* instance with every setting the proxy rules judge, its
 * effective value and where it comes from. One reader a proxy fills the
 * same struct proxy_path; nginx is the first.
 */

#define NGINX_CONF "/etc/nginx/nginx.conf"

/* One setting of a path: its value and where it was written (or the default). */
struct setting {
	int64_t i;
	bool b;
	char *s;
	char *src;   /* "FILE:LINE", or the proxy's documented default */
};

/* The settings of a path, in the order of its facts. */
enum {
	S_CLIENT_MAX_BODY_SIZE,
	S_HOST,
	S_HTTP_VERSION,
	S_CONNECTION,
	S_KEEPALIVE,
	S_REQUEST_BUFFERING,
	S_BUFFERING,
	S_MAX_TEMP_FILE_SIZE,
	S_HTTP2,
	S_READ_TIMEOUT,
	S_SEND_TIMEOUT,
	S_CLIENT_BODY_TIMEOUT,
	S__MAX,
};

/* A path from the proxy to the store. */
struct proxy_path {
	const char *kind;      /* "nginx" */
	char *location;        /* "FILE:LINE" of what sends it on (proxy_pass) */
	int64_t listen;        /* the client-facing port */
	bool ssl;
	char *listen_src;
	char *server_name;
	char *server_name_src;
	char *pass;            /* the target as written (proxy_pass's URL) */
	char *upstream;        /* the address reached: "127.0.0.1:3900" */
	int64_t store_port;
	const char *store_role; /* the port's role (struct ht_proxy_input) */
	struct setting set[S__MAX];
};

struct paths {
	struct proxy_path *v;
	size_t n;
};

static void path_free(struct proxy_path *p)
{
	free(p->location);
	free(p->listen_src);
	free(p->server_name);
	free(p->server_name_src);
	free(p->pass);
	free(p->upstream);
	for (int i = 0; i < S__MAX; i++) {
		free(p->set[i].s);
		free(p->set[i].src);
	}
}

static void paths_free(struct paths *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		path_free(&ps->v[i]);
	free(ps->v);
	*ps = (struct paths){ 0 };
}

/* The role of @port when it is a store port, else NULL. */
static const char *store_role(const struct ht_proxy_input *in, int64_t port)
{
	for (size_t i = 0; i < in->nports; i++)
		if (in->ports[i] == port)
			return in->roles[i];
	return NULL;
}

static bool store_port(const struct ht_proxy_input *in, int64_t port)
{
	return store_role(in, port) != NULL;
}

/* ---- nginx ---- */

/* A port "1".."65535" of @n bytes at @s; -1 when it is none. */
static int64_t port_of(const char *s, size_t n)
{
	int64_t v = 0;

	if (n == 0 || n > 5)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 && v <= 65535 ? v : -1;
}

/*
 * A size as ngx_parse_size() reads it: digits, then k/K, m/M or g/G
 * (powers of 1024) or nothing (bytes). -EINVAL on anything else.
 */
int ht_nginx_size_parse(const char *s, int64_t *ret)
{
	int64_t v = 0, mul = 1;
	size_t n = s ? strlen(s) : 0;

	if (n == 0)
		return -EINVAL;
	switch (s[n - 1]) {
	case 'k': case 'K': mul = 1024; n--; break;
	case 'm': case 'M': mul = 1024 * 1024; n--; break;
	case 'g': case 'G': mul = 1024 * 1024 * 1024; n--; break;
	}
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX / mul - 9) / 10)
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v * mul;
	return 0;
}

/*
 * A time as ngx_parse_time() reads it, in whole seconds: numbers each with
 * a unit (ms, s, m, h, d, w, M, y; none: seconds), blanks between them
 * allowed ("1m 30s"); milliseconds round up to a second. -EINVAL else.
 */
int ht_nginx_time_parse(const char *s, int64_t *ret)
{
	int64_t total = 0, ms = 0;
	bool any = false;

	if (!s)
		return -EINVAL;
	while (*s) {
		int64_t v = 0, mul;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (v > 100000000)
				return -EINVAL;
			v = v * 10 + (*s - '0');
		}
		if (s[0] == 'm' && s[1] == 's') {
			ms += v;
			s += 2;
			any = true;
			continue;
		}
		switch (*s) {
		case 'y': mul = 365 * 86400; s++; break;
		case 'M': mul = 30 * 86400; s++; break;
		case 'w': mul = 7 * 86400; s++; break;
		case 'd': mul = 86400; s++; break;
		case 'h': mul = 3600; s++; break;
		case 'm': mul = 60; s++; break;
		case 's': mul = 1; s++; break;
		default: mul = 1; break;
		}
		if (*s && *s != ' ' && !(*s >= '0' && *s <= '9'))
			return -EINVAL;
		total += v * mul;
		any = true;
	}
	if (!any)
		return -EINVAL;
	*ret = total + (ms + 999) / 1000;
	return 0;
}

/* The levels a location inherits from, outermost first: http, server, location, ... */
struct levels {
	const struct ht_nginx_dir *lv[HT_NGINX_DEPTH_MAX + 2];
	size_t n;
};

static char *file_line(const struct ht_nginx_dir *d)
{
	return ht_strdup_printf("%s:%u", d->file, d->line);
}

/* The innermost level's last @name, NULL when no level sets it. */
static const struct ht_nginx_dir *inherited(const struct levels *L, const char *name)
{
	for (size_t k = L->n; k-- > 0;) {
		const struct ht_nginx_dir *d = ht_nginx_find(L->lv[k]->sub, L->lv[k]->nsub, name);

		if (d)
			return d;
	}
	return NULL;
}

static int set_default(struct setting *s, const char *src)
{
	return (s->src = strdup(src)) ? 0 : -ENOMEM;
}

/* A size setting: the innermost one that parses, else @def from @defsrc. */
static int size_setting(const struct levels *L, const char *name, int64_t def, const char *defsrc,
                        struct setting *s)
{
	const struct ht_nginx_dir *d = inherited(L, name);

	if (d && d->nargs == 1 && ht_nginx_size_parse(d->args[0], &s->i) == 0)
		return (s->src = file_line(d)) ? 0 : -ENOMEM;
	s->i = def;
	return set_default(s, defsrc);
}

static int time_setting(const struct levels *L, const char *name, int64_t def, const char *defsrc,
                        struct setting *s)
{
	const struct ht_nginx_dir *d = inherited(L, name);

	if (d && d->nargs == 1 && ht_nginx_time_parse(d->args[0], &s->i) == 0)
		return (s->src = file_line(d)) ? 0 : -ENOMEM;
	s->i = def;
	return set_default(s, defsrc);
}

static int flag_setting(const struct levels *L, const char *name, bool def, const char *defsrc,
                        struct setting *s)
{
	const struct ht_nginx_dir *d = inherited(L, name);

	if (d && d->nargs == 1 && (strcmp(d->args[0], "on") == 0 || strcmp(d->args[0], "off") == 0)) {
		s->b = strcmp(d->args[0], "on") == 0;
		return (s->src = file_line(d)) ? 0 : -ENOMEM;
	}
	s->b = def;
	return set_default(s, defsrc);
}

/*
 * A request header sent upstream: proxy_set_header's of the innermost level
 * that has any (a level with one inherits none from above), the last one
 * naming @header; else nginx's own (ngx_http_proxy_headers: Host
 * $proxy_host, Connection close).
 */
static int header_setting(const struct levels *L, const char *header, const char *def,
                          struct setting *s)
{
	for (size_t k = L->n; k-- > 0;) {
		const struct ht_nginx_dir *lv = L->lv[k], *hit = NULL, *any = NULL;

		for (size_t i = 0; i < lv->nsub; i++) {
			const struct ht_nginx_dir *d = &lv->sub[i];

			if (strcmp(d->name, "proxy_set_header") != 0)
				continue;
			any = d;
			if (d->nargs == 2 && strcasecmp(d->args[0], header) == 0)
				hit = d;
		}
		if (hit) {
			s->s = strdup(hit->args[1]);
			s->src = file_line(hit);
			return s->s && s->src ? 0 : -ENOMEM;
		}
		if (any) {
			s->s = strdup(def);
			s->src = ht_strdup_printf("nginx's default %s %s: the proxy_set_header lines at "
			                          "%s:%u replace every one above them and set no %s",
			                          header, def, any->file, any->line, header);
			return s->s && s->src ? 0 : -ENOMEM;
		}
	}
	s->s = strdup(def);
	s->src = ht_strdup_printf("nginx's default (no proxy_set_header %s)", header);
	return s->s && s->src ? 0 : -ENOMEM;
}

/* listen's port (80 without one), ssl and http2 flags; unix: sockets give -1. */
static int64_t listen_port(const struct ht_nginx_dir *d, bool *ssl, bool *http2)
{
	const char *a, *colon;
	int64_t p;

	*ssl = *http2 = false;
	if (d->nargs == 0 || strncmp(d->args[0], "unix:", 5) == 0)
		return -1;
	for (size_t i = 1; i < d->nargs; i++) {
		*ssl = *ssl || strcmp(d->args[i], "ssl") == 0;
		*http2 = *http2 || strcmp(d->args[i], "http2") == 0;
	}
	a = d->args[0];
	p = port_of(a, strlen(a));
	if (p > 0)
		return p;
	colon = strrchr(a, ':');
	if (colon && (a[0] != '[' || colon > strchr(a, ']')))
		return port_of(colon + 1, strlen(colon + 1));
	return 80;
}

/* The upstream block of @http named @name, NULL when none. */
static const struct ht_nginx_dir *upstream_block(const struct ht_nginx_dir *http, const char *name,
                                                 size_t len)
{
	for (size_t i = 0; i < http->nsub; i++) {
		const struct ht_nginx_dir *d = &http->sub[i];

		if (strcmp(d->name, "upstream") == 0 && d->block && d->nargs == 1 &&
		    strlen(d->args[0]) == len && strncmp(d->args[0], name, len) == 0)
			return d;
	}
	return NULL;
}

/*
 * Where proxy_pass @url goes: the store port it reaches and that address
 * (through the upstream block of that name when there is one, *@up then),
 * 0 when it reaches none of them. @any: the first port it reaches, a store
 * port or not (a registry on another host, behind this front proxy).
 */
static int64_t pass_target(const struct ht_proxy_input *in, const struct ht_nginx_dir *http,
                           const char *url, bool any, const struct ht_nginx_dir **up, char **addr)
{
	const char *h = strstr(url, "://"), *end, *colon;
	bool https;
	size_t hl;
	int64_t p;

	*up = NULL;
	*addr = NULL;
	if (!h || strchr(url, '$'))
		return 0;
	https = strncmp(url, "https", 5) == 0;
	h += 3;
	end = h + strcspn(h, "/?");
	hl = (size_t)(end - h);
	if (hl >= 5 && strncmp(h, "unix:", 5) == 0)
		return 0;
	*up = upstream_block(http, h, hl);
	if (*up) {
		for (size_t i = 0; i < (*up)->nsub; i++) {
			const struct ht_nginx_dir *s = &(*up)->sub[i];
			const char *a, *c;

			if (strcmp(s->name, "server") != 0 || s->nargs < 1)
				continue;
			a = s->args[0];
			c = strrchr(a, ':');
			p = c && (a[0] != '[' || c > strchr(a, ']')) ? port_of(c + 1, strlen(c + 1)) : 80;
			if (p > 0 && (any || store_port(in, p))) {
				*addr = strdup(a);
				return *addr ? p : -ENOMEM;
			}
		}
		return 0;
	}
	colon = NULL;
	for (const char *q = h; q < end; q++)
		if (*q == ':')
			colon = q;
	if (colon && h[0] == '[' && colon < (const char *)memchr(h, ']', hl))
		colon = NULL;
	p = colon ? port_of(colon + 1, (size_t)(end - colon - 1)) : https ? 443 : 80;
	if (p <= 0 || (!any && !store_port(in, p)))
		return 0;
	*addr = strndup(h, hl);
	return *addr ? p : -ENOMEM;
}

/*
 * Whether the innermost level of @L is a location "/" or "/v2..." (the
 * registry API, docker's distribution spec) on a host with a registry role.
 */
static bool registry_location(const struct ht_proxy_input *in, const struct levels *L)
{
	const struct ht_nginx_dir *loc = L->n ? L->lv[L->n - 1] : NULL;
	const char *path;
	bool registry = false;

	for (size_t i = 0; i < in->nports; i++)
		if (strcmp(in->roles[i], "registry") == 0)
			registry = true;
	if (!registry || !loc || strcmp(loc->name, "location") != 0 || loc->nargs < 1)
		return false;
	/* "location / {" or "location = /v2/ {", "location ^~ /v2/ {": the path is the last argument. */
	path = loc->args[loc->nargs - 1];
	return strcmp(path, "/") == 0 || strncmp(path, "/v2", 3) == 0;
}

struct nginx_walk {
	const struct ht_proxy_input *in;
	const struct ht_nginx_dir *http, *server;
	struct paths *out;
};

static int nginx_path(struct nginx_walk *w, const struct levels *L,
                      const struct ht_nginx_dir *pass)
{
	const struct ht_nginx_dir *up = NULL, *sn, *ka, *h2;
	_cleanup_free_ char *addr = NULL;
	struct proxy_path *p, *v;
	int64_t port = pass_target(w->in, w->http, pass->args[0], false, &up, &addr);
	const char *role = port > 0 ? store_role(w->in, port) : NULL;
	bool first = true;
	int r;

	/*
	 * A host that serves a registry (its profile says so): a location / or
	 * /v2/ (the registry API's root) passed on is the registry's path,
	 * whatever port it reaches: a front proxy in front of the registry's
	 * own host, or of a registry on a port of its own.
	 */
	if (port == 0 && registry_location(w->in, L)) {
		free(addr);
		addr = NULL;
		port = pass_target(w->in, w->http, pass->args[0], true, &up, &addr);
		role = "registry";
	}
	if (port <= 0)
		return (int)port;
	v = reallocarray(w->out->v, w->out->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->out->v = v;
	p = &v[w->out->n++];
	*p = (struct proxy_path){ .kind = "nginx", .store_port = port, .listen = 80,
	                          .store_role = role };
	p->upstream = TAKE_PTR(addr);
	p->location = file_line(pass);
	p->pass = strdup(pass->args[0]);
	if (!p->location || !p->pass)
		return -ENOMEM;

	/* The client side: the first listen, or a later one on a port other than its scheme's. */
	for (size_t i = 0; i < w->server->nsub; i++) {
		const struct ht_nginx_dir *d = &w->server->sub[i];
		bool ssl, http2;
		int64_t lp;

		if (strcmp(d->name, "listen") != 0 || (lp = listen_port(d, &ssl, &http2)) <= 0)
			continue;
		if (http2 && !p->set[S_HTTP2].src) {
			p->set[S_HTTP2].b = true;
			if (!(p->set[S_HTTP2].src = file_line(d)))
				return -ENOMEM;
		}
		if (first || (p->listen == (p->ssl ? 443 : 80) && lp != (ssl ? 443 : 80))) {
			p->listen = lp;
			p->ssl = ssl;
			free(p->listen_src);
			if (!(p->listen_src = file_line(d)))
				return -ENOMEM;
			first = false;
		}
	}
	if (!p->listen_src && !(p->listen_src = strdup("nginx's default: listen 80")))
		return -ENOMEM;
	h2 = ht_nginx_find(w->server->sub, w->server->nsub, "http2");
	if (h2 && h2->nargs == 1 && strcmp(h2->args[0], "on") == 0 && !p->set[S_HTTP2].src) {
		p->set[S_HTTP2].b = true;
		if (!(p->set[S_HTTP2].src = file_line(h2)))
			return -ENOMEM;
	}
	if (!p->set[S_HTTP2].src &&
	    set_default(&p->set[S_HTTP2], "no listen ... http2 or http2 on in the server") < 0)
		return -ENOMEM;
	sn = ht_nginx_find(w->server->sub, w->server->nsub, "server_name");
	p->server_name = strdup(sn && sn->nargs > 0 ? sn->args[0] : "");
	p->server_name_src = sn ? file_line(sn) : strdup("no server_name in the server block");
	if (!p->server_name || !p->server_name_src)
		return -ENOMEM;

	/* The settings, innermost level first (location, server, http). */
	r = size_setting(L, "client_max_body_size", 1024 * 1024,
	                 "nginx's default client_max_body_size 1m", &p->set[S_CLIENT_MAX_BODY_SIZE]);
	if (r >= 0)
		r = header_setting(L, "Host", "$proxy_host", &p->set[S_HOST]);
	if (r >= 0)
		r = header_setting(L, "Connection", "close", &p->set[S_CONNECTION]);
	if (r >= 0) {
		const struct ht_nginx_dir *d = inherited(L, "proxy_http_version");
		struct setting *s = &p->set[S_HTTP_VERSION];

		if (d && d->nargs == 1) {
			s->s = strdup(d->args[0]);
			s->src = file_line(d);
		} else {
			s->s = strdup("1.0");
			s->src = strdup("nginx's default proxy_http_version 1.0");
		}
		r = s->s && s->src ? 0 : -ENOMEM;
	}
	if (r >= 0) {
		struct setting *s = &p->set[S_KEEPALIVE];

		ka = up ? ht_nginx_find(up->sub, up->nsub, "keepalive") : NULL;
		if (ka && ka->nargs == 1 && port_of(ka->args[0], strlen(ka->args[0])) > 0) {
			s->i = port_of(ka->args[0], strlen(ka->args[0]));
			s->src = file_line(ka);
		} else {
			s->src = up ? ht_strdup_printf("no keepalive in upstream %s (%s:%u)", up->args[0],
			                               up->file, up->line)
			            : strdup("proxy_pass names an address, no upstream block with "
			                     "keepalive");
		}
		r = s->src ? 0 : -ENOMEM;
	}
	if (r >= 0)
		r = flag_setting(L, "proxy_request_buffering", true,
		                 "nginx's default proxy_request_buffering on",
		                 &p->set[S_REQUEST_BUFFERING]);
	if (r >= 0)
		r = flag_setting(L, "proxy_buffering", true, "nginx's default proxy_buffering on",
		                 &p->set[S_BUFFERING]);
	if (r >= 0)
		r = size_setting(L, "proxy_max_temp_file_size", 1024LL * 1024 * 1024,
		                 "nginx's default proxy_max_temp_file_size 1024m",
		                 &p->set[S_MAX_TEMP_FILE_SIZE]);
	if (r >= 0)
		r = time_setting(L, "proxy_read_timeout", 60, "nginx's default proxy_read_timeout 60s",
		                 &p->set[S_READ_TIMEOUT]);
	if (r >= 0)
		r = time_setting(L, "proxy_send_timeout", 60, "nginx's default proxy_send_timeout 60s",
		                 &p->set[S_SEND_TIMEOUT]);
	if (r >= 0)
		r = time_setting(L, "client_body_timeout", 60,
		                 "nginx's default client_body_timeout 60s",
		                 &p->set[S_CLIENT_BODY_TIMEOUT]);
	return r;
}

/* The locations of a level, nested ones too, and the proxy_pass in each. */
static int nginx_locations(struct nginx_walk *w, struct levels *L)
{
	const struct ht_nginx_dir *lv = L->lv[L->n - 1];
	int r = 0;

	for (size_t i = 0; r >= 0 && i < lv->nsub; i++) {
		const struct ht_nginx_dir *d = &lv->sub[i], *pass;

		if (strcmp(d->name, "location") != 0 || !d->block || L->n >= ARRAY_SIZE(L->lv))
			continue;
		L->lv[L->n++] = d;
		pass = ht_nginx_find(d->sub, d->nsub, "proxy_pass");
		if (pass && pass->nargs == 1)
			r = nginx_path(w, L, pass);
		if (r >= 0)
			r = nginx_locations(w, L);
		L->n--;
	}
	return r;
}

/*
 * nginx: ROOT/etc/nginx/nginx.conf with its includes. 0 and the paths
 * found; -ENOENT when there is no nginx.conf; -EINVAL with @err when it
 * cannot be read (any error but ENOENT and ENOMEM) or does not read as
 * nginx would.
 */
static int nginx_paths(const char *root, const struct ht_proxy_input *in, struct paths *out,
                       char **conf_file, struct ht_error *err)
{
	struct ht_nginx_conf *c = NULL;
	_cleanup_free_ char *msg = NULL;
	int r = ht_nginx_load(root, NGINX_CONF, &c, &msg);

	if (r == -ENOENT || r == -ENOMEM)
		return r;
	/*
	 * Unreadable (a link loop, a directory, no permission) or not nginx's
	 * syntax: -EINVAL, said once with why, so that the proxy checks are
	 * skipped and the rest of the run goes on.
	 */
	if (r < 0) {
		ht_error_set(err, EINVAL, "%s%s%s", msg ? msg : NGINX_CONF, msg ? "" : ": ",
		             msg ? "" : strerror(-r));
		return -EINVAL;
	}
	if (!(*conf_file = strdup(NGINX_CONF))) {
		ht_nginx_free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; r >= 0 && i < c->n; i++) {
		const struct ht_nginx_dir *http = &c->dirs[i];

		if (strcmp(http->name, "http") != 0 || !http->block)
			continue;
		for (size_t j = 0; r >= 0 && j < http->nsub; j++) {
			const struct ht_nginx_dir *srv = &http->sub[j];
			struct nginx_walk w = { .in = in, .http = http, .server = srv, .out = out };
			struct levels L = { .lv = { http, srv }, .n = 2 };

			if (strcmp(srv->name, "server") != 0 || !srv->block)
				continue;
			r = nginx_locations(&w, &L);
		}
	}
	ht_nginx_free(c);
	return r;
}

/* ---- facts ---- */

static int path_facts(struct ht_facts *f, const char *name, const struct proxy_path *p)
{
	static const struct {
		int idx;
		const char *suffix;
		char type; /* i: int, b: bool, s: string */
		const char *unit;
	} map[] = {
		{ S_CLIENT_MAX_BODY_SIZE, "client_max_body_size", 'i', "bytes" },
		{ S_HOST, "host", 's', NULL },
		{ S_HTTP_VERSION, "proxy_http_version", 's', NULL },
		{ S_CONNECTION, "connection", 's', NULL },
		{ S_KEEPALIVE, "keepalive", 'i', "connections" },
		{ S_REQUEST_BUFFERING, "proxy_request_buffering", 'b', NULL },
		{ S_BUFFERING, "proxy_buffering", 'b', NULL },
		{ S_MAX_TEMP_FILE_SIZE, "proxy_max_temp_file_size", 'i', "bytes" },
		{ S_HTTP2, "listen_http2", 'b', NULL },
		{ S_READ_TIMEOUT, "proxy_read_timeout", 'i', "seconds" },
		{ S_SEND_TIMEOUT, "proxy_send_timeout", 'i', "seconds" },
		{ S_CLIENT_BODY_TIMEOUT, "client_body_timeout", 'i', "seconds" },
	};
	char fact[192];
	const char *host = p->set[S_HOST].s;
	const char *kind;
	int r;

#define FACT(suffix) (snprintf(fact, sizeof(fact), "proxy.%s.%s", name, suffix), fact)
	r = ht_facts_set_str(f, FACT("kind"), p->kind, p->location);
	if (r >= 0)
		r = ht_facts_set_str(f, FACT("location"), p->location, p->location);
	if (r >= 0)
		r = ht_facts_set_int(f, FACT("listen"), p->listen, NULL, p->listen_src);
	if (r >= 0)
		r = ht_facts_set_bool(f, FACT("ssl"), p->ssl, p->listen_src);
	if (r >= 0)
		r = ht_facts_set_str(f, FACT("server_name"), p->server_name, p->server_name_src);
	if (r >= 0)
		r = ht_facts_set_str(f, FACT("pass"), p->pass, p->location);
	if (r >= 0)
		r = ht_facts_set_str(f, FACT("upstream"), p->upstream, p->location);
	if (r >= 0)
		r = ht_facts_set_int(f, FACT("store_port"), p->store_port, NULL, p->location);
	if (r >= 0)
		r = ht_facts_set_str(f, FACT("store_role"), p->store_role, "proxy.store_ports");
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(map); i++) {
		const struct setting *s = &p->set[map[i].idx];

		FACT(map[i].suffix);
		r = map[i].type == 'i' ? ht_facts_set_int(f, fact, s->i, map[i].unit, s->src)
		  : map[i].type == 'b' ? ht_facts_set_bool(f, fact, s->b, s->src)
		                       : ht_facts_set_str(f, fact, s->s, s->src);
	}
	/*
	 * What the Host header the store gets keeps of the client's: all of it
	 * ($http_host: the name and port the client signed), the name without
	 * the port ($host), the name with the listening port added
	 * ($host:$server_port), the upstream's own name ($proxy_host, nginx's
	 * default), or a name written out.
	 */
	kind = strcmp(host, "$http_host") == 0                                   ? "client"
	     : strcmp(host, "$host") == 0 || strcmp(host, "$server_name") == 0   ? "name"
	     : strcmp(host, "$host:$server_port") == 0                           ? "name_port"
	     : strcmp(host, "$proxy_host") == 0                                  ? "upstream"
	                                                                         : "literal";
	if (r >= 0)
		r = ht_facts_set_str(f, FACT("host_kind"), kind, p->set[S_HOST].src);
#undef FACT
	return r;
}

int ht_collect_proxies(struct ht_facts *f, const char *root, const struct ht_proxy_input *in,
                       struct ht_error *err)
{
	static const struct {
		const char *kind;
		int (*read)(const char *root, const struct ht_proxy_input *in, struct paths *out,
		            char **conf_file, struct ht_error *err);
	} readers[] = {
		{ "nginx", nginx_paths },
	};
	struct paths ps = { 0 };
	_cleanup_free_ char *list = NULL, *files = NULL;
	size_t len = 0, flen = 0;
	int r = 0;

	if (!f || !in || (in->nports && (!in->ports || !in->roles)))
		return -EINVAL;
	if (in->nports == 0) {
		r = ht_facts_set_str(f, "proxy.list", "", "no store port known: no Garage, MinIO or "
		                     "registry on this host");
		return r < 0 ? r : ht_facts_set_unavailable(f, "proxy.checked", ENOENT, NULL,
		                                            "no store port to look for");
	}
	for (size_t i = 0; i < ARRAY_SIZE(readers); i++) {
		_cleanup_free_ char *file = NULL;

		r = readers[i].read(root, in, &ps, &file, err);
		if (r == -ENOENT)
			continue;
		if (r < 0)
			goto out;
		if (file) {
			char *nf = ht_strdup_printf("%s%s%s", files ? files : "", files ? ", " : "", file);

			if (!nf) {
				r = -ENOMEM;
				goto out;
			}
			free(files);
			files = nf;
		}
	}
	r = 0;
	for (size_t i = 0; i < ps.n; i++)
		len += 32;
	list = calloc(1, len + 1);
	if (!list) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; r >= 0 && i < ps.n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "%s-%zu", ps.v[i].kind, i + 1);
		flen += (size_t)sprintf(list + flen, "%s%s", i ? " " : "", name);
		r = path_facts(f, name, &ps.v[i]);
	}
	if (r >= 0)
		r = ht_facts_set_str(f, "proxy.list", list,
		                     files ? files : "no proxy configuration (" NGINX_CONF ")");
	if (r >= 0)
		r = files ? ht_facts_set_bool(f, "proxy.checked", true, files)
		          : ht_facts_set_unavailable(f, "proxy.checked", ENOENT, NULL,
		                                     "no proxy configuration (" NGINX_CONF ")");
out:
	paths_free(&ps);
	return r;
}
