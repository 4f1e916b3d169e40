#ifndef STASH_VFS_H
#define STASH_VFS_H

/// The name of Stash's VFS: SQLite's default VFS, except that a connection keeps its memory
/// map of the database file across other connections' commits while the file's size is
/// unchanged, and that a transaction's WAL frames are written with one call (see stash_vfs.c).
#define STASH_VFS_NAME "stash-unix"

/// Registers the VFS (not as the default); a call after it is registered does nothing. Not
/// thread-safe: `SQLiteConnection.vfs`, a lazily initialised Swift static, calls it once.
/// Returns an SQLite result code.
///
/// When it is the first use of SQLite in the process, it also turns SQLite's memory
/// statistics off (`SQLITE_CONFIG_MEMSTATUS`), which otherwise serialise every SQLite
/// allocation on one mutex: `sqlite3_memory_used()`, `sqlite3_status64()` and the heap limits
/// then report and enforce nothing, for every SQLite user in the process.
int stash_vfs_register(void);

/// A file-control opcode (`sqlite3_file_control(db, "main", STASH_FCNTL_UNMAP_COUNTS, counts)`)
/// that fills `long long counts[2]` with how many requests to drop the database file's memory
/// map this connection passed on to the default VFS (the file's size had changed) and how many
/// it skipped (it had not). For tests.
#define STASH_FCNTL_UNMAP_COUNTS 0x5354

/// A file-control opcode for the WAL file (`sqlite3_file_control(db, "main",
/// SQLITE_FCNTL_JOURNAL_POINTER, &file)`, then `file->pMethods->xFileControl(file,
/// STASH_FCNTL_WRITE_COUNTS, counts)`) that fills `long long counts[2]` with the write calls
/// SQLite made and the ones passed on to the default VFS after gathering. For tests.
#define STASH_FCNTL_WRITE_COUNTS 0x5355

/// For crash tests only: a function the VFS calls when it is about to write a WAL file's
/// gathered bytes (`event` `STASH_VFS_BEFORE_WAL_WRITE`, `bytes` gathered, at a commit or when
/// its buffer is full). It returns how many of them to write: all of them to go on. If it
/// returns fewer, the VFS writes only those, calls it again (`STASH_VFS_AFTER_WAL_WRITE`, the
/// bytes written; the hook may end the process there, as a crash at that point would) and
/// reports the write as failed. NULL, the default, calls nothing. Set it before any database
/// is opened; not thread-safe.
typedef int (*stash_vfs_flush_hook)(int event, int bytes);
#define STASH_VFS_BEFORE_WAL_WRITE 1
#define STASH_VFS_AFTER_WAL_WRITE 2
void stash_vfs_set_flush_hook(stash_vfs_flush_hook hook);

#endif
