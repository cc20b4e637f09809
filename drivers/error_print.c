/* SPDX-License-Identifier: MIT */
/*
 * drivers/error_print.c -- error handlers that print the report to stderr (rtalloc/drivers.h).
 *
 * The line is written with one fprintf call so that reports from several threads do not
 * interleave (POSIX stdio locks the stream per call). Format:
 *     rtalloc: <operation>: <message> (ptr=<pointer>, size=<size>)
 */
#include <stdio.h>
#include <stdlib.h>

#include "rtalloc/drivers.h"

static void print_error(const rt_error_t *error)
{
    if (error == NULL) {
        (void)fputs("rtalloc: (no error report)\n", stderr);
        return;
    }
    (void)fprintf(stderr, "rtalloc: %s: %s (ptr=%p, size=%zu)\n", error->operation != NULL ? error->operation : "?",
                  error->message != NULL ? error->message : "error", (void *)error->pointer, error->size);
}

void rt_error_print_abort(void *context, const rt_error_t *error)
{
    (void)context;
    print_error(error);
    abort();
}

void rt_error_print(void *context, const rt_error_t *error)
{
    (void)context;
    print_error(error);
}
