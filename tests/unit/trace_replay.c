/* SPDX-License-Identifier: MIT */
/*
 * trace_replay.c -- the replay and sizing of recorded traces (trace/replay.c),
 * on traces whose answers are known:
 *   - a hand-written trace of every op kind (malloc, realloc, calloc, memalign, free, and a
 *     malloc flagged WL_OP_FAILED): live peak 550 bytes; the buddy's bound (r+1)M+2B = 5120
 *     (blocks 128, 512, 64, 256: b = 64, B = 512, r = 3; the block peak 832, held when the
 *     memalign's 256 joins 512 + 64, rounded to M = 1024); every registry allocator replays
 *     it without a failure beyond the flagged one; the instruction counter counts exactly one
 *     call of each kind and the three frees, through the descriptor's realloc, calloc and
 *     memalign;
 *   - a synthetic realloc-heavy trace (rp_synth, seed 7): sized at a resolution of one byte,
 *     the found size fits (twice: verified) and one byte less does not -- the bisection's
 *     answer is exactly the boundary -- for tlsf, buddy and a first-fit list; a heap half that
 *     size fails (the replay reports failures); and, where trace files are supported (the
 *     recorder's trace.c), the file written by tr_save and read by tr_load replays the same;
 *   - glibc's memory on the synthetic trace (bench/harness/glibcmem.h, where glibc >= 2.33 is
 *     the malloc): in a process of its own its arena is new, no call fails, the footprint and
 *     the peak of live chunk bytes are at least the live peak, even after an in-process replay
 *     left an arena for the child to inherit, and a second child reads the same footprint; in
 *     this process, the same peak of live chunk bytes and no footprint sampled.
 *   - what a replay needs (rp_need): on the hand-written trace (live peak 550, a flagged 3 GiB
 *     malloc: heap 64 MiB; replay 128 MiB, + 550 + 3 GiB with a system peer; size 256 MiB +
 *     550 + 3 GiB) and on 300 live 4 GiB mallocs (heap 8 x 1.2 TiB, rounded to 1 MiB), worked
 *     out without mapping anything; the parser and the printer of --max-memory sizes.
 * `trace_replay --write FILE` writes the synthetic trace as a file (a fixture generator).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver.h"
#include "glibcmem.h"
#include "inscount.h"
#include "peers.h"
#include "replay.h"
#include "testlib.h"

static wl_op_t hand_ops[] = {
    {0, 100, WL_MALLOC},
    {0, 300, WL_REALLOC},
    {1, 50, WL_CALLOC},
    {2, 200, WL_MEMALIGN | (6u << 8)}, /* 64-byte alignment */
    {3, 3u << 30, WL_MALLOC | WL_OP_FAILED},
    {1, 0, WL_FREE},
    {0, 0, WL_FREE},
    {2, 0, WL_FREE},
};

static void hand_trace(wl_trace_t *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "hand");
    t->slots = 4;
    t->ops = hand_ops;
    t->nops = sizeof hand_ops / sizeof hand_ops[0];
    rp_finish_trace(t);
}

enum { BUF = 64u << 20 };

static void check_hand(void *buf)
{
    wl_trace_t t;
    hand_trace(&t);
    TL_CHECK(rp_peak_live(&t) == 550u, "live peak %llu, expected 550", (unsigned long long)rp_peak_live(&t));
    TL_CHECK(t.nmalloc == 4u && t.nfree == 3u, "%zu allocating, %zu frees", t.nmalloc, t.nfree);
    const rt_allocator_t *buddy = rt_registry_find("buddy");
    double bound = 0.0;
    char formula[160];
    TL_CHECK(buddy != NULL && rp_bound(buddy, &t, &bound, formula, sizeof formula) && bound == 5120.0,
             "buddy bound %.0f (%s), expected 5120", bound, formula);
    const rt_allocator_t *tlsf = rt_registry_find("tlsf");
    TL_CHECK(tlsf != NULL && !rp_bound(tlsf, &t, &bound, formula, sizeof formula), "tlsf has no bound");

    size_t n = 0;
    const rt_allocator_t *const *all = rt_registry(&n);
    for (size_t k = 0; k < n; k++) {
        size_t fail = 0;
        TL_CHECK(rp_fits(all[k], buf, BUF, &t, &fail), "%s: op %zu failed", all[k]->name, fail);
        /* the slots after the replay: calloc's block is zeroed beyond its first byte */
        drv_instance_t in;
        if (drv_open(&in, all[k], buf, BUF, t.slots, false)) {
            for (size_t i = 0; i < 3; i++) {
                drv_apply(&in, &t.ops[i], i);
            }
            const unsigned char *c = in.slots[1];
            bool zero = c != NULL;
            for (size_t i = 1; zero && i < 50; i++) {
                zero = c[i] == 0;
            }
            TL_CHECK(zero, "%s: calloc through the replay is not zeroed", all[k]->name);
            TL_CHECK(in.slots[0] != NULL, "%s: realloc left its slot empty", all[k]->name);
            TL_CHECK(drv_apply(&in, &t.ops[3], 3) && ((uintptr_t)in.slots[2] & 63u) == 0u,
                     "%s: memalign(64) through the replay: %p", all[k]->name, in.slots[2]);
            TL_CHECK(drv_apply(&in, &t.ops[4], 4) == false && in.slots[3] == NULL, "%s: the flagged 3 GiB malloc",
                     all[k]->name);
            drv_close(&in);
        }
    }
    if (!ic_supported()) {
        tl_skip("instruction counts need Linux on x86-64");
        return;
    }
    rp_replay_t r;
    memset(&r, 0, sizeof r);
    rp_count(tlsf, buf, BUF, &t, 0, &r, NULL, NULL);
    TL_CHECK(r.ic_ok, "tlsf: counting failed");
    static const size_t expect[RP_KINDS] = {1, 3, 1, 1, 1};
    for (unsigned k = 0; k < RP_KINDS; k++) {
        TL_CHECK(r.kind[k].n == expect[k] && (r.kind[k].n == 0 || r.kind[k].mean > 0.0),
                 "tlsf %s: %zu calls counted (expected %zu), mean %.1f", rp_kind_name[k], r.kind[k].n, expect[k],
                 r.kind[k].mean);
    }
    TL_CHECK(r.all.n == 7u && r.worst_count == r.all.max && r.worst_op < t.nops, "7 calls, worst op %zu: %u",
             r.worst_op, r.worst_count);
}

static void check_size(void *buf, const wl_trace_t *t, const char *name)
{
    const rt_allocator_t *a = rt_registry_find(name);
    if (a == NULL) {
        tl_skip("%s not in this build", name);
        return;
    }
    rp_size_opts_t o = {1, 0.0, BUF, 3, NULL, NULL};
    rp_size_t s;
    rp_size(a, buf, t, &o, &s);
    TL_CHECK(s.found && s.verified && s.resolution == 1u, "%s: found %d verified %d resolution %zu", name, s.found,
             s.verified, s.resolution);
    size_t fail = 0;
    TL_CHECK(rp_fits(a, buf, s.heap, t, &fail), "%s: %zu bytes do not fit (op %zu)", name, s.heap, fail);
    TL_CHECK(!rp_fits(a, buf, s.heap - 1u, t, &fail), "%s: %zu - 1 bytes fit too", name, s.heap);
    TL_CHECK(s.heap >= rp_peak_live(t), "%s: %zu below the live peak %llu", name, s.heap,
             (unsigned long long)rp_peak_live(t));
    printf("%-8s heap needed %zu bytes for a live peak of %llu (%.3f), %u replays, %u non-monotone above\n", name,
           s.heap, (unsigned long long)rp_peak_live(t), (double)s.heap / (double)rp_peak_live(t), s.replays, s.nonmono);
    /* half the heap: the replay counts failures (the flagged op not among them) */
    drv_instance_t in;
    if (drv_open(&in, a, buf, s.heap / 2u, t->slots, false)) {
        uint64_t ns = 0;
        drv_outcome_t out = drv_replay_untimed(&in, t, &ns);
        TL_CHECK(out.failures > 0u, "%s: no failure on half the heap", name);
        drv_close(&in);
    }
}

static void check_glibc(const wl_trace_t *t)
{
    if (!gm_available()) {
        tl_skip("glibcmem: glibc >= 2.33 is not the malloc here");
        return;
    }
    uint64_t peak = rp_peak_live(t);
    gm_result_t g, h, g2;
    /* in process first: its thread leaves an arena on glibc's free list, which the children
     * inherit -- their replay must still get a new arena (glibcmem parks a thread on it) */
    TL_CHECK(gm_replay(&bench_glibc, t, NULL, false, &h) && h.failures == 0u && h.footprint == 0u,
             "glibcmem: in-process replay (failures %zu, footprint %llu: not sampled)", h.failures,
             (unsigned long long)h.footprint);
    TL_CHECK(gm_replay(&bench_glibc, t, NULL, true, &g), "glibcmem: the child's replay failed");
    TL_CHECK(g.fresh, "glibcmem: the child's replay did not get a new arena");
    TL_CHECK(g.failures == 0u, "glibcmem: %zu failures", g.failures);
    TL_CHECK(g.footprint >= peak && g.peak_used >= peak && g.span >= peak,
             "glibcmem: footprint %llu, peak used %llu, span %llu under the live peak %llu",
             (unsigned long long)g.footprint, (unsigned long long)g.peak_used, (unsigned long long)g.span,
             (unsigned long long)peak);
    TL_CHECK(h.peak_used == g.peak_used, "glibcmem: in process, peak used %llu (child %llu)",
             (unsigned long long)h.peak_used, (unsigned long long)g.peak_used);
    TL_CHECK(gm_replay(&bench_glibc, t, NULL, true, &g2) && g2.fresh && g2.footprint == g.footprint,
             "glibcmem: a second child, footprint %llu (first %llu)", (unsigned long long)g2.footprint,
             (unsigned long long)g.footprint);
    printf("glibc    footprint %llu bytes for a live peak of %llu (%.3f), live chunks' peak %llu, span %llu\n",
           (unsigned long long)g.footprint, (unsigned long long)peak, peak ? (double)g.footprint / (double)peak : 0.0,
           (unsigned long long)g.peak_used, (unsigned long long)g.span);
}

static void check_need(void)
{
    const uint64_t mib = 1u << 20, gib = (uint64_t)1 << 30;
    wl_trace_t t;
    hand_trace(&t);
    rp_need_t n;
    rp_need(&t, false, &n);
    TL_CHECK(n.peak == 550u && n.largest == 3u * gib && n.heap == 64u * mib && n.replay == 128u * mib &&
                 n.size == 256u * mib + 550u + 3u * gib,
             "hand: peak %llu largest %llu heap %llu replay %llu size %llu", (unsigned long long)n.peak,
             (unsigned long long)n.largest, (unsigned long long)n.heap, (unsigned long long)n.replay,
             (unsigned long long)n.size);
    rp_need(&t, true, &n);
    TL_CHECK(n.replay == 128u * mib + 550u + 3u * gib, "hand with a peer: replay %llu", (unsigned long long)n.replay);
    TL_CHECK(rp_replay_heap(&t) == 64u * mib, "hand: replay heap %zu", rp_replay_heap(&t));
    /* 300 live mallocs of 4 GiB - 1: nothing mapped, the figures from the ops */
    static wl_op_t big[300];
    for (uint32_t i = 0; i < 300; i++) {
        big[i] = (wl_op_t){i, UINT32_MAX, WL_MALLOC};
    }
    memset(&t, 0, sizeof t);
    t.ops = big;
    t.nops = 300;
    t.slots = 300;
    rp_finish_trace(&t);
    rp_need(&t, true, &n);
    uint64_t peak = 300u * (uint64_t)UINT32_MAX, heap = (8u * peak + mib - 1u) / mib * mib;
    TL_CHECK(n.peak == peak && n.largest == UINT32_MAX && n.heap == heap && n.replay == 2u * heap + peak + UINT32_MAX &&
                 n.size == 4u * heap + peak + UINT32_MAX,
             "300 x 4 GiB: heap %llu replay %llu size %llu", (unsigned long long)n.heap, (unsigned long long)n.replay,
             (unsigned long long)n.size);
    TL_CHECK(n.heap > ((uint64_t)9 << 40), "300 x 4 GiB: the heap is above 9 TiB");

    static const struct {
        const char *s;
        uint64_t v; /* 0: refused */
    } sizes[] = {
        {"1", 1},
        {"4096", 4096},
        {"16K", 16384},
        {"16k", 16384},
        {"128M", 128u * mib},
        {"3G", 3u * gib},
        {"64T", (uint64_t)64 << 40},
        {"16777215T", (uint64_t)16777215 << 40},
        {"18446744073709551615", UINT64_MAX},
        {"16777216T", 0}, /* 2^64 */
        {"18446744073709551616", 0},
        {"0", 0},
        {"0K", 0},
        {"", 0},
        {"K", 0},
        {"1.5G", 0},
        {"12Q", 0},
        {"12GB", 0},
        {"-1", 0},
        {" 1", 0},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t v = 0;
        bool ok = rp_parse_size(sizes[i].s, &v);
        TL_CHECK(sizes[i].v != 0u ? ok && v == sizes[i].v : !ok, "rp_parse_size(\"%s\"): %s %llu", sizes[i].s,
                 ok ? "took" : "refused", (unsigned long long)v);
    }
    char out[32];
    rp_format_size(out, sizeof out, 1023u);
    TL_CHECK(strcmp(out, "1023 B") == 0, "%s", out);
    rp_format_size(out, sizeof out, 128u * mib);
    TL_CHECK(strcmp(out, "128.0 MiB") == 0, "%s", out);
    rp_format_size(out, sizeof out, heap);
    TL_CHECK(strcmp(out, "9.4 TiB") == 0, "%s", out);
    rp_format_size(out, sizeof out, UINT64_MAX);
    TL_CHECK(strcmp(out, "16.0 EiB") == 0, "%s", out);
}

int main(int argc, char **argv)
{
    if (argc == 3 && (strcmp(argv[1], "--write") == 0 || strcmp(argv[1], "--write-empty") == 0)) {
        /* the fixture generator: the synthetic trace as a file, for `rtbench trace replay|size|advise`;
         * --write-empty: a valid trace whose one stream makes no call at all */
        tr_file_t w;
        char werr[256] = "out of memory";
        bool empty = strcmp(argv[1], "--write-empty") == 0;
        bool ok = rp_synth(&w, 7, empty ? 1u : 4000u, empty ? 1u : 64u);
        if (ok && empty) { /* one malloc that got nothing: a stream with no allocation */
            wl_trace_t *t = &w.streams[0].trace;
            t->ops[0] = (wl_op_t){.slot = 0, .size = 1u << 30, .kind = WL_MALLOC | WL_OP_FAILED};
            t->slots = 1;
            w.streams[0].failed = 1;
            rp_finish_trace(t);
        }
        ok = ok && tr_save(argv[2], &w, werr, sizeof werr);
        if (!ok) {
            fprintf(stderr, "trace_replay --write: %s\n", werr);
        }
        tr_release(&w);
        return ok ? 0 : 1;
    }
    void *buf = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        return 1;
    }
    check_hand(buf);
    check_need();
    tr_file_t f;
    if (!rp_synth(&f, 7, 4000, 64)) {
        return 1;
    }
    const wl_trace_t *t = &f.streams[0].trace;
    size_t kinds[RP_KINDS] = {0};
    for (size_t i = 0; i < t->nops; i++) {
        kinds[WL_OP_KIND(&t->ops[i]) % RP_KINDS]++;
    }
    TL_CHECK(kinds[WL_REALLOC] > 500u && kinds[WL_CALLOC] > 100u && kinds[WL_MEMALIGN] > 50u,
             "synthetic mix: %zu realloc, %zu calloc, %zu memalign", kinds[WL_REALLOC], kinds[WL_CALLOC],
             kinds[WL_MEMALIGN]);
    check_size(buf, t, "tlsf");
    check_size(buf, t, "buddy");
    check_size(buf, t, "firstfit");
    check_glibc(t);

    char path[] = "/tmp/rtalloc-trace-test-XXXXXX";
    int fd = mkstemp(path);
    char err[256];
    if (fd >= 0 && tr_save(path, &f, err, sizeof err)) {
        tr_file_t g;
        TL_CHECK(tr_load(path, &g, err, sizeof err), "tr_load: %s", err);
        if (g.nstreams == 1) {
            const wl_trace_t *u = &g.streams[0].trace;
            TL_CHECK(u->nops == t->nops && memcmp(u->ops, t->ops, t->nops * sizeof *t->ops) == 0,
                     "the saved trace reads back different");
            TL_CHECK(rp_peak_live(u) == rp_peak_live(t), "live peak after the round trip");
            tr_release(&g);
        }
    } else {
        tl_skip("trace files: %s", fd >= 0 ? err : "mkstemp failed");
    }
    if (fd >= 0) {
        unlink(path);
    }
    tr_release(&f);
    munmap(buf, BUF);
    return tl_summary("trace_replay");
}
