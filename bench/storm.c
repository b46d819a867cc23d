/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * storm - a connection-storm load generator: one short TCP connection per
 * object, the way an S3 client fetches small objects.
 *
 *   storm server ADDR PORT [--size B] [--threads T]
 *       accepts forever; on each connection writes B bytes (default 1400)
 *       and closes first. Prints "listening PORT" once ready.
 *   storm client ADDR PORT [--count N] [--workers C] [--rate R] [--size B]
 *                          [--timeout S] [--sport-base P [--addrs K]] [--retries K]
 *       fetches N objects (default 6600) with C workers (default 8), one
 *       connection each: connect, read to EOF, close. --rate R paces the
 *       starts to R a second in total (connection i starts at i / R s), so a
 *       test knows the rate it made. --size B checks that each object has B
 *       bytes (0: any). A connect or read taking longer than S s (default
 *       60) fails that object. --sport-base P binds connection i to source
 *       port P + i: the server closes first, so a client port is free again
 *       at once and connect() may pick it for a later connection
 *       (__inet_hash_connect(), net/ipv4/inet_hashtables.c), which reopens
 *       the conntrack entry of the old one instead of adding one; a test
 *       that counts entries needs every connection on a tuple of its own.
 *       --addrs K (IPv4, with --sport-base) spreads the connections over
 *       K destination addresses ADDR, ADDR + 1, ..., ADDR + K - 1:
 *       connection i goes to ADDR + i % K from port P + i / K, so K x
 *       (65536 - P) connections each have a tuple of their own (the client
 *       sets SO_REUSEADDR, so one port serves K connections at once).
 *       --retries K opens a new connection for an object up to K more times
 *       after a failure (default 0), as an S3 client's SDK does after a
 *       connect timeout.
 *   storm model --count N --workers C [--rate R] --max M --time-wait T
 *               [--syn-retries S] [--syn-linear L] [--retries K] [--fetch D]
 *       what the client above would see against a conntrack table of M
 *       entries whose entries live T s after their connection (the TIME_WAIT
 *       timeout; the connection itself lasts D s, default 0.001): a
 *       simulation, not a measurement. An entry is made when a SYN finds
 *       fewer than M entries and frees its slot the moment it expires; a
 *       SYN that finds M is dropped and sent again when its retransmission
 *       timeout runs out: 1 s at first (TCP_TIMEOUT_INIT), kept at 1 s for
 *       L more times (net.ipv4.tcp_syn_linear_timeouts, since 6.5, default 4
 *       there; 0 before, the default here) and doubled after each one after
 *       that (tcp_retransmit_timer(), net/ipv4/tcp_timer.c), S + L times in
 *       all (tcp_write_timeout(); S is net.ipv4.tcp_syn_retries, default 6),
 *       after which connect() fails one more timeout later and --retries
 *       applies. So SYNs at 0, 1, 3, 7, 15, 31, 63 s and failure at 127 s
 *       with L = 0; at 0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67 s and failure at
 *       131 s with L = 4. At most 1000000 objects. Prints the client's line
 *       (below) with drops= (SYNs dropped) and peak= (the most entries at
 *       once) added.
 *   storm loop ADDR PORT ...
 *       a server and a client in one process (PORT 0 picks one), for tests.
 *
 * The client prints one line of key=value figures:
 *   objects=N ok=K failed=F wall=SECONDS rate=K/wall slow=X max_connect=SECONDS
 *   retried=R fetch=SECONDS
 * (retried: connections opened again by --retries; fetch: the mean time of
 * a successful object, connect to EOF)
 * where slow counts connects that took over 0.9 s: the initial SYN
 * retransmission timeout is 1 s (TCP_TIMEOUT_INIT, include/net/tcp.h), so a
 * slow connect had its SYN dropped at least once. Exits 0 when every object
 * came, 1 otherwise, 2 on bad arguments.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_OBJECTS 10000000L
/* The model looks at every worker for every event: objects x workers steps. */
#define MAX_MODEL_OBJECTS 1000000L
#define MAX_WORKERS 1024
#define MAX_SIZE (1024 * 1024)
/* A server backlog deep enough for every worker; the kernel caps it at net.core.somaxconn. */
#define BACKLOG 4096

struct opts {
	long count, workers, size, threads, sport_base, retries, addrs;
	double rate, timeout;
	/* model only */
	long max_entries, syn_retries, syn_linear;
	double time_wait, fetch;
};

struct client {
	const struct opts *o;
	struct sockaddr_storage sa;
	socklen_t salen;
	struct timespec t0;
	atomic_long next;
};

struct result {
	long ok, failed, slow, retried;
	double max_connect, fetch_sum;
	char first_error[128];
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void set_timeouts(int fd, double seconds)
{
	struct timeval tv = { .tv_sec = (time_t)seconds,
		              .tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6) };

	/* SO_SNDTIMEO bounds connect() too (socket(7)). */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Binds @fd to source port @port of the wildcard address of @family. */
static int bind_port(int fd, int family, long port)
{
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)family };

	if (family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
	return bind(fd, (struct sockaddr *)&ss, family == AF_INET6 ?
	            sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
}

/* Object @i: 0 or a negative errno; *connect_s is how long connect() took. */
static int fetch(const struct client *c, long i, double *connect_s)
{
	struct sockaddr_storage dst = c->sa;
	long got = 0, k = c->o->addrs;
	char buf[4096];
	double t;
	int fd, r = 0;

	fd = socket(c->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	set_timeouts(fd, c->o->timeout);
	if (k > 1) {
		struct sockaddr_in *in = (struct sockaddr_in *)&dst;
		int one = 1;

		in->sin_addr.s_addr = htonl(ntohl(in->sin_addr.s_addr) + (uint32_t)(i % k));
		/* Port P + i / K serves K connections to K addresses, maybe at once. */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	if (c->o->sport_base > 0 &&
	    bind_port(fd, c->sa.ss_family, c->o->sport_base + i / (k > 1 ? k : 1)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	t = now_s();
	if (connect(fd, (const struct sockaddr *)&dst, c->salen) < 0) {
		/* A connect() cut short by SO_SNDTIMEO reports EINPROGRESS. */
		r = errno == EINPROGRESS ? -ETIMEDOUT : -errno;
		*connect_s = now_s() - t;
		close(fd);
		return r;
	}
	*connect_s = now_s() - t;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0) {
			r = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
			break;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	if (r == 0 && c->o->size > 0 && got != c->o->size)
		r = -EPROTO;
	return r;
}

static void sleep_until(const struct timespec *t0, double offset)
{
	struct timespec due = *t0;
	long ns = (long)((offset - (double)(long)offset) * 1e9);

	due.tv_sec += (time_t)offset;
	due.tv_nsec += ns;
	if (due.tv_nsec >= 1000000000L) {
		due.tv_sec++;
		due.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
		;
}

static void *client_worker(void *arg)
{
	struct client *c = arg;
	struct result *res = calloc(1, sizeof(*res));

	if (!res)
		return NULL;
	for (;;) {
		long i = atomic_fetch_add(&c->next, 1);
		double cs = 0;
		int r;

		if (i >= c->o->count)
			break;
		if (c->o->rate > 0)
			sleep_until(&c->t0, (double)i / c->o->rate);
		for (long try = 0;; try++) {
			double t = now_s();

			cs = 0;
			r = fetch(c, i, &cs);
			if (cs > res->max_connect)
				res->max_connect = cs;
			if (cs > 0.9)
				res->slow++;
			if (r == 0)
				res->fetch_sum += now_s() - t;
			if (r == 0 || try >= c->o->retries)
				break;
			res->retried++;
		}
		if (r == 0) {
			res->ok++;
		} else {
			if (res->failed++ == 0)
				snprintf(res->first_error, sizeof(res->first_error),
				         "object %ld: %s", i + 1, strerror(-r));
		}
	}
	return res;
}

static int run_client(const struct opts *o, const struct sockaddr *sa, socklen_t salen)
{
	struct client c = { .o = o, .salen = salen };
	pthread_t tid[MAX_WORKERS];
	struct result sum = { 0 };
	long started = 0;
	double t0, wall;

	memcpy(&c.sa, sa, salen);
	atomic_init(&c.next, 0);
	clock_gettime(CLOCK_MONOTONIC, &c.t0);
	t0 = now_s();
	for (long i = 0; i < o->workers; i++) {
		if (pthread_create(&tid[i], NULL, client_worker, &c) != 0)
			break;
		started++;
	}
	for (long i = 0; i < started; i++) {
		struct result *r = NULL;

		pthread_join(tid[i], (void **)&r);
		if (!r) {
			sum.failed++;
			continue;
		}
		sum.ok += r->ok;
		sum.failed += r->failed;
		sum.slow += r->slow;
		sum.retried += r->retried;
		sum.fetch_sum += r->fetch_sum;
		if (r->max_connect > sum.max_connect)
			sum.max_connect = r->max_connect;
		if (!sum.first_error[0] && r->first_error[0])
			memcpy(sum.first_error, r->first_error, sizeof(sum.first_error));
		free(r);
	}
	wall = now_s() - t0;
	printf("objects=%ld ok=%ld failed=%ld wall=%.3f rate=%.1f slow=%ld max_connect=%.3f "
	       "retried=%ld fetch=%.6f\n",
	       o->count, sum.ok, sum.failed, wall, wall > 0 ? (double)sum.ok / wall : 0, sum.slow,
	       sum.max_connect, sum.retried, sum.ok > 0 ? sum.fetch_sum / (double)sum.ok : 0);
	fflush(stdout);
	if (sum.first_error[0])
		fprintf(stderr, "storm: %ld failed, first: %s\n", sum.failed, sum.first_error);
	return started == 0 ? 1 : sum.ok == o->count ? 0 : 1;
}

/* A worker of the model: the object it fetches and where its connection is. */
struct model_worker {
	double t;          /* when its next event happens, s from the start */
	bool busy;         /* holds an object (else takes the next one at t) */
	bool done;         /* no objects left */
	long syn;          /* SYNs of the current connection dropped so far */
	long tries;        /* connections opened again for this object */
	double conn_start; /* when the current connection's first SYN went out */
};

/*
 * The retransmission timeout before SYN number @k + 1 (k = 1 after the
 * first SYN): 1 s for the first L + 1, doubled after each later one, at
 * most TCP_RTO_MAX (120 s, include/net/tcp.h).
 */
static double syn_rto(const struct opts *o, long k)
{
	double rto = 1.0;

	for (long j = o->syn_linear + 1; j < k && rto < 120.0; j++)
		rto *= 2;
	return rto < 120.0 ? rto : 120.0;
}

static int run_model(const struct opts *o)
{
	struct model_worker *w = calloc((size_t)o->workers, sizeof(*w));
	/* Successes happen in time order, so expiry times are sorted: a FIFO. */
	double *expiry = malloc(sizeof(double) * (size_t)(o->count > 0 ? o->count : 1));
	long next = 0, head = 0, tail = 0, ok = 0, failed = 0, slow = 0, retried = 0, drops = 0;
	long peak = 0;
	double wall = 0, max_connect = 0, give_up = 0;

	if (!w || !expiry) {
		free(w);
		free(expiry);
		fprintf(stderr, "storm: out of memory\n");
		return 1;
	}
	/* connect() fails one timeout after the last of S + L retransmissions. */
	for (long k = 1; k <= o->syn_retries + o->syn_linear + 1; k++)
		give_up += syn_rto(o, k);
	for (;;) {
		struct model_worker *m = NULL;
		double x;

		for (long i = 0; i < o->workers; i++)
			if (!w[i].done && (!m || w[i].t < m->t))
				m = &w[i];
		if (!m)
			break;
		if (!m->busy) {
			long i = next++;

			if (i >= o->count) {
				m->done = true;
				continue;
			}
			if (o->rate > 0 && (double)i / o->rate > m->t)
				m->t = (double)i / o->rate;
			m->busy = true;
			m->syn = m->tries = 0;
			m->conn_start = m->t;
			continue;
		}
		/* A SYN at x: the entries that expired by then have left the table. */
		x = m->t;
		while (head < tail && expiry[head] <= x)
			head++;
		if (tail - head < o->max_entries) {
			double cs = x - m->conn_start;

			expiry[tail++] = x + o->fetch + o->time_wait;
			if (tail - head > peak)
				peak = tail - head;
			if (cs > max_connect)
				max_connect = cs;
			if (cs > 0.9)
				slow++;
			ok++;
			m->busy = false;
			m->t = x + o->fetch;
			if (m->t > wall)
				wall = m->t;
			continue;
		}
		drops++;
		if (++m->syn <= o->syn_retries + o->syn_linear) {
			m->t += syn_rto(o, m->syn);
			continue;
		}
		/* connect() fails: ETIMEDOUT after the last retransmission's timeout. */
		m->t += syn_rto(o, m->syn);
		if (give_up > max_connect)
			max_connect = give_up;
		slow++;
		if (m->tries < o->retries) {
			m->tries++;
			retried++;
			m->syn = 0;
			m->conn_start = m->t;
			continue;
		}
		failed++;
		m->busy = false;
		if (m->t > wall)
			wall = m->t;
	}
	printf("objects=%ld ok=%ld failed=%ld wall=%.3f rate=%.1f slow=%ld max_connect=%.3f "
	       "retried=%ld fetch=%.6f drops=%ld peak=%ld\n",
	       o->count, ok, failed, wall, wall > 0 ? (double)ok / wall : 0, slow, max_connect,
	       retried, o->fetch, drops, peak);
	free(w);
	free(expiry);
	return 0;
}

struct server {
	int lfd;
	long size;
};

static void *server_worker(void *arg)
{
	static char object[MAX_SIZE];
	const struct server *s = arg;

	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		long off = 0;

		if (fd < 0) {
			if (errno == EBADF || errno == EINVAL)
				return NULL;
			continue; /* ECONNABORTED, EMFILE, ...: the next one */
		}
		while (off < s->size) {
			ssize_t n = write(fd, object + off, (size_t)(s->size - off));

			if (n <= 0)
				break;
			off += n;
		}
		/* The server closes first, as HTTP servers do after a Connection: close reply. */
		close(fd);
	}
}

static int listen_on(const char *addr, const char *port, struct sockaddr_storage *ss,
                     socklen_t *sslen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		                  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *ai;
	int fd, one = 1, r;

	r = getaddrinfo(addr, port, &hints, &ai);
	if (r != 0) {
		fprintf(stderr, "storm: %s %s: %s\n", addr, port, gai_strerror(r));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, BACKLOG) < 0) {
		fprintf(stderr, "storm: listen on %s %s: %s\n", addr, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	*sslen = sizeof(*ss);
	if (getsockname(fd, (struct sockaddr *)ss, sslen) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int start_server(struct server *s, long threads)
{
	for (long i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, server_worker, s) != 0)
			return -1;
		pthread_detach(t);
	}
	return 0;
}

static int port_of(const struct sockaddr_storage *ss)
{
	char serv[NI_MAXSERV];

	if (getnameinfo((const struct sockaddr *)ss, sizeof(*ss), NULL, 0, serv, sizeof(serv),
	                NI_NUMERICSERV) != 0)
		return -1;
	return atoi(serv);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: storm server ADDR PORT [--size B] [--threads T]\n"
	        "       storm client ADDR PORT [--count N] [--workers C] [--rate R] [--size B]"
	        " [--timeout S] [--sport-base P [--addrs K]] [--retries K]\n"
	        "       storm loop ADDR PORT [client and server options]\n"
	        "       storm model --count N --workers C [--rate R] --max M --time-wait T"
	        " [--syn-retries S] [--syn-linear L] [--retries K] [--fetch D]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .count = 6600, .workers = 8, .size = 1400, .threads = 4, .timeout = 60,
		          .syn_retries = 6, .fetch = 0.001, .time_wait = -1, .addrs = 1 };
	struct sockaddr_storage ss;
	struct server srv;
	socklen_t sslen;
	const char *mode;
	int i;

	if (argc < 2)
		return usage();
	mode = argv[1];
	i = strcmp(mode, "model") == 0 ? 2 : 4;
	if (i == 4 && argc < 4)
		return usage();
	for (; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad;

		if (!v)
			return usage();
		if (strcmp(a, "--count") == 0)
			bad = parse_long(v, 0, MAX_OBJECTS, &o.count);
		else if (strcmp(a, "--workers") == 0)
			bad = parse_long(v, 1, MAX_WORKERS, &o.workers);
		else if (strcmp(a, "--threads") == 0)
			bad = parse_long(v, 1, MAX_WORKERS, &o.threads);
		else if (strcmp(a, "--size") == 0)
			bad = parse_long(v, 0, MAX_SIZE, &o.size);
		else if (strcmp(a, "--rate") == 0)
			bad = parse_double(v, 0, 1e7, &o.rate) || (o.rate > 0 && o.rate < 0.001);
		else if (strcmp(a, "--sport-base") == 0)
			bad = parse_long(v, 1, 65535, &o.sport_base);
		else if (strcmp(a, "--addrs") == 0)
			bad = parse_long(v, 1, 256, &o.addrs);
		else if (strcmp(a, "--timeout") == 0)
			bad = parse_double(v, 0.001, 86400, &o.timeout);
		else if (strcmp(a, "--retries") == 0)
			bad = parse_long(v, 0, 1000, &o.retries);
		else if (strcmp(a, "--max") == 0)
			bad = parse_long(v, 1, 1L << 31, &o.max_entries);
		else if (strcmp(a, "--time-wait") == 0)
			bad = parse_double(v, 0, 86400, &o.time_wait);
		else if (strcmp(a, "--syn-retries") == 0)
			bad = parse_long(v, 1, 40, &o.syn_retries);
		else if (strcmp(a, "--syn-linear") == 0)
			bad = parse_long(v, 0, 40, &o.syn_linear);
		else if (strcmp(a, "--fetch") == 0)
			bad = parse_double(v, 0, 3600, &o.fetch);
		else
			return usage();
		if (bad) {
			fprintf(stderr, "storm: %s: bad value '%s'\n", a, v);
			return 2;
		}
		i++;
	}
	if (o.addrs > 1 && (o.sport_base == 0 || strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "storm: --addrs needs client and --sport-base\n");
		return 2;
	}
	/* The last connection, count - 1, binds port P + (count - 1) / K. */
	if (o.sport_base > 0 && o.count > 0 &&
	    o.sport_base + (o.count - 1) / o.addrs > 65535) {
		fprintf(stderr, "storm: --sport-base %ld + (--count %ld - 1) / --addrs %ld passes"
		        " port 65535\n", o.sport_base, o.count, o.addrs);
		return 2;
	}
	if (strcmp(mode, "model") == 0) {
		if (o.max_entries == 0 || o.time_wait < 0) {
			fprintf(stderr, "storm: model needs --max and --time-wait\n");
			return 2;
		}
		if (o.count > MAX_MODEL_OBJECTS) {
			fprintf(stderr, "storm: model takes at most %ld objects\n", MAX_MODEL_OBJECTS);
			return 2;
		}
		return run_model(&o);
	}
	/* A peer that resets a connection must not kill the process on write(). */
	signal(SIGPIPE, SIG_IGN);

	if (strcmp(mode, "client") == 0) {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
			                  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
		struct addrinfo *ai;
		int r = getaddrinfo(argv[2], argv[3], &hints, &ai);

		if (r != 0) {
			fprintf(stderr, "storm: %s %s: %s\n", argv[2], argv[3], gai_strerror(r));
			return 2;
		}
		if (o.addrs > 1 && ai->ai_family != AF_INET) {
			fprintf(stderr, "storm: --addrs takes an IPv4 ADDR\n");
			freeaddrinfo(ai);
			return 2;
		}
		r = run_client(&o, ai->ai_addr, ai->ai_addrlen);
		freeaddrinfo(ai);
		return r;
	}
	if (strcmp(mode, "server") != 0 && strcmp(mode, "loop") != 0)
		return usage();
	srv.size = o.size;
	srv.lfd = listen_on(argv[2], argv[3], &ss, &sslen);
	if (srv.lfd < 0 || start_server(&srv, o.threads) < 0)
		return 1;
	if (strcmp(mode, "server") == 0) {
		printf("listening %d\n", port_of(&ss));
		fflush(stdout);
		for (;;)
			pause();
	}
	return run_client(&o, (struct sockaddr *)&ss, sslen);
}
