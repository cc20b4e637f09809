/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/trace_format.c -- the trace file format of trace/trace.c (doc/traces.md).
 *
 * A hand-made two-stream trace (every op kind, alignments, a failed op, a realloc from an empty
 * slot) is saved and loaded back field for field; then the file is damaged in every way that is
 * cheap to enumerate -- truncated at every length, every byte replaced by several values with the
 * checksum recomputed (so the structural checks, not only the checksum, are exercised), a wrong
 * magic and version, an empty file -- and every load must either refuse with a message or return
 * a trace whose order is valid. Under ASan this also proves no read past the buffer.
 *
 * The loader's memory limit (trace.c's header): a trace loads with exactly the memory its
 * accounting says -- the streams (sizeof (tr_stream_t) each), every op (12 bytes) and one
 * stream's per-slot tables (5 bytes a slot) at a time, plus, from a file, its length and one byte
 * -- and one byte less is refused ("memory limit"); a file is not read past the limit (/dev/zero);
 * headers that claim more streams, ops or slots than the file holds are refused before anything
 * of that size is allocated; and a valid file of 300 live 4 GiB blocks loads in a few KiB (the
 * loader allocates by ops and slots, never by requested sizes). A memalign of 2^40 loads where
 * size_t has 64 bits and is refused with its reason where it has 32.
 *
 *   trace_format [DIR]                the tests (scratch files in DIR)
 *   trace_format --write-hostile DIR  writes the hostile files tests/tools/trace_limits.sh feeds rtbench:
 *                                     big.rtt (300 live mallocs of 4 GiB - 1), multi.rtt (a small
 *                                     stream, then big.rtt's), claim_ops.rtt (a stream that claims
 *                                     2^40 ops), claim_streams.rtt (2^32 streams), all checksummed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "trace.h"

/* testlib.h counts and prints; CHECK names the condition only. */
#define CHECK(cond) TL_CHECK(cond, "%s", "")

static wl_op_t ops0[] = {
    {0, 100, WL_MALLOC},
    {1, 24, WL_CALLOC},
    {2, 4096, WL_MEMALIGN | (12u << 8)},
    {3, 1u << 31, WL_MALLOC | WL_OP_FAILED},
    {0, 300, WL_REALLOC},
    {1, 0, WL_FREE},
    {1, 50, WL_REALLOC}, /* realloc(NULL, 50) */
    {0, 10, WL_REALLOC | WL_OP_FAILED},
    {0, 0, WL_FREE},
    {2, 0, WL_FREE},
    {0, 7, WL_MEMALIGN | (4u << 8)},
};
static wl_op_t ops1[] = {
    {1, 1, WL_MALLOC},
    {1, 0, WL_FREE},
};

static void make(tr_file_t *f, tr_stream_t st[2])
{
    memset(f, 0, sizeof *f);
    memset(st, 0, 2 * sizeof *st);
    snprintf(f->command, sizeof f->command, "prog --flag");
    st[0].pid = 1234;
    st[0].threads = 3;
    st[0].failed = 2;
    st[0].foreign = 5;
    snprintf(st[0].command, sizeof st[0].command, "prog --flag");
    snprintf(st[0].trace.name, sizeof st[0].trace.name, "prog");
    st[0].trace.ops = ops0;
    st[0].trace.nops = sizeof ops0 / sizeof ops0[0];
    st[0].trace.slots = 4;
    st[0].trace.nmalloc = 6;
    st[0].trace.nfree = 3;
    st[0].trace.peak_live = 4096 + 300 + 50; /* after op 6 */
    st[1].pid = 99;
    st[1].threads = 1;
    snprintf(st[1].command, sizeof st[1].command, "child");
    st[1].trace.ops = ops1;
    st[1].trace.nops = 2;
    st[1].trace.slots = 2;
    st[1].trace.nmalloc = 1;
    st[1].trace.nfree = 1;
    st[1].trace.peak_live = 1;
    f->nstreams = 2;
    f->streams = st;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        return NULL;
    }
    unsigned char *p = malloc(1u << 20);
    *len = p ? fread(p, 1, 1u << 20, in) : 0;
    fclose(in);
    return p;
}

static void spit(const char *path, const unsigned char *p, size_t len)
{
    FILE *out = fopen(path, "wb");
    if (out != NULL) {
        fwrite(p, 1, len, out);
        fclose(out);
    }
}

static void fix_checksum(unsigned char *p, size_t len)
{
    if (len < 8) {
        return;
    }
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i + 8 < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    for (size_t i = 0; i < 8; i++) {
        p[len - 8 + i] = (unsigned char)(h >> (8 * i));
    }
}

/* A loaded trace must be in a valid order (tr_load promises it): check it independently. */
static bool valid(const tr_file_t *f)
{
    for (size_t s = 0; s < f->nstreams; s++) {
        const wl_trace_t *t = &f->streams[s].trace;
        unsigned char *full = calloc(t->slots + 1u, 1);
        bool ok = full != NULL;
        for (size_t i = 0; ok && i < t->nops; i++) {
            const wl_op_t *op = &t->ops[i];
            ok = op->slot < t->slots;
            if (!ok || (op->kind & WL_OP_FAILED)) {
                continue;
            }
            switch (WL_OP_KIND(op)) {
            case WL_FREE:
                ok = full[op->slot];
                full[op->slot] = 0;
                break;
            case WL_REALLOC: full[op->slot] = 1; break;
            default:
                ok = !full[op->slot];
                full[op->slot] = 1;
                break;
            }
        }
        free(full);
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* Round trip: f (streams st) saved to path and loaded back equal, field for field and op for op. */
static void check_round_trip(const char *path, const tr_file_t *f, const tr_stream_t st[2])
{
    tr_file_t g;
    char err[256];
    CHECK(tr_save(path, f, err, sizeof err));
    CHECK(tr_load(path, &g, err, sizeof err));
    CHECK(g.nstreams == 2);
    if (g.nstreams == 2) {
        CHECK(strcmp(g.command, "prog --flag") == 0);
        for (size_t s = 0; s < 2; s++) {
            CHECK(g.streams[s].pid == st[s].pid && g.streams[s].threads == st[s].threads);
            CHECK(g.streams[s].failed == st[s].failed && g.streams[s].foreign == st[s].foreign);
            CHECK(strcmp(g.streams[s].command, st[s].command) == 0);
            CHECK(strcmp(g.streams[s].trace.name, st[s].trace.name) == 0);
            const wl_trace_t *a = &st[s].trace, *b = &g.streams[s].trace;
            CHECK(a->nops == b->nops && a->slots == b->slots && a->nmalloc == b->nmalloc && a->nfree == b->nfree &&
                  a->peak_live == b->peak_live);
            CHECK(memcmp(a->ops, b->ops, a->nops * sizeof *a->ops) == 0);
        }
        CHECK(WL_OP_ALIGN(&g.streams[0].trace.ops[2]) == 4096);
    }
    tr_release(&g);
}

/* Wrong counters and wrong orders are refused at save-load time; f is saved intact at the end. */
static void check_bad_streams(const char *path, const tr_file_t *f, tr_stream_t st[2])
{
    tr_file_t g;
    char err[256];
    st[0].trace.peak_live++;
    CHECK(tr_save(path, f, err, sizeof err));
    CHECK(!tr_load(path, &g, err, sizeof err) && strstr(err, "counters") != NULL);
    st[0].trace.peak_live--;
    wl_op_t dbl[] = {{0, 8, WL_MALLOC}, {0, 8, WL_MALLOC}};
    wl_trace_t keep = st[1].trace;
    st[1].trace.ops = dbl;
    st[1].trace.nops = 2;
    st[1].trace.slots = 1;
    st[1].trace.nmalloc = 2;
    st[1].trace.nfree = 0;
    st[1].trace.peak_live = 16;
    CHECK(tr_save(path, f, err, sizeof err));
    CHECK(!tr_load(path, &g, err, sizeof err) && strstr(err, "order") != NULL);
    st[1].trace = keep;
    CHECK(tr_save(path, f, err, sizeof err));
}

/* The file orig (len bytes) truncated at every length, written to bad: always refused. */
static void check_truncations(const char *bad, const unsigned char *orig, size_t len)
{
    tr_file_t g;
    char err[256];
    size_t refused = 0;
    for (size_t n = 0; n < len; n++) {
        spit(bad, orig, n);
        if (!tr_load(bad, &g, err, sizeof err)) {
            refused++;
        } else {
            tr_release(&g);
        }
    }
    CHECK(refused == len);
}

/* Every byte of orig replaced, checksum fixed: refused, or loaded in a valid order. */
static void check_corruptions(const char *bad, const unsigned char *orig, unsigned char *buf, size_t len)
{
    tr_file_t g;
    char err[256];
    static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
    size_t loads = 0, refusals = 0, invalid = 0;
    for (size_t i = 0; i + 8 < len; i++) {
        for (size_t v = 0; v < sizeof vals; v++) {
            memcpy(buf, orig, len);
            if (buf[i] == vals[v]) {
                continue;
            }
            buf[i] = vals[v];
            fix_checksum(buf, len);
            spit(bad, buf, len);
            if (tr_load(bad, &g, err, sizeof err)) {
                loads++;
                invalid += !valid(&g);
                tr_release(&g);
            } else {
                refusals++;
                invalid += err[0] == '\0';
            }
        }
    }
    CHECK(invalid == 0);
    CHECK(refusals > 0);
    printf("corruptions: %zu refused, %zu loaded (valid)\n", refusals, loads);
}

/* A flipped byte (checksum not fixed), a bad magic, a bad version, a missing file: refused. */
static void check_header_errors(const char *bad, const unsigned char *orig, unsigned char *buf, size_t len)
{
    tr_file_t g;
    char err[256];
    memcpy(buf, orig, len);
    buf[len / 2] ^= 0x10;
    spit(bad, buf, len);
    CHECK(!tr_load(bad, &g, err, sizeof err) && strstr(err, "checksum") != NULL);
    /* Magic, version, missing file. */
    memcpy(buf, orig, len);
    buf[0] = 'X';
    spit(bad, buf, len);
    CHECK(!tr_load(bad, &g, err, sizeof err) && strstr(err, "magic") != NULL);
    memcpy(buf, orig, len);
    buf[8] = 3; /* versions 1 and 2 are read */
    spit(bad, buf, len);
    CHECK(!tr_load(bad, &g, err, sizeof err) && strstr(err, "version") != NULL);
    CHECK(!tr_load("/nonexistent/trace.rtt", &g, err, sizeof err) && strstr(err, "cannot open") != NULL);
}

/* ---- the memory limit ------------------------------------------------------------------------ */

/* A byte buffer for hand-made files (headers that lie). */
typedef struct hbuf {
    unsigned char p[512];
    size_t n;
} hbuf_t;

static void h_byte(hbuf_t *b, unsigned v)
{
    if (b->n < sizeof b->p) {
        b->p[b->n++] = (unsigned char)v;
    }
}

static void h_varint(hbuf_t *b, uint64_t v)
{
    do {
        h_byte(b, (unsigned)(v & 0x7fu) | (v >= 0x80u ? 0x80u : 0u));
        v >>= 7;
    } while (v != 0);
}

/* Magic, version 1, nstreams, an empty command. */
static void h_header(hbuf_t *b, uint64_t nstreams)
{
    memcpy(b->p, "RTTRACE", 8);
    b->n = 8;
    h_byte(b, 1), h_byte(b, 0), h_byte(b, 0), h_byte(b, 0);
    h_varint(b, nstreams);
    h_varint(b, 0);
}

/* One stream whose header says slots, nops and ops_bytes, then `body` bytes of ops: malloc(1)
 * into slot 0 and its free, repeated (3 + 2 bytes a pair: two ops). */
static void h_stream(hbuf_t *b, uint64_t slots, uint64_t nops, uint64_t ops_bytes, size_t body)
{
    h_varint(b, 1), h_varint(b, 1), h_varint(b, 0), h_varint(b, 0); /* pid threads failed foreign */
    h_varint(b, slots), h_varint(b, nops);
    h_varint(b, body / 5u), h_varint(b, body / 5u), h_varint(b, body >= 5u ? 1u : 0u); /* counters */
    h_varint(b, 0), h_varint(b, 0), h_varint(b, 0);                                    /* command, name, params */
    h_varint(b, ops_bytes);
    for (size_t i = 0; i + 5 <= body; i += 5) {
        h_byte(b, WL_MALLOC), h_byte(b, 0), h_byte(b, 1); /* kind, slot delta 0, size 1 */
        h_byte(b, WL_FREE), h_byte(b, 0);
    }
}

/* Appends the checksum. */
static void h_finish(hbuf_t *b)
{
    uint64_t h = tr_checksum(b->p, b->n);
    for (size_t i = 0; i < 8; i++) {
        h_byte(b, (unsigned)(h >> (8 * i)) & 0xffu);
    }
}

/* 300 live mallocs of 4 GiB - 1 (sizes are 32-bit), slot i each, never freed: 1.17 TiB live.
 * ops: 300 entries. */
static void make_big(tr_file_t *f, tr_stream_t *st, wl_op_t *ops)
{
    memset(f, 0, sizeof *f);
    memset(st, 0, sizeof *st);
    snprintf(f->command, sizeof f->command, "hostile: 300 live 4 GiB mallocs");
    for (uint32_t i = 0; i < 300; i++) {
        ops[i] = (wl_op_t){i, UINT32_MAX, WL_MALLOC};
    }
    st->pid = 1;
    st->threads = 1;
    snprintf(st->command, sizeof st->command, "hostile");
    st->trace.ops = ops;
    st->trace.nops = 300;
    st->trace.slots = 300;
    st->trace.nmalloc = 300;
    st->trace.peak_live = 300u * (uint64_t)UINT32_MAX;
    f->streams = st;
    f->nstreams = 1;
}

/* The limit at the byte: parse of f's file at the accounted figure, and one byte below. */
static void check_limit_exact(const char *dir, const tr_file_t *f)
{
    unsigned char *data = NULL;
    size_t len = 0;
    CHECK(tr_encode(f, &data, &len));
    if (data == NULL) {
        return;
    }
    /* streams, then per stream its ops (kept, with their threads) and its tables (5 bytes a slot,
     * released) */
    uint64_t need = 0, held = f->nstreams * sizeof(tr_stream_t);
    for (size_t s = 0; s < f->nstreams; s++) {
        const wl_trace_t *t = &f->streams[s].trace;
        /* a stream of more than one thread keeps each op's thread too (4 bytes an op) */
        held += t->nops * (sizeof(wl_op_t) + (f->streams[s].threads > 1u ? sizeof(uint32_t) : 0u));
        need = held + 5u * t->slots > need ? held + 5u * t->slots : need;
    }
    tr_file_t g;
    char err[256];
    CHECK(tr_parse(data, len, need, &g, err, sizeof err));
    tr_release(&g);
    CHECK(!tr_parse(data, len, need - 1u, &g, err, sizeof err) && strstr(err, "memory limit") != NULL);
    CHECK(g.streams == NULL && g.nstreams == 0);
    /* from a file: its bytes and one more (the read that finds the end) count too */
    char path[4200];
    snprintf(path, sizeof path, "%s/trace_format_limit.rtt", dir);
    spit(path, data, len);
    CHECK(tr_load_max(path, need + len + 1u, &g, err, sizeof err));
    tr_release(&g);
    CHECK(!tr_load_max(path, need + len, &g, err, sizeof err) && strstr(err, "memory limit") != NULL);
    CHECK(!tr_load_max(path, len - 1u, &g, err, sizeof err) && strstr(err, "memory limit") != NULL);
    remove(path);
    free(data);
}

/* Headers that claim more than the file holds, a file without an end, and a valid file whose
 * requests are huge. */
static void check_limit_hostile(void)
{
    tr_file_t g;
    char err[256];
    hbuf_t b;
    h_header(&b, 1);
    h_stream(&b, 1, (uint64_t)1 << 40, 10, 10);
    h_finish(&b);
    CHECK(!tr_parse(b.p, b.n, UINT64_MAX, &g, err, sizeof err) && strstr(err, "more ops than the file") != NULL);
    h_header(&b, (uint64_t)1 << 32);
    h_stream(&b, 1, 2, 5, 5);
    h_finish(&b);
    CHECK(!tr_parse(b.p, b.n, UINT64_MAX, &g, err, sizeof err) && strstr(err, "more streams") != NULL);
    h_header(&b, 1);
    h_stream(&b, UINT32_MAX, 2, 5, 5);
    h_finish(&b);
    CHECK(!tr_parse(b.p, b.n, UINT64_MAX, &g, err, sizeof err) && strstr(err, "more slots than ops") != NULL);
    /* 100 ops claimed, the file long enough for them, but the stream's ops_bytes holds 5 bytes */
    h_header(&b, 1);
    h_stream(&b, 1, 100, 5, 400);
    h_finish(&b);
    CHECK(!tr_parse(b.p, b.n, UINT64_MAX, &g, err, sizeof err) && strstr(err, "stream's bytes") != NULL);
    /* the hand-made builder itself is right: the same stream with honest figures loads */
    h_header(&b, 1);
    h_stream(&b, 1, 160, 400, 400);
    h_finish(&b);
    bool honest = tr_parse(b.p, b.n, UINT64_MAX, &g, err, sizeof err);
    CHECK(honest && g.nstreams == 1 && g.streams[0].trace.nops == 160);
    if (!honest) {
        fprintf(stderr, "honest hand-made file refused: %s\n", err);
    }
    tr_release(&g);
    /* a file that never ends is read up to the limit, not further */
    CHECK(!tr_load_max("/dev/zero", (uint64_t)1 << 20, &g, err, sizeof err) && strstr(err, "memory limit") != NULL);
    /* 300 live 4 GiB blocks: a valid file; the loader holds its ops, not its requests */
    tr_file_t f;
    tr_stream_t st;
    static wl_op_t ops[300];
    make_big(&f, &st, ops);
    unsigned char *data = NULL;
    size_t len = 0;
    CHECK(tr_encode(&f, &data, &len));
    CHECK(data != NULL && tr_parse(data, len, 16384, &g, err, sizeof err) && g.nstreams == 1 &&
          g.streams[0].trace.peak_live == 300u * (uint64_t)UINT32_MAX);
    tr_release(&g);
    free(data);
}

/* A memalign of 2^40 (flagged failed, as a 64-bit recording has it): loads where size_t holds the
 * alignment, and is refused with the reason where it does not (WL_OP_ALIGN would shift by the
 * width of size_t). */
static void check_wide_alignment(void)
{
    static wl_op_t ops[] = {{0, 64, WL_MEMALIGN | (40u << 8) | WL_OP_FAILED}, {0, 8, WL_MALLOC}, {0, 0, WL_FREE}};
    tr_stream_t st;
    tr_file_t f;
    memset(&st, 0, sizeof st);
    memset(&f, 0, sizeof f);
    st.trace.ops = ops;
    st.trace.nops = 3;
    st.trace.slots = 1;
    st.trace.nmalloc = 1;
    st.trace.nfree = 1;
    st.trace.peak_live = 8;
    f.streams = &st;
    f.nstreams = 1;
    unsigned char *data = NULL;
    size_t len = 0;
    CHECK(tr_encode(&f, &data, &len));
    tr_file_t g;
    char err[256];
    bool ok = data != NULL && tr_parse(data, len, UINT64_MAX, &g, err, sizeof err);
    if (sizeof(size_t) >= 8) {
        CHECK(ok && WL_OP_ALIGN(&g.streams[0].trace.ops[0]) == (size_t)1 << (sizeof(size_t) >= 8 ? 40 : 0));
        tr_release(&g);
    } else {
        CHECK(!ok && strstr(err, "beyond this machine's size_t") != NULL);
    }
    free(data);
}

/* The files tests/tools/trace_limits.sh gives rtbench (trace_format's header). */
static int write_hostile(const char *dir)
{
    char path[4200], err[256];
    bool ok = true;
    tr_file_t f;
    tr_stream_t st[2];
    static wl_op_t ops[300];
    make_big(&f, &st[0], ops);
    snprintf(path, sizeof path, "%s/big.rtt", dir);
    ok = ok && tr_save(path, &f, err, sizeof err);
    static wl_op_t small[] = {{0, 64, WL_MALLOC}, {0, 0, WL_FREE}};
    st[1] = st[0];
    memset(&st[0], 0, sizeof st[0]);
    st[0].pid = 2;
    st[0].threads = 1;
    snprintf(st[0].command, sizeof st[0].command, "small");
    st[0].trace.ops = small;
    st[0].trace.nops = 2;
    st[0].trace.slots = 1;
    st[0].trace.nmalloc = 1;
    st[0].trace.nfree = 1;
    st[0].trace.peak_live = 64;
    f.nstreams = 2;
    f.streams = st;
    snprintf(path, sizeof path, "%s/multi.rtt", dir);
    ok = ok && tr_save(path, &f, err, sizeof err);
    hbuf_t b;
    h_header(&b, 1);
    h_stream(&b, 1, (uint64_t)1 << 40, 10, 10);
    h_finish(&b);
    snprintf(path, sizeof path, "%s/claim_ops.rtt", dir);
    spit(path, b.p, b.n);
    h_header(&b, (uint64_t)1 << 32);
    h_stream(&b, 1, 2, 5, 5);
    h_finish(&b);
    snprintf(path, sizeof path, "%s/claim_streams.rtt", dir);
    spit(path, b.p, b.n);
    if (!ok) {
        fprintf(stderr, "trace_format --write-hostile: %s\n", err);
    }
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-hostile") == 0) {
        return write_hostile(argv[2]);
    }
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096], bad[4096];
    snprintf(path, sizeof path, "%s/trace_format.rtt", dir);
    snprintf(bad, sizeof bad, "%s/trace_format_bad.rtt", dir);
    tr_file_t f;
    tr_stream_t st[2];
    make(&f, st);
    check_round_trip(path, &f, st);
    check_bad_streams(path, &f, st);

    size_t len = 0;
    unsigned char *orig = slurp(path, &len);
    CHECK(orig != NULL && len > 20);
    if (orig == NULL) {
        return 1;
    }
    unsigned char *buf = malloc(len);
    check_truncations(bad, orig, len);
    check_corruptions(bad, orig, buf, len);
    check_header_errors(bad, orig, buf, len);
    check_limit_exact(dir, &f);
    check_limit_hostile();
    check_wide_alignment();

    free(buf);
    free(orig);
    remove(path);
    remove(bad);
    return tl_summary("trace_format");
}
