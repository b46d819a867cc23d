/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udp-spray N - a bench helper: sends one empty UDP datagram from one socket
 * to each of N destinations on loopback, 127.0.0.A port P for the i-th
 * (i = 0 .. N-1) with A = 1 + i / 50000 and P = 10000 + i % 50000, so that
 * every datagram is a flow of its own: with an nftables ct rule in the
 * namespace, N conntrack entries (UDP, UNREPLIED). Prints the number sent;
 * exits 0 when that is N, 1 otherwise, 2 on bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PORTS 50000
#define FIRST_PORT 10000
#define MAX_FLOWS (PORTS * 200) /* 127.0.0.1 .. 127.0.0.200 */

int main(int argc, char **argv)
{
	char *end;
	long n, sent = 0;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	errno = 0;
	n = strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || n < 0 || n > MAX_FLOWS) {
		fprintf(stderr, "%s: N must be 0..%d\n", argv[0], MAX_FLOWS);
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("udp-spray: socket");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		struct sockaddr_in sin = {
			.sin_family = AF_INET,
			.sin_port = htons((uint16_t)(FIRST_PORT + i % PORTS)),
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)(i / PORTS)),
		};

		if (sendto(fd, "", 0, 0, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
			/* A full socket buffer or a queued ICMP error: try the flow again once. */
			if ((errno == ENOBUFS || errno == ECONNREFUSED || errno == EAGAIN) &&
			    sendto(fd, "", 0, 0, (struct sockaddr *)&sin, sizeof(sin)) >= 0) {
				sent++;
				continue;
			}
			fprintf(stderr, "udp-spray: datagram %ld: %s\n", i + 1, strerror(errno));
			break;
		}
		sent++;
	}
	close(fd);
	printf("%ld\n", sent);
	return sent == n ? 0 : 1;
}
