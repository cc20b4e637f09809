/* SPDX-License-Identifier: MIT */
/*
 * dropin_child.h -- the scenarios of the dropin test, run inside a child process whose malloc is
 * librtalloc-malloc.so (preloaded by tests/stress/dropin.c). Each scenario returns 0 when every check
 * passed; a failed check prints "FAIL <line>: <what>" on stdout. Attacks print the pointers they
 * pass ("ptr 0x...") before passing them, so the driver can find them in the library's report.
 */
#ifndef RT_DROPIN_CHILD_H
#define RT_DROPIN_CHILD_H

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int dc_failures;

#define DC_CHECK(cond, what)                                       \
    do {                                                           \
        if (!(cond)) {                                             \
            printf("FAIL %d: %s (%s)\n", __LINE__, (what), #cond); \
            dc_failures++;                                         \
        }                                                          \
    } while (0)

static int dc_done(void)
{
    (void)fflush(stdout);
    return dc_failures == 0 ? 0 : 1;
}

static void dc_ptr(const void *p)
{
    printf("ptr %p\n", p);
    (void)fflush(stdout);
}

static bool dc_aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1u)) == 0u; }

static void dc_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (unsigned char)(seed + i * 7u);
    }
}

static bool dc_holds(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != (unsigned char)(seed + i * 7u)) {
            return false;
        }
    }
    return true;
}

/* The heap still serves, keeps contents and frees: after an attack refused with
 * RTALLOC_ON_ERROR=continue, and after a fork. */
static void dc_heap_works(unsigned rounds, bool strict)
{
    unsigned served = 0;
    enum { N = 64 };
    unsigned char *p[N];
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned i = 0; i < N; i++) {
            size_t n = 1u + (i * 37u + r * 11u) % 3000u;
            p[i] = malloc(n);
            DC_CHECK(p[i] != NULL || !strict, "malloc after the event");
            if (p[i] != NULL) {
                served++;
                dc_fill(p[i], n, i + r);
            }
        }
        for (unsigned i = 0; i < N; i++) {
            size_t n = 1u + (i * 37u + r * 11u) % 3000u;
            DC_CHECK(p[i] == NULL || dc_holds(p[i], n, i + r), "content kept");
            free(p[i]);
        }
    }
    /* Not strict: after a damaged heap refused in continue mode, a size class may stay refused
     * (its list is quarantined), but the rest of the heap serves. */
    DC_CHECK(served >= rounds * N / 2u, "most allocations served after the event");
}

/* --- the family's semantics ----------------------------------------------------------------- */

static void dc_sizes(void)
{
    void *z1 = malloc(0), *z2 = malloc(0);
    DC_CHECK(z1 != NULL && z2 != NULL && z1 != z2, "malloc(0): unique pointers");
    free(z1);
    free(z2);
    for (size_t n = 1; n < 70000; n = n * 3 + 1) {
        unsigned char *p = malloc(n);
        DC_CHECK(p != NULL && dc_aligned(p, alignof(max_align_t)), "malloc aligned to max_align_t");
        DC_CHECK(malloc_usable_size(p) >= n, "usable size >= request");
        dc_fill(p, n, 3);
        unsigned char *q = realloc(p, n * 2);
        DC_CHECK(q != NULL && dc_aligned(q, alignof(max_align_t)) && dc_holds(q, n, 3), "realloc grows, keeps");
        unsigned char *r = realloc(q, n / 2 + 1);
        DC_CHECK(r != NULL && dc_holds(r, n / 2 + 1, 3), "realloc shrinks, keeps");
        free(r);
    }
    DC_CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
}

static void dc_calloc(void)
{
    for (size_t n = 8; n < 100000; n *= 5) {
        unsigned char *d = malloc(n);
        memset(d, 0xA5, n);
        free(d);
        unsigned char *c = calloc(n / 8, 8);
        bool zero = c != NULL;
        for (size_t i = 0; c != NULL && i < n; i++) {
            zero = zero && c[i] == 0;
        }
        DC_CHECK(zero, "calloc zeroes");
        free(c);
    }
    volatile size_t half = SIZE_MAX / 2; /* volatile: no compile-time overflow warning */
    errno = 0;
    DC_CHECK(calloc(half, 3) == NULL && errno == ENOMEM, "calloc overflow: NULL, ENOMEM");
    errno = 0;
    void *volatile p = malloc(16); /* volatile: p is still valid after the failed call */
    DC_CHECK(reallocarray(p, half, 3) == NULL && errno == ENOMEM, "reallocarray overflow");
    void *q = reallocarray(p, 10, 10);
    DC_CHECK(q != NULL && malloc_usable_size(q) >= 100, "reallocarray");
    free(q);
}

static void dc_aligned_family(void)
{
    void *p = NULL;
    size_t bad[] = {0, 1, 3, sizeof(void *) / 2, 24, 3 * sizeof(void *)};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 1234;
        DC_CHECK(posix_memalign(&p, bad[i], 16) == EINVAL && errno == 1234, "posix_memalign EINVAL");
    }
    for (size_t a = sizeof(void *); a <= 65536; a *= 2) {
        errno = 1234;
        DC_CHECK(posix_memalign(&p, a, 100) == 0 && dc_aligned(p, a) && errno == 1234, "posix_memalign");
        free(p);
    }
    for (size_t a = 1; a <= 65536; a *= 2) {
        void *q = aligned_alloc(a, 3 * a);
        void *r = memalign(a, 10);
        DC_CHECK(q != NULL && dc_aligned(q, a) && malloc_usable_size(q) >= 3 * a, "aligned_alloc");
        DC_CHECK(r != NULL && dc_aligned(r, a), "memalign");
        free(q);
        free(r);
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *v = valloc(10);
    void *w = pvalloc(page + 1);
    DC_CHECK(v != NULL && dc_aligned(v, page), "valloc page-aligned");
    DC_CHECK(w != NULL && dc_aligned(w, page) && malloc_usable_size(w) >= 2 * page, "pvalloc rounds up");
    free(v);
    free(w);
}

static int dc_semantics(void)
{
    dc_sizes();
    dc_calloc();
    dc_aligned_family();
    free(NULL);
    errno = 4321;
    free(malloc(10));
    DC_CHECK(errno == 4321, "free keeps errno");
    void *p = realloc(NULL, 10);
    DC_CHECK(p != NULL, "realloc(NULL, n)");
    DC_CHECK(realloc(p, 0) == NULL, "realloc(p, 0) frees");
    int local = 0;
    DC_CHECK(malloc_usable_size(&local) == 0, "usable size of a foreign pointer");
    DC_CHECK(malloc_trim(0) == 0 && mallopt(M_ARENA_MAX, 1) == 0, "malloc_trim, mallopt");
    void *live = malloc(1000);
    struct mallinfo2 mi = mallinfo2();
    DC_CHECK(mi.arena > 0 && mi.uordblks >= 1000, "mallinfo2 from the heap's stats");
    free(live);
    return dc_done();
}

/* --- out of memory (RTALLOC_HEAP small): NULL + ENOMEM, nothing printed ---------------------- */

static int dc_enomem(void)
{
    errno = 0;
    DC_CHECK(malloc(SIZE_MAX / 4u) == NULL && errno == ENOMEM, "malloc too large: ENOMEM");
    void *keep = malloc(100);
    memset(keep, 7, 100);
    errno = 0;
    DC_CHECK(realloc(keep, SIZE_MAX / 4u) == NULL && errno == ENOMEM, "realloc too large");
    DC_CHECK(((unsigned char *)keep)[99] == 7, "realloc failure keeps the block");
    void *p = NULL;
    DC_CHECK(posix_memalign(&p, 64, SIZE_MAX / 4u) == ENOMEM, "posix_memalign: ENOMEM");
    errno = 0;
    DC_CHECK(calloc(1, SIZE_MAX / 4u) == NULL && errno == ENOMEM, "calloc too large");
    void **all = NULL;
    size_t n = 0;
    for (;;) { /* exhaust with 64 KiB blocks, chained through their first word */
        void **b = malloc(65536);
        if (b == NULL) {
            DC_CHECK(errno == ENOMEM, "exhausted: ENOMEM");
            break;
        }
        *b = all;
        all = b;
        n++;
    }
    DC_CHECK(n > 0, "some blocks before exhaustion");
    while (all != NULL) {
        void **next = *all;
        free(all);
        all = next;
    }
    free(keep);
    dc_heap_works(2, true);
    return dc_done();
}

/* --- threads, and fork while they allocate ------------------------------------------------- */

static volatile int dc_stop;

/* Calls per thread; fewer where RT_DEBUG=2 checks the whole heap at every call. */
#if defined(RT_DEBUG) && RT_DEBUG >= 2
#define DC_HAMMER_ROUNDS 2000u
#else
#define DC_HAMMER_ROUNDS 20000u
#endif

static void *dc_hammer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    enum { SLOTS = 32 };
    unsigned char *slot[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    for (unsigned it = 0; it < DC_HAMMER_ROUNDS && !dc_stop; it++) {
        seed = seed * 1103515245u + 12345u;
        unsigned i = (seed >> 8) % SLOTS;
        size_t n = 1u + (seed >> 12) % 2000u;
        bool ok = slot[i] == NULL || dc_holds(slot[i], len[i], i + (unsigned)len[i]);
        if (slot[i] != NULL && (seed & 1u) != 0u) {
            unsigned old = i + (unsigned)len[i];
            size_t keep = len[i] < n ? len[i] : n;
            slot[i] = realloc(slot[i], n);
            ok = ok && (slot[i] == NULL || dc_holds(slot[i], keep, old));
        } else {
            free(slot[i]);
            slot[i] = malloc(n);
        }
        if (!ok) {
            printf("FAIL: a thread's block lost its content\n");
            __atomic_add_fetch(&dc_failures, 1, __ATOMIC_RELAXED);
        }
        len[i] = slot[i] != NULL ? n : 0;
        if (slot[i] != NULL) {
            dc_fill(slot[i], n, i + (unsigned)n);
        }
    }
    for (unsigned i = 0; i < SLOTS; i++) {
        free(slot[i]);
    }
    return NULL;
}

static int dc_run_threads(bool forking)
{
    enum { T = 4 };
    pthread_t t[T];
    for (unsigned i = 0; i < T; i++) {
        DC_CHECK(pthread_create(&t[i], NULL, dc_hammer, (void *)(uintptr_t)(i + 1u)) == 0, "thread");
    }
    for (unsigned f = 0; forking && f < 20; f++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(60); /* a child stuck on a lock dies of SIGALRM, the parent sees it */
            dc_heap_works(2, true);
            _exit(dc_failures == 0 ? 0 : 1);
        }
        int status = 0;
        DC_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork, wait");
        DC_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child allocates and exits 0");
    }
    for (unsigned i = 0; i < T; i++) {
        (void)pthread_join(t[i], NULL);
    }
    dc_heap_works(1, true);
    return dc_done();
}

/* --- attacks: the report names the call and the pointer -------------------------------------- */

static int dc_double_free(void)
{
    void *keep = malloc(48);
    void *p = malloc(48);
    dc_ptr(p); /* before the first free: printf's buffer must not take p's place */
    free(p);
    free(p);
    free(keep);
    dc_heap_works(2, true);
    return dc_done();
}

/* A forged block: the 64 bytes in front of a real block (its header) copied into the middle of a
 * block of ours, then freed there. */
static int dc_forged(void)
{
    unsigned char *real = malloc(64);
    unsigned char *room = malloc(4096);
    memset(room, 0, 4096);
    memcpy(room + 1024, real - 64, 128);
    dc_ptr(room + 1088);
    free(room + 1088);
    free(real);
    free(room);
    dc_heap_works(2, true);
    return dc_done();
}

static int dc_interior(void)
{
    unsigned char *p = malloc(1000);
    dc_ptr(p + 256);
    free(p + 256);
    free(p);
    dc_heap_works(2, true);
    return dc_done();
}

/* Writes 16 bytes past the end of a block into what follows it, then uses the heap. With a
 * header in front of every block (the boundary-tag heaps, the trees) that is the next block's
 * header, caught by free. The allocators with metadata out of band (buddy, pages: a block ends
 * exactly where the next begins) have nothing to damage in a used neighbour: there the neighbour
 * is freed first, and the overflow hits its free-list links, caught by the malloc that takes it
 * (reported with the size, or the block, of that malloc). */
static int dc_overflow(void)
{
    enum { N = 32 };
    unsigned char *b[N], *p = NULL, *q = NULL;
    for (unsigned i = 0; i < N; i++) {
        b[i] = malloc(100);
    }
    for (unsigned i = 0; i < N && p == NULL; i++) {
        for (unsigned j = 0; j < N && p == NULL; j++) {
            if (b[i] + malloc_usable_size(b[i]) == b[j]) {
                p = b[i];
                q = b[j];
                b[i] = b[j] = NULL;
            }
        }
    }
    if (p != NULL) { /* out of band */
        dc_ptr(p);
        dc_ptr(q);
        printf("ptr 100\n"); /* malloc(100) */
        (void)fflush(stdout);
        free(q);
        memset(p, 0x41, malloc_usable_size(p) + 16u);
        for (unsigned i = 0; i < 4; i++) {
            free(malloc(100));
        }
    } else {
        p = malloc(100);
        q = malloc(100);
        dc_ptr(p);
        dc_ptr(q);
        memset(p, 0x41, malloc_usable_size(p) + 16u);
        free(q);
    }
    free(p);
    for (unsigned i = 0; i < N; i++) {
        free(b[i]);
    }
    dc_heap_works(2, false);
    return dc_done();
}

/* The commonest overflow: memcpy(dst, src, n) one word too long where src is a heap block too, so
 * the word written past dst is the word read past src -- ANOTHER block's valid metadata (its
 * successor's header; with metadata out of band, a free block's link). Tags bound to their place
 * refuse it: caught by the free (or, out of band, the malloc) that meets it. */
static int dc_copy(void)
{
    enum { N = 32 };
    unsigned char *b[N], *p = NULL, *q = NULL;
    for (unsigned i = 0; i < N; i++) {
        b[i] = malloc(100);
    }
    size_t w = sizeof(size_t);
    for (unsigned i = 0; i < N && p == NULL; i++) {
        for (unsigned j = 0; j < N && p == NULL; j++) {
            if (b[i] + malloc_usable_size(b[i]) == b[j]) { /* out of band: no header between */
                p = b[i];
                q = b[j];
                b[i] = b[j] = NULL;
            }
        }
    }
    if (p != NULL) { /* out of band: q and a source block freed, q's link overwritten by the source's */
        unsigned char *src = b[N - 1];
        b[N - 1] = NULL;
        dc_ptr(p);
        dc_ptr(q);
        printf("ptr 100\n"); /* malloc(100) */
        (void)fflush(stdout);
        free(src);
        free(q);
        unsigned char word[sizeof(size_t)];
        memcpy(word, src, w); /* the source's free-list link: read after its free, as an overrun would */
        memcpy(p + malloc_usable_size(p), word, w);
        for (unsigned i = 0; i < 4; i++) {
            free(malloc(100));
        }
    } else { /* a header in front of every block: p's successor's header gets src's successor's */
        p = malloc(100);
        q = malloc(100);
        unsigned char *src = malloc(100), *after = malloc(100);
        dc_ptr(p);
        dc_ptr(q);
        memcpy(p, src, malloc_usable_size(p) + w);
        free(p); /* meets q's header */
        free(after);
        free(src);
        free(q);
        p = NULL;
    }
    free(p);
    for (unsigned i = 0; i < N; i++) {
        free(b[i]);
    }
    dc_heap_works(2, false);
    return dc_done();
}

static int dc_realloc_interior(void)
{
    unsigned char *p = malloc(1000);
    dc_ptr(p + 256);
    void *r = realloc(p + 256, 2000);
    DC_CHECK(r == NULL, "realloc of an interior pointer refused");
    free(p);
    dc_heap_works(2, true);
    return dc_done();
}

static int dc_realloc_foreign(void)
{
    static char not_ours[64];
    dc_ptr(not_ours);
    void *r = realloc(not_ours, 100);
    DC_CHECK(r == NULL, "realloc of a foreign pointer refused");
    dc_heap_works(1, true);
    return dc_done();
}

static int dc_free_foreign(void)
{
    static char not_ours[64];
    dc_ptr(not_ours);
    errno = 1234;
    free(not_ours);
    DC_CHECK(errno == 1234, "free of a foreign pointer keeps errno");
    dc_heap_works(1, true);
    return dc_done();
}

/* Allocates, then closes stderr before exit, as sort and xz do: RTALLOC_STATS=1's line must
 * still reach the stderr the program was started with. */
static int dc_close_stderr(void)
{
    void *p = malloc(1000);
    DC_CHECK(p != NULL, "malloc");
    free(p);
    int rc = dc_done();
    (void)fclose(stderr);
    return rc;
}

/* Resident bytes of this process (/proc/self/statm); 0 when unknown. */
static size_t dc_resident(void)
{
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) {
        return 0;
    }
    int n = fscanf(f, "%lu %lu", &size, &resident);
    (void)fclose(f);
    return n == 2 ? (size_t)resident * (size_t)sysconf(_SC_PAGESIZE) : 0u;
}

/* Large blocks are not touched by the allocator: malloc of 40 MiB adds at most 8 MiB resident
 * (headers, a guard: a few pages), and so does calloc when the allocator was created over the
 * zeroed mapping (argument `zeroed`: the descriptor has create_zeroed, which the drop-in uses).
 * Every byte of the calloc'd block still reads zero. Not run on the trees' small heaps. */
static int dc_large_untouched(bool zeroed)
{
    const size_t big = (size_t)40 << 20, slack = (size_t)8 << 20;
    size_t before = dc_resident();
    unsigned char *m = malloc(big);
    size_t after_malloc = dc_resident();
    DC_CHECK(m != NULL, "malloc of 40 MiB");
    DC_CHECK(before != 0u && after_malloc - before <= slack, "malloc of 40 MiB touched at most 8 MiB");
    unsigned char *c = calloc(big / 4096u, 4096u);
    size_t after_calloc = dc_resident();
    DC_CHECK(c != NULL, "calloc of 40 MiB");
    if (zeroed) {
        DC_CHECK(after_calloc - after_malloc <= slack, "calloc of 40 MiB on fresh pages touched at most 8 MiB");
    }
    bool zero = c != NULL;
    for (size_t i = 0; zero && i < big; i += 4096u) {
        zero = c[i] == 0u && c[i + 4095u] == 0u;
    }
    DC_CHECK(zero, "calloc'd block reads zero");
    printf("resident: +%zu KiB after malloc, +%zu KiB after calloc\n", (after_malloc - before) >> 10,
           (after_calloc - after_malloc) >> 10);
    free(c);
    free(m);
    return dc_done();
}

static int dc_large_untouched_any(void) { return dc_large_untouched(false); }
static int dc_large_untouched_zeroed(void) { return dc_large_untouched(true); }

static int dc_child(const char *mode)
{
    static const struct {
        const char *name;
        int (*run)(void);
    } modes[] = {{"semantics", dc_semantics},
                 {"enomem", dc_enomem},
                 {"double_free", dc_double_free},
                 {"forged", dc_forged},
                 {"interior", dc_interior},
                 {"overflow", dc_overflow},
                 {"copy", dc_copy},
                 {"realloc_foreign", dc_realloc_foreign},
                 {"realloc_interior", dc_realloc_interior},
                 {"free_foreign", dc_free_foreign},
                 {"close_stderr", dc_close_stderr},
                 {"large_untouched", dc_large_untouched_any},
                 {"large_untouched_zeroed", dc_large_untouched_zeroed}};
    if (strcmp(mode, "threads") == 0 || strcmp(mode, "fork") == 0) {
        return dc_run_threads(strcmp(mode, "fork") == 0);
    }
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(mode, modes[i].name) == 0) {
            return modes[i].run();
        }
    }
    printf("FAIL: unknown mode %s\n", mode);
    return 2;
}

#endif /* RT_DROPIN_CHILD_H */
