/* SPDX-License-Identifier: MIT */
/*
 * panic.c -- the debug default of doc/design.md, "Bad input and the handler", for every allocator
 * of the registry: with RT_DEBUG >= 1 and no error handler installed, misuse (a foreign pointer,
 * a double free) goes to RT_PANIC(message) with the error's message, and the operation is still
 * refused; refused requests (calloc overflow, bad alignment) are only counted, never a panic.
 *
 * Built against a copy of the core compiled with RT_DEBUG=1 and RT_PANIC(m)=rt_test_panic(m),
 * a recorder that returns (a real platform's panic prints and stops).
 */
#include "testlib.h"

#include "rtalloc/registry.h"

static unsigned long panics;
static const char *last_panic;

void rt_test_panic(const char *message);
void rt_test_panic(const char *message)
{
    panics++;
    last_panic = message;
}

static void expect_panic(const rt_allocator_t *d, const char *what, rt_error_kind_t kind, unsigned long before)
{
    TL_CHECK(panics == before + 1u, "%s: %s: %lu panics, expected 1", d->name, what, panics - before);
    TL_CHECK(last_panic != NULL && strcmp(last_panic, rt_error_message(kind)) == 0, "%s: %s: panic message \"%s\"",
             d->name, what, last_panic != NULL ? last_panic : "(none)");
}

static void run(const rt_allocator_t *d)
{
    tl_buffer_t buf;
    size_t size = 64u << 10;
    if (!TL_CHECK(tl_buffer_new(&buf, size, 0), "out of memory")) {
        return;
    }
    void *h = d->create(buf.mem, size);
    if (!TL_CHECK(h != NULL, "%s: create", d->name)) {
        tl_buffer_free(&buf);
        return;
    }
    rt_stats_t s0, s1;
    d->stats(h, &s0);

    static unsigned char foreign[64];
    unsigned long before = panics;
    d->free(h, foreign + 16);
    expect_panic(d, "free of a foreign pointer", RT_ERR_FOREIGN_POINTER, before);

    void *p = d->malloc(h, 100);
    void *q = d->malloc(h, 100); /* keeps p from merging away, so its header stays readable */
    TL_CHECK(p != NULL && q != NULL, "%s: malloc", d->name);
    d->free(h, p);
    before = panics;
    d->free(h, p);
    expect_panic(d, "double free", RT_ERR_DOUBLE_FREE, before);

    before = panics;
    TL_CHECK(d->calloc == NULL || d->calloc(h, SIZE_MAX, 2) == NULL, "%s: calloc overflow refused", d->name);
    TL_CHECK(d->memalign == NULL || d->memalign(h, 24, 10) == NULL, "%s: bad alignment refused", d->name);
    TL_CHECK(panics == before, "%s: a refused request panicked", d->name);

    d->free(h, q);
    d->stats(h, &s1);
    TL_CHECK(s1.errors >= s0.errors + 2u && s1.used_bytes == 0u, "%s: errors counted, heap empty again", d->name);
    TL_CHECK(d->check(h), "%s: integrity after the refused calls", d->name);
    tl_buffer_free(&buf);
}

int main(void)
{
    size_t n;
    const rt_allocator_t *const *all = rt_registry(&n);
    for (size_t i = 0; i < n; i++) {
        run(all[i]);
    }
    return tl_summary("panic");
}
