// Process-wide settings of the system's SQLite (Debian: libsqlite3-dev), the library GRDB uses.
// `sqlite3_config` takes variable arguments, which Swift cannot call: each setting is a function here.
// This header names no SQLite type, so that it does not clash with the other SQLite headers in the build.

// Stops SQLite from counting the memory it allocates, which it does under one process-wide mutex taken
// at every allocation and release. Must come before SQLite initializes (the first connection opened);
// later, SQLite answers SQLITE_MISUSE and keeps counting. Returns SQLite's result code.
int countersign_sqlite_stop_memory_statistics(void);
