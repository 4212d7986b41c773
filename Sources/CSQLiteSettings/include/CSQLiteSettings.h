// Process-wide settings of the system's SQLite (Debian: libsqlite3-dev), the library GRDB uses.
// `sqlite3_config` takes variable arguments, which Swift cannot call: each setting is a function here.
// This header names no SQLite type, so that it does not clash with the other SQLite headers in the build.
// Each must come before SQLite initializes (the first connection opened); later, SQLite answers
// SQLITE_MISUSE and keeps its default. Each returns SQLite's result code.

// Stops SQLite from counting the memory it allocates, which it does under one process-wide mutex taken
// at every allocation and release.
int countersign_sqlite_stop_memory_statistics(void);

// Stops SQLite from allocating a page cache's first 20 pages in one block; pages are then allocated one
// by one, as they are used. A statement that sorts or buffers its rows (an ORDER BY that no index gives,
// an UPDATE … RETURNING) opens a temporary B-tree with a page cache of its own. Its block (some 85 KiB)
// was allocated and freed at every such statement, and each release of a block that size made glibc hand
// the top of its heap back to the kernel (madvise), to fault it in again at the next statement.
int countersign_sqlite_stop_bulk_page_cache(void);

// Makes SQLite's "unix-excl" VFS the default of every connection opened after it. The first read-write
// connection to a database file (the writer, opened first) takes a POSIX lock that no other process can
// share, held until the process's last connection to it closes; the connections of this process then
// coordinate through memory alone (the WAL index lives on the heap, not in a `-shm` file, and the writer's
// lasting shared lock covers the read-only connections: no `fcntl` per transaction). Another process (a
// second server, `countersign migrate`, the sqlite3 shell) opening the file meanwhile finds it locked.
// POSIX locks belong to the process: closing any descriptor of the file in it drops them, so nothing in the
// server opens the file itself while its connections are open (`SQLiteFileClaim` keeps its one open).
// On a local file system only: over NFS, Linux emulates `flock` with the same POSIX locks.
int countersign_sqlite_hold_files_alone(void);
