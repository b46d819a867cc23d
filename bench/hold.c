/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hold - a bench helper that builds part of a busy host and keeps it until
 * it is told to stop (SIGTERM, SIGINT or SIGHUP) or its parent exits:
 *
 *   hold procs N MIN MAX [SEED]
 *       forks N children; each holds a random number (MIN..MAX, SEED for
 *       the draw, default 1) of descriptors in all, 0, 1 and 2 included:
 *       /dev/null opened read-only and the two ends of AF_UNIX socketpairs,
 *       about half each, so that /proc/PID/fd holds files and sockets.
 *       Prints "ready N PROCS FDS" (FDS: the descriptors of all children).
 *   hold hidden-listener PORT
 *       listens on 0.0.0.0:PORT (TCP) in its network namespace, sends that
 *       descriptor in an SCM_RIGHTS message over an AF_UNIX socketpair that
 *       nobody reads and closes it: the listener's only reference is the
 *       message in flight, so no /proc/PID/fd links to it (ss -p shows no
 *       process). Prints "ready hidden-listener PORT".
 *   hold listeners ADDR FIRST N
 *       listens on ADDR (IPv4, numeric) ports FIRST..FIRST+N-1, one process
 *       (RLIMIT_NOFILE raised to fit). Prints "ready listeners N".
 *   hold established SRC DST PORT N
 *       N established TCP connections from SRC to DST (IPv4, numeric, both
 *       addresses of this host) held at both ends by this one process: DST
 *       listens on PORT, PORT+1, ... (20,000 connections a port, so that
 *       the ephemeral ports of SRC suffice), each connection accepted as it
 *       is made. Prints "ready established N".
 *
 * Every process asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG), so
 * a killed script leaves nothing behind; on a signal the parent kills and
 * reaps its children before exiting. Exits 1 on a failure, 2 on bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PROCS 10000
#define MAX_FDS 4096
#define MAX_LISTENERS 60000

static long arg_long(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "hold: %s: not a number in %ld..%ld\n", s, lo, hi);
		exit(2);
	}
	return v;
}

/* Dies with the parent; false when the parent is already gone. */
static int die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -1;
	return getppid() == parent ? 0 : -1;
}

/* Blocks the stop signals and waits for one of them. */
static void wait_for_stop(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigwait(&set, &sig);
}

static void block_stop_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * A child of `hold procs`: @want descriptors in all (0, 1 and 2 included),
 * then sleep until killed. The readiness pipe sits at descriptor @want while
 * the others are opened, and is closed once written to.
 */
static void proc_child(int want, int ready_fd)
{
	int null, held = 3;

	if (ready_fd != want) {
		if (dup2(ready_fd, want) < 0)
			_exit(1);
		close(ready_fd);
	}
	close_range(3, (unsigned)want - 1, 0);
	close_range((unsigned)want + 1, ~0U, 0);
	null = open("/dev/null", O_RDWR);
	if (null < 0)
		_exit(1);
	for (int i = 0; i <= 2; i++)
		if (null != i && dup2(null, i) < 0)
			_exit(1);
	if (null > 2)
		close(null);
	while (held < want) {
		int sv[2];

		if (held + 2 <= want && (held / 2) % 2 == 0) {
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
				_exit(1);
			held += 2;
		} else {
			if (open("/dev/null", O_RDONLY) < 0)
				_exit(1);
			held++;
		}
	}
	if (write(want, "x", 1) != 1)
		_exit(1);
	close(want);
	for (;;)
		pause();
}

static int cmd_procs(int argc, char **argv)
{
	long n, lo, hi, total = 0;
	unsigned seed = 1;
	pid_t self = getpid(), *pids;
	struct rlimit rl;
	int pipefd[2];

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: hold procs N MIN MAX [SEED]\n");
		return 2;
	}
	n = arg_long(argv[0], 1, MAX_PROCS);
	lo = arg_long(argv[1], 4, MAX_FDS);
	hi = arg_long(argv[2], lo, MAX_FDS);
	if (argc == 4)
		seed = (unsigned)arg_long(argv[3], 0, 0x7fffffff);
	/* Each child holds up to MAX descriptors and the readiness pipe above them. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)hi + 1) {
		rl.rlim_cur = (rlim_t)hi + 1;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			perror("hold: setrlimit(RLIMIT_NOFILE)");
			return 1;
		}
	}
	pids = calloc((size_t)n, sizeof(*pids));
	if (!pids || pipe(pipefd) < 0)
		return 1;
	srandom(seed);
	for (long i = 0; i < n; i++) {
		int want = (int)(lo + random() % (hi - lo + 1));
		pid_t pid;

		total += want;
		pid = fork();
		if (pid < 0) {
			perror("hold: fork");
			kill(0, SIGKILL);
			return 1;
		}
		if (pid == 0) {
			close(pipefd[0]);
			if (die_with_parent(self) < 0)
				_exit(1);
			proc_child(want, pipefd[1]);
		}
		pids[i] = pid;
	}
	close(pipefd[1]);
	for (long got = 0; got < n;) {
		char buf[256];
		ssize_t r = read(pipefd[0], buf, sizeof(buf));

		if (r <= 0) {
			fprintf(stderr, "hold: %ld of %ld children ready\n", got, n);
			for (long i = 0; i < n; i++)
				kill(pids[i], SIGKILL);
			while (wait(NULL) > 0)
				;
			return 1;
		}
		got += r;
	}
	close(pipefd[0]);
	printf("ready procs %ld %ld\n", n, total);
	fflush(stdout);
	wait_for_stop();
	for (long i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	free(pids);
	return 0;
}

static int listen_on(uint32_t addr, int port)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = addr,
	};
	int one = 1, fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4096) < 0) {
		fprintf(stderr, "hold: listen on port %d: %s\n", port, strerror(errno));
		return -1;
	}
	return fd;
}

static int cmd_hidden_listener(int argc, char **argv)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf = { 0 };
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf.buf,
		.msg_controllen = sizeof(cbuf.buf),
	};
	struct cmsghdr *c;
	int sv[2], fd;

	if (argc != 1) {
		fprintf(stderr, "usage: hold hidden-listener PORT\n");
		return 2;
	}
	fd = listen_on(htonl(INADDR_ANY), (int)arg_long(argv[0], 1, 65535));
	if (fd < 0)
		return 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("hold: socketpair");
		return 1;
	}
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(sv[0], &msg, 0) != 1) {
		perror("hold: sendmsg");
		return 1;
	}
	/* The socket now lives only in sv[1]'s receive queue, which nobody reads. */
	close(fd);
	printf("ready hidden-listener %s\n", argv[0]);
	fflush(stdout);
	wait_for_stop();
	return 0;
}

static int cmd_listeners(int argc, char **argv)
{
	struct rlimit rl;
	struct in_addr a;
	long first, n;

	if (argc != 3) {
		fprintf(stderr, "usage: hold listeners ADDR FIRST N\n");
		return 2;
	}
	if (inet_pton(AF_INET, argv[0], &a) != 1) {
		fprintf(stderr, "hold: %s: not an IPv4 address\n", argv[0]);
		return 2;
	}
	first = arg_long(argv[1], 1, 65535);
	n = arg_long(argv[2], 1, MAX_LISTENERS);
	if (first + n - 1 > 65535) {
		fprintf(stderr, "hold: ports %ld..%ld beyond 65535\n", first, first + n - 1);
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = (rlim_t)n + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			perror("hold: setrlimit(RLIMIT_NOFILE)");
			return 1;
		}
	}
	for (long i = 0; i < n; i++)
		if (listen_on(a.s_addr, (int)(first + i)) < 0)
			return 1;
	printf("ready listeners %ld\n", n);
	fflush(stdout);
	wait_for_stop();
	return 0;
}

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

static int cmd_established(int argc, char **argv)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	struct rlimit rl;
	long port, n;
	int lfd = -1;

	if (argc != 4 || inet_pton(AF_INET, argv[0], &src.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: hold established SRC DST PORT N (IPv4 addresses)\n");
		return 2;
	}
	port = arg_long(argv[2], 1, 65535);
	n = arg_long(argv[3], 1, 200000);
	if (port + n / 20000 > 65535) {
		fprintf(stderr, "hold: ports from %ld beyond 65535\n", port);
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)(2 * n + 64)) {
		rl.rlim_cur = (rlim_t)(2 * n + 64);
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			perror("hold: setrlimit(RLIMIT_NOFILE)");
			return 1;
		}
	}
	for (long i = 0; i < n; i++) {
		int one = 1, c, a;

		if (i % 20000 == 0 && (lfd = listen_on(dst.sin_addr.s_addr, (int)(port + i / 20000))) < 0)
			return 1;
		dst.sin_port = htons((uint16_t)(port + i / 20000));
		c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* The port is picked at connect(), per destination: more than the range's worth. */
		if (c < 0 || setsockopt(c, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)) < 0 ||
		    bind(c, (struct sockaddr *)&src, sizeof(src)) < 0 ||
		    connect(c, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
			fprintf(stderr, "hold: connection %ld: %s\n", i, strerror(errno));
			return 1;
		}
		a = accept(lfd, NULL, NULL);
		if (a < 0) {
			perror("hold: accept");
			return 1;
		}
	}
	printf("ready established %ld\n", n);
	fflush(stdout);
	wait_for_stop();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: hold procs|hidden-listener|listeners|established ARG...\n");
		return 2;
	}
	block_stop_signals();
	if (die_with_parent(getppid()) < 0)
		return 1;
	if (strcmp(argv[1], "procs") == 0)
		return cmd_procs(argc - 2, argv + 2);
	if (strcmp(argv[1], "hidden-listener") == 0)
		return cmd_hidden_listener(argc - 2, argv + 2);
	if (strcmp(argv[1], "listeners") == 0)
		return cmd_listeners(argc - 2, argv + 2);
	if (strcmp(argv[1], "established") == 0)
		return cmd_established(argc - 2, argv + 2);
	fprintf(stderr, "hold: %s: unknown command\n", argv[1]);
	return 2;
}
