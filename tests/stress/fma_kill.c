/* SPDX-License-Identifier: MIT */
/*
 * fma_kill.c -- a process-shared FMA region survives the death of a process at any point of any
 * call (doc/hardening.md; rtalloc/fma_region.h "Crash while holding the lock"). The FMA core and
 * the region driver are rebuilt with RT_CONFIG_HEADER = fma_step_config.h: a step hook before
 * every store to region metadata, between an undo record and its count, and before each commit.
 *
 *   steps   deterministic, FMA and BSD 4.4: for each operation (below) and each step k of it, a
 *           fresh region with survivor blocks (pattern-filled, owned by the parent) is set up;
 *           a forked child (an attachment of its own) runs the operation and dies at step k,
 *           holding the lock (_exit at odd k, SIGKILL at even k); the parent's next call finds
 *           the lock EOWNERDEAD, the region recovers (never broken), rt_fma_check passes, every
 *           survivor is intact, and the region goes on working: the parent fills it with new
 *           pattern blocks (none may overlap a survivor), frees everything, and reclaims what
 *           the dead child held. Operations: malloc of every class from a fresh page (anchor
 *           and lastused), from a chain, from the virgin run, of a page's last free block; a
 *           whole page; runs of 3 pages (from the anchor list and above lastused) and an
 *           aligned run (free pages skipped onto the list); calloc; realloc that moves; free
 *           that appends, that makes a new entry block, that unites a page (anchor and top:
 *           lastused lowered), of the region's last block (reset), of a whole page, of a run.
 *   random  `fma_kill [kills]` (default 1000, 0 skips): a churning attacher (random malloc, free,
 *           realloc, calloc, memalign of 16 B .. 5 pages) is SIGKILLed at a random time, again
 *           and again; after each kill the parent (the survivor) recovers, checks the region
 *           (never broken), verifies its own pattern blocks, reclaims the dead child's blocks
 *           (a walk: every block in use that is not the parent's) and churns a little itself.
 *
 * The steps pass also measures the journal's high water (records of the largest step) against
 * FMA_JOURNAL_CAP. Keys hold this process's pid, so concurrent runs never meet.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fma/fma_internal.h"
#include "rtalloc/fma_region.h"
#include "testlib.h"

#define PAGE 4096u
#define REGION_SIZE ((size_t)(RT_FMA_REGION_HEADER + 128u * 1024u)) /* ~26 pages of 4 KiB */
#define STOPPED 42
#define DONE 43

/* ---- the step hook ----------------------------------------------------------------------------- */

static long step_stop = -1; /* the child: die at this step */
static long step_count;
static int step_kill; /* die by SIGKILL rather than _exit */

void fma_test_step(const void *fma)
{
    (void)fma;
    if (step_stop >= 0 && ++step_count == step_stop) {
        if (step_kill) {
            (void)raise(SIGKILL);
        }
        _exit(STOPPED);
    }
}

/* ---- survivors: the parent's blocks, each filled with its own pattern ---------------------------- */

#define MAX_BLOCKS 512u

typedef struct block {
    unsigned char *p;
    size_t n;
    unsigned char tag;
} block_t;

typedef struct owned {
    block_t b[MAX_BLOCKS];
    unsigned count;
    unsigned char next_tag;
} owned_t;

static void own(owned_t *o, void *p, size_t n)
{
    if (p == NULL || o->count == MAX_BLOCKS) {
        return;
    }
    unsigned char tag = (unsigned char)(++o->next_tag == 0u ? ++o->next_tag : o->next_tag);
    memset(p, tag, n);
    o->b[o->count++] = (block_t){p, n, tag};
}

static bool intact(const owned_t *o, const char *what)
{
    for (unsigned i = 0; i < o->count; i++) {
        const block_t *b = &o->b[i];
        for (size_t k = 0; k < b->n; k++) {
            if (b->p[k] != b->tag) {
                return TL_CHECK(false, "%s: survivor %u (%zu bytes at %p) byte %zu is %#x, not %#x", what, i, b->n,
                                (void *)b->p, k, b->p[k], b->tag);
            }
        }
    }
    return true;
}

static void release(rt_fma_region_t *r, owned_t *o, unsigned i)
{
    rt_fma_region_free(r, o->b[i].p);
    o->b[i] = o->b[--o->count];
}

/* Blocks in use that are not the parent's: the dead children's. Collected under the lock by a
 * walk (which must not call the allocator), freed afterwards. */
typedef struct strays {
    const owned_t *o;
    void *p[MAX_BLOCKS];
    unsigned count;
} strays_t;

static bool stray_visit(void *context, const rt_block_info_t *info)
{
    strays_t *s = context;
    if (!info->used) {
        return true;
    }
    for (unsigned i = 0; i < s->o->count; i++) {
        if (s->o->b[i].p == info->pointer) {
            return true;
        }
    }
    if (s->count < MAX_BLOCKS) {
        s->p[s->count++] = info->pointer;
    }
    return true;
}

static unsigned reclaim(rt_fma_region_t *r, const owned_t *o)
{
    strays_t s = {o, {0}, 0};
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    if (rt_fma_region_lock(r) != 0) {
        return 0;
    }
    rt_fma_walk(info.fma, stray_visit, &s);
    rt_fma_region_unlock(r);
    for (unsigned i = 0; i < s.count; i++) {
        rt_fma_region_free(r, s.p[i]);
    }
    return s.count;
}

static size_t used_blocks(rt_fma_region_t *r)
{
    rt_stats_t s;
    rt_fma_region_stats(r, &s);
    return s.used_blocks;
}

static uint32_t journal_high(rt_fma_region_t *r)
{
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    const rt_fma_t *f = info.fma;
    if (f == NULL || f->journal_off == 0u) {
        return 0;
    }
    return ((const fma_journal_t *)(const void *)((const unsigned char *)f + f->journal_off))->high;
}

/* ---- the deterministic pass ---------------------------------------------------------------------- */

/* A scenario: setup (by the parent: survivors, and the child's block x when it frees one), then
 * the operation (by the child). */
typedef struct scene {
    rt_fma_region_t *r;
    owned_t o;
    void *x; /* the block the child's operation frees or reallocates (not a survivor) */
    size_t size;
} scene_t;

typedef struct op {
    const char *name;
    void (*setup)(scene_t *s);
    void (*run)(scene_t *s);
} op_t;

static void *alloc(scene_t *s, size_t n) { return rt_fma_region_alloc(s->r, n); }

/* Survivors spread over the region: small blocks of several classes, a whole page, a run, and
 * two free pages on the anchor list. */
static void base(scene_t *s)
{
    void *gap1 = alloc(s, PAGE);
    own(&s->o, alloc(s, 64), 64);
    own(&s->o, alloc(s, 64), 64);
    own(&s->o, alloc(s, 200), 256);
    void *gap2 = alloc(s, PAGE);
    own(&s->o, alloc(s, PAGE), PAGE);
    own(&s->o, alloc(s, 3u * PAGE), 3u * PAGE);
    own(&s->o, alloc(s, 1000), 1024);
    rt_fma_region_free(s->r, gap1);
    rt_fma_region_free(s->r, gap2);
}

static void setup_base(scene_t *s) { base(s); }
static void setup_none(scene_t *s) { (void)s; }

/* the class's page has a freed block on its chain */
static void setup_chain(scene_t *s)
{
    base(s);
    void *a = alloc(s, s->size);
    own(&s->o, alloc(s, s->size), s->size);
    rt_fma_region_free(s->r, a);
}

/* the class's page has exactly one free block, its entry block */
static void setup_last(scene_t *s)
{
    base(s);
    unsigned n = (unsigned)(PAGE / s->size);
    void *first = NULL;
    for (unsigned k = 0; k < n; k++) {
        void *p = alloc(s, s->size);
        if (k == 0u) {
            first = p;
        } else {
            own(&s->o, p, s->size);
        }
    }
    rt_fma_region_free(s->r, first);
}

/* x: a block of size s->size alone on its page (freeing it unites the page), not the top */
static void setup_alone(scene_t *s)
{
    base(s);
    s->x = alloc(s, s->size);
    memset(s->x, 0xee, s->size);
    own(&s->o, alloc(s, PAGE), PAGE); /* above it: x's page is not the top */
}

/* x: alone on the top page (freeing it lowers lastused) */
static void setup_top(scene_t *s)
{
    base(s);
    s->x = alloc(s, s->size);
}

/* x: the region's only block (freeing it resets the region) */
static void setup_only(scene_t *s) { s->x = alloc(s, s->size); }

/* x: a block sharing its page with survivors (its free appends to the entry block) */
static void setup_shared(scene_t *s)
{
    base(s);
    own(&s->o, alloc(s, s->size), s->size);
    s->x = alloc(s, s->size);
    own(&s->o, alloc(s, s->size), s->size);
    void *gap = alloc(s, s->size);
    own(&s->o, alloc(s, s->size), s->size);
    rt_fma_region_free(s->r, gap);
}

/* x: in a full page (its free makes the page's entry block) */
static void setup_full(scene_t *s)
{
    base(s);
    unsigned n = (unsigned)(PAGE / s->size);
    for (unsigned k = 0; k < n; k++) {
        void *p = alloc(s, s->size);
        if (k == n / 2u) {
            s->x = p;
        } else {
            own(&s->o, p, s->size);
        }
    }
}

/* x: a run of 3 pages below survivors */
static void setup_run(scene_t *s)
{
    base(s);
    s->x = alloc(s, 3u * PAGE);
    own(&s->o, alloc(s, 64), 64);
}

static void run_malloc(scene_t *s) { (void)alloc(s, s->size); }
static void run_calloc(scene_t *s) { (void)rt_fma_region_calloc(s->r, 1, s->size); }
static void run_free(scene_t *s) { rt_fma_region_free(s->r, s->x); }
static void run_aligned(scene_t *s) { (void)rt_fma_region_memalign(s->r, 4u * PAGE, 2u * PAGE); }
static void run_realloc(scene_t *s) { (void)rt_fma_region_realloc(s->r, s->x, 2u * PAGE); }

typedef struct plan {
    const char *name;
    void (*setup)(scene_t *s);
    void (*run)(scene_t *s);
    size_t size;
} plan_t;

/* Runs one scenario with the child dying at step k. Returns the child's status (STOPPED, or DONE
 * when the operation ended before step k), or -1. */
static int one_step(const plan_t *pl, unsigned flags, long k, const char *key)
{
    scene_t s;
    memset(&s, 0, sizeof s);
    s.size = pl->size;
    s.r = rt_fma_region_init(REGION_SIZE, RT_FMA_SHARED | flags, key, true);
    if (!TL_CHECK(s.r != NULL, "open %s: %s", key, rt_fma_region_error())) {
        return -1;
    }
    tl_recorder_t rec = {0};
    rt_fma_region_set_handler(s.r, tl_record, &rec);
    pl->setup(&s);
    size_t before = used_blocks(s.r);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        step_count = 0;
        step_kill = (int)(k % 2);
        step_stop = k;
        pl->run(&s);
        _exit(DONE);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int rc = pid < 0                                              ? -1
             : WIFEXITED(status)                                  ? WEXITSTATUS(status)
             : WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? STOPPED
                                                                  : -1;
    char what[160];
    (void)snprintf(what, sizeof what, "%s %s step %ld", flags != 0u ? "bsd44" : "fma", pl->name, k);
    TL_CHECK(rc == STOPPED || rc == DONE, "%s: child status %d", what, rc);

    /* the parent's next call recovers */
    bool ok = rt_fma_region_check(s.r);
    rt_fma_region_info_t info;
    rt_fma_region_info(s.r, &info);
    TL_CHECK(ok && !info.broken, "%s: recovered and consistent (broken %d)", what, (int)info.broken);
    TL_CHECK(rc != STOPPED || info.recoveries == 1u, "%s: one recovery (%llu)", what,
             (unsigned long long)info.recoveries);
    TL_CHECK(rec.count == 0u, "%s: no report (%s)", what, tl_kind_name(rec.last));
    size_t after = used_blocks(s.r);
    /* rolled back (or, a run's free, forward): the dead child holds what it held, +- one */
    TL_CHECK(after + 1u >= before && after <= before + 1u, "%s: blocks in use %zu -> %zu", what, before, after);
    intact(&s.o, what);

    /* the region goes on: fill it with new blocks, none overlapping a survivor */
    unsigned start = s.o.count;
    for (unsigned n = 0; n < 200u; n++) {
        size_t size = (size_t)16u << (n % 9u);
        void *p = alloc(&s, size);
        if (p == NULL) {
            break;
        }
        own(&s.o, p, size);
    }
    TL_CHECK(s.o.count > start, "%s: allocates after the recovery", what);
    intact(&s.o, what);
    TL_CHECK(rt_fma_region_check(s.r), "%s: consistent after the refill", what);
    while (s.o.count > 0u) {
        release(s.r, &s.o, s.o.count - 1u);
    }
    unsigned strays = reclaim(s.r, &s.o);
    /* the child holds at most what its operation had (realloc: the old block and the new) */
    TL_CHECK(strays <= 2u && used_blocks(s.r) == 0u && rt_fma_region_check(s.r) && rec.count == 0u,
             "%s: everything freed (%u of the child's), region empty and consistent", what, strays);
    if (flags == 0u) { /* FMA unites: the whole region is one run again (BSD keeps cut pages) */
        void *all = alloc(&s, 16u * PAGE);
        TL_CHECK(all != NULL, "%s: a large run fits again", what);
        rt_fma_region_free(s.r, all);
    }
    uint32_t high = journal_high(s.r);
    static uint32_t max_high;
    if (high > max_high) {
        max_high = high;
        printf("  journal high water %u records (%s)\n", high, what);
    }
    TL_CHECK(high <= 19u && high <= FMA_JOURNAL_CAP, "%s: journal high water %u within the stated 19", what, high);
    TL_CHECK(rt_fma_region_down(s.r) == 0, "%s: down", what);
    return rc;
}

static void test_steps(void)
{
    static const plan_t plans[] = {
        {"malloc 16 fresh page (anchor)", setup_base, run_malloc, 16},
        {"malloc 32 fresh page (anchor)", setup_base, run_malloc, 32},
        {"malloc 128 fresh page (anchor)", setup_base, run_malloc, 128},
        {"malloc 512 fresh page (anchor)", setup_base, run_malloc, 512},
        {"malloc 2048 fresh page (anchor)", setup_base, run_malloc, 2048},
        {"malloc 16 fresh page (lastused)", setup_none, run_malloc, 16},
        {"malloc 64 from the virgin run", setup_base, run_malloc, 64},
        {"malloc 64 from the chain", setup_chain, run_malloc, 64},
        {"malloc 256 from the chain", setup_chain, run_malloc, 256},
        {"malloc 64 the page's last block", setup_last, run_malloc, 64},
        {"malloc 1024 the page's last block", setup_last, run_malloc, 1024},
        {"malloc a whole page", setup_base, run_malloc, PAGE},
        {"malloc a run of 3 pages (anchor + lastused)", setup_base, run_malloc, 3u * PAGE},
        {"malloc a run of 3 pages (lastused)", setup_none, run_malloc, 3u * PAGE},
        {"memalign 16 KiB a run of 2 pages", setup_base, run_aligned, 0},
        {"calloc 100", setup_base, run_calloc, 100},
        {"realloc 64 -> 2 pages", setup_shared, run_realloc, 64},
        {"free appending to the entry", setup_shared, run_free, 64},
        {"free making the entry block", setup_full, run_free, 128},
        {"free uniting a page (anchor)", setup_alone, run_free, 32},
        {"free uniting the top page", setup_top, run_free, 16},
        {"free of a whole page (top)", setup_top, run_free, PAGE},
        {"free of the only block (reset)", setup_only, run_free, 256},
        {"free of a run of 3 pages", setup_run, run_free, 0},
        {"free of the only run (reset)", setup_only, run_free, 5u * PAGE},
    };
    char key[64];
    (void)snprintf(key, sizeof key, "t%ld-kill-steps", (long)getpid());
    unsigned long total = 0;
    for (unsigned bsd = 0; bsd < 2u; bsd++) {
        for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
            long k = 1;
            int rc;
            do {
                rc = one_step(&plans[i], bsd != 0u ? RT_FMA_BSD44 : 0u, k, key);
                k++;
            } while (rc == STOPPED && k < 100000);
            total += (unsigned long)(k - 1);
            printf("%-6s %-45s %4ld steps, each a death then a recovery\n", bsd != 0u ? "bsd44" : "fma", plans[i].name,
                   k - 2);
        }
    }
    printf("steps: %lu deaths in all\n", total);
}

/* ---- the random pass ---------------------------------------------------------------------------- */

static void churn(rt_fma_region_t *r, uint64_t seed)
{
    tl_rng_t g = tl_rng_seed(seed);
    void *live[64] = {0};
    for (;;) {
        unsigned i = (unsigned)tl_range(&g, 0, 63);
        size_t n = tl_chance(&g, 10) ? tl_range(&g, PAGE / 2u, 5u * PAGE) : tl_range(&g, 1, PAGE / 2u);
        unsigned what = (unsigned)tl_range(&g, 0, 9);
        if (live[i] != NULL && what < 5u) {
            rt_fma_region_free(r, live[i]);
            live[i] = NULL;
        } else if (live[i] != NULL && what < 7u) {
            void *q = rt_fma_region_realloc(r, live[i], n);
            if (q != NULL) {
                live[i] = q;
            }
        } else if (live[i] == NULL) {
            live[i] = what == 7u   ? rt_fma_region_calloc(r, 1, n)
                      : what == 8u ? rt_fma_region_memalign(r, (size_t)16u << tl_range(&g, 0, 10), n)
                                   : rt_fma_region_alloc(r, n);
            if (live[i] != NULL) {
                memset(live[i], 0xc5, n < 64u ? n : 64u);
            }
        }
    }
}

static void test_random(unsigned long kills, uint64_t seed)
{
    char key[64];
    (void)snprintf(key, sizeof key, "t%ld-kill-random", (long)getpid());
    rt_fma_region_t *r = rt_fma_region_init((size_t)RT_FMA_REGION_HEADER + 1024u * 1024u, RT_FMA_SHARED, key, true);
    if (!TL_CHECK(r != NULL, "open %s: %s", key, rt_fma_region_error())) {
        return;
    }
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    if (!info.robust) {
        tl_skip("kills: no robust mutexes here (qemu-user?)");
        (void)rt_fma_region_down(r);
        return;
    }
    tl_recorder_t rec = {0};
    rt_fma_region_set_handler(r, tl_record, &rec);
    static owned_t o; /* the survivor's blocks */
    memset(&o, 0, sizeof o);
    tl_rng_t g = tl_rng_seed(seed);
    unsigned long broken = 0, recovered = 0, bad = 0;
    for (unsigned long round = 0; round < kills; round++) {
        /* the survivor churns a little: its blocks move around the children's */
        for (unsigned n = 0; n < 4u; n++) {
            if (o.count > 0u && (o.count > 100u || tl_chance(&g, 40))) {
                release(r, &o, (unsigned)tl_range(&g, 0, o.count - 1u));
            } else {
                size_t size = tl_chance(&g, 5) ? tl_range(&g, PAGE, 3u * PAGE) : tl_range(&g, 1, PAGE / 2u);
                void *p = rt_fma_region_alloc(r, size);
                own(&o, p, size);
            }
        }
        uint64_t child_seed = tl_next(&g);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            churn(r, child_seed);
            _exit(0);
        }
        struct timespec ts = {0, (long)tl_range(&g, 0, 2000) * 1000L};
        (void)nanosleep(&ts, NULL);
        (void)kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        bool ok = rt_fma_region_check(r);
        rt_fma_region_info(r, &info);
        if (!ok || info.broken) {
            broken++;
            TL_CHECK(false, "kill %lu (seed %llu): region %s", round, (unsigned long long)seed,
                     info.broken ? "broken" : "inconsistent");
            break;
        }
        if (!intact(&o, "random kill")) {
            bad++;
            break;
        }
        unsigned strays = reclaim(r, &o);
        (void)strays;
        if (used_blocks(r) != o.count || !rt_fma_region_check(r)) {
            bad++;
            TL_CHECK(false, "kill %lu: %zu blocks in use after the reclaim, the survivor holds %u", round,
                     used_blocks(r), o.count);
            break;
        }
    }
    rt_fma_region_info(r, &info);
    recovered = (unsigned long)info.recoveries;
    printf("random: %lu kills (seed %llu), %lu inside a call (recovered), %lu broken, %lu survivor "
           "damage; %lu reports\n",
           kills, (unsigned long long)seed, recovered, broken, bad, rec.count);
    TL_CHECK(broken == 0u && bad == 0u, "never broken, survivors intact");
    /* How many kills land inside a call depends on the scheduler (about half on an idle machine,
     * 14 % seen under load): printed, not asserted -- the deterministic pass kills at every step. */
    while (o.count > 0u) {
        release(r, &o, o.count - 1u);
    }
    TL_CHECK(rt_fma_region_check(r) && used_blocks(r) == 0u, "random: empty at the end");
    TL_CHECK(rt_fma_region_down(r) == 0, "random: down");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    unsigned long kills = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000ul;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : (uint64_t)time(NULL);
    char key[64];
    (void)snprintf(key, sizeof key, "t%ld-kill-probe", (long)getpid());
    rt_fma_region_t *r = rt_fma_region_init(REGION_SIZE, RT_FMA_SHARED, key, true);
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    bool robust = r != NULL && info.robust;
    if (r != NULL) {
        (void)rt_fma_region_down(r);
    }
    if (!robust) {
        tl_skip("no robust mutexes here (the kernel keeps no robust futex list, e.g. qemu-user)");
        return tl_summary("fma_kill");
    }
    if (getenv("FMA_KILL_NO_STEPS") == NULL) {
        test_steps();
    }
    if (kills > 0u) {
        test_random(kills, seed);
    }
    return tl_summary("fma_kill");
}
