/* SPDX-License-Identifier: MIT */
/*
 * trace/trace.h -- allocation traces of real programs: record, store, load (doc/traces.md).
 *
 * `rtbench trace record -- CMD ARGS` runs CMD with the recorder (librtalloc-trace.so, trace/
 * recorder.c) preloaded. The recorder forwards every malloc-family call to glibc and logs it; when
 * the program ends, rtbench turns the logs into one compact trace file. One file holds one stream
 * per process image (the program, its forked children, what they exec'd), each a wl_trace_t whose
 * ops are in a valid single-threaded order (an object is freed after it was allocated, and an
 * address is reused only after it was freed), with slots standing for objects.
 *
 * `rtbench trace replay FILE` and `rtbench trace size FILE` (trace/replay.c) load the file
 * and replay every stream, each on a fresh instance, against every allocator.
 */
#ifndef RTBENCH_TRACE_H
#define RTBENCH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

typedef struct tr_stream {
    wl_trace_t trace;  /* ops with kinds of workload.h (malloc, free, realloc, calloc, memalign);
                              trace.peak_live: the most requested bytes live at once */
    uint32_t pid;      /* of the recorded process */
    uint32_t threads;  /* threads that made calls */
    uint32_t *thread;  /* per op, the thread that made it (0 .. threads - 1, numbered in the
                              order threads first called); NULL when threads <= 1 or the file is
                              of format version 1. malloc'ed; tr_release frees it */
    uint64_t failed;   /* calls that returned NULL in the recorded run (WL_OP_FAILED) */
    uint64_t foreign;  /* frees/reallocs of pointers the stream never allocated (dropped) */
    char command[256]; /* argv of the process image, space-separated, truncated */
} tr_stream_t;

typedef struct tr_file {
    size_t nstreams;
    tr_stream_t *streams; /* malloc'ed */
    char command[256];    /* what `record` ran */
} tr_file_t;

/* Loads a trace file. On failure returns false with the reason in err. Everything the loader
 * allocates (the file's bytes, the streams, their ops, the check's per-slot tables) is counted
 * against max_memory before it is allocated: a file that would take more is refused, its reason
 * saying "more than the memory limit" (trace.c). tr_load: max_memory = tr_default_max_memory(). */
bool tr_load(const char *path, tr_file_t *f, char *err, size_t errlen);
bool tr_load_max(const char *path, uint64_t max_memory, tr_file_t *f, char *err, size_t errlen);

/* The same checks on the len bytes at data (a whole file, checksum included). */
bool tr_parse(const unsigned char *data, size_t len, uint64_t max_memory, tr_file_t *f, char *err, size_t errlen);

/* Half of the machine's physical memory (sysconf), at most half of the address space; 1 GiB when
 * the system does not say. The default limit of the loader and of `trace replay|size`. */
uint64_t tr_default_max_memory(void);

/* Writes f to path (atomically: path.tmp, then rename). */
bool tr_save(const char *path, const tr_file_t *f, char *err, size_t errlen);

/* The file tr_save writes, in memory (*out malloc'ed). False when out of memory. */
bool tr_encode(const tr_file_t *f, unsigned char **out, size_t *len);

/* The checksum of the format (FNV-1a 64) of n bytes: a file's last 8 bytes hold that of the rest,
 * little endian. */
uint64_t tr_checksum(const unsigned char *p, size_t n);

void tr_release(tr_file_t *f);

/* For a replay: a request of 0 bytes that got memory when recorded (glibc's unique pointer for
 * malloc(0)) becomes 1 byte, as the drop-in malloc serves it -- the library's allocators return
 * NULL for 0 bytes, which a replay would count as a failure no program on the drop-in sees.
 * `trace replay`, `size`, `advise` and the experiment call it after loading; the file is as
 * recorded. */
void tr_zero_as_one(tr_file_t *f);

/* The subcommands, each given argv after "trace <name>" (argc counts only those). Return the
 * process exit status. */
int trace_record(int argc, char **argv); /* [-o FILE] -- CMD ARGS... (trace/record.c) */
int trace_replay(int argc, char **argv); /* FILE [--alloc LIST] [--csv DIR] [--max-memory SIZE] (replay.c) */
int trace_advise(int argc, char **argv); /* FILE... : which allocator for the recorded program (replay.c) */
int trace_size(int argc, char **argv);   /* FILE [--alloc LIST] [--csv DIR] [--max-memory SIZE] (replay.c) */

#endif /* RTBENCH_TRACE_H */
