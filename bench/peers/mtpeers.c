/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/mtpeers.c -- tlsf+mutex and aomalloc for the multi-thread study (mtpeers.h).
 */
#include "mtpeers.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "peers.h"
#include "rtalloc/drivers.h"

#if defined(__has_include)
#if __has_include("rtalloc/waitfree.h")
#include "rtalloc/waitfree.h"
#endif
#endif

/* --- tlsf+mutex ------------------------------------------------------------------------------ */

/* One global mutex, as the paper's TLSF: every malloc and free of every instance takes it. */
static pthread_mutex_t tlsf_global_mutex = PTHREAD_MUTEX_INITIALIZER;
static const rt_allocator_t *tlsf_plain;
static rt_allocator_t tlsf_mutex;

/* A TLSF instance whose lock hooks take `m`. */
static void *tlsf_locked_create(void *mem, size_t size, pthread_mutex_t *m)
{
    void *h = tlsf_plain->create(mem, size);
    if (h != NULL) {
        tlsf_plain->set_lock(h, rt_pthread_lock, rt_pthread_unlock, m);
    }
    return h;
}
static void *tlsf_mutex_create(void *mem, size_t size) { return tlsf_locked_create(mem, size, &tlsf_global_mutex); }

/* The descriptor of TLSF under a lock: the same malloc and free (the heap calls the lock hooks). */
static rt_allocator_t tlsf_locked(const char *name, const char *text, void *(*create)(void *, size_t))
{
    rt_allocator_t d = *tlsf_plain;
    d.name = name;
    d.description = text;
    d.create = create;
    d.set_lock = NULL; /* taken */
    d.thread_safe = true;
    return d;
}

const rt_allocator_t *bench_mt_tlsf_mutex(void)
{
    if (tlsf_mutex.name == NULL) {
        tlsf_plain = rt_registry_find("tlsf");
        if (tlsf_plain == NULL || tlsf_plain->set_lock == NULL) {
            return NULL;
        }
        tlsf_mutex = tlsf_locked("tlsf+mutex", "TLSF heap under one global pthread mutex (the heap's lock hooks)",
                                 tlsf_mutex_create);
    }
    return &tlsf_mutex;
}

/* --- tlsf+pi: the same under a priority-inheritance mutex ------------------------------------ */

/* PTHREAD_PRIO_INHERIT: a lower-priority holder runs at the priority of the highest waiter, so a
 * middle-priority thread cannot keep the holder (and the waiter) off the CPU for long -- the
 * remedy a real-time user adds to TLSF+mutex; the wait for the holder's critical section stays. */
static pthread_mutex_t tlsf_pi_mutex;
static rt_allocator_t tlsf_pi;

static void *tlsf_pi_create(void *mem, size_t size) { return tlsf_locked_create(mem, size, &tlsf_pi_mutex); }

const rt_allocator_t *bench_mt_tlsf_pi(void)
{
    if (tlsf_pi.name == NULL) {
        if (bench_mt_tlsf_mutex() == NULL) {
            return NULL;
        }
        pthread_mutexattr_t attr;
        if (pthread_mutexattr_init(&attr) != 0 || pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) != 0 ||
            pthread_mutex_init(&tlsf_pi_mutex, &attr) != 0) {
            return NULL;
        }
        pthread_mutexattr_destroy(&attr);
        tlsf_pi = tlsf_locked(
            "tlsf+pi", "TLSF heap under one priority-inheritance pthread mutex (PTHREAD_PRIO_INHERIT)", tlsf_pi_create);
    }
    return &tlsf_pi;
}

/* --- aomalloc -------------------------------------------------------------------------------- */

#ifdef RTBENCH_HAVE_AO
#include <atomic_ops_malloc.h>

/* The almost-lock-free stack's pop (atomic_ops_stack.h, AO_USE_ALMOST_LOCK_FREE) -- referenced
 * weakly: it is linked in exactly when the archive's AO_malloc was built on that stack, so a
 * non-NULL address says what the library (not our headers) does. */
extern const char ao_almost_lock_free_pop __asm__("AO_stack_pop_explicit_aux_acquire") __attribute__((weak));

/* AO_malloc's dead band. Requests up to 64 KiB - 8 are served from 64 KiB chunks cut into
 * power-of-two objects of 2^msb(size + 7) bytes, the first at offset ALIGNMENT - 8 = 8
 * (add_chunk_as). For 32,761..65,528 bytes the object is 64 KiB: none fits after that offset,
 * the chunk is dropped, and AO_malloc maps the next one -- in libatomic_ops 7.6.14 (Debian
 * bookworm) such a call maps (and leaks) 64 KiB chunks until mmap fails, i.e. until the address
 * space is exhausted (tens of TiB: hours), then returns NULL. The wrapper below returns that NULL
 * at once for the band, which is probed at start in a child process under a small RLIMIT_AS, so a
 * fixed library is not refused anything. */
#define AO_BAND_LO ((size_t)32761)
#define AO_BAND_HI ((size_t)65528)
static bool ao_band_dead;

static void *ao_malloc(void *h, size_t n)
{
    (void)h;
    if (ao_band_dead && n >= AO_BAND_LO && n <= AO_BAND_HI) {
        return NULL; /* what AO_malloc returns for it, hours later (above) */
    }
    return AO_malloc(n);
}

static void ao_free(void *h, void *p)
{
    (void)h;
    AO_free(p);
}

static const rt_allocator_t aomalloc = {
    .name = "aomalloc",
    .description = "libatomic_ops AO_malloc (Debian libatomic-ops-dev, static, mmap enabled)",
    .malloc_bound = "unbounded (lock-free: retries)",
    .free_bound = "unbounded (lock-free: retries)",
    .alignment = 16,
    .malloc = ao_malloc,
    .free = ao_free,
    .family = RT_FAMILY_SYSTEM,
    .thread_safe = true,
};

/* In a child: with the address space limited to what it uses plus 256 MiB, does
 * AO_malloc(AO_BAND_LO) fail while AO_malloc(AO_BAND_LO - 1) and AO_malloc(AO_BAND_HI + 1)
 * succeed? Exit status 0: the band is dead; 1: it is served; 2: the probe could not tell. */
static bool ao_probe_band(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (f == NULL || fscanf(f, "%ld", &pages) != 1) {
            _exit(2);
        }
        fclose(f);
        rlim_t vm = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
        struct rlimit rl = {vm + ((rlim_t)256 << 20), vm + ((rlim_t)256 << 20)};
        if (setrlimit(RLIMIT_AS, &rl) != 0) {
            _exit(2);
        }
        AO_malloc_enable_mmap();
        if (AO_malloc(AO_BAND_HI + 1) == NULL || AO_malloc(AO_BAND_LO - 1) == NULL) {
            _exit(2);
        }
        _exit(AO_malloc(AO_BAND_LO) == NULL ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return true; /* cannot tell: assume the known behaviour of 7.6 */
    }
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}

const rt_allocator_t *bench_mt_aomalloc(void)
{
    static int enabled;
    if (!enabled) {
        ao_band_dead = ao_probe_band();
        AO_malloc_enable_mmap(); /* without it: a 2 MB static heap, nothing above ~64 KiB */
        enabled = 1;
    }
    return &aomalloc;
}

const char *bench_mt_aomalloc_band(void)
{
    return ao_band_dead ? "AO_malloc never serves 32,761..65,528 bytes (it maps 64 KiB chunks it cannot use until "
                          "mmap fails); rtbench's wrapper returns that NULL at once"
                        : NULL;
}

const char *bench_mt_aomalloc_unavailable(void) { return NULL; }

const char *bench_mt_aomalloc_progress(void)
{
    static char text[400];
    bool almost = &ao_almost_lock_free_pop != NULL;
#ifdef AO_HAVE_compare_double_and_swap_double
    const char *hdr = "defined";
#else
    const char *hdr = "not defined";
#endif
    snprintf(text, sizeof text,
             "libatomic_ops_gpl.a's AO_malloc is %s; AO_HAVE_compare_double_and_swap_double is %s with "
             "rtbench's flags",
             almost ? "built on the ALMOST lock-free stack (no double-width CAS: 1-lock-free, a pop may spin)"
                    : "built on the lock-free stack (double-width CAS)",
             hdr);
    return text;
}
#else
const rt_allocator_t *bench_mt_aomalloc(void) { return NULL; }

const char *bench_mt_aomalloc_unavailable(void)
{
    return "rtbench built without libatomic_ops_gpl.a (Debian: libatomic-ops-dev; re-run cmake)";
}

const char *bench_mt_aomalloc_progress(void) { return NULL; }

const char *bench_mt_aomalloc_band(void) { return NULL; }
#endif

/* --- classification -------------------------------------------------------------------------- */

const rt_allocator_t *bench_mt_find(const char *name)
{
    const rt_allocator_t *t = bench_mt_tlsf_mutex();
    if (t != NULL && strcmp(name, t->name) == 0) {
        return t;
    }
    const rt_allocator_t *pi = bench_mt_tlsf_pi();
    if (pi != NULL && strcmp(name, pi->name) == 0) {
        return pi;
    }
    const rt_allocator_t *ao = bench_mt_aomalloc();
    if (ao != NULL && strcmp(name, ao->name) == 0) {
        return ao;
    }
    return NULL;
}

bool bench_mt_is_waitfree(const rt_allocator_t *a)
{
    return a != NULL &&
           (a->family == RT_FAMILY_TREE || a->family == RT_FAMILY_TREE_CACHED || a->family == RT_FAMILY_THREAD_HEAPS);
}

bool bench_mt_thread_safe(const rt_allocator_t *a) { return a != NULL && a->thread_safe; }

void bench_mt_print_peers(FILE *f)
{
    const rt_allocator_t *t = bench_mt_tlsf_mutex();
    const rt_allocator_t *ao = bench_mt_aomalloc();
    fprintf(f, "multi-thread study only (experiment stellwag; elsewhere only when named with --alloc):\n");
    if (t != NULL) {
        fprintf(f, "  %-10s malloc %-24s free %-24s %s\n", t->name, t->malloc_bound, t->free_bound, t->description);
    }
    const rt_allocator_t *pi = bench_mt_tlsf_pi();
    if (pi != NULL) {
        fprintf(f, "  %-10s malloc %-24s free %-24s %s\n", pi->name, pi->malloc_bound, pi->free_bound, pi->description);
    }
    if (ao != NULL) {
        fprintf(f, "  %-10s malloc %-24s free %-24s %s\n", ao->name, ao->malloc_bound, ao->free_bound, ao->description);
        fprintf(f, "             %s\n", bench_mt_aomalloc_progress());
        if (bench_mt_aomalloc_band() != NULL) {
            fprintf(f, "             %s\n", bench_mt_aomalloc_band());
        }
    } else {
        fprintf(f, "  %-10s unavailable: %s\n", "aomalloc", bench_mt_aomalloc_unavailable());
    }
}
