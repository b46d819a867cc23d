/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Memory that runs out, on demand (tests/oom.sh): loaded with LD_PRELOAD, it
 * stands in front of glibc's malloc(), calloc(), realloc() and the aligned
 * allocations, for the program and every library it uses, libc's own calls
 * (strdup(), asprintf(), fopen()) included. With HT_FAILMALLOC=N in the
 * environment the Nth call from the program's start on, and every later one,
 * fails (NULL, errno ENOMEM), as when memory has run out for good; without
 * it none does. With HT_FAILMALLOC_COUNT=FILE the number of calls the run
 * made is written to FILE at its exit. With HT_FAILMALLOC_CRASH=FILE a
 * crash (SIGSEGV, SIGABRT, SIGBUS) writes its stack to FILE
 * (backtrace_symbols_fd(3), which allocates nothing) before the process dies
 * of it: tests/oom.sh tells so where a run crashed. A test build: glibc
 * only, and not with AddressSanitizer, whose allocator replaces glibc's.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);

static unsigned long calls, fail_from;
static const char *crash_path;

/* The stack of the crash into crash_path, then the signal's own end. */
static void on_crash(int sig)
{
	void *frames[64];
	int n = backtrace(frames, 64);
	int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0) {
		backtrace_symbols_fd(frames, n, fd);
		close(fd);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void failmalloc_init(void)
{
	const char *s = getenv("HT_FAILMALLOC");
	void *frame;

	fail_from = s ? strtoul(s, NULL, 10) : 0;
	crash_path = getenv("HT_FAILMALLOC_CRASH");
	if (crash_path) {
		/* backtrace() loads libgcc_s at its first call: now, while memory is there. */
		backtrace(&frame, 1);
		signal(SIGSEGV, on_crash);
		signal(SIGBUS, on_crash);
		signal(SIGABRT, on_crash);
	}
}

/* Writes the count without allocating (the run may have none left). */
__attribute__((destructor)) static void failmalloc_fini(void)
{
	const char *path = getenv("HT_FAILMALLOC_COUNT");
	char buf[32];
	int fd, n;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%lu\n", calls);
	if (write(fd, buf, (size_t)n) != n)
		n = 0;
	close(fd);
}

/* Whether this call fails: the Nth and every later one. */
static int fails(void)
{
	calls++;
	if (fail_from && calls >= fail_from) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}

void *malloc(size_t size)
{
	return fails() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fails() ? NULL : __libc_realloc(p, size);
}

void *memalign(size_t align, size_t size)
{
	return fails() ? NULL : __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	return fails() ? NULL : __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (fails())
		return ENOMEM;
	p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
