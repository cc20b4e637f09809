/* SPDX-License-Identifier: MIT */
/*
 * dropin_linked.c -- a program linked with -lrtalloc-malloc, not preloaded: its malloc is the
 * library's (tests/stress/dropin.c runs it with RTALLOC_STATS=1 and finds the stats line on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *p = malloc(100);
    if (p == NULL) {
        return 1;
    }
    strcpy(p, "linked ok");
    char *q = realloc(p, 1000);
    if (q == NULL) {
        return 1;
    }
    puts(q);
    free(q);
    return 0;
}
