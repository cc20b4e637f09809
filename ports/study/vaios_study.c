/* SPDX-License-Identifier: MIT */
/*
 * ports/study/vaios_study.c -- the VaiOS blog's study (sections 7-10) and its open thread
 * (section 12, interrupt latency) on the emulated boards, for every allocator of the registry.
 *
 * Built for both ports (ports/CMakeLists.txt: vaios_study.elf); run by tools/target-bench.sh
 * (twice, outputs compared byte for byte) and, cut down, by ctest (study_<port>). The operations
 * come from the host benchmark's own generators (workloads/workload.c, compiled unchanged against the
 * port's C library): the same code and the same seed give every backend, host and target alike,
 * the same trace.
 *
 * Every count is an exact number of executed instructions (port_count_begin/end, verified by
 * port_require_counter before anything is reported): instructions, not cycles. Parts:
 *
 *   mem_stress (STUDY_MEMSTRESS): wl_memstress(seed 42), 1,200 operations, live set <= 48, on a
 *     32 KiB heap per allocator with the port's interrupt-masking lock hooks installed (what a
 *     firmware would run). One line per operation in the blog's format,
 *         @MS,<seq>,<A|F|O>,<size>,<instructions>,<probes>,<live>,<bytes_in_use>
 *     after a "# allocator NAME" line; then a second pass of the same trace on a fresh instance
 *     with the counting lock hooks (below): @MK,<seq>,<masked>,<sections> per operation.
 *   mem_frag (STUDY_MEMFRAG): for N = 1..STUDY_MEMFRAG_NMAX on a fresh 256 KiB instance each:
 *     wl_memfrag(N) (N x {malloc(72); malloc(8)}, free the 72s, malloc(120)), then the free of
 *     the malloc(120)'s block:
 *         @MF,<N>,<malloc instr>,<malloc probes>,<free instr>,<malloc masked>,<free masked>,<setup masked max>
 *   worst (STUDY_WORST): Masmano's adversarial workloads (wl_worst: memfrag N = 1000 and 4000,
 *     cascade, consolidate N = 4000, splitmerge) on a fresh 2 MiB instance, every operation
 *     counted (instructions with the port's hooks; masked stretch with the counting hooks):
 *         @WC,<scenario>,<ops>,<oom>,<max malloc instr measured>,<max free instr measured>,
 *             <max malloc instr any op>,<max free instr any op>,<max masked measured>,<max masked any op>
 *
 *   realloc (STUDY_REALLOC): the slide of a boundary-tag heap's realloc (a block grown into its free
 *     predecessor), for blocks of 64 B to 16 KiB, each on a fresh 2 MiB instance with the counting
 *     hooks: [free S][b: S bytes][used] and realloc(b, S + S/2) moves b's payload down. The copy
 *     is made with the lock released, so the longest masked stretch must not grow with S:
 *         @RS,<allocator>,<S>,<slid: 1 or 0>,<instructions of the call>,<longest masked>,<sections>
 *
 * The header: "@META,<key>,<value>" lines (the port, the counter's unit and self-check, the hooks'
 * costs, the seed, the trace's FNV-1a hash) and one "@ALLOC|<name>|<malloc bound>|<free bound>|<lock
 * hooks or lock-free>" line per allocator; "@END" closes a complete output.
 *
 * The masked stretch. The counting hooks wrap port_lock_hook/port_unlock_hook: the lock masks
 * (port_lock_hook) and then starts a count, the unlock ends it and then unmasks; nested sections
 * count as the outermost. What the two reads enclose beyond the allocator's own instructions (the
 * wrappers' tails and heads) is calibrated on a call sequence of known length (calibrate()), so a
 * reported section is exactly the instructions the allocator executes from its lock hook's return
 * to its call of the unlock hook, inclusive. The hooks' own masked instructions (after the mask
 * in port_lock_hook, up to and including the unmask in port_unlock_hook) are a fixed count per
 * port, STUDY_HOOK_MASKED, printed in the header and added by the report. An allocator without
 * lock hooks (the wait-free trees) masks nothing: its lines say "lock-free".
 */
#include "port_libc.h"

#include "rtalloc/registry.h"
#include "workload.h"

#ifndef STUDY_MEMSTRESS
#define STUDY_MEMSTRESS 1
#endif
#ifndef STUDY_MEMFRAG
#define STUDY_MEMFRAG 1
#endif
#ifndef STUDY_WORST
#define STUDY_WORST 1
#endif
#ifndef STUDY_REALLOC
#define STUDY_REALLOC 1
#endif
#ifndef STUDY_MEMFRAG_NMAX
#define STUDY_MEMFRAG_NMAX 256
#endif
#ifndef STUDY_SEED
#define STUDY_SEED 42u
#endif

enum {
    MS_HEAP = 32 * 1024,
    MF_HEAP = 256 * 1024,
    WC_HEAP = 2 * 1024 * 1024,
};

/* The hooks' own instructions with interrupts masked (see the disassembly of port_arch.c):
 *   Cortex-M4: lock "mrs r0, primask; cpsid i; bx lr" -> bx lr; unlock "msr primask, r1; bx lr" -> msr.
 *   RV32: lock "csrrci a0, mstatus, 8; andi a0, a0, 8; ret" -> andi, ret; unlock "csrs mstatus, a1; ret" -> csrs. */
#if defined(__arm__)
#define STUDY_HOOK_MASKED 2u
#elif defined(__riscv)
#define STUDY_HOOK_MASKED 3u
#else
#error "vaios_study: no port for this architecture"
#endif

/* --- the counting lock hooks ------------------------------------------------------------------- */

static uint32_t mk_depth;       /* nesting of the sections in progress */
static port_count_t mk_t0;      /* count at the outermost lock */
static uint32_t mk_last;        /* the last outermost section, raw (wrappers included) */
static uint32_t mk_op_max;      /* longest section of the current operation, raw */
static uint32_t mk_op_sections; /* outermost sections of the current operation */
static uint32_t mk_wrap;        /* the wrappers' own instructions inside a raw count (calibrate) */

uintptr_t study_mk_lock(void *context);
void study_mk_unlock(void *context, uintptr_t token);

__attribute__((noinline, used)) uintptr_t study_mk_lock(void *context)
{
    uintptr_t token = port_lock_hook(context);
    if (mk_depth++ == 0u) {
        mk_t0 = port_count_begin();
    }
    return token;
}

__attribute__((noinline, used)) void study_mk_unlock(void *context, uintptr_t token)
{
    if (--mk_depth == 0u) {
        uint32_t n = port_count_end(mk_t0);
        mk_last = n;
        mk_op_sections++;
        if (n > mk_op_max) {
            mk_op_max = n;
        }
    }
    port_unlock_hook(context, token);
}

static void mk_begin_op(void)
{
    mk_op_max = 0;
    mk_op_sections = 0;
}

/* The allocator's part of the longest section of the operation (0 when it took none). */
static uint32_t mk_op_masked(void) { return mk_op_sections == 0u ? 0u : mk_op_max - mk_wrap; }

/* Calls the counting hooks around exactly 3 instructions (set up the unlock's arguments, call
 * it): the raw count minus 3 is what the wrappers themselves put inside every count. */
static uint32_t calibrate(void)
{
    mk_last = 0;
#if defined(__arm__)
    __asm__ __volatile__("movs r0, #0\n\t"
                         "bl study_mk_lock\n\t"
                         "mov r1, r0\n\t"
                         "movs r0, #0\n\t"
                         "bl study_mk_unlock\n\t"
                         :
                         :
                         : "r0", "r1", "r2", "r3", "r12", "lr", "cc", "memory");
#else
    __asm__ __volatile__("li a0, 0\n\t"
                         "jal ra, study_mk_lock\n\t"
                         "mv a1, a0\n\t"
                         "li a0, 0\n\t"
                         "jal ra, study_mk_unlock\n\t"
                         :
                         :
                         : "ra", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
                           "a7", "memory");
#endif
    return mk_last;
}

/* --- replay ------------------------------------------------------------------------------------ */

typedef enum hooks_mode { HOOKS_PORT, HOOKS_COUNTING } hooks_mode_t;

static void *open_instance(const rt_allocator_t *d, void *buf, size_t size, hooks_mode_t mode)
{
    void *h = d->create(buf, size);
    if (h == NULL) {
        port_printf("study: %s: create over %lu bytes failed\n", d->name, (unsigned long)size);
        port_exit(1);
    }
    if (d->set_lock != NULL) {
        if (mode == HOOKS_PORT) {
            d->set_lock(h, port_lock_hook, port_unlock_hook, NULL);
        } else {
            d->set_lock(h, study_mk_lock, study_mk_unlock, NULL);
        }
    }
    return h;
}

/* One operation of a trace on slot table `slots`: its instructions in *instr (0 when no call was
 * made: the free of an empty slot), probes of a malloc in *probes. Returns 'A', 'F', 'O' or 0 (no
 * call). */
static char apply(const rt_allocator_t *d, void *h, void **slots, const wl_op_t *op, uint32_t *instr, uint32_t *probes)
{
    *instr = 0;
    *probes = 0;
    if (op->kind == WL_MALLOC) {
        void *p;
        size_t size = op->size;
        port_count_t t0 = port_count_begin();
        p = d->malloc(h, size);
        *instr = port_count_end(t0);
        if (d->last_probes != NULL) {
            *probes = d->last_probes(h);
        }
        slots[op->slot] = p;
        return p != NULL ? 'A' : 'O';
    }
    void *p = slots[op->slot];
    if (p == NULL) {
        return 0;
    }
    port_count_t t0 = port_count_begin();
    d->free(h, p);
    *instr = port_count_end(t0);
    slots[op->slot] = NULL;
    return 'F';
}

static void **slot_table(uint32_t n)
{
    void **s = calloc(n, sizeof *s);
    if (s == NULL) {
        port_panic("study: no memory for a slot table");
    }
    return s;
}

/* --- mem_stress -------------------------------------------------------------------------------- */

static void memstress(const rt_allocator_t *const *all, size_t count, unsigned char *buf)
{
    wl_trace_t t;
    if (!wl_memstress(&t, STUDY_SEED)) {
        port_panic("study: wl_memstress");
    }
    uint32_t hash = 2166136261u; /* FNV-1a over (kind, slot, size) of every op: the trace's identity */
    for (size_t i = 0; i < t.nops; i++) {
        uint32_t w[3] = {t.ops[i].kind, t.ops[i].slot, t.ops[i].size};
        for (int k = 0; k < 3; k++) {
            for (int b = 0; b < 4; b++) {
                hash = (hash ^ ((w[k] >> (8 * b)) & 0xFFu)) * 16777619u;
            }
        }
    }
    port_printf("@META,memstress_trace,%s; seed %lu; %lu mallocs %lu frees; fnv1a %08lx\n", t.params,
                (unsigned long)t.seed, (unsigned long)t.nmalloc, (unsigned long)t.nfree, (unsigned long)hash);
    port_printf("@META,memstress_heap,%u\n", (unsigned)MS_HEAP);
    char *kinds = malloc(t.nops);
    uint32_t *probes = malloc(t.nops * sizeof *probes);
    void **slots = slot_table(t.slots);
    if (kinds == NULL || probes == NULL) {
        port_panic("study: no memory for mem_stress");
    }
    for (size_t k = 0; k < count; k++) {
        const rt_allocator_t *d = all[k];
        port_printf("# allocator %s\n", d->name);
        void *h = open_instance(d, buf, MS_HEAP, HOOKS_PORT);
        memset(slots, 0, t.slots * sizeof *slots);
        uint32_t live = 0;
        size_t requested = 0;
        size_t *sizes = calloc(t.slots, sizeof *sizes);
        for (size_t i = 0; i < t.nops; i++) {
            const wl_op_t *op = &t.ops[i];
            uint32_t n, p;
            char c = apply(d, h, slots, op, &n, &p);
            if (c == 'A') {
                live++;
                requested += op->size;
                sizes[op->slot] = op->size;
            } else if (c == 'F') {
                live--;
                requested -= sizes[op->slot];
            } else if (c == 0) {
                c = 'F'; /* a free of a slot whose malloc failed: no call */
            }
            kinds[i] = c;
            probes[i] = p;
            size_t bytes = requested;
            /* (not for an allocator whose stats give its cached blocks back first: the second pass,
             * which calls no stats, would then take other paths) */
            if (d->stats != NULL && !d->caches_frees) {
                rt_stats_t s;
                d->stats(h, &s);
                bytes = s.used_bytes;
            }
            port_printf("@MS,%lu,%c,%lu,%lu,%lu,%lu,%lu\n", (unsigned long)i, c,
                        (unsigned long)(op->kind == WL_MALLOC ? op->size : 0u), (unsigned long)n,
                        (unsigned long)(op->kind == WL_MALLOC ? p : 0u), (unsigned long)live, (unsigned long)bytes);
        }
        free(sizes);
        if (d->set_lock == NULL) {
            port_printf("# masked %s: lock-free (no lock hooks)\n", d->name);
            continue;
        }
        /* the same trace with the counting hooks: the masked stretch of every operation */
        h = open_instance(d, buf, MS_HEAP, HOOKS_COUNTING);
        memset(slots, 0, t.slots * sizeof *slots);
        port_printf("# masked %s\n", d->name);
        for (size_t i = 0; i < t.nops; i++) {
            uint32_t n, p;
            mk_begin_op();
            char c = apply(d, h, slots, &t.ops[i], &n, &p);
            if (c == 0) {
                c = 'F';
            }
            if (c != kinds[i] || p != probes[i]) {
                port_printf("study: %s: op %lu differs between the two passes\n", d->name, (unsigned long)i);
                port_exit(1);
            }
            port_printf("@MK,%lu,%lu,%lu\n", (unsigned long)i, (unsigned long)mk_op_masked(),
                        (unsigned long)mk_op_sections);
        }
    }
    free(slots);
    free(probes);
    free(kinds);
    wl_release(&t);
}

/* --- mem_frag ---------------------------------------------------------------------------------- */

static void memfrag(const rt_allocator_t *const *all, size_t count, unsigned char *buf)
{
    port_printf("@META,memfrag_heap,%u\n", (unsigned)MF_HEAP);
    port_printf("@META,memfrag_nmax,%u\n", (unsigned)STUDY_MEMFRAG_NMAX);
    for (size_t k = 0; k < count; k++) {
        const rt_allocator_t *d = all[k];
        port_printf("# memfrag %s%s\n", d->name, d->set_lock == NULL ? " lock-free" : "");
        for (uint32_t n = 1; n <= STUDY_MEMFRAG_NMAX; n++) {
            wl_trace_t t;
            if (!wl_memfrag(&t, n)) {
                port_panic("study: wl_memfrag");
            }
            void **slots = slot_table(t.slots);
            uint32_t mi = 0, mp = 0, fi = 0, mm = 0, fm = 0, setup = 0, x, y;
            char got = 0;
            for (int pass = 0; pass < 2; pass++) {
                void *h = open_instance(d, buf, MF_HEAP, pass == 0 ? HOOKS_PORT : HOOKS_COUNTING);
                memset(slots, 0, t.slots * sizeof *slots);
                for (size_t i = 0; i < t.nops; i++) {
                    mk_begin_op();
                    char c = apply(d, h, slots, &t.ops[i], &x, &y);
                    if (i == t.measured) {
                        got = c;
                        if (pass == 0) {
                            mi = x, mp = y;
                        } else {
                            mm = mk_op_masked();
                        }
                    } else if (pass == 1 && mk_op_masked() > setup) {
                        setup = mk_op_masked();
                    }
                }
                /* the free of the measured block */
                wl_op_t fr = {.slot = t.ops[t.measured].slot, .size = 0, .kind = WL_FREE};
                mk_begin_op();
                apply(d, h, slots, &fr, &x, &y);
                if (pass == 0) {
                    fi = x;
                } else {
                    fm = mk_op_masked();
                }
            }
            if (got != 'A') {
                port_printf("@MF,%lu,O,,,,,\n", (unsigned long)n);
            } else {
                port_printf("@MF,%lu,%lu,%lu,%lu,%lu,%lu,%lu\n", (unsigned long)n, (unsigned long)mi, (unsigned long)mp,
                            (unsigned long)fi, (unsigned long)mm, (unsigned long)fm, (unsigned long)setup);
            }
            free(slots);
            wl_release(&t);
        }
    }
}

/* --- Masmano's adversarial workloads ----------------------------------------------------------- */

typedef struct wc_scenario {
    const char *label;
    wl_worst_t which;
    uint32_t n;
} wc_scenario_t;

static const wc_scenario_t scenarios[] = {
    {"memfrag N=1000", WL_WORST_MEMFRAG, 1000}, {"memfrag N=4000", WL_WORST_MEMFRAG, 4000},
    {"cascade", WL_WORST_CASCADE, 1},           {"consolidate N=4000", WL_WORST_CONSOLIDATE, 4000},
    {"splitmerge", WL_WORST_SPLITMERGE, 1},
};

static void worst(const rt_allocator_t *const *all, size_t count, unsigned char *buf)
{
    port_printf("@META,worst_heap,%lu\n", (unsigned long)WC_HEAP);
    for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0]; s++) {
        wl_trace_t t;
        if (!wl_worst(&t, scenarios[s].which, scenarios[s].n)) {
            port_panic("study: wl_worst");
        }
        port_printf("@META,worst_scenario,%s: %s\n", scenarios[s].label, t.params);
        void **slots = slot_table(t.slots);
        for (size_t k = 0; k < count; k++) {
            const rt_allocator_t *d = all[k];
            uint32_t mm = 0, mf = 0, am = 0, af = 0, km = 0, ka = 0, oom = 0, x, y;
            for (int pass = 0; pass < 2; pass++) {
                if (pass == 1 && d->set_lock == NULL) {
                    break;
                }
                void *h = open_instance(d, buf, WC_HEAP, pass == 0 ? HOOKS_PORT : HOOKS_COUNTING);
                memset(slots, 0, t.slots * sizeof *slots);
                for (size_t i = 0; i < t.nops; i++) {
                    const wl_op_t *op = &t.ops[i];
                    bool measured = (i & 1u) != 0u && op->slot != t.slots - 1u;
                    mk_begin_op();
                    char c = apply(d, h, slots, op, &x, &y);
                    if (pass == 0) {
                        oom += c == 'O';
                        uint32_t *any = op->kind == WL_MALLOC ? &am : &af;
                        uint32_t *mes = op->kind == WL_MALLOC ? &mm : &mf;
                        *any = x > *any ? x : *any;
                        if (measured) {
                            *mes = x > *mes ? x : *mes;
                        }
                    } else {
                        uint32_t m = mk_op_masked();
                        ka = m > ka ? m : ka;
                        if (measured) {
                            km = m > km ? m : km;
                        }
                    }
                }
            }
            if (d->set_lock == NULL) {
                port_printf("@WC,%s,%s,%lu,%lu,%lu,%lu,%lu,%lu,lock-free,lock-free\n", scenarios[s].label, d->name,
                            (unsigned long)t.nops, (unsigned long)oom, (unsigned long)mm, (unsigned long)mf,
                            (unsigned long)am, (unsigned long)af);
            } else {
                port_printf("@WC,%s,%s,%lu,%lu,%lu,%lu,%lu,%lu,%lu,%lu\n", scenarios[s].label, d->name,
                            (unsigned long)t.nops, (unsigned long)oom, (unsigned long)mm, (unsigned long)mf,
                            (unsigned long)am, (unsigned long)af, (unsigned long)km, (unsigned long)ka);
            }
        }
        free(slots);
        wl_release(&t);
    }
}

/* --- realloc's slide: the masked stretch does not grow with the block ------------------------- */

static void realloc_slide(const rt_allocator_t *const *all, size_t count, unsigned char *buf)
{
    static const size_t sizes[] = {64, 256, 1024, 4096, 16384};
    for (size_t k = 0; k < count; k++) {
        const rt_allocator_t *d = all[k];
        if (d->family != RT_FAMILY_HEAP || d->realloc == NULL || d->set_lock == NULL) {
            continue;
        }
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t s = sizes[i];
            void *h = open_instance(d, buf, WC_HEAP, HOOKS_COUNTING);
            unsigned char *g0 = d->malloc(h, s), *b = d->malloc(h, s), *g1 = d->malloc(h, 64);
            if (g0 == NULL || b == NULL || g1 == NULL) {
                port_panic("study: realloc: setup");
            }
            for (size_t j = 0; j < s; j++) {
                b[j] = (unsigned char)(j * 7u);
            }
            d->free(h, g0); /* [free S][b][g1] (a heap with quick lists keeps blocks above 256 B out of them) */
            mk_begin_op();
            port_count_t t0 = port_count_begin();
            unsigned char *p = d->realloc(h, b, s + s / 2u);
            uint32_t n = port_count_end(t0);
            if (p == NULL) {
                port_panic("study: realloc: NULL");
            }
            for (size_t j = 0; j < s; j++) {
                if (p[j] != (unsigned char)(j * 7u)) {
                    port_panic("study: realloc: the payload was not kept");
                }
            }
            port_printf("@RS,%s,%lu,%u,%lu,%lu,%lu\n", d->name, (unsigned long)s, p == g0 ? 1u : 0u, (unsigned long)n,
                        (unsigned long)mk_op_masked(), (unsigned long)mk_op_sections);
        }
    }
}

/* --- main -------------------------------------------------------------------------------------- */

int main(void)
{
    port_require_counter();
    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);

    /* the hooks: their whole cost through a direct call pair, and the wrappers' calibration */
    port_count_t t0 = port_count_begin();
    uintptr_t token = port_lock_hook(NULL);
    port_unlock_hook(NULL, token);
    uint32_t pair = port_count_end(t0);
    uint32_t c1 = calibrate(), c2 = calibrate();
    if (c1 != c2 || c1 < 3u || mk_depth != 0u) {
        port_printf("study: the counting hooks' calibration is not constant (%lu, %lu)\n", (unsigned long)c1,
                    (unsigned long)c2);
        port_exit(1);
    }
    mk_wrap = c1 - 3u;

    port_printf("# rtalloc on-target study (the VaiOS blog, sections 7-12): ports/study/vaios_study.c\n");
    port_printf("@META,port,%s\n", port_name());
    port_printf("@META,unit,%s\n", port_count_unit());
    port_printf("@META,counter,self-check passed; empty pair %lu instructions subtracted\n",
                (unsigned long)port_count_overhead);
    port_printf("@META,columns,@MS cycles column = exact instructions per call (not cycles)\n");
    port_printf("@META,hook_pair,%lu\n", (unsigned long)pair);
    port_printf("@META,hook_masked,%u\n", (unsigned)STUDY_HOOK_MASKED);
    port_printf("@META,wrapper_calibration,%lu\n", (unsigned long)mk_wrap);
    port_printf("@META,seed,%u\n", (unsigned)STUDY_SEED);
    port_printf("@META,allocators,%lu\n", (unsigned long)count);
    for (size_t k = 0; k < count; k++) {
        port_printf("@ALLOC|%s|%s|%s|%s\n", all[k]->name, all[k]->malloc_bound, all[k]->free_bound,
                    all[k]->set_lock != NULL ? "lock hooks" : "lock-free");
    }
#if defined(__VERSION__)
    port_printf("@META,compiler,gcc %s\n", __VERSION__);
#endif

    unsigned char *buf = malloc(WC_HEAP);
    if (buf == NULL) {
        port_panic("study: no memory for the heap buffer");
    }
    if (STUDY_MEMSTRESS) {
        memstress(all, count, buf);
    }
    if (STUDY_MEMFRAG) {
        memfrag(all, count, buf);
    }
    if (STUDY_WORST) {
        worst(all, count, buf);
    }
    if (STUDY_REALLOC) {
        realloc_slide(all, count, buf);
    }
    free(buf);
    port_printf("@END\n");
    return 0;
}
