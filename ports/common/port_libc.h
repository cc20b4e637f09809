/* SPDX-License-Identifier: MIT */
/*
 * ports/common/port_libc.h -- the few C library functions the tests use, for the bare-metal
 * targets (no libc there: riscv64-unknown-elf ships none, and newlib would be one more moving
 * part on ARM). tests/common/testlib.h includes this instead of <stdio.h>, <stdlib.h>, <string.h> and
 * <inttypes.h> when built with TL_TARGET, so the same test sources build for host and target.
 *
 * Implemented in ports/common/libc.c under the standard names (the compiler may also call
 * memcpy/memset/memmove/memcmp on its own). stdout and stderr both go to the semihosting console.
 * malloc is a LIFO arena over the RAM between .bss and the stack (test buffers are freed in
 * reverse order, or at least before the next one below them is); free of a block that is not on
 * top only marks it, and it is reclaimed when everything above it is freed. The exact arena
 * (start, size, high-water mark) is printed by port_arena_report().
 */
#ifndef RTALLOC_PORT_LIBC_H
#define RTALLOC_PORT_LIBC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "port.h"

/* <inttypes.h>: both targets are ILP32 with a 64-bit unsigned long long. */
_Static_assert(_Generic((uint64_t)0, unsigned long long : 1, default : 0), "uint64_t is unsigned long long");
_Static_assert(_Generic((int64_t)0, long long : 1, default : 0), "int64_t is long long");
#define PRId64 "lld"
#define PRIi64 "lli"
#define PRIu64 "llu"
#define PRIx64 "llx"
#define PRIX64 "llX"

/* <stdio.h> */
typedef struct port_file {
    int fd;
} FILE;
extern FILE port_stdout_file, port_stderr_file;
#define stdout (&port_stdout_file)
#define stderr (&port_stderr_file)
#define EOF (-1)
int printf(const char *fmt, ...) PORT_PRINTF(1, 2);
int fprintf(FILE *stream, const char *fmt, ...) PORT_PRINTF(2, 3);
int vprintf(const char *fmt, va_list ap);
int vfprintf(FILE *stream, const char *fmt, va_list ap);
int snprintf(char *buf, size_t n, const char *fmt, ...) PORT_PRINTF(3, 4);
int fputc(int c, FILE *stream);
int putchar(int c);
int fputs(const char *s, FILE *stream);
int puts(const char *s);
int fflush(FILE *stream);

/* <stdlib.h> */
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void free(void *p);
void *realloc(void *p, size_t size);
_Noreturn void abort(void);
_Noreturn void exit(int status);
unsigned long long strtoull(const char *s, char **end, int base);
void qsort(void *base, size_t count, size_t size, int (*compare)(const void *, const void *));

/* <string.h> */
void *memcpy(void *restrict d, const void *restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

/* The malloc arena: prints its start, size and high-water mark. */
void port_arena_report(void);

#endif /* RTALLOC_PORT_LIBC_H */
