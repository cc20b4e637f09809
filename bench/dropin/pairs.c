/* SPDX-License-Identifier: MIT */
/*
 * bench/dropin/pairs.c -- the drop-in malloc under threads: T threads, each N malloc/free pairs of
 * 16..512 bytes over its own window of 256 live blocks (a slot drawn at random is freed and
 * refilled), every block written once. Prints the process's CPU nanoseconds per pair
 * (CLOCK_PROCESS_CPUTIME_ID: both cores' time, so a lock's spinning and its cache-line traffic
 * count) and the wall nanoseconds per pair. Run it with and without LD_PRELOAD of
 * librtalloc-malloc.so (tools/dropin_threads.py does, allocators interleaved).
 *
 * Usage: pairs [threads] [pairs per thread]   (default 2, 5000000)
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { WINDOW = 256 };

static unsigned long pairs;

static void *worker(void *arg)
{
    uint64_t s = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull | 1u;
    void *win[WINDOW] = {0};
    for (unsigned long i = 0; i < pairs; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        unsigned j = (unsigned)(s % WINDOW);
        free(win[j]);
        size_t n = 16u + (size_t)((s >> 20) % 497u);
        char *p = malloc(n);
        if (p == NULL) {
            fprintf(stderr, "pairs: malloc(%zu) failed\n", n);
            exit(1);
        }
        p[0] = (char)i;
        win[j] = p;
    }
    for (unsigned j = 0; j < WINDOW; j++) {
        free(win[j]);
    }
    return NULL;
}

static double seconds(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    unsigned threads = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 2u;
    pairs = argc > 2 ? strtoul(argv[2], NULL, 10) : 5000000ul;
    if (threads < 1u || threads > 256u || pairs == 0u) {
        fprintf(stderr, "usage: pairs [threads 1..256] [pairs per thread]\n");
        return 2;
    }
    pthread_t *tid = malloc(threads * sizeof *tid);
    double c0 = seconds(CLOCK_PROCESS_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
    for (unsigned t = 0; t < threads; t++) {
        pthread_create(&tid[t], NULL, worker, (void *)(uintptr_t)(t + 1u));
    }
    for (unsigned t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
    }
    double c1 = seconds(CLOCK_PROCESS_CPUTIME_ID), w1 = seconds(CLOCK_MONOTONIC);
    double total = (double)threads * (double)pairs;
    printf("cpu_ns_per_pair %.2f wall_ns_per_pair %.2f threads %u pairs %lu\n", (c1 - c0) * 1e9 / total,
           (w1 - w0) * 1e9 / total, threads, pairs);
    free(tid);
    return 0;
}
