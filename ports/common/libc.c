/* SPDX-License-Identifier: MIT */
/*
 * ports/common/libc.c -- the C library subset of port_libc.h. Small and obviously correct rather
 * than fast: it serves tests and the harness, never the measured allocator code (the core calls
 * at most memcpy/memset/memmove/memcmp, emitted by the compiler).
 */
#include "port_libc.h"

#if defined(__GNUC__) && !defined(__clang__)
/* Keeps GCC from recognising the loops below as memcpy/memset and calling them recursively. */
#define NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_LIBCALLS
#endif
/* memcpy, memmove and memset are weak: a program may bring its own (the WCET scenarios,
 * ports/wcet/, count the instructions of theirs). */
#define PORT_WEAK __attribute__((weak))

/* --- <string.h> --------------------------------------------------------------------------------- */

PORT_WEAK NO_LIBCALLS void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
    unsigned char *dc = d;
    const unsigned char *sc = s;
    if ((((uintptr_t)dc | (uintptr_t)sc) & 3u) == 0u) {
        for (; n >= 4u; n -= 4u, dc += 4, sc += 4) {
            *(uint32_t *)(void *)dc = *(const uint32_t *)(const void *)sc;
        }
    }
    while (n-- > 0u) {
        *dc++ = *sc++;
    }
    return d;
}

PORT_WEAK NO_LIBCALLS void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *dc = d;
    const unsigned char *sc = s;
    if (dc == sc || n == 0u) {
        return d;
    }
    if ((uintptr_t)dc < (uintptr_t)sc || (uintptr_t)dc >= (uintptr_t)sc + n) {
        while (n-- > 0u) {
            *dc++ = *sc++;
        }
    } else {
        while (n-- > 0u) {
            dc[n] = sc[n];
        }
    }
    return d;
}

PORT_WEAK NO_LIBCALLS void *memset(void *d, int c, size_t n)
{
    unsigned char *dc = d;
    unsigned char v = (unsigned char)c;
    while (n > 0u && ((uintptr_t)dc & 3u) != 0u) {
        *dc++ = v;
        n--;
    }
    uint32_t w = v * 0x01010101u;
    for (; n >= 4u; n -= 4u, dc += 4) {
        *(uint32_t *)(void *)dc = w;
    }
    while (n-- > 0u) {
        *dc++ = v;
    }
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
        if (x[i] != y[i]) {
            return x[i] < y[i] ? -1 : 1;
        }
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') {
        n++;
    }
    return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y) {
            return x < y ? -1 : 1;
        }
        if (x == 0u) {
            return 0;
        }
    }
    return 0;
}

int strcmp(const char *a, const char *b) { return strncmp(a, b, SIZE_MAX); }

/* --- <stdio.h> ---------------------------------------------------------------------------------- */

FILE port_stdout_file = {1};
FILE port_stderr_file = {2};

int vprintf(const char *fmt, va_list ap) { return port_vprintf(fmt, ap); }

int vfprintf(FILE *stream, const char *fmt, va_list ap)
{
    (void)stream;
    return port_vprintf(fmt, ap);
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = port_vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int fprintf(FILE *stream, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stream, fmt, ap);
    va_end(ap);
    return n;
}

int snprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int count = port_vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return count;
}

int fputc(int c, FILE *stream)
{
    (void)stream;
    port_putc((char)c);
    return (unsigned char)c;
}

int putchar(int c) { return fputc(c, stdout); }

int fputs(const char *s, FILE *stream)
{
    (void)stream;
    port_puts(s);
    return 0;
}

int puts(const char *s)
{
    port_puts(s);
    port_putc('\n');
    return 0;
}

int fflush(FILE *stream)
{
    (void)stream;
    port_flush();
    return 0;
}

/* --- <stdlib.h> --------------------------------------------------------------------------------- */

_Noreturn void abort(void)
{
    port_puts("\nabort()\n");
    port_exit(134); /* what a shell reports for SIGABRT */
}

_Noreturn void exit(int status) { port_exit(status); }

unsigned long long strtoull(const char *s, char **end, int base)
{
    const char *p = s;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p == '+') {
        p++;
    }
    if ((base == 0 || base == 16) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        base = 16;
    } else if (base == 0) {
        base = p[0] == '0' ? 8 : 10;
    }
    unsigned long long v = 0;
    const char *digits_start = p;
    for (;; p++) {
        int d;
        if (*p >= '0' && *p <= '9') {
            d = *p - '0';
        } else if (*p >= 'a' && *p <= 'z') {
            d = *p - 'a' + 10;
        } else if (*p >= 'A' && *p <= 'Z') {
            d = *p - 'A' + 10;
        } else {
            break;
        }
        if (d >= base) {
            break;
        }
        v = v * (unsigned)base + (unsigned)d; /* no overflow check: the tests parse small seeds */
    }
    if (end != NULL) {
        *end = (char *)(uintptr_t)(p == digits_start ? s : p);
    }
    return v;
}

/* qsort: heapsort (O(n log n), no recursion, no extra memory). */
static void swap_bytes(unsigned char *a, unsigned char *b, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        unsigned char t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

static void sift_down(unsigned char *base, size_t root, size_t count, size_t size,
                      int (*compare)(const void *, const void *))
{
    for (;;) {
        size_t child = 2u * root + 1u;
        if (child >= count) {
            return;
        }
        if (child + 1u < count && compare(base + child * size, base + (child + 1u) * size) < 0) {
            child++;
        }
        if (compare(base + root * size, base + child * size) >= 0) {
            return;
        }
        swap_bytes(base + root * size, base + child * size, size);
        root = child;
    }
}

void qsort(void *base, size_t count, size_t size, int (*compare)(const void *, const void *))
{
    unsigned char *b = base;
    if (count < 2u) {
        return;
    }
    for (size_t i = count / 2u; i-- > 0u;) {
        sift_down(b, i, count, size, compare);
    }
    for (size_t end = count - 1u; end > 0u; end--) {
        swap_bytes(b, b + end * size, size);
        sift_down(b, 0, end, size, compare);
    }
}

/* malloc: a LIFO arena. Each block has a 16-byte header (keeps 16-byte alignment) linking it to
 * the block below; `top` is the highest block. free marks; marked blocks on top are popped. */
typedef struct arena_block {
    struct arena_block *below;
    size_t size;
    uint32_t freed;
    uint32_t magic;
} arena_block_t;

_Static_assert(sizeof(arena_block_t) <= 16u, "arena header fits 16 bytes");
#define ARENA_HEADER 16u
#define ARENA_MAGIC 0xA110CA7Eu

extern unsigned char __port_arena_start[], __port_arena_end[];
static arena_block_t *top;
static uintptr_t arena_high;

static uintptr_t arena_brk(void)
{
    return top == NULL ? (uintptr_t)__port_arena_start
                       : (uintptr_t)top + ARENA_HEADER + ((top->size + 15u) & ~(size_t)15u);
}

void *malloc(size_t size)
{
    uintptr_t at = (arena_brk() + 15u) & ~(uintptr_t)15u;
    uintptr_t limit = (uintptr_t)__port_arena_end;
    if (size > limit || at + ARENA_HEADER > limit - ((size + 15u) & ~(size_t)15u)) {
        return NULL;
    }
    arena_block_t *b = (arena_block_t *)at;
    b->below = top;
    b->size = size;
    b->freed = 0;
    b->magic = ARENA_MAGIC;
    top = b;
    uintptr_t end = arena_brk();
    if (end > arena_high) {
        arena_high = end;
    }
    return (unsigned char *)b + ARENA_HEADER;
}

void *calloc(size_t count, size_t size)
{
    if (size != 0u && count > SIZE_MAX / size) {
        return NULL;
    }
    void *p = malloc(count * size);
    if (p != NULL) {
        memset(p, 0, count * size);
    }
    return p;
}

/* realloc: in place when the block is on top of the arena (the usual case of a growing table
 * that nothing was allocated above), else a new block, a copy and the old one freed. */
void *realloc(void *p, size_t size)
{
    if (p == NULL) {
        return malloc(size);
    }
    arena_block_t *b = (arena_block_t *)(void *)((unsigned char *)p - ARENA_HEADER);
    if (b->magic != ARENA_MAGIC || b->freed != 0u) {
        port_panic("realloc: not a live block of the test arena");
    }
    if (b == top) {
        uintptr_t limit = (uintptr_t)__port_arena_end;
        if (size <= limit && (uintptr_t)p <= limit - ((size + 15u) & ~(size_t)15u)) {
            b->size = size;
            uintptr_t end = arena_brk();
            if (end > arena_high) {
                arena_high = end;
            }
            return p;
        }
        return NULL;
    }
    void *q = malloc(size);
    if (q != NULL) {
        memcpy(q, p, b->size < size ? b->size : size);
        free(p);
    }
    return q;
}

void free(void *p)
{
    if (p == NULL) {
        return;
    }
    arena_block_t *b = (arena_block_t *)(void *)((unsigned char *)p - ARENA_HEADER);
    if ((uintptr_t)p < (uintptr_t)__port_arena_start + ARENA_HEADER || (uintptr_t)p >= (uintptr_t)__port_arena_end ||
        b->magic != ARENA_MAGIC || b->freed != 0u) {
        port_panic("free: not a live block of the test arena");
    }
    b->freed = 1;
    while (top != NULL && top->freed != 0u) {
        top->magic = 0;
        top = top->below;
    }
}

void port_arena_report(void)
{
    port_printf("port: malloc arena %p..%p (%lu KiB), high-water %lu KiB\n", (void *)__port_arena_start,
                (void *)__port_arena_end,
                (unsigned long)(((uintptr_t)__port_arena_end - (uintptr_t)__port_arena_start) >> 10),
                (unsigned long)((arena_high == 0u ? 0u : arena_high - (uintptr_t)__port_arena_start) >> 10));
}
