/* SPDX-License-Identifier: MIT */
/*
 * drivers/fma_region.c -- FMA regions: private, process-shared and pinned (rtalloc/fma_region.h).
 *
 * The article (Thomas, DDJ 1998) gives an FMA heap a region: created or attached by fmainit,
 * private or in shared memory, optionally pinned, requests serialised across processes, the
 * segment removed when the last process calls fmadown; shared regions sit at the same address in
 * every process so that C++ objects with virtual functions can be shared. This file is that
 * region over POSIX: shm_open + mmap(MAP_FIXED_NOREPLACE) + a robust process-shared mutex.
 *
 * Header (at the start of the mapping, shared by every process):
 *   magic, version (layout and ABI: pointer size), state (INIT -> READY -> REMOVED, atomic;
 *   READY is stored with release order after everything else is written, attachers load it
 *   with acquire), address and size of the mapping, the flags, recoveries, broken, and the
 *   attach table: one slot per process (pid, start time), claimed and dropped with CAS so that
 *   fork can enter a child without taking the lock. The FMA instance follows at
 *   RT_FMA_REGION_HEADER. Nothing in the header is a function pointer.
 *
 * Create / attach race. Creation is O_CREAT|O_EXCL: exactly one process creates; the others get
 * EEXIST and attach: they wait (up to 5 s, polling every 1 ms) until the object has its size and
 * its state reads READY. An attacher that finds REMOVED (the last process detached between its
 * shm_open and its lock) unmaps and starts over, creating the region anew if allowed.
 *
 * Per request: lock (EOWNERDEAD: check and recover, see the header), install a recording
 * handler in the FMA instance (this process's function, set under the lock for this call
 * only), call the core, clear the handler, unlock, then hand the recorded error to the
 * process's own handler.
 */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE, pthread_mutexattr_setrobust on older glibc */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rtalloc/fma_region.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0 /* pre-4.17 headers: a hint, checked below */
#endif
#ifndef EUSERS
#define EUSERS EAGAIN
#endif

#if defined(__SANITIZE_THREAD__)
#define RT_REGION_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RT_REGION_TSAN 1
#endif
#endif
#ifndef RT_REGION_TSAN
#define RT_REGION_TSAN 0
#endif

#define REGION_MAGIC 0x414d4652u                                /* "RFMA" */
#define REGION_VERSION (0x00020000u | (unsigned)sizeof(void *)) /* 2: journal, lost_* */
#define PREFIX "/rtalloc-fma-"
#define NAME_MAX_LEN (sizeof PREFIX + RT_FMA_KEY_MAX)

enum { STATE_INIT = 0, STATE_READY = 1, STATE_REMOVED = 2 };

typedef struct region_slot {
    _Atomic int pid;        /* 0: free */
    _Atomic uint64_t start; /* start time (clock ticks after boot), 0: unknown */
} region_slot_t;

typedef struct region_header {
    _Atomic uint32_t magic;
    uint32_t version;
    _Atomic uint32_t state;
    uint32_t flags;
    uint64_t address;
    uint64_t size;
    uint32_t page_log2;
    uint32_t broken;      /* under the lock */
    uint32_t robust;      /* the mutex is robust (no robust futexes: qemu-user, old kernels) */
    uint64_t recoveries;  /* under the lock */
    uint64_t lost_blocks; /* broken: the blocks in use that were lost with the region */
    uint64_t lost_bytes;
    region_slot_t slots[RT_FMA_REGION_MAX_PROCS];
    pthread_mutex_t mutex;
} region_header_t;

_Static_assert(sizeof(region_header_t) <= RT_FMA_REGION_HEADER, "the header fits its page");
_Static_assert((RT_FMA_REGION_HEADER & (RT_FMA_REGION_HEADER - 1u)) == 0, "power of two");

struct rt_fma_region {
    region_header_t *hdr; /* == base of the mapping */
    rt_fma_t *fma;
    size_t size;
    unsigned flags;
    bool shared;
    bool creator;
    bool mapped;   /* we mmap'ed it (not a caller buffer) */
    bool pinned;   /* we mlock'ed it */
    bool in_table; /* this process holds a slot */
    int refs;
    rt_error_handler_t handler;
    void *handler_context;
    char name[NAME_MAX_LEN];
    struct rt_fma_region *next; /* this process's open regions */
};

/* ---- process-local state ---------------------------------------------------------------- */

static pthread_mutex_t regions_mutex = PTHREAD_MUTEX_INITIALIZER;
static rt_fma_region_t *regions; /* every open region of this process */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static _Atomic(rt_fma_region_t *) default_region;
static _Thread_local char last_error[256];

static void set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

/* Records the sentence for rt_fma_region_error() and sets errno. */
#define FAIL(e, ...)            \
    do {                        \
        set_error(__VA_ARGS__); \
        errno = (e);            \
    } while (0)

const char *rt_fma_region_error(void) { return last_error; }

static size_t system_page(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096u;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ---- keys and names --------------------------------------------------------------------- */

static bool key_valid(const char *key)
{
    if (key == NULL || key[0] == '\0') {
        return false;
    }
    size_t n = 0;
    for (const char *c = key; *c != '\0'; c++, n++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
                  *c == '_' || *c == '-';
        if (!ok || n + 1u >= RT_FMA_KEY_MAX) {
            return false;
        }
    }
    return true;
}

bool rt_fma_region_name(const char *key, char *buf, size_t size)
{
    if (!key_valid(key) || buf == NULL) {
        return false;
    }
    int n = snprintf(buf, size, PREFIX "%s", key);
    return n > 0 && (size_t)n < size;
}

const char *rt_fma_char_key(char key, char buf[RT_FMA_CHAR_KEY_MAX])
{
    (void)snprintf(buf, RT_FMA_CHAR_KEY_MAX, "u%lu-k%u", (unsigned long)geteuid(), (unsigned)(unsigned char)key);
    return buf;
}

/* FNV-1a: spreads keys over the default address slots. */
static uint32_t key_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

/* The default address of a new shared region: a slot chosen by the key in a range that the
 * program loader, brk and the top-down mmap area leave alone, and that the sanitizers' shadow
 * layouts leave to the application (ThreadSanitizer allows only a few ranges on x86-64). Taken
 * => the creator maps anywhere and records that. */
static uintptr_t default_address(const char *name)
{
    uint32_t h = key_hash(name);
#if UINTPTR_MAX > 0xffffffffu
    if (RT_REGION_TSAN) {
        return (uintptr_t)0x004000000000ull + ((uintptr_t)(h % 64u) << 32); /* TSan's low app range */
    }
    return (uintptr_t)0x200000000000ull + ((uintptr_t)(h % 1024u) << 32); /* 32..36 TiB */
#else
    return (uintptr_t)0x20000000u + ((uintptr_t)(h % 16u) << 24); /* 512..768 MiB */
#endif
}

/* ---- the attach table ----------------------------------------------------------------------- */

/* Start time of a process (field 22 of /proc/<pid>/stat) and whether it is a zombie; 0 when
 * unknown. open/read only: safe in the child of fork. */
static uint64_t proc_start(int pid, bool *zombie)
{
    char path[64];
    char buf[512];
    *zombie = false;
    (void)snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    ssize_t n = read(fd, buf, sizeof buf - 1u);
    (void)close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    if (p == NULL || p[1] != ' ') {
        return 0;
    }
    p += 2; /* field 3: state */
    *zombie = (*p == 'Z' || *p == 'X');
    for (int field = 3; field < 22 && *p != '\0'; p++) {
        if (*p == ' ') {
            field++;
        }
    }
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10u + (uint64_t)(*p - '0');
    }
    return v;
}

/* Whether the process in a slot still lives. The slot's start time is recorded by the first
 * other process that sees the pid alive (read from outside: a process's view of its own /proc
 * entry may differ, e.g. qemu-user emulates it), and a later different start time means that
 * the pid was reused. */
static bool process_alive(region_slot_t *slot, int pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        return false;
    }
    bool zombie = false;
    uint64_t now = proc_start(pid, &zombie);
    if (zombie) {
        return false;
    }
    uint64_t seen = 0;
    if (now == 0u || atomic_compare_exchange_strong(&slot->start, &seen, now)) {
        return true; /* unknown, or recorded just now */
    }
    return seen == now;
}

/* Claims a slot for this process (lock-free: also run in the child of fork). A slot that holds
 * this pid already is this process's from before an exec (a forked child inherits a slot, and
 * keeps its pid across exec while its mapping is gone): it is taken over, not doubled. */
static bool table_enter(region_header_t *hdr)
{
    int self = (int)getpid();
    for (unsigned i = 0; i < RT_FMA_REGION_MAX_PROCS; i++) {
        if (atomic_load(&hdr->slots[i].pid) == self) {
            return true;
        }
    }
    for (unsigned i = 0; i < RT_FMA_REGION_MAX_PROCS; i++) {
        int expected = 0;
        if (atomic_load(&hdr->slots[i].pid) != 0) {
            continue;
        }
        atomic_store(&hdr->slots[i].start, 0u); /* a racing claimer writes 0 too */
        if (atomic_compare_exchange_strong(&hdr->slots[i].pid, &expected, self)) {
            return true;
        }
    }
    return false;
}

static void table_leave(region_header_t *hdr)
{
    int self = (int)getpid();
    for (unsigned i = 0; i < RT_FMA_REGION_MAX_PROCS; i++) {
        int expected = self;
        if (atomic_compare_exchange_strong(&hdr->slots[i].pid, &expected, 0)) {
            return;
        }
    }
}

/* Drops the slots of dead processes; returns how many live ones remain. Under the lock (or on
 * a broken region). */
static unsigned table_prune(region_header_t *hdr)
{
    int self = (int)getpid();
    unsigned live = 0;
    for (unsigned i = 0; i < RT_FMA_REGION_MAX_PROCS; i++) {
        int pid = atomic_load(&hdr->slots[i].pid);
        if (pid == 0) {
            continue;
        }
        if (pid != self && !process_alive(&hdr->slots[i], pid)) {
            int expected = pid;
            (void)atomic_compare_exchange_strong(&hdr->slots[i].pid, &expected, 0);
            continue;
        }
        live++;
    }
    return live;
}

/* ---- fork: a child inherits every shared region as its own attachment --------------------- */

static void atfork_prepare(void) { (void)pthread_mutex_lock(&regions_mutex); }
static void atfork_parent(void) { (void)pthread_mutex_unlock(&regions_mutex); }
static void atfork_child(void)
{
    for (rt_fma_region_t *r = regions; r != NULL; r = r->next) {
        if (r->shared) {
            r->in_table = table_enter(r->hdr);
        }
        r->creator = false;
    }
    (void)pthread_mutex_unlock(&regions_mutex);
}

static void atfork_register(void) { (void)pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

/* ---- locking and error delivery ----------------------------------------------------------- */

typedef struct capture {
    rt_error_t error;
    unsigned count;
} capture_t;

static void capture_error(void *context, const rt_error_t *error)
{
    capture_t *c = context;
    c->error = *error;
    c->count++;
}

static void deliver(rt_fma_region_t *r, const capture_t *c)
{
    if (c->count != 0u && r->handler != NULL) {
        r->handler(r->handler_context, &c->error);
    }
}

static void report(rt_fma_region_t *r, rt_error_kind_t kind, const char *operation, const char *message,
                   const void *ptr)
{
    if (r->handler != NULL) {
        size_t lost = kind == RT_ERR_CORRUPTED ? (size_t)r->hdr->lost_bytes : 0u;
        rt_error_t e = {kind, operation, message, ptr, lost};
        r->handler(r->handler_context, &e);
    }
}

/* Locks the region. EOWNERDEAD: the previous owner died inside; check the instance and either
 * make the mutex consistent or leave it unrecoverable. Returns 0 or an errno; *corrupt is set
 * when this call found the region broken (to be reported after unlocking). */
static int region_lock(rt_fma_region_t *r, bool *corrupt)
{
    *corrupt = false;
    int rc = pthread_mutex_lock(&r->hdr->mutex);
    if (rc == 0 || rc != EOWNERDEAD) {
        return rc;
    }
    capture_t cap = {0};
    rt_fma_set_handler(r->fma, capture_error, &cap);
    bool ok = r->hdr->broken == 0u && rt_fma_recover(r->fma); /* undo the journal, then check */
    rt_fma_set_handler(r->fma, NULL, NULL);
    if (r->shared) {
        (void)table_prune(r->hdr);
    }
    if (ok) {
        r->hdr->recoveries++;
        (void)pthread_mutex_consistent(&r->hdr->mutex);
        return 0;
    }
    rt_stats_t st;
    rt_fma_stats(r->fma, &st); /* read only: what the surviving processes lose */
    r->hdr->lost_blocks = st.used_blocks;
    r->hdr->lost_bytes = st.used_bytes;
    r->hdr->broken = 1u;
    *corrupt = true;
    (void)pthread_mutex_unlock(&r->hdr->mutex); /* without consistent: now unrecoverable */
    return ENOTRECOVERABLE;
}

static void region_unlock(rt_fma_region_t *r) { (void)pthread_mutex_unlock(&r->hdr->mutex); }

/* enter/leave bracket one core call. enter returns false when the request must fail. */
static bool enter(rt_fma_region_t *r, capture_t *cap, const char *operation, const void *ptr)
{
    bool corrupt = false;
    int rc = region_lock(r, &corrupt);
    if (rc != 0) {
        if (corrupt) {
            report(r, RT_ERR_CORRUPTED, operation,
                   "a process died holding the region's lock and left it corrupted beyond what its journal "
                   "undoes: the region is broken; size = the bytes of the blocks in use, lost",
                   ptr);
        } else if (rc == ENOTRECOVERABLE) {
            report(r, RT_ERR_CORRUPTED, operation, "the region is broken (see its recovery)", ptr);
        }
        return false;
    }
    cap->count = 0;
    rt_fma_set_handler(r->fma, capture_error, cap);
    return true;
}

static void leave(rt_fma_region_t *r, const capture_t *cap)
{
    rt_fma_set_handler(r->fma, NULL, NULL);
    region_unlock(r);
    deliver(r, cap);
}

/* ---- mapping ---------------------------------------------------------------------------------- */

/* Maps fd (or anonymous memory for fd < 0) at exactly `at`; NULL with errno on failure, with
 * EADDRINUSE when the range is occupied. */
static void *map_at(void *at, size_t size, int fd)
{
    int flags = (fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS) | MAP_FIXED_NOREPLACE;
    void *p = mmap(at, size, PROT_READ | PROT_WRITE, flags, fd, 0);
    if (p == MAP_FAILED) {
        if (errno == EEXIST) {
            errno = EADDRINUSE;
        }
        return NULL;
    }
    if (p != at) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
        (void)munmap(p, size);
        errno = EADDRINUSE;
        return NULL;
    }
    return p;
}

static void *map_anywhere(size_t size, int fd)
{
    int flags = fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* mlock and munlock as system calls on Linux: the sanitizers' runtimes intercept mlock and turn
 * it into a no-op that reports success (their shadow memory cannot be locked), which would make
 * a pinned region silently unpinned in those builds. */
static int sys_mlock(void *base, size_t size)
{
#if defined(__linux__) && defined(SYS_mlock)
    return (int)syscall(SYS_mlock, base, size);
#else
    return mlock(base, size);
#endif
}

static void sys_munlock(void *base, size_t size)
{
#if defined(__linux__) && defined(SYS_munlock)
    (void)syscall(SYS_munlock, base, size);
#else
    (void)munlock(base, size);
#endif
}

/* mlock, or a sentence saying why not (the errno, RLIMIT_MEMLOCK as /proc shows it). */
static int pin(void *base, size_t size)
{
    if (sys_mlock(base, size) == 0) {
        return 0;
    }
    int e = errno;
    char limit[64] = "unknown";
    FILE *f = fopen("/proc/self/limits", "r");
    if (f != NULL) {
        char line[256];
        while (fgets(line, sizeof line, f) != NULL) {
            long long soft = 0;
            if (strncmp(line, "Max locked memory", 17) == 0) {
                if (sscanf(line + 17, "%lld", &soft) == 1) {
                    (void)snprintf(limit, sizeof limit, "%lld bytes", soft);
                } else {
                    (void)snprintf(limit, sizeof limit, "unlimited");
                }
                break;
            }
        }
        (void)fclose(f);
    }
    set_error("RT_FMA_PINNED: mlock of %zu bytes failed: %s (RLIMIT_MEMLOCK %s; raise it or grant "
              "CAP_IPC_LOCK)",
              size, strerror(e), limit);
    errno = e;
    return -1;
}

/* Whether the kernel keeps this thread's robust futex list (glibc registers it at thread start):
 * without it a robust mutex is never released when its owner dies. qemu-user, for one, does
 * not pass the list to the kernel, and glibc still creates robust mutexes there. */
static bool robust_futexes(void)
{
#if defined(__linux__) && defined(SYS_get_robust_list)
    void *head = NULL;
    size_t len = 0;
    return syscall(SYS_get_robust_list, 0, &head, &len) == 0 && head != NULL;
#else
    return true;
#endif
}

/* Returns 0 or pthread_mutex_init's error. */
static int header_init(region_header_t *hdr, size_t size, unsigned flags, unsigned page_log2, bool shared)
{
    memset(hdr, 0, sizeof *hdr);
    hdr->version = REGION_VERSION;
    hdr->flags = flags;
    hdr->address = (uint64_t)(uintptr_t)hdr;
    hdr->size = (uint64_t)size;
    hdr->page_log2 = page_log2;
    atomic_init(&hdr->state, STATE_INIT);
    atomic_init(&hdr->magic, REGION_MAGIC);
    for (unsigned i = 0; i < RT_FMA_REGION_MAX_PROCS; i++) {
        atomic_init(&hdr->slots[i].pid, 0);
        atomic_init(&hdr->slots[i].start, 0u);
    }
    pthread_mutexattr_t attr;
    (void)pthread_mutexattr_init(&attr);
    (void)pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    int rc = 0;
    if (shared) {
        (void)pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        rc = robust_futexes() ? pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) : ENOTSUP;
        if (rc == 0) {
            rc = pthread_mutex_init(&hdr->mutex, &attr);
            hdr->robust = rc == 0 ? 1u : 0u;
        }
        if (rc != 0) {
            /* No robust futex list here (qemu-user, very old kernels; glibc may refuse robust
             * mutexes too): a plain process-shared mutex then, and rt_fma_region_info says
             * that a crashed holder would leave it locked. */
            (void)pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_STALLED);
            rc = pthread_mutex_init(&hdr->mutex, &attr);
        }
    } else {
        rc = pthread_mutex_init(&hdr->mutex, &attr);
    }
    (void)pthread_mutexattr_destroy(&attr);
    return rc;
}

/* Creates the FMA instance after the header. */
static rt_fma_t *fma_init(region_header_t *hdr, size_t size, unsigned flags, unsigned page_log2)
{
    size_t avail = size - RT_FMA_REGION_HEADER;
    /* a shared region keeps the undo journal: a process killed inside a call is rolled back */
    unsigned core = (flags & RT_FMA_CORE_FLAGS) | ((flags & RT_FMA_SHARED) != 0u ? RT_FMA_JOURNAL : 0u);
    rt_fma_t *f = rt_fma_create_ex((unsigned char *)hdr + RT_FMA_REGION_HEADER, avail, page_log2, core);
    if (f == NULL) {
        FAIL(EINVAL,
             "rt_fma_create_ex refused %zu bytes with %u-byte pages (needs at least %zu "
             "after the %u-byte header)",
             avail, 1u << page_log2, rt_fma_min_buffer(), RT_FMA_REGION_HEADER);
    }
    return f;
}

static rt_fma_region_t *handle_new(void)
{
    rt_fma_region_t *r = calloc(1, sizeof *r);
    if (r == NULL) {
        FAIL(ENOMEM, "out of memory for the region handle");
    }
    return r;
}

static void list_add(rt_fma_region_t *r)
{
    (void)pthread_mutex_lock(&regions_mutex);
    r->next = regions;
    regions = r;
    (void)pthread_mutex_unlock(&regions_mutex);
}

/* ---- private regions ------------------------------------------------------------------------ */

static rt_fma_region_t *open_private(const rt_fma_region_config_t *c, size_t size, unsigned page_log2)
{
    rt_fma_region_t *r = handle_new();
    if (r == NULL) {
        return NULL;
    }
    void *base = c->buffer;
    if (base != NULL) {
        if (((uintptr_t)base & (system_page() - 1u)) != 0u) {
            free(r);
            FAIL(EINVAL, "the buffer of a private region must be page aligned");
            return NULL;
        }
        size = c->size; /* the caller's, not rounded */
    } else {
        base = c->address != NULL ? map_at(c->address, size, -1) : map_anywhere(size, -1);
        if (base == NULL) {
            int e = errno;
            free(r);
            FAIL(e, "mapping %zu bytes for a private region failed: %s", size, strerror(e));
            return NULL;
        }
        r->mapped = true;
    }
    if ((c->flags & RT_FMA_PINNED) != 0u) {
        if (pin(base, size) != 0) {
            int e = errno;
            if (r->mapped) {
                (void)munmap(base, size);
            }
            free(r);
            errno = e;
            return NULL;
        }
        r->pinned = true;
    }
    region_header_t *hdr = base;
    int rc = header_init(hdr, size, c->flags & ~RT_FMA_EXCL, page_log2, false);
    r->fma = rc == 0 ? fma_init(hdr, size, c->flags, page_log2) : NULL;
    if (rc != 0) {
        FAIL(rc, "pthread_mutex_init failed: %s", strerror(rc));
    }
    if (r->fma == NULL) {
        int e = errno;
        if (r->pinned) {
            sys_munlock(base, size);
        }
        if (r->mapped) {
            (void)munmap(base, size);
        }
        free(r);
        errno = e;
        return NULL;
    }
    atomic_store_explicit(&hdr->state, STATE_READY, memory_order_release);
    r->hdr = hdr;
    r->size = size;
    r->flags = hdr->flags;
    r->creator = true;
    r->refs = 1;
    list_add(r);
    return r;
}

/* ---- shared regions --------------------------------------------------------------------------- */

/* Waits until fd's object has at least `need` bytes; false after the timeout. */
static bool wait_size(int fd, size_t need, int *deadline_ms)
{
    for (;;) {
        struct stat st;
        if (fstat(fd, &st) != 0) {
            return false;
        }
        if (st.st_size >= 0 && (size_t)st.st_size >= need) {
            return true;
        }
        if ((*deadline_ms)-- <= 0) {
            errno = ETIMEDOUT;
            return false;
        }
        sleep_ms(1);
    }
}

typedef enum { ATTACH_OK, ATTACH_FAIL, ATTACH_RETRY } attach_result_t;

static attach_result_t attach(rt_fma_region_t *r, int fd, const rt_fma_region_config_t *c)
{
    int budget = 5000; /* ms, shared by both waits */
    size_t page = system_page();
    if (!wait_size(fd, page, &budget)) {
        FAIL(ETIMEDOUT, "%s: the object never got its size: its creator died while creating it?", r->name);
        return ATTACH_FAIL;
    }
    /* Read the header through a small mapping anywhere, to learn the address and size. */
    region_header_t *peek = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (peek == MAP_FAILED) {
        int e = errno;
        FAIL(e, "%s: mapping its header failed: %s", r->name, strerror(e));
        return ATTACH_FAIL;
    }
    uint32_t state;
    while ((state = atomic_load_explicit(&peek->state, memory_order_acquire)) == STATE_INIT) {
        if (budget-- <= 0) {
            (void)munmap(peek, page);
            FAIL(ETIMEDOUT, "%s: not initialised after 5 s: its creator died while creating it?", r->name);
            return ATTACH_FAIL;
        }
        sleep_ms(1);
    }
    uint32_t magic = atomic_load(&peek->magic);
    uint32_t version = peek->version;
    uintptr_t address = (uintptr_t)peek->address;
    uint64_t size64 = peek->size;
    (void)munmap(peek, page);
    if (state == STATE_REMOVED) {
        return ATTACH_RETRY;
    }
    if (magic != REGION_MAGIC || version != REGION_VERSION || size64 > SIZE_MAX) {
        FAIL(EPROTO,
             "%s: not an FMA region of this library and ABI (magic %#x, version %#x, "
             "expected %#x)",
             r->name, magic, version, REGION_VERSION);
        return ATTACH_FAIL;
    }
    size_t size = (size_t)size64;
    void *base = map_at((void *)address, size, fd);
    if (base == NULL) {
        int e = errno;
        if (e == EADDRINUSE) {
            FAIL(e,
                 "%s: cannot map it at its address %p (%zu bytes): the range is occupied in "
                 "this process",
                 r->name, (void *)address, size);
        } else {
            FAIL(e, "%s: mapping %zu bytes at %p failed: %s", r->name, size, (void *)address, strerror(e));
        }
        return ATTACH_FAIL;
    }
    region_header_t *hdr = base;
    r->hdr = hdr;
    r->size = size;
    r->fma = (rt_fma_t *)(void *)((unsigned char *)base + RT_FMA_REGION_HEADER);
    r->flags = hdr->flags;
    bool corrupt = false;
    int rc = region_lock(r, &corrupt);
    if (rc != 0 && rc != ENOTRECOVERABLE) {
        (void)munmap(base, size);
        FAIL(rc, "%s: locking it failed: %s", r->name, strerror(rc));
        return ATTACH_FAIL;
    }
    if (atomic_load(&hdr->state) == STATE_REMOVED) {
        if (rc == 0) {
            region_unlock(r);
        }
        (void)munmap(base, size);
        return ATTACH_RETRY;
    }
    (void)table_prune(hdr);
    r->in_table = table_enter(hdr);
    if (rc == 0) {
        region_unlock(r);
    }
    if (!r->in_table) {
        (void)munmap(base, size);
        FAIL(EUSERS, "%s: %u processes are attached already", r->name, RT_FMA_REGION_MAX_PROCS);
        return ATTACH_FAIL;
    }
    if (((r->flags | c->flags) & RT_FMA_PINNED) != 0u) {
        if (pin(base, size) != 0) {
            int e = errno;
            table_leave(hdr);
            (void)munmap(base, size);
            errno = e;
            return ATTACH_FAIL;
        }
        r->pinned = true;
    }
    r->mapped = true;
    if (corrupt) {
        report(r, RT_ERR_CORRUPTED, "attach",
               "a process died holding the region's lock and left it corrupted beyond what its journal "
               "undoes: the region is broken; size = the bytes of the blocks in use, lost",
               NULL);
    }
    return ATTACH_OK;
}

static bool create(rt_fma_region_t *r, int fd, const rt_fma_region_config_t *c, size_t size, unsigned page_log2)
{
    if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        FAIL(e, "%s: ftruncate to %zu bytes failed: %s", r->name, size, strerror(e));
        return false;
    }
    void *base;
    if (c->address != NULL) {
        base = map_at(c->address, size, fd);
    } else {
        base = map_at((void *)default_address(r->name), size, fd);
        if (base == NULL) {
            base = map_anywhere(size, fd);
        }
    }
    if (base == NULL) {
        int e = errno;
        FAIL(e, "%s: mapping %zu bytes%s failed: %s", r->name, size,
             c->address != NULL ? " at the requested address" : "", strerror(e));
        return false;
    }
    if ((c->flags & RT_FMA_PINNED) != 0u && pin(base, size) != 0) {
        int e = errno;
        (void)munmap(base, size);
        errno = e;
        return false;
    }
    r->pinned = (c->flags & RT_FMA_PINNED) != 0u;
    region_header_t *hdr = base;
    int rc = header_init(hdr, size, c->flags & ~RT_FMA_EXCL, page_log2, true);
    r->fma = rc == 0 ? fma_init(hdr, size, c->flags, page_log2) : NULL;
    if (rc != 0) {
        FAIL(rc, "%s: pthread_mutex_init failed: %s", r->name, strerror(rc));
    }
    if (r->fma == NULL) {
        int e = errno;
        if (r->pinned) {
            sys_munlock(base, size);
        }
        (void)munmap(base, size);
        errno = e;
        return false;
    }
    r->in_table = table_enter(hdr);
    r->hdr = hdr;
    r->size = size;
    r->flags = hdr->flags;
    r->mapped = true;
    r->creator = true;
    atomic_store_explicit(&hdr->state, STATE_READY, memory_order_release);
    return true;
}

static rt_fma_region_t *find_open(const char *name)
{
    rt_fma_region_t *found = NULL;
    (void)pthread_mutex_lock(&regions_mutex);
    for (rt_fma_region_t *r = regions; r != NULL; r = r->next) {
        if (r->shared && strcmp(r->name, name) == 0) {
            r->refs++;
            found = r;
            break;
        }
    }
    (void)pthread_mutex_unlock(&regions_mutex);
    return found;
}

static rt_fma_region_t *open_shared(const rt_fma_region_config_t *c, size_t size, unsigned page_log2)
{
    char name[NAME_MAX_LEN];
    if (!rt_fma_region_name(c->key, name, sizeof name)) {
        FAIL(EINVAL, "invalid key: 1..%u characters of [A-Za-z0-9._-]", RT_FMA_KEY_MAX - 1u);
        return NULL;
    }
    rt_fma_region_t *open = find_open(name);
    if (open != NULL) {
        if ((c->flags & RT_FMA_EXCL) != 0u && c->create) {
            (void)rt_fma_region_down(open);
            FAIL(EEXIST, "%s exists (open in this process)", name);
            return NULL;
        }
        return open;
    }
    rt_fma_region_t *r = handle_new();
    if (r == NULL) {
        return NULL;
    }
    memcpy(r->name, name, sizeof name);
    r->shared = true;
    mode_t mode = c->mode != 0u ? (mode_t)c->mode : (mode_t)0600;
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = -1;
        if (c->create) {
            fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
            if (fd >= 0) {
                bool ok = create(r, fd, c, size, page_log2);
                int e = errno;
                (void)close(fd);
                if (!ok) {
                    (void)shm_unlink(name);
                    free(r);
                    errno = e;
                    return NULL;
                }
                break;
            }
            if (errno != EEXIST) {
                int e = errno;
                free(r);
                FAIL(e, "shm_open(%s, O_CREAT|O_EXCL) failed: %s", name, strerror(e));
                return NULL;
            }
            if ((c->flags & RT_FMA_EXCL) != 0u) {
                free(r);
                FAIL(EEXIST, "%s exists", name);
                return NULL;
            }
        }
        fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
        if (fd < 0) {
            int e = errno;
            if (e == ENOENT && c->create) {
                continue; /* removed in between: create it */
            }
            free(r);
            FAIL(e, "shm_open(%s) failed: %s", name, strerror(e));
            return NULL;
        }
        attach_result_t a = attach(r, fd, c);
        int e = errno;
        (void)close(fd);
        if (a == ATTACH_OK) {
            break;
        }
        if (a == ATTACH_FAIL) {
            free(r);
            errno = e;
            return NULL;
        }
        if (attempt == 99) {
            free(r);
            FAIL(EAGAIN, "%s: removed and re-created 100 times while attaching", name);
            return NULL;
        }
        sleep_ms(1);
    }
    if (r->hdr == NULL) {
        free(r);
        FAIL(EAGAIN, "%s: removed 100 times while attaching", name);
        return NULL;
    }
    r->refs = 1;
    list_add(r);
    return r;
}

rt_fma_region_t *rt_fma_region_open(const rt_fma_region_config_t *c)
{
    last_error[0] = '\0';
    if (c == NULL) {
        FAIL(EINVAL, "no configuration");
        return NULL;
    }
    (void)pthread_once(&atfork_once, atfork_register);
    unsigned page_log2 = c->page_log2 != 0u ? c->page_log2 : 12u;
    size_t page = system_page();
    bool shared = (c->flags & RT_FMA_SHARED) != 0u;
    size_t size = c->size;
    if (!shared || c->create) {
        if (size <= RT_FMA_REGION_HEADER || size > SIZE_MAX - page) {
            FAIL(EINVAL,
                 "size %zu: needs more than the %u-byte header plus %zu for the FMA "
                 "instance",
                 size, RT_FMA_REGION_HEADER, rt_fma_min_buffer());
            return NULL;
        }
        size = (size + page - 1u) & ~(page - 1u);
    }
    if (c->address != NULL && ((uintptr_t)c->address & (page - 1u)) != 0u) {
        FAIL(EINVAL, "address %p is not page aligned", c->address);
        return NULL;
    }
    if (!shared) {
        return open_private(c, size, page_log2);
    }
    if (c->buffer != NULL) {
        FAIL(EINVAL, "a shared region lives in shared memory, not in a caller buffer");
        return NULL;
    }
    return open_shared(c, size, page_log2);
}

rt_fma_region_t *rt_fma_region_init(size_t size, unsigned flags, const char *key, bool create)
{
    rt_fma_region_config_t c = {size, flags, key, create, NULL, NULL, 0u, 0u};
    return rt_fma_region_open(&c);
}

int rt_fma_region_down(rt_fma_region_t *r)
{
    if (r == NULL) {
        errno = EINVAL;
        return -1;
    }
    (void)pthread_mutex_lock(&regions_mutex);
    if (--r->refs > 0) {
        (void)pthread_mutex_unlock(&regions_mutex);
        return 0;
    }
    for (rt_fma_region_t **p = &regions; *p != NULL; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    (void)pthread_mutex_unlock(&regions_mutex);
    rt_fma_region_t *expected = r;
    (void)atomic_compare_exchange_strong(&default_region, &expected, NULL);

    int result = 0;
    last_error[0] = '\0';
    if (r->shared) {
        bool corrupt = false;
        int rc = region_lock(r, &corrupt); /* ENOTRECOVERABLE: go on, the table is atomic */
        if (r->in_table) {
            table_leave(r->hdr);
        }
        if (table_prune(r->hdr) == 0u) {
            atomic_store(&r->hdr->state, STATE_REMOVED);
            if (shm_unlink(r->name) != 0 && errno != ENOENT) {
                int e = errno;
                set_error("%s: shm_unlink failed: %s", r->name, strerror(e));
                result = -1;
            }
        }
        if (rc == 0) {
            region_unlock(r);
        }
    }
    if (r->pinned) {
        sys_munlock(r->hdr, r->size);
    }
    if (r->mapped && munmap(r->hdr, r->size) != 0) {
        int e = errno;
        set_error("munmap failed: %s", strerror(e));
        result = -1;
    }
    int e = errno;
    free(r);
    errno = e;
    return result;
}

/* ---- requests ---------------------------------------------------------------------------------- */

void *rt_fma_region_alloc(rt_fma_region_t *r, size_t size)
{
    capture_t cap;
    if (r == NULL || !enter(r, &cap, "malloc", NULL)) {
        return NULL;
    }
    void *p = rt_fma_malloc(r->fma, size);
    leave(r, &cap);
    return p;
}

void rt_fma_region_free(rt_fma_region_t *r, void *ptr)
{
    capture_t cap;
    if (r == NULL || ptr == NULL || !enter(r, &cap, "free", ptr)) {
        return;
    }
    rt_fma_free(r->fma, ptr);
    leave(r, &cap);
}

void *rt_fma_region_memalign(rt_fma_region_t *r, size_t alignment, size_t size)
{
    capture_t cap;
    if (r == NULL || !enter(r, &cap, "memalign", NULL)) {
        return NULL;
    }
    void *p = rt_fma_memalign(r->fma, alignment, size);
    leave(r, &cap);
    return p;
}

void *rt_fma_region_calloc(rt_fma_region_t *r, size_t count, size_t size)
{
    capture_t cap;
    if (r == NULL || !enter(r, &cap, "calloc", NULL)) {
        return NULL;
    }
    void *p = rt_fma_calloc(r->fma, count, size);
    leave(r, &cap);
    return p;
}

void *rt_fma_region_realloc(rt_fma_region_t *r, void *ptr, size_t size)
{
    capture_t cap;
    if (r == NULL || !enter(r, &cap, "realloc", ptr)) {
        return NULL;
    }
    void *p = rt_fma_realloc(r->fma, ptr, size);
    leave(r, &cap);
    return p;
}

size_t rt_fma_region_usable_size(rt_fma_region_t *r, void *ptr)
{
    capture_t cap;
    if (r == NULL || ptr == NULL || !enter(r, &cap, "usable_size", ptr)) {
        return 0;
    }
    size_t n = rt_fma_usable_size(r->fma, ptr);
    leave(r, &cap);
    return n;
}

void rt_fma_region_stats(rt_fma_region_t *r, rt_stats_t *stats)
{
    capture_t cap;
    if (stats == NULL) {
        return;
    }
    memset(stats, 0, sizeof *stats);
    if (r == NULL || !enter(r, &cap, "stats", NULL)) {
        return;
    }
    rt_fma_stats(r->fma, stats);
    leave(r, &cap);
}

bool rt_fma_region_check(rt_fma_region_t *r)
{
    capture_t cap;
    if (r == NULL || !enter(r, &cap, "check", NULL)) {
        return false;
    }
    bool ok = rt_fma_check(r->fma);
    leave(r, &cap);
    return ok;
}

bool rt_fma_region_contains(const rt_fma_region_t *r, const void *ptr)
{
    if (r == NULL) {
        return false;
    }
    uintptr_t p = (uintptr_t)ptr;
    uintptr_t lo = (uintptr_t)r->hdr;
    return p >= lo && p - lo < r->size;
}

void rt_fma_region_set_handler(rt_fma_region_t *r, rt_error_handler_t handler, void *context)
{
    if (r != NULL) {
        r->handler = handler;
        r->handler_context = context;
    }
}

int rt_fma_region_lock(rt_fma_region_t *r)
{
    if (r == NULL) {
        return EINVAL;
    }
    bool corrupt = false;
    int rc = region_lock(r, &corrupt);
    if (corrupt) {
        report(r, RT_ERR_CORRUPTED, "lock",
               "a process died holding the region's lock and left it corrupted beyond what its journal "
               "undoes: the region is broken; size = the bytes of the blocks in use, lost",
               NULL);
    }
    return rc;
}

void rt_fma_region_unlock(rt_fma_region_t *r)
{
    if (r != NULL) {
        region_unlock(r);
    }
}

void rt_fma_region_info(rt_fma_region_t *r, rt_fma_region_info_t *info)
{
    if (info == NULL) {
        return;
    }
    memset(info, 0, sizeof *info);
    if (r == NULL) {
        return;
    }
    info->base = r->hdr;
    info->size = r->size;
    info->fma = r->fma;
    info->flags = r->flags;
    info->name = r->name;
    info->creator = r->creator;
    info->refs = r->refs;
    bool corrupt = false;
    int rc = region_lock(r, &corrupt);
    info->attached = r->shared ? table_prune(r->hdr) : 1u;
    info->broken = r->hdr->broken != 0u;
    info->recoveries = r->hdr->recoveries;
    info->lost_blocks = r->hdr->lost_blocks;
    info->lost_bytes = r->hdr->lost_bytes;
    info->robust = r->shared && r->hdr->robust != 0u;
    if (rc == 0) {
        region_unlock(r);
    }
}

/* ---- the article's interface -------------------------------------------------------------------- */

int fmainit(size_t size, int flags, char create)
{
    if (atomic_load(&default_region) != NULL) {
        set_error("fmainit: this process has a default region already");
        errno = EALREADY;
        return -1;
    }
    unsigned f = (unsigned)flags;
    char key[RT_FMA_CHAR_KEY_MAX];
    (void)rt_fma_char_key((char)((f & RT_FMA_KEY_MASK) >> 16), key);
    rt_fma_region_t *r = rt_fma_region_init(size, f & ~RT_FMA_KEY_MASK, key, create != 0);
    if (r == NULL) {
        return -1;
    }
    rt_fma_region_t *expected = NULL;
    if (!atomic_compare_exchange_strong(&default_region, &expected, r)) {
        (void)rt_fma_region_down(r);
        set_error("fmainit: another thread made the default region first");
        errno = EALREADY;
        return -1;
    }
    return 0;
}

int fmadown(void)
{
    rt_fma_region_t *r = atomic_exchange(&default_region, NULL);
    if (r == NULL) {
        errno = ENXIO;
        return -1;
    }
    return rt_fma_region_down(r);
}

void *fmaalloc(size_t size) { return rt_fma_region_alloc(atomic_load(&default_region), size); }

void fmafree(void *ptr) { rt_fma_region_free(atomic_load(&default_region), ptr); }

rt_fma_region_t *fmaregion(void) { return atomic_load(&default_region); }
