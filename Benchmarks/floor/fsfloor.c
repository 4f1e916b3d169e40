/*
 * fsfloor: the file-system floor for Stash's disk-cache benchmarks.
 *
 * The same workloads as Benchmarks/python/diskcache_bench.py, done with raw
 * POSIX calls and no index at all: one file per key at ab/cd/<hash>, where the
 * name is a hash of the key. No cache can do less work per operation and
 * still keep one file per entry, so Stash/floor says what the index, the
 * bookkeeping and the language cost on top of the file system.
 *
 *   set       create a temporary file, write, close, rename into place
 *             (no fsync: neither Stash nor diskcache fsyncs a value by default)
 *   get-hit   open, fstat, read st_size bytes, close
 *   get-miss  open of a missing file (ENOENT)
 *   delete    unlink
 *   open-100k stat the cache directory, then one get-hit, on a directory
 *             of 100 000 entries: the floor has no index to open
 *   set-full  not emitted: without an index there is no eviction order, and
 *             an eviction is a delete plus a set, both measured above
 *
 * Fan-out directories are created untimed before each run, for the keys the
 * run will use: the floor models a cache in its steady state, whose
 * directories already exist. (A fresh cache pays up to two mkdirs per set.)
 *
 * Output: one JSON object per workload and value size on stdout, in the
 * format of diskcache_bench.py with "impl":"floor" and "policy":"none".
 *
 * Build: cc -O2 -o fsfloor fsfloor.c
 * Usage: fsfloor [--quick] [--runs N] [--warmups N] [--dir PARENT]
 *                [--workloads set,get-hit,get-miss,delete,open-100k]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Conventions shared with diskcache_bench.py and the Swift benchmarks. */
#define KIB 1024L
#define MIB (1024L * KIB)
#define SEED 0x5354415348ULL /* "STASH" */
#define GOLDEN 0x9E3779B97F4A7C15ULL
#define READ_PASSES 5
#define OPEN_ENTRIES 100000
#define OPEN_VALUE_SIZE KIB

static const long sizes[] = {1 * KIB, 32 * KIB, 256 * KIB, 2 * MIB};
static const int base_ops[] = {2000, 500, 200, 100};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
#define MAX_SIZE (2 * MIB)

static unsigned char *value;   /* the first MAX_SIZE bytes of the splitmix64 stream */
static unsigned char *readbuf; /* get-hit reads land here */
static long tmp_counter;

static void die(const char *what, const char *path) {
    fprintf(stderr, "fsfloor: %s %s: %s\n", what, path ? path : "", strerror(errno));
    exit(1);
}

static void fail(const char *message) {
    fprintf(stderr, "fsfloor: sanity check failed: %s\n", message);
    exit(1);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Output k of splitmix64 is mix(SEED + (k + 1) * GOLDEN), little endian. */
static void fill_value(void) {
    uint64_t state = SEED;
    for (long i = 0; i < MAX_SIZE / 8; i++) {
        state += GOLDEN;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        for (int b = 0; b < 8; b++) value[i * 8 + b] = (unsigned char)(z >> (8 * b));
    }
}

/* root/ab/cd/<16 hex digits of FNV-1a 64 of the key>. The floor may map keys
 * to names; 64-bit FNV does not collide on these few thousand keys. */
static void entry_path(char *out, size_t cap, const char *root, const char *prefix, int i) {
    char key[64];
    int n = snprintf(key, sizeof key, "%s-%08d", prefix, i);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int k = 0; k < n; k++) {
        h ^= (unsigned char)key[k];
        h *= 0x100000001b3ULL;
    }
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    snprintf(out, cap, "%s/%.2s/%.2s/%s", root, hex, hex + 2, hex);
}

static void make_parent_dirs(const char *path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *last = strrchr(dir, '/');
    *last = '\0';
    char *mid = strrchr(dir, '/');
    *mid = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) die("mkdir", dir);
    *mid = '/';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) die("mkdir", dir);
}

static void prepare_dirs(const char *root, const char *prefix, int count) {
    char path[4096];
    for (int i = 0; i < count; i++) {
        entry_path(path, sizeof path, root, prefix, i);
        make_parent_dirs(path);
    }
}

static void write_all(int fd, const unsigned char *bytes, long size, const char *path) {
    while (size > 0) {
        ssize_t n = write(fd, bytes, (size_t)size);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("write", path);
        }
        bytes += n;
        size -= n;
    }
}

static void op_set(const char *root, int i, long size) {
    char path[4096], tmp[4096];
    entry_path(path, sizeof path, root, "key", i);
    snprintf(tmp, sizeof tmp, "%s/tmp-%ld", root, tmp_counter++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) die("open", tmp);
    write_all(fd, value, size, tmp);
    if (close(fd) != 0) die("close", tmp);
    if (rename(tmp, path) != 0) die("rename", path);
}

/* Returns the number of bytes read, or -1 if the entry does not exist. */
static long op_get(const char *root, const char *prefix, int i) {
    char path[4096];
    entry_path(path, sizeof path, root, prefix, i);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return -1;
        die("open", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) die("fstat", path);
    if (st.st_size > MAX_SIZE) fail("entry larger than the read buffer");
    long done = 0;
    while (done < st.st_size) {
        ssize_t n = read(fd, readbuf + done, (size_t)(st.st_size - done));
        if (n < 0) {
            if (errno == EINTR) continue;
            die("read", path);
        }
        if (n == 0) break;
        done += n;
    }
    close(fd);
    return done;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0) die("remove", path);
    return 0;
}

static void remove_tree(const char *root) {
    if (nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) die("nftw", root);
}

static char *make_temp_dir(const char *parent) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/fsfloor-XXXXXX", parent);
    if (!mkdtemp(path)) die("mkdtemp", path);
    return path;
}

/* One run of a per-size workload in a fresh directory: returns the timed ns
 * and sets *timed_ops to the number of operations timed. */
static uint64_t run_workload(const char *workload, const char *parent, long size, int ops, int *timed_ops) {
    char *root = make_temp_dir(parent);
    uint64_t start, elapsed;
    *timed_ops = ops;
    prepare_dirs(root, "key", ops);
    if (strcmp(workload, "set") == 0) {
        start = now_ns();
        for (int i = 0; i < ops; i++) op_set(root, i, size);
        elapsed = now_ns() - start;
    } else if (strcmp(workload, "get-hit") == 0) {
        long total = 0;
        for (int i = 0; i < ops; i++) op_set(root, i, size);
        for (int i = 0; i < ops; i++) op_get(root, "key", i); /* warm the page cache */
        start = now_ns();
        for (int p = 0; p < READ_PASSES; p++)
            for (int i = 0; i < ops; i++) total += op_get(root, "key", i);
        elapsed = now_ns() - start;
        if (total != (long)READ_PASSES * ops * size) fail("get-hit returned wrong lengths");
        *timed_ops = READ_PASSES * ops;
    } else if (strcmp(workload, "get-miss") == 0) {
        int misses = 0;
        for (int i = 0; i < ops; i++) op_set(root, i, size); /* a populated directory */
        start = now_ns();
        for (int p = 0; p < READ_PASSES; p++)
            for (int i = 0; i < ops; i++) misses += op_get(root, "absent", i) < 0;
        elapsed = now_ns() - start;
        if (misses != READ_PASSES * ops) fail("get-miss found an entry");
        *timed_ops = READ_PASSES * ops;
    } else { /* delete */
        char path[4096];
        for (int i = 0; i < ops; i++) op_set(root, i, size);
        start = now_ns();
        for (int i = 0; i < ops; i++) {
            entry_path(path, sizeof path, root, "key", i);
            if (unlink(path) != 0) die("unlink", path);
        }
        elapsed = now_ns() - start;
    }
    remove_tree(root);
    return elapsed;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *workload, long size, int ops, double *per_op, int runs, const char *extra) {
    qsort(per_op, (size_t)runs, sizeof *per_op, cmp_double);
    double median = runs % 2 ? per_op[runs / 2] : (per_op[runs / 2 - 1] + per_op[runs / 2]) / 2;
    printf("{\"impl\": \"floor\", \"policy\": \"none\", \"workload\": \"%s\", \"value_size\": %ld, \"ops\": %d, "
           "\"median_ns_per_op\": %.0f, \"min_ns_per_op\": %.0f, \"max_ns_per_op\": %.0f, \"runs\": %d%s}\n",
           workload, size, ops, median, per_op[0], per_op[runs - 1], runs, extra);
    fflush(stdout);
}

static int wants(const char *list, const char *workload) {
    if (!list) return 1;
    size_t n = strlen(workload);
    for (const char *p = list; (p = strstr(p, workload)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: fsfloor [--quick] [--runs N] [--warmups N] [--dir PARENT] [--workloads LIST]\n"
                    "  LIST: comma-separated from set,get-hit,get-miss,delete,open-100k (default: all)\n");
    exit(2);
}

int main(int argc, char **argv) {
    int quick = 0, runs = 0, warmups = 1;
    const char *parent = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *workloads = NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--quick") == 0) quick = 1;
        else if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc) runs = atoi(argv[++a]);
        else if (strcmp(argv[a], "--warmups") == 0 && a + 1 < argc) warmups = atoi(argv[++a]);
        else if (strcmp(argv[a], "--dir") == 0 && a + 1 < argc) parent = argv[++a];
        else if (strcmp(argv[a], "--workloads") == 0 && a + 1 < argc) workloads = argv[++a];
        else usage();
    }
    if (runs == 0) runs = quick ? 3 : 5;
    if (runs < 1 || warmups < 0) usage();
    int scale = quick ? 10 : 1;

    /* Page-aligned on purpose. On this project's AMD EPYC (Zen 3) machines a
     * 2 MiB read() into malloc's usual 16-byte-offset block runs ~6x slower
     * than into a page-aligned one (the kernel's rep movsb copy is slow for
     * destinations 8 or 16 bytes past a page boundary; 32+ is fast again).
     * The floor is the best case, so it takes the fast path. */
    value = aligned_alloc(4096, MAX_SIZE);
    readbuf = aligned_alloc(4096, MAX_SIZE);
    if (!value || !readbuf) die("aligned_alloc", NULL);
    fill_value();
    /* The shared test vector (diskcache_bench.py, README): the first 16 bytes. */
    static const unsigned char expected[16] = {0x3d, 0x37, 0xc2, 0xc8, 0x65, 0xc3, 0x1e, 0xc4,
                                               0x3f, 0x6b, 0x6e, 0x42, 0x45, 0x66, 0x63, 0xaf};
    if (memcmp(value, expected, sizeof expected) != 0) fail("value bytes differ from the shared test vector");
    double per_op[runs];

    static const char *per_size[] = {"set", "get-hit", "get-miss", "delete"};
    for (size_t w = 0; w < sizeof per_size / sizeof per_size[0]; w++) {
        if (!wants(workloads, per_size[w])) continue;
        for (size_t s = 0; s < N_SIZES; s++) {
            int ops = base_ops[s] / scale < 10 ? 10 : base_ops[s] / scale, timed_ops = ops;
            fprintf(stderr, "floor %s %ld B x %d\n", per_size[w], sizes[s], ops);
            for (int r = 0; r < warmups + runs; r++) {
                uint64_t ns = run_workload(per_size[w], parent, sizes[s], ops, &timed_ops);
                if (r >= warmups) per_op[r - warmups] = (double)ns / timed_ops;
            }
            report(per_size[w], sizes[s], timed_ops, per_op, runs, "");
        }
    }

    if (wants(workloads, "open-100k")) {
        int entries = OPEN_ENTRIES / scale;
        char name[32], extra[64];
        snprintf(name, sizeof name, "open-%dk", entries / 1000);
        snprintf(extra, sizeof extra, ", \"entries\": %d", entries);
        fprintf(stderr, "floor %s: filling\n", name);
        /* Filled once and reopened by every run: opening changes nothing. */
        char *root = make_temp_dir(parent);
        prepare_dirs(root, "key", entries);
        for (int i = 0; i < entries; i++) op_set(root, i, OPEN_VALUE_SIZE);
        for (int r = 0; r < warmups + runs; r++) {
            struct stat st;
            uint64_t start = now_ns();
            if (stat(root, &st) != 0) die("stat", root);
            long got = op_get(root, "key", entries / 2);
            uint64_t ns = now_ns() - start;
            if (got != OPEN_VALUE_SIZE) fail("open: probe entry missing");
            if (r >= warmups) per_op[r - warmups] = (double)ns;
        }
        report(name, OPEN_VALUE_SIZE, 1, per_op, runs, extra);
        remove_tree(root);
    }
    free(value);
    free(readbuf);
    return 0;
}
