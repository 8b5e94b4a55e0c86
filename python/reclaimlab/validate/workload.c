/*
 * reclaimlab-workload: the guest side of `reclaimlab validate`.
 *
 * It does in a real Linux guest what a scenario's [[workload]] tables make the simulator do, so
 * that the kernel's /proc/vmstat deltas can be set beside the simulated ones. The harness
 * (python/reclaimlab/validate/spec.py) turns the scenario into a small text spec, one item per
 * line, `key=value` fields:
 *
 *   workload name=NAME start_ns=N duration_ns=N [cgroup=DIR]
 *                                         starts a process (duration 0: no limit), in the cgroup
 *                                         v2 directory DIR when given (its memory is charged there)
 *   anon size=B pattern=sequential|random|zipf alpha=F passes=N write_fraction=F think_ns=N hold_ns=N
 *   file size=B op=read|write passes=N hold_ns=N path=PATH
 *   thp count=N rate=N lifetime_ns=N lifetimes=fixed|exponential
 *   fsmark index=K threads=T files=N files_per_dir=D file_size=B think_ns=N rss=B root=DIR
 *   stat index=K threads=T passes=N think_ns=N
 *
 * Each `workload` is a process; each of its anon/file/thp lines is a thread of it, as in the
 * simulator. Usage:
 *
 *   reclaimlab-workload prepare SPEC      create every file of the spec (written, fsynced)
 *   reclaimlab-workload run SPEC SEED     run the workloads, print one `result` line each,
 *                                         one `anon` line per anonymous thread: the
 *                                         accesses it made (its pace, set beside the model's),
 *                                         and one `sample` line per second of the run: the
 *                                         state and counters the kernel had then (its course,
 *                                         set beside the model's time series)
 *
 * Mirroring rules (each one matches what the simulator does, see docs/VALIDATION.md):
 * - the first access to an anonymous page always writes it: the simulator allocates a private
 *   page on first touch whatever write_fraction says, while a real read fault would map the
 *   shared zero page and allocate nothing;
 * - random draws pages uniformly with replacement, one draw per page of the region per pass;
 *   zipf draws page k (0-based) with probability proportional to 1/(k+1)^alpha;
 * - file I/O is buffered read()/write() of 128 KiB at a time, sequential, `passes` times;
 * - thp: 2 MiB regions madvised MADV_HUGEPAGE, one huge-page fault each at `rate`/s, each region
 *   unmapped `lifetime` after its fault (a fault that falls back to small pages still maps one
 *   4 KiB page: the kernel counts it in thp_fault_fallback);
 * - fsmark (the model's actors/workload/fsmark.rs): creator K of T first touches its `rss`, then
 *   makes files i = 0..N-1 in directory d<K + (i / D) * T> of DIR (the data disk) (one namespace for
 *   every creator workload, as the model's), each a 40-character name created with O_EXCL and,
 *   when file_size > 0, written in one write(); no fsync. Each create is appended, once done, to
 *   a creation log shared by all the workload processes;
 * - stat (actors/workload/stat.rs): walker K of T, each pass over the files logged when it
 *   begins, stat()s files K, K + T, ... of the log by path, in creation order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define HPAGE (2UL << 20)
#define IO_CHUNK (128UL << 10)
#define MAX_WORKLOADS 32
#define MAX_THREADS 4

enum kind { K_ANON, K_FILE, K_THP, K_FSMARK, K_STAT };

struct thread_spec {
	enum kind kind;
	uint64_t size, passes, think_ns, hold_ns;
	int pattern; /* 0 sequential, 1 random, 2 zipf */
	double alpha, write_fraction;
	int write; /* file: op=write */
	char path[256];
	uint64_t count, rate, lifetime_ns;
	int exponential;
	uint64_t seed;
	/* fsmark and stat: this thread's number among its table's threads, and how many. */
	uint64_t index, nthreads, files, files_per_dir, rss;
};

struct workload_spec {
	char name[64], cgroup[256];
	uint64_t start_ns, duration_ns;
	int nthreads;
	struct thread_spec threads[MAX_THREADS];
};

static struct workload_spec workloads[MAX_WORKLOADS];
static int nworkloads;

/*
 * The creation log, shared by every workload process (mapped before they fork): each entry is
 * (workload * MAX_THREADS + thread) << 32 | file number, in the order the creates completed.
 */
struct creation_log {
	_Atomic uint64_t n;
	uint64_t cap;
	uint64_t entry[];
};
static struct creation_log *crlog;

/*
 * Accesses made by each anonymous thread (workload * MAX_THREADS + thread), shared with the
 * parent, which prints them once every workload has ended: a thread ended by its workload's
 * duration (_exit) or killed by the OOM killer leaves its count as far as it got.
 */
static volatile uint64_t *accesses;

/*
 * The course of a run: a sampler process reads /proc/vmstat and the dentry and inode counts
 * once a second while the workloads run, into memory shared with the parent, which prints the
 * samples after the last workload ends (printing during the run would put the console's work
 * inside it). The samples' memory (about 230 KiB, room for 15 minutes) is locked, so the
 * pressure the sampler observes never swaps them out; reading three small proc files a second
 * is what it adds to the guest's work.
 */
#define SAMPLE_NS 1000000000ULL
#define MAX_SAMPLES 900
static const char *const sample_names[] = {
	"nr_free_pages", "nr_inactive_anon", "nr_active_anon", "nr_inactive_file",
	"nr_active_file", "nr_slab_reclaimable", "nr_slab_unreclaimable", "nr_swapcached",
	"nr_dirty", "nr_writeback", "pswpin", "pswpout", "pgmajfault", "swap_ra", "swap_ra_hit",
	"workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon",
	"pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgrefill",
	"allocstall_normal", "allocstall_movable", "slabs_scanned", "kswapd_inodesteal",
	"pageoutrun",
};
#define NR_SAMPLE_VMSTAT (sizeof sample_names / sizeof sample_names[0])
/* After the vmstat fields: nr_dentry, nr_unused dentries, nr_inodes. */
#define NR_SAMPLE_FIELDS (NR_SAMPLE_VMSTAT + 3)
struct samples {
	_Atomic int stop;
	uint64_t n;
	uint64_t t_ns[MAX_SAMPLES];
	int64_t v[MAX_SAMPLES][NR_SAMPLE_FIELDS];
};
static struct samples *samples;

static void die(const char *what)
{
	/* One line the host's parser shows as it is: the cause of a failed boot. */
	printf("@@reclaimlab:error workload: %s: %s@@\n", what, errno ? strerror(errno) : "invalid");
	fflush(stdout);
	_exit(3);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* splitmix64: small, seedable, and the same on every libc. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double rng_f64(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static const char *field(const char *line, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = line; (p = strstr(p, key)) != NULL; p += n) {
		if ((p == line || p[-1] == ' ') && p[n] == '=')
			return p + n + 1;
	}
	return NULL;
}

static uint64_t field_u64(const char *line, const char *key, uint64_t def)
{
	const char *v = field(line, key);
	return v ? strtoull(v, NULL, 10) : def;
}

static double field_f64(const char *line, const char *key, double def)
{
	const char *v = field(line, key);
	return v ? strtod(v, NULL) : def;
}

static void field_str(const char *line, const char *key, char *out, size_t cap)
{
	const char *v = field(line, key);
	size_t n = 0;
	if (v)
		while (v[n] && v[n] != ' ' && v[n] != '\n' && n + 1 < cap)
			n++;
	memcpy(out, v ? v : "", n);
	out[n] = 0;
}

static void read_spec(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], word[32];
	if (!f)
		die(path);
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%31s", word) != 1 || word[0] == '#')
			continue;
		if (!strcmp(word, "workload")) {
			if (nworkloads == MAX_WORKLOADS)
				die("too many workloads");
			struct workload_spec *w = &workloads[nworkloads++];
			field_str(line, "name", w->name, sizeof w->name);
			w->start_ns = field_u64(line, "start_ns", 0);
			w->duration_ns = field_u64(line, "duration_ns", 0);
			field_str(line, "cgroup", w->cgroup, sizeof w->cgroup);
			continue;
		}
		if (nworkloads == 0)
			die("spec: a thread line before any workload line");
		struct workload_spec *w = &workloads[nworkloads - 1];
		if (w->nthreads == MAX_THREADS)
			die("spec: too many threads in one workload");
		struct thread_spec *t = &w->threads[w->nthreads++];
		char s[32];
		memset(t, 0, sizeof *t);
		t->passes = field_u64(line, "passes", 1);
		t->hold_ns = field_u64(line, "hold_ns", 0);
		t->size = field_u64(line, "size", 0);
		if (!strcmp(word, "anon")) {
			t->kind = K_ANON;
			field_str(line, "pattern", s, sizeof s);
			t->pattern = !strcmp(s, "random") ? 1 : !strcmp(s, "zipf") ? 2 : 0;
			t->alpha = field_f64(line, "alpha", 1.0);
			t->write_fraction = field_f64(line, "write_fraction", 1.0);
			t->think_ns = field_u64(line, "think_ns", 0);
		} else if (!strcmp(word, "file")) {
			t->kind = K_FILE;
			field_str(line, "op", s, sizeof s);
			t->write = !strcmp(s, "write");
			field_str(line, "path", t->path, sizeof t->path);
		} else if (!strcmp(word, "thp")) {
			t->kind = K_THP;
			t->count = field_u64(line, "count", 0);
			t->rate = field_u64(line, "rate", 1);
			t->lifetime_ns = field_u64(line, "lifetime_ns", 10000000);
			field_str(line, "lifetimes", s, sizeof s);
			t->exponential = !strcmp(s, "exponential");
		} else if (!strcmp(word, "fsmark") || !strcmp(word, "stat")) {
			t->kind = word[0] == 'f' ? K_FSMARK : K_STAT;
			t->index = field_u64(line, "index", 0);
			t->nthreads = field_u64(line, "threads", 1);
			t->files = field_u64(line, "files", 0);
			t->files_per_dir = field_u64(line, "files_per_dir", 10000);
			t->size = field_u64(line, "file_size", 0);
			t->think_ns = field_u64(line, "think_ns", 0);
			t->rss = field_u64(line, "rss", 0);
			field_str(line, "root", t->path, sizeof t->path);
			if (t->nthreads == 0 || t->files_per_dir == 0) {
				errno = 0;
				die("spec: fsmark/stat needs threads and files_per_dir above 0");
			}
		} else {
			errno = 0;
			die("spec: unknown line kind");
		}
	}
	fclose(f);
}

/* Spin, not sleep: the simulator's think time is application CPU time between accesses. */
static void think(uint64_t ns)
{
	if (ns == 0)
		return;
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

/* Cumulative Zipf weights over the region's pages, for inverse-CDF draws. */
static double *zipf_cdf(uint64_t n, double alpha)
{
	double *c = malloc(n * sizeof *c), sum = 0;
	if (!c)
		die("zipf table");
	for (uint64_t k = 0; k < n; k++)
		c[k] = (sum += pow((double)(k + 1), -alpha));
	for (uint64_t k = 0; k < n; k++)
		c[k] /= sum;
	return c;
}

static uint64_t zipf_draw(const double *c, uint64_t n, uint64_t *rng)
{
	double u = rng_f64(rng);
	uint64_t lo = 0, hi = n - 1;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (c[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void run_anon(struct thread_spec *t, uint64_t gid)
{
	uint64_t pages = t->size / PAGE, rng = t->seed;
	volatile unsigned char *mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned char *touched = calloc(pages, 1);
	double *cdf = t->pattern == 2 ? zipf_cdf(pages, t->alpha) : NULL;
	unsigned sink = 0;
	if (mem == MAP_FAILED || !touched)
		die("anon mmap");
	for (uint64_t pass = 0; pass < t->passes; pass++) {
		for (uint64_t i = 0; i < pages; i++) {
			uint64_t p = t->pattern == 0 ? i
				   : t->pattern == 1 ? rng_next(&rng) % pages
						     : zipf_draw(cdf, pages, &rng);
			int write = t->write_fraction >= 1.0 ||
				    (t->write_fraction > 0.0 && rng_f64(&rng) < t->write_fraction);
			if (!touched[p]) {
				touched[p] = 1;
				write = 1;
			}
			if (write)
				mem[p * PAGE] = (unsigned char)(i + pass + 1);
			else
				sink += mem[p * PAGE];
			accesses[gid]++;
			think(t->think_ns);
		}
	}
	(void)sink;
	if (t->hold_ns)
		sleep_until(now_ns() + t->hold_ns);
}

static void run_file(struct thread_spec *t)
{
	char *buf = malloc(IO_CHUNK);
	if (!buf)
		die("file buffer");
	memset(buf, 0x5a, IO_CHUNK);
	for (uint64_t pass = 0; pass < t->passes; pass++) {
		int fd = open(t->path, t->write ? O_WRONLY : O_RDONLY);
		if (fd < 0)
			die(t->path);
		for (uint64_t off = 0; off < t->size; off += IO_CHUNK) {
			size_t n = t->size - off < IO_CHUNK ? t->size - off : IO_CHUNK;
			ssize_t r = t->write ? write(fd, buf, n) : read(fd, buf, n);
			if (r != (ssize_t)n)
				die(t->path);
		}
		close(fd);
	}
	free(buf);
	if (t->hold_ns)
		sleep_until(now_ns() + t->hold_ns);
}

static void run_thp(struct thread_spec *t)
{
	/* Live regions in a ring: with fixed lifetimes they end in fault order. */
	uint64_t cap = t->count ? t->count : 1, head = 0, tail = 0, rng = t->seed;
	void **addr = calloc(cap, sizeof *addr);
	uint64_t *ends = calloc(cap, sizeof *ends), start = now_ns();
	if (!addr || !ends)
		die("thp ring");
	for (uint64_t k = 0; k < t->count; k++) {
		uint64_t due = start + k * 1000000000ULL / t->rate;
		/* Free what has expired before the next fault, as the simulator's stream does. */
		for (uint64_t j = tail; j < head; j++) {
			if (addr[j] && ends[j] <= due) {
				sleep_until(ends[j]);
				munmap(addr[j], HPAGE);
				addr[j] = NULL;
			}
		}
		while (tail < head && !addr[tail])
			tail++;
		sleep_until(due);
		/* Over-map by one huge page so an aligned 2 MiB window exists inside. */
		char *raw = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (raw == MAP_FAILED)
			die("thp mmap");
		char *al = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
		if (al > raw)
			munmap(raw, (size_t)(al - raw));
		munmap(al + HPAGE, (size_t)(raw + 2 * HPAGE - al - HPAGE));
		madvise(al, HPAGE, MADV_HUGEPAGE);
		*(volatile char *)al = 1;
		uint64_t life = t->lifetime_ns;
		if (t->exponential)
			life = (uint64_t)(-log(1.0 - rng_f64(&rng)) * (double)t->lifetime_ns);
		addr[head] = al;
		ends[head++] = now_ns() + life;
	}
	for (uint64_t j = tail; j < head; j++) {
		if (addr[j]) {
			sleep_until(ends[j]);
			munmap(addr[j], HPAGE);
		}
	}
	if (t->hold_ns)
		sleep_until(now_ns() + t->hold_ns);
}

/* The path of file `i` of creator thread `gid` (workload * MAX_THREADS + thread). */
static void fs_path(char *out, size_t cap, uint64_t gid, uint64_t i)
{
	const struct thread_spec *t = &workloads[gid / MAX_THREADS].threads[gid % MAX_THREADS];
	uint64_t dir = t->index + (i / t->files_per_dir) * t->nthreads;
	/* 40 characters, as fs_mark's names (the model's dirents_per_block assumes them). */
	snprintf(out, cap, "%s/d%llu/w%02llut%02llu-%010llu-abcdefghijklmnopqrstuv", t->path,
		 (unsigned long long)dir, (unsigned long long)(gid / MAX_THREADS),
		 (unsigned long long)(gid % MAX_THREADS), (unsigned long long)i);
}

static void run_fsmark(struct thread_spec *t, uint64_t gid, const char *wname)
{
	char path[400], *buf = NULL;
	if (t->rss) {
		/* The creator's own memory, touched first, as the model's fsmark does. */
		volatile unsigned char *m = mmap(NULL, t->rss, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			die("fsmark rss");
		for (uint64_t off = 0; off < t->rss; off += PAGE)
			m[off] = 1;
	}
	if (t->size && !(buf = malloc(t->size)))
		die("fsmark buffer");
	if (buf)
		memset(buf, 0x5a, t->size);
	for (uint64_t i = 0; i < t->files; i++) {
		fs_path(path, sizeof path, gid, i);
		if (i % t->files_per_dir == 0) {
			char *slash = strrchr(path, '/');
			*slash = 0;
			if (mkdir(path, 0755) && errno != EEXIST)
				die(path);
			*slash = '/';
		}
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			die(path);
		if (t->size && write(fd, buf, t->size) != (ssize_t)t->size)
			die(path);
		if (close(fd))
			die(path);
		uint64_t k = atomic_fetch_add(&crlog->n, 1);
		if (k >= crlog->cap) {
			errno = 0;
			die("creation log full");
		}
		crlog->entry[k] = gid << 32 | i;
		think(t->think_ns);
	}
	printf("fs workload=%s thread=%llu created=%llu\n", wname, (unsigned long long)t->index,
	       (unsigned long long)t->files);
	fflush(stdout);
	free(buf);
}

static void run_stat(struct thread_spec *t, const char *wname)
{
	char path[400];
	struct stat st;
	uint64_t lookups = 0, first = 0;
	for (uint64_t pass = 0; pass < t->passes; pass++) {
		uint64_t n = atomic_load(&crlog->n);
		if (pass == 0)
			first = n;
		for (uint64_t j = t->index; j < n; j += t->nthreads) {
			uint64_t e = crlog->entry[j];
			fs_path(path, sizeof path, e >> 32, e & 0xffffffffULL);
			if (stat(path, &st))
				die(path);
			lookups++;
			think(t->think_ns);
		}
	}
	printf("fs workload=%s thread=%llu stat_passes=%llu lookups=%llu first_pass_files=%llu\n",
	       wname, (unsigned long long)t->index, (unsigned long long)t->passes,
	       (unsigned long long)lookups, (unsigned long long)first);
	fflush(stdout);
}

struct thread_arg {
	struct thread_spec *t;
	uint64_t gid;
	const char *wname;
};

static void *thread_main(void *arg)
{
	struct thread_arg *a = arg;
	struct thread_spec *t = a->t;
	if (t->kind == K_ANON)
		run_anon(t, a->gid);
	else if (t->kind == K_FILE)
		run_file(t);
	else if (t->kind == K_FSMARK)
		run_fsmark(t, a->gid, a->wname);
	else if (t->kind == K_STAT)
		run_stat(t, a->wname);
	else
		run_thp(t);
	return NULL;
}

/* Move this process into cgroup directory `dir` (writing 0 to cgroup.procs moves the writer)
 * before it allocates anything of its own, so that every page it faults is charged there. */
static void join_cgroup(const char *dir)
{
	char path[300];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	int fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0\n", 2) != 2 || close(fd))
		die(path);
}

static void run_workload(struct workload_spec *w, uint64_t t0)
{
	pthread_t tid[MAX_THREADS];
	struct thread_arg args[MAX_THREADS];
	if (w->cgroup[0])
		join_cgroup(w->cgroup);
	sleep_until(t0 + w->start_ns);
	for (int i = 0; i < w->nthreads; i++) {
		args[i] = (struct thread_arg){ &w->threads[i], (uint64_t)((w - workloads) * MAX_THREADS + i),
					       w->name };
		if (pthread_create(&tid[i], NULL, thread_main, &args[i]))
			die("pthread_create");
	}
	if (w->duration_ns) {
		/* The scenario's duration ends the process whatever its threads are doing. */
		sleep_until(t0 + w->start_ns + w->duration_ns);
		_exit(0);
	}
	for (int i = 0; i < w->nthreads; i++)
		pthread_join(tid[i], NULL);
	_exit(0);
}

static void prepare(void)
{
	char *buf = malloc(1UL << 20);
	if (!buf)
		die("prepare buffer");
	for (int w = 0; w < nworkloads; w++) {
		for (int i = 0; i < workloads[w].nthreads; i++) {
			struct thread_spec *t = &workloads[w].threads[i];
			if (t->kind != K_FILE)
				continue;
			int fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				die(t->path);
			/* Non-zero data, so every block is really allocated and read back from disk. */
			for (uint64_t off = 0; off < t->size; off += 1UL << 20) {
				size_t n = t->size - off < (1UL << 20) ? t->size - off : (1UL << 20);
				memset(buf, (int)(off >> 20) | 1, n);
				if (write(fd, buf, n) != (ssize_t)n)
					die(t->path);
			}
			if (fsync(fd) || close(fd))
				die(t->path);
		}
	}
	free(buf);
}

/*
 * The kernel's counters as the last workload ends, read here rather than by the harness's next
 * command. The harness runs busybox from the guest's root file system, which is tmpfs: its
 * pages are swap-backed, the workload's pressure swaps them out, and the faults that bring
 * them back (with swap readahead) would count in a snapshot taken after this program exits.
 */
static void print_vmstat_end(void)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char line[256];
	if (!f)
		die("open /proc/vmstat");
	while (fgets(line, sizeof(line), f))
		printf("vmstat %s", line);
	fclose(f);
}

/* The first two numbers of a proc file (dentry-state, inode-nr), -1 where missing. */
static void read_two(const char *path, int64_t *a, int64_t *b)
{
	long long x = -1, y = -1;
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld %lld", &x, &y) != 2)
			x = y = -1;
		fclose(f);
	}
	*a = x;
	*b = y;
}

static void take_sample(uint64_t t_ns)
{
	uint64_t k = samples->n;
	if (k >= MAX_SAMPLES)
		return;
	int64_t *v = samples->v[k];
	for (size_t i = 0; i < NR_SAMPLE_FIELDS; i++)
		v[i] = -1;
	char line[256], name[128];
	long long value;
	FILE *f = fopen("/proc/vmstat", "r");
	if (f) {
		while (fgets(line, sizeof line, f)) {
			if (sscanf(line, "%127s %lld", name, &value) != 2)
				continue;
			for (size_t i = 0; i < NR_SAMPLE_VMSTAT; i++)
				if (!strcmp(name, sample_names[i]))
					v[i] = value;
		}
		fclose(f);
	}
	int64_t unused_inodes;
	read_two("/proc/sys/fs/dentry-state", &v[NR_SAMPLE_VMSTAT], &v[NR_SAMPLE_VMSTAT + 1]);
	read_two("/proc/sys/fs/inode-nr", &v[NR_SAMPLE_VMSTAT + 2], &unused_inodes);
	samples->t_ns[k] = t_ns;
	samples->n = k + 1;
}

/* The sampler process: a sample at t0 and every SAMPLE_NS after it until told to stop. */
static void run_sampler(uint64_t t0)
{
	mlock(samples, sizeof *samples);
	for (uint64_t k = 0; !atomic_load(&samples->stop); k++) {
		sleep_until(t0 + k * SAMPLE_NS);
		if (atomic_load(&samples->stop))
			break;
		take_sample(now_ns() - t0);
	}
	_exit(0);
}

static void print_samples(void)
{
	for (uint64_t k = 0; k < samples->n; k++) {
		printf("sample t_ns=%llu", (unsigned long long)samples->t_ns[k]);
		for (size_t i = 0; i < NR_SAMPLE_VMSTAT; i++)
			printf(" %s=%lld", sample_names[i], (long long)samples->v[k][i]);
		printf(" nr_dentry=%lld nr_unused_dentry=%lld nr_inodes=%lld\n",
		       (long long)samples->v[k][NR_SAMPLE_VMSTAT],
		       (long long)samples->v[k][NR_SAMPLE_VMSTAT + 1],
		       (long long)samples->v[k][NR_SAMPLE_VMSTAT + 2]);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s prepare SPEC | run SPEC SEED\n", argv[0]);
		return 2;
	}
	read_spec(argv[2]);
	if (!strcmp(argv[1], "prepare")) {
		prepare();
		return 0;
	}
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
	pid_t pids[MAX_WORKLOADS];
	for (int w = 0; w < nworkloads; w++)
		for (int i = 0; i < workloads[w].nthreads; i++)
			workloads[w].threads[i].seed = seed * 1000003ULL + (uint64_t)(w * MAX_THREADS + i);
	uint64_t creates = 0;
	for (int w = 0; w < nworkloads; w++)
		for (int i = 0; i < workloads[w].nthreads; i++)
			if (workloads[w].threads[i].kind == K_FSMARK)
				creates += workloads[w].threads[i].files;
	size_t logsz = sizeof *crlog + (creates ? creates : 1) * sizeof(uint64_t);
	crlog = mmap(NULL, logsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (crlog == MAP_FAILED)
		die("creation log");
	crlog->cap = creates;
	accesses = mmap(NULL, MAX_WORKLOADS * MAX_THREADS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (accesses == MAP_FAILED)
		die("access counters");
	samples = mmap(NULL, sizeof *samples, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (samples == MAP_FAILED)
		die("samples");
	fflush(stdout);
	uint64_t t0 = now_ns();
	pid_t sampler = fork();
	if (sampler < 0)
		die("fork");
	if (sampler == 0)
		run_sampler(t0);
	for (int w = 0; w < nworkloads; w++) {
		pids[w] = fork();
		if (pids[w] < 0)
			die("fork");
		if (pids[w] == 0)
			run_workload(&workloads[w], t0);
	}
	for (int done = 0; done < nworkloads; done++) {
		int status;
		pid_t pid = wait(&status);
		if (pid == sampler) {
			/* It ended by itself (it cannot, unless killed): the workloads still count. */
			sampler = -1;
			done--;
			continue;
		}
		uint64_t t = now_ns() - t0;
		for (int w = 0; w < nworkloads; w++) {
			if (pids[w] != pid)
				continue;
			/* killed=9 is the OOM killer's SIGKILL; the harness records it per rep. */
			printf("result workload=%s end_ns=%llu exit=%d killed=%d\n", workloads[w].name,
			       (unsigned long long)t, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		}
	}
	uint64_t elapsed = now_ns() - t0;
	/* The run's last state, then the sampler stops. */
	if (sampler > 0) {
		atomic_store(&samples->stop, 1);
		kill(sampler, SIGKILL);
		waitpid(sampler, NULL, 0);
	}
	take_sample(elapsed);
	for (int w = 0; w < nworkloads; w++)
		for (int i = 0; i < workloads[w].nthreads; i++)
			if (workloads[w].threads[i].kind == K_ANON)
				printf("anon workload=%s thread=%d accesses=%llu\n", workloads[w].name, i,
				       (unsigned long long)accesses[w * MAX_THREADS + i]);
	print_vmstat_end();
	print_samples();
	printf("result elapsed_ns=%llu\n", (unsigned long long)elapsed);
	return 0;
}
