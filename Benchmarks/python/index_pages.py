"""Pages a batch of 2048 new 1 KiB entries writes to the WAL, for five index layouts: schema 3
(bytes in items), schema 4 (narrow items + appended blobs), schema 5 (entries appended with
their bytes, found through a unique index of ids, as in python-diskcache, and the policy state
in a narrow table appended beside them), the same with the state in the wide rows, and the
alternative (entries appended, bytes appended to blobs). Ids are random 63-bit numbers
like Stash's key hashes; the median of 3 batches is printed. Deterministic, unlike timings.
Then the pages a batch of 2048 hit records (accessed, rank, frequency of random entries, what
`hit-write-on-close` writes) dirties, and a batch of 2048 deletes of random entries.

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
 "v5 (appended entries with bytes + appended states + index of ids)": """
  CREATE TABLE entries (seq INTEGER PRIMARY KEY, id INT NOT NULL, key BLOB, size INT, file TEXT, checksum INT, created REAL,
    expires REAL, pinned INT, content_type TEXT, etag TEXT, last_modified TEXT, extra TEXT, displaced INT, data BLOB);
  CREATE UNIQUE INDEX entries_by_id ON entries (id);
  CREATE TABLE states (seq INTEGER PRIMARY KEY, size INT, pinned INT, queue INT, rank INT, frequency INT, accessed REAL);
  CREATE INDEX states_by_rank ON states (pinned, queue, rank);""",
 "wide (appended entries with bytes and state + index of ids)": """
  CREATE TABLE entries (row INTEGER PRIMARY KEY, id INT NOT NULL, key BLOB, size INT, file TEXT, checksum INT, created REAL, accessed REAL,
    expires REAL, pinned INT, queue INT, rank INT, frequency INT, content_type TEXT, etag TEXT, last_modified TEXT, extra TEXT, displaced INT, data BLOB);
  CREATE UNIQUE INDEX entries_by_id ON entries (id);
  CREATE INDEX entries_by_rank ON entries (pinned, queue, rank);""",
 "alt (appended entries + appended blobs + index of ids)": """
  CREATE TABLE entries (row INTEGER PRIMARY KEY, id INT NOT NULL, key BLOB, size INT, file TEXT, checksum INT, created REAL, accessed REAL,
    expires REAL, pinned INT, queue INT, rank INT, frequency INT, content_type TEXT, etag TEXT, last_modified TEXT, extra TEXT, displaced INT, blob INT);
  CREATE UNIQUE INDEX entries_by_id ON entries (id);
  CREATE INDEX entries_by_rank ON entries (pinned, queue, rank);
  CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB);""",
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
        elif name.startswith("v5"):
            seq = db.execute("INSERT INTO entries (id,key,size,file,checksum,created,expires,pinned,displaced,data) VALUES (?,?,1024,NULL,?,1e9,NULL,0,0,?)", (i, key, i, value)).lastrowid
            db.execute("INSERT INTO states VALUES (?,1024,0,0,?,0,1e9)", (seq, r))
        elif name.startswith("wide"):
            db.execute("INSERT INTO entries (id,key,size,file,checksum,created,accessed,expires,pinned,queue,rank,frequency,displaced,data) VALUES (?,?,1024,NULL,?,1e9,1e9,NULL,0,0,?,0,0,?)", (i, key, i, r, value))
        else:
            b = db.execute("INSERT INTO blobs (data) VALUES (?)", (value,)).lastrowid
            db.execute("INSERT INTO entries (id,key,size,file,checksum,created,accessed,expires,pinned,queue,rank,frequency,displaced,blob) VALUES (?,?,1024,NULL,?,1e9,1e9,NULL,0,0,?,0,0,?)", (i, key, i, r, b))
def touch(db, name, ids, rank0):
    for j, i in enumerate(ids):
        if name.startswith("v5"):
            db.execute("UPDATE states SET accessed = 2e9, rank = ?, frequency = 1 WHERE seq = (SELECT seq FROM entries WHERE id = ?)", (rank0 + j, i))
        else:
            db.execute("UPDATE entries SET accessed = 2e9, rank = ?, frequency = 1 WHERE id = ?", (rank0 + j, i))
def delete(db, name, ids):
    for i in ids:
        if name.startswith("v4"):
            b = db.execute("SELECT blob FROM items WHERE id = ?", (i,)).fetchone()[0]
            db.execute("DELETE FROM blobs WHERE id = ?", (b,)); db.execute("DELETE FROM items WHERE id = ?", (i,))
        elif name.startswith("v3"):
            db.execute("DELETE FROM items WHERE id = ?", (i,))
        elif name.startswith("v5"):
            seq = db.execute("SELECT seq FROM entries WHERE id = ?", (i,)).fetchone()[0]
            db.execute("DELETE FROM states WHERE seq = ?", (seq,))
        elif name.startswith("alt"):
            b = db.execute("SELECT blob FROM entries WHERE id = ?", (i,)).fetchone()[0]
            db.execute("DELETE FROM blobs WHERE id = ?", (b,))
        db.execute("DELETE FROM entries WHERE id = ?", (i,))
def batch(db, path, work):
    frames = []
    for k in range(3):
        db.execute("BEGIN"); work(k); db.execute("COMMIT")
        frames.append(os.path.getsize(path + "-wal") // 4120)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sorted(frames)[1]
for name, schema in layouts.items():
    path = os.path.join(tempfile.gettempdir(), "index_pages.db")
    for s in ("", "-wal", "-shm"):
        if os.path.exists(path + s): os.remove(path + s)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA wal_autocheckpoint=0;" + schema)
    rnd = random.Random(1)
    ids = [rnd.getrandbits(63) for _ in range(N)]
    db.execute("BEGIN"); insert(db, name, ids, 0); db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stores = batch(db, path, lambda k: insert(db, name, [rnd.getrandbits(63) for _ in range(B)], N + k * B))
    hits = batch(db, path, lambda k: touch(db, name, rnd.sample(ids, B), 2 * N + k * B))
    gone = rnd.sample(ids, 3 * B)
    deletes = batch(db, path, lambda k: delete(db, name, gone[k * B:(k + 1) * B]))
    print(f"{N} {name}: per batch of {B}: {stores} pages of stores ({stores / B:.2f} per store), "
          f"{hits} of hit records ({hits / B:.2f}), {deletes} of deletes ({deletes / B:.2f})", flush=True)
    db.close()
