/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tcp-hold ADDR PORT N - a test helper: listens on ADDR:PORT, opens N TCP
 * connections to it and holds them open (both ends, in this one process),
 * then prints "open N" and obeys commands read from standard input, one a
 * line:
 *   close K   closes the next K held connections cleanly, the client first
 *             (client FIN, server FIN, last ACK: the client socket and the
 *             conntrack entry end in TIME_WAIT), then prints "closed K"
 * End of input closes the rest (as exit does) and exits 0. Exits 1 when a
 * connection or a close fails, 2 on bad arguments. Every wait is bounded by
 * TIMEOUT_MS, so a test that forgets to close the input cannot hang on a
 * lost packet, only on its own pipe.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net-util.h"

#define TIMEOUT_MS 5000
#define MAX_CONNECTIONS 400 /* two descriptors each, under the usual limit of 1024 */

struct conn {
	int client, server;
};

/* Connects and accepts one connection into @c. 0 or a negative errno. */
static int open_one(int lfd, const struct sockaddr *sa, socklen_t salen, struct conn *c)
{
	struct timeval tv = { .tv_sec = TIMEOUT_MS / 1000 };
	int r;

	c->client = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->client < 0)
		return -errno;
	if (setsockopt(c->client, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(c->client, sa, salen) < 0)
		return -errno;
	r = ht_net_wait_fd(lfd, POLLIN, TIMEOUT_MS);
	if (r < 0)
		return r;
	c->server = accept(lfd, NULL, NULL);
	return c->server < 0 ? -errno : 0;
}

/* Client FIN, server reads it and sends its FIN, client reads that (the last ACK is out). */
static int close_one(struct conn *c)
{
	int r;

	if (shutdown(c->client, SHUT_WR) < 0)
		return -errno;
	r = ht_net_read_eof(c->server, TIMEOUT_MS);
	if (r < 0)
		return r;
	if (close(c->server) < 0)
		return -errno;
	c->server = -1;
	r = ht_net_read_eof(c->client, TIMEOUT_MS);
	if (r < 0)
		return r;
	if (close(c->client) < 0)
		return -errno;
	c->client = -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	static struct conn conns[MAX_CONNECTIONS];
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char line[64], *end;
	long n, next = 0;
	int lfd, one = 1, r;

	if (argc != 4) {
		fprintf(stderr, "usage: %s ADDR PORT N\n", argv[0]);
		return 2;
	}
	errno = 0;
	n = strtol(argv[3], &end, 10);
	if (errno || *end || end == argv[3] || n < 0 || n > MAX_CONNECTIONS) {
		fprintf(stderr, "%s: N must be 0..%d\n", argv[0], MAX_CONNECTIONS);
		return 2;
	}
	r = getaddrinfo(argv[1], argv[2], &hints, &ai);
	if (r != 0) {
		fprintf(stderr, "%s: %s %s: %s\n", argv[0], argv[1], argv[2], gai_strerror(r));
		return 2;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(lfd, 16) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&ss, &sslen) < 0) {
		fprintf(stderr, "%s: listen on %s %s: %s\n", argv[0], argv[1], argv[2],
		        strerror(errno));
		freeaddrinfo(ai);
		return 1;
	}
	freeaddrinfo(ai);
	for (long i = 0; i < n; i++) {
		r = open_one(lfd, (struct sockaddr *)&ss, sslen, &conns[i]);
		if (r < 0) {
			fprintf(stderr, "%s: connection %ld: %s\n", argv[0], i + 1, strerror(-r));
			return 1;
		}
	}
	/* No more connections: a stray SYN to the port is refused, not tracked as ours. */
	close(lfd);
	printf("open %ld\n", n);
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin)) {
		long k;

		if (sscanf(line, "close %ld", &k) != 1 || k < 0 || k > n - next) {
			fprintf(stderr, "%s: bad command: %s", argv[0], line);
			return 2;
		}
		for (long i = 0; i < k; i++, next++) {
			r = close_one(&conns[next]);
			if (r < 0) {
				fprintf(stderr, "%s: closing connection %ld: %s\n", argv[0],
				        next + 1, strerror(-r));
				return 1;
			}
		}
		printf("closed %ld\n", k);
		fflush(stdout);
	}
	return 0;
}
