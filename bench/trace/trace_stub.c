/*
 * bench/trace/trace_stub.c -- stand-ins for what the recorder's files provide while they are not in
 * the tree: with RTBENCH_STUB_FILE (bench/trace/trace.c missing) loading and saving say so; with
 * RTBENCH_STUB_RECORD (bench/trace/record.c missing) `trace record` is unavailable. CMake
 * compiles this file only when one of the two is missing, with the matching definitions.
 */
#include <stdio.h>
#include <stdlib.h>

#include "trace.h"

#ifdef RTBENCH_STUB_FILE
bool tr_load(const char *path, tr_file_t *f, char *err, size_t errlen)
{
    (void)path;
    f->nstreams = 0;
    f->streams = NULL;
    snprintf(err, errlen, "trace files are not supported by this build (bench/trace/trace.c missing)");
    return false;
}

bool tr_save(const char *path, const tr_file_t *f, char *err, size_t errlen)
{
    (void)path, (void)f;
    snprintf(err, errlen, "trace files are not supported by this build (bench/trace/trace.c missing)");
    return false;
}

void tr_release(tr_file_t *f)
{
    for (size_t i = 0; i < f->nstreams; i++) {
        wl_release(&f->streams[i].trace);
    }
    free(f->streams);
    f->streams = NULL;
    f->nstreams = 0;
}

#endif

#ifdef RTBENCH_STUB_RECORD
int trace_record(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "rtbench trace record: not built (bench/trace/record.c missing)\n");
    return 1;
}
#endif
