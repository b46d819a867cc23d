/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tcp-stream - a test helper for real TCP transfers between two network
 * namespaces:
 *   tcp-stream sink ADDR PORT      listens on ADDR:PORT, prints "listening",
 *                                  then accepts connections one after another
 *                                  and reads each until EOF, discarding the
 *                                  data; runs until killed
 *   tcp-stream send ADDR PORT SECONDS [N]
 *                                  opens N connections (default 1) to
 *                                  ADDR:PORT, prints "connected N", writes
 *                                  to them as fast as they take it for
 *                                  SECONDS, closes them and prints the bytes
 *                                  sent
 * Exits 0, 1 when a connection or a write fails, 2 on bad arguments. A
 * connect waits at most TIMEOUT_MS.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net-util.h"

#define TIMEOUT_MS 5000
#define MAX_CONNECTIONS 64

static int addr_of(const char *a, const char *p, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	int port = atoi(p);

	memset(ss, 0, sizeof(*ss));
	if (port <= 0 || port > 65535)
		return -1;
	if (inet_pton(AF_INET, a, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, a, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return -1;
}

static int sink(const struct sockaddr *sa, socklen_t len)
{
	static char buf[1 << 16];
	int one = 1, lfd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, sa, len) < 0 || listen(lfd, MAX_CONNECTIONS) < 0) {
		perror("tcp-stream sink");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	/* One poll loop over the listener and every accepted connection. */
	struct pollfd p[MAX_CONNECTIONS + 1] = { { .fd = lfd, .events = POLLIN } };
	size_t n = 1;

	for (;;) {
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (size_t i = n; i-- > 1;)
			if (p[i].revents) {
				ssize_t r = read(p[i].fd, buf, sizeof(buf));

				if (r <= 0) {
					close(p[i].fd);
					p[i] = p[--n];
				}
			}
		if ((p[0].revents & POLLIN) && n <= MAX_CONNECTIONS) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0)
				p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int sender(const struct sockaddr *sa, socklen_t len, double seconds, int nconn)
{
	static char buf[1 << 16];
	struct pollfd p[MAX_CONNECTIONS];
	unsigned long long sent = 0;
	double end;

	for (int i = 0; i < nconn; i++) {
		struct timeval tv = { .tv_sec = TIMEOUT_MS / 1000 };

		p[i] = (struct pollfd){ .fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0),
			                .events = POLLOUT };
		if (p[i].fd < 0 || setsockopt(p[i].fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
		    connect(p[i].fd, sa, len) < 0) {
			perror("tcp-stream send: connect");
			return 1;
		}
	}
	printf("connected %d\n", nconn);
	fflush(stdout);
	end = now() + seconds;
	while (now() < end) {
		if (poll(p, (nfds_t)nconn, 100) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < nconn; i++)
			if (p[i].revents & POLLOUT) {
				ssize_t w = send(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL);

				if (w < 0 && errno != EAGAIN && errno != EINTR) {
					perror("tcp-stream send: send");
					return 1;
				}
				sent += w > 0 ? (unsigned long long)w : 0;
			} else if (p[i].revents & (POLLERR | POLLHUP)) {
				fprintf(stderr, "tcp-stream send: connection %d failed\n", i);
				return 1;
			}
	}
	for (int i = 0; i < nconn; i++)
		close(p[i].fd);
	printf("sent %llu\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;

	signal(SIGPIPE, SIG_IGN);
	if (argc >= 4 && strcmp(argv[1], "sink") == 0 && addr_of(argv[2], argv[3], &ss, &len) == 0)
		return sink((struct sockaddr *)&ss, len);
	if (argc >= 5 && strcmp(argv[1], "send") == 0 && addr_of(argv[2], argv[3], &ss, &len) == 0) {
		double seconds = atof(argv[4]);
		int n = argc >= 6 ? atoi(argv[5]) : 1;

		if (seconds > 0 && n > 0 && n <= MAX_CONNECTIONS)
			return sender((struct sockaddr *)&ss, len, seconds, n);
	}
	fprintf(stderr, "usage: tcp-stream sink ADDR PORT | send ADDR PORT SECONDS [N]\n");
	return 2;
}
