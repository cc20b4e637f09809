/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/peers.c -- the noop calibration allocator and the system peers glibc, jemalloc and
 * mimalloc (peers.h).
 *
 * How three mallocs share one process. glibc is the process's own malloc. jemalloc and mimalloc
 * (Debian's libjemalloc2 and libmimalloc2.0, installed by bench.sh) are NOT linked: at start
 * (bench_peers_init) rtbench dlopen()s each by soname, libjemalloc.so.2 and libmimalloc.so.2, with
 * RTLD_NOW | RTLD_LOCAL, and takes its entry points with dlsym() on that handle:
 *   jemalloc  malloc, free, realloc, calloc, posix_memalign, malloc_usable_size, mallctl -- Debian
 *             builds it without a prefix, so these are its unprefixed symbols; dlsym on the handle
 *             finds the library's own definitions first (its load order: itself, then libc).
 *   mimalloc  mi_malloc, mi_free, mi_realloc, mi_calloc, mi_malloc_aligned, mi_usable_size,
 *             mi_heap_get_default, mi_heap_visit_blocks -- its prefixed API (its unprefixed malloc is the same code).
 * RTLD_LOCAL keeps both out of the global scope, so the program's (and libc's) own malloc calls
 * still reach glibc: nothing is interposed, each peer sees only the calls made through its
 * descriptor, and all of them run in the same process, through the same driver and clock.
 * RTLD_DEEPBIND is NOT used: ASan refuses it, and the only calls these libraries make to malloc
 * symbols through their PLT are jemalloc's C++ operators new/delete (unused: rtbench is C) and
 * mimalloc's mi_heap_realpath (unused), which must reach glibc anyway.
 * Debian's libjemalloc.so.2 is built with initial-exec TLS (DF_STATIC_TLS, 2.6 KiB), which a
 * dlopen()ed library may only use from the static TLS surplus: without
 * GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 the dlopen fails ("cannot allocate memory
 * in static TLS block"). bench_peers_init then re-executes rtbench (/proc/self/exe, same argv) once
 * with that tunable added (RTBENCH_TLS_REEXEC marks the second run); bench.sh and
 * callgrind_check.sh set it themselves (valgrind would not follow the re-exec).
 * A peer whose library is missing or fails to load or fails the check below is left out of
 * bench_allocators() (so `run all` and the defaults skip it) and listed as unavailable, with why.
 *
 * The pointers come from the peer: after loading, one malloc(1000) through each descriptor is
 * checked with the peer's own bookkeeping -- jemalloc: mallctl("thread.allocated") grows by at
 * least 1000 and the block's usable size (jemalloc's malloc_usable_size) is its size class, 1024;
 * mimalloc: mi_is_in_heap_region(p) is true, and false for a block of glibc's malloc. A peer
 * failing this is unavailable ("pointers not from the peer").
 *
 * Memory figures (the stats function of each system peer; see bench_peer_reset_peak):
 *   glibc     mallinfo2(): capacity = arena + hblkhd = bytes obtained from the system (sbrk/mmap
 *             heaps of every arena, free chunks and top included, plus mmapped chunks);
 *             used_bytes = uordblks + hblkhd (chunks in use, headers included); free = fordblks.
 *             Process-wide: rtbench's own glibc allocations (traces, slot tables, stdio buffers)
 *             are in them too; subtract the figures read at bench_peer_reset_peak when those stay
 *             live throughout a measurement.
 *   jemalloc  mallctl("epoch") to refresh, then capacity = stats.active + stats.arenas.<all>.pdirty
 *             x arenas.page: pages of live extents (size-class rounding and partly used slabs
 *             included) plus the freed pages jemalloc keeps for reuse (dirty, purged after a
 *             10 s decay) -- the same kind of figure as glibc's heap (its free chunks and top
 *             stay in it) and mimalloc's pages. Left out: stats.metadata (2.7 MB at start on
 *             Debian's 5.3.0, mostly fixed: it would swamp the fragmentation of a small live
 *             set), and so stats.resident (active + dirty + metadata pages, an upper estimate)
 *             and stats.mapped (extents mapped, whether touched or not). used_bytes =
 *             stats.allocated (bytes in live blocks, size-class rounding included).
 *   mimalloc  mi_heap_visit_blocks() over the default heap (the only one: rtbench is single-
 *             threaded), one call per page: capacity = the sum of each page's area from which
 *             blocks have been carved so far ("committed" in mi_heap_area_t: the page's capacity
 *             x its block size) -- pages of live blocks, size-class rounding, free blocks in them
 *             and emptied pages not yet retired, but not the segment metadata;
 *             used_bytes = blocks in use x their block size. mi_process_info()'s current_commit
 *             would be the OS-level figure but is useless here: Debian's mimalloc 2.0.9 commits
 *             whole 32 MiB segments at once (overcommitted, not touched), so it reads 32 MiB
 *             from the first malloc on.
 *   watermark (all three) = the highest capacity seen by a stats call since the last
 *             bench_peer_reset_peak() (or since start), peak_used likewise for used_bytes: none
 *             of the three keeps a resettable peak of its own, so the peak is as exact as the
 *             caller's sampling (call stats at the live-set peaks, or after every op).
 * None of these is pre-touched like the benchmark's 64 MiB arena: they get memory from the OS
 * on demand, and the first touch of a fresh page (a page fault) lands inside a timed call of the
 * first of the two timed runs; the per-op minimum of the two runs mostly removes it. No extra
 * warm-up pass is made. The experiments print that as a footnote (bench_peers_footnote).
 */
#include "peers.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- noop ------------------------------------------------------------------------------------ */

/* The driver writes one byte into every block it gets; give it somewhere harmless. */
static _Alignas(64) unsigned char noop_block[64];

static void *noop_malloc(void *h, size_t n)
{
    (void)h;
    (void)n;
    return noop_block;
}

static void noop_free(void *h, void *p)
{
    (void)h;
    (void)p;
}

static unsigned noop_probes(const void *h)
{
    (void)h;
    return 0;
}

const rt_allocator_t bench_noop = {
    .name = "noop",
    .description = "calibration: returns a static block, does nothing (the timing floor)",
    .malloc_bound = "O(1)",
    .free_bound = "O(1)",
    .alignment = 64,
    .malloc = noop_malloc,
    .free = noop_free,
    .last_probes = noop_probes,
    .family = RT_FAMILY_SYSTEM,
    .thread_safe = true,
};

/* --- glibc ----------------------------------------------------------------------------------- */

static void *glibc_malloc(void *h, size_t n)
{
    (void)h;
    return malloc(n);
}

static void glibc_free(void *h, void *p)
{
    (void)h;
    free(p);
}

static void *glibc_realloc(void *h, void *p, size_t n)
{
    (void)h;
    return realloc(p, n);
}

static void *glibc_calloc(void *h, size_t c, size_t n)
{
    (void)h;
    return calloc(c, n);
}

static void *glibc_memalign(void *h, size_t a, size_t n)
{
    (void)h;
    void *p = NULL;
    if (a < sizeof(void *)) {
        a = sizeof(void *);
    }
    return posix_memalign(&p, a, n) == 0 ? p : NULL;
}

static size_t glibc_usable(void *h, void *p)
{
    (void)h;
    return malloc_usable_size(p);
}

/* Sampled peaks of the system peers (see the top of this file and bench_peer_reset_peak). */
typedef struct peer_peak {
    size_t capacity, used;
} peer_peak_t;

static void peak_fill(peer_peak_t *pk, rt_stats_t *s)
{
    pk->capacity = s->capacity > pk->capacity ? s->capacity : pk->capacity;
    pk->used = s->used_bytes > pk->used ? s->used_bytes : pk->used;
    s->watermark = pk->capacity;
    s->peak_used = pk->used;
    s->free_bytes = s->capacity > s->used_bytes ? s->capacity - s->used_bytes : 0;
}

static peer_peak_t glibc_peak;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
/* glibc's own accounting (mallinfo2): bytes obtained from the system (every arena's heap plus
 * mmapped chunks) and bytes in chunks in use. Counters of operations are not kept by glibc
 * and stay 0. */
static void glibc_stats(void *h, rt_stats_t *s)
{
    (void)h;
    struct mallinfo2 mi = mallinfo2();
    memset(s, 0, sizeof *s);
    s->capacity = mi.arena + mi.hblkhd;
    s->used_bytes = mi.uordblks + mi.hblkhd;
    peak_fill(&glibc_peak, s);
    s->free_bytes = mi.fordblks;
}
#define GLIBC_STATS glibc_stats
#else
#define GLIBC_STATS NULL
#endif

const rt_allocator_t bench_glibc = {
    .name = "glibc",
    .description = "the C library's malloc/free (ptmalloc2), process-wide, handle ignored",
    .malloc_bound = "unbounded",
    .free_bound = "unbounded",
    .alignment = 2 * sizeof(size_t),
    .malloc = glibc_malloc,
    .free = glibc_free,
    .realloc = glibc_realloc,
    .calloc = glibc_calloc,
    .memalign = glibc_memalign,
    .usable_size = glibc_usable,
    .stats = GLIBC_STATS,
    .family = RT_FAMILY_SYSTEM,
    .thread_safe = true,
};

/* --- jemalloc and mimalloc, dlopen()ed ------------------------------------------------------ */

#define PEER_TLS_TUNABLE "glibc.rtld.optional_static_tls=65536"
#define PEER_REEXEC_MARK "RTBENCH_TLS_REEXEC"

/* jemalloc's entry points, from dlsym on its handle. */
static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*realloc)(void *, size_t);
    void *(*calloc)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    size_t (*usable)(void *);
    int (*mallctl)(const char *, void *, size_t *, void *, size_t);
    void *(*mallocx)(size_t, int);
    void (*dallocx)(void *, int);
    int (*nametomib)(const char *, size_t *, size_t *);
    int (*bymib)(const size_t *, size_t, void *, size_t *, void *, size_t);
} je;

static void *jemalloc_malloc(void *h, size_t n)
{
    (void)h;
    return je.malloc(n);
}

static void jemalloc_free(void *h, void *p)
{
    (void)h;
    je.free(p);
}

static void *jemalloc_realloc(void *h, void *p, size_t n)
{
    (void)h;
    return je.realloc(p, n);
}

static void *jemalloc_calloc(void *h, size_t c, size_t n)
{
    (void)h;
    return je.calloc(c, n);
}

static void *jemalloc_memalign(void *h, size_t a, size_t n)
{
    (void)h;
    void *p = NULL;
    if (a < sizeof(void *)) {
        a = sizeof(void *);
    }
    return je.posix_memalign(&p, a, n) == 0 ? p : NULL;
}

static size_t jemalloc_usable(void *h, void *p)
{
    (void)h;
    return je.usable(p);
}

static size_t je_stat(const char *name)
{
    size_t v = 0, len = sizeof v;
    return je.mallctl(name, &v, &len, NULL, 0) == 0 ? v : 0;
}

static peer_peak_t jemalloc_peak;

/* capacity = stats.active + dirty pages of all arenas; used = stats.allocated; refreshed by
 * mallctl("epoch"). */
static void jemalloc_stats(void *h, rt_stats_t *s)
{
    (void)h;
    uint64_t epoch = 1;
    size_t len = sizeof epoch;
    je.mallctl("epoch", &epoch, &len, &epoch, len);
    memset(s, 0, sizeof *s);
    /* 4096 = MALLCTL_ARENAS_ALL: the sum over every arena */
    s->capacity = je_stat("stats.active") + je_stat("stats.arenas.4096.pdirty") * je_stat("arenas.page");
    s->used_bytes = je_stat("stats.allocated");
    peak_fill(&jemalloc_peak, s);
}

const rt_allocator_t bench_jemalloc = {
    .name = "jemalloc",
    .description = "Debian's jemalloc (libjemalloc.so.2, dlopen'ed RTLD_LOCAL), process-wide, handle ignored",
    .malloc_bound = "unbounded",
    .free_bound = "unbounded",
    .alignment = 16,
    .malloc = jemalloc_malloc,
    .free = jemalloc_free,
    .realloc = jemalloc_realloc,
    .calloc = jemalloc_calloc,
    .memalign = jemalloc_memalign,
    .usable_size = jemalloc_usable,
    .stats = jemalloc_stats,
    .family = RT_FAMILY_SYSTEM,
    .thread_safe = true,
};

/* mimalloc's entry points (its prefixed API), from dlsym on its handle. */
static struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*realloc)(void *, size_t);
    void *(*calloc)(size_t, size_t);
    void *(*malloc_aligned)(size_t, size_t);
    size_t (*usable)(const void *);
    void *(*heap_default)(void);
    bool (*visit)(const void *, bool, bool (*)(const void *, const void *, void *, size_t, void *), void *);
    bool (*in_heap)(const void *);
    int (*version)(void);
    void *(*heap_new)(void);
    void (*heap_destroy)(void *);
    void *(*heap_malloc)(void *, size_t);
} mi;

static void *mimalloc_malloc(void *h, size_t n)
{
    (void)h;
    return mi.malloc(n);
}

static void mimalloc_free(void *h, void *p)
{
    (void)h;
    mi.free(p);
}

static void *mimalloc_realloc(void *h, void *p, size_t n)
{
    (void)h;
    return mi.realloc(p, n);
}

static void *mimalloc_calloc(void *h, size_t c, size_t n)
{
    (void)h;
    return mi.calloc(c, n);
}

static void *mimalloc_memalign(void *h, size_t a, size_t n)
{
    (void)h;
    return mi.malloc_aligned(n, a);
}

static size_t mimalloc_usable(void *h, void *p)
{
    (void)h;
    return mi.usable(p);
}

static peer_peak_t mimalloc_peak;

/* mimalloc.h's mi_heap_area_t (mimalloc 2.0): one page of blocks of one size. */
typedef struct mi_area {
    void *blocks;
    size_t reserved;  /* bytes reserved for the page (virtual) */
    size_t committed; /* bytes of the page blocks have been carved from so far (its capacity) */
    size_t used;      /* blocks in use */
    size_t block_size;
    size_t full_block_size;
} mi_area_t;

static bool mi_area_sum(const void *heap, const void *area, void *block, size_t block_size, void *arg)
{
    (void)heap;
    (void)block_size;
    if (block == NULL) { /* one call per area (page) when not visiting blocks */
        const mi_area_t *ar = area;
        rt_stats_t *s = arg;
        s->capacity += ar->committed;
        s->used_bytes += ar->used * ar->block_size;
        s->used_blocks += ar->used;
    }
    return true;
}

/* The default heap's pages (mi_heap_visit_blocks, one call per page): capacity = their carved
 * bytes, used = blocks in use x their size class. */
static void mimalloc_stats(void *h, rt_stats_t *s)
{
    (void)h;
    memset(s, 0, sizeof *s);
    mi.visit(mi.heap_default(), false, mi_area_sum, s);
    peak_fill(&mimalloc_peak, s);
}

const rt_allocator_t bench_mimalloc = {
    .name = "mimalloc",
    .description = "Debian's mimalloc (libmimalloc.so.2, dlopen'ed RTLD_LOCAL, mi_* API), process-wide, handle ignored",
    .malloc_bound = "unbounded",
    .free_bound = "unbounded",
    .alignment = 16,
    .malloc = mimalloc_malloc,
    .free = mimalloc_free,
    .realloc = mimalloc_realloc,
    .calloc = mimalloc_calloc,
    .memalign = mimalloc_memalign,
    .usable_size = mimalloc_usable,
    .stats = mimalloc_stats,
    .family = RT_FAMILY_SYSTEM,
    .thread_safe = true,
};

/* --- loading ---------------------------------------------------------------------------------- */

typedef struct peer_lib {
    const rt_allocator_t *a;
    const char *soname;
    const char *package;
    bool loaded;
    char version[48];
    char why[240]; /* why unavailable */
} peer_lib_t;

static peer_lib_t peer_libs[] = {
    {&bench_jemalloc, "libjemalloc.so.2", "libjemalloc2", false, "", "not loaded (bench_peers_init not called)"},
    {&bench_mimalloc, "libmimalloc.so.2", "libmimalloc2.0", false, "", "not loaded (bench_peers_init not called)"},
};
enum { NPEER_LIBS = sizeof peer_libs / sizeof peer_libs[0] };

/* dlsym into a function pointer (through memcpy: ISO C has no object-to-function cast). */
static bool sym(void *h, const char *name, void *fnptr, size_t fnsize, const char **missing)
{
    void *p = dlsym(h, name);
    if (p == NULL) {
        *missing = name;
        return false;
    }
    memcpy(fnptr, &p, fnsize);
    return true;
}
#define SYM(h, name, field, missing) sym((h), (name), &(field), sizeof(field), (missing))

/* Re-executes rtbench with the static-TLS tunable that Debian's jemalloc needs, once. */
static void reexec_with_tls(char **argv)
{
    if (argv == NULL || getenv(PEER_REEXEC_MARK) != NULL) {
        return;
    }
    const char *old = getenv("GLIBC_TUNABLES");
    char buf[1024];
    if (old != NULL && *old != '\0') {
        if (strstr(old, "glibc.rtld.optional_static_tls") != NULL) {
            return; /* already set, and still too small: do not loop */
        }
        snprintf(buf, sizeof buf, "%s:%s", old, PEER_TLS_TUNABLE);
    } else {
        snprintf(buf, sizeof buf, "%s", PEER_TLS_TUNABLE);
    }
    setenv("GLIBC_TUNABLES", buf, 1);
    setenv(PEER_REEXEC_MARK, "1", 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* exec failed: go on without jemalloc */
}

static bool load_jemalloc(peer_lib_t *L, char **argv)
{
    void *h = dlopen(L->soname, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *err = dlerror();
        if (err != NULL && strstr(err, "static TLS") != NULL) {
            reexec_with_tls(argv);
        }
        snprintf(L->why, sizeof L->why, "%s (package %s)", err != NULL ? err : "dlopen failed", L->package);
        return false;
    }
    const char *missing = NULL;
    if (!(SYM(h, "malloc", je.malloc, &missing) && SYM(h, "free", je.free, &missing) &&
          SYM(h, "realloc", je.realloc, &missing) && SYM(h, "calloc", je.calloc, &missing) &&
          SYM(h, "posix_memalign", je.posix_memalign, &missing) && SYM(h, "malloc_usable_size", je.usable, &missing) &&
          SYM(h, "mallctl", je.mallctl, &missing) && SYM(h, "mallocx", je.mallocx, &missing) &&
          SYM(h, "dallocx", je.dallocx, &missing) && SYM(h, "mallctlnametomib", je.nametomib, &missing) &&
          SYM(h, "mallctlbymib", je.bymib, &missing))) {
        snprintf(L->why, sizeof L->why, "%s: no symbol %s", L->soname, missing);
        return false;
    }
    const char *ver = NULL;
    size_t len = sizeof ver;
    if (je.mallctl("version", (void *)&ver, &len, NULL, 0) == 0 && ver != NULL) {
        snprintf(L->version, sizeof L->version, "%.20s", ver);
    }
    /* The check: jemalloc's own per-thread counter sees the block, and its size class. */
    uint64_t before = 0, after = 0;
    size_t ulen = sizeof before;
    int rc1 = je.mallctl("thread.allocated", &before, &ulen, NULL, 0);
    void *p = bench_jemalloc.malloc(NULL, 1000);
    int rc2 = je.mallctl("thread.allocated", &after, &ulen, NULL, 0);
    size_t usable = p != NULL ? bench_jemalloc.usable_size(NULL, p) : 0;
    bench_jemalloc.free(NULL, p);
    if (p == NULL || rc1 != 0 || rc2 != 0 || after - before < 1000 || usable != 1024) {
        snprintf(L->why, sizeof L->why, "pointers not from the peer? (thread.allocated %d/%d grew by %llu, usable %zu)",
                 rc1, rc2, (unsigned long long)(after - before), usable);
        return false;
    }
    return true;
}

static bool load_mimalloc(peer_lib_t *L)
{
    void *h = dlopen(L->soname, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *err = dlerror();
        snprintf(L->why, sizeof L->why, "%s (package %s)", err != NULL ? err : "dlopen failed", L->package);
        return false;
    }
    const char *missing = NULL;
    if (!(SYM(h, "mi_malloc", mi.malloc, &missing) && SYM(h, "mi_free", mi.free, &missing) &&
          SYM(h, "mi_realloc", mi.realloc, &missing) && SYM(h, "mi_calloc", mi.calloc, &missing) &&
          SYM(h, "mi_malloc_aligned", mi.malloc_aligned, &missing) && SYM(h, "mi_usable_size", mi.usable, &missing) &&
          SYM(h, "mi_heap_get_default", mi.heap_default, &missing) &&
          SYM(h, "mi_heap_visit_blocks", mi.visit, &missing) && SYM(h, "mi_is_in_heap_region", mi.in_heap, &missing) &&
          SYM(h, "mi_version", mi.version, &missing) && SYM(h, "mi_heap_new", mi.heap_new, &missing) &&
          SYM(h, "mi_heap_destroy", mi.heap_destroy, &missing) && SYM(h, "mi_heap_malloc", mi.heap_malloc, &missing))) {
        snprintf(L->why, sizeof L->why, "%s: no symbol %s", L->soname, missing);
        return false;
    }
    int v = mi.version();
    snprintf(L->version, sizeof L->version, "%d.%d.%d", v / 100, (v / 10) % 10, v % 10);
    /* The check: mimalloc claims its block, and not one of glibc's. */
    void *p = bench_mimalloc.malloc(NULL, 1000);
    void *g = malloc(1000);
    bool mine = p != NULL && mi.in_heap(p);
    bool theirs = g != NULL && mi.in_heap(g);
    bench_mimalloc.free(NULL, p);
    free(g);
    if (!mine || theirs) {
        snprintf(L->why, sizeof L->why, "pointers not from the peer? (mi_is_in_heap_region: own block %d, glibc's %d)",
                 (int)mine, (int)theirs);
        return false;
    }
    return true;
}

void bench_peers_init(char **argv)
{
    static bool done;
    if (done) {
        return;
    }
    done = true;
    for (size_t i = 0; i < NPEER_LIBS; i++) {
        peer_lib_t *L = &peer_libs[i];
        L->why[0] = '\0';
        L->loaded = L->a == &bench_jemalloc ? load_jemalloc(L, argv) : load_mimalloc(L);
    }
}

void bench_peer_reset_peak(const rt_allocator_t *a)
{
    peer_peak_t *pk = a == &bench_glibc      ? &glibc_peak
                      : a == &bench_jemalloc ? &jemalloc_peak
                      : a == &bench_mimalloc ? &mimalloc_peak
                                             : NULL;
    if (pk == NULL) {
        return;
    }
    memset(pk, 0, sizeof *pk);
    if (a->stats != NULL) {
        rt_stats_t s;
        a->stats(NULL, &s); /* restarts from the current figures */
    }
}

/* --- private instances of jemalloc and mimalloc, for fragmentation (peers.h) ---------------- */

/* jemalloc.h's flags (5.x ABI): arena a, explicit tcache tc. */
#define JE_MALLOCX_ARENA(a) ((int)(((unsigned)(a) + 1u) << 20))
#define JE_MALLOCX_TCACHE(tc) ((int)(((unsigned)(tc) + 2u) << 8))

typedef struct peer_private {
    const rt_allocator_t *peer;
    unsigned arena, tcache; /* jemalloc */
    int flags;
    size_t mib_epoch[1], mib_active[4], mib_dirty[4], mib_muzzy[4], mib_small[5], mib_large[5];
    size_t len_epoch, len_active, len_dirty, len_muzzy, len_small, len_large;
    size_t page;
    size_t used;
    void *heap; /* mimalloc */
    peer_peak_t peak;
} peer_private_t;

static peer_private_t pv_je, pv_mi;

static size_t je_mib_read(const size_t *mib, size_t len)
{
    size_t v = 0, vlen = sizeof v;
    return je.bymib(mib, len, &v, &vlen, NULL, 0) == 0 ? v : 0;
}

/* The private arena's pages now: refresh (epoch), then its active + dirty + muzzy pages. */
static size_t pv_je_pages(peer_private_t *pv)
{
    uint64_t epoch = 1;
    size_t elen = sizeof epoch;
    je.bymib(pv->mib_epoch, pv->len_epoch, &epoch, &elen, &epoch, elen);
    return (je_mib_read(pv->mib_active, pv->len_active) + je_mib_read(pv->mib_dirty, pv->len_dirty) +
            je_mib_read(pv->mib_muzzy, pv->len_muzzy)) *
           pv->page;
}

/* Bytes in live blocks (usable sizes: size classes included), counted by the wrappers. */
static void *pv_je_malloc(void *h, size_t n)
{
    peer_private_t *pv = h;
    void *p = je.mallocx(n != 0 ? n : 1u, pv->flags);
    if (p != NULL) {
        pv->used += je.usable(p);
        pv->peak.used = pv->used > pv->peak.used ? pv->used : pv->peak.used;
    }
    return p;
}

static void pv_je_free(void *h, void *p)
{
    peer_private_t *pv = h;
    if (p != NULL) {
        pv->used -= je.usable(p);
        je.dallocx(p, JE_MALLOCX_TCACHE(pv->tcache));
    }
}

static void pv_mi_sample(peer_private_t *pv)
{
    rt_stats_t s;
    memset(&s, 0, sizeof s);
    mi.visit(pv->heap, false, mi_area_sum, &s);
    peak_fill(&pv->peak, &s);
}

static void *pv_mi_malloc(void *h, size_t n)
{
    peer_private_t *pv = h;
    void *p = mi.heap_malloc(pv->heap, n);
    pv_mi_sample(pv);
    return p;
}

static void pv_mi_free(void *h, void *p)
{
    (void)h;
    mi.free(p);
}

static void pv_stats(void *h, rt_stats_t *s)
{
    peer_private_t *pv = h;
    memset(s, 0, sizeof *s);
    if (pv->peer == &bench_jemalloc) {
        /* decay is off in the private arena: its pages never go back, so now is its peak */
        size_t pages = pv_je_pages(pv);
        pv->peak.capacity = pages > pv->peak.capacity ? pages : pv->peak.capacity;
    }
    s->watermark = pv->peak.capacity;
    s->peak_used = pv->peak.used;
}

static void *pv_create(void *mem, size_t size)
{
    (void)mem, (void)size;
    return NULL; /* never called: marks the view as an instance with a watermark (frag.h) */
}

static bool pv_je_mib(const char *fmt, unsigned arena, size_t *mib, size_t *len, size_t cap)
{
    char name[96];
    snprintf(name, sizeof name, fmt, arena);
    *len = cap;
    return je.nametomib(name, mib, len) == 0;
}

bool bench_peer_private_open(const rt_allocator_t *a, rt_allocator_t *view, void **handle)
{
    *view = *a;
    view->create = pv_create;
    view->stats = pv_stats;
    view->realloc = NULL;
    view->calloc = NULL;
    view->memalign = NULL;
    view->usable_size = NULL;
    if (a == &bench_jemalloc && bench_peer_unavailable("jemalloc") == NULL) {
        peer_private_t *pv = &pv_je;
        memset(pv, 0, sizeof *pv);
        pv->peer = a;
        size_t len = sizeof pv->arena;
        if (je.mallctl("arenas.create", &pv->arena, &len, NULL, 0) != 0) {
            return false;
        }
        len = sizeof pv->tcache;
        if (je.mallctl("tcache.create", &pv->tcache, &len, NULL, 0) != 0) {
            return false;
        }
        pv->flags = JE_MALLOCX_ARENA(pv->arena) | JE_MALLOCX_TCACHE(pv->tcache);
        pv->page = je_stat("arenas.page");
        uint64_t epoch = 1;
        len = sizeof epoch;
        je.mallctl("epoch", &epoch, &len, &epoch, len); /* a new arena's stats appear after a refresh */
        if (!(pv_je_mib("epoch", 0, pv->mib_epoch, &pv->len_epoch, 1) &&
              pv_je_mib("stats.arenas.%u.pactive", pv->arena, pv->mib_active, &pv->len_active, 4) &&
              pv_je_mib("stats.arenas.%u.pdirty", pv->arena, pv->mib_dirty, &pv->len_dirty, 4) &&
              pv_je_mib("stats.arenas.%u.pmuzzy", pv->arena, pv->mib_muzzy, &pv->len_muzzy, 4) &&
              pv_je_mib("stats.arenas.%u.small.allocated", pv->arena, pv->mib_small, &pv->len_small, 5) &&
              pv_je_mib("stats.arenas.%u.large.allocated", pv->arena, pv->mib_large, &pv->len_large, 5))) {
            return false;
        }
        /* No purging in this arena (decay -1: dirty and muzzy pages are kept), so the pages it
         * holds never decrease during the run and their count at any time is their peak so far:
         * one read at the end gives it exactly, without the cost of a refresh per malloc. */
        ssize_t never = -1;
        char name[64];
        snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", pv->arena);
        bool ok = je.mallctl(name, NULL, NULL, &never, sizeof never) == 0;
        snprintf(name, sizeof name, "arena.%u.muzzy_decay_ms", pv->arena);
        ok = ok && je.mallctl(name, NULL, NULL, &never, sizeof never) == 0;
        if (!ok) {
            return false;
        }
        view->malloc = pv_je_malloc;
        view->free = pv_je_free;
        *handle = pv;
        return true;
    }
    if (a == &bench_mimalloc && bench_peer_unavailable("mimalloc") == NULL) {
        peer_private_t *pv = &pv_mi;
        memset(pv, 0, sizeof *pv);
        pv->peer = a;
        pv->heap = mi.heap_new();
        if (pv->heap == NULL) {
            return false;
        }
        view->malloc = pv_mi_malloc;
        view->free = pv_mi_free;
        *handle = pv;
        return true;
    }
    return false;
}

void bench_peer_private_close(void *handle)
{
    peer_private_t *pv = handle;
    if (pv == NULL) {
        return;
    }
    if (pv->peer == &bench_jemalloc) {
        /* the caller has freed every block: flush the tcache, then drop the arena's pages */
        je.mallctl("tcache.destroy", NULL, NULL, &pv->tcache, sizeof pv->tcache);
        char name[64];
        snprintf(name, sizeof name, "arena.%u.destroy", pv->arena);
        je.mallctl(name, NULL, NULL, NULL, 0);
    } else if (pv->peer == &bench_mimalloc) {
        mi.heap_destroy(pv->heap);
    }
    pv->peer = NULL;
}

void bench_peers_print_unavailable(FILE *f)
{
    bool head = false;
    for (size_t i = 0; i < NPEER_LIBS; i++) {
        if (!peer_libs[i].loaded) {
            if (!head) {
                fprintf(f, "unavailable (not measured):\n");
                head = true;
            }
            fprintf(f, "  %-10s %s\n", peer_libs[i].a->name, peer_libs[i].why);
        }
    }
}

const char *bench_peer_unavailable(const char *name)
{
    for (size_t i = 0; i < NPEER_LIBS; i++) {
        if (strcmp(peer_libs[i].a->name, name) == 0) {
            return peer_libs[i].loaded ? NULL : peer_libs[i].why;
        }
    }
    return NULL;
}

const char *bench_peer_version(const rt_allocator_t *a)
{
    for (size_t i = 0; i < NPEER_LIBS; i++) {
        if (peer_libs[i].a == a && peer_libs[i].loaded) {
            return peer_libs[i].version;
        }
    }
    return NULL;
}

void bench_peers_footnote(FILE *f, const rt_allocator_t *const *allocs, size_t n)
{
    char names[128] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (allocs[i]->create == NULL && allocs[i] != &bench_noop) {
            int k = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", allocs[i]->name);
            if (k < 0 || (size_t)k >= sizeof names - len) {
                break;
            }
            len += (size_t)k;
        }
    }
    if (len != 0) {
        fprintf(f,
                "%s: memory obtained from the OS on demand, not pre-touched (first touches fall in the first\n"
                "  timed run; the per-op minimum of the two runs mostly removes them)\n",
                names);
    }
}

/* --- the combined list ----------------------------------------------------------------------- */

enum { BENCH_MAX_ALLOCATORS = 64 };

const rt_allocator_t *const *bench_allocators(size_t *count)
{
    static const rt_allocator_t *all[BENCH_MAX_ALLOCATORS];
    static size_t n;
    if (n == 0) {
        all[n++] = &bench_noop;
        all[n++] = &bench_glibc;
        for (size_t i = 0; i < NPEER_LIBS; i++) {
            if (peer_libs[i].loaded) {
                all[n++] = peer_libs[i].a;
            }
        }
        size_t k = 0;
        const rt_allocator_t *const *reg = rt_registry(&k);
        for (size_t i = 0; i < k && n < BENCH_MAX_ALLOCATORS; i++) {
            all[n++] = reg[i];
        }
    }
    *count = n;
    return all;
}

const rt_allocator_t *bench_find(const char *name)
{
    size_t n = 0;
    const rt_allocator_t *const *all = bench_allocators(&n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i]->name, name) == 0) {
            return all[i];
        }
    }
    return NULL;
}

bool bench_study_variant(const rt_allocator_t *a)
{
    static const char *const variants[] = {"wf32", "wf128", "wf256", "wf_ro", "wf_lazy"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        if (strcmp(a->name, variants[i]) == 0) {
            return true;
        }
    }
    return false;
}
