/* SPDX-License-Identifier: MIT */
/*
 * footprint_libc.c -- memset, memcpy and memmove for tools/footprint.sh's linked programs, the
 * same plain loops on both targets (riscv64-unknown-elf-gcc ships no C library), so the figures
 * count what the heap's calls to them add, as a C library's smallest versions would. Built with
 * -fno-builtin (and, under gcc, -fno-tree-loop-distribute-patterns) so no loop becomes a call to
 * itself.
 */
#include <stddef.h>

void *memset(void *d, int c, size_t n);
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);

void *memset(void *d, int c, size_t n)
{
    unsigned char *p = d;
    while (n-- != 0u) {
        *p++ = (unsigned char)c;
    }
    return d;
}

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
    unsigned char *p = d;
    const unsigned char *q = s;
    while (n-- != 0u) {
        *p++ = *q++;
    }
    return d;
}

void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *p = d;
    const unsigned char *q = s;
    if (p < q) {
        while (n-- != 0u) {
            *p++ = *q++;
        }
    } else {
        while (n-- != 0u) {
            p[n] = q[n];
        }
    }
    return d;
}
