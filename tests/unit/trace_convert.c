/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/trace_convert.c -- the conversion of raw logs into a trace (trace/record.c).
 *
 *   trace_convert RTBENCH DIR
 *
 * Writes hand-made raw logs (trace/rawlog.h) into DIR/trace_convert.raw/ -- the cases a
 * recorded run rarely produces: an address returned while still live (an ordering error), frees
 * and reallocs of foreign pointers, a block above 4 GiB reallocated down, an END without its
 * BEGIN and a BEGIN without its END, a slot never written, a failed realloc, calloc overflow,
 * pvalloc's rounding, realloc(p, 0) and realloc(NULL, 0), two images whose start times order the
 * streams, a log of another format (skipped), a torn last record and a thread id of 2^32 - 2
 * (converted in 1 GiB of address space: an id never sizes an array) -- converts them with
 * `rtbench trace record --from-raw`, and compares the trace op for op with what the conversion
 * rules of record.c's header say.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rawlog.h"
#include "testlib.h"
#include "trace.h"

/* Under ASan or TSan rtbench needs terabytes of address space: no RLIMIT_AS there. */
#if TL_ASAN || defined(__SANITIZE_THREAD__)
#define TC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TC_SANITIZED 1
#endif
#endif
#ifndef TC_SANITIZED
#define TC_SANITIZED 0
#endif

/* testlib.h counts and prints; CHECK names the condition only. */
#define CHECK(cond) TL_CHECK(cond, "%s", "")

static raw_rec_t R(uint8_t op, uint32_t tid, uint64_t ptr, uint64_t size)
{
    raw_rec_t r;
    memset(&r, 0, sizeof r);
    r.op = op;
    r.tid = tid;
    r.ptr = ptr;
    r.size = size;
    return r;
}

static bool write_log(const char *path, uint32_t pid, uint64_t start, const char *cmd, size_t cmdlen,
                      const raw_rec_t *recs, size_t n, size_t torn_bytes)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return false;
    }
    static unsigned char page[RAW_HDR_SIZE];
    memset(page, 0, sizeof page);
    raw_hdr_t h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, RAW_MAGIC, sizeof h.magic);
    h.version = 1;
    h.rec_size = sizeof(raw_rec_t);
    h.pid = pid;
    h.ppid = 1;
    h.start_ns = start;
    h.page_size = 4096;
    h.cmdline_len = (uint32_t)cmdlen; /* NUL-separated arguments, as /proc/self/cmdline */
    memcpy(h.cmdline, cmd, cmdlen);
    memcpy(page, &h, sizeof h);
    bool ok = fwrite(page, 1, sizeof page, f) == sizeof page && fwrite(recs, sizeof *recs, n, f) == n;
    if (torn_bytes > 0) { /* a record cut short: never read */
        raw_rec_t t = R(RAW_MALLOC, 0, 0x9999, 1);
        ok = ok && fwrite(&t, 1, torn_bytes, f) == torn_bytes;
    }
    return fclose(f) == 0 && ok;
}

#define A 0x1000u
#define B 0x2000u
#define C 0x3000u
#define D 0x4000u
#define E 0x5000u
#define F 0x6000u
#define G 0x7000u
#define H 0x8000u
#define I 0x9000u
#define UMAX UINT32_MAX
#define FL WL_OP_FAILED
#define T2 0xFFFFFFFEu /* image one's second thread: an id far above any array the conversion may size */

/* Writes the hand-made logs into dir: image 1 (every case), image 2 (started first, a torn last
 * record) and a file of another format. False when a write fails. */
static bool write_logs(const char *dir)
{
    char path[4200];
    raw_rec_t one[] = {
        R(RAW_MALLOC, 0, A, 10),
        R(RAW_MALLOC, T2, A, 20),               /* A still live: ordering error */
        R(RAW_FREE, 0, B, 0),                   /* foreign */
        R(RAW_REALLOC_BEGIN, 0, C, 30),         /* foreign realloc ... */
        R(RAW_REALLOC_END, 0, D, 30),           /* ... makes D as realloc(NULL, 30) */
        R(RAW_MALLOC, 0, E, (uint64_t)5 << 30), /* too large: flagged, left out */
        R(RAW_REALLOC_BEGIN, T2, E, 40),        /* the large block reallocated down ... */
        R(RAW_REALLOC_END, T2, F, 40),          /* ... enters the stream as realloc(NULL, 40) */
        R(RAW_NONE, 0, 0x1234, 77),             /* a slot taken, never written */
        R(RAW_REALLOC_END, 0, G, 50),           /* END without BEGIN: unfinished, new block */
        R(RAW_REALLOC_BEGIN, 0, D, 0),          /* realloc(D, 0) ... */
        R(RAW_REALLOC_END, 0, 0, 0),            /* ... freed D */
        R(RAW_REALLOC_BEGIN, T2, F, (uint64_t)1 << 40),
        R(RAW_REALLOC_END, T2, 0, (uint64_t)1 << 40), /* failed: F stays */
        R(RAW_FREE, T2, F, 0),
        R(RAW_CALLOC, 0, 0, UINT64_MAX), /* calloc overflow: failed */
        R(RAW_MEMALIGN, 0, H, 5000),     /* pvalloc(5000): 8192, page-aligned */
        R(RAW_REALLOC_NEW, 0, I, 0),     /* realloc(NULL, 0): malloc(0) */
        R(RAW_REALLOC_BEGIN, 0, I, 60),  /* BEGIN without END: unfinished */
    };
    one[15].flags = RAW_F_OVERFLOW;
    one[16].align = 12;
    one[16].sub = RAW_SUB_PVALLOC;
    raw_rec_t two[] = {
        R(RAW_MALLOC, 0, A, 7),
        R(RAW_FREE, 0, A, 0),
    };
    bool ok = true;
    snprintf(path, sizeof path, "%s/raw-1-0.log", dir);
    ok = ok && write_log(path, 1, 200, "one\0arg", sizeof "one\0arg", one, sizeof one / sizeof one[0], 0);
    snprintf(path, sizeof path, "%s/raw-2-0.log", dir);
    ok = ok && write_log(path, 2, 100, "two", sizeof "two", two, 2, 13); /* started first; a torn record at its end */
    snprintf(path, sizeof path, "%s/raw-3-0.log", dir);
    FILE *junk = fopen(path, "wb");
    ok = ok && junk != NULL && fputs("not a raw log at all", junk) >= 0 && fclose(junk) == 0;
    return ok;
}

/* Runs `rtbench trace record --from-raw dir -o out` and checks that it exits with 0. */
static void run_convert(const char *rtbench, const char *dir, const char *out)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
#if !TC_SANITIZED
        /* 1 GiB of address space: a thread id that sized an array (4 GiB for T2) cannot be served */
        struct rlimit as = {(rlim_t)1 << 30, (rlim_t)1 << 30};
        setrlimit(RLIMIT_AS, &as);
#endif
        execl(rtbench, rtbench, "trace", "record", "--from-raw", dir, "-o", out, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Compares image 1's stream op for op with the conversion rules, then its counters. */
static void check_image_one(const tr_stream_t *s1)
{
    static const wl_op_t want[] = {
        {0, 10, WL_MALLOC},
        {1, 20, WL_MALLOC},
        {2, 30, WL_REALLOC},
        {3, UMAX, WL_MALLOC | FL},
        {3, 40, WL_REALLOC},
        {4, 50, WL_REALLOC},
        {2, 0, WL_FREE},
        {3, UMAX, WL_REALLOC | FL},
        {3, 0, WL_FREE},
        {3, UMAX, WL_CALLOC | FL},
        {3, 8192, WL_MEMALIGN | 12u << 8},
        {2, 0, WL_MALLOC},
    };
    size_t nwant = sizeof want / sizeof want[0];
    const wl_trace_t *t = &s1->trace;
    CHECK(t->nops == nwant);
    for (size_t i = 0; i < nwant && i < t->nops; i++) {
        if (memcmp(&t->ops[i], &want[i], sizeof want[i]) != 0) {
            fprintf(stderr, "op %zu: slot %u size %u kind 0x%x, expected slot %u size %u kind 0x%x\n", i,
                    (unsigned)t->ops[i].slot, (unsigned)t->ops[i].size, (unsigned)t->ops[i].kind,
                    (unsigned)want[i].slot, (unsigned)want[i].size, (unsigned)want[i].kind);
            tl_state.failed++;
        } else {
            tl_state.passed++;
        }
    }
    CHECK(t->slots == 5);
    CHECK(s1->foreign == 2 && s1->failed == 2 && s1->threads == 2);
    /* each op's thread: tid 0 is thread 0 (it called first), T2 thread 1; a realloc's op is its
     * END record's thread */
    static const uint32_t want_thread[] = {0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0};
    CHECK(s1->thread != NULL);
    for (size_t i = 0; s1->thread != NULL && i < nwant && i < t->nops; i++) {
        TL_CHECK(s1->thread[i] == want_thread[i], "op %zu: thread %u, expected %u", i, (unsigned)s1->thread[i],
                 (unsigned)want_thread[i]);
    }
    CHECK(t->peak_live == 10 + 20 + 30 + 40 + 50 - 30 - 40 + 8192);
    CHECK(t->nmalloc == 7 && t->nfree == 2);
}

/* Loads out and checks its two streams: their order, commands and names, then their ops. */
static void check_trace(const char *out)
{
    tr_file_t f;
    char err[512];
    bool loaded = tr_load(out, &f, err, sizeof err);
    if (!loaded) {
        fprintf(stderr, "%s\n", err);
    }
    CHECK(loaded && f.nstreams == 2);
    if (loaded && f.nstreams == 2) {
        const tr_stream_t *s0 = &f.streams[0], *s1 = &f.streams[1];
        CHECK(s0->pid == 2 && s1->pid == 1); /* by start time */
        CHECK(strcmp(s0->command, "two") == 0 && strcmp(s1->command, "one arg") == 0);
        CHECK(strcmp(s1->trace.name, "one") == 0);
        CHECK(s0->trace.nops == 2 && s0->trace.peak_live == 7 && s0->foreign == 0);
        check_image_one(s1);
        tr_release(&f);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: trace_convert RTBENCH DIR\n");
        return 2;
    }
    char dir[4096], path[4200], out[4200];
    snprintf(dir, sizeof dir, "%s/trace_convert.raw", argv[2]);
    snprintf(out, sizeof out, "%s/trace_convert.rtt", argv[2]);
    mkdir(dir, 0700);
    CHECK(write_logs(dir));
    run_convert(argv[1], dir, out);
    check_trace(out);
    /* The raw logs of --from-raw stay where they were. */
    snprintf(path, sizeof path, "%s/raw-1-0.log", dir);
    CHECK(access(path, F_OK) == 0);
    for (int i = 1; i <= 3; i++) {
        snprintf(path, sizeof path, "%s/raw-%d-0.log", dir, i);
        remove(path);
    }
    rmdir(dir);
    remove(out);
    return tl_summary("trace_convert");
}
