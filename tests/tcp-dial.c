/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tcp-dial ADDR PORT N - a test helper: starts N non-blocking TCP connects
 * to ADDR:PORT, a peer that never answers (its SYNs dropped), so that its
 * N sockets stay in SYN_SENT, prints "dialing N" and waits for the end of
 * its standard input, then exits 0 (closing them). A dial storm in small:
 * what fills a process's descriptor limit is its sockets to one peer.
 * Exits 1 when a socket or connect fails otherwise than EINPROGRESS, 2 on
 * bad arguments.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_DIALS 4000

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST };
	struct addrinfo *ai = NULL;
	char buf[64];
	long n;

	if (argc != 4 || (n = strtol(argv[3], NULL, 10)) < 1 || n > MAX_DIALS ||
	    getaddrinfo(argv[1], argv[2], &hints, &ai) != 0) {
		fprintf(stderr, "usage: tcp-dial ADDR PORT N (a numeric address, N from 1 to %d)\n",
		        MAX_DIALS);
		return 2;
	}
	for (long i = 0; i < n; i++) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0 || (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)) {
			fprintf(stderr, "tcp-dial: connect %ld: %s\n", i, strerror(errno));
			freeaddrinfo(ai);
			return 1;
		}
	}
	freeaddrinfo(ai);
	printf("dialing %ld\n", n);
	fflush(stdout);
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	return 0;
}
