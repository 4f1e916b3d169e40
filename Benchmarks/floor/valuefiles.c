/*
 * valuefiles: what a medium value (32 KiB - 2 MiB) costs to publish on this file system, by
 * layout, with the same SQLite index rows in every layout (issue 30, item 1's segment files).
 *
 * Every mode stores `--count` values of `--size` bytes under new keys and commits their index
 * rows in one transaction per `--batch` stores, or per 8 MiB of values if that is fewer (Stash's
 * staging bound; write-behind's group commit: BEGIN IMMEDIATE,
 * one INSERT per value, COMMIT; WAL, synchronous = NORMAL, SQLite's automatic checkpoint).
 * Nothing is fsynced: the non-durable contract, under which a crash may lose the last batch
 * but must never serve a torn value (the row commits after the bytes are written). Only the
 * bytes' layout differs:
 *
 *   file-tmp-rename   Stash with a sidecar file: per value, a new file in tmp/ (O_EXCL) with an
 *                     flock, fstat, write; at the commit, rename into data/a/b/, and a sidecar
 *                     written as <name>.meta.tmp then renamed to <name>.meta; close.
 *   file-xattr        Stash's default: file-tmp-rename with the sidecar's bytes in an extended
 *                     attribute of the value file (fsetxattr on its descriptor) instead of a
 *                     second file.
 *   file-direct       a variant not adopted: the value file is created at its final name in
 *                     data/a/b/ (O_EXCL, flock, fstat, write), the sidecar created at its final
 *                     name too (O_EXCL, write, close) at the commit; no rename.
 *   file-plain        python-diskcache's file: open(O_EXCL) at the final name, write, close;
 *                     no lock, no sidecar (the floor of a file per value).
 *   segment           the CacheLib BlockCache / foyer layout: the values of a batch are
 *                     appended to the current segment file with one pwritev; a row records
 *                     (segment, offset). Segments roll over at --segment-size.
 *
 * Fan-out directories (16 x 16, Stash's) are created on first use, as in a fresh cache.
 *
 * `--full BYTES` makes the run a store into a full cache (filled to BYTES first, untimed): once
 * the stored bytes exceed BYTES,
 * file modes evict the oldest value per store (DELETE its row in the batch, unlink after the
 * commit), and segment mode reclaims the oldest whole segment (DELETE its rows by an index on
 * the segment number, unlink the segment file): region reclamation.
 *
 * Output: one JSON line, {"impl": "valuefiles", "mode": ..., "value_size": ..., "ns_per_op": ...}.
 *
 * Build: cc -O2 -o valuefiles valuefiles.c -lsqlite3
 * Usage: valuefiles --mode M --size BYTES [--count N] [--batch B] [--segment-size BYTES]
 *                   [--full BYTES] [--dir PARENT]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

enum mode { FILE_TMP_RENAME, FILE_XATTR, FILE_DIRECT, FILE_PLAIN, SEGMENT };

static enum mode mode;
static long size = 32768, count = 500, batch = 64, segment_size = 16L << 20, full = 0;
static char root[2048];
static sqlite3 *db;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "valuefiles: %s: %s\n", what, db ? sqlite3_errmsg(db) : strerror(errno));
    exit(1);
}

static void exec(const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) die(sql);
}

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) die(sql);
    return s;
}

static void done(sqlite3_stmt *s) {
    if (sqlite3_step(s) != SQLITE_DONE) die(sqlite3_sql(s));
    sqlite3_reset(s);
}

static void write_all(int fd, const void *bytes, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, bytes, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) die("write");
        bytes = (const char *)bytes + w;
        n -= (size_t)w;
    }
}

/* A random 128-bit name in hex, like POSIXFile.randomName(). */
static void random_name(char *out) {
    uint64_t r[2];
    if (getrandom(r, sizeof r, 0) != sizeof r) die("getrandom");
    sprintf(out, "%016llx%016llx", (unsigned long long)r[0], (unsigned long long)r[1]);
}

/* Creates the two fan-out directories above `path`. */
static void make_parents(const char *path) {
    char dir[4096];
    strcpy(dir, path);
    *strrchr(dir, '/') = 0;
    char parent[4096];
    strcpy(parent, dir);
    *strrchr(parent, '/') = 0;
    mkdir(parent, 0777);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) die(dir);
}

/* Opens path with O_CREAT | O_EXCL, creating its two fan-out parents on ENOENT. */
static int create(const char *path) {
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != ENOENT || attempt == 1) {
            if (fd < 0) die(path);
            return fd;
        }
        make_parents(path);
    }
    return -1;
}

static void lock_and_check(int fd) {
    if (flock(fd, LOCK_EX) != 0) die("flock");
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_nlink == 0) die("fstat");
}

static void data_path(char *out, const char *name) { sprintf(out, "%s/data/%c/%c/%s", root, name[0], name[1], name); }

/* What a staged value holds until its batch commits. */
struct staged {
    int fd;
    char name[40];
    char tmp[4096];
    long segment, offset;
};

struct victim {
    char name[40];
    long segment;
};

int main(int argc, char **argv) {
    const char *parent = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *mode_name = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mode") && v) mode_name = argv[++i];
        else if (!strcmp(a, "--size") && v) size = atol(argv[++i]);
        else if (!strcmp(a, "--count") && v) count = atol(argv[++i]);
        else if (!strcmp(a, "--batch") && v) batch = atol(argv[++i]);
        else if (!strcmp(a, "--segment-size") && v) segment_size = atol(argv[++i]);
        else if (!strcmp(a, "--full") && v) full = atol(argv[++i]);
        else if (!strcmp(a, "--dir") && v) parent = argv[++i];
        else { fprintf(stderr, "valuefiles: unknown argument %s\n", a); return 2; }
    }
    if (!mode_name) { fprintf(stderr, "valuefiles: --mode file-tmp-rename|file-xattr|file-direct|file-plain|segment\n"); return 2; }
    if (!strcmp(mode_name, "file-tmp-rename")) mode = FILE_TMP_RENAME;
    else if (!strcmp(mode_name, "file-xattr")) mode = FILE_XATTR;
    else if (!strcmp(mode_name, "file-direct")) mode = FILE_DIRECT;
    else if (!strcmp(mode_name, "file-plain")) mode = FILE_PLAIN;
    else if (!strcmp(mode_name, "segment")) mode = SEGMENT;
    else { fprintf(stderr, "valuefiles: unknown mode %s\n", mode_name); return 2; }

    snprintf(root, sizeof root, "%s/valuefiles-XXXXXX", parent);
    if (!mkdtemp(root)) die(root);
    char path[4096];
    sprintf(path, "%s/tmp", root);
    mkdir(path, 0777);
    sprintf(path, "%s/data", root);
    mkdir(path, 0777);
    sprintf(path, "%s/index.sqlite", root);
    if (sqlite3_open(path, &db) != SQLITE_OK) die(path);
    exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA mmap_size = 268435456;"
         "CREATE TABLE entries (id INTEGER PRIMARY KEY, key TEXT UNIQUE, size INTEGER, file TEXT,"
         " segment INTEGER, offset INTEGER, created REAL);"
         "CREATE INDEX entries_segment ON entries (segment) WHERE segment IS NOT NULL;");
    sqlite3_stmt *begin = prepare("BEGIN IMMEDIATE"), *commit = prepare("COMMIT");
    sqlite3_stmt *insert = prepare("INSERT INTO entries (key, size, file, segment, offset, created) "
                                   "VALUES (?1, ?2, ?3, ?4, ?5, julianday('now'))");
    sqlite3_stmt *evict_one = prepare("DELETE FROM entries WHERE file = ?1");
    sqlite3_stmt *evict_segment = prepare("DELETE FROM entries WHERE segment = ?1");

    /* Stash's staging area holds at most 8 MiB: a batch of large values is shorter. */
    if (batch * size > 8L << 20) batch = (8L << 20) / size > 0 ? (8L << 20) / size : 1;
    unsigned char *value = malloc((size_t)size);
    for (long i = 0; i < size; i++) value[i] = (unsigned char)(i * 2654435761u >> 13);
    const char sidecar[] = "stash-meta 1\n{\"checksum\":1234567890123,\"created\":1764150000.123,\"key\":"
                           "\"a2V5LTAwMDAwMDAx\",\"pinned\":false,\"size\":32768}";
    struct staged *staged = calloc((size_t)batch, sizeof *staged);
    struct iovec *iov = calloc((size_t)batch, sizeof *iov);
    /* FIFO of stored values (file modes) for eviction. */
    struct victim *stored = NULL;
    long oldest = 0, stored_count = 0, stored_bytes = 0;
    long segment = 0, segment_offset = 0, oldest_segment = 0;
    int segment_fd = -1;
    long evicted = 0;

    /* A full cache is filled first (untimed, in whole batches): the timed stores all evict. */
    long prefill = full > 0 ? (full / size + batch) / batch * batch : 0;
    long total = prefill + count;
    stored = calloc((size_t)total + 1, sizeof *stored);
    uint64_t start = now_ns();
    for (long first = 0; first < total; first += batch) {
        if (first == prefill) {
            start = now_ns();
            evicted = 0;
        }
        long n = total - first < batch ? total - first : batch;
        /* The caller's part: write the bytes (file modes), or keep them for the batch (segment). */
        for (long j = 0; j < n; j++) {
            struct staged *s = &staged[j];
            random_name(s->name);
            if (mode == FILE_TMP_RENAME || mode == FILE_XATTR) {
                sprintf(s->tmp, "%s/tmp/%s.tmp", root, s->name);
                s->fd = create(s->tmp);
                lock_and_check(s->fd);
                write_all(s->fd, value, (size_t)size);
            } else if (mode == FILE_DIRECT || mode == FILE_PLAIN) {
                data_path(s->tmp, s->name);
                s->fd = create(s->tmp);
                if (mode == FILE_DIRECT) lock_and_check(s->fd);
                write_all(s->fd, value, (size_t)size);
                if (mode == FILE_PLAIN) close(s->fd);
            } else {
                iov[j].iov_base = value;
                iov[j].iov_len = (size_t)size;
            }
        }
        /* The writer's part: the segment's one write, then one transaction for the rows. */
        if (mode == SEGMENT) {
            if (segment_fd < 0 || segment_offset + n * size > segment_size) {
                if (segment_fd >= 0) close(segment_fd);
                segment++;
                sprintf(path, "%s/data/segment-%08ld", root, segment);
                segment_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
                if (segment_fd < 0) die(path);
                if (oldest_segment == 0) oldest_segment = segment;
                segment_offset = 0;
            }
            for (long j = 0; j < n; j++) {
                staged[j].segment = segment;
                staged[j].offset = segment_offset + j * size;
            }
            ssize_t w = pwritev(segment_fd, iov, (int)n, segment_offset);
            if (w != n * size) die("pwritev");
            segment_offset += n * size;
        }
        long victims_from = oldest;
        long dropped_segment = 0;
        done(begin);
        for (long j = 0; j < n; j++) {
            struct staged *s = &staged[j];
            char key[32];
            sprintf(key, "key-%08ld", first + j);
            char file[64];
            sprintf(file, "%c/%c/%s", s->name[0], s->name[1], s->name);
            if (mode == FILE_TMP_RENAME || mode == FILE_XATTR) {
                data_path(path, s->name);
                if (rename(s->tmp, path) != 0) {
                    make_parents(path);
                    if (rename(s->tmp, path) != 0) die("rename");
                }
            }
            sqlite3_bind_text(insert, 1, key, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(insert, 2, size);
            if (mode == SEGMENT) {
                sqlite3_bind_null(insert, 3);
                sqlite3_bind_int64(insert, 4, s->segment);
                sqlite3_bind_int64(insert, 5, s->offset);
            } else {
                sqlite3_bind_text(insert, 3, file, -1, SQLITE_TRANSIENT);
                sqlite3_bind_null(insert, 4);
                sqlite3_bind_null(insert, 5);
            }
            done(insert);
            if (mode == FILE_XATTR && fsetxattr(s->fd, "user.stash.meta", sidecar, sizeof sidecar - 1, 0) != 0)
                die("fsetxattr");
            if (mode == FILE_TMP_RENAME || mode == FILE_DIRECT) {
                char meta[4200], meta_tmp[4300];
                data_path(meta, s->name);
                strcat(meta, ".meta");
                sprintf(meta_tmp, "%s.tmp", meta);
                int fd = open(mode == FILE_TMP_RENAME ? meta_tmp : meta,
                              O_WRONLY | O_CREAT | (mode == FILE_TMP_RENAME ? O_TRUNC : O_EXCL) | O_CLOEXEC, 0666);
                if (fd < 0) die("sidecar");
                write_all(fd, sidecar, sizeof sidecar - 1);
                close(fd);
                if (mode == FILE_TMP_RENAME && rename(meta_tmp, meta) != 0) die("rename sidecar");
            }
            if (mode != SEGMENT) strcpy(stored[stored_count].name, s->name);
            stored_count++;
            stored_bytes += size;
            /* Eviction inside the transaction; files go after the commit. */
            if (full > 0 && stored_bytes > full) {
                if (mode == SEGMENT) {
                    if (segment > oldest_segment && !dropped_segment) {
                        sqlite3_bind_int64(evict_segment, 1, oldest_segment);
                        done(evict_segment);
                        long removed = sqlite3_changes(db);
                        stored_bytes -= removed * size;
                        evicted += removed;
                        dropped_segment = oldest_segment++;
                    }
                } else {
                    char victim[64];
                    struct victim *v = &stored[oldest++];
                    sprintf(victim, "%c/%c/%s", v->name[0], v->name[1], v->name);
                    sqlite3_bind_text(evict_one, 1, victim, -1, SQLITE_TRANSIENT);
                    done(evict_one);
                    stored_bytes -= size;
                    evicted++;
                }
            }
        }
        done(commit);
        for (long j = 0; j < n; j++)
            if (mode == FILE_TMP_RENAME || mode == FILE_XATTR || mode == FILE_DIRECT) close(staged[j].fd);
        for (long v = victims_from; v < oldest && mode != SEGMENT; v++) {
            data_path(path, stored[v].name);
            unlink(path);
            if (mode != FILE_PLAIN) {
                strcat(path, ".meta");
                unlink(path);
            }
        }
        if (dropped_segment) {
            sprintf(path, "%s/data/segment-%08ld", root, dropped_segment);
            unlink(path);
        }
    }
    uint64_t elapsed = now_ns() - start;
    printf("{\"impl\": \"valuefiles\", \"mode\": \"%s\", \"value_size\": %ld, \"ops\": %ld, \"batch\": %ld, "
           "\"full\": %ld, \"segment_size\": %ld, \"evicted\": %ld, \"ns_per_op\": %llu}\n",
           mode_name, size, count, batch, full, segment_size, evicted, (unsigned long long)(elapsed / count));
    sqlite3_close(db);
    char command[4200];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    return system(command) == 0 ? 0 : 1;
}
