// Child-process worker for crash and multi-process tests; filled in with DiskCache.
print("ok")
