/* SPDX-License-Identifier: MIT */
/*
 * ports/tests/port_test.c -- the port's own test, on the target: the instruction counter's
 * self-check, the formatter, the test arena, the interrupt-masking lock hooks (nesting, and
 * installed in every allocator of the registry that takes them), and exact instruction counts of
 * a few TLSF calls (deterministic: the runner compares two runs byte for byte).
 *
 * Built in three variants (ports/CMakeLists.txt): the test itself; PORT_TEST_EXIT=<n>, which
 * exits with n after the checks (proves statuses travel to the shell); PORT_TEST_TRAP, which
 * executes __builtin_trap (proves a fault ends the run with PORT_EXIT_FAULT).
 */
#include "testlib.h"

#include "port.h"
#include "rtalloc/registry.h"

static bool check_format(void)
{
    char b[96];
    int n;
#define FMT(expect, ...)                                                                                            \
    do {                                                                                                            \
        n = snprintf(b, sizeof b, __VA_ARGS__);                                                                     \
        TL_CHECK(strcmp(b, expect) == 0 && n == (int)strlen(expect), "format %s: got \"%s\" (%d)", #__VA_ARGS__, b, \
                 n);                                                                                                \
    } while (0)
    FMT("42", "%d", 42);
    FMT("-42", "%i", -42);
    FMT("  -42", "%5d", -42);
    FMT("-0042", "%05d", -42);
    FMT("-42  |", "%-5d|", -42);
    FMT("+7  7", "%+d % d", 7, 7);
    FMT("-2147483648", "%d", (int)(-2147483647 - 1));
    FMT("4294967295", "%u", 4294967295u);
    FMT("18446744073709551615", "%" PRIu64, UINT64_MAX);
    FMT("-9223372036854775808", "%" PRId64, INT64_MIN);
    FMT("ff FF 0xff 377 0377", "%x %X %#x %o %#o", 255u, 255u, 255u, 255u, 255u);
    FMT("0000beef", "%08lx", 0xBEEFul);
    FMT("123456789", "%zu", (size_t)123456789u);
    FMT("-5", "%td", (ptrdiff_t)-5);
    FMT("ab   |  cd|x", "%-5s|%4s|%.1s", "ab", "cd", "xyz");
    FMT("007", "%.3d", 7);
    FMT("   07", "%*.*d", 5, 2, 7);
    FMT("c|  d", "%c|%3c", 'c', 'd');
    FMT("100%", "%d%%", 100);
    FMT("0x1000", "%p", (void *)(uintptr_t)0x1000u);
    static const char *volatile null_string = NULL; /* hidden from -Wformat-overflow */
    FMT("(null)", "%s", null_string);
    FMT("x?y", "x%fy", 1.0);
#undef FMT
    n = snprintf(b, 4, "%s", "abcdef");
    TL_CHECK(n == 6 && strcmp(b, "abc") == 0, "snprintf truncates to \"%s\" and returns %d", b, n);
    return true;
}

static bool check_arena(void)
{
    unsigned char *a = malloc(1000), *b = malloc(3), *c = malloc(1u << 20);
    TL_REQUIRE(a != NULL && b != NULL && c != NULL, "arena: malloc failed");
    TL_CHECK(((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) % 16u == 0u, "arena: 16-byte alignment");
    TL_CHECK(b >= a + 1000 && c >= b + 3, "arena: blocks overlap");
    memset(c, 0xA5, 1u << 20);
    free(b); /* not on top: marked only */
    unsigned char *d = malloc(16);
    TL_CHECK(d > c, "arena: a block below the top is not reused before the top is freed");
    free(d);
    free(c); /* pops c and the marked b */
    unsigned char *e = malloc(3);
    TL_CHECK(e == b, "arena: LIFO reuse (%p, expected %p)", (void *)e, (void *)b);
    free(e);
    free(a);
    TL_CHECK(malloc((size_t)-1 / 2u) == NULL, "arena: an impossible request returns NULL");
    unsigned char *z = calloc(10, 10);
    TL_CHECK(z != NULL && z[0] == 0u && z[99] == 0u, "arena: calloc zeroes");
    free(z);
    return true;
}

/* --- lock hooks --------------------------------------------------------------------------------- */

typedef struct hook_probe {
    unsigned locks, unlocks, unmasked_inside, depth, max_depth;
    bool bad_restore;
} hook_probe_t;

static uintptr_t probe_lock(void *context)
{
    hook_probe_t *h = context;
    uintptr_t token = port_lock_hook(NULL);
    h->locks++;
    h->depth++;
    if (h->depth > h->max_depth) {
        h->max_depth = h->depth;
    }
    if (!port_irq_masked()) {
        h->unmasked_inside++;
    }
    return token;
}

static void probe_unlock(void *context, uintptr_t token)
{
    hook_probe_t *h = context;
    h->unlocks++;
    h->depth--;
    if (!port_irq_masked()) {
        h->unmasked_inside++;
    }
    port_unlock_hook(NULL, token);
}

static bool check_hooks(void)
{
    TL_REQUIRE(!port_irq_masked(), "interrupts are enabled after start-up");
    uintptr_t t1 = port_lock_hook(NULL);
    TL_CHECK(port_irq_masked(), "lock masks");
    uintptr_t t2 = port_lock_hook(NULL);
    TL_CHECK(port_irq_masked(), "nested lock keeps them masked");
    port_unlock_hook(NULL, t2);
    TL_CHECK(port_irq_masked(), "inner unlock leaves the outer section masked");
    port_unlock_hook(NULL, t1);
    TL_CHECK(!port_irq_masked(), "outer unlock unmasks");

    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
    static unsigned char heap_mem[64u << 10] __attribute__((aligned(16)));
    unsigned with_hooks = 0;
    for (size_t i = 0; i < count; i++) {
        const rt_allocator_t *d = all[i];
        if (d->set_lock == NULL) {
            continue; /* lock-free allocators (the wait-free trees) take no hooks */
        }
        with_hooks++;
        hook_probe_t probe;
        memset(&probe, 0, sizeof probe);
        void *h = d->create(heap_mem, sizeof heap_mem);
        TL_REQUIRE(h != NULL, "%s: create", d->name);
        d->set_lock(h, probe_lock, probe_unlock, &probe);
        void *p = d->malloc(h, 100);
        TL_CHECK(p != NULL && !port_irq_masked(), "%s: malloc with hooks", d->name);
        uintptr_t outer = port_lock_hook(NULL); /* called from a critical section already */
        void *q = d->malloc(h, 200);
        TL_CHECK(q != NULL && port_irq_masked(), "%s: the heap's unlock keeps an outer section masked", d->name);
        port_unlock_hook(NULL, outer);
        d->free(h, p);
        d->free(h, q);
        TL_CHECK(!port_irq_masked(), "%s: unmasked after the calls", d->name);
        TL_CHECK(probe.locks == probe.unlocks && probe.locks >= 4u && probe.max_depth == 1u &&
                     probe.unmasked_inside == 0u,
                 "%s: %u locks, %u unlocks, depth %u, %u times unmasked inside", d->name, probe.locks, probe.unlocks,
                 probe.max_depth, probe.unmasked_inside);
        printf("lock hooks: %-9s %u lock/unlock pairs for 2 mallocs + 2 frees, interrupts masked "
               "inside each\n",
               d->name, probe.locks);
    }
    TL_CHECK(with_hooks >= 7u, "%u allocators take lock hooks", with_hooks);
    return true;
}

/* Exact counts of a few TLSF calls through the descriptor: a figure that must be the same in
 * every run (the runner compares two runs). */
static bool check_counts(void)
{
    const rt_allocator_t *d = rt_registry_find("tlsf");
    TL_REQUIRE(d != NULL, "tlsf in the registry");
    static unsigned char mem[32u << 10] __attribute__((aligned(16)));
    void *h = d->create(mem, sizeof mem);
    TL_REQUIRE(h != NULL, "tlsf: create");
    void *p[4];
    uint32_t m[4], f[4];
    static const size_t sizes[4] = {16, 100, 1000, 5000};
    for (int i = 0; i < 4; i++) {
        port_count_t t = port_count_begin();
        p[i] = d->malloc(h, sizes[i]);
        m[i] = port_count_end(t);
    }
    for (int i = 0; i < 4; i++) {
        port_count_t t = port_count_begin();
        d->free(h, p[i]);
        f[i] = port_count_end(t);
    }
    for (int i = 0; i < 4; i++) {
        TL_CHECK(p[i] != NULL && m[i] > 10u && m[i] < 1000u && f[i] > 10u && f[i] < 1000u,
                 "tlsf call %d: %lu / %lu instructions", i, (unsigned long)m[i], (unsigned long)f[i]);
        printf("tlsf: malloc(%zu) %lu instructions, its free %lu instructions\n", sizes[i], (unsigned long)m[i],
               (unsigned long)f[i]);
    }
    uint32_t t = port_count_begin();
    void *again = d->malloc(h, 100);
    uint32_t again_n = port_count_end(t);
    d->free(h, again);
    printf("tlsf: malloc(100) on the emptied heap %lu instructions\n", (unsigned long)again_n);
    return true;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("port_test on %s\n", port_name());
    TL_CHECK(port_selftest(), "instruction counter self-check");
    TL_CHECK(port_selftest(), "second call returns the first verdict");
    check_format();
    check_arena();
    check_hooks();
    if (port_selftest()) {
        check_counts();
    }
    port_arena_report();
#if defined(PORT_TEST_TRAP)
    printf("port_test: executing __builtin_trap()\n");
    __builtin_trap();
#endif
    int status = tl_summary("port_test");
#if defined(PORT_TEST_EXIT)
    printf("port_test: exiting with status %d (checks: %d)\n", PORT_TEST_EXIT, status);
    return PORT_TEST_EXIT;
#else
    return status;
#endif
}
