/*
 * bench/trace/trace.h -- allocation traces of real programs: record, store, load (issue 14).
 *
 * `rtbench trace record -- CMD ARGS` runs CMD with the recorder (librtalloc-trace.so, bench/trace/
 * recorder.c) preloaded. The recorder forwards every malloc-family call to glibc and logs it; when
 * the program ends, rtbench turns the logs into one compact trace file. One file holds one stream
 * per process image (the program, its forked children, what they exec'd), each a wl_trace_t whose
 * ops are in a valid single-threaded order (an object is freed after it was allocated, and an
 * address is reused only after it was freed), with slots standing for objects.
 *
 * `rtbench trace replay FILE` and `rtbench trace size FILE` (bench/trace/replay.c) load the file
 * and replay every stream, each on a fresh instance, against every allocator.
 */
#ifndef RTBENCH_TRACE_H
#define RTBENCH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

typedef struct tr_stream {
    wl_trace_t trace;      /* ops with kinds of workload.h (malloc, free, realloc, calloc, memalign);
                              trace.peak_live: the most requested bytes live at once */
    uint32_t pid;          /* of the recorded process */
    uint32_t threads;      /* threads that made calls */
    uint64_t failed;       /* calls that returned NULL in the recorded run (WL_OP_FAILED) */
    uint64_t foreign;      /* frees/reallocs of pointers the stream never allocated (dropped) */
    char command[256];     /* argv of the process image, space-separated, truncated */
} tr_stream_t;

typedef struct tr_file {
    size_t nstreams;
    tr_stream_t *streams;  /* malloc'ed */
    char command[256];     /* what `record` ran */
} tr_file_t;

/* Loads a trace file. On failure returns false with the reason in err. */
bool tr_load(const char *path, tr_file_t *f, char *err, size_t errlen);

/* Writes f to path (atomically: path.tmp, then rename). */
bool tr_save(const char *path, const tr_file_t *f, char *err, size_t errlen);

void tr_release(tr_file_t *f);

/* The subcommands, each given argv after "trace <name>" (argc counts only those). Return the
 * process exit status. */
int trace_record(int argc, char **argv);  /* [-o FILE] -- CMD ARGS... (bench/trace/record.c) */
int trace_replay(int argc, char **argv);  /* FILE [--alloc LIST] [--csv DIR] (bench/trace/replay.c) */
int trace_size(int argc, char **argv);    /* FILE [--alloc LIST] [--csv DIR] (bench/trace/replay.c) */

#endif /* RTBENCH_TRACE_H */
