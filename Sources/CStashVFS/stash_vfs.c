// A shim over SQLite's default VFS that keeps a reader's memory map alive across commits.
//
// In WAL mode, a connection that starts a read transaction after another connection
// committed drops its whole page cache and, when it reads the database through a memory map,
// asks the VFS to drop the map too (xUnfetch(file, 0, NULL)). The next read maps the file
// again and every page it touches is faulted in again. A cache whose hits are written in the
// background commits every few thousand reads, and each commit then cost every reader a page
// fault per page it touched: at 100 000 entries a hit took about twice as long as with no
// commits at all.
//
// The map is a shared mapping of the file, so it always shows the file's current bytes, as a
// read(2) would: dropping it adds nothing to correctness unless the file shrank (pages past
// the end would fault with SIGBUS) or grew (pages past the map are read with read(2) until it
// is remapped). So the shim passes the request on only when the file's size differs from what
// it was when the request was last passed on (or the map was first made); otherwise the map
// stays.
//
// It also gathers the writes of a WAL file: SQLite writes each frame as two pwrite(2) calls
// (a 24-byte header, then the page), eleven frames or so for a small store, and those system
// calls were a third of a store's time. Writes that append to the WAL are kept in a buffer and
// written with one call: at once when the frame that commits a transaction is complete (so an
// error is still reported by that write, and the frames are in the file before SQLite
// publishes the commit in the WAL index, which it does only after writing the commit frame),
// before any other call on the file (a read, a sync, a size, a write elsewhere: a rolled-back
// savepoint's frames are written over), and when the buffer is full. A process that dies with
// bytes in the buffer had not committed them. Every other method goes straight to the default
// VFS.

#include "stash_vfs.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct StashFile {
    sqlite3_file base;
    /// The file's size when the default VFS mapped it (at the first fetch after the map was
    /// last dropped), or -1 before that.
    sqlite3_int64 mappedSize;
    /// The default VFS's file object, right after this header.
    sqlite3_file *real;
    /// Requests to drop the map passed on and skipped (`STASH_FCNTL_UNMAP_COUNTS`).
    long long unmapsForwarded;
    long long unmapsSkipped;
    /// Whether this is a WAL file, whose appended writes are gathered.
    int isWAL;
    /// Its appended bytes not written yet (`pending` bytes from offset `start`); allocated at
    /// its first write, so that the WAL handles of connections that only read cost nothing.
    unsigned char *buffer;
    int pending;
    sqlite3_int64 start;
    /// The end of the highest write through this handle since the log last restarted.
    sqlite3_int64 written;
    /// Whether the last write was the header of a frame that commits a transaction.
    int commitHeader;
    /// Write calls and the calls that reached the default VFS (`STASH_FCNTL_WRITE_COUNTS`).
    long long writes;
    long long writesPassed;
} StashFile;

/// Bytes gathered before they are written anyway (30 frames of 4 KiB pages). Below 128 KiB:
/// the default VFS writes at most 128 KiB - 1 bytes per call and reports a longer write as a
/// full disk.
#define STASH_WAL_BUFFER (124 * 1024)

static sqlite3_vfs stashVFS;
static sqlite3_vfs *defaultVFS;

#define REAL(file) (((StashFile *)(file))->real)

/// The crash tests' fault injector (see `stash_vfs_set_flush_hook`); NULL in production.
static stash_vfs_flush_hook flushHook;

void stash_vfs_set_flush_hook(stash_vfs_flush_hook hook) { flushHook = hook; }

/// Writes the gathered bytes of a WAL file, if any.
static int stashFlush(StashFile *stash) {
    if (stash->buffer == NULL || stash->pending == 0) return SQLITE_OK;
    int amount = stash->pending;
    stash->pending = 0;
    stash->writesPassed += 1;
    if (flushHook != NULL) {
        int allowed = flushHook(STASH_VFS_BEFORE_WAL_WRITE, amount);
        if (allowed < amount) {
            int rc = allowed <= 0 ? SQLITE_OK
                                  : stash->real->pMethods->xWrite(stash->real, stash->buffer, allowed, stash->start);
            flushHook(STASH_VFS_AFTER_WAL_WRITE, allowed);
            return rc != SQLITE_OK ? rc : SQLITE_IOERR_WRITE;
        }
    }
    return stash->real->pMethods->xWrite(stash->real, stash->buffer, amount, stash->start);
}

static int stashClose(sqlite3_file *file) {
    StashFile *stash = (StashFile *)file;
    int flushed = stashFlush(stash);
    int rc = stash->real->pMethods->xClose(stash->real);
    free(stash->buffer);
    stash->buffer = NULL;
    file->pMethods = NULL;
    return flushed != SQLITE_OK ? flushed : rc;
}
static int stashRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    int rc = stashFlush((StashFile *)file);
    if (rc != SQLITE_OK) return rc;
    return REAL(file)->pMethods->xRead(REAL(file), buffer, amount, offset);
}
static int stashWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    StashFile *stash = (StashFile *)file;
    stash->writes += 1;
    // Without a buffer (a failed allocation), writes go straight through.
    if (stash->isWAL && stash->buffer == NULL) stash->buffer = malloc(STASH_WAL_BUFFER);
    if (stash->buffer != NULL) {
        // A restarted log begins with its 32-byte header at offset 0; its frames follow.
        if (offset == 0 && amount == 32) stash->written = 0;
        // Only appended frames are gathered. A write below what this handle already wrote (a
        // frame rewritten in place, or a frame header whose checksum SQLite recomputes after
        // the commit frame) goes straight to the file, after what is pending.
        int appends = offset >= stash->written && (stash->pending == 0 || offset == stash->start + stash->pending);
        if (appends && amount <= STASH_WAL_BUFFER) {
            if (stash->pending + amount > STASH_WAL_BUFFER) {
                int rc = stashFlush(stash);
                if (rc != SQLITE_OK) return rc;
            }
            if (stash->pending == 0) stash->start = offset;
            memcpy(stash->buffer + stash->pending, buffer, (size_t)amount);
            stash->pending += amount;
            stash->written = offset + amount;
            // A frame header (24 bytes) holds in bytes 4-7 the database size after a commit, 0
            // otherwise; SQLite writes it alone, then the page (a header and its page in one
            // write, 24 + a power of two bytes, is understood too).
            const unsigned char *bytes = buffer;
            int page = amount - 24;
            int isFrame = amount == 24 || (page >= 512 && page <= 65536 && (page & (page - 1)) == 0);
            int commits = isFrame && (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
            if (amount == 24) {
                stash->commitHeader = commits;
                return SQLITE_OK;
            }
            // A commit frame's page completes the transaction's frames: write them now.
            int completes = stash->commitHeader || commits;
            stash->commitHeader = 0;
            return completes ? stashFlush(stash) : SQLITE_OK;
        }
        int rc = stashFlush(stash);
        if (rc != SQLITE_OK) return rc;
        stash->commitHeader = 0;
        if (offset + amount > stash->written) stash->written = offset + amount;
    }
    stash->writesPassed += 1;
    return stash->real->pMethods->xWrite(stash->real, buffer, amount, offset);
}
static int stashTruncate(sqlite3_file *file, sqlite3_int64 size) {
    int rc = stashFlush((StashFile *)file);
    if (rc != SQLITE_OK) return rc;
    return REAL(file)->pMethods->xTruncate(REAL(file), size);
}
static int stashSync(sqlite3_file *file, int flags) {
    int rc = stashFlush((StashFile *)file);
    if (rc != SQLITE_OK) return rc;
    return REAL(file)->pMethods->xSync(REAL(file), flags);
}
static int stashFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    int rc = stashFlush((StashFile *)file);
    if (rc != SQLITE_OK) return rc;
    return REAL(file)->pMethods->xFileSize(REAL(file), size);
}
static int stashLock(sqlite3_file *file, int lock) { return REAL(file)->pMethods->xLock(REAL(file), lock); }
static int stashUnlock(sqlite3_file *file, int lock) { return REAL(file)->pMethods->xUnlock(REAL(file), lock); }
static int stashCheckReservedLock(sqlite3_file *file, int *result) {
    return REAL(file)->pMethods->xCheckReservedLock(REAL(file), result);
}
static int stashFileControl(sqlite3_file *file, int op, void *argument) {
    if (op == STASH_FCNTL_WRITE_COUNTS) {
        long long *counts = argument;
        counts[0] = ((StashFile *)file)->writes;
        counts[1] = ((StashFile *)file)->writesPassed;
        return SQLITE_OK;
    }
    if (op == STASH_FCNTL_UNMAP_COUNTS) {
        long long *counts = argument;
        counts[0] = ((StashFile *)file)->unmapsForwarded;
        counts[1] = ((StashFile *)file)->unmapsSkipped;
        return SQLITE_OK;
    }
    return REAL(file)->pMethods->xFileControl(REAL(file), op, argument);
}
static int stashSectorSize(sqlite3_file *file) { return REAL(file)->pMethods->xSectorSize(REAL(file)); }
static int stashDeviceCharacteristics(sqlite3_file *file) {
    return REAL(file)->pMethods->xDeviceCharacteristics(REAL(file));
}
static int stashShmMap(sqlite3_file *file, int region, int size, int extend, void volatile **pointer) {
    return REAL(file)->pMethods->xShmMap(REAL(file), region, size, extend, pointer);
}
static int stashShmLock(sqlite3_file *file, int offset, int count, int flags) {
    return REAL(file)->pMethods->xShmLock(REAL(file), offset, count, flags);
}
static void stashShmBarrier(sqlite3_file *file) { REAL(file)->pMethods->xShmBarrier(REAL(file)); }
static int stashShmUnmap(sqlite3_file *file, int deleteFlag) {
    return REAL(file)->pMethods->xShmUnmap(REAL(file), deleteFlag);
}
static int stashFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    StashFile *stash = (StashFile *)file;
    if (stash->mappedSize < 0) {
        // The default VFS maps the file at its current size on its first fetch.
        sqlite3_int64 size = 0;
        if (stash->real->pMethods->xFileSize(stash->real, &size) == SQLITE_OK) stash->mappedSize = size;
    }
    return stash->real->pMethods->xFetch(stash->real, offset, amount, pointer);
}
static int stashUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    StashFile *stash = (StashFile *)file;
    if (pointer == NULL) {
        // A request to drop the whole map (another connection committed, or the file changed).
        sqlite3_int64 size = -1;
        if (stash->mappedSize >= 0 && stash->real->pMethods->xFileSize(stash->real, &size) == SQLITE_OK
            && size == stash->mappedSize) {
            stash->unmapsSkipped += 1;
            return SQLITE_OK;
        }
        stash->unmapsForwarded += 1;
        stash->mappedSize = -1;  // measured again when the default VFS maps the file again
    }
    return stash->real->pMethods->xUnfetch(stash->real, offset, pointer);
}

static const sqlite3_io_methods stashMethods = {
    3,
    stashClose,
    stashRead,
    stashWrite,
    stashTruncate,
    stashSync,
    stashFileSize,
    stashLock,
    stashUnlock,
    stashCheckReservedLock,
    stashFileControl,
    stashSectorSize,
    stashDeviceCharacteristics,
    stashShmMap,
    stashShmLock,
    stashShmBarrier,
    stashShmUnmap,
    stashFetch,
    stashUnfetch,
};

static int stashOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    StashFile *stash = (StashFile *)file;
    stash->real = (sqlite3_file *)&stash[1];
    stash->mappedSize = -1;
    stash->unmapsForwarded = 0;
    stash->unmapsSkipped = 0;
    stash->isWAL = (flags & SQLITE_OPEN_WAL) != 0;
    stash->buffer = NULL;
    stash->pending = 0;
    stash->start = 0;
    stash->written = 0;
    stash->commitHeader = 0;
    stash->writes = 0;
    stash->writesPassed = 0;
    int rc = defaultVFS->xOpen(defaultVFS, name, stash->real, flags, outFlags);
    // Only a file the default VFS opened (and gave methods) is ever closed through ours.
    file->pMethods = stash->real->pMethods != NULL ? &stashMethods : NULL;
    return rc;
}

// The default VFS's own versions of everything that is not about one file.
static int stashDelete(sqlite3_vfs *vfs, const char *name, int sync) {
    (void)vfs;
    return defaultVFS->xDelete(defaultVFS, name, sync);
}
static int stashAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return defaultVFS->xAccess(defaultVFS, name, flags, result);
}
static int stashFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *output) {
    (void)vfs;
    return defaultVFS->xFullPathname(defaultVFS, name, size, output);
}
static void *stashDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return defaultVFS->xDlOpen(defaultVFS, name);
}
static void stashDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    defaultVFS->xDlError(defaultVFS, size, message);
}
static void (*stashDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return defaultVFS->xDlSym(defaultVFS, handle, symbol);
}
static void stashDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    defaultVFS->xDlClose(defaultVFS, handle);
}
static int stashRandomness(sqlite3_vfs *vfs, int size, char *output) {
    (void)vfs;
    return defaultVFS->xRandomness(defaultVFS, size, output);
}
static int stashSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return defaultVFS->xSleep(defaultVFS, microseconds);
}
static int stashCurrentTime(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return defaultVFS->xCurrentTime(defaultVFS, now);
}
static int stashGetLastError(sqlite3_vfs *vfs, int size, char *output) {
    (void)vfs;
    return defaultVFS->xGetLastError != NULL ? defaultVFS->xGetLastError(defaultVFS, size, output) : 0;
}
static int stashCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return defaultVFS->xCurrentTimeInt64(defaultVFS, now);
}

int stash_vfs_register(void) {
    // SQLite's memory statistics (on by default) take one process-wide mutex in every
    // allocation and free, and a hit allocates several times: two threads reading one cache
    // contended on it (pthread_mutex_lock 8.6 % of their time, perf). Off, 2 threads read
    // 15-17 % more hits per second, 4 threads 20-27 %, and one thread's hit and store are 5 %
    // faster (10 000 entries, 3 interleaved rounds). This must come before SQLite initializes
    // (the first sqlite3_vfs_find below, unless something else in the process used SQLite
    // first, in which case the call fails and changes nothing).
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (sqlite3_vfs_find(STASH_VFS_NAME) != NULL) return SQLITE_OK;
    defaultVFS = sqlite3_vfs_find(NULL);
    // xCurrentTimeInt64 is a version-2 member; every platform's default VFS has it.
    if (defaultVFS == NULL || defaultVFS->iVersion < 2) return SQLITE_ERROR;
    memset(&stashVFS, 0, sizeof stashVFS);
    stashVFS.iVersion = 2;
    stashVFS.szOsFile = (int)sizeof(StashFile) + defaultVFS->szOsFile;
    stashVFS.mxPathname = defaultVFS->mxPathname;
    stashVFS.zName = STASH_VFS_NAME;
    stashVFS.xOpen = stashOpen;
    stashVFS.xDelete = stashDelete;
    stashVFS.xAccess = stashAccess;
    stashVFS.xFullPathname = stashFullPathname;
    stashVFS.xDlOpen = stashDlOpen;
    stashVFS.xDlError = stashDlError;
    stashVFS.xDlSym = stashDlSym;
    stashVFS.xDlClose = stashDlClose;
    stashVFS.xRandomness = stashRandomness;
    stashVFS.xSleep = stashSleep;
    stashVFS.xCurrentTime = stashCurrentTime;
    stashVFS.xGetLastError = stashGetLastError;
    stashVFS.xCurrentTimeInt64 = stashCurrentTimeInt64;
    return sqlite3_vfs_register(&stashVFS, 0);
}
