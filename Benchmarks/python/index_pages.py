"""Pages a batch of 2048 new 1 KiB entries writes to the WAL, for three index layouts: schema 3
(bytes in items), schema 4 (narrow items + appended blobs) and the next step (entries appended
with their bytes, found through a unique index of ids). Ids are random 63-bit numbers like
Stash's key hashes; the median of 3 batches is printed. Deterministic, unlike timings.

    python3 Benchmarks/python/index_pages.py 100000
"""
import os, random, sqlite3, sys, tempfile
N = int(sys.argv[1]); B = 2048
layouts = {
 "v3 (entries + items with bytes)": """
  CREATE TABLE entries (id INTEGER PRIMARY KEY, key BLOB, size INT, file TEXT, checksum INT, created REAL, accessed REAL,
    expires REAL, pinned INT, queue INT, rank INT, frequency INT, content_type TEXT, etag TEXT, last_modified TEXT, extra TEXT, displaced INT);
  CREATE INDEX entries_by_rank ON entries (pinned, queue, rank);
  CREATE TABLE items (id INTEGER PRIMARY KEY, key BLOB, size INT, file TEXT, checksum INT, expires REAL, pinned INT, data BLOB);""",
 "v4 (entries + narrow items + appended blobs)": """
  CREATE TABLE entries (id INTEGER PRIMARY KEY, key BLOB, size INT, file TEXT, checksum INT, created REAL, accessed REAL,
    expires REAL, pinned INT, queue INT, rank INT, frequency INT, content_type TEXT, etag TEXT, last_modified TEXT, extra TEXT, displaced INT);
  CREATE INDEX entries_by_rank ON entries (pinned, queue, rank);
  CREATE TABLE items (id INTEGER PRIMARY KEY, key BLOB, size INT, file TEXT, checksum INT, expires REAL, pinned INT, blob INT);
  CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB);""",
 "next (appended entries with bytes + index of ids)": """
  CREATE TABLE entries (row INTEGER PRIMARY KEY, id INT NOT NULL, key BLOB, size INT, file TEXT, checksum INT, created REAL, accessed REAL,
    expires REAL, pinned INT, queue INT, rank INT, frequency INT, content_type TEXT, etag TEXT, last_modified TEXT, extra TEXT, displaced INT, data BLOB);
  CREATE UNIQUE INDEX entries_by_id ON entries (id);
  CREATE INDEX entries_by_rank ON entries (pinned, queue, rank);""",
}
value = os.urandom(1024)
def insert(db, name, ids, rank0):
    for j, i in enumerate(ids):
        key = b"key-%d" % i; r = rank0 + j
        if name.startswith("v3"):
            db.execute("INSERT INTO entries VALUES (?,?,1024,NULL,?,1e9,1e9,NULL,0,0,?,0,NULL,NULL,NULL,NULL,0)", (i, key, i, r))
            db.execute("INSERT INTO items VALUES (?,?,1024,NULL,?,NULL,0,?)", (i, key, i, value))
        elif name.startswith("v4"):
            db.execute("INSERT INTO entries VALUES (?,?,1024,NULL,?,1e9,1e9,NULL,0,0,?,0,NULL,NULL,NULL,NULL,0)", (i, key, i, r))
            b = db.execute("INSERT INTO blobs (data) VALUES (?)", (value,)).lastrowid
            db.execute("INSERT INTO items VALUES (?,?,1024,NULL,?,NULL,0,?)", (i, key, i, b))
        else:
            db.execute("INSERT INTO entries (id,key,size,file,checksum,created,accessed,expires,pinned,queue,rank,frequency,displaced,data) VALUES (?,?,1024,NULL,?,1e9,1e9,NULL,0,0,?,0,0,?)", (i, key, i, r, value))
for name, schema in layouts.items():
    path = os.path.join(tempfile.gettempdir(), "index_pages.db")
    for s in ("", "-wal", "-shm"):
        if os.path.exists(path + s): os.remove(path + s)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA wal_autocheckpoint=0;" + schema)
    rnd = random.Random(1)
    db.execute("BEGIN"); insert(db, name, [rnd.getrandbits(63) for _ in range(N)], 0); db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    frames = []
    for batch in range(3):
        db.execute("BEGIN"); insert(db, name, [rnd.getrandbits(63) for _ in range(B)], N + batch * B); db.execute("COMMIT")
        frames.append(os.path.getsize(path + "-wal") // 4120)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"{N} {name}: {sorted(frames)[1]} pages per batch of {B} stores ({sorted(frames)[1] / B:.2f} per store)", flush=True)
    db.close()
