/*
 * bench/peers.c -- the noop calibration allocator and the glibc peer (peers.h).
 */
#include "peers.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

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

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
/* glibc's own accounting (mallinfo2): main arena plus mmapped chunks. Counters of operations
 * are not kept by glibc and stay 0; watermark is not known (0). */
static void glibc_stats(void *h, rt_stats_t *s)
{
    (void)h;
    struct mallinfo2 mi = mallinfo2();
    memset(s, 0, sizeof *s);
    s->capacity = mi.arena + mi.hblkhd;
    s->used_bytes = mi.uordblks + mi.hblkhd;
    s->free_bytes = mi.fordblks;
    s->used_blocks = 0;
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
};

/* --- the combined list ----------------------------------------------------------------------- */

enum { BENCH_MAX_ALLOCATORS = 64 };

const rt_allocator_t *const *bench_allocators(size_t *count)
{
    static const rt_allocator_t *all[BENCH_MAX_ALLOCATORS];
    static size_t n;
    if (n == 0) {
        all[n++] = &bench_noop;
        all[n++] = &bench_glibc;
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
