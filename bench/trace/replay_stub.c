/*
 * bench/trace/replay_stub.c -- TEMPORARY, branch i14-record only: stands in for
 * bench/trace/replay.c (branch i14-replay) so that rtbench links. Delete at the merge.
 */
#include <stdio.h>

#include "trace.h"

int trace_replay(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "rtbench: trace replay: not built yet (bench/trace/replay.c, branch i14-replay)\n");
    return 2;
}

int trace_size(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "rtbench: trace size: not built yet (bench/trace/replay.c, branch i14-replay)\n");
    return 2;
}
