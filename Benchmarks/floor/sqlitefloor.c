/*
 * sqlitefloor: the SQLite floor for Stash's cost-per-operation-vs-entries benchmark.
 *
 * The workloads of `StashBenchmarks scaling` and python/diskcache_scaling.py (1 KiB values
 * kept inline in the database, N entries, the same keys and operation counts), done with the
 * least work any SQLite-indexed cache can do that commits every write on its own:
 *
 *   one table  t (id INTEGER PRIMARY KEY, key BLOB, data BLOB), id = a 63-bit hash of the
 *              key, so that a read is one lookup by integer key (as Stash's); no policy
 *              state, no totals, no triggers, no second table;
 *   get-hit    SELECT key, data WHERE id = ?, compare the key, copy the bytes out, all the
 *              reads inside one read transaction (Stash, too, keeps its readers' snapshot
 *              open while no commit happens: a read pays no lock and no WAL check);
 *   get-miss   the same lookup, finding nothing;
 *   set        BEGIN IMMEDIATE; INSERT; COMMIT;
 *   delete     BEGIN IMMEDIATE; DELETE; COMMIT;
 *
 * with Stash's and diskcache's settings (WAL, synchronous = NORMAL, the whole file mapped)
 * and, by default, **no checkpoint during the timed runs** (wal_autocheckpoint = 0): the WAL
 * only grows, so no page is copied back into the database and nothing is synced. That is a
 * lower bound on any design that commits one SQLite transaction per store or delete; a real
 * cache must checkpoint (diskcache does it in the committing thread, Stash mostly in the
 * background). `--checkpoint` restores SQLite's default automatic checkpoint (every 1000
 * pages, in the committing thread, as diskcache runs it).
 *
 * Output: one JSON line per workload, like the other two, with "impl": "sqlite-floor".
 *
 * Build: cc -O2 -o sqlitefloor sqlitefloor.c -lsqlite3
 * Usage: sqlitefloor --entries N [--round R] [--dir PARENT] [--checkpoint]
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VALUE_SIZE 1024
#define READS 20000
#define WRITES 5000

static long entries;
static int round_number;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "sqlitefloor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    exit(1);
}

static void exec(sqlite3 *db, const char *sql) {
    char *message = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &message) != SQLITE_OK) {
        fprintf(stderr, "sqlitefloor: %s: %s\n", sql, message ? message : "?");
        exit(1);
    }
}

static void line(const char *workload, double amount, const char *unit) {
    printf("{\"impl\": \"sqlite-floor\", \"workload\": \"%s\", \"entries\": %ld, \"value_size\": %d, "
           "\"round\": %d, \"%s\": %.0f}\n",
           workload, entries, VALUE_SIZE, round_number, unit, amount);
    fflush(stdout);
}

/* The benchmarks' key names (Harness.swift, diskcache_bench.py). */
static int key(char *out, const char *prefix, long i) { return sprintf(out, "%s-%08ld", prefix, i); }

/* 63 bits of a 64-bit FNV-1a hash, finished with splitmix64's mixer: never negative. */
static int64_t key_id(const char *key, int length) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < length; i++) h = (h ^ (unsigned char)key[i]) * 0x100000001b3ull;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return (int64_t)(h >> 1);
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, NULL) != SQLITE_OK) fail(db, sql);
    return statement;
}

static void step_done(sqlite3 *db, sqlite3_stmt *statement) {
    if (sqlite3_step(statement) != SQLITE_DONE) fail(db, sqlite3_sql(statement));
    sqlite3_reset(statement);
}

/* Inserts (or, with `delete`, removes) the entry for `name` in a transaction of its own
 * unless `batched`. */
static void write_entry(sqlite3 *db, sqlite3_stmt *begin, sqlite3_stmt *commit, sqlite3_stmt *statement,
                        const char *name, int length, const unsigned char *value, int batched) {
    if (!batched) step_done(db, begin);
    sqlite3_bind_int64(statement, 1, key_id(name, length));
    if (value) {
        sqlite3_bind_blob(statement, 2, name, length, SQLITE_STATIC);
        sqlite3_bind_blob(statement, 3, value, VALUE_SIZE, SQLITE_STATIC);
    }
    step_done(db, statement);
    if (!batched) step_done(db, commit);
}

/* Looks `name` up; returns 1 on a hit, copying the bytes out as a cache's read must. */
static int read_entry(sqlite3 *db, sqlite3_stmt *select, const char *name, int length, unsigned char *out) {
    sqlite3_bind_int64(select, 1, key_id(name, length));
    int found = 0;
    int rc = sqlite3_step(select);
    if (rc == SQLITE_ROW) {
        const void *stored = sqlite3_column_blob(select, 0);
        if (sqlite3_column_bytes(select, 0) == length && memcmp(stored, name, length) == 0) {
            int size = sqlite3_column_bytes(select, 1);
            memcpy(out, sqlite3_column_blob(select, 1), size < VALUE_SIZE ? size : VALUE_SIZE);
            found = size == VALUE_SIZE;
        }
    } else if (rc != SQLITE_DONE) {
        fail(db, "select");
    }
    sqlite3_reset(select);
    return found;
}

int main(int argc, char **argv) {
    const char *parent = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int checkpoint = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--entries") && i + 1 < argc) entries = atol(argv[++i]);
        else if (!strcmp(argv[i], "--round") && i + 1 < argc) round_number = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc) parent = argv[++i];
        else if (!strcmp(argv[i], "--checkpoint")) checkpoint = 1;
        else {
            fprintf(stderr, "usage: sqlitefloor --entries N [--round R] [--dir PARENT] [--checkpoint]\n");
            return 2;
        }
    }
    if (entries <= 0) {
        fprintf(stderr, "sqlitefloor: --entries must be positive\n");
        return 2;
    }
    char directory[4096], path[4200], command[8500];
    snprintf(directory, sizeof directory, "%s/sqlitefloor-XXXXXX", parent);
    if (!mkdtemp(directory)) {
        perror("sqlitefloor: mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/index.sqlite", directory);
    unsigned char *value = malloc(VALUE_SIZE), *out = malloc(VALUE_SIZE);
    for (int i = 0; i < VALUE_SIZE; i++) value[i] = (unsigned char)(i * 131 + 7);

    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) fail(db, path);
    exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA mmap_size = 2147418112;"
             "CREATE TABLE t (id INTEGER PRIMARY KEY, key BLOB NOT NULL, data BLOB NOT NULL)");
    sqlite3_stmt *begin = prepare(db, "BEGIN IMMEDIATE"), *commit = prepare(db, "COMMIT");
    sqlite3_stmt *insert = prepare(db, "INSERT OR REPLACE INTO t (id, key, data) VALUES (?1, ?2, ?3)");
    sqlite3_stmt *delete = prepare(db, "DELETE FROM t WHERE id = ?1");
    sqlite3_stmt *select = prepare(db, "SELECT key, data FROM t WHERE id = ?1");
    char name[64];

    /* Set-up, not timed: the fill in transactions of 1000, checkpointed and synced. */
    for (long first = 0; first < entries; first += 1000) {
        step_done(db, begin);
        for (long i = first; i < entries && i < first + 1000; i++) {
            write_entry(db, begin, commit, insert, name, key(name, "key", i), value, 1);
        }
        step_done(db, commit);
    }
    exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    sync();
    exec(db, checkpoint ? "PRAGMA wal_autocheckpoint = 1000" : "PRAGMA wal_autocheckpoint = 0");
    sqlite3_int64 size = 0;
    {
        sqlite3_stmt *pages = prepare(db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size");
        if (sqlite3_step(pages) == SQLITE_ROW) size = sqlite3_column_int64(pages, 0);
        sqlite3_finalize(pages);
    }
    line("index-bytes-per-entry", (double)(size - entries * VALUE_SIZE) / (double)entries, "bytes");

    /* The same walk over the keys as ScalingWorkloads.hitKey, after one warm-up pass. */
    long warm = entries < READS ? entries : READS;
    for (long i = 0; i < warm; i++) {
        long k = (i * 7919 + 13) % entries;
        read_entry(db, select, name, key(name, "key", k), out);
    }
    exec(db, "BEGIN");
    uint64_t start = now_ns();
    for (long i = 0; i < READS; i++) {
        long k = (i * 7919 + 13) % entries;
        if (!read_entry(db, select, name, key(name, "key", k), out)) fail(NULL, "get-hit missed");
    }
    line("get-hit", (double)(now_ns() - start) / READS, "ns_per_op");

    start = now_ns();
    for (long i = 0; i < READS; i++) {
        if (read_entry(db, select, name, key(name, "absent", i), out)) fail(NULL, "get-miss hit");
    }
    line("get-miss", (double)(now_ns() - start) / READS, "ns_per_op");
    exec(db, "COMMIT");

    start = now_ns();
    for (long i = 0; i < WRITES; i++) write_entry(db, begin, commit, insert, name, key(name, "key", entries + i), value, 0);
    line("set", (double)(now_ns() - start) / WRITES, "ns_per_op");

    start = now_ns();
    for (long i = 0; i < WRITES; i++) write_entry(db, begin, commit, delete, name, key(name, "key", entries + i), NULL, 0);
    line("delete", (double)(now_ns() - start) / WRITES, "ns_per_op");

    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    sqlite3_finalize(insert);
    sqlite3_finalize(delete);
    sqlite3_finalize(select);
    sqlite3_close(db);
    snprintf(command, sizeof command, "rm -rf '%s'", directory);
    if (system(command) != 0) fprintf(stderr, "sqlitefloor: could not remove %s\n", directory);
    free(value);
    free(out);
    return 0;
}
