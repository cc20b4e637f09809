/*
 * registry.c -- descriptors of the library's own allocators (rtalloc/registry.h).
 *
 * The wrappers only convert the opaque handle; each calls the backend's direct function, so the
 * cost of reaching an allocator through its descriptor is one indirect call and one jump, the
 * same for every allocator (and for the benchmark's system peers).
 */
#include "heap/heap_internal.h"
#include "rtalloc/buddy.h"
#include "rtalloc/registry.h"

/* --- the boundary-tag heaps, one descriptor per index --------------------------------------- */

static void heap_d_stats(void *h, rt_stats_t *s) { rt_heap_stats(h, s); }
static unsigned heap_d_probes(const void *h) { return rt_heap_last_probes(h); }
static bool heap_d_check(void *h) { return rt_heap_check(h); }
static void heap_d_walk(void *h, rt_walk_fn fn, void *c) { rt_heap_walk(h, fn, c); }
static size_t heap_d_usable(void *h, void *p) { return rt_heap_usable_size(h, p); }
static void heap_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_heap_set_handler(h, fn, c); }
static void heap_d_lock(void *h, rt_lock_fn l, rt_unlock_fn u, void *c) { rt_heap_set_lock(h, l, u, c); }
static size_t heap_d_max_request(void *h) { return ((rt_heap_t *)h)->max_request; }

#define HEAP_DESCRIPTOR(NAME, INDEX, MALLOC_BOUND, TEXT)                                            \
    static void *NAME##_d_create(void *mem, size_t size) { return rt_##NAME##_create(mem, size); } \
    static size_t NAME##_d_min_buffer(void) { return rt_heap_min_buffer(INDEX); }                  \
    static void *NAME##_d_malloc(void *h, size_t n) { return rt_##NAME##_malloc(h, n); }          \
    static void NAME##_d_free(void *h, void *p) { rt_##NAME##_free(h, p); }                        \
    static void *NAME##_d_realloc(void *h, void *p, size_t n) { return rt_##NAME##_realloc(h, p, n); } \
    static void *NAME##_d_calloc(void *h, size_t c, size_t n) { return rt_##NAME##_calloc(h, c, n); }  \
    static void *NAME##_d_memalign(void *h, size_t a, size_t n) { return rt_##NAME##_memalign(h, a, n); } \
    static const rt_allocator_t NAME##_descriptor = {                                              \
        .name = #NAME,                                                                             \
        .description = (TEXT),                                                                     \
        .malloc_bound = (MALLOC_BOUND),                                                            \
        .free_bound = "O(1)",                                                                      \
        .alignment = RT_HEAP_ALIGN,                                                                \
        .create = NAME##_d_create,                                                                 \
        .min_buffer = NAME##_d_min_buffer,                                                         \
        .malloc = NAME##_d_malloc,                                                                 \
        .free = NAME##_d_free,                                                                     \
        .realloc = NAME##_d_realloc,                                                               \
        .calloc = NAME##_d_calloc,                                                                 \
        .memalign = NAME##_d_memalign,                                                             \
        .usable_size = heap_d_usable,                                                              \
        .stats = heap_d_stats,                                                                     \
        .last_probes = heap_d_probes,                                                              \
        .check = heap_d_check,                                                                     \
        .walk = heap_d_walk,                                                                       \
        .set_handler = heap_d_handler,                                                             \
        .set_lock = heap_d_lock,                                                                   \
        .block_overhead = RT_HEAP_OVERHEAD,                                                        \
        .min_block = RT_HEAP_MIN_BLOCK,                                                            \
        .max_request = heap_d_max_request,                                                         \
    }

HEAP_DESCRIPTOR(tlsf, RT_INDEX_TLSF, "O(1)", "boundary-tag heap, TLSF index (16 slots per octave)");
HEAP_DESCRIPTOR(tlsf32, RT_INDEX_TLSF32, "O(1)", "boundary-tag heap, TLSF index (32 slots per octave)");
HEAP_DESCRIPTOR(seglist, RT_INDEX_SEGLIST, "O(free blocks)", "boundary-tag heap, 8 segregated lists, first fit within a class (VaiOS)");
HEAP_DESCRIPTOR(firstfit, RT_INDEX_FIRSTFIT, "O(free blocks)", "boundary-tag heap, one LIFO free list, first fit");
HEAP_DESCRIPTOR(bestfit, RT_INDEX_BESTFIT, "O(free blocks)", "boundary-tag heap, one free list, best fit");
HEAP_DESCRIPTOR(halffit, RT_INDEX_HALFFIT, "O(1)", "boundary-tag heap, half-fit index (Ogasawara)");

/* --- binary buddy ---------------------------------------------------------------------------- */

static void *buddy_d_create(void *mem, size_t size) { return rt_buddy_create(mem, size); }
static void *buddy_d_malloc(void *h, size_t n) { return rt_buddy_malloc(h, n); }
static void buddy_d_free(void *h, void *p) { rt_buddy_free(h, p); }
static void *buddy_d_realloc(void *h, void *p, size_t n) { return rt_buddy_realloc(h, p, n); }
static void *buddy_d_calloc(void *h, size_t c, size_t n) { return rt_buddy_calloc(h, c, n); }
static void *buddy_d_memalign(void *h, size_t a, size_t n) { return rt_buddy_memalign(h, a, n); }
static size_t buddy_d_usable(void *h, void *p) { return rt_buddy_usable_size(h, p); }
static void buddy_d_stats(void *h, rt_stats_t *s) { rt_buddy_stats(h, s); }
static unsigned buddy_d_probes(const void *h) { return rt_buddy_last_probes(h); }
static bool buddy_d_check(void *h) { return rt_buddy_check(h); }
static void buddy_d_walk(void *h, rt_walk_fn fn, void *c) { rt_buddy_walk(h, fn, c); }
static void buddy_d_handler(void *h, rt_error_handler_t fn, void *c) { rt_buddy_set_handler(h, fn, c); }
static void buddy_d_lock(void *h, rt_lock_fn l, rt_unlock_fn u, void *c) { rt_buddy_set_lock(h, l, u, c); }
static size_t buddy_d_max_request(void *h) { return rt_buddy_max_request(h); }

static const rt_allocator_t buddy_descriptor = {
    .name = "buddy",
    .description = "binary buddy, power-of-two blocks, out-of-band metadata",
    .malloc_bound = "O(log2(heap/min block))",
    .free_bound = "O(log2(heap/min block))",
    .alignment = RT_BUDDY_MIN_BLOCK,
    .create = buddy_d_create,
    .min_buffer = rt_buddy_min_buffer,
    .malloc = buddy_d_malloc,
    .free = buddy_d_free,
    .realloc = buddy_d_realloc,
    .calloc = buddy_d_calloc,
    .memalign = buddy_d_memalign,
    .usable_size = buddy_d_usable,
    .stats = buddy_d_stats,
    .last_probes = buddy_d_probes,
    .check = buddy_d_check,
    .walk = buddy_d_walk,
    .set_handler = buddy_d_handler,
    .set_lock = buddy_d_lock,
    .block_overhead = 0,
    .min_block = RT_BUDDY_MIN_BLOCK,
    .max_request = buddy_d_max_request,
};

static const rt_allocator_t *const registry[] = {
    &tlsf_descriptor,    &tlsf32_descriptor,  &seglist_descriptor, &firstfit_descriptor,
    &bestfit_descriptor, &halffit_descriptor, &buddy_descriptor,
};

const rt_allocator_t *const *rt_registry(size_t *count)
{
    *count = sizeof registry / sizeof registry[0];
    return registry;
}

static bool same_name(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

const rt_allocator_t *rt_registry_find(const char *name)
{
    for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++) {
        if (same_name(registry[i]->name, name)) {
            return registry[i];
        }
    }
    return NULL;
}
