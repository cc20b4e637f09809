/* SPDX-License-Identifier: MIT */
/*
 * entropy.c -- rt_entropy_os (rtalloc/drivers.h): 64 bits from the kernel for the allocators'
 * keys, outside the freestanding core.
 */
#define _GNU_SOURCE /* getrandom */

#include "rtalloc/drivers.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static int read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0u) {
        ssize_t got = read(fd, p, n);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

uint64_t rt_entropy_os(void *context)
{
    (void)context;
    uint64_t x = 0;
    ssize_t got;
    do {
        got = getrandom(&x, sizeof x, GRND_NONBLOCK);
    } while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof x) {
        return x;
    }
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        int rc = read_all(fd, &x, sizeof x);
        close(fd);
        if (rc == 0) {
            return x;
        }
    }
    /* Neither: the clock (the core mixes its own counter in, so keys still never repeat). */
    struct timespec t = {0, 0};
    (void)clock_gettime(CLOCK_MONOTONIC, &t);
    return ((uint64_t)t.tv_sec * 1000000007ull) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 32);
}
