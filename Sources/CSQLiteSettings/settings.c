#include <sqlite3.h>
#include "CSQLiteSettings.h"

int countersign_sqlite_stop_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
