/* SPDX-License-Identifier: MIT */
/*
 * drivers/pthread_lock.c -- lock hooks over a POSIX mutex (rtalloc/drivers.h).
 *
 * The context is a pthread_mutex_t * the caller owns and has initialised. A mutex that fails to
 * lock or unlock means the program is already broken (uninitialised, destroyed, or unlocked by a
 * thread that does not own it, for an error-checking mutex): there is no way to report that
 * through an allocator call, so it prints one line and aborts.
 *
 * Cost: one uncontended pthread_mutex_lock/unlock pair per operation (an atomic RMW each on
 * glibc). Not for interrupt handlers: use an interrupt-masking hook there.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "rtalloc/drivers.h"

static void die(const char *what, int rc, void *mutex)
{
    (void)fprintf(stderr, "rtalloc: %s(%p) failed: error %d\n", what, mutex, rc);
    abort();
}

uintptr_t rt_pthread_lock(void *mutex)
{
    int rc = pthread_mutex_lock((pthread_mutex_t *)mutex);
    if (rc != 0) {
        die("pthread_mutex_lock", rc, mutex);
    }
    return 0; /* a mutex does not nest through tokens */
}

void rt_pthread_unlock(void *mutex, uintptr_t token)
{
    (void)token;
    int rc = pthread_mutex_unlock((pthread_mutex_t *)mutex);
    if (rc != 0) {
        die("pthread_mutex_unlock", rc, mutex);
    }
}
