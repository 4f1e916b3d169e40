#include "stash_xattr.h"

#include <sys/xattr.h>

int stash_set_attribute(const char *path, const char *name, const void *value, size_t size) {
#if defined(__APPLE__)
    return setxattr(path, name, value, size, 0, 0);
#else
    return setxattr(path, name, value, size, 0);
#endif
}

ssize_t stash_get_attribute(const char *path, const char *name, void *buffer, size_t capacity) {
#if defined(__APPLE__)
    return getxattr(path, name, buffer, capacity, 0, 0);
#else
    return getxattr(path, name, buffer, capacity);
#endif
}

int stash_remove_attribute(const char *path, const char *name) {
#if defined(__APPLE__)
    return removexattr(path, name, 0);
#else
    return removexattr(path, name);
#endif
}
