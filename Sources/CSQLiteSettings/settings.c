#include <sqlite3.h>
#include "CSQLiteSettings.h"

int countersign_sqlite_stop_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int countersign_sqlite_stop_bulk_page_cache(void) {
    return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}

int countersign_sqlite_hold_files_alone(void) {
    sqlite3_vfs *exclusive = sqlite3_vfs_find("unix-excl");
    if (exclusive == 0) return SQLITE_ERROR;
    return sqlite3_vfs_register(exclusive, 1);
}
