/*
 * reclaimlab-balloon: the guest program of `reclaimlab validate --balloon`.
 *
 *   reclaimlab-balloon SIZE_BYTES FREE_AFTER_NS
 *
 * Allocates SIZE_BYTES with malloc (glibc maps a block this large with its own mmap), writes
 * every byte of it, holds it until FREE_AFTER_NS after its own start, frees it and exits. It
 * is what a scenario's [[guest.workload]] with an [anon] table of that size, one pass, and
 * `duration` = FREE_AFTER_NS does in the simulator.
 *
 * The host aligns its samples of the QEMU process's resident set with this program by the
 * marker lines it prints on the console (start, written, freeing just before free(), freed
 * just after it; `@@reclaimlab:mark NAME t_ns=...@@`): the host
 * records when it reads each line; t_ns is the guest's own CLOCK_MONOTONIC offset from the
 * start marker, kept for checking that alignment. Each marker is one write(2) on the console,
 * unbuffered, so the host sees it as soon as the serial port carries it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void mark(const char *name, uint64_t t_ns)
{
	char line[128];
	int n = snprintf(line, sizeof line, "@@reclaimlab:mark %s t_ns=%" PRIu64 "@@\n", name, t_ns);
	if (write(1, line, (size_t)n) != n)
		_exit(4);
}

static void die(const char *what)
{
	printf("@@reclaimlab:error balloon: %s: %s@@\n", what, errno ? strerror(errno) : "invalid");
	fflush(stdout);
	_exit(3);
}

int main(int argc, char **argv)
{
	if (argc != 3)
		die("usage: reclaimlab-balloon SIZE_BYTES FREE_AFTER_NS");
	char *end;
	errno = 0;
	uint64_t size = strtoull(argv[1], &end, 10);
	if (errno || *end || size == 0)
		die("SIZE_BYTES is not a positive integer");
	uint64_t free_after = strtoull(argv[2], &end, 10);
	if (errno || *end)
		die("FREE_AFTER_NS is not an integer");

	uint64_t t0 = now_ns();
	mark("start", 0);
	unsigned char *p = malloc(size);
	if (p == NULL)
		die("malloc");
	/* Every page written: each becomes a private page of the guest and, on first touch, a
	 * host-resident page of the VM. */
	memset(p, 0x5a, size);
	mark("written", now_ns() - t0);

	uint64_t t = t0 + free_after;
	struct timespec ts = { (time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	/* Touch one byte after the hold so the compiler cannot drop the memset as dead. */
	if (p[size - 1] != 0x5a)
		die("memory changed under the program");
	/* Time 0 of the comparison: the unmap that follows frees the pages one by one, which
	 * takes a TCG guest from a fraction of a second to over a second. */
	mark("freeing", now_ns() - t0);
	free(p);
	mark("freed", now_ns() - t0);
	return 0;
}
