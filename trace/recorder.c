/* SPDX-License-Identifier: MIT */
/*
 * trace/recorder.c -- librtalloc-trace.so, the LD_PRELOAD recorder of `rtbench trace record`.
 *
 * Interposes malloc, free, calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign,
 * valloc and pvalloc, forwards each to glibc's own entry points (__libc_malloc & co., exported by
 * glibc for exactly this: no dlsym, so no recursion through dlsym's own allocations) and logs the
 * call as a fixed-size record in the raw log of rawlog.h. malloc_usable_size is not interposed:
 * glibc owns every block.
 *
 * It never allocates: no stdio, no malloc; the log is a file written through MAP_SHARED windows
 * (so nothing is lost at exec, _exit or a crash), its name built by hand. Cost per call: one
 * fetch_add on a shared counter, an acquire load of the window pointer, 24 bytes stored (about
 * 40 ns on the project's VM, most of it the locked add and the log's cold lines); one madvise
 * prefaulting the next 256 KiB every 10,922 records; an open, ftruncate, mmap and close every
 * 524,288 records. realloc(p, n) logs two records (before and after), every other call one.
 *
 * Robustness:
 *   recursion  a thread-local guard: a call made while the thread is inside the recorder (pthread_
 *              atfork's own allocation, a signal handler) is forwarded unrecorded;
 *   threads    slots come from one atomic counter; small thread ids from another, kept in
 *              initial-exec TLS (no allocation on first access: the library is preloaded);
 *   fork       the child handler drops the parent's windows (never writes the parent's file) and
 *              opens a log of its own;
 *   exec       the new image loads the recorder again from LD_PRELOAD and opens a new log (the
 *              O_EXCL loop gives it a new name: exec keeps the pid);
 *   early      calls made before the environment can be read (ld.so, libc's start-up) are
 *              forwarded unrecorded; frees of those blocks show up as foreign in the trace;
 *   fds        no descriptor is kept open (see log_path): a program closing all of them loses
 *              nothing, and none of its descriptors can be taken for the log.
 * Without RTALLOC_TRACE_DIR in the environment the recorder only forwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rawlog.h"

#define EXPORT __attribute__((visibility("default")))
#define IE_TLS __attribute__((tls_model("initial-exec")))

/* glibc's own allocator entry points (GLIBC_2.2.5). aligned_alloc is memalign in glibc 2.36. */
extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_valloc(size_t n);
extern void *__libc_pvalloc(size_t n);

enum { ST_UNINIT = 0, ST_INIT = 1, ST_ON = 2, ST_OFF = 3 };
enum { MAX_WINDOWS = 8192 }; /* 2^32 records, 96 GiB of log */

static _Atomic int state;
static _Atomic uint64_t next_slot;
static _Atomic uint32_t next_tid;
static _Atomic(raw_rec_t *) windows[MAX_WINDOWS];
static atomic_flag grow_lock = ATOMIC_FLAG_INIT;
/* The log's path, not an open descriptor: a program may close every descriptor it does not know
 * (daemons, subprocess's close_fds), and a kept descriptor number could then name one of the
 * program's files. The log is opened for each new window (every 524,288 records) and closed. */
static char log_path[4096];
static uint64_t log_windows; /* windows the file has room for (under grow_lock) */
static bool atfork_done;
static uint32_t page_size = 4096;

static __thread uint32_t t_tid_plus1 IE_TLS;
static __thread int t_guard IE_TLS;

extern char **environ;

/* ---- the log file ------------------------------------------------------------------------- */

static size_t put_str(char *dst, size_t at, size_t cap, const char *s)
{
    while (*s != '\0' && at + 1 < cap) {
        dst[at++] = *s++;
    }
    dst[at] = '\0';
    return at;
}

static size_t put_u64(char *dst, size_t at, size_t cap, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    while (n > 0 && at + 1 < cap) {
        dst[at++] = tmp[--n];
    }
    dst[at] = '\0';
    return at;
}

static void spin_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&grow_lock, memory_order_acquire)) {
        sched_yield();
    }
}

static void spin_unlock(void) { atomic_flag_clear_explicit(&grow_lock, memory_order_release); }

/* Opens a new log in dir and writes its header. False when that is impossible. */
static bool open_log(const char *dir, bool forked)
{
    char *path = log_path;
    const size_t pathcap = sizeof log_path;
    pid_t pid = getpid();
    int fd = -1;
    for (uint64_t n = 0; n < 100000 && fd < 0; n++) {
        size_t at = put_str(path, 0, pathcap, dir);
        at = put_str(path, at, pathcap, "/raw-");
        at = put_u64(path, at, pathcap, (uint64_t)pid);
        at = put_str(path, at, pathcap, "-");
        at = put_u64(path, at, pathcap, n);
        put_str(path, at, pathcap, ".log");
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) {
            return false;
        }
    }
    if (fd < 0) {
        return false;
    }
    static raw_hdr_t h; /* static: 3 KiB off the caller's stack; written only here, under ST_INIT */
    memset(&h, 0, sizeof h);
    memcpy(h.magic, RAW_MAGIC, sizeof h.magic);
    h.version = 1;
    h.rec_size = (uint32_t)sizeof(raw_rec_t);
    h.pid = (uint32_t)pid;
    h.ppid = (uint32_t)getppid();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h.start_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    long ps = sysconf(_SC_PAGESIZE);
    page_size = ps > 0 ? (uint32_t)ps : 4096u;
    h.page_size = page_size;
    h.forked = forked ? 1u : 0u;
    int cf = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (cf >= 0) {
        size_t got = 0;
        for (;;) {
            ssize_t r = read(cf, h.cmdline + got, sizeof h.cmdline - got);
            if (r <= 0) {
                break;
            }
            got += (size_t)r;
            if (got == sizeof h.cmdline) {
                break;
            }
        }
        h.cmdline_len = (uint32_t)got;
        close(cf);
    }
    bool ok = ftruncate(fd, RAW_HDR_SIZE) == 0 && pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
    close(fd);
    log_windows = 0;
    return ok;
}

static void atfork_prepare(void) { spin_lock(); /* no window is half-made in the child */ }

static void atfork_parent(void) { spin_unlock(); }

/* The child: forget the parent's log (its windows stay mapped in the child: unmap them so that
 * nothing here can write into the parent's file), start a log of its own. */
static void atfork_child(void)
{
    int saved = errno; /* fork's caller sees fork's errno, not ours */
    for (size_t w = 0; w < MAX_WINDOWS; w++) {
        raw_rec_t *p = atomic_load_explicit(&windows[w], memory_order_relaxed);
        if (p != NULL) {
            munmap(p, RAW_WINDOW);
            atomic_store_explicit(&windows[w], NULL, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&next_slot, 0, memory_order_relaxed);
    atomic_store_explicit(&next_tid, 1, memory_order_relaxed);
    t_tid_plus1 = 1; /* the forking thread is the child's thread 0 */
    atomic_flag_clear_explicit(&grow_lock, memory_order_release);
    if (atomic_load_explicit(&state, memory_order_relaxed) == ST_ON) {
        const char *dir = getenv(RAW_ENV_DIR);
        bool ok = dir != NULL && open_log(dir, true);
        atomic_store_explicit(&state, ok ? ST_ON : ST_OFF, memory_order_release);
    }
    errno = saved;
}

/* First call of the image: open the log. Calls made before the environment exists stay
 * unrecorded and leave the state uninitialised, so that a later call tries again. */
static void init(void)
{
    int expect = ST_UNINIT;
    if (!atomic_compare_exchange_strong_explicit(&state, &expect, ST_INIT, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        return; /* another thread initialises (its calls and ours meanwhile go unrecorded) */
    }
    if (environ == NULL) {
        atomic_store_explicit(&state, ST_UNINIT, memory_order_release);
        return;
    }
    const char *dir = getenv(RAW_ENV_DIR);
    bool ok = dir != NULL && dir[0] != '\0' && open_log(dir, false); /* rec() keeps errno */
    if (ok && !atfork_done) {
        atfork_done = true;
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child); /* allocates: t_guard is set */
    }
    atomic_store_explicit(&state, ok ? ST_ON : ST_OFF, memory_order_release);
}

/* The window holding slot, mapped on first use. NULL when the log cannot grow (call unrecorded). */
static raw_rec_t *window(uint64_t w)
{
    if (w >= MAX_WINDOWS) {
        return NULL;
    }
    raw_rec_t *p = atomic_load_explicit(&windows[w], memory_order_acquire); /* pairs with the release below */
    if (p != NULL) {
        return p;
    }
    int saved = errno; /* a failing ftruncate or mmap must not show through the caller's errno */
    spin_lock();
    p = atomic_load_explicit(&windows[w], memory_order_relaxed);
    if (p == NULL) {
        int fd = open(log_path, O_RDWR | O_CLOEXEC);
        off_t need = (off_t)RAW_HDR_SIZE + (off_t)(w + 1) * RAW_WINDOW;
        if (fd >= 0 && w + 1 > log_windows && ftruncate(fd, need) == 0) {
            log_windows = w + 1;
        }
        if (fd >= 0 && w < log_windows) {
            void *m = mmap(NULL, RAW_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                           (off_t)RAW_HDR_SIZE + (off_t)w * RAW_WINDOW);
            if (m != MAP_FAILED) {
                p = m;
                atomic_store_explicit(&windows[w], p, memory_order_release);
            }
        }
        if (fd >= 0) {
            close(fd);
        }
    }
    spin_unlock();
    errno = saved;
    return p;
}

/* Prefaults (writable) the CHUNK bytes of the log that follow byte offset `off`, in one system
 * call: on a virtual machine a page fault is an expensive exit, and a write fault on a shared
 * file mapping costs a page_mkwrite besides; MADV_POPULATE_WRITE (Linux 5.14) does the 64 pages
 * of a chunk at once. Called for the first chunk by the first record, and for each next chunk
 * by the record half-way through the one before, so the log's pages are ready before anyone
 * writes them and a short-lived process costs one chunk of disk. Where the kernel refuses, the
 * pages fault in one by one as before. */
enum { CHUNK = 256 << 10 };
_Static_assert(RAW_WINDOW % CHUNK == 0, "chunks tile the windows");
static _Atomic bool no_populate;

static void prefault(uint64_t off)
{
#ifdef MADV_POPULATE_WRITE
    if (atomic_load_explicit(&no_populate, memory_order_relaxed)) {
        return;
    }
    off -= off % CHUNK; /* madvise wants a page-aligned start */
    raw_rec_t *win = window(off / RAW_WINDOW);
    if (win != NULL) {
        int saved = errno;
        if (madvise((char *)win + off % RAW_WINDOW, CHUNK, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
            atomic_store_explicit(&no_populate, true, memory_order_relaxed);
        }
        errno = saved;
    }
#else
    (void)off;
#endif
}

/* Logs one call. Takes the slot now: callers call it after a block-creating call returned and
 * before a free (rawlog.h, "Order rule"). Keeps errno as the real call left it. */
static void rec(raw_op_t op, const void *ptr, uint64_t size, unsigned flags, unsigned align, unsigned sub)
{
    if (t_guard) {
        return;
    }
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s != ST_ON) {
        if (s != ST_UNINIT) {
            return;
        }
        int saved = errno;
        t_guard = 1;
        init();
        t_guard = 0;
        errno = saved;
        if (atomic_load_explicit(&state, memory_order_acquire) != ST_ON) {
            return;
        }
    }
    t_guard = 1;
    if (t_tid_plus1 == 0) {
        t_tid_plus1 = atomic_fetch_add_explicit(&next_tid, 1, memory_order_relaxed) + 1;
    }
    /* Relaxed: the slot order follows happens-before through the allocator's own synchronisation
     * (a free's fetch_add is sequenced before the real free, which happens before the malloc that
     * returns the address again, which is sequenced before that malloc's fetch_add), and RMWs of
     * one atomic respect happens-before. */
    uint64_t slot = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);
    raw_rec_t *win = window(slot / RAW_WINDOW_RECS);
    if (win == NULL) {
        t_guard = 0; /* the log is full or cannot grow: the call goes unrecorded */
        return;
    }
    uint64_t off = slot * sizeof(raw_rec_t);
    if ((off + CHUNK / 2) % CHUNK < sizeof(raw_rec_t)) {
        prefault(off + CHUNK / 2); /* half-way through a chunk: the next one */
    } else if (slot == 0) {
        prefault(0);
    }
    raw_rec_t *r = &win[slot % RAW_WINDOW_RECS];
    r->flags = (uint8_t)flags;
    r->align = (uint8_t)align;
    r->sub = (uint8_t)sub;
    r->tid = t_tid_plus1 - 1;
    r->ptr = (uint64_t)(uintptr_t)ptr;
    r->size = size;
    __atomic_store_n(&r->op, (uint8_t)op, __ATOMIC_RELEASE); /* last: op != 0 means complete */
    t_guard = 0;
}

/* ceil(log2(a)), 0 for a <= 1 */
static unsigned log2_up(size_t a)
{
    unsigned l = 0;
    while (l < 63 && ((size_t)1 << l) < a) {
        l++;
    }
    return l;
}

static unsigned log2_page(void) { return log2_up(page_size); }

static bool is_pow2(size_t a) { return a != 0 && (a & (a - 1)) == 0; }

/* ---- the interposed functions -------------------------------------------------------------- */

EXPORT void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    rec(RAW_MALLOC, p, n, 0, 0, 0);
    return p;
}

EXPORT void free(void *p)
{
    if (p != NULL) {
        rec(RAW_FREE, p, 0, 0, 0, 0);
    }
    __libc_free(p);
}

EXPORT void *calloc(size_t n, size_t m)
{
    size_t prod;
    bool ovf = __builtin_mul_overflow(n, m, &prod);
    void *p = __libc_calloc(n, m);
    rec(RAW_CALLOC, p, ovf ? UINT64_MAX : prod, ovf ? RAW_F_OVERFLOW : 0u, 0, 0);
    return p;
}

EXPORT void *realloc(void *p, size_t n)
{
    if (p == NULL) { /* no free part: one record (Lua allocates everything this way) */
        void *q = __libc_realloc(NULL, n);
        rec(RAW_REALLOC_NEW, q, n, 0, 0, 0);
        return q;
    }
    rec(RAW_REALLOC_BEGIN, p, n, 0, 0, 0);
    void *q = __libc_realloc(p, n);
    rec(RAW_REALLOC_END, q, n, 0, 0, 0);
    return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
    size_t prod;
    if (__builtin_mul_overflow(n, m, &prod)) {
        rec(RAW_REALLOC_BEGIN, p, UINT64_MAX, RAW_F_OVERFLOW, 0, 0);
        rec(RAW_REALLOC_END, NULL, UINT64_MAX, RAW_F_OVERFLOW, 0, 0);
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, prod);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!is_pow2(align) || align % sizeof(void *) != 0) {
        rec(RAW_MEMALIGN, NULL, n, RAW_F_BADALIGN, log2_up(align), RAW_SUB_POSIX);
        return EINVAL;
    }
    int saved = errno;
    void *p = __libc_memalign(align, n);
    rec(RAW_MEMALIGN, p, n, 0, log2_up(align), RAW_SUB_POSIX);
    errno = saved; /* posix_memalign reports through its result, never errno */
    if (p == NULL) {
        return ENOMEM;
    }
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    void *p = __libc_memalign(align, n);
    rec(RAW_MEMALIGN, p, n, is_pow2(align) ? 0u : RAW_F_BADALIGN, log2_up(align), RAW_SUB_ALIGNED);
    return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
    void *p = __libc_memalign(align, n);
    rec(RAW_MEMALIGN, p, n, is_pow2(align) ? 0u : RAW_F_BADALIGN, log2_up(align), RAW_SUB_MEMALIGN);
    return p;
}

EXPORT void *valloc(size_t n)
{
    void *p = __libc_valloc(n);
    rec(RAW_MEMALIGN, p, n, 0, log2_page(), RAW_SUB_VALLOC);
    return p;
}

EXPORT void *pvalloc(size_t n)
{
    void *p = __libc_pvalloc(n);
    rec(RAW_MEMALIGN, p, n, 0, log2_page(), RAW_SUB_PVALLOC);
    return p;
}
