/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * listen-hold ADDR PORT BACKLOG N [ADDR2 BACKLOG2] - a test helper: listens on ADDR:PORT with
 * listen(BACKLOG), never accepts, and starts N non-blocking connect()s to
 * it, which it keeps open. On loopback the handshakes run inside connect(),
 * so when it prints "ready" the accept queue holds what the kernel let in
 * (backlog + 1: sk_acceptq_is_full() is ">") and the other SYNs were
 * dropped as listen overflows. Then it waits for a signal. Descriptors it
 * inherits beyond 0, 1 and 2 are closed first, so it holds 3 + 1 + N.
 * With ADDR2 BACKLOG2 it also listens on ADDR2:PORT with listen(BACKLOG2)
 * (IPv6 only for an IPv6 address) and connects nothing to it: 3 + 2 + N.
 * ADDR and PORT are numeric. Exits 1 on a failure, 2 on bad arguments.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
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
	if (argc != 5 && argc != 7) {
		fprintf(stderr, "usage: %s ADDR PORT BACKLOG N [ADDR2 BACKLOG2]\n", argv[0]);
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
	if (argc == 7) {
		struct addrinfo *ai2 = NULL;
		long backlog2;
		int fd2;

		errno = 0;
		backlog2 = strtol(argv[6], &end, 10);
		if (errno || *end || end == argv[6] || backlog2 < 0 || backlog2 > 65535)
			return 2;
		r = getaddrinfo(argv[5], argv[2], &hints, &ai2);
		if (r) {
			fprintf(stderr, "%s: %s %s: %s\n", argv[0], argv[5], argv[2], gai_strerror(r));
			return 2;
		}
		fd2 = socket(ai2->ai_family, SOCK_STREAM, 0);
		if (fd2 < 0 || setsockopt(fd2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    (ai2->ai_family == AF_INET6 &&
		     setsockopt(fd2, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
		    bind(fd2, ai2->ai_addr, ai2->ai_addrlen) < 0 || listen(fd2, (int)backlog2) < 0) {
			fprintf(stderr, "%s: listen %s: %s\n", argv[0], argv[5], strerror(errno));
			return 1;
		}
		freeaddrinfo(ai2);
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
