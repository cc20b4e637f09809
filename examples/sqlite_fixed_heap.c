/* SPDX-License-Identifier: MIT */
/*
 * sqlite_fixed_heap.c -- SQLite with every byte it allocates taken from one fixed rtalloc heap.
 *
 * The situation on an embedded target: no system malloc (or one you may not use after start-up),
 * a known amount of RAM for the database engine, and the requirement that running out of it is
 * an error the application handles -- never a crash, never a call into the OS. SQLite allows this
 * through sqlite3_config(SQLITE_CONFIG_MALLOC, &methods): seven functions it calls for all of its
 * memory. Here they sit on a TLSF heap (rtalloc/heap.h) over a static buffer, so every
 * allocation and free costs O(1) whatever the heap holds, and the heap's statistics tell how much
 * of the buffer SQLite ever needed (size the buffer from that peak plus a margin).
 *
 * The program runs a few statements, prints their results and the heap's peak, then fills the
 * heap on purpose: SQLite reports SQLITE_NOMEM, the transaction is rolled back, and the database
 * is used again as if nothing had happened.
 *
 * Build: see examples/CMakeLists.txt (find_package(rtalloc) + pkg-config sqlite3), or
 *     cc -std=c11 sqlite_fixed_heap.c $(pkg-config --cflags --libs rtalloc sqlite3)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rtalloc/rtalloc.h>
#include <sqlite3.h>

/* The memory SQLite gets, all of it. 2 MiB runs the statements below with room to spare; the
 * peak printed at the end is the figure to size a real application's buffer from. The buffer
 * needs no particular alignment (the heap aligns its blocks itself); static storage keeps it out
 * of both the stack and any system heap. */
static unsigned char sqlite_memory[2u << 20];
static rt_heap_t *heap;

/* xInit: called once by sqlite3_initialize(), before any allocation. Creating the heap here
 * rather than in main() keeps the whole memory subsystem behind the methods table. Returns
 * SQLITE_OK or an error code, which sqlite3_initialize() passes on. */
static int heap_init(void *app_data)
{
    (void)app_data;
    heap = rt_heap_create(sqlite_memory, sizeof sqlite_memory);
    return heap != NULL ? SQLITE_OK : SQLITE_NOMEM;
}

/* xShutdown: called by sqlite3_shutdown() once SQLite has freed everything. The heap lives in
 * our buffer and needs no teardown: forgetting the handle is enough. */
static void heap_shutdown(void *app_data)
{
    (void)app_data;
    heap = NULL;
}

/* xMalloc: SQLite asks only for sizes > 0 (its sqlite3Malloc() answers 0 itself) and treats NULL
 * as out of memory, which it reports as SQLITE_NOMEM up to the caller of the statement. That is
 * exactly rt_heap_malloc's contract: NULL iff no free block fits, heap unchanged. Every block is
 * aligned to RT_HEAP_ALIGN (16 on 64-bit), more than the 8 SQLite needs. */
static void *heap_malloc(int size) { return rt_heap_malloc(heap, (size_t)size); }

/* xFree: SQLite never passes NULL (sqlite3_free(NULL) returns before calling us), but
 * rt_heap_free(NULL) is a no-op anyway. */
static void heap_free(void *ptr) { rt_heap_free(heap, ptr); }

/* xRealloc: SQLite calls it with a live block and a size > 0 only (realloc of NULL and to 0 are
 * turned into xMalloc and xFree before they get here). On failure it must return NULL and leave
 * the old block intact -- SQLite still owns and later frees it -- which rt_heap_realloc
 * guarantees ("returns NULL iff the request fails; then p is untouched"). Growing in place into a
 * free successor avoids the copy when it can. */
static void *heap_realloc(void *ptr, int size) { return rt_heap_realloc(heap, ptr, (size_t)size); }

/* xSize: must return the USABLE size of the block, not the size asked for: SQLite uses it for
 * its memory-used counters (sqlite3_memory_used) and to make use of slack, e.g. a string buffer
 * that grew to 100 bytes may keep writing up to xSize() without a realloc. Returning more than
 * is usable would let it write past the block into the next block's header (rtalloc's hardening
 * would catch that at the next free, but the data would be lost); returning less is only wasteful.
 * rt_heap_usable_size is O(1): the size is in the block's header. */
static int heap_size(void *ptr) { return ptr != NULL ? (int)rt_heap_usable_size(heap, ptr) : 0; }

/* xRoundup: SQLite asks what a request of n bytes will really get, to size some buffers to the
 * whole block. Any value >= n is correct (it is a hint; xSize reports the real figure once the
 * block exists). Rounding to the heap's alignment is what every block gets at least; TLSF may
 * round further up within its size class, which xSize then reveals. */
static int heap_roundup(int n)
{
    const int align = (int)RT_HEAP_ALIGN;
    return (n + align - 1) & ~(align - 1);
}

/* Print one result row of sqlite3_exec. */
static int print_row(void *prefix, int columns, char **values, char **names)
{
    printf("%s", (const char *)prefix);
    for (int i = 0; i < columns; i++) {
        printf(" %s=%s", names[i], values[i] != NULL ? values[i] : "NULL");
    }
    printf("\n");
    return 0;
}

static int exec(sqlite3 *db, const char *sql, const char *prefix)
{
    char *error = NULL;
    int rc = sqlite3_exec(db, sql, print_row, (void *)prefix, &error);
    if (rc != SQLITE_OK) {
        printf("error %d (%s): %s\n", rc, sqlite3_errstr(rc), error != NULL ? error : "?");
        sqlite3_free(error); /* allocated by SQLite, in our heap */
    }
    return rc;
}

static void print_heap(const char *when)
{
    rt_stats_t stats;
    rt_heap_stats(heap, &stats);
    printf("heap %s: %zu of %zu bytes in use, peak %zu, %" PRIu64 " mallocs, %" PRIu64 " failed\n", when,
           stats.used_bytes, stats.capacity, stats.peak_used, stats.mallocs, stats.failures);
}

/* Step 1: hand SQLite the seven memory methods and start it. False when it refuses them. */
static bool configure(void)
{
    /* All sqlite3_config calls come before sqlite3_initialize (explicit, or implicit in the first
     * sqlite3_open): afterwards they fail with SQLITE_MISUSE. */
    static const sqlite3_mem_methods methods = {
        heap_malloc,  heap_free, heap_realloc,  heap_size,
        heap_roundup, heap_init, heap_shutdown, NULL /* pAppData, handed to xInit and xShutdown */
    };
    /* The heap has no lock installed, so SQLite must not call it from two threads at once. This
     * program has one thread; a threaded one would add rt_heap_set_lock(heap, rt_pthread_lock,
     * rt_pthread_unlock, &mutex) from rtalloc::drivers in heap_init. */
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK || sqlite3_initialize() != SQLITE_OK) {
        printf("sqlite3 refused the memory methods\n");
        return false;
    }
    printf("sqlite %s on a %zu-byte rtalloc %s heap\n", sqlite3_libversion(), sizeof sqlite_memory,
           rt_heap_index_name(heap));
    return true;
}

/* Step 2: a table of 1000 rows with an index, two queries over it, the heap afterwards. Returns
 * the number of statements that failed. */
static int run_queries(sqlite3 *db)
{
    int failures = 0;
    failures += exec(db,
                     "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);"
                     "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 1000)"
                     "  INSERT INTO t SELECT n, printf('row %04d', n), n * n % 97 FROM s;"
                     "CREATE INDEX t_v ON t(v);",
                     "") != SQLITE_OK;
    failures += exec(db, "SELECT count(*) AS rows, sum(v) AS sum_v, max(name) AS last FROM t;", "query:") != SQLITE_OK;
    failures +=
        exec(db, "SELECT v, count(*) AS n FROM t GROUP BY v ORDER BY n DESC, v LIMIT 2;", "group:") != SQLITE_OK;
    print_heap("after the queries");
    return failures;
}

/* Step 3: fill the heap until SQLite runs out of memory. Returns 1 if it did not report
 * SQLITE_NOMEM (a failure of this example), else 0. */
static int exhaust(sqlite3 *db)
{
    /* Exhaustion. Blobs of 64 KiB go into the in-memory database (its pages come from our heap)
     * inside one transaction until the heap cannot hold the next one. SQLite then returns
     * SQLITE_NOMEM from sqlite3_step, and the whole transaction is rolled back. */
    exec(db, "CREATE TABLE big(b BLOB); BEGIN;", "");
    sqlite3_stmt *insert = NULL;
    sqlite3_prepare_v2(db, "INSERT INTO big VALUES (zeroblob(65536))", -1, &insert, NULL);
    int rows = 0;
    int rc = SQLITE_DONE;
    while (insert != NULL && rows < 1000 && (rc = sqlite3_step(insert)) == SQLITE_DONE) {
        sqlite3_reset(insert);
        rows++;
    }
    printf("exhaustion: %s after %s rows of 64 KiB\n", sqlite3_errstr(rc), rows > 10 ? "more than 10" : "10 or fewer");
    sqlite3_finalize(insert);
    print_heap("at exhaustion");
    return rc != SQLITE_NOMEM;
}

/* Step 4: roll back and use the database again, as if nothing had happened. Returns 1 if the
 * query after the rollback failed, else 0. */
static int recover(sqlite3 *db)
{
    /* After SQLITE_NOMEM SQLite may already have rolled the transaction back; ROLLBACK then says
     * "no transaction is active", which is fine. Either way the heap gets its memory back. */
    if (!sqlite3_get_autocommit(db)) {
        exec(db, "ROLLBACK;", "");
    }
    return exec(db, "SELECT count(*) AS big_rows FROM big; SELECT count(*) AS rows FROM t;", "after rollback:") !=
           SQLITE_OK;
}

/* Step 5: close and shut down (the heap is empty again), print the verdict; the exit status. */
static int report(sqlite3 *db, int failures)
{
    sqlite3_close(db);
    print_heap("after close");
    sqlite3_shutdown();
    printf("sqlite_fixed_heap: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}

int main(void)
{
    if (!configure()) {
        return 1;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        printf("open failed\n");
        return 1;
    }
    int failures = run_queries(db);
    failures += exhaust(db);
    failures += recover(db);
    return report(db, failures);
}
