/* SPDX-License-Identifier: MIT */
/*
 * fma_region.c -- FMA regions (rtalloc/fma_region.h): private, pinned and process-shared.
 *
 *   private      anonymous and caller-buffer regions, two threads, bad input through the handler
 *                (delivered after the lock is released: the handler allocates), config errors
 *   pinned       mlock succeeds (VmLck grows) or the open fails with the errno and a sentence;
 *                the error path forced in a child (RLIMIT_MEMLOCK lowered, CAP_IPC_LOCK dropped)
 *   fork         a forked child inherits the region as its own attachment, reads and changes the
 *                parent's objects, allocates its own; both detach; the object is gone (ENOENT)
 *   exec         the test re-executes itself (`fma_region --exec-child KEY PTR`): the new image
 *                attaches at the same address, reads and changes the parent's objects
 *   crash        children that die holding the lock (_exit, abort, SIGKILL): the robust mutex is
 *                recovered, the region checked and usable, the dead attacher not counted; one
 *                that corrupts the region first leaves it broken (every request refused)
 *   race         4 children create-or-attach the same key at once: one creator, one address
 *   concurrent   two processes x random requests and a counter under the region's lock
 *   address      the chosen address occupied => EADDRINUSE; an attacher whose address range is
 *                occupied fails cleanly
 *   article      fmainit / fmaalloc / fmafree / fmadown, private and shared (char key)
 *
 * Every shared key holds this process's pid, so concurrent runs (several build directories)
 * never meet. A forked child prints its own FAIL lines and exits 0 (pass), 1 (fail) or 77
 * (skip, with its reason printed).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtalloc/fma_region.h"
#include "testlib.h"
#include "fma_segment.h"

#define MiB ((size_t)1 << 20)
#define CHILD_SKIP 77

static char exe_path[4096];

static void make_key(char *buf, size_t n, const char *what) { (void)snprintf(buf, n, "t%ld-%s", (long)getpid(), what); }

/* Runs fn(arg) in a forked child; returns its exit status (or 128 + signal). */
static int run_child(int (*fn)(void *), void *arg)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        tl_state.passed = tl_state.failed = 0;
        int rc = fn(arg);
        fflush(stdout);
        _exit(rc);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

static int child_result(void) { return tl_state.failed == 0u ? 0 : 1; }

static unsigned attached(rt_fma_region_t *r)
{
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    return info.attached;
}

static size_t used_blocks(rt_fma_region_t *r)
{
    rt_stats_t s;
    rt_fma_region_stats(r, &s);
    return s.used_blocks;
}

/* ---- private ---------------------------------------------------------------------------------- */

static bool fill_and_free(rt_fma_region_t *r, unsigned count)
{
    void *p[64];
    TL_REQUIRE(count <= 64u, "count");
    for (unsigned i = 0; i < count; i++) {
        size_t n = (size_t)16u << (i % 9u); /* 16 .. 4096 */
        p[i] = rt_fma_region_alloc(r, n);
        TL_REQUIRE(p[i] != NULL, "alloc %zu", n);
        TL_REQUIRE(rt_fma_region_contains(r, p[i]), "inside");
        TL_REQUIRE(((uintptr_t)p[i] & 15u) == 0u, "16-aligned");
        memset(p[i], (int)i, n);
    }
    for (unsigned i = 0; i < count; i++) {
        size_t n = (size_t)16u << (i % 9u);
        const unsigned char *c = p[i];
        TL_REQUIRE(c[0] == (unsigned char)i && c[n - 1u] == (unsigned char)i, "block %u intact", i);
    }
    TL_CHECK(used_blocks(r) == count, "used_blocks %zu", used_blocks(r));
    for (unsigned i = 0; i < count; i++) {
        rt_fma_region_free(r, p[i]);
    }
    TL_CHECK(used_blocks(r) == 0u, "all freed");
    return TL_CHECK(rt_fma_region_check(r), "check");
}

static void test_private(void)
{
    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_PRIVATE, NULL, true);
    if (!TL_CHECK(r != NULL, "private open: %s", rt_fma_region_error())) {
        return;
    }
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    TL_CHECK(info.creator && info.attached == 1u && info.size == MiB && !info.broken, "info");
    TL_CHECK(info.name != NULL && info.name[0] == '\0', "private: no name");
    TL_CHECK(((uintptr_t)info.base & 4095u) == 0u, "page aligned");
    (void)fill_and_free(r, 40);
    void *q = rt_fma_region_calloc(r, 10, 10);
    TL_CHECK(q != NULL && ((unsigned char *)q)[99] == 0u, "calloc");
    q = rt_fma_region_realloc(r, q, 3000);
    TL_CHECK(q != NULL && rt_fma_region_usable_size(r, q) >= 3000u, "realloc");
    void *a = rt_fma_region_memalign(r, 256, 40);
    TL_CHECK(a != NULL && ((uintptr_t)a & 255u) == 0u, "memalign 256");
    rt_fma_region_free(r, a);
    rt_fma_region_free(r, q);
    TL_CHECK(rt_fma_region_down(r) == 0, "down");

    /* BSD 4.4 through the flags */
    r = rt_fma_region_init(MiB, RT_FMA_PRIVATE | RT_FMA_BSD44, NULL, true);
    if (TL_CHECK(r != NULL, "bsd44 open: %s", rt_fma_region_error())) {
        (void)fill_and_free(r, 30);
        TL_CHECK(rt_fma_region_down(r) == 0, "down");
    }

    /* over a caller buffer */
    void *buf = aligned_alloc(4096, 256u * 1024u);
    rt_fma_region_config_t c = {.size = 256u * 1024u, .flags = RT_FMA_PRIVATE, .buffer = buf};
    r = rt_fma_region_open(&c);
    if (TL_CHECK(r != NULL, "buffer open: %s", rt_fma_region_error())) {
        TL_CHECK(rt_fma_region_contains(r, (char *)buf + 5000) &&
                     !rt_fma_region_contains(r, (char *)buf + 256u * 1024u),
                 "contains = the buffer");
        (void)fill_and_free(r, 20);
        TL_CHECK(rt_fma_region_down(r) == 0, "down");
    }
    free(buf);
}

typedef struct thread_arg {
    rt_fma_region_t *r;
    unsigned seed;
    bool ok;
} thread_arg_t;

static void *private_thread(void *p)
{
    thread_arg_t *t = p;
    tl_rng_t rng = tl_rng_seed(t->seed);
    void *slot[32] = {0};
    t->ok = true;
    for (int i = 0; i < 5000; i++) {
        unsigned k = (unsigned)tl_range(&rng, 0, 31);
        if (slot[k] != NULL) {
            if (*(unsigned char *)slot[k] != (unsigned char)k) {
                t->ok = false;
            }
            rt_fma_region_free(t->r, slot[k]);
            slot[k] = NULL;
        } else {
            slot[k] = rt_fma_region_alloc(t->r, tl_range(&rng, 1, 2048));
            if (slot[k] != NULL) {
                *(unsigned char *)slot[k] = (unsigned char)k;
            }
        }
    }
    for (unsigned k = 0; k < 32u; k++) {
        rt_fma_region_free(t->r, slot[k]);
    }
    return NULL;
}

static void test_private_threads(void)
{
    rt_fma_region_t *r = rt_fma_region_init(2 * MiB, RT_FMA_PRIVATE, NULL, true);
    if (!TL_CHECK(r != NULL, "open: %s", rt_fma_region_error())) {
        return;
    }
    pthread_t th[2];
    thread_arg_t arg[2] = {{r, 1, false}, {r, 2, false}};
    for (int i = 0; i < 2; i++) {
        TL_CHECK(pthread_create(&th[i], NULL, private_thread, &arg[i]) == 0, "thread");
    }
    for (int i = 0; i < 2; i++) {
        (void)pthread_join(th[i], NULL);
        TL_CHECK(arg[i].ok, "thread %d saw its blocks intact", i);
    }
    TL_CHECK(used_blocks(r) == 0u && rt_fma_region_check(r), "region clean after threads");
    TL_CHECK(rt_fma_region_down(r) == 0, "down");
}

/* The handler runs after the lock is released: it may call the region. */
typedef struct reentrant {
    tl_recorder_t rec;
    rt_fma_region_t *r;
    bool allocated;
} reentrant_t;

static void reentrant_handler(void *context, const rt_error_t *e)
{
    reentrant_t *x = context;
    tl_record(&x->rec, e);
    void *p = rt_fma_region_alloc(x->r, 32);
    x->allocated = p != NULL;
    rt_fma_region_free(x->r, p);
}

static void test_bad_input(void)
{
    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_PRIVATE, NULL, true);
    if (!TL_CHECK(r != NULL, "open: %s", rt_fma_region_error())) {
        return;
    }
    reentrant_t x = {.r = r};
    rt_fma_region_set_handler(r, reentrant_handler, &x);
    int local = 0;
    rt_fma_region_free(r, &local);
    TL_CHECK(x.rec.count == 1u && x.rec.last == RT_ERR_FOREIGN_POINTER && x.rec.pointer == &local,
             "foreign pointer reported (%lu, %s)", x.rec.count, tl_kind_name(x.rec.last));
    TL_CHECK(x.allocated, "the handler could allocate: the lock was released before it ran");
    void *p = rt_fma_region_alloc(r, 64);
    rt_fma_region_free(r, p);
    tl_recorder_reset(&x.rec);
    rt_fma_region_free(r, p);
    TL_CHECK(x.rec.count == 1u && x.rec.last == RT_ERR_DOUBLE_FREE, "double free reported (%s)",
             tl_kind_name(x.rec.last));
    tl_recorder_reset(&x.rec);
    p = rt_fma_region_alloc(r, 64);
    rt_fma_region_free(r, (char *)p + 16);
    TL_CHECK(x.rec.count == 1u && x.rec.last == RT_ERR_BAD_POINTER, "interior pointer reported (%s)",
             tl_kind_name(x.rec.last));
    rt_fma_region_free(r, p);
    rt_stats_t s;
    rt_fma_region_stats(r, &s);
    TL_CHECK(s.errors == 3u && s.used_blocks == 0u, "3 errors counted, region intact");
    TL_CHECK(rt_fma_region_check(r), "check");
    TL_CHECK(rt_fma_region_down(r) == 0, "down");
}

static void test_config_errors(void)
{
    char key[64];
    make_key(key, sizeof key, "cfg");
    errno = 0;
    TL_CHECK(rt_fma_region_init(0, RT_FMA_PRIVATE, NULL, true) == NULL && errno == EINVAL, "size 0: EINVAL");
    TL_CHECK(rt_fma_region_init(5000, RT_FMA_PRIVATE, NULL, true) == NULL && errno == EINVAL &&
                 strstr(rt_fma_region_error(), "rt_fma_create_ex") != NULL,
             "too small: EINVAL, '%s'", rt_fma_region_error());
    TL_CHECK(rt_fma_region_init(MiB, RT_FMA_SHARED, "bad/key", true) == NULL && errno == EINVAL, "bad key: EINVAL");
    TL_CHECK(rt_fma_region_init(MiB, RT_FMA_SHARED, NULL, true) == NULL && errno == EINVAL, "no key: EINVAL");
    TL_CHECK(rt_fma_region_init(MiB, RT_FMA_SHARED, key, false) == NULL && errno == ENOENT,
             "attach a missing region: ENOENT (%d)", errno);
    TL_CHECK(!segment_exists(key), "nothing left behind");
    rt_fma_region_config_t c = {
        .size = MiB, .flags = RT_FMA_SHARED, .key = key, .create = true, .address = (void *)(uintptr_t)12345u};
    TL_CHECK(rt_fma_region_open(&c) == NULL && errno == EINVAL, "unaligned address: EINVAL");

    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_SHARED | RT_FMA_EXCL, key, true);
    if (!TL_CHECK(r != NULL, "shared open: %s", rt_fma_region_error())) {
        return;
    }
    /* the same key again in this process: the same handle, one reference more */
    rt_fma_region_t *again = rt_fma_region_init(MiB, RT_FMA_SHARED, key, false);
    TL_CHECK(again == r, "same handle");
    TL_CHECK(rt_fma_region_init(MiB, RT_FMA_SHARED | RT_FMA_EXCL, key, true) == NULL && errno == EEXIST,
             "EXCL on an existing region: EEXIST");
    TL_CHECK(rt_fma_region_down(again) == 0 && segment_exists(key), "first down keeps it");
    TL_CHECK(rt_fma_region_down(r) == 0 && !segment_exists(key), "second down removes it");
    TL_CHECK(rt_fma_region_down(NULL) == -1 && errno == EINVAL, "down(NULL)");
    TL_CHECK(rt_fma_region_alloc(NULL, 16) == NULL, "alloc(NULL)");
}

/* ---- pinned ------------------------------------------------------------------------------------- */

static size_t vm_locked_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    size_t kib = 0;
    if (f == NULL) {
        return 0;
    }
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "VmLck: %zu kB", &kib) == 1) {
            break;
        }
    }
    (void)fclose(f);
    return kib;
}

static bool is_mlock_errno(int e) { return e == EPERM || e == ENOMEM || e == EAGAIN; }

/* In a child: RLIMIT_MEMLOCK 64 KiB, CAP_IPC_LOCK dropped, then pinned opens must fail. */
static int pinned_denied_child(void *arg)
{
    (void)arg;
    struct rlimit lim = {64u * 1024u, 64u * 1024u};
    (void)setrlimit(RLIMIT_MEMLOCK, &lim);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) == 0) {
        d[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
        d[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
        (void)syscall(SYS_capset, &h, d);
    }
    void *probe = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* as a system call: the sanitizers' mlock interceptors do nothing and report success */
    if (probe != MAP_FAILED && syscall(SYS_mlock, probe, MiB) == 0) {
        printf("SKIP pinned error path: mlock of 1 MiB still succeeds under RLIMIT_MEMLOCK 64 KiB "
               "(CAP_IPC_LOCK could not be dropped here)\n");
        return CHILD_SKIP;
    }
    errno = 0;
    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_PRIVATE | RT_FMA_PINNED, NULL, true);
    int e = errno;
    TL_CHECK(r == NULL && is_mlock_errno(e),
             "pinned private over the limit fails with mlock's "
             "errno (got %p, errno %d)",
             (void *)r, e);
    TL_CHECK(strstr(rt_fma_region_error(), "mlock") != NULL && strstr(rt_fma_region_error(), "RLIMIT_MEMLOCK") != NULL,
             "the error says why: '%s'", rt_fma_region_error());
    printf("  pinned refused as expected: %s\n", rt_fma_region_error());
    char key[64];
    make_key(key, sizeof key, "pinx");
    r = rt_fma_region_init(MiB, RT_FMA_SHARED | RT_FMA_PINNED, key, true);
    e = errno;
    TL_CHECK(r == NULL && is_mlock_errno(e), "pinned shared over the limit fails (errno %d)", e);
    TL_CHECK(!segment_exists(key), "the refused shared region is removed");
    return child_result();
}

static void test_pinned(void)
{
    size_t before = vm_locked_kib();
    errno = 0;
    rt_fma_region_t *r = rt_fma_region_init(256u * 1024u, RT_FMA_PRIVATE | RT_FMA_PINNED, NULL, true);
    if (r == NULL) {
        TL_CHECK(is_mlock_errno(errno) && strstr(rt_fma_region_error(), "mlock") != NULL,
                 "a failed pinned open reports mlock's error (errno %d, '%s')", errno, rt_fma_region_error());
        tl_skip("pinned success path: mlock is not permitted here: %s", rt_fma_region_error());
    } else {
        size_t during = vm_locked_kib();
        TL_CHECK(during >= before + 256u, "VmLck grew by the region: %zu -> %zu kB", before, during);
        (void)fill_and_free(r, 20);
        TL_CHECK(rt_fma_region_down(r) == 0, "down");
        TL_CHECK(vm_locked_kib() <= before, "unlocked after down");
    }
    int rc = run_child(pinned_denied_child, NULL);
    if (rc == CHILD_SKIP) {
        tl_skip("pinned error path (see the child's reason above)");
    } else {
        TL_CHECK(rc == 0, "pinned error-path child: status %d", rc);
    }
}

/* ---- shared: fork ----------------------------------------------------------------------------- */

typedef struct shared_data {
    uint32_t magic;
    int counter;
    char text[64];
    char *other; /* a block allocated by the other process */
} shared_data_t;

typedef struct fork_arg {
    rt_fma_region_t *r;
    shared_data_t *d;
    const char *key;
} fork_arg_t;

static int fork_child(void *p)
{
    fork_arg_t *a = p;
    TL_CHECK(attached(a->r) == 2u, "the child is attached by fork (%u)", attached(a->r));
    TL_CHECK(a->d->magic == 0xFEEDu && strcmp(a->d->text, "written by the parent") == 0,
             "the child reads the parent's object");
    rt_fma_region_t *again = rt_fma_region_init(0, RT_FMA_SHARED, a->key, false);
    TL_CHECK(again == a->r, "opening the key again in the child gives the inherited handle");
    (void)rt_fma_region_down(again);
    strcpy(a->d->text, "changed by the child");
    a->d->counter++;
    a->d->other = rt_fma_region_alloc(a->r, 100);
    TL_CHECK(a->d->other != NULL, "the child allocates");
    if (a->d->other != NULL) {
        strcpy(a->d->other, "allocated by the child");
    }
    TL_CHECK(rt_fma_region_down(a->r) == 0, "the child detaches");
    return child_result();
}

static void test_shared_fork(void)
{
    char key[64];
    make_key(key, sizeof key, "fork");
    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_SHARED, key, true);
    if (!TL_CHECK(r != NULL, "shared open: %s", rt_fma_region_error())) {
        return;
    }
    shared_data_t *d = rt_fma_region_alloc(r, sizeof *d);
    d->magic = 0xFEEDu;
    d->counter = 1;
    strcpy(d->text, "written by the parent");
    d->other = NULL;
    fork_arg_t a = {r, d, key};
    int rc = run_child(fork_child, &a);
    TL_CHECK(rc == 0, "fork child: status %d", rc);
    TL_CHECK(strcmp(d->text, "changed by the child") == 0 && d->counter == 2, "the parent sees the child's change");
    TL_CHECK(d->other != NULL && rt_fma_region_contains(r, d->other) && strcmp(d->other, "allocated by the child") == 0,
             "the parent reads the child's block");
    TL_CHECK(attached(r) == 1u, "the child detached: 1 attached");
    TL_CHECK(segment_exists(key), "still there while the parent is attached");
    rt_fma_region_free(r, d->other);
    rt_fma_region_free(r, d);
    TL_CHECK(used_blocks(r) == 0u && rt_fma_region_check(r), "clean");
    TL_CHECK(rt_fma_region_down(r) == 0, "down");
    TL_CHECK(!segment_exists(key), "gone after both detached (shm_open: ENOENT)");
}

/* ---- shared: exec ----------------------------------------------------------------------------- */

/* The re-executed image: attaches by key, finds the parent's object at the address it was given
 * (same address in both processes), changes it, allocates, detaches. */
static int exec_child(const char *key, const char *ptr_text)
{
    shared_data_t *d = (shared_data_t *)(uintptr_t)strtoull(ptr_text, NULL, 16);
    rt_fma_region_t *r = rt_fma_region_init(0, RT_FMA_SHARED, key, false);
    if (!TL_CHECK(r != NULL, "exec child: attach %s: %s", key, rt_fma_region_error())) {
        return 1;
    }
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    TL_CHECK(!info.creator && info.attached == 2u, "exec child attached (%u)", info.attached);
    if (TL_CHECK(rt_fma_region_contains(r, d), "the parent's pointer lies in the region here too")) {
        TL_CHECK(d->magic == 0xFEEDu && strcmp(d->text, "written by the parent") == 0,
                 "the exec'd process reads the parent's object");
        strcpy(d->text, "changed by the exec'd process");
        d->counter += 10;
        d->other = rt_fma_region_alloc(r, 200);
        if (TL_CHECK(d->other != NULL, "exec child allocates")) {
            strcpy(d->other, "allocated by the exec'd process");
        }
    }
    TL_CHECK(rt_fma_region_down(r) == 0, "exec child detaches");
    return child_result();
}

static void test_shared_exec(void)
{
    char key[64];
    make_key(key, sizeof key, "exec");
    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_SHARED, key, true);
    if (!TL_CHECK(r != NULL, "shared open: %s", rt_fma_region_error())) {
        return;
    }
    shared_data_t *d = rt_fma_region_alloc(r, sizeof *d);
    memset(d, 0, sizeof *d);
    d->magic = 0xFEEDu;
    d->counter = 1;
    strcpy(d->text, "written by the parent");
    char ptr_text[32];
    (void)snprintf(ptr_text, sizeof ptr_text, "%llx", (unsigned long long)(uintptr_t)d);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {exe_path, (char *)"--exec-child", key, ptr_text, NULL};
        execv(exe_path, argv);
        printf("SKIP shared exec: execv(%s) failed: %s\n", exe_path, strerror(errno));
        fflush(stdout);
        _exit(CHILD_SKIP);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (rc == CHILD_SKIP) {
        tl_skip("shared exec (see above)");
    } else {
        TL_CHECK(rc == 0, "exec'd child: status %d", rc);
        TL_CHECK(strcmp(d->text, "changed by the exec'd process") == 0 && d->counter == 11,
                 "the parent sees the exec'd process's change");
        TL_CHECK(d->other != NULL && rt_fma_region_contains(r, d->other) &&
                     strcmp(d->other, "allocated by the exec'd process") == 0,
                 "the parent reads the exec'd process's block");
        rt_fma_region_free(r, d->other);
    }
    TL_CHECK(attached(r) == 1u && segment_exists(key), "the exec'd process detached, segment kept");
    rt_fma_region_free(r, d);
    TL_CHECK(used_blocks(r) == 0u, "clean");
    TL_CHECK(rt_fma_region_down(r) == 0, "down");
    TL_CHECK(!segment_exists(key), "gone after both detached");
}

/* ---- shared: crashes --------------------------------------------------------------------------- */

typedef struct crash_arg {
    rt_fma_region_t *r;
    int mode; /* 0 _exit, 1 abort, 2 SIGKILL, 3 corrupt then _exit */
    void *corrupt_at;
} crash_arg_t;

static int crash_child(void *p)
{
    crash_arg_t *a = p;
    if (rt_fma_region_lock(a->r) != 0) {
        return 1;
    }
    void *q = rt_fma_region_alloc(a->r, 100); /* recursive: inside the held lock */
    if (q != NULL) {
        memset(q, 0x5a, 100);
    }
    fflush(stdout);
    switch (a->mode) {
    case 0: _exit(3);
    case 1: abort();
    case 2: (void)raise(SIGKILL); break;
    default:
        memset(a->corrupt_at, 0x7f, 16); /* the entry block of a page: count and links */
        _exit(3);
    }
    return 1;
}

static void test_crash(void)
{
    static const char *const what[] = {"_exit", "abort", "SIGKILL"};
    static const int expect[] = {3, 128 + SIGABRT, 128 + SIGKILL};
    char key[64];
    make_key(key, sizeof key, "crash");
    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_SHARED, key, true);
    if (!TL_CHECK(r != NULL, "shared open: %s", rt_fma_region_error())) {
        return;
    }
    rt_fma_region_info_t robust;
    rt_fma_region_info(r, &robust);
    if (!robust.robust) {
        tl_skip("crashed lock holders: no robust mutexes here (the kernel keeps no robust futex "
                "list for this process, e.g. under qemu-user)");
        TL_CHECK(rt_fma_region_down(r) == 0 && !segment_exists(key), "down removes it");
        return;
    }
    for (int mode = 0; mode < 3; mode++) {
        crash_arg_t a = {r, mode, NULL};
        int rc = run_child(crash_child, &a);
        TL_CHECK(rc == expect[mode], "child died by %s: status %d", what[mode], rc);
        alarm(60); /* a lock left held would hang here */
        void *p = rt_fma_region_alloc(r, 64);
        alarm(0);
        rt_fma_region_info_t info;
        rt_fma_region_info(r, &info);
        TL_CHECK(p != NULL, "%s: the region is usable after its lock holder died", what[mode]);
        TL_CHECK(info.recoveries == (uint64_t)mode + 1u && !info.broken, "%s: recovered (recoveries %llu)", what[mode],
                 (unsigned long long)info.recoveries);
        TL_CHECK(info.attached == 1u, "%s: the dead child is not counted (%u)", what[mode], info.attached);
        TL_CHECK(rt_fma_region_check(r), "%s: region consistent", what[mode]);
        rt_fma_region_free(r, p);
    }
    TL_CHECK(used_blocks(r) == 3u, "only the dead children's 3 blocks remain");
    TL_CHECK(rt_fma_region_down(r) == 0 && !segment_exists(key),
             "down removes it: the dead children do not keep it alive");

    /* A child that corrupts the region while holding the lock leaves it broken. */
    make_key(key, sizeof key, "broken");
    r = rt_fma_region_init(MiB, RT_FMA_SHARED, key, true);
    if (!TL_CHECK(r != NULL, "shared open: %s", rt_fma_region_error())) {
        return;
    }
    tl_recorder_t rec = {0};
    rt_fma_region_set_handler(r, tl_record, &rec);
    char *p1 = rt_fma_region_alloc(r, 32); /* the last block of a fresh page */
    char *p2 = rt_fma_region_alloc(r, 32);
    rt_fma_region_free(r, p2);
    crash_arg_t a = {r, 3, (void *)((uintptr_t)p1 & ~(uintptr_t)4095u)};
    int rc = run_child(crash_child, &a);
    TL_CHECK(rc == 3, "corrupting child: status %d", rc);
    void *p = rt_fma_region_alloc(r, 64);
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    TL_CHECK(p == NULL && info.broken, "a corrupted region refuses requests (broken %d)", (int)info.broken);
    TL_CHECK(rec.count >= 1u && rec.last == RT_ERR_CORRUPTED, "reported as corrupted (%s)", tl_kind_name(rec.last));
    TL_CHECK(rt_fma_region_alloc(r, 16) == NULL && !rt_fma_region_check(r), "and stays broken");
    TL_CHECK(rt_fma_region_down(r) == 0 && !segment_exists(key), "a broken region is removed too");
}

/* ---- shared: create race, concurrent requests, occupied addresses ---------------------------- */

typedef struct race_report {
    int creator;
    uintptr_t base;
} race_report_t;

typedef struct race_arg {
    const char *key;
    int start[2]; /* closed by the parent: go */
    int done[2];  /* closed by the parent: everyone attached, detach */
    int out[2];
} race_arg_t;

static int race_child(void *p)
{
    race_arg_t *a = p;
    char c;
    (void)close(a->start[1]);
    (void)close(a->done[1]);
    (void)close(a->out[0]);
    (void)read(a->start[0], &c, 1);
    rt_fma_region_t *r = rt_fma_region_init(MiB, RT_FMA_SHARED, a->key, true);
    race_report_t rep = {-1, 0};
    if (r != NULL) {
        rt_fma_region_info_t info;
        rt_fma_region_info(r, &info);
        rep.creator = info.creator ? 1 : 0;
        rep.base = (uintptr_t)info.base;
        void *q = rt_fma_region_alloc(r, 48);
        rt_fma_region_free(r, q);
    } else {
        printf("race child: %s\n", rt_fma_region_error());
    }
    (void)!write(a->out[1], &rep, sizeof rep);
    (void)read(a->done[0], &c, 1);
    return r != NULL && rt_fma_region_down(r) == 0 ? 0 : 1;
}

static void test_race(void)
{
    enum { N = 4 };
    char key[64];
    make_key(key, sizeof key, "race");
    race_arg_t a = {.key = key};
    if (pipe(a.start) != 0 || pipe(a.done) != 0 || pipe(a.out) != 0) {
        TL_CHECK(false, "pipe");
        return;
    }
    pid_t pid[N];
    fflush(stdout);
    for (int i = 0; i < N; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            _exit(race_child(&a));
        }
    }
    (void)close(a.start[0]);
    (void)close(a.start[1]); /* go */
    (void)close(a.out[1]);
    int creators = 0;
    uintptr_t base = 0;
    bool same = true;
    for (int i = 0; i < N; i++) {
        race_report_t rep;
        if (read(a.out[0], &rep, sizeof rep) != (ssize_t)sizeof rep || rep.creator < 0) {
            same = false;
            continue;
        }
        creators += rep.creator;
        if (base == 0u) {
            base = rep.base;
        }
        same = same && rep.base == base;
    }
    TL_CHECK(segment_exists(key), "exists while the children are attached");
    (void)close(a.done[0]);
    (void)close(a.done[1]); /* detach */
    (void)close(a.out[0]);
    for (int i = 0; i < N; i++) {
        int status = 0;
        (void)waitpid(pid[i], &status, 0);
        TL_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "race child %d", i);
    }
    TL_CHECK(creators == 1 && same, "%d racing opens: %d creator(s), one address %d", N, creators, (int)same);
    TL_CHECK(!segment_exists(key), "removed by the last of them");
}

typedef struct busy_arg {
    rt_fma_region_t *r;
    int *counter;
    unsigned seed;
} busy_arg_t;

static int busy(void *p)
{
    busy_arg_t *a = p;
    tl_rng_t rng = tl_rng_seed(a->seed);
    unsigned char *slot[16] = {0};
    size_t size[16] = {0};
    bool ok = true;
    for (int i = 0; i < 3000; i++) {
        unsigned k = (unsigned)tl_range(&rng, 0, 15);
        if (slot[k] != NULL) {
            ok = ok && slot[k][0] == (unsigned char)(a->seed + k) &&
                 slot[k][size[k] - 1u] == (unsigned char)(a->seed + k);
            rt_fma_region_free(a->r, slot[k]);
            slot[k] = NULL;
        } else {
            size[k] = tl_range(&rng, 1, 5000);
            slot[k] = rt_fma_region_alloc(a->r, size[k]);
            if (slot[k] != NULL) {
                memset(slot[k], (int)(unsigned char)(a->seed + k), size[k]);
            }
        }
        if (rt_fma_region_lock(a->r) == 0) {
            (*a->counter)++;
            rt_fma_region_unlock(a->r);
        }
    }
    for (unsigned k = 0; k < 16u; k++) {
        rt_fma_region_free(a->r, slot[k]);
    }
    return ok ? 0 : 1;
}

static void test_concurrent(void)
{
    char key[64];
    make_key(key, sizeof key, "busy");
    rt_fma_region_t *r = rt_fma_region_init(4 * MiB, RT_FMA_SHARED, key, true);
    if (!TL_CHECK(r != NULL, "shared open: %s", rt_fma_region_error())) {
        return;
    }
    int *counter = rt_fma_region_alloc(r, sizeof *counter);
    *counter = 0;
    fflush(stdout);
    busy_arg_t child = {r, counter, 7};
    pid_t pid = fork();
    if (pid == 0) {
        int rc = busy(&child);
        rc |= rt_fma_region_down(r) == 0 ? 0 : 2;
        _exit(rc);
    }
    busy_arg_t self = {r, counter, 9};
    int mine = busy(&self);
    int status = 0;
    (void)waitpid(pid, &status, 0);
    TL_CHECK(mine == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "both processes saw their blocks intact (%d, %d)", mine, status);
    TL_CHECK(*counter == 6000, "counter under the region's lock: %d", *counter);
    TL_CHECK(used_blocks(r) == 1u && rt_fma_region_check(r), "region consistent");
    rt_fma_region_free(r, counter);
    TL_CHECK(rt_fma_region_down(r) == 0 && !segment_exists(key), "down removes it");
}

typedef struct occupied_arg {
    rt_fma_region_t *r;
    const char *key;
} occupied_arg_t;

static int occupied_child(void *p)
{
    occupied_arg_t *a = p;
    rt_fma_region_info_t info;
    rt_fma_region_info(a->r, &info);
    TL_CHECK(rt_fma_region_down(a->r) == 0, "child detaches its inherited handle");
    void *blocker =
        mmap(info.base, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    TL_CHECK(blocker == info.base, "child occupies the region's address");
    errno = 0;
    rt_fma_region_t *r = rt_fma_region_init(0, RT_FMA_SHARED, a->key, false);
    TL_CHECK(r == NULL && errno == EADDRINUSE && strstr(rt_fma_region_error(), "occupied") != NULL,
             "attach fails cleanly: errno %d, '%s'", errno, rt_fma_region_error());
    return child_result();
}

static void test_address(void)
{
    char key[64];
    make_key(key, sizeof key, "addr");
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    rt_fma_region_config_t c = {.size = MiB, .flags = RT_FMA_SHARED, .key = key, .create = true, .address = page};
    errno = 0;
    TL_CHECK(rt_fma_region_open(&c) == NULL && errno == EADDRINUSE,
             "creator's chosen address "
             "occupied: EADDRINUSE (%d)",
             errno);
    TL_CHECK(!segment_exists(key), "nothing left behind");
    (void)munmap(page, 4096);
    c.address = NULL;
    rt_fma_region_t *r = rt_fma_region_open(&c);
    if (!TL_CHECK(r != NULL, "shared open: %s", rt_fma_region_error())) {
        return;
    }
    occupied_arg_t a = {r, key};
    TL_CHECK(run_child(occupied_child, &a) == 0, "occupied child");
    TL_CHECK(attached(r) == 1u, "the failed attacher left no slot");
    TL_CHECK(rt_fma_region_down(r) == 0 && !segment_exists(key), "down removes it");
}

/* ---- the article's interface ---------------------------------------------------------------- */

static int article_child(void *p)
{
    char *text = p;
    TL_CHECK(fmaregion() != NULL && strcmp(text, "fmaalloc'd by the parent") == 0,
             "the child inherits the default region and sees the parent's block");
    char *q = fmaalloc(64);
    TL_CHECK(q != NULL && rt_fma_region_contains(fmaregion(), q), "fmaalloc in the child");
    fmafree(q);
    strcpy(text, "seen by the child");
    TL_CHECK(fmadown() == 0, "fmadown in the child");
    return child_result();
}

static void test_article(void)
{
    TL_CHECK(fmainit(MiB, RT_FMA_PRIVATE, 1) == 0, "fmainit private: %s", rt_fma_region_error());
    void *p = fmaalloc(100);
    TL_CHECK(p != NULL && rt_fma_region_contains(fmaregion(), p), "fmaalloc");
    TL_CHECK(fmainit(MiB, RT_FMA_PRIVATE, 1) == -1 && errno == EALREADY, "second fmainit");
    fmafree(p);
    TL_CHECK(used_blocks(fmaregion()) == 0u, "fmafree");
    TL_CHECK(fmadown() == 0 && fmaregion() == NULL, "fmadown");
    TL_CHECK(fmaalloc(16) == NULL, "fmaalloc without a region: NULL");
    TL_CHECK(fmadown() == -1 && errno == ENXIO, "fmadown without a region: ENXIO");

    /* shared, with the article's char key: take one no region uses now */
    int key = -1;
    for (int k = (int)(getpid() % 200) + 1, n = 0; n < 255; n++, k = k % 255 + 1) {
        if (fmainit(MiB, (int)(RT_FMA_SHARED | RT_FMA_EXCL | RT_FMA_KEY((char)k)), 1) == 0) {
            key = k;
            break;
        }
        if (errno != EEXIST) {
            break;
        }
    }
    if (!TL_CHECK(key > 0, "fmainit shared: %s", rt_fma_region_error())) {
        return;
    }
    char name[RT_FMA_CHAR_KEY_MAX];
    (void)rt_fma_char_key((char)key, name);
    TL_CHECK(segment_exists(name), "the char key %d names /rtalloc-fma-%s", key, name);
    char *text = fmaalloc(64);
    strcpy(text, "fmaalloc'd by the parent");
    TL_CHECK(run_child(article_child, text) == 0, "article child");
    TL_CHECK(strcmp(text, "seen by the child") == 0 && attached(fmaregion()) == 1u,
             "the parent sees the child's write; the child detached");
    fmafree(text);
    TL_CHECK(fmadown() == 0 && !segment_exists(name), "fmadown of the last removes the segment");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 4 && strcmp(argv[1], "--exec-child") == 0) {
        int rc = exec_child(argv[2], argv[3]);
        fflush(stdout);
        return rc;
    }
    ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1u);
    if (n <= 0) {
        (void)snprintf(exe_path, sizeof exe_path, "%s", argv[0]);
    } else {
        exe_path[n] = '\0';
    }
    test_private();
    test_private_threads();
    test_bad_input();
    test_config_errors();
    test_pinned();
    test_shared_fork();
    test_shared_exec();
    test_crash();
    test_race();
    test_concurrent();
    test_address();
    test_article();
    return tl_summary("fma_region");
}
