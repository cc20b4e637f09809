/* SPDX-License-Identifier: MIT */
/*
 * trace/trace.c -- the trace file: save, load and check (doc/traces.md).
 *
 * Format, version 2 (all integers are unsigned LEB128 varints unless said otherwise):
 *
 *   magic      8 bytes "RTTRACE\0"
 *   version    4 bytes, little endian: 2 (version 1 is still read: its ops have no thread)
 *   nstreams   varint
 *   command    string (varint length, then the bytes; no terminator)
 *   nstreams times, a stream:
 *     pid threads failed foreign slots nops nmalloc nfree peak_live   varints
 *     command name params                                              strings
 *     ops_bytes  varint: the length of what follows
 *     nops times, an op:
 *       kind     varint: the wl_op_t kind word (low byte wl_kind_t, bits 8..15 log2 alignment for
 *                WL_MEMALIGN, WL_OP_FAILED above)
 *       slot     varint: zigzag(slot - previous op's slot), the first op relative to 0
 *       size     varint, absent for WL_FREE (its size is 0)
 *       thread   varint (version 2 only): the thread that made the call, below the stream's
 *                `threads` (0 when threads is 0); the ops stay in one valid single-threaded
 *                order, the order the calls completed in the recording, so that a replay with
 *                one thread per recorded thread can follow it (replay.c, rp_threaded)
 *   checksum   8 bytes, little endian: FNV-1a 64 of every byte before it
 *
 * A typical op takes 3 to 5 bytes (the wl_op_t in memory 12). tr_load checks everything it
 * reads: lengths against the bytes left, the checksum, each op's kind, flags and slot range, the
 * single-threaded order (a create only into an empty slot, a free or a realloc of a non-empty
 * slot only of a full one, failed ops changing nothing), and the stored counters against the
 * ops (nmalloc, nfree, peak_live). A file that fails any check is refused with a reason; nothing
 * read from the file sizes an allocation beyond what the file's own length allows: a stream takes
 * at least 13 bytes, an op at least 2 of its stream's ops_bytes, and a slot needs an op.
 *
 * The loader's memory limit (tr_load_max, tr_parse): every allocation the loader makes -- the
 * file's bytes, the streams (about 600 bytes each in memory), their ops (12 bytes each) and the
 * check's per-slot tables (5 bytes a slot, released after each stream), and for a stream of more
 * than one thread its ops' threads (4 bytes an op) -- is counted before it is
 * made, and a file that would take more than the limit is refused ("... more than the memory
 * limit ..."): the file is never read past the limit (a pipe or /dev/zero included), and a small
 * file cannot make the loader take more than about 50 times its size. tr_load uses
 * tr_default_max_memory().
 *
 * Counters, as rtbench trace record fills them and tr_load checks them:
 *   nmalloc    ops that are not WL_FREE and not failed (malloc, calloc, memalign, realloc)
 *   nfree      WL_FREE ops
 *   peak_live  the most requested bytes live at once (a realloc counts its new size)
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno, fstat, sysconf */
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

enum { TR_VERSION = 2, TR_VERSION_MIN = 1 };
static const char tr_magic[8] = {'R', 'T', 'T', 'R', 'A', 'C', 'E', '\0'};

/* ---- writing ------------------------------------------------------------------------------ */

typedef struct tr_buf {
    unsigned char *p;
    size_t len, cap;
    bool oom;
} tr_buf_t;

static void buf_put(tr_buf_t *b, const void *src, size_t n)
{
    if (b->oom || n == 0) {
        return; /* n == 0: src may be NULL (a stream without ops), which memcpy may not be given */
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) {
            cap *= 2;
        }
        unsigned char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void buf_varint(tr_buf_t *b, uint64_t v)
{
    unsigned char tmp[10];
    size_t n = 0;
    do {
        unsigned char c = (unsigned char)(v & 0x7fu);
        v >>= 7;
        tmp[n++] = (unsigned char)(c | (v != 0 ? 0x80u : 0u));
    } while (v != 0);
    buf_put(b, tmp, n);
}

static void buf_string(tr_buf_t *b, const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0') {
        n++;
    }
    buf_varint(b, n);
    buf_put(b, s, n);
}

static void buf_le(tr_buf_t *b, uint64_t v, size_t n)
{
    unsigned char tmp[8];
    for (size_t i = 0; i < n; i++) {
        tmp[i] = (unsigned char)(v >> (8 * i));
    }
    buf_put(b, tmp, n);
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1u); }

static void encode_ops(tr_buf_t *b, const tr_stream_t *st)
{
    const wl_trace_t *t = &st->trace;
    uint32_t prev = 0;
    for (size_t i = 0; i < t->nops; i++) {
        const wl_op_t *op = &t->ops[i];
        buf_varint(b, op->kind);
        buf_varint(b, zigzag((int64_t)op->slot - (int64_t)prev));
        prev = op->slot;
        if (WL_OP_KIND(op) != WL_FREE) {
            buf_varint(b, op->size);
        }
        buf_varint(b, st->thread != NULL ? st->thread[i] : 0u);
    }
}

/* Appends one stream: its counters, its strings, then its ops prefixed by their byte count. */
static void encode_stream(tr_buf_t *b, const tr_stream_t *st)
{
    const wl_trace_t *t = &st->trace;
    buf_varint(b, st->pid);
    buf_varint(b, st->threads);
    buf_varint(b, st->failed);
    buf_varint(b, st->foreign);
    buf_varint(b, t->slots);
    buf_varint(b, t->nops);
    buf_varint(b, t->nmalloc);
    buf_varint(b, t->nfree);
    buf_varint(b, t->peak_live);
    buf_string(b, st->command, sizeof st->command);
    buf_string(b, t->name, sizeof t->name);
    buf_string(b, t->params, sizeof t->params);
    tr_buf_t ops = {0};
    encode_ops(&ops, st);
    if (ops.oom) {
        b->oom = true;
    }
    buf_varint(b, ops.len);
    buf_put(b, ops.p, ops.len);
    free(ops.p);
}

/* Writes the len bytes at p to path through path.tmp and a rename. False (with a message) on
 * failure; the .tmp file is removed then. */
static bool write_atomic(const char *path, const unsigned char *p, size_t len, char *err, size_t errlen)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 5);
    if (tmp == NULL) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp", 5);
    FILE *out = fopen(tmp, "wb");
    bool ok = out != NULL;
    if (ok) {
        ok = fwrite(p, 1, len, out) == len;
        ok = fclose(out) == 0 && ok;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
    }
    if (!ok) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
    }
    free(tmp);
    return ok;
}

bool tr_encode(const tr_file_t *f, unsigned char **out, size_t *len)
{
    tr_buf_t b = {0};
    buf_put(&b, tr_magic, sizeof tr_magic);
    buf_le(&b, TR_VERSION, 4);
    buf_varint(&b, f->nstreams);
    buf_string(&b, f->command, sizeof f->command);
    for (size_t s = 0; s < f->nstreams; s++) {
        encode_stream(&b, &f->streams[s]);
    }
    if (!b.oom) {
        buf_le(&b, fnv1a(b.p, b.len), 8);
    }
    if (b.oom) {
        free(b.p);
        *out = NULL;
        *len = 0;
        return false;
    }
    *out = b.p;
    *len = b.len;
    return true;
}

uint64_t tr_checksum(const unsigned char *p, size_t n) { return fnv1a(p, n); }

bool tr_save(const char *path, const tr_file_t *f, char *err, size_t errlen)
{
    unsigned char *p = NULL;
    size_t len = 0;
    if (!tr_encode(f, &p, &len)) {
        snprintf(err, errlen, "out of memory encoding the trace");
        return false;
    }
    bool ok = write_atomic(path, p, len, err, errlen);
    free(p);
    return ok;
}

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct tr_reader {
    const unsigned char *p, *end;
    const char *what; /* the first problem met; NULL while all is well */
    uint32_t version; /* of the file */
} tr_reader_t;

static uint64_t rd_varint(tr_reader_t *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) {
            r->what = r->what ? r->what : "truncated (a number runs past the end)";
            return 0;
        }
        unsigned char c = *r->p++;
        if (shift == 63 && c > 1u) {
            r->what = r->what ? r->what : "corrupt (a number overflows 64 bits)";
            return 0;
        }
        v |= (uint64_t)(c & 0x7fu) << shift;
        if ((c & 0x80u) == 0) {
            return v;
        }
    }
    r->what = r->what ? r->what : "corrupt (a number longer than 10 bytes)";
    return 0;
}

/* A varint that must be <= max (else the file is corrupt: `what` says which field). */
static uint64_t rd_bounded(tr_reader_t *r, uint64_t max, const char *what)
{
    uint64_t v = rd_varint(r);
    if (r->what == NULL && v > max) {
        r->what = what;
    }
    return r->what == NULL ? v : 0;
}

static void rd_string(tr_reader_t *r, char *dst, size_t cap)
{
    uint64_t n = rd_varint(r);
    if (r->what != NULL) {
        return;
    }
    if (n >= cap || n > (uint64_t)(r->end - r->p)) {
        r->what = n >= cap ? "corrupt (a string longer than its field)" : "truncated (in a string)";
        return;
    }
    memcpy(dst, r->p, (size_t)n);
    dst[n] = '\0';
    if (memchr(dst, '\0', (size_t)n) != NULL) {
        r->what = "corrupt (a NUL byte inside a string)";
    }
    r->p += n;
}

/* What decode_ops() tracks while it replays a stream's ops: the slots' state and the counters. */
typedef struct dec_state {
    uint8_t *full;  /* per slot: holds a block */
    uint32_t *size; /* per slot: the block's size */
    uint32_t prev;  /* the previous op's slot (slots are delta-coded) */
    uint32_t slots;
    uint32_t threads; /* the stream's */
    uint64_t live, peak;
    size_t nmalloc, nfree;
} dec_state_t;

/* Reads one op into op and checks its kind and slot. Returns the problem, or NULL (also when the
 * reader failed: r->what says so). */
static const char *read_op(tr_reader_t *r, dec_state_t *d, wl_op_t *op, uint32_t *thread)
{
    uint64_t kind = rd_bounded(r, UINT32_MAX, "corrupt (an op's kind word overflows)");
    int64_t slot = (int64_t)d->prev + unzigzag(rd_varint(r));
    op->kind = (uint32_t)kind;
    wl_kind_t k = WL_OP_KIND(op);
    uint64_t sz = k == WL_FREE ? 0 : rd_bounded(r, UINT32_MAX, "corrupt (a size above 32 bits)");
    *thread = 0;
    if (r->version >= 2u) {
        *thread = (uint32_t)rd_bounded(r, d->threads > 0u ? d->threads - 1u : 0u,
                                       "corrupt (an op's thread beyond the stream's threads)");
    }
    if (r->what != NULL) {
        return NULL;
    }
    if (k > WL_MEMALIGN || (kind & ~(uint64_t)(0xffffu | WL_OP_FAILED)) != 0 ||
        (k != WL_MEMALIGN && ((kind >> 8) & 0xffu) != 0) || ((kind >> 8) & 0xffu) > 63) {
        return "corrupt (an unknown op kind or flag)";
    }
    if (((kind >> 8) & 0xffu) >= sizeof(size_t) * CHAR_BIT) {
        /* a 64-bit recording's memalign(2^32 or more) read by a 32-bit rtbench: WL_OP_ALIGN
         * cannot hold it (a shift by the width of size_t) */
        return "an alignment of 2^32 or more: beyond this machine's size_t";
    }
    if (slot < 0 || (uint64_t)slot >= d->slots) {
        return "corrupt (an op's slot outside the stream's slots)";
    }
    op->slot = (uint32_t)slot;
    op->size = (uint32_t)sz;
    d->prev = op->slot;
    return NULL;
}

/* Applies a read op to the slots and counters. Returns the problem (an op out of order), or NULL. */
static const char *apply_op(dec_state_t *d, const wl_op_t *op)
{
    wl_kind_t k = WL_OP_KIND(op);
    bool failed = (op->kind & WL_OP_FAILED) != 0;
    uint8_t *f = &d->full[op->slot];
    if (k == WL_FREE) {
        if (failed || !*f) {
            return failed ? "corrupt (a free flagged failed)" : "invalid order (a free of an empty slot)";
        }
        d->live -= d->size[op->slot];
        *f = 0;
        d->nfree++;
        return NULL;
    }
    if (k != WL_REALLOC && *f) {
        return "invalid order (an allocation into a full slot)";
    }
    if (failed) {
        return NULL; /* the recorded call returned NULL: nothing changed */
    }
    if (*f) {
        d->live -= d->size[op->slot];
    }
    d->live += op->size;
    d->size[op->slot] = op->size;
    *f = 1;
    d->peak = d->live > d->peak ? d->live : d->peak;
    d->nmalloc++;
    return NULL;
}

/* What the loader holds at once, against its limit (bytes). */
typedef struct tr_mem {
    uint64_t used, max;
} tr_mem_t;

/* Counts `bytes` more held; false (nothing counted) when that would pass the limit. */
static bool mem_take(tr_mem_t *m, uint64_t bytes)
{
    if (bytes > m->max - m->used) {
        return false;
    }
    m->used += bytes;
    return true;
}

static void mem_give(tr_mem_t *m, uint64_t bytes) { m->used -= bytes < m->used ? bytes : m->used; }

/* Decodes and checks one stream's ops (the reader limited to its ops_bytes). */
static bool decode_ops(tr_reader_t *r, tr_stream_t *st, tr_mem_t *mem, char *err, size_t errlen, size_t sidx)
{
    wl_trace_t *t = &st->trace;
    dec_state_t d = {0};
    d.slots = t->slots;
    d.threads = st->threads;
    /* the ops (and their threads) stay with the file; the per-slot tables go when the stream is
     * checked */
    bool threaded = r->version >= 2u && st->threads > 1u;
    uint64_t ops_bytes = (uint64_t)(t->nops ? t->nops : 1u) * (sizeof *t->ops + (threaded ? sizeof *st->thread : 0u));
    uint64_t tables = (uint64_t)(t->slots ? t->slots : 1u) * (1u + sizeof *d.size);
    if (!mem_take(mem, ops_bytes)) {
        snprintf(err, errlen, "stream %zu: its %zu ops need more than the memory limit of %llu bytes", sidx, t->nops,
                 (unsigned long long)mem->max);
        return false;
    }
    if (!mem_take(mem, tables)) {
        mem_give(mem, ops_bytes);
        snprintf(err, errlen, "stream %zu: its %u slots need more than the memory limit of %llu bytes", sidx,
                 (unsigned)t->slots, (unsigned long long)mem->max);
        return false;
    }
    d.full = calloc(t->slots ? t->slots : 1u, 1);
    d.size = calloc(t->slots ? t->slots : 1u, sizeof *d.size);
    t->ops = malloc((t->nops ? t->nops : 1u) * sizeof *t->ops);
    if (threaded) {
        st->thread = malloc((t->nops ? t->nops : 1u) * sizeof *st->thread);
    }
    if (d.full == NULL || d.size == NULL || t->ops == NULL || (threaded && st->thread == NULL)) {
        free(d.full);
        free(d.size);
        mem_give(mem, tables);
        snprintf(err, errlen, "out of memory loading stream %zu (%zu ops)", sidx, t->nops);
        return false; /* t->ops and st->thread (if any) go with the file: tr_release */
    }
    const char *bad = NULL;
    size_t i = 0;
    for (; i < t->nops && r->what == NULL && bad == NULL; i++) {
        uint32_t thread;
        bad = read_op(r, &d, &t->ops[i], &thread);
        if (st->thread != NULL) {
            st->thread[i] = thread;
        }
        if (r->what != NULL || bad != NULL) {
            break;
        }
        bad = apply_op(&d, &t->ops[i]);
        if (bad != NULL) {
            break;
        }
    }
    free(d.full);
    free(d.size);
    mem_give(mem, tables);
    if (r->what == NULL && bad == NULL && r->p != r->end) {
        bad = "corrupt (bytes left over after a stream's ops)";
    }
    if (r->what == NULL && bad == NULL && (d.nmalloc != t->nmalloc || d.nfree != t->nfree || d.peak != t->peak_live)) {
        bad = "corrupt (the stream's counters disagree with its ops)";
    }
    if (r->what != NULL || bad != NULL) {
        snprintf(err, errlen, "stream %zu, op %zu: %s", sidx, i, r->what ? r->what : bad);
        return false;
    }
    return true;
}

void tr_release(tr_file_t *f)
{
    if (f->streams != NULL) {
        for (size_t i = 0; i < f->nstreams; i++) {
            free(f->streams[i].trace.ops);
            free(f->streams[i].thread);
        }
    }
    free(f->streams);
    f->streams = NULL;
    f->nstreams = 0;
}

/* Checks the magic, the version and the checksum of the len bytes at data. False (with a message)
 * when one is wrong. */
static bool check_file(const unsigned char *data, size_t len, uint32_t *version_out, char *err, size_t errlen)
{
    if (len < sizeof tr_magic + 4 + 8 || memcmp(data, tr_magic, sizeof tr_magic) != 0) {
        snprintf(err, errlen,
                 len < sizeof tr_magic                          ? "not a trace file (too short)"
                 : memcmp(data, tr_magic, sizeof tr_magic) != 0 ? "not a trace file (bad magic)"
                                                                : "truncated (shorter than a header)");
        return false;
    }
    uint32_t version = (uint32_t)data[8] | (uint32_t)data[9] << 8 | (uint32_t)data[10] << 16 | (uint32_t)data[11] << 24;
    if (version < TR_VERSION_MIN || version > TR_VERSION) {
        snprintf(err, errlen, "trace format version %u, this rtbench reads versions %d to %d", (unsigned)version,
                 TR_VERSION_MIN, TR_VERSION);
        return false;
    }
    *version_out = version;
    uint64_t sum = 0;
    for (size_t i = 0; i < 8; i++) {
        sum |= (uint64_t)data[len - 8 + i] << (8 * i);
    }
    if (sum != fnv1a(data, len - 8)) {
        snprintf(err, errlen, "corrupt or truncated (checksum mismatch)");
        return false;
    }
    return true;
}

/* Reads a stream's counters and strings into st. Returns its ops_bytes (r->what set on a problem). */
static uint64_t read_stream_header(tr_reader_t *r, tr_stream_t *st)
{
    wl_trace_t *t = &st->trace;
    st->pid = (uint32_t)rd_bounded(r, UINT32_MAX, "corrupt (pid)");
    st->threads = (uint32_t)rd_bounded(r, UINT32_MAX, "corrupt (threads)");
    st->failed = rd_varint(r);
    st->foreign = rd_varint(r);
    uint64_t slots = rd_bounded(r, UINT32_MAX, "corrupt (slots)");
    /* Every op takes at least 2 bytes; a slot no op names is never needed. */
    uint64_t nops = rd_bounded(r, (uint64_t)(r->end - r->p) / 2u, "corrupt (more ops than the file can hold)");
    if (r->what == NULL && slots > nops) {
        r->what = "corrupt (more slots than ops)";
    }
    t->slots = (uint32_t)slots;
    t->nops = (size_t)nops;
    t->nmalloc = (size_t)rd_varint(r);
    t->nfree = (size_t)rd_varint(r);
    t->peak_live = rd_varint(r);
    t->peak_inuse = t->peak_live;
    t->measured = SIZE_MAX;
    rd_string(r, st->command, sizeof st->command);
    rd_string(r, t->name, sizeof t->name);
    rd_string(r, t->params, sizeof t->params);
    uint64_t ops_bytes = rd_bounded(r, (uint64_t)(r->end - r->p), "truncated (a stream's ops)");
    if (r->what == NULL && nops > ops_bytes / 2u) {
        r->what = "corrupt (more ops than the stream's bytes can hold)";
    }
    return ops_bytes;
}

static bool parse(const unsigned char *data, size_t len, tr_mem_t *mem, tr_file_t *f, char *err, size_t errlen)
{
    uint32_t version = 0;
    if (!check_file(data, len, &version, err, errlen)) {
        return false;
    }
    tr_reader_t r = {data + 12, data + len - 8, NULL, version};
    size_t left = (size_t)(r.end - r.p);
    /* Each stream takes at least 13 bytes: nine counters, three strings, ops_bytes. */
    uint64_t n = rd_bounded(&r, left / 13u, "corrupt (more streams than the file can hold)");
    rd_string(&r, f->command, sizeof f->command);
    if (r.what != NULL) {
        snprintf(err, errlen, "header: %s", r.what);
        return false;
    }
    if (!mem_take(mem, (n ? n : 1u) * sizeof *f->streams)) { /* n <= the file size: no overflow */
        snprintf(err, errlen, "its %llu streams need more than the memory limit of %llu bytes", (unsigned long long)n,
                 (unsigned long long)mem->max);
        return false;
    }
    f->streams = calloc(n ? (size_t)n : 1u, sizeof *f->streams);
    if (f->streams == NULL) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    f->nstreams = (size_t)n;
    for (size_t s = 0; s < f->nstreams; s++) {
        tr_stream_t *st = &f->streams[s];
        uint64_t ops_bytes = read_stream_header(&r, st);
        if (r.what != NULL) {
            snprintf(err, errlen, "stream %zu: %s", s, r.what);
            tr_release(f);
            return false;
        }
        tr_reader_t ops = {r.p, r.p + ops_bytes, NULL, version};
        if (!decode_ops(&ops, st, mem, err, errlen, s)) {
            tr_release(f);
            return false;
        }
        r.p += ops_bytes;
    }
    if (r.p != r.end) {
        snprintf(err, errlen, "corrupt (bytes left over after the last stream)");
        tr_release(f);
        return false;
    }
    return true;
}

uint64_t tr_default_max_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGE_SIZE);
    uint64_t half = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2u : (uint64_t)1 << 30;
    /* a 32-bit process cannot map more than its address space, whatever the machine holds */
    uint64_t space = (uint64_t)(SIZE_MAX / 2u);
    return half < space ? half : space;
}

/* trace.h */
void tr_zero_as_one(tr_file_t *f)
{
    for (size_t si = 0; si < f->nstreams; si++) {
        wl_trace_t *t = &f->streams[si].trace;
        for (size_t i = 0; i < t->nops; i++) {
            wl_op_t *op = &t->ops[i];
            if (op->size == 0u && WL_OP_KIND(op) != WL_FREE && (op->kind & WL_OP_FAILED) == 0u) {
                op->size = 1u;
            }
        }
    }
}

bool tr_parse(const unsigned char *data, size_t len, uint64_t max_memory, tr_file_t *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    tr_mem_t mem = {0, max_memory};
    if (!parse(data, len, &mem, f, err, errlen)) {
        memset(f, 0, sizeof *f);
        return false;
    }
    return true;
}

/* Reads the whole of `in` into *data, every byte held counted in mem. False with the reason. */
static bool read_all(FILE *in, const char *path, tr_mem_t *mem, unsigned char **data, size_t *len, char *err,
                     size_t errlen)
{
    struct stat sb;
    size_t cap = 1u << 16;
    if (fstat(fileno(in), &sb) == 0 && S_ISREG(sb.st_mode)) {
        if ((uint64_t)sb.st_size > mem->max || (uint64_t)sb.st_size >= (uint64_t)SIZE_MAX) {
            snprintf(err, errlen, "%s: %llu bytes, more than the memory limit of %llu bytes", path,
                     (unsigned long long)sb.st_size, (unsigned long long)mem->max);
            return false;
        }
        cap = (size_t)sb.st_size + 1u; /* one more: the read that finds the end */
    }
    *data = NULL;
    *len = 0;
    size_t held = 0;
    for (;;) {
        if (*len == held) {
            size_t ncap = held == 0 ? cap : held * 2u;
            if (ncap < held || !mem_take(mem, ncap - held)) {
                snprintf(err, errlen, "%s: more than the memory limit of %llu bytes (still reading)", path,
                         (unsigned long long)mem->max);
                return false;
            }
            unsigned char *p = realloc(*data, ncap);
            if (p == NULL) {
                snprintf(err, errlen, "out of memory reading %s", path);
                return false;
            }
            *data = p;
            held = ncap;
        }
        size_t got = fread(*data + *len, 1, held - *len, in);
        *len += got;
        if (got == 0) {
            break;
        }
    }
    if (ferror(in) != 0) {
        snprintf(err, errlen, "cannot read %s", path);
        return false;
    }
    return true;
}

bool tr_load_max(const char *path, uint64_t max_memory, tr_file_t *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return false;
    }
    tr_mem_t mem = {0, max_memory};
    unsigned char *data = NULL;
    size_t len = 0;
    bool ok = read_all(in, path, &mem, &data, &len, err, errlen);
    fclose(in);
    if (!ok) {
        free(data);
        return false;
    }
    char why[200];
    ok = parse(data, len, &mem, f, why, sizeof why);
    free(data);
    if (!ok) {
        memset(f, 0, sizeof *f);
        snprintf(err, errlen, "%s: %s", path, why);
    }
    return ok;
}

bool tr_load(const char *path, tr_file_t *f, char *err, size_t errlen)
{
    return tr_load_max(path, tr_default_max_memory(), f, err, errlen);
}
