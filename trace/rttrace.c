/* SPDX-License-Identifier: MIT */
/*
 * trace/rttrace.c -- rttrace, the trace tool: record a program's allocations, then replay them on
 * the allocators, size the heap each needs and pick one (doc/traces.md). The same commands as
 * `rtbench trace ...`, without the benchmark around them:
 *
 *   rttrace record [-o FILE] -- CMD ARGS...   every malloc-family call of CMD and its children
 *   rttrace replay FILE [...]                 failures, instructions, ns per call, F
 *   rttrace size FILE [...]                   the smallest heap each allocator needs
 *   rttrace advise FILE... [...]              which allocator, and the heap to configure
 *   rttrace threads FILE [...]                a threaded recording, one thread per recorded thread
 *
 * Each command's --help prints its options (their usage lines say `rtbench trace`: the same).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "threads.h"
#include "trace.h"

static void on_sigint(int sig)
{
    (void)sig;
    drv_stop = 1;
}

static int usage(FILE *out, int rc)
{
    fprintf(out, "usage: rttrace COMMAND [options]\n"
                 "  record [-o FILE] -- CMD ARGS...  run CMD with the recorder preloaded; one trace file\n"
                 "  replay FILE                      replay every stream on the allocators\n"
                 "  size FILE                        the smallest heap each allocator needs\n"
                 "  advise FILE...                   which allocator suits the program, and its heap\n"
                 "  threads FILE                     a threaded recording, one thread per recorded thread\n"
                 "`rttrace COMMAND --help` for a command's options (doc/traces.md).\n");
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        return usage(argc < 2 ? stderr : stdout, argc < 2 ? 2 : 0);
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "record") != 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigint;
        sa.sa_flags = (int)SA_RESETHAND; /* a second Ctrl-C kills at once */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL); /* the replays poll drv_stop: status 130 */
    }
    int rc = strcmp(cmd, "record") == 0    ? trace_record(argc - 2, argv + 2)
             : strcmp(cmd, "replay") == 0  ? trace_replay(argc - 2, argv + 2)
             : strcmp(cmd, "size") == 0    ? trace_size(argc - 2, argv + 2)
             : strcmp(cmd, "advise") == 0  ? trace_advise(argc - 2, argv + 2)
             : strcmp(cmd, "threads") == 0 ? trace_threads(argc - 2, argv + 2)
                                           : -2;
    if (rc == -2) {
        fprintf(stderr, "rttrace: unknown command '%s'\n", cmd);
        return usage(stderr, 2);
    }
    return rc;
}
