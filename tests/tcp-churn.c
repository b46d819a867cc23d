/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tcp-churn ADDR PORT N - a test helper: listens on ADDR:PORT and makes N
 * sequential TCP connections to it, each closed cleanly from the client side
 * first, so that each leaves exactly one conntrack entry (in TIME_WAIT) and
 * the client socket in TIME_WAIT keeps its port from being reused for the
 * next connection. Prints the number of connections completed; exits 0 when
 * that is N, 1 otherwise, 2 on bad arguments.
 *
 * One process, no threads: on loopback the kernel completes the handshake
 * into the listen backlog before accept(), so a blocking connect() returns
 * without a peer thread. Every wait is bounded by TIMEOUT_MS.
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
#define MAX_CONNECTIONS 100000

static void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

#define _cleanup_close_ __attribute__((cleanup(closep)))

/* One connection: connect, accept, client FIN, server FIN, both sides see EOF. */
static int one_connection(int lfd, const struct sockaddr *sa, socklen_t salen)
{
	_cleanup_close_ int cfd = -1;
	_cleanup_close_ int afd = -1;
	struct timeval tv = { .tv_sec = TIMEOUT_MS / 1000 };
	int r;

	cfd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0)
		return -errno;
	/* Bounds a connect() that gets no answer (SO_SNDTIMEO applies to connect, socket(7)). */
	if (setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return -errno;
	if (connect(cfd, sa, salen) < 0)
		return -errno;
	r = ht_net_wait_fd(lfd, POLLIN, TIMEOUT_MS);
	if (r < 0)
		return r;
	afd = accept(lfd, NULL, NULL);
	if (afd < 0)
		return -errno;
	/* The client closes first, so the TIME_WAIT socket is the client's. */
	if (shutdown(cfd, SHUT_WR) < 0)
		return -errno;
	r = ht_net_read_eof(afd, TIMEOUT_MS);
	if (r < 0)
		return r;
	if (close(afd) < 0) {
		afd = -1;
		return -errno;
	}
	afd = -1;
	/* EOF here means the server's FIN arrived and the last ACK has been sent. */
	return ht_net_read_eof(cfd, TIMEOUT_MS);
}

int main(int argc, char **argv)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	_cleanup_close_ int lfd = -1;
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char *end;
	long n, done = 0;
	int one = 1, r;

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

	/* getsockname() gives the bound port, so PORT 0 works too. */
	for (; done < n; done++) {
		r = one_connection(lfd, (struct sockaddr *)&ss, sslen);
		if (r < 0) {
			fprintf(stderr, "%s: connection %ld: %s\n", argv[0], done + 1,
			        strerror(-r));
			break;
		}
	}
	printf("%ld\n", done);
	return done == n ? 0 : 1;
}
