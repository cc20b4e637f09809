/* SPDX-License-Identifier: MIT */
/*
 * trace/record.c -- `rtbench trace record [-o FILE] [--keep-raw] [--baseline] -- CMD ARGS...`
 *
 * Runs CMD with librtalloc-trace.so preloaded (recorder.c) and RTALLOC_TRACE_DIR pointing at a
 * fresh directory of raw logs (rawlog.h), waits for it, converts every raw log -- one per process
 * image -- into a stream of a tr_file_t, saves it (trace.c), prints a summary and exits with CMD's
 * status (128 + signal when it was killed). The raw logs are deleted after a successful conversion
 * unless --keep-raw. --baseline also runs CMD once without the recorder first, and prints the
 * ratios of the wall and CPU times (the recording overhead). --from-raw DIR runs nothing and
 * converts the logs in DIR. The written trace is loaded back before the logs go: tr_load checks
 * the order the conversion promises.
 *
 * Conversion of one raw log (its records in slot order, i.e. the image's global order of calls):
 *   - an address table maps each live block to its slot; slots are reused LIFO, so `slots` is the
 *     most objects live at once (plus one where a failed call needed an empty slot);
 *   - malloc/calloc/memalign-family: an op into an empty slot (calloc: the product; pvalloc: the
 *     size rounded up to pages, page-aligned; valloc page-aligned); a NULL result: the op flagged
 *     WL_OP_FAILED on an empty slot, which stays empty;
 *   - free: WL_FREE of the block's slot; a pointer never seen: counted foreign, dropped;
 *   - realloc (BEGIN and END records of one thread): BEGIN takes the old address out of the table
 *     (another thread may get it back before END); END emits one WL_REALLOC on the old block's
 *     slot, or on an empty slot for realloc(NULL, n) (realloc(NULL, 0) is recorded as malloc(0));
 *     realloc(p, 0) that freed is a WL_FREE; a failed realloc a flagged WL_REALLOC, the block
 *     staying where it was; realloc of a foreign pointer counts foreign and creates the new block
 *     as realloc(NULL, n);
 *   - sizes above UINT32_MAX (wl_op_t holds 32 bits): a successful call is flagged failed, its
 *     block kept out of the stream (its free dropped) and counted as too large;
 *   - an address returned while the table still holds it live would mean a free ordered after the
 *     malloc that reused its address: a recorder ordering bug, counted and reported (the old
 *     object stays live in the stream, which stays valid).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rawlog.h"
#include "trace.h"

/* ---- growable arrays, address table ------------------------------------------------------- */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return true;
    }
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (q == NULL) {
        return false;
    }
    memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
    *p = q;
    *cap = n;
    return true;
}

#define GHOST UINT32_MAX /* a block too large for the stream: in the table, not in the ops */

typedef struct amap {
    uint64_t *key; /* 0: empty */
    uint32_t *val;
    size_t cap, n; /* cap a power of two, n <= cap / 2 */
} amap_t;

static size_t amap_hash(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static bool amap_find(const amap_t *m, uint64_t k, size_t *at)
{
    if (m->cap == 0) {
        return false;
    }
    for (size_t i = amap_hash(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == k) {
            *at = i;
            return true;
        }
        if (m->key[i] == 0) {
            *at = i;
            return false;
        }
    }
}

static bool amap_put(amap_t *m, uint64_t k, uint32_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        amap_t b = {0};
        b.cap = m->cap ? m->cap * 2 : 1024;
        b.key = calloc(b.cap, sizeof *b.key);
        b.val = calloc(b.cap, sizeof *b.val);
        if (b.key == NULL || b.val == NULL) {
            free(b.key);
            free(b.val);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->key[i] != 0) {
                size_t at = 0;
                amap_find(&b, m->key[i], &at);
                b.key[at] = m->key[i];
                b.val[at] = m->val[i];
                b.n++;
            }
        }
        free(m->key);
        free(m->val);
        *m = b;
    }
    size_t at = 0;
    if (!amap_find(m, k, &at)) {
        m->key[at] = k;
        m->n++;
    }
    m->val[at] = v;
    return true;
}

/* Removes the entry at `at` (linear probing: the entries after it move back into the gap). */
static void amap_del(amap_t *m, size_t at)
{
    size_t mask = m->cap - 1, i = at;
    m->key[i] = 0;
    m->n--;
    for (size_t j = (i + 1) & mask; m->key[j] != 0; j = (j + 1) & mask) {
        size_t h = amap_hash(m->key[j], m->cap);
        /* j's entry may move to i when its home h is not cyclically within (i, j] */
        bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            m->key[i] = m->key[j];
            m->val[i] = m->val[j];
            m->key[j] = 0;
            i = j;
        }
    }
}

/* ---- one stream ------------------------------------------------------------------------------ */

typedef struct pend {
    enum { P_NONE, P_NULL, P_SLOT, P_FOREIGN, P_GHOST } type;
    uint32_t slot;
    uint64_t old;
} pend_t;

typedef struct conv {
    tr_stream_t *st;
    wl_op_t *ops;
    uint32_t *thr; /* per op: the thread that made it (c->thread when it was emitted) */
    size_t nops, opcap, thrcap;
    uint32_t thread; /* the thread of the record being converted */
    amap_t map;
    uint32_t *size; /* per slot: requested bytes of its block */
    uint8_t *full;
    size_t slotcap;
    uint32_t nslots;
    uint32_t *freelist;
    size_t nfree_slots, freecap;
    amap_t tids;  /* thread id + 1 -> the thread's index, in the order threads first appear */
    pend_t *pend; /* per thread index: its realloc between BEGIN and END */
    size_t pendcap;
    uint64_t live;
    uint32_t page;
    bool oom;
    /* counters beyond tr_stream_t's */
    uint64_t order_errors, too_large, unpaired, null_frees; /* null_frees: the recorder logs none */
    uint64_t per_kind[5];
} conv_t;

static void emit(conv_t *c, uint32_t kind, uint32_t slot, uint64_t size)
{
    if (!grow((void **)&c->ops, &c->opcap, c->nops + 1, sizeof *c->ops) ||
        !grow((void **)&c->thr, &c->thrcap, c->nops + 1, sizeof *c->thr)) {
        c->oom = true;
        return;
    }
    c->thr[c->nops] = c->thread;
    wl_op_t *op = &c->ops[c->nops++];
    op->kind = kind;
    op->slot = slot;
    op->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    c->per_kind[kind & 0xffu]++;
}

static bool slot_take(conv_t *c, uint32_t *s)
{
    if (c->nfree_slots > 0) {
        *s = c->freelist[--c->nfree_slots];
        return true;
    }
    if (c->nslots == c->slotcap) {
        size_t cap = c->slotcap ? c->slotcap * 2 : 1024;
        uint32_t *sz = realloc(c->size, cap * sizeof *sz);
        if (sz != NULL) {
            c->size = sz;
        }
        uint8_t *f = sz != NULL ? realloc(c->full, cap) : NULL;
        if (f == NULL || c->nslots == UINT32_MAX - 1) {
            c->oom = true;
            return false;
        }
        c->full = f;
        c->slotcap = cap;
    }
    c->full[c->nslots] = 0;
    c->size[c->nslots] = 0;
    *s = c->nslots++;
    return true;
}

static void slot_give(conv_t *c, uint32_t s)
{
    if (!grow((void **)&c->freelist, &c->freecap, c->nfree_slots + 1, sizeof *c->freelist)) {
        c->oom = true;
        return;
    }
    c->freelist[c->nfree_slots++] = s;
}

/* A failed call: its op on an empty slot, which stays empty. */
static void emit_failed(conv_t *c, uint32_t kind, uint64_t size)
{
    uint32_t s;
    if (slot_take(c, &s)) {
        emit(c, kind | WL_OP_FAILED, s, size);
        slot_give(c, s);
    }
    c->st->failed++;
}

/* A block `addr` of `size` bytes created by an op of `kind` (into an empty slot). */
static void create(conv_t *c, uint32_t kind, uint64_t addr, uint64_t size)
{
    size_t at;
    if (amap_find(&c->map, addr, &at)) {
        c->order_errors++; /* the old object stays live in its slot: the stream stays valid */
        amap_del(&c->map, at);
    }
    if (size > UINT32_MAX) {
        c->too_large++;
        uint32_t s;
        if (slot_take(c, &s)) {
            emit(c, kind | WL_OP_FAILED, s, size);
            slot_give(c, s);
        }
        if (!amap_put(&c->map, addr, GHOST)) {
            c->oom = true;
        }
        return;
    }
    uint32_t s;
    if (!slot_take(c, &s)) {
        return;
    }
    emit(c, kind, s, size);
    c->full[s] = 1;
    c->size[s] = (uint32_t)size;
    c->live += size;
    if (c->live > c->st->trace.peak_live) {
        c->st->trace.peak_live = c->live;
    }
    if (!amap_put(&c->map, addr, s)) {
        c->oom = true;
    }
}

static void release(conv_t *c, uint32_t s)
{
    emit(c, WL_FREE, s, 0);
    c->full[s] = 0;
    c->live -= c->size[s];
    c->size[s] = 0;
    slot_give(c, s);
}

static pend_t *pend_of(conv_t *c, uint32_t thread)
{
    if (!grow((void **)&c->pend, &c->pendcap, (size_t)thread + 1, sizeof *c->pend)) {
        c->oom = true;
        return NULL;
    }
    return &c->pend[thread];
}

static void realloc_begin(conv_t *c, const raw_rec_t *r, uint32_t thread)
{
    pend_t *p = pend_of(c, thread);
    if (p == NULL) {
        return;
    }
    if (p->type != P_NONE) {
        c->unpaired++; /* an END missing (the thread died in realloc?): forget it */
    }
    p->old = r->ptr;
    size_t at;
    if (r->ptr == 0) {
        p->type = P_NULL;
    } else if (!amap_find(&c->map, r->ptr, &at)) {
        p->type = P_FOREIGN;
    } else {
        uint32_t v = c->map.val[at];
        p->type = v == GHOST ? P_GHOST : P_SLOT;
        p->slot = v;
        amap_del(&c->map, at); /* the address may come back to another thread before END */
    }
}

/* realloc(NULL, n) semantics: a new block into an empty slot. */
static void realloc_new(conv_t *c, uint64_t addr, uint64_t n) { create(c, n == 0 ? WL_MALLOC : WL_REALLOC, addr, n); }

/* A failed realloc of a tracked block: the block stays where it was. */
static void realloc_slot_failed(conv_t *c, const pend_t *q, uint64_t n)
{
    emit(c, WL_REALLOC | WL_OP_FAILED, q->slot, n);
    c->st->failed++;
    size_t at;
    if (amap_find(&c->map, q->old, &at)) {
        c->order_errors++;
    }
    if (!amap_put(&c->map, q->old, q->slot)) {
        c->oom = true;
    }
}

/* A successful realloc of a tracked block to addr: the slot keeps its number, takes size n. */
static void realloc_slot_moved(conv_t *c, const pend_t *q, uint64_t addr, uint64_t n)
{
    size_t at;
    if (amap_find(&c->map, addr, &at)) {
        c->order_errors++;
        amap_del(&c->map, at);
    }
    emit(c, WL_REALLOC, q->slot, n);
    c->live = c->live - c->size[q->slot] + n;
    c->size[q->slot] = (uint32_t)n;
    if (c->live > c->st->trace.peak_live) {
        c->st->trace.peak_live = c->live;
    }
    if (!amap_put(&c->map, addr, q->slot)) {
        c->oom = true;
    }
}

/* The END of a realloc whose BEGIN found a block of the stream (P_SLOT). */
static void realloc_end_slot(conv_t *c, const pend_t *q, uint64_t addr, uint64_t n, bool freed, bool failed)
{
    if (freed) {
        release(c, q->slot);
    } else if (failed) {
        realloc_slot_failed(c, q, n);
    } else if (n > UINT32_MAX) {
        release(c, q->slot); /* the block leaves the stream: see create() */
        create(c, WL_REALLOC, addr, n);
    } else {
        realloc_slot_moved(c, q, addr, n);
    }
}

static void realloc_end(conv_t *c, const raw_rec_t *r, uint32_t thread)
{
    pend_t *p = pend_of(c, thread);
    if (p == NULL) {
        return;
    }
    pend_t q = *p;
    p->type = P_NONE;
    if (q.type == P_NONE) {
        c->unpaired++;
        q.type = P_NULL;
    }
    uint64_t n = r->size, addr = r->ptr;
    bool freed = addr == 0 && n == 0 && q.type != P_NULL; /* glibc: realloc(p, 0) frees p */
    bool failed = addr == 0 && !freed;
    switch (q.type) {
    case P_NONE:
    case P_NULL:
        if (failed) {
            emit_failed(c, n == 0 ? WL_MALLOC : WL_REALLOC, n);
        } else {
            realloc_new(c, addr, n);
        }
        break;
    case P_SLOT: realloc_end_slot(c, &q, addr, n, freed, failed); break;
    case P_FOREIGN:
        c->st->foreign++;
        if (failed) {
            c->st->failed++;
        } else if (!freed) {
            realloc_new(c, addr, n);
        }
        break;
    case P_GHOST:
        if (failed) {
            c->st->failed++;
            if (!amap_put(&c->map, q.old, GHOST)) {
                c->oom = true;
            }
        } else if (!freed) {
            realloc_new(c, addr, n);
        }
        break;
    }
}

/* A record's thread: its index in the order threads first appear (counted then). The recorder's
 * ids are small, but a log is input: an id (up to 2^32 - 1) never sizes an array, the number of
 * threads seen does. False when out of memory. */
static bool thread_of(conv_t *c, const raw_rec_t *r, uint32_t *thread)
{
    size_t at;
    uint64_t key = (uint64_t)r->tid + 1u; /* 0 marks an empty entry */
    if (amap_find(&c->tids, key, &at)) {
        *thread = c->tids.val[at];
        return true;
    }
    if (!amap_put(&c->tids, key, c->st->threads)) {
        c->oom = true;
        return false;
    }
    *thread = c->st->threads++;
    return true;
}

/* A memalign-family record (memalign, posix_memalign, aligned_alloc, valloc, pvalloc). */
static void convert_memalign(conv_t *c, const raw_rec_t *r)
{
    uint64_t size = r->size;
    unsigned align = r->align;
    if (r->sub == RAW_SUB_PVALLOC) {
        size = size > UINT64_MAX - c->page ? UINT64_MAX : (size + c->page - 1) / c->page * c->page;
    }
    if (align > 63) {
        align = 63;
    }
    uint32_t kind = WL_MEMALIGN | (uint32_t)align << 8;
    if (r->ptr == 0) {
        emit_failed(c, kind, size);
    } else {
        create(c, kind, r->ptr, size);
    }
}

/* A free record: releases the block's slot, or counts a NULL or foreign free. */
static void convert_free(conv_t *c, const raw_rec_t *r)
{
    size_t at;
    if (r->ptr == 0) {
        c->null_frees++;
    } else if (!amap_find(&c->map, r->ptr, &at)) {
        c->st->foreign++;
    } else {
        uint32_t s = c->map.val[at];
        amap_del(&c->map, at);
        if (s != GHOST) {
            release(c, s);
        }
    }
}

static void convert_rec(conv_t *c, const raw_rec_t *r)
{
    uint32_t thread;
    if (!thread_of(c, r, &thread)) {
        return;
    }
    c->thread = thread;
    switch ((raw_op_t)r->op) {
    case RAW_MALLOC:
    case RAW_CALLOC: {
        uint32_t kind = r->op == RAW_MALLOC ? WL_MALLOC : WL_CALLOC;
        if (r->ptr == 0) {
            emit_failed(c, kind, r->size);
        } else {
            create(c, kind, r->ptr, r->size);
        }
        break;
    }
    case RAW_MEMALIGN: convert_memalign(c, r); break;
    case RAW_FREE: convert_free(c, r); break;
    case RAW_REALLOC_BEGIN: realloc_begin(c, r, thread); break;
    case RAW_REALLOC_END: realloc_end(c, r, thread); break;
    case RAW_REALLOC_NEW:
        if (r->ptr == 0) {
            emit_failed(c, r->size == 0 ? WL_MALLOC : WL_REALLOC, r->size);
        } else {
            realloc_new(c, r->ptr, r->size);
        }
        break;
    case RAW_NONE:
    default: break;
    }
}

/* ---- raw logs -> tr_file_t ------------------------------------------------------------------- */

typedef struct rawfile {
    char path[PATH_MAX];
    raw_hdr_t hdr;
} rawfile_t;

static int by_start(const void *a, const void *b)
{
    const raw_hdr_t *x = &((const rawfile_t *)a)->hdr, *y = &((const rawfile_t *)b)->hdr;
    if (x->start_ns != y->start_ns) {
        return x->start_ns < y->start_ns ? -1 : 1;
    }
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

typedef struct totals {
    uint64_t order_errors, too_large, unpaired, null_frees, records;
    uint64_t per_kind[5];
} totals_t;

/* A raw log opened and mapped: the descriptor stays open for SEEK_DATA / SEEK_HOLE. */
typedef struct rawmap {
    int fd;
    size_t len, nrec;
    const unsigned char *map; /* NULL when the log holds no record */
} rawmap_t;

/* Opens and maps the raw log of rf. False (with a message) when it cannot be read or mapped. */
static bool map_raw(const rawfile_t *rf, rawmap_t *m)
{
    int fd = open(rf->path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        fprintf(stderr, "rtbench: cannot read %s: %s\n", rf->path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return false;
    }
    m->fd = fd;
    m->len = (size_t)sb.st_size;
    m->nrec = m->len > RAW_HDR_SIZE ? (m->len - RAW_HDR_SIZE) / sizeof(raw_rec_t) : 0;
    m->map = NULL;
    if (m->nrec > 0) {
        void *v = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (v == MAP_FAILED) {
            fprintf(stderr, "rtbench: cannot map %s: %s\n", rf->path, strerror(errno));
            close(fd);
            return false;
        }
        m->map = v;
        madvise(v, m->len, MADV_SEQUENTIAL);
    }
    return true;
}

/* Closes and unmaps what map_raw() opened. */
static void unmap_raw(const rawmap_t *m)
{
    close(m->fd);
    if (m->map != NULL) {
        munmap((void *)(uintptr_t)m->map, m->len);
    }
}

/* Clears st and fills its pid, command, name and params from the header of rf. */
static void stream_header(const rawfile_t *rf, tr_stream_t *st)
{
    memset(st, 0, sizeof *st);
    st->pid = rf->hdr.pid;
    st->trace.measured = SIZE_MAX;
    /* command: the NUL-separated argv, space-separated */
    size_t cl = rf->hdr.cmdline_len < RAW_CMDLINE ? rf->hdr.cmdline_len : RAW_CMDLINE;
    size_t k = 0;
    for (size_t i = 0; i < cl && k + 1 < sizeof st->command; i++) {
        char ch = rf->hdr.cmdline[i];
        if (ch == '\0' && i + 1 == cl) {
            break;
        }
        st->command[k++] = (unsigned char)ch < 0x20u ? ' ' : ch; /* NULs between arguments, newlines */
    }
    st->command[k] = '\0';
    const char *argv0 = rf->hdr.cmdline;
    size_t a0 = strnlen(argv0, cl);
    const char *base = argv0;
    for (size_t i = 0; i < a0; i++) {
        if (argv0[i] == '/') {
            base = argv0 + i + 1;
        }
    }
    snprintf(st->trace.name, sizeof st->trace.name, "%.*s", (int)(argv0 + a0 - base), base);
    snprintf(st->trace.params, sizeof st->trace.params, "recorded: pid %u, parent %u%s", (unsigned)rf->hdr.pid,
             (unsigned)rf->hdr.ppid, rf->hdr.forked ? ", forked" : "");
}

/* Feeds every record of the mapped log m to convert_rec(), counting them in tot. */
static void convert_records(conv_t *c, const rawmap_t *m, totals_t *tot)
{
    int fd = m->fd;
    size_t len = m->len, nrec = m->nrec;
    const raw_rec_t *recs = m->map ? (const raw_rec_t *)(const void *)(m->map + RAW_HDR_SIZE) : NULL;
    /* The log is sparse: a 12 MiB window is reserved at a time, and only the chunks the recorder
     * prefaulted or wrote hold blocks. Only the data ranges are read (SEEK_DATA / SEEK_HOLE; where
     * the file system does not know holes, the whole file is one data range). In slot order. */
    size_t r = 0;
    while (r < nrec && !c->oom) {
        off_t d = lseek(fd, (off_t)(RAW_HDR_SIZE + r * sizeof(raw_rec_t)), SEEK_DATA);
        if (d < 0) {
            break; /* no data after i (ENXIO) */
        }
        off_t h = lseek(fd, d, SEEK_HOLE);
        if (h < 0) {
            h = (off_t)len;
        }
        size_t first = (size_t)(d - RAW_HDR_SIZE) / sizeof(raw_rec_t);
        size_t last = ((size_t)(h - RAW_HDR_SIZE) + sizeof(raw_rec_t) - 1) / sizeof(raw_rec_t);
        r = first > r ? first : r;
        last = last < nrec ? last : nrec;
        for (; r < last && !c->oom; r++) {
            if (recs[r].op != RAW_NONE) {
                tot->records++;
                convert_rec(c, &recs[r]);
            }
        }
        r = r > last ? r : last;
        if (h >= (off_t)len) {
            break;
        }
    }
}

/* Counts the reallocs left unfinished, then frees the converter's tables (not its ops). */
static void conv_finish(conv_t *c)
{
    for (size_t i = 0; i < c->pendcap; i++) {
        c->unpaired += c->pend[i].type != P_NONE; /* a realloc the image never finished */
    }
    free(c->map.key);
    free(c->map.val);
    free(c->size);
    free(c->full);
    free(c->freelist);
    free(c->pend);
    free(c->tids.key);
    free(c->tids.val);
}

/* Hands c's ops (and, for more than one thread, their threads) to st, counts st's mallocs and
 * frees, and adds c's counters to tot. */
static void conv_result(conv_t *c, tr_stream_t *st, totals_t *tot)
{
    st->trace.ops = c->ops;
    if (st->threads > 1u) {
        st->thread = c->thr;
    } else {
        free(c->thr);
    }
    c->thr = NULL;
    st->trace.nops = c->nops;
    st->trace.slots = c->nslots;
    for (size_t i = 0; i < c->nops; i++) {
        if (WL_OP_KIND(&c->ops[i]) == WL_FREE) {
            st->trace.nfree++;
        } else if (!(c->ops[i].kind & WL_OP_FAILED)) {
            st->trace.nmalloc++;
        }
    }
    st->trace.peak_inuse = st->trace.peak_live;
    tot->order_errors += c->order_errors;
    tot->too_large += c->too_large;
    tot->unpaired += c->unpaired;
    tot->null_frees += c->null_frees;
    for (size_t i = 0; i < 5; i++) {
        tot->per_kind[i] += c->per_kind[i];
    }
}

/* Fills st from the raw log of rf. False (with a message) on a read error or out of memory. */
static bool convert_file(const rawfile_t *rf, tr_stream_t *st, totals_t *tot)
{
    rawmap_t m;
    if (!map_raw(rf, &m)) {
        return false;
    }
    stream_header(rf, st);
    conv_t c;
    memset(&c, 0, sizeof c);
    c.st = st;
    c.page = rf->hdr.page_size ? rf->hdr.page_size : 4096u;
    convert_records(&c, &m, tot);
    unmap_raw(&m);
    conv_finish(&c);
    if (c.oom) {
        free(c.ops);
        free(c.thr);
        fprintf(stderr, "rtbench: out of memory converting %s\n", rf->path);
        return false;
    }
    conv_result(&c, st, tot);
    return true;
}

/* Reads every raw log of dir, in the order the images started. */
static bool list_raw(const char *dir, rawfile_t **out, size_t *n)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "rtbench: cannot open %s: %s\n", dir, strerror(errno));
        return false;
    }
    rawfile_t *v = NULL;
    size_t cnt = 0, cap = 0;
    struct dirent *e;
    bool ok = true;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "raw-", 4) != 0) {
            continue;
        }
        if (!grow((void **)&v, &cap, cnt + 1, sizeof *v)) {
            ok = false;
            break;
        }
        rawfile_t *rf = &v[cnt];
        if (snprintf(rf->path, sizeof rf->path, "%s/%s", dir, e->d_name) >= (int)sizeof rf->path) {
            continue;
        }
        int fd = open(rf->path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? pread(fd, &rf->hdr, sizeof rf->hdr, 0) : -1;
        if (fd >= 0) {
            close(fd);
        }
        if (got != (ssize_t)sizeof rf->hdr || memcmp(rf->hdr.magic, RAW_MAGIC, 8) != 0 || rf->hdr.version != 1 ||
            rf->hdr.rec_size != sizeof(raw_rec_t)) {
            fprintf(stderr, "rtbench: %s is not a raw log of this recorder: skipped\n", rf->path);
            continue;
        }
        cnt++;
    }
    closedir(d);
    if (!ok) {
        free(v);
        return false;
    }
    qsort(v, cnt, sizeof *v, by_start);
    *out = v;
    *n = cnt;
    return true;
}

/* ---- the subcommand --------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The recorder: $RTALLOC_TRACE_LIB, else librtalloc-trace.so beside this executable (rttrace,
 * and an installed rtbench), else in ../trace/ (rtbench in its build directory). */
static bool find_recorder(char *path, size_t cap)
{
    const char *env = getenv(RAW_ENV_LIB);
    if (env != NULL && env[0] != '\0') {
        snprintf(path, cap, "%s", env);
    } else {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0) {
            return false;
        }
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
        }
        if (snprintf(path, cap, "%s/librtalloc-trace.so", exe) >= (int)cap) {
            return false;
        }
        if (access(path, R_OK) != 0 && snprintf(path, cap, "%s/../trace/librtalloc-trace.so", exe) >= (int)cap) {
            return false;
        }
    }
    return access(path, R_OK) == 0;
}

/* Runs argv (with the recorder when lib != NULL); returns its wait status, or -1. *wall: its
 * wall time; *cpu: the user + system time of it and the descendants it waited for (wait4). */
static int run_child(char **argv, const char *lib, const char *dir, double *wall, double *cpu)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("rtbench: fork");
        return -1;
    }
    if (pid == 0) {
        if (lib != NULL) {
            const char *old = getenv("LD_PRELOAD");
            size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
            char *pre = malloc(n);
            if (pre == NULL) {
                _exit(127);
            }
            snprintf(pre, n, "%s%s%s", lib, old && old[0] ? ":" : "", old ? old : "");
            setenv("LD_PRELOAD", pre, 1);
            setenv(RAW_ENV_DIR, dir, 1);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "rtbench: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    /* Ctrl-C goes to the program (same process group); the recording of what it did is kept. */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("rtbench: wait4");
            status = -1;
            break;
        }
    }
    sigaction(SIGINT, &old, NULL);
    *wall = now_s() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
    return status;
}

static int exit_code(int status)
{
    if (status < 0) {
        return 1;
    }
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

static void record_usage(FILE *f)
{
    fprintf(f,
            "usage: rtbench trace record [-o FILE] [--keep-raw] [--baseline] -- CMD ARGS...\n"
            "       rtbench trace record [-o FILE] --from-raw DIR\n"
            "  records every malloc-family call of CMD (and of its forked and exec'd children)\n"
            "  -o FILE      the trace file (default trace.rtt)\n"
            "  --keep-raw   keep the raw logs (printed path) after the conversion\n"
            "  --baseline   run CMD once without the recorder first: the overhead ratio\n"
            "  --from-raw DIR  run nothing: convert the raw logs in DIR (kept by --keep-raw)\n"
            "  env %s: the recorder library (default: beside rtbench)\n",
            RAW_ENV_LIB);
}

static void remove_raw(const char *dir, const rawfile_t *raw, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unlink(raw[i].path);
    }
    DIR *d = opendir(dir); /* logs the conversion skipped */
    if (d != NULL) {
        struct dirent *e;
        char p[PATH_MAX];
        while ((e = readdir(d)) != NULL) {
            if (strncmp(e->d_name, "raw-", 4) == 0) {
                if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p) {
                    unlink(p);
                }
            }
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Converts every raw log of dir into f (f->command already set), saves it to out and loads it
 * back (tr_load checks the order the conversion promises). *raw: the logs read (to delete). */
static bool convert_dir(const char *dir, const char *out, tr_file_t *f, totals_t *tot, rawfile_t **raw, size_t *nraw)
{
    memset(tot, 0, sizeof *tot);
    *raw = NULL;
    *nraw = 0;
    bool ok = list_raw(dir, raw, nraw);
    if (ok) {
        f->streams = calloc(*nraw ? *nraw : 1u, sizeof *f->streams);
        ok = f->streams != NULL;
    }
    for (size_t s = 0; ok && s < *nraw; s++) {
        ok = convert_file(&(*raw)[s], &f->streams[s], tot);
        f->nstreams += ok;
    }
    char err[512];
    if (ok && !tr_save(out, f, err, sizeof err)) {
        fprintf(stderr, "rtbench: %s\n", err);
        ok = false;
    }
    tr_file_t back;
    if (ok && !tr_load(out, &back, err, sizeof err)) {
        fprintf(stderr, "rtbench: the trace written does not load back (a bug): %s\n", err);
        ok = false;
    } else if (ok) {
        tr_release(&back);
    }
    return ok;
}

static void print_summary(const tr_file_t *f, const totals_t *tot, const char *out)
{
    struct stat sb;
    long long bytes = stat(out, &sb) == 0 ? (long long)sb.st_size : -1;
    uint64_t ops = 0, threads = 0, failed = 0, foreign = 0;
    if (f->nstreams == 0) {
        printf("  nothing recorded: a static executable, a set-user-ID one, or one that drops LD_PRELOAD?\n");
    }
    for (size_t s = 0; s < f->nstreams; s++) {
        const tr_stream_t *st = &f->streams[s];
        ops += st->trace.nops;
        threads += st->threads;
        failed += st->failed;
        foreign += st->foreign;
        printf("  stream %zu: pid %u '%.60s'%s: %zu ops, %u slots, %u threads, %llu failed, %llu foreign, "
               "peak live %llu B\n",
               s, (unsigned)st->pid, st->command, strstr(st->trace.params, "forked") ? " (forked)" : "", st->trace.nops,
               (unsigned)st->trace.slots, (unsigned)st->threads, (unsigned long long)st->failed,
               (unsigned long long)st->foreign, (unsigned long long)st->trace.peak_live);
    }
    printf("  %zu streams, %llu ops from %llu records: malloc %llu, free %llu, realloc %llu, calloc %llu, "
           "memalign %llu; threads %llu, failed %llu, foreign frees %llu\n",
           f->nstreams, (unsigned long long)ops, (unsigned long long)tot->records,
           (unsigned long long)tot->per_kind[WL_MALLOC], (unsigned long long)tot->per_kind[WL_FREE],
           (unsigned long long)tot->per_kind[WL_REALLOC], (unsigned long long)tot->per_kind[WL_CALLOC],
           (unsigned long long)tot->per_kind[WL_MEMALIGN], (unsigned long long)threads, (unsigned long long)failed,
           (unsigned long long)foreign);
    if (tot->too_large) {
        printf("  %llu calls above 4 GiB - 1: flagged failed, their blocks left out (not replayable)\n",
               (unsigned long long)tot->too_large);
    }
    if (tot->order_errors || tot->unpaired) {
        printf("  WARNING: %llu ordering errors, %llu unfinished reallocs (a recorder bug, or a process "
               "killed mid-call)\n",
               (unsigned long long)tot->order_errors, (unsigned long long)tot->unpaired);
    }
    printf("  wrote %s (%lld bytes)\n", out, bytes);
}

/* --from-raw DIR: the conversion alone, of logs kept by --keep-raw (or written by a test). The
 * logs stay. */
static int convert_only(const char *dir, const char *out)
{
    tr_file_t f;
    memset(&f, 0, sizeof f);
    snprintf(f.command, sizeof f.command, "(raw logs of %s)", dir);
    rawfile_t *raw = NULL;
    size_t nraw = 0;
    totals_t tot;
    bool ok = convert_dir(dir, out, &f, &tot, &raw, &nraw);
    if (ok) {
        printf("trace record: %s\n", f.command);
        print_summary(&f, &tot, out);
    }
    free(raw);
    tr_release(&f);
    return ok ? 0 : 1;
}

/* The options of trace record. */
typedef struct record_opts {
    const char *out, *from_raw;
    bool keep_raw, baseline;
} record_opts_t;

/* Reads the options before the command into o and *cmd_at (the index of the command). Returns
 * -1 to go on, else the exit status to return (0 after --help, 2 on a bad argument). */
static int record_args(int argc, char **argv, record_opts_t *o, int *cmd_at)
{
    int i = 0;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            o->out = argv[++i];
        } else if (strcmp(argv[i], "--keep-raw") == 0) {
            o->keep_raw = true;
        } else if (strcmp(argv[i], "--baseline") == 0) {
            o->baseline = true;
        } else if (strcmp(argv[i], "--from-raw") == 0 && i + 1 < argc) {
            o->from_raw = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            record_usage(stdout);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "rtbench: trace record: bad argument '%s'\n", argv[i]);
            record_usage(stderr);
            return 2;
        } else {
            break; /* the command, without "--" */
        }
    }
    *cmd_at = i;
    return -1;
}

/* Creates the raw-log directory beside out, as an absolute path in dir. False (with a message)
 * on failure. */
static bool make_raw_dir(const char *out, char dir[PATH_MAX])
{
    /* The raw logs go beside the output (same file system, the user's choice of space). */
    const char *slash = strrchr(out, '/');
    if (slash != NULL) {
        snprintf(dir, PATH_MAX, "%.*s/.rtbench-raw-XXXXXX", (int)(slash - out), out);
    } else {
        snprintf(dir, PATH_MAX, ".rtbench-raw-XXXXXX");
    }
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "rtbench: cannot create %s: %s\n", dir, strerror(errno));
        return false;
    }
    /* Absolute: the program may chdir before it forks or execs an image that opens its log. */
    char absdir[PATH_MAX];
    if (realpath(dir, absdir) == NULL) {
        fprintf(stderr, "rtbench: cannot resolve %s: %s\n", dir, strerror(errno));
        rmdir(dir);
        return false;
    }
    memcpy(dir, absdir, PATH_MAX);
    return true;
}

/* Writes cmd into f->command, space-separated, control characters turned into spaces. */
static void set_command(tr_file_t *f, char **cmd)
{
    size_t k = 0;
    for (char **a = cmd; *a != NULL && k + 1 < sizeof f->command; a++) {
        k += (size_t)snprintf(f->command + k, sizeof f->command - k, "%s%s", a == cmd ? "" : " ", *a);
    }
    for (k = 0; f->command[k] != '\0'; k++) {
        f->command[k] = (unsigned char)f->command[k] < 0x20u ? ' ' : f->command[k];
    }
}

/* Times of a recorded run (and of the baseline run without the recorder, if any). */
typedef struct run_times {
    double base_wall, wall, base_cpu, cpu, conv;
} run_times_t;

/* Prints the run's exit status and times, then the summary of the converted trace. */
static void print_run(const tr_file_t *f, const totals_t *tot, const char *out, int code, bool baseline,
                      const run_times_t *t)
{
    printf("trace record: %s\n", f->command);
    printf("  program exit status %d; with the recorder: wall %.3f s, cpu %.3f s", code, t->wall, t->cpu);
    if (baseline) {
        printf("; without: wall %.3f s, cpu %.3f s; overhead x%.2f wall, x%.2f cpu", t->base_wall, t->base_cpu,
               t->base_wall > 0 ? t->wall / t->base_wall : 0.0, t->base_cpu > 0 ? t->cpu / t->base_cpu : 0.0);
    }
    printf("; conversion %.3f s\n", t->conv);
    print_summary(f, tot, out);
}

/* Runs cmd under the recorder (after a baseline run without it if asked), timing both into t.
 * Returns the recorded run's exit code. */
static int run_program(char **cmd, const char *lib, const char *dir, bool baseline, run_times_t *t)
{
    if (baseline) {
        int bs = run_child(cmd, NULL, NULL, &t->base_wall, &t->base_cpu);
        if (exit_code(bs) != 0) {
            fprintf(stderr, "rtbench: note: the baseline run exited with status %d\n", exit_code(bs));
        }
    }
    fflush(stdout);
    fflush(stderr);
    int status = run_child(cmd, lib, dir, &t->wall, &t->cpu);
    return exit_code(status);
}

int trace_record(int argc, char **argv)
{
    record_opts_t o = {.out = "trace.rtt", .from_raw = NULL, .keep_raw = false, .baseline = false};
    int i = 0;
    int rc = record_args(argc, argv, &o, &i);
    if (rc >= 0) {
        return rc;
    }
    const char *out = o.out;
    if (o.from_raw != NULL) {
        return convert_only(o.from_raw, out);
    }
    if (i >= argc) {
        record_usage(stderr);
        return 2;
    }
    char **cmd = argv + i;
    char lib[PATH_MAX];
    if (!find_recorder(lib, sizeof lib)) {
        fprintf(stderr, "rtbench: no recorder at %s (build target rtalloc-trace, or set %s)\n", lib, RAW_ENV_LIB);
        return 2;
    }
    char dir[PATH_MAX];
    if (!make_raw_dir(out, dir)) {
        return 1;
    }
    tr_file_t f;
    memset(&f, 0, sizeof f);
    set_command(&f, cmd);

    run_times_t t = {0, 0, 0, 0, 0};
    int code = run_program(cmd, lib, dir, o.baseline, &t);

    double c0 = now_s();
    rawfile_t *raw = NULL;
    size_t nraw = 0;
    totals_t tot;
    bool ok = convert_dir(dir, out, &f, &tot, &raw, &nraw);
    t.conv = now_s() - c0;
    if (ok) {
        print_run(&f, &tot, out, code, o.baseline, &t);
    }
    if (ok && !o.keep_raw) {
        remove_raw(dir, raw, nraw);
    } else {
        fprintf(stderr, "rtbench: raw logs kept in %s\n", dir);
    }
    free(raw);
    tr_release(&f);
    if (!ok) {
        fprintf(stderr, "rtbench: trace record: conversion failed\n");
        return code != 0 ? code : 1;
    }
    return code;
}
