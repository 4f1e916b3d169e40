#ifndef STASH_XATTR_H
#define STASH_XATTR_H

#include <sys/types.h>

/// Sets the extended attribute `name` of the file at `path` to `size` bytes at `value`,
/// creating or replacing it, following symbolic links. Returns 0, or -1 with `errno` set
/// (`ENOTSUP` / `EOPNOTSUPP` where the file system keeps no extended attributes, `E2BIG`,
/// `ERANGE` or `ENOSPC` where the value does not fit). Linux's and Darwin's `setxattr` differ
/// in their arguments; Swift's Glibc module does not export them.
int stash_set_attribute(const char *path, const char *name, const void *value, size_t size);

/// Reads the extended attribute `name` of the file at `path` into `buffer` (`capacity` bytes).
/// Returns its length, or -1 with `errno` set (`ENODATA` / `ENOATTR` when it is absent,
/// `ERANGE` when `capacity` is too small; a `capacity` of 0 returns the length without
/// reading).
ssize_t stash_get_attribute(const char *path, const char *name, void *buffer, size_t capacity);

/// Removes the extended attribute `name` of the file at `path`. Returns 0, or -1 with `errno`
/// set. For tests.
int stash_remove_attribute(const char *path, const char *name);

#endif
