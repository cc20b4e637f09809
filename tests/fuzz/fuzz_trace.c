/* SPDX-License-Identifier: MIT */
/*
 * fuzz_trace.c -- libFuzzer harness of the trace loader and the replayer (trace/trace.c,
 * trace/replay.c): arbitrary bytes as a trace file, and every trace that loads replayed.
 *
 * Input, two kinds:
 *   - a trace file (it starts with the magic "RTTRACE"; the format at the top of
 *     trace/trace.c). Its last 8 bytes are replaced by the checksum of the bytes before
 *     them, so that a mutation reaches the structural checks rather than stopping at the checksum
 *     (tests/unit/trace_format.c covers the checksum itself). This drives the loader's refusals: a
 *     mutated op rarely keeps the stream's counters right, so few such inputs load.
 *   - anything else: a program that builds a valid trace (gen_trace below: four bytes an op, up
 *     to 4 streams, every kind, flagged failures, sizes up to 4 GiB - 1, alignments up to 2^63
 *     (2^31 where size_t has 32 bits: the loader refuses more there)),
 *     which is encoded (tr_encode) and must load back. This drives the replayer.
 *
 * Each run, checked (a failure prints what and aborts):
 *   1. tr_parse under a limit of FZ_LOAD_LIMIT bytes. Refused: a reason is given and nothing is
 *      left in the tr_file_t; refused for the limit alone: loaded again without a limit. Loaded
 *      under the limit: what the loader's accounting (trace.c's header) says it held is within it.
 *   2. Every stream checked independently of the loader: slots in range, kinds and flags known,
 *      the single-threaded order, and the counters (nmalloc, nfree, peak_live) equal to the ops;
 *      rp_peak_live agrees.
 *   3. Round trip: tr_encode of the loaded trace parses back to a trace that encodes to the same
 *      bytes, op for op and string for string the same.
 *   4. rp_need: the heap is a multiple of 1 MiB, at least 64 MiB and 8 x the live peak; replay and
 *      size at least 2 and 4 x the heap, a system peer never lowering it; `largest` is the largest
 *      op's size. (What `trace replay|size` compare with --max-memory.)
 *   5. The first FZ_STREAMS streams replayed on tlsf and on one more registry allocator (the first
 *      stream's pid picks it) over a buffer of FZ_HEAP bytes -- the small memory limit: rp_fits
 *      (its failing op is an op of the stream), rp_size (the answer within the buffer, above the
 *      size found not to fit; replaying at it gives the same verdict twice), rp_bound (at least
 *      the live peak), rp_frag, and rp_time's untimed loop on both.
 * Plus whatever AddressSanitizer and UndefinedBehaviorSanitizer see.
 *
 * Built two ways (tests/fuzz/CMakeLists.txt): with -fsanitize=fuzzer, and with RTFUZZ_MAIN as a
 * plain program, `fuzz_trace_replay [-v] FILE|DIR...` (replays inputs, the same checks),
 * `fuzz_trace_replay --write-seeds DIR` (writes the seed corpus, corpus_trace/) and
 * `--check-seeds DIR`. RTFUZZ_VERBOSE=1 says what each input loaded and how it replayed.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "trace.h"

enum {
    FZ_LOAD_LIMIT = 16u << 10, /* the loader's limit in the first load */
    FZ_HEAP = 256u << 10,      /* the replay buffer: the replays' memory limit */
    FZ_STREAMS = 4,            /* streams replayed per input */
};

_Alignas(4096) static unsigned char fz_heap[FZ_HEAP];
static bool fz_verbose;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
static void
fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_trace: FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

#define FZ_CHECK(cond, ...)       \
    do {                          \
        if (!(cond)) {            \
            fz_fail(__VA_ARGS__); \
        }                         \
    } while (0)

/* 2. The stream checked without the loader's code: slots, kinds, order, counters. */
static void check_stream(const tr_stream_t *st, size_t si)
{
    const wl_trace_t *t = &st->trace;
    FZ_CHECK(t->slots <= t->nops, "stream %zu: %u slots for %zu ops", si, (unsigned)t->slots, t->nops);
    unsigned char *full = calloc((size_t)t->slots + 1u, 1);
    uint32_t *size = calloc((size_t)t->slots + 1u, sizeof *size);
    FZ_CHECK(full != NULL && size != NULL, "out of memory");
    uint64_t live = 0, peak = 0;
    size_t nmalloc = 0, nfree = 0;
    for (size_t i = 0; i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        wl_kind_t k = WL_OP_KIND(op);
        bool failed = (op->kind & WL_OP_FAILED) != 0u;
        unsigned lg = (op->kind >> 8) & 0xffu;
        FZ_CHECK(op->slot < t->slots, "stream %zu op %zu: slot %u of %u", si, i, (unsigned)op->slot,
                 (unsigned)t->slots);
        FZ_CHECK(k <= WL_MEMALIGN && (op->kind & ~(0xffffu | WL_OP_FAILED)) == 0u && (k == WL_MEMALIGN || lg == 0u) &&
                     lg < sizeof(size_t) * CHAR_BIT,
                 "stream %zu op %zu: kind word 0x%x", si, i, (unsigned)op->kind);
        if (k == WL_FREE) {
            FZ_CHECK(!failed && full[op->slot] && op->size == 0u, "stream %zu op %zu: a bad free", si, i);
            live -= size[op->slot];
            full[op->slot] = 0;
            size[op->slot] = 0;
            nfree++;
            continue;
        }
        FZ_CHECK(k == WL_REALLOC || !full[op->slot], "stream %zu op %zu: an allocation into a full slot", si, i);
        if (failed) {
            continue;
        }
        live = live - size[op->slot] + op->size;
        size[op->slot] = op->size;
        full[op->slot] = 1;
        peak = live > peak ? live : peak;
        nmalloc++;
    }
    free(full);
    free(size);
    FZ_CHECK(nmalloc == t->nmalloc && nfree == t->nfree && peak == t->peak_live,
             "stream %zu: counters %zu/%zu/%llu, the ops say %zu/%zu/%llu", si, t->nmalloc, t->nfree,
             (unsigned long long)t->peak_live, nmalloc, nfree, (unsigned long long)peak);
    FZ_CHECK(rp_peak_live(t) == peak, "stream %zu: rp_peak_live %llu, the ops say %llu", si,
             (unsigned long long)rp_peak_live(t), (unsigned long long)peak);
}

/* 1. What the loader's accounting says it held at most: the streams, every op, and the largest
 * per-slot tables of one stream beside the ops before it (trace.c). */
static uint64_t accounted(const tr_file_t *f)
{
    uint64_t held = (uint64_t)(f->nstreams ? f->nstreams : 1u) * sizeof(tr_stream_t), most = held;
    for (size_t s = 0; s < f->nstreams; s++) {
        const wl_trace_t *t = &f->streams[s].trace;
        held += (uint64_t)(t->nops ? t->nops : 1u) * sizeof(wl_op_t);
        uint64_t with = held + (uint64_t)(t->slots ? t->slots : 1u) * 5u;
        most = with > most ? with : most;
    }
    return most;
}

/* 3. Encode, parse back, encode again: the same bytes and the same trace. */
static void check_round_trip(const tr_file_t *f)
{
    unsigned char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (!tr_encode(f, &a, &na)) {
        return; /* out of memory: nothing to check */
    }
    tr_file_t g;
    char err[256];
    FZ_CHECK(tr_parse(a, na, UINT64_MAX, &g, err, sizeof err), "a loaded trace, encoded, does not load: %s", err);
    FZ_CHECK(g.nstreams == f->nstreams && strcmp(g.command, f->command) == 0, "round trip: streams or command");
    for (size_t s = 0; s < f->nstreams; s++) {
        const tr_stream_t *x = &f->streams[s], *y = &g.streams[s];
        FZ_CHECK(x->pid == y->pid && x->threads == y->threads && x->failed == y->failed && x->foreign == y->foreign &&
                     strcmp(x->command, y->command) == 0 && strcmp(x->trace.name, y->trace.name) == 0 &&
                     strcmp(x->trace.params, y->trace.params) == 0,
                 "round trip: stream %zu's header", s);
        FZ_CHECK(x->trace.nops == y->trace.nops && x->trace.slots == y->trace.slots &&
                     (x->trace.nops == 0u || memcmp(x->trace.ops, y->trace.ops, x->trace.nops * sizeof(wl_op_t)) == 0),
                 "round trip: stream %zu's ops", s);
    }
    FZ_CHECK(tr_encode(&g, &b, &nb) || b == NULL, "encode");
    FZ_CHECK(b == NULL || (na == nb && memcmp(a, b, na) == 0), "round trip: the second encoding differs");
    tr_release(&g);
    free(a);
    free(b);
}

/* 4. rp_need's figures. */
static void check_need(const wl_trace_t *t, size_t si)
{
    const uint64_t mib = (uint64_t)1 << 20;
    rp_need_t n, p;
    rp_need(t, false, &n);
    rp_need(t, true, &p);
    uint32_t largest = 0;
    for (size_t i = 0; i < t->nops; i++) {
        largest = t->ops[i].size > largest ? t->ops[i].size : largest;
    }
    FZ_CHECK(n.peak == t->peak_live && n.largest == largest, "stream %zu: need's peak or largest", si);
    FZ_CHECK(n.heap % mib == 0u && n.heap >= 64u * mib && (n.heap / 8u >= n.peak || n.heap > UINT64_MAX - mib),
             "stream %zu: heap %llu for live peak %llu", si, (unsigned long long)n.heap, (unsigned long long)n.peak);
    FZ_CHECK(n.replay / 2u >= n.heap && n.size / 4u >= n.heap && p.replay >= n.replay && p.size == n.size &&
                 n.size >= n.replay,
             "stream %zu: replay %llu (%llu with a peer), size %llu, heap %llu", si, (unsigned long long)n.replay,
             (unsigned long long)p.replay, (unsigned long long)n.size, (unsigned long long)n.heap);
}

/* 5. One stream on allocator a over the small buffer. */
static void replay_on(const rt_allocator_t *a, const wl_trace_t *t, size_t si)
{
    size_t fail_op = 0;
    bool fits = rp_fits(a, fz_heap, FZ_HEAP, t, &fail_op);
    FZ_CHECK(fits || fail_op == SIZE_MAX || fail_op < t->nops, "stream %zu %s: failing op %zu of %zu", si, a->name,
             fail_op, t->nops);
    rp_size_opts_t opts = {4096u, 0.01, FZ_HEAP, 1u, NULL, NULL};
    rp_size_t sz;
    rp_size(a, fz_heap, t, &opts, &sz);
    FZ_CHECK(!sz.found || (sz.heap <= FZ_HEAP && sz.below < sz.heap), "stream %zu %s: size %zu, below %zu", si, a->name,
             sz.heap, sz.below);
    FZ_CHECK(!fits || sz.found, "stream %zu %s: fits in the buffer but no size found", si, a->name);
    if (sz.found) {
        bool again = rp_fits(a, fz_heap, sz.heap, t, NULL);
        FZ_CHECK(again == sz.verified, "stream %zu %s: at %zu bytes fits %d, then %d", si, a->name, sz.heap,
                 (int)sz.verified, (int)again);
    }
    double bound = 0.0;
    char formula[160];
    if (rp_bound(a, t, &bound, formula, sizeof formula)) {
        FZ_CHECK(bound >= (double)t->peak_live, "stream %zu %s: bound %.0f below the live peak %llu", si, a->name,
                 bound, (unsigned long long)t->peak_live);
    }
    rp_replay_t r;
    memset(&r, 0, sizeof r);
    rp_frag(a, &sz, t, &r);
    FZ_CHECK(!r.f_known || r.f >= -100.0, "stream %zu %s: F %.1f", si, a->name, r.f);
    if (fz_verbose) {
        fprintf(stderr, "  stream %zu on %s: fits %d, size %s %zu (verified %d), F %s %.1f\n", si, a->name, (int)fits,
                sz.found ? "found" : "none", sz.heap, (int)sz.verified, r.f_known ? "" : "unknown", r.f);
    }
}

/* ---- generator mode ---------------------------------------------------------------------------- */

enum { GEN_STREAMS = 4, GEN_SLOTS = 32 };

/* A request size from 16 input bits: bits 14-15 pick 0..1023, up to 256 KiB in steps of 16, up
 * to 4 GiB in steps of 256 KiB, or a boundary. */
static uint32_t gen_size(unsigned v)
{
    static const uint32_t edge[8] = {0, 1, 1u << 31, UINT32_MAX, UINT32_MAX - 15u, 1u << 20, FZ_HEAP, FZ_HEAP - 64u};
    unsigned x = v & 0x3fffu;
    switch (v >> 14) {
    case 0: return x & 1023u;
    case 1: return (uint32_t)x << 4;
    case 2: return (uint32_t)x << 18;
    default: return edge[x % 8u];
    }
}

/* Builds a valid trace into f (its streams and ops malloc'ed: tr_release frees them) from the
 * bytes, four an op: b0 bits 0-2 the kind (malloc, free, realloc, calloc, memalign, then malloc,
 * realloc and memalign flagged WL_OP_FAILED), bits 3-4 the stream, bits 5-7 and b1 bits 5-7 the
 * alignment (memalign: log2 = 4 + (b0 >> 5) + 8 (b1 >> 5), at most 63, 31 on 32-bit); b1 bits 0-4 the slot
 * (modulo the stream's ops so far + 1, so that slots <= ops); b2, b3 the size (gen_size). What
 * would break the order is adjusted: a free of an empty slot is dropped, an allocation into a full
 * slot becomes a realloc. The last byte gives the first stream's pid. False when out of memory. */
static bool gen_trace(const uint8_t *data, size_t size, tr_file_t *f)
{
    memset(f, 0, sizeof *f);
    size_t cap = size / 4u + 1u;
    f->streams = calloc(GEN_STREAMS, sizeof *f->streams);
    if (f->streams == NULL) {
        return false;
    }
    f->nstreams = GEN_STREAMS; /* cut to the streams used below */
    snprintf(f->command, sizeof f->command, "generated");
    uint8_t full[GEN_STREAMS][GEN_SLOTS] = {{0}};
    size_t used = 1;
    for (size_t s = 0; s < GEN_STREAMS; s++) {
        f->streams[s].trace.ops = malloc(cap * sizeof(wl_op_t));
        if (f->streams[s].trace.ops == NULL) {
            tr_release(f);
            return false;
        }
        f->streams[s].pid = (uint32_t)(size != 0u ? data[size - 1u] : 0u) + (uint32_t)s;
        f->streams[s].threads = 1;
    }
    for (size_t i = 0; i + 4u <= size; i += 4u) {
        unsigned b0 = data[i], b1 = data[i + 1u];
        size_t s = (b0 >> 3) & 3u;
        wl_trace_t *t = &f->streams[s].trace;
        uint32_t slot = (uint32_t)((b1 & 31u) % (t->nops + 1u < GEN_SLOTS ? t->nops + 1u : GEN_SLOTS));
        uint32_t sz = gen_size((unsigned)data[i + 2u] << 8 | data[i + 3u]);
        unsigned lg = 4u + (b0 >> 5) + 8u * (b1 >> 5);
        static const uint32_t kinds[8] = {WL_MALLOC,
                                          WL_FREE,
                                          WL_REALLOC,
                                          WL_CALLOC,
                                          WL_MEMALIGN,
                                          WL_MALLOC | WL_OP_FAILED,
                                          WL_REALLOC | WL_OP_FAILED,
                                          WL_MEMALIGN | WL_OP_FAILED};
        uint32_t kind = kinds[b0 & 7u];
        if ((kind & 0xffu) == WL_MEMALIGN) {
            unsigned most = (unsigned)(sizeof(size_t) * CHAR_BIT) - 1u; /* 63, or 31 on 32-bit */
            kind |= (lg > most ? most : lg) << 8;
        }
        bool is_full = full[s][slot] != 0u;
        if ((kind & 0xffu) == WL_FREE) {
            if (!is_full) {
                continue;
            }
            sz = 0;
        } else if ((kind & 0xffu) != WL_REALLOC && is_full) {
            kind = WL_REALLOC | (kind & WL_OP_FAILED);
        }
        if ((kind & WL_OP_FAILED) == 0u) {
            full[s][slot] = (kind & 0xffu) != WL_FREE;
        }
        t->ops[t->nops++] = (wl_op_t){slot, sz, kind};
        used = s + 1u > used ? s + 1u : used;
    }
    for (size_t s = 0; s < GEN_STREAMS; s++) {
        wl_trace_t *t = &f->streams[s].trace;
        uint32_t slots = 0;
        for (size_t i = 0; i < t->nops; i++) {
            slots = t->ops[i].slot + 1u > slots ? t->ops[i].slot + 1u : slots;
            f->streams[s].failed += (t->ops[i].kind & WL_OP_FAILED) != 0u;
        }
        t->slots = slots;
        rp_finish_trace(t);
    }
    for (size_t s = used; s < GEN_STREAMS; s++) {
        free(f->streams[s].trace.ops);
        f->streams[s].trace.ops = NULL;
    }
    f->nstreams = used;
    return true;
}

/* ---- one input ---------------------------------------------------------------------------------- */

/* A trace file as it is, its checksum fixed: loaded (true, into f) or refused. */
static bool load_file(const uint8_t *data, size_t size, tr_file_t *f)
{
    static unsigned char buf[1u << 16];
    unsigned char *copy = size <= sizeof buf ? buf : malloc(size);
    FZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, data, size);
    if (size >= 20u) {
        uint64_t h = tr_checksum(copy, size - 8u);
        for (size_t i = 0; i < 8; i++) {
            copy[size - 8u + i] = (unsigned char)(h >> (8 * i));
        }
    }
    char err[256];
    err[0] = '\0';
    bool ok = tr_parse(copy, size, FZ_LOAD_LIMIT, f, err, sizeof err);
    if (ok) {
        FZ_CHECK(accounted(f) <= FZ_LOAD_LIMIT, "loaded under a %u-byte limit, accounted %llu", (unsigned)FZ_LOAD_LIMIT,
                 (unsigned long long)accounted(f));
    } else {
        FZ_CHECK(err[0] != '\0' && f->streams == NULL && f->nstreams == 0u,
                 "a refusal without a reason or with streams");
        if (strstr(err, "memory limit") != NULL) {
            ok = tr_parse(copy, size, UINT64_MAX, f, err, sizeof err);
        }
    }
    if (fz_verbose) {
        if (ok) {
            fprintf(stderr, "loaded: %zu streams\n", f->nstreams);
        } else {
            fprintf(stderr, "refused: %s\n", err);
        }
    }
    if (copy != buf) {
        free(copy);
    }
    return ok;
}

/* The generator's trace, encoded and loaded back (it must load). False when out of memory. */
static bool load_generated(const uint8_t *data, size_t size, tr_file_t *f)
{
    tr_file_t g;
    if (!gen_trace(data, size, &g)) {
        return false;
    }
    unsigned char *p = NULL;
    size_t n = 0;
    bool enc = tr_encode(&g, &p, &n);
    tr_release(&g);
    if (!enc) {
        return false;
    }
    char err[256];
    bool ok = tr_parse(p, n, UINT64_MAX, f, err, sizeof err);
    free(p);
    FZ_CHECK(ok, "a generated trace does not load: %s", err);
    if (fz_verbose) {
        fprintf(stderr, "generated: %zu streams\n", f->nstreams);
    }
    return true;
}

static void run(const uint8_t *data, size_t size)
{
    tr_file_t f;
    bool file = size >= 7u && memcmp(data, "RTTRACE", 7) == 0;
    if (!(file ? load_file(data, size, &f) : load_generated(data, size, &f))) {
        return;
    }
    for (size_t s = 0; s < f.nstreams; s++) {
        check_stream(&f.streams[s], s);
        check_need(&f.streams[s].trace, s);
    }
    check_round_trip(&f);
    size_t nreg = 0;
    const rt_allocator_t *const *reg = rt_registry(&nreg);
    const rt_allocator_t *pair[2] = {rt_registry_find("tlsf"), NULL};
    FZ_CHECK(pair[0] != NULL && nreg > 0u, "no tlsf in the registry");
    pair[1] = f.nstreams != 0u ? reg[f.streams[0].pid % nreg] : pair[0];
    for (size_t s = 0; s < f.nstreams && s < FZ_STREAMS; s++) {
        const wl_trace_t *t = &f.streams[s].trace;
        if (t->nops == 0u) {
            continue;
        }
        for (size_t k = 0; k < 2u; k++) {
            if (pair[k]->create != NULL && (k == 0u || pair[1] != pair[0])) {
                replay_on(pair[k], t, s);
            }
        }
        double ns[2];
        size_t failures[2];
        rp_time(pair, 2u, fz_heap, FZ_HEAP, t, 1u, ns, failures, NULL, NULL);
    }
    tr_release(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool init;
    if (!init) {
        const char *v = getenv("RTFUZZ_VERBOSE");
        fz_verbose = v != NULL && v[0] == '1';
        init = true;
    }
    run(data, size);
    return 0;
}

#ifdef RTFUZZ_MAIN
/* ---- the plain program: replays, and the seed corpus ------------------------------------------ */
#include <dirent.h>
#include <sys/stat.h>

/* The seed traces: small valid files of every op kind, stream count and edge the format has. */
static const wl_op_t seed_every_kind[] = {
    {0, 100, WL_MALLOC},
    {0, 300, WL_REALLOC},
    {1, 50, WL_CALLOC},
    {2, 200, WL_MEMALIGN | (6u << 8)},
    {3, 3u << 30, WL_MALLOC | WL_OP_FAILED},
    {1, 0, WL_FREE},
    {1, 70, WL_REALLOC}, /* realloc(NULL, 70) */
    {0, 10, WL_REALLOC | WL_OP_FAILED},
    {0, 0, WL_FREE},
    {2, 0, WL_FREE},
    {1, 0, WL_FREE},
};
static const wl_op_t seed_huge[] = {
    {0, UINT32_MAX, WL_MALLOC},
    {1, UINT32_MAX, WL_CALLOC},
    {2, 1u << 31, WL_REALLOC},
    {3, 64, WL_MEMALIGN | (40u << 8) | WL_OP_FAILED}, /* an alignment of 2^40 that got nothing */
    {1, 0, WL_FREE},
};
static const wl_op_t seed_small[] = {
    {0, 24, WL_MALLOC},
    {0, 0, WL_FREE},
};

/* One stream over ops[0..n) into st, its counters filled as the loader checks them. */
static void seed_stream(tr_stream_t *st, const wl_op_t *ops, size_t n, uint32_t slots, uint32_t pid, const char *cmd)
{
    memset(st, 0, sizeof *st);
    st->pid = pid;
    st->threads = 1;
    snprintf(st->command, sizeof st->command, "%s", cmd);
    snprintf(st->trace.name, sizeof st->trace.name, "%s", cmd);
    st->trace.ops = (wl_op_t *)(uintptr_t)ops; /* tr_encode only reads them */
    st->trace.nops = n;
    st->trace.slots = slots;
    rp_finish_trace(&st->trace);
    for (size_t i = 0; i < n; i++) {
        st->failed += (ops[i].kind & WL_OP_FAILED) != 0u;
    }
}

/* Generator-mode seed bytes (gen_trace): n ops from a xorshift of seed, the first byte not 'R'. */
static bool gen_seed(uint64_t seed, size_t n, bool edges, unsigned char **out, size_t *len)
{
    unsigned char *p = malloc(4u * n);
    if (p == NULL) {
        return false;
    }
    uint64_t x = seed;
    for (size_t i = 0; i < 4u * n; i += 4u) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (unsigned char)(x & 0xffu);
        p[i + 1u] = (unsigned char)((x >> 8) & 0xffu);
        /* sizes: tiny and small mostly, or boundaries */
        p[i + 2u] = (unsigned char)(edges ? 0xc0u : ((x >> 16) & 0x40u));
        p[i + 3u] = (unsigned char)((x >> 24) & 0xffu);
    }
    p[0] = 0; /* a malloc, and not the magic */
    *out = p;
    *len = 4u * n;
    return true;
}

/* Seed k (0 .. FZ_SEEDS-1) encoded into *out; its name in *name. False when there is none. */
enum { FZ_SEEDS = 8 };
static bool make_seed(unsigned k, unsigned char **out, size_t *len, const char **name)
{
    tr_file_t f;
    tr_stream_t st[2];
    memset(&f, 0, sizeof f);
    f.streams = st;
    snprintf(f.command, sizeof f.command, "seed");
    tr_file_t synth;
    bool have_synth = false;
    switch (k) {
    /* the first stream's pid picks the allocator beside tlsf: registry index pid % count (6 buddy,
     * 7 wf, 14 fma, 17 tlsfq in the registry of src/registry/registry.c when this was written) */
    case 0: /* every kind */
        *name = "trace-every-kind";
        seed_stream(&st[0], seed_every_kind, sizeof seed_every_kind / sizeof seed_every_kind[0], 4, 6, "kinds");
        f.nstreams = 1;
        break;
    case 1: /* two streams */
        *name = "trace-two-streams";
        seed_stream(&st[0], seed_small, 2, 1, 7, "parent");
        seed_stream(&st[1], seed_every_kind, sizeof seed_every_kind / sizeof seed_every_kind[0], 4, 8, "child");
        f.nstreams = 2;
        break;
    case 2: /* requests of 2 and 4 GiB, an alignment of 2^40: nothing of them fits */
        *name = "trace-huge-requests";
        seed_stream(&st[0], seed_huge, sizeof seed_huge / sizeof seed_huge[0], 4, 14, "huge");
        f.nstreams = 1;
        break;
    case 3: /* a stream without ops */
        *name = "trace-empty-stream";
        seed_stream(&st[0], seed_small, 0, 0, 1, "empty");
        f.nstreams = 1;
        break;
    case 4: /* a file without streams */
        *name = "trace-no-streams";
        f.nstreams = 0;
        break;
    case 5: /* realloc-heavy: tests/unit/trace_replay.c's synthetic trace, 150 ops */
        *name = "trace-synthetic";
        if (!rp_synth(&synth, 7, 150, 12)) {
            return false;
        }
        synth.streams[0].pid = 17;
        have_synth = true;
        break;
    case 6: /* generator mode: 200 ops over 4 streams, sizes up to 256 KiB */
        *name = "gen-mixed";
        return gen_seed(7, 200, false, out, len);
    case 7: /* generator mode: boundary sizes (0, 1, 2 GiB, 4 GiB - 1, 1 MiB, the buffer) */
        *name = "gen-boundaries";
        return gen_seed(11, 60, true, out, len);
    default: return false;
    }
    bool ok = tr_encode(have_synth ? &synth : &f, out, len);
    if (have_synth) {
        tr_release(&synth);
    }
    return ok;
}

static int write_seeds(const char *dir, bool compare)
{
    int bad = 0;
    for (unsigned k = 0; k < FZ_SEEDS; k++) {
        unsigned char *p = NULL;
        size_t n = 0;
        const char *name = "";
        char path[4200];
        if (!make_seed(k, &p, &n, &name)) {
            fprintf(stderr, "fuzz_trace_replay: seed %u: out of memory\n", k);
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *fp = fopen(path, compare ? "rb" : "wb");
        if (compare) {
            static unsigned char got[1u << 16];
            size_t len = fp != NULL ? fread(got, 1, sizeof got, fp) : 0u;
            if (fp == NULL || len != n || memcmp(got, p, n) != 0) {
                fprintf(stderr, "fuzz_trace_replay: %s %s\n", path, fp == NULL ? "missing" : "differs");
                bad = 1;
            }
        } else if (fp == NULL || fwrite(p, 1, n, fp) != n) {
            fprintf(stderr, "fuzz_trace_replay: cannot write %s\n", path);
            bad = 1;
        }
        if (fp != NULL) {
            fclose(fp);
        }
        free(p);
    }
    printf("%s %u seeds %s %s\n", compare ? "compared" : "wrote", (unsigned)FZ_SEEDS, compare ? "with" : "to", dir);
    return bad;
}

static unsigned long replayed;

static int replay_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "fuzz_trace_replay: no such file or directory: %s\n", path);
        return 1;
    }
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d == NULL) {
            return 1;
        }
        int bad = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] != '.') {
                char sub[4200];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                bad |= replay_path(sub);
            }
        }
        closedir(d);
        return bad;
    }
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        return 1;
    }
    static unsigned char data[1u << 20];
    size_t len = fread(data, 1, sizeof data, fp);
    fclose(fp);
    if (fz_verbose) {
        fprintf(stderr, "%s (%zu bytes): ", path, len);
    }
    run(data, len);
    replayed++;
    return 0;
}

int main(int argc, char **argv)
{
    const char *v = getenv("RTFUZZ_VERBOSE");
    fz_verbose = v != NULL && v[0] == '1';
    int bad = 0, paths = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) {
            fz_verbose = true;
        } else if ((strcmp(argv[i], "--write-seeds") == 0 || strcmp(argv[i], "--check-seeds") == 0) && i + 1 < argc) {
            bad |= write_seeds(argv[i + 1], strcmp(argv[i], "--check-seeds") == 0);
            i++;
            paths++;
        } else {
            bad |= replay_path(argv[i]);
            paths++;
        }
    }
    if (paths == 0) {
        fprintf(stderr, "usage: fuzz_trace_replay [-v] FILE|DIR...   replay inputs (abort on a failure)\n"
                        "       fuzz_trace_replay --write-seeds DIR   write the seed corpus\n"
                        "       fuzz_trace_replay --check-seeds DIR   compare DIR with it\n");
        return 2;
    }
    if (replayed != 0u) {
        printf("replayed %lu inputs: no failure\n", replayed);
    }
    return bad;
}
#endif
