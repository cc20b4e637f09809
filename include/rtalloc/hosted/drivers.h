/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/hosted/drivers.h -- the hosted (POSIX) adapters that live outside the freestanding
 * core: lock hooks over a pthread mutex, and an error handler that prints and aborts.
 * Link with rtalloc::drivers (pkg-config: rtalloc-drivers). rtalloc/drivers.h forwards here.
 */
#ifndef RTALLOC_DRIVERS_H
#define RTALLOC_DRIVERS_H

#include "../common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lock hooks over a pthread_mutex_t* passed as the context:
 *   rt_heap_set_lock(h, rt_pthread_lock, rt_pthread_unlock, &mutex); */
uintptr_t rt_pthread_lock(void *mutex);
void rt_pthread_unlock(void *mutex, uintptr_t token);

/* Error handler: prints "rtalloc: <operation>: <message> (pointer, size)" to stderr and aborts.
 * The context is ignored. */
void rt_error_print_abort(void *context, const rt_error_t *error);

/* Error handler: prints the same line to stderr and returns (the operation stays refused). */
void rt_error_print(void *context, const rt_error_t *error);

/* An entropy source for rt_set_entropy (rtalloc/common.h): 64 bits from the kernel (getrandom;
 * /dev/urandom where that is missing), the built-in mix of a counter and the clock if both fail.
 * The context is ignored. Install it once, before creating allocators:
 *   rt_set_entropy(rt_entropy_os, NULL); */
uint64_t rt_entropy_os(void *context);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_DRIVERS_H */
