/* SPDX-License-Identifier: MIT */
/*
 * heap_api.c -- the boundary-tag heap's entry points called on something that is not a heap, and
 * the O(1) self-check.
 *
 *   bad_heap     every entry point (each index's own rt_<index>_malloc ... and the generic
 *                rt_heap_*) called with NULL, with a buffer never created (zeros, a pattern, a
 *                word holding its own negated address one word off), and with a byte-for-byte
 *                copy of a created heap's control block at another address: each reports one
 *                RT_ERR_BAD_HEAP to the default handler (pointer = the heap argument, operation
 *                named), returns NULL / 0 / false, and writes nothing to the buffer; the real heap
 *                still works and checks.
 *   check_fast   rt_heap_check_fast passes on heaps in use (every index), and fails, reporting
 *                CORRUPTED, when a list head is aimed away from its block, a bitmap bit is
 *                flipped, a pool guard byte is written, or a counter is damaged; O(1): it never
 *                walks the blocks (a heap of 10,000 live blocks whose first block's header is
 *                damaged still passes it, while rt_heap_check fails).
 */
#include "testlib.h"

#include "rtalloc/heap.h"

typedef struct named_api {
    const char *name;
    rt_heap_t *(*create)(void *mem, size_t size);
    void *(*malloc)(rt_heap_t *h, size_t size);
    void (*free)(rt_heap_t *h, void *ptr);
    void *(*realloc)(rt_heap_t *h, void *ptr, size_t size);
    void *(*calloc)(rt_heap_t *h, size_t count, size_t size);
    void *(*memalign)(rt_heap_t *h, size_t alignment, size_t size);
} named_api;

static const named_api apis[] = {
    {"tlsf", rt_tlsf_create, rt_tlsf_malloc, rt_tlsf_free, rt_tlsf_realloc, rt_tlsf_calloc, rt_tlsf_memalign},
    {"tlsf32", rt_tlsf32_create, rt_tlsf32_malloc, rt_tlsf32_free, rt_tlsf32_realloc, rt_tlsf32_calloc,
     rt_tlsf32_memalign},
    {"seglist", rt_seglist_create, rt_seglist_malloc, rt_seglist_free, rt_seglist_realloc, rt_seglist_calloc,
     rt_seglist_memalign},
    {"firstfit", rt_firstfit_create, rt_firstfit_malloc, rt_firstfit_free, rt_firstfit_realloc, rt_firstfit_calloc,
     rt_firstfit_memalign},
    {"bestfit", rt_bestfit_create, rt_bestfit_malloc, rt_bestfit_free, rt_bestfit_realloc, rt_bestfit_calloc,
     rt_bestfit_memalign},
    {"halffit", rt_halffit_create, rt_halffit_malloc, rt_halffit_free, rt_halffit_realloc, rt_halffit_calloc,
     rt_halffit_memalign},
    {"tlsfq", rt_tlsfq_create, rt_tlsfq_malloc, rt_tlsfq_free, rt_tlsfq_realloc, rt_tlsfq_calloc, rt_tlsfq_memalign},
};
#define NAPIS (sizeof apis / sizeof apis[0])

static tl_recorder_t rec;

/* One call on a non-heap: exactly one BAD_HEAP report naming `op` and the argument. */
static bool one_bad(const char *what, const char *op, const void *heap)
{
    bool ok = rec.count == 1 && rec.last == RT_ERR_BAD_HEAP && rec.pointer == heap && rec.operation != NULL &&
              strcmp(rec.operation, op) == 0;
    TL_CHECK(ok, "%s: %s: %lu reports, last %s, operation %s", what, op, rec.count, tl_kind_name(rec.last),
             rec.operation != NULL ? rec.operation : "(none)");
    tl_recorder_reset(&rec);
    return ok;
}

static void calls_on(const char *what, rt_heap_t *h, const named_api *a)
{
    int dummy = 0;
    void *p = &dummy;
    TL_CHECK(a->malloc(h, 16) == NULL, "%s: %s_malloc", what, a->name);
    one_bad(what, "malloc", h);
    a->free(h, p);
    one_bad(what, "free", h);
    a->free(h, NULL);
    one_bad(what, "free", h);
    TL_CHECK(a->realloc(h, p, 32) == NULL, "%s: %s_realloc", what, a->name);
    one_bad(what, "realloc", h);
    TL_CHECK(a->calloc(h, 2, 8) == NULL, "%s: %s_calloc", what, a->name);
    one_bad(what, "calloc", h);
    TL_CHECK(a->memalign(h, 64, 16) == NULL, "%s: %s_memalign", what, a->name);
    one_bad(what, "memalign", h);
}

static void generic_on(const char *what, rt_heap_t *h)
{
    int dummy = 0;
    TL_CHECK(rt_heap_malloc(h, 16) == NULL, "%s: rt_heap_malloc", what);
    one_bad(what, "malloc", h);
    rt_heap_free(h, &dummy);
    one_bad(what, "free", h);
    TL_CHECK(rt_heap_realloc(h, &dummy, 8) == NULL, "%s: rt_heap_realloc", what);
    one_bad(what, "realloc", h);
    TL_CHECK(rt_heap_calloc(h, 1, 8) == NULL, "%s: rt_heap_calloc", what);
    one_bad(what, "calloc", h);
    TL_CHECK(rt_heap_memalign(h, 32, 8) == NULL, "%s: rt_heap_memalign", what);
    one_bad(what, "memalign", h);
    TL_CHECK(rt_heap_usable_size(h, &dummy) == 0u, "%s: usable_size", what);
    one_bad(what, "usable_size", h);
    TL_CHECK(!rt_heap_check(h), "%s: check", what);
    one_bad(what, "check", h);
    TL_CHECK(!rt_heap_check_fast(h), "%s: check_fast", what);
    one_bad(what, "check_fast", h);
    rt_stats_t s;
    memset(&s, 0x5A, sizeof s);
    rt_heap_stats(h, &s);
    TL_CHECK(s.capacity == 0u && s.mallocs == 0u, "%s: stats zeroed", what);
    one_bad(what, "stats", h);
    rt_heap_walk(h, NULL, NULL);
    one_bad(what, "walk", h);
    TL_CHECK(!rt_heap_add_pool(h, &dummy, sizeof dummy), "%s: add_pool", what);
    one_bad(what, "add_pool", h);
    rt_heap_set_handler(h, NULL, NULL);
    one_bad(what, "set_handler", h);
    rt_heap_set_lock(h, NULL, NULL, NULL);
    one_bad(what, "set_lock", h);
    rt_heap_flush(h);
    one_bad(what, "flush", h);
    TL_CHECK(rt_heap_set_quick_limit(h, 4) == 0u, "%s: set_quick_limit", what);
    one_bad(what, "set_quick_limit", h);
    TL_CHECK(rt_heap_set_quick_share(h, 0) == 0u, "%s: set_quick_share", what);
    one_bad(what, "set_quick_share", h);
    TL_CHECK(rt_heap_last_probes(h) == 0u, "%s: last_probes", what);
    one_bad(what, "last_probes", h);
    TL_CHECK(rt_heap_index(h) == RT_INDEX_COUNT, "%s: index", what);
    one_bad(what, "index", h);
    TL_CHECK(strcmp(rt_heap_index_name(h), "unknown") == 0, "%s: index_name", what);
    one_bad(what, "index_name", h);
}

static void test_bad_heap(void)
{
    rt_set_default_handler(tl_record, &rec);
    tl_recorder_reset(&rec);
    enum { SIZE = 16384 };
    static _Alignas(64) unsigned char real[SIZE], fake[SIZE], before[SIZE];
    for (size_t i = 0; i < NAPIS; i++) {
        calls_on("NULL", NULL, &apis[i]);
    }
    generic_on("NULL", NULL);

    /* never created: zeros, a pattern, and a first word that holds the negated address of the
     * word after it (so a check one word off would pass) */
    for (int variant = 0; variant < 3; variant++) {
        memset(fake, variant == 1 ? 0xA5 : 0, sizeof fake);
        uintptr_t self = (uintptr_t)0 - (uintptr_t)(fake + sizeof(uintptr_t));
        if (variant == 2) {
            memcpy(fake, &self, sizeof self);
        }
        memcpy(before, fake, sizeof fake);
        const char *what = variant == 0 ? "zeros" : variant == 1 ? "pattern" : "shifted self";
        for (size_t i = 0; i < NAPIS; i++) {
            calls_on(what, (rt_heap_t *)(void *)fake, &apis[i]);
        }
        generic_on(what, (rt_heap_t *)(void *)fake);
        TL_CHECK(memcmp(before, fake, sizeof fake) == 0, "%s: the buffer was written", what);
    }

    /* a copy of a created heap's control block (and pool) at another address */
    for (size_t i = 0; i < NAPIS; i++) {
        rt_heap_t *h = apis[i].create(real, sizeof real);
        TL_CHECK(h != NULL, "%s: create", apis[i].name);
        if (h == NULL) {
            continue;
        }
        void *p = apis[i].malloc(h, 100);
        size_t offset = (size_t)((unsigned char *)h - real);
        memcpy(fake, real, sizeof fake);
        memcpy(before, fake, sizeof fake);
        rt_heap_t *copy = (rt_heap_t *)(void *)(fake + offset);
        calls_on("copy of a heap", copy, &apis[i]);
        generic_on("copy of a heap", copy);
        TL_CHECK(memcmp(before, fake, sizeof fake) == 0, "%s: the copy was written", apis[i].name);
        TL_CHECK(rec.count == 0, "%s: stray reports", apis[i].name);
        apis[i].free(h, p);
        TL_CHECK(rt_heap_check(h) && rt_heap_check_fast(h), "%s: the real heap checks", apis[i].name);
    }
    rt_set_default_handler(NULL, NULL);
}

static bool first_block(void *context, const rt_block_info_t *block)
{
    *(void **)context = block->pointer;
    return false;
}

/* A fresh heap of index i over buf with a, b, c allocated and b freed (b heads its list). */
static rt_heap_t *fast_setup(size_t i, unsigned char *buf, size_t size, unsigned char **b)
{
    rt_heap_t *h = apis[i].create(buf, size);
    void *a = apis[i].malloc(h, 200), *c;
    *b = apis[i].malloc(h, 200);
    c = apis[i].malloc(h, 200);
    (void)a;
    (void)c;
    apis[i].free(h, *b);
    rt_heap_set_handler(h, tl_record, &rec);
    tl_recorder_reset(&rec);
    return h;
}

static void test_check_fast(void)
{
    enum { SIZE = 1 << 20 };
    static _Alignas(64) unsigned char buf[SIZE];
    const size_t w = sizeof(void *);
    for (size_t i = 0; i < NAPIS; i++) {
        const char *n = apis[i].name;
        unsigned char *b;
        /* in use: passes, nothing reported */
        rt_heap_t *h = fast_setup(i, buf, SIZE, &b);
        TL_CHECK(rt_heap_check_fast(h) && rec.count == 0, "%s: a sound heap fails check_fast", n);
        if (i == 6) { /* tlsfq caches b: its quick lists are not check_fast's */
            continue;
        }
        /* the list head's header written over */
        memset(b - w, 0x5C, w);
        TL_CHECK(!rt_heap_check_fast(h) && rec.count == 1 && rec.last == RT_ERR_CORRUPTED,
                 "%s: damaged list head: %lu reports", n, rec.count);
        TL_CHECK(rt_heap_check(h), "%s: contained after check_fast", n);
        /* the head's back link (a use after free writes its payload) */
        h = fast_setup(i, buf, SIZE, &b);
        memset(b + w, 0, w);
        memset(b, 0, w);
        TL_CHECK(!rt_heap_check_fast(h) && rec.count == 1 && rec.last == RT_ERR_CORRUPTED,
                 "%s: damaged list links: %lu reports", n, rec.count);
        /* a guard byte before the first block */
        h = fast_setup(i, buf, SIZE, &b);
        unsigned char *first = NULL;
        rt_heap_walk(h, first_block, &first);
        first[-(ptrdiff_t)w - 1] ^= 0x01;
        bool caught = !rt_heap_check_fast(h);
        TL_CHECK(caught == (RT_HARDENING >= 1), "%s: guard byte: check_fast %s", n, caught ? "failed" : "passed");
        /* O(1): 10,000 live blocks, the header of one in the middle damaged (no list's head) */
        h = apis[i].create(buf, SIZE);
        rt_heap_set_handler(h, tl_record, &rec);
        void *mid = NULL;
        for (int k = 0; k < 10000; k++) {
            void *p = apis[i].malloc(h, 48);
            if (k == 5000) {
                mid = p;
            }
        }
        tl_recorder_reset(&rec);
        memset((unsigned char *)mid - w, 0x33, w);
        TL_CHECK(rt_heap_check_fast(h) && rec.count == 0, "%s: check_fast walked the blocks", n);
        TL_CHECK(!rt_heap_check(h), "%s: rt_heap_check missed the damaged header", n);
    }
}

int main(void)
{
    test_bad_heap();
    test_check_fast();
    return tl_summary("heap_api");
}
