/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs a command N times and prints the median and worst wall time, the
 * median CPU time (user + system, from wait4(2): what the command itself
 * cost, which a machine busy with other work does not inflate as it does the
 * wall time) and the peak resident set size (ru_maxrss). A benchmark prints
 * figures; it never passes or fails on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs;
	double *ms, *cpu;
	long max_rss = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: bench LABEL RUNS COMMAND [ARG...]\n");
		return 2;
	}
	runs = atoi(argv[2]);
	if (runs < 1 || runs > 100000) {
		fprintf(stderr, "bench: RUNS must be 1..100000\n");
		return 2;
	}
	ms = calloc((size_t)runs, sizeof(*ms));
	cpu = calloc((size_t)runs, sizeof(*cpu));
	if (!ms || !cpu)
		return 2;
	for (int i = 0; i < runs; i++) {
		struct timespec t0, t1;
		struct rusage ru;
		int status;
		pid_t pid;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		pid = fork();
		if (pid < 0) {
			perror("bench: fork");
			return 2;
		}
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0) {
				dup2(null, STDOUT_FILENO);
				dup2(null, STDERR_FILENO);
			}
			execv(argv[3], argv + 3);
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) < 0) {
			perror("bench: wait4");
			return 2;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
			fprintf(stderr, "bench: %s exited with status %d\n", argv[3],
			        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			return 2;
		}
		ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		cpu[i] = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
		if (ru.ru_maxrss > max_rss)
			max_rss = ru.ru_maxrss;
	}
	qsort(ms, (size_t)runs, sizeof(*ms), cmp_double);
	qsort(cpu, (size_t)runs, sizeof(*cpu), cmp_double);
	printf("%-34s runs %5d  median %7.2f ms  max %7.2f ms  cpu %7.2f ms  peak RSS %6.2f MiB\n",
	       argv[1], runs, ms[runs / 2], ms[runs - 1], cpu[runs / 2], (double)max_rss / 1024.0);
	free(ms);
	free(cpu);
	return 0;
}
