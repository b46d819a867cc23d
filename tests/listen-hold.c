/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * listen-hold ADDR PORT BACKLOG N - a test helper: listens on ADDR:PORT with
 * listen(BACKLOG), never accepts, and starts N non-blocking connect()s to
 * it, which it keeps open. On loopback the handshakes run inside connect(),
 * so when it prints "ready" the accept queue holds what the kernel let in
 * (backlog + 1: sk_acceptq_is_full() is ">") and the other SYNs were
 * dropped as listen overflows. Then it waits for a signal. Descriptors it
 * inherits beyond 0, 1 and 2 are closed first, so it holds 3 + 1 + N.
 * ADDR and PORT are numeric. Exits 1 on a failure, 2 on bad arguments.
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNECTIONS 100000

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		                  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV },
	                *ai = NULL;
	long backlog, n;
	char *end;
	int one = 1, fd, r;

	closefrom(3);
	if (argc != 5) {
		fprintf(stderr, "usage: %s ADDR PORT BACKLOG N\n", argv[0]);
		return 2;
	}
	errno = 0;
	backlog = strtol(argv[3], &end, 10);
	if (errno || *end || end == argv[3] || backlog < 0 || backlog > 65535)
		return 2;
	n = strtol(argv[4], &end, 10);
	if (errno || *end || end == argv[4] || n < 0 || n > MAX_CONNECTIONS)
		return 2;
	r = getaddrinfo(argv[1], argv[2], &hints, &ai);
	if (r) {
		fprintf(stderr, "%s: %s %s: %s\n", argv[0], argv[1], argv[2], gai_strerror(r));
		return 2;
	}
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, (int)backlog) < 0) {
		fprintf(stderr, "%s: listen: %s\n", argv[0], strerror(errno));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		int c = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);

		if (c < 0) {
			fprintf(stderr, "%s: socket %ld: %s\n", argv[0], i + 1, strerror(errno));
			return 1;
		}
		if (connect(c, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
			fprintf(stderr, "%s: connect %ld: %s\n", argv[0], i + 1, strerror(errno));
			return 1;
		}
	}
	freeaddrinfo(ai);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
