/* SPDX-License-Identifier: MIT */
/*
 * drivers/malloc.c -- librtalloc-malloc.so: the C library's malloc family over one allocator of
 * the registry, for LD_PRELOAD or for linking (-lrtalloc-malloc). Documented in doc/malloc.md.
 *
 * Design, in the order a call meets it:
 *
 *   one region    At the first call (from the dynamic loader, a constructor, or several threads
 *                 at once), or at load if none came first, the library reads its environment,
 *                 reserves RTALLOC_HEAP bytes with one mmap(MAP_NORESERVE) and creates the
 *                 allocator RTALLOC over it. Untouched pages cost nothing; the region never
 *                 grows. Initialisation allocates nothing (getenv, mmap, the allocator's create,
 *                 write) and runs under its own mutex; a call that would re-enter it on the same
 *                 thread aborts with a message rather than deadlock. The ready flag is published
 *                 with a release store; the fast path of every call is one acquire load of it.
 *   locking       The allocators that need a lock get a pthread mutex through their lock hooks
 *                 (set_lock); the wait-free trees (descriptor.thread_safe) get none, so they keep
 *                 their progress guarantee: no thread ever waits for another in malloc or free.
 *   fork          pthread_atfork: prepare takes the init mutex and the heap mutex (registered at
 *                 the first call, so it runs after every handler registered later, which may
 *                 still allocate); the parent releases them; the child re-initialises them, so
 *                 a child forked while another thread was inside malloc allocates at once. A
 *                 wait-free tree needs no lock for this: a lock-free algorithm stays correct with
 *                 any thread stopped forever at any step, which is what a fork leaves of the
 *                 other threads; what such a thread was allocating is lost to the child.
 *   alignment     Every pointer is aligned to alignof(max_align_t) (16 on x86-64), as glibc's;
 *                 an allocator whose own alignment is smaller (the wait-free trees: 4) is asked
 *                 through its memalign.
 *   foreign       A pointer outside the region (garbage, a block of another allocator, or memory
 *                 of ld.so's minimal malloc from before the library was reached -- none of
 *                 sqlite3, lua5.4 and python3 frees one) is never handed to the allocator: free
 *                 and realloc report it as bad input (below; free counts it too, printed by
 *                 RTALLOC_STATS), malloc_usable_size returns 0.
 *   bad input     Pointers inside the region go to the allocator, which refuses what is not a
 *                 live block and reports it to our handler: one line on stderr, written with
 *                 write(2) (never stdio, which may allocate or hold a lock), then abort()
 *                 (RTALLOC_ON_ERROR=abort, the default) or the call stays refused (continue).
 *                 Requests that cannot be met (too large, overflow) are not bad input: they
 *                 return NULL with errno ENOMEM and print nothing.
 *
 * Environment (read once, at initialisation): RTALLOC=<name> (default tlsf),
 * RTALLOC_HEAP=<n>[K|M|G] (default RTALLOC_DEFAULT_HEAP, RTALLOC_DEFAULT_TREE_HEAP for the trees),
 * RTALLOC_MLOCK=1, RTALLOC_ON_ERROR=abort|continue (default abort), RTALLOC_STATS=1 (statistics
 * on stderr at exit, through a copy of file descriptor 2 taken at initialisation, so that the line
 * survives a program that closes stderr before it exits) or RTALLOC_STATS=<path> (appended to
 * that file, opened at initialisation). doc/malloc.md has the figures and the limitations.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rtalloc/drivers.h"
#include "rtalloc/registry.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Default heap (doc/malloc.md has the measurements): 1 GiB of address space on 64-bit, of
 * which create touches only the allocator's metadata (8 KiB for the heaps, 1/32 for the buddy,
 * under 1% for the page allocators); 256 MiB where address space is scarce (32-bit). The wait-free
 * trees keep their metadata in every node, so create touches the whole buffer (1 GiB: 1 GiB
 * resident and 6 s), and a small malloc may visit a number of nodes that doubles with each
 * level of the tree: 16 MiB for them, and for the tree behind per-thread caches (wfc). */
#ifndef RTALLOC_DEFAULT_HEAP
#if UINTPTR_MAX > 0xFFFFFFFFu
#define RTALLOC_DEFAULT_HEAP ((size_t)1 << 30)
#else
#define RTALLOC_DEFAULT_HEAP ((size_t)256 << 20)
#endif
#endif
#ifndef RTALLOC_DEFAULT_TREE_HEAP
#define RTALLOC_DEFAULT_TREE_HEAP ((size_t)16 << 20)
#endif

#define MIN_ALIGN alignof(max_align_t)

static struct {
    const rt_allocator_t *a;
    void *h;
    uintptr_t base; /* the region [base, base + size) */
    size_t size;
    size_t page;
    bool low_align; /* a->alignment < MIN_ALIGN: malloc goes through memalign */
    bool locked;    /* the heap mutex is installed */
    bool abort_on_error;
    int stats_fd; /* where the statistics go at exit: -1 none (RTALLOC_STATS) */
    pthread_mutex_t lock;
    atomic_size_t foreign_frees;
    pthread_key_t exit_key; /* its destructor gives a thread's cache or heap back */
    bool has_exit_key;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static atomic_int g_ready;
static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;
/* Initial-exec: reaching these never calls __tls_get_addr, which may allocate. */
static __thread __attribute__((tls_model("initial-exec"))) bool t_in_init;
static __thread __attribute__((tls_model("initial-exec"))) bool t_misuse;
/* The call a report of the allocator's usable_size belongs to (realloc asks it too). */
static __thread __attribute__((tls_model("initial-exec"))) const char *t_usable_caller;
/* The thread's exit key is set (its destructor will give the thread's cache or heap back). */
static __thread __attribute__((tls_model("initial-exec"))) bool t_exit_noted;

/* --- formatting without stdio ------------------------------------------------------------------ */

typedef struct {
    char text[512];
    size_t len;
} line_t;

static void put_str(line_t *l, const char *s)
{
    while (s != NULL && *s != '\0' && l->len < sizeof l->text) {
        l->text[l->len++] = *s++;
    }
}

static void put_num(line_t *l, uintmax_t v, unsigned base)
{
    char digits[32];
    size_t n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0u);
    if (base == 16u) {
        put_str(l, "0x");
    }
    while (n > 0u && l->len < sizeof l->text) {
        l->text[l->len++] = digits[--n];
    }
}

static void put_line_to(int fd, line_t *l)
{
    if (l->len == sizeof l->text) {
        l->len--;
    }
    l->text[l->len++] = '\n';
    size_t done = 0;
    while (done < l->len) {
        ssize_t w = write(fd, l->text + done, l->len - done);
        if (w <= 0 && errno != EINTR) {
            return;
        }
        done += w > 0 ? (size_t)w : 0u;
    }
}

static void put_line(line_t *l) { put_line_to(STDERR_FILENO, l); }

/* "rtalloc-malloc: <a><b><c>", then abort. */
static _Noreturn void die(const char *a, const char *b, const char *c)
{
    line_t l = {.len = 0};
    put_str(&l, "rtalloc-malloc: ");
    put_str(&l, a);
    put_str(&l, b);
    put_str(&l, c);
    put_line(&l);
    abort();
}

/* strerror may allocate (translations): the number only. */
static void die_errno(const char *what, int error, bool fatal)
{
    line_t l = {.len = 0};
    put_str(&l, "rtalloc-malloc: ");
    put_str(&l, what);
    put_str(&l, ": errno ");
    put_num(&l, (uintmax_t)error, 10u);
    put_line(&l);
    if (fatal) {
        abort();
    }
}

/* --- the heap's error handler ------------------------------------------------------------------ */

/* Misuse (a pointer that is not a live block, a damaged heap) is printed; a request that cannot
 * be met is the caller's ENOMEM and prints nothing. Called with no lock held. */
static void on_error(void *context, const rt_error_t *e)
{
    (void)context;
    if (e->kind < RT_ERR_FOREIGN_POINTER || e->kind > RT_ERR_CORRUPTED) {
        return;
    }
    t_misuse = true;
    int saved = errno;
    line_t l = {.len = 0};
    put_str(&l, "rtalloc-malloc: ");
    const char *call = e->operation != NULL ? e->operation : "?";
    if (strcmp(call, "usable_size") == 0) {
        call = t_usable_caller != NULL ? t_usable_caller : "malloc_usable_size";
    }
    put_str(&l, call);
    put_str(&l, "(");
    if (e->pointer != NULL || e->size == 0u) {
        put_num(&l, (uintptr_t)e->pointer, 16u);
    } else {
        put_num(&l, e->size, 10u);
    }
    put_str(&l, "): ");
    put_str(&l, e->message);
    put_str(&l, g.abort_on_error ? " (aborting; RTALLOC_ON_ERROR=continue to go on)" : " (refused)");
    put_line(&l);
    if (g.abort_on_error) {
        abort();
    }
    errno = saved;
}

/* --- configuration ----------------------------------------------------------------------------- */

/* "<digits>[K|M|G]" -> bytes; false on anything else or on overflow. */
static bool parse_size(const char *s, size_t *out)
{
    size_t v = 0;
    if (*s < '0' || *s > '9') {
        return false;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        size_t d = (size_t)(*s - '0');
        if (v > (SIZE_MAX - d) / 10u) {
            return false;
        }
        v = v * 10u + d;
    }
    unsigned shift = 0;
    switch (*s) {
    case 'k':
    case 'K':
        shift = 10;
        s++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        s++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        s++;
        break;
    default: break;
    }
    if (*s != '\0' || v == 0u || (shift != 0u && v > (SIZE_MAX >> shift))) {
        return false;
    }
    *out = v << shift;
    return true;
}

static _Noreturn void die_unknown(const char *name)
{
    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
    line_t l = {.len = 0};
    put_str(&l, "rtalloc-malloc: RTALLOC=");
    put_str(&l, name);
    put_str(&l, ": no such allocator; valid names:");
    for (size_t i = 0; i < count; i++) {
        put_str(&l, " ");
        put_str(&l, all[i]->name);
    }
    put_line(&l);
    abort();
}

static _Noreturn void die_setting(const char *name, const char *value, const char *expected)
{
    line_t l = {.len = 0};
    put_str(&l, "rtalloc-malloc: ");
    put_str(&l, name);
    put_str(&l, "=");
    put_str(&l, value);
    put_str(&l, ": ");
    put_str(&l, expected);
    put_line(&l);
    abort();
}

static bool env_flag(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0) {
        return false;
    }
    if (strcmp(v, "1") != 0) {
        die_setting(name, v, "expected 0 or 1");
    }
    return true;
}

static void read_config(size_t *heap, bool *mlock_it)
{
    const char *name = getenv("RTALLOC");
    if (name == NULL || *name == '\0') {
        name = "tlsf";
    }
    g.a = rt_registry_find(name);
    if (g.a == NULL) {
        die_unknown(name);
    }
    const char *size = getenv("RTALLOC_HEAP");
    bool tree = g.a->family == RT_FAMILY_TREE || g.a->family == RT_FAMILY_TREE_CACHED;
    *heap = tree ? RTALLOC_DEFAULT_TREE_HEAP : RTALLOC_DEFAULT_HEAP;
    if (size != NULL && *size != '\0' && !parse_size(size, heap)) {
        die_setting("RTALLOC_HEAP", size, "expected <bytes>[K|M|G] above 0, e.g. 256M");
    }
    const char *on_error = getenv("RTALLOC_ON_ERROR");
    g.abort_on_error = true;
    if (on_error != NULL && strcmp(on_error, "continue") == 0) {
        g.abort_on_error = false;
    } else if (on_error != NULL && *on_error != '\0' && strcmp(on_error, "abort") != 0) {
        die_setting("RTALLOC_ON_ERROR", on_error, "expected abort or continue");
    }
    *mlock_it = env_flag("RTALLOC_MLOCK");
    /* RTALLOC_STATS: 0 or empty: nothing; 1: a private copy of stderr (a program may close fd 2
     * before the destructor runs: sort, xz); anything else: a file to append to */
    g.stats_fd = -1;
    const char *stats = getenv("RTALLOC_STATS");
    if (stats != NULL && *stats != '\0' && strcmp(stats, "0") != 0) {
        g.stats_fd = strcmp(stats, "1") == 0 ? fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 100)
                                             : open(stats, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (g.stats_fd < 0 && strcmp(stats, "1") != 0) {
            die_setting("RTALLOC_STATS", stats, "0, 1 or a file that can be opened for appending");
        }
    }
}

/* --- initialisation and fork ------------------------------------------------------------------- */

static uintptr_t heap_lock(void *m)
{
    (void)pthread_mutex_lock(m);
    return 0;
}

static void heap_unlock(void *m, uintptr_t token)
{
    (void)token;
    (void)pthread_mutex_unlock(m);
}

static void fork_prepare(void)
{
    (void)pthread_mutex_lock(&g_init_lock);
    if (g.locked) {
        (void)pthread_mutex_lock(&g.lock);
    }
}

static void fork_parent(void)
{
    if (g.locked) {
        (void)pthread_mutex_unlock(&g.lock);
    }
    (void)pthread_mutex_unlock(&g_init_lock);
}

/* The child has one thread, the one that forked, which holds both mutexes. */
static void fork_child(void)
{
    (void)pthread_mutex_init(&g.lock, NULL);
    (void)pthread_mutex_init(&g_init_lock, NULL);
}

/* A thread ends: what the allocator keeps for it (wfc's cache, tlsfmc's heap) goes back, so that
 * a program that starts and ends threads strands nothing. A later call of the same thread (another
 * destructor) notes it again, and the next round of destructors gives back again. */
static void thread_gone(void *value)
{
    (void)value;
    t_exit_noted = false;
    g.a->thread_exit(g.h);
}

static __attribute__((noinline, cold)) void note_thread_slow(void)
{
    t_exit_noted = true;
    (void)pthread_setspecific(g.exit_key, (void *)1); /* keys below 32 allocate nothing */
}

static inline void note_thread(void)
{
    if (g.has_exit_key && UNLIKELY(!t_exit_noted)) {
        note_thread_slow();
    }
}

static void create_heap(size_t size, bool mlock_it)
{
    long page = sysconf(_SC_PAGESIZE);
    g.page = page > 0 ? (size_t)page : 4096u;
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        die_errno("mmap of the heap (RTALLOC_HEAP bytes) failed", errno, true);
    }
    if (mlock_it && mlock(mem, size) != 0) {
        die_errno("RTALLOC_MLOCK=1: mlock failed, the heap is not pinned", errno, false);
    }
    rt_set_entropy(rt_entropy_os, NULL); /* a new key per process: no stale metadata verifies */
    /* a fresh mapping is zero: an allocator that can use it (the FMA) leaves what it never
     * handed out untouched, so calloc of large blocks costs no page */
    g.h = g.a->create_zeroed != NULL ? g.a->create_zeroed(mem, size) : g.a->create(mem, size);
    if (g.h == NULL) {
        die("RTALLOC_HEAP is too small for allocator ", g.a->name, "");
    }
    g.base = (uintptr_t)mem;
    g.size = size;
    g.low_align = g.a->alignment < MIN_ALIGN;
    g.a->set_handler(g.h, on_error, NULL);
    if (!g.a->thread_safe && g.a->set_lock != NULL) {
        g.a->set_lock(g.h, heap_lock, heap_unlock, &g.lock);
        g.locked = true;
    }
    if (g.a->thread_exit != NULL) {
        g.has_exit_key = pthread_key_create(&g.exit_key, thread_gone) == 0;
    }
}

static __attribute__((noinline, cold)) void init_slow(void)
{
    if (t_in_init) {
        die("allocation during initialisation", "", "");
    }
    (void)pthread_mutex_lock(&g_init_lock);
    if (atomic_load_explicit(&g_ready, memory_order_relaxed) == 0) {
        t_in_init = true;
        size_t size = 0;
        bool mlock_it = false;
        read_config(&size, &mlock_it);
        create_heap(size, mlock_it);
        t_in_init = false;
        atomic_store_explicit(&g_ready, 1, memory_order_release); /* pairs with ensure_init */
        /* After ready: registering may allocate (the heap is there to serve it). */
        (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
    (void)pthread_mutex_unlock(&g_init_lock);
}

static inline void ensure_init(void)
{
    if (UNLIKELY(atomic_load_explicit(&g_ready, memory_order_acquire) == 0)) { /* pairs with init_slow */
        init_slow();
    }
}

/* At load, if no call came first: a bad setting is reported, and RTALLOC_MLOCK pins the heap, at
 * start-up even in a program that never allocates. */
static __attribute__((constructor)) void init_at_load(void) { ensure_init(); }

/* True for a pointer of the region; false for any pointer before initialisation. */
static inline bool ours(const void *p)
{
    return atomic_load_explicit(&g_ready, memory_order_acquire) != 0 && (uintptr_t)p - g.base < g.size;
}

/* --- the family -------------------------------------------------------------------------------- */

static void *alloc_aligned(size_t alignment, size_t size)
{
    ensure_init();
    note_thread();
    void *p = g.a->memalign(g.h, alignment < MIN_ALIGN ? MIN_ALIGN : alignment, size == 0u ? 1u : size);
    if (p == NULL) {
        errno = ENOMEM;
    }
    return p;
}

EXPORT void *malloc(size_t size)
{
    ensure_init();
    note_thread();
    if (g.low_align) {
        return alloc_aligned(MIN_ALIGN, size);
    }
    void *p = g.a->malloc(g.h, size == 0u ? 1u : size);
    if (UNLIKELY(p == NULL)) {
        errno = ENOMEM;
    }
    return p;
}

/* A pointer that is not of the region cannot be freed (and cannot harm the heap): bad input like
 * any other, counted and reported. */
static __attribute__((noinline, cold)) void free_foreign(void *ptr)
{
    atomic_fetch_add_explicit(&g.foreign_frees, 1u, memory_order_relaxed);
    ensure_init(); /* the settings decide between abort and continue */
    rt_error_t e = {RT_ERR_FOREIGN_POINTER, "free", "pointer is not from this heap", ptr, 0};
    int saved = errno;
    on_error(NULL, &e);
    errno = saved;
}

EXPORT void free(void *ptr)
{
    if (ptr == NULL) {
        return;
    }
    if (UNLIKELY(!ours(ptr))) {
        free_foreign(ptr);
        return;
    }
    int saved = errno;
    g.a->free(g.h, ptr);
    errno = saved;
}

EXPORT void *calloc(size_t count, size_t size)
{
    if (size != 0u && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    size_t n = count * size;
    ensure_init();
    note_thread();
    if (n != 0u && !g.low_align && g.a->calloc != NULL) {
        /* the allocator's own: it may know memory to be zero already (the FMA's fresh pages) */
        void *p = g.a->calloc(g.h, n, 1u);
        if (UNLIKELY(p == NULL)) {
            errno = ENOMEM;
        }
        return p;
    }
    void *p = malloc(n);
    if (p != NULL) {
        memset(p, 0, n);
    }
    return p;
}

/* realloc for the allocators whose own alignment is below MIN_ALIGN: in place while it fits,
 * else a new aligned block, so the result is always aligned and `ptr` survives a failure. */
static void *realloc_low_align(void *ptr, size_t size)
{
    t_usable_caller = "realloc";
    size_t have = g.a->usable_size(g.h, ptr);
    t_usable_caller = NULL;
    if (have == 0u) { /* not a live block: reported by the allocator */
        errno = EINVAL;
        return NULL;
    }
    if (size <= have) {
        return ptr;
    }
    void *q = alloc_aligned(MIN_ALIGN, size);
    if (q != NULL) {
        memcpy(q, ptr, have);
        g.a->free(g.h, ptr);
    }
    return q;
}

static void *realloc_foreign(void *ptr, size_t size)
{
    rt_error_t e = {RT_ERR_FOREIGN_POINTER, "realloc", "pointer is not from this heap (its size is unknown)", ptr,
                    size};
    on_error(NULL, &e);
    errno = EINVAL;
    return NULL;
}

EXPORT void *realloc(void *ptr, size_t size)
{
    if (ptr == NULL) {
        return malloc(size);
    }
    if (UNLIKELY(!ours(ptr))) {
        return realloc_foreign(ptr, size);
    }
    if (size == 0u) { /* glibc: frees and returns NULL */
        free(ptr);
        return NULL;
    }
    note_thread();
    t_misuse = false;
    void *p = g.low_align ? realloc_low_align(ptr, size) : g.a->realloc(g.h, ptr, size);
    if (p == NULL) {
        errno = t_misuse ? EINVAL : ENOMEM;
    }
    return p;
}

EXPORT void *reallocarray(void *ptr, size_t count, size_t size)
{
    if (size != 0u && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(ptr, count * size);
}

static bool power_of_two(size_t v) { return v != 0u && (v & (v - 1u)) == 0u; }

EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!power_of_two(alignment) || alignment % sizeof(void *) != 0u) {
        return EINVAL;
    }
    int saved = errno;
    void *p = alloc_aligned(alignment, size);
    errno = saved;
    if (p == NULL) {
        return ENOMEM;
    }
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    if (!power_of_two(alignment)) { /* as glibc 2.38 */
        errno = EINVAL;
        return NULL;
    }
    return alloc_aligned(alignment, size);
}

/* glibc: an alignment that is not a power of two is rounded up to one. */
EXPORT void *memalign(size_t alignment, size_t size)
{
    if (alignment > SIZE_MAX / 2u + 1u) {
        errno = EINVAL;
        return NULL;
    }
    size_t a = 1;
    while (a < alignment) {
        a <<= 1;
    }
    return alloc_aligned(a, size);
}

EXPORT void *valloc(size_t size)
{
    ensure_init();
    return alloc_aligned(g.page, size);
}

EXPORT void *pvalloc(size_t size)
{
    ensure_init();
    size_t rounded = size == 0u ? g.page : (size + g.page - 1u) & ~(g.page - 1u);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return alloc_aligned(g.page, rounded);
}

EXPORT size_t malloc_usable_size(void *ptr)
{
    if (ptr == NULL || !ours(ptr)) {
        return 0;
    }
    return g.a->usable_size(g.h, ptr);
}

/* --- the rest of <malloc.h> that programs call ----------------------------------------------- */

/* The region is never given back: nothing to trim. */
EXPORT int malloc_trim(size_t pad)
{
    (void)pad;
    return 0;
}

/* No tunable applies: 0, "not done", as glibc answers an unknown parameter. */
EXPORT int mallopt(int param, int value)
{
    (void)param;
    (void)value;
    return 0;
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
EXPORT struct mallinfo2 mallinfo2(void)
{
    ensure_init();
    rt_stats_t s;
    g.a->stats(g.h, &s);
    struct mallinfo2 m;
    memset(&m, 0, sizeof m);
    m.arena = s.capacity;
    m.ordblks = s.free_blocks;
    m.usmblks = s.peak_used;
    m.uordblks = s.used_bytes;
    m.fordblks = s.free_bytes;
    m.keepcost = s.largest_free;
    return m;
}
#endif

static void print_stats(int fd)
{
    rt_stats_t s;
    g.a->stats(g.h, &s);
    line_t l = {.len = 0};
    put_str(&l, "rtalloc-malloc: stats: pid ");
    put_num(&l, (uintmax_t)getpid(), 10u);
    put_str(&l, ", allocator ");
    put_str(&l, g.a->name);
    put_str(&l, ", heap ");
    put_num(&l, g.size, 10u);
    put_str(&l, ", capacity ");
    put_num(&l, s.capacity, 10u);
    put_str(&l, ", peak_used ");
    put_num(&l, s.peak_used, 10u);
    put_str(&l, ", watermark ");
    put_num(&l, s.watermark, 10u);
    put_str(&l, ", used_bytes ");
    put_num(&l, s.used_bytes, 10u);
    put_str(&l, ", used_blocks ");
    put_num(&l, s.used_blocks, 10u);
    put_str(&l, ", mallocs ");
    put_num(&l, s.mallocs, 10u);
    put_str(&l, ", frees ");
    put_num(&l, s.frees, 10u);
    put_str(&l, ", reallocs ");
    put_num(&l, s.reallocs, 10u);
    put_str(&l, ", failures ");
    put_num(&l, s.failures, 10u);
    put_str(&l, ", errors ");
    put_num(&l, s.errors, 10u);
    put_str(&l, ", foreign_frees ");
    put_num(&l, atomic_load_explicit(&g.foreign_frees, memory_order_relaxed), 10u);
    put_line_to(fd, &l);
}

EXPORT void malloc_stats(void)
{
    ensure_init();
    print_stats(STDERR_FILENO);
}

static __attribute__((destructor)) void stats_at_exit(void)
{
    if (atomic_load_explicit(&g_ready, memory_order_acquire) != 0 && g.stats_fd >= 0) {
        print_stats(g.stats_fd);
    }
}
