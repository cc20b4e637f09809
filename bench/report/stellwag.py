# SPDX-License-Identifier: MIT
"""The "Stellwag 2010" section of results/REPORT.md (called by bench/report.py).

Reads stellwag.csv and stellwag_cdf.csv (rtbench run stellwag): Figure 10 of Stellwag, Krainz and
Schroeder-Preikschat 2010 beside ours, the per-test tables (every allocator and thread count, the
noop calibration row included), the work counters of the wait-free variants (clock-free evidence),
the wait-free targets with measured verdicts (never asserted), and one malloc-latency CDF per test
(stellwag_cdf_I.png .. stellwag_cdf_IV.png), one panel per thread count. With --rt rows (mode rt)
the tables are repeated for them.
"""
from .common import fmt_rate as _rate, fmt_sep as _num, num as _f, plot_series, to_int as _i  # noqa: E402

TESTS = ["I", "II", "III", "IV"]
TEST_TEXT = {
    "I": "malloc(948) until out of memory, never freed; a thread stops at its first failure",
    "II": "malloc(948) and free at once, 20,000 times per thread",
    "III": "malloc of 10 bytes growing x1.25 (s + s/4) until out of memory, never freed; a thread stops at its "
           "first failure",
    "IV": "as III, each block freed at once; a thread stops at its first failure (so the test ends when no "
          "thread gets what it asks for); the paper times only the mallocs",
}

# Figure 10 (CPU cycles; 16 threads on 16 cores, Xeon E7340 2.4 GHz): per test, for our (the
# wait-free tree), tlsf (one global lock) and atops (AO_malloc): min, med, max, avg, c_v, util (None: ./.)
PAPER = {
    "I": {"our": (5006, 19975, 29707, 20046, 0.15, 92.58), "tlsf": (6485, 14475, 6e5, 54301, 1.7, 97.92),
          "atops": (629, 13846, 367438, 48500, 1.4, 92.49)},
    "II": {"our": (2252, 27557, 37111, 27469, 0.14, None), "tlsf": (612, 19975, 3e5, 46791, 1.3, None),
           "atops": (901, 20799, 372699, 53998, 1.4, None)},
    "III": {"our": (1114, 29444, 57264, 30551, 0.35, 66.79), "tlsf": (459, 30600, 536698, 74580, 1.3, 98.99),
            "atops": (629, 13642, 1.1e8, 777530, 8.5, 17.32)},
    "IV": {"our": (467, 12019, 36788, 11662, 0.6, None), "tlsf": (416, 22788, 362585, 47387, 1.3, None),
           "atops": (246, 1802, 2.0e7, 131865, 9.3, None)},
}
# Our allocator standing for each of the paper's: the baseline wait-free variant, TLSF under one
# pthread mutex, AO_malloc.
OURS = {"our": "wf", "tlsf": "tlsf+mutex", "atops": "aomalloc"}
BASELINE = "wf"
TLSF = "tlsf+mutex"
AO = "aomalloc"
PAPER_UTIL = {"I": 92.58, "III": 66.79}


def is_waitfree(m, name):
    """A variant of the wait-free tree, with or without per-thread caches: family "tree" or
    "tree-cached" in allocators.csv (nothing guessed from names)."""
    return m.run.family(name) in ("tree", "tree-cached")


def is_cached(m, name):
    """The tree behind per-thread caches (rtalloc/wfcache.h): family "tree-cached"."""
    return m.run.family(name) == "tree-cached"










def _threads(*ts):
    """'2 and 16 threads', or '2 threads' where a count was not run at this scale."""
    ts = [str(t) for t in ts if t is not None]
    return (" and ".join(ts) or "no") + " threads"


def section(rep, m):
    """Writes the section into rep (a report.Report); m is the report module (helpers)."""
    meta, rows = m.read_csv(rep.path("stellwag.csv"))
    if rows is None:
        return
    _, cdf = m.read_csv(rep.path("stellwag_cdf.csv"))
    cpus = next((mm.split(":", 1)[1].strip() for mm in meta if mm.startswith("cpus:")), None)
    unit = next((k for k in (cdf[0].keys() if cdf else []) if k not in
                 ("mode", "test", "allocator", "threads", "op", "percentile")), "cycles")
    modes = []
    for r in rows:
        if r["mode"] not in modes:
            modes.append(r["mode"])
    by = {(r["mode"], r["test"], r["allocator"], _i(r["threads"])): r for r in rows}
    threads = sorted({_i(r["threads"]) for r in rows})
    tmax = max(threads)
    w = rep.w
    w("## Stellwag 2010: wait-free allocator vs TLSF under a lock, AO_malloc, system allocators")
    w()
    w("`rtbench run stellwag` (bench/exp_stellwag.c, bench/mt.c): the paper's section 3.5 tests on a 64 MiB heap, "
      "T threads started together (barrier) on ONE shared allocator instance, pinned round-robin to the "
      f"{cpus or '?'} CPUs of this machine -- more threads than CPUs are **oversubscribed** (column over: "
      "threads per CPU), exactly where a preempted lock holder stalls everyone. Every call timed "
      "(fenced rdtsc, raw); all threads' calls pooled. ops/s: successful mallocs and frees per second of wall "
      "time. util (I, III): requested bytes live when every thread has stopped / 64 MiB -- for the wait-free "
      "tree in I exactly the paper's 65,536 chunks of 15 nodes = 92.58 %. Allocators without a 64 MiB limit "
      "(noop, aomalloc, glibc, jemalloc, mimalloc; marked *) run I, III and IV against a budget of 64 MiB of "
      "requested bytes live (the driver refuses, untimed, a malloc beyond it): their utilisation is by "
      "construction, and their memory is not pre-touched. The `noop` row (an allocator that does nothing, through "
      "the same driver) is the floor and the machine's own jitter.")
    w()
    for mm in meta:
        if mm.startswith(("machine:", "date:", "compiler:", "flags:", "load average")):
            w(f"- {mm}")
    w()
    rep.stellwag_modes = modes
    _figure10(rep, m, by, tmax, threads)
    _reference(rep, by, threads)
    for mode in modes:
        if mode != "normal":
            w("### With --rt: SCHED_FIFO threads, memory locked")
            w()
            granted = all(r["rt_granted"] == "1" for r in rows if r["mode"] == mode)
            w("Every thread SCHED_FIFO (priority max - 1) and mlockall: " +
              ("granted for every run." if granted else "**SCHED_FIFO not granted for some runs** (see the CSV's "
               "rt_granted column; those ran SCHED_OTHER)."))
            w()
        for test in TESTS:
            _test_table(rep, m, by, mode, test, threads)
        if mode == "normal":
            _cdf_plots(rep, m, cdf, unit, threads)
    _work(rep, m, rows)
    _targets(rep, m, by, rows, threads, modes)
    _targets_cached(rep, m, by, rows, threads)


def _figure10(rep, m, by, tmax, threads):
    w = rep.w
    w(f"### Figure 10 beside ours ({tmax} threads here; the paper: 16 threads on 16 idle cores of a Xeon E7340 "
      "at 2.4 GHz, highest real-time priority)")
    w()
    w(f"Ours: `{OURS['our']}` (the paper's algorithm), `{OURS['tlsf']}`, `{OURS['atops']}`; malloc cycles "
      "(TSC ticks here, CPU clock cycles in the paper).")
    w()
    rep.headline("Stellwag 2010: Figure 10 beside ours (malloc cycles)")
    hdr = ["row"]
    for t in TESTS:
        hdr += [f"{t} paper", f"{t} here"]
    out = []
    metrics = [("min", 0, "malloc_min"), ("med", 1, "malloc_median"), ("max", 2, "malloc_max"),
               ("avg", 3, "malloc_mean"), ("c_v", 4, "malloc_cv"), ("util.", 5, "util_pct")]
    for label, k, col in metrics:
        for who in ("our", "tlsf", "atops"):
            row = [f"{label} : {who}"]
            for t in TESTS:
                p = PAPER[t][who][k]
                r = by.get(("normal", t, OURS[who], tmax))
                if label == "util.":
                    row.append("./." if p is None else f"{p:.2f} %")
                    v = _f(r[col]) if r else None
                    star = "*" if r and r.get("budget_capped") == "1" else ""
                    row.append("./." if p is None else ("n/a" if v is None else f"{v:.2f} %{star}"))
                elif label == "c_v":
                    row.append(f"{p:.2f}")
                    row.append(_num(_f(r[col]), 2) if r else "n/a")
                else:
                    row.append(f"{p:,.0f}")
                    row.append(_num(_f(r[col])) if r else "n/a")
            out.append(row)
    w(m.table(hdr, out))
    w()


def _reference(rep, by, threads):
    """The wait-free targets' reference figures (a public TLSF under a mutex on this VM) beside ours."""
    w = rep.w
    parts = []
    for t in threads:
        r = by.get(("normal", "II", TLSF, t))
        if r:
            parts.append(f"{t} thread{'s' if t != 1 else ''}: median {r['malloc_median']}, p99 {r['malloc_p99']}, "
                         f"max {int(float(r['malloc_max'])):,}")
    noop = [f"{t}: {float(by[('normal', 'II', 'noop', t)]['malloc_cv']):.1f}" for t in threads
            if ("normal", "II", "noop", t) in by]
    w("Measured on this VM when the wait-free targets were set, for test II's shape under one global mutex: the best public TLSF and o1heap "
      "at a median of about 1,300 / 900 ticks per malloc at 2 / 16 threads (p99 about 4,500; worst calls "
      "40-100 ms when the lock holder is preempted) against about 150 with one thread; glibc, jemalloc and "
      "mimalloc near 75-100; a no-op through the same driver at c_v about 2 (1 thread) and about 190 (16). Here, "
      f"test II: {TLSF} " + ("; ".join(parts) if parts else "not measured") +
      (f"; noop c_v by threads {', '.join(noop)}." if noop else "."))
    w()


def _test_table(rep, m, by, mode, test, threads):
    w = rep.w
    keys = [k for k in by if k[0] == mode and k[1] == test]
    if not keys:
        return
    allocs = []
    for k in keys:
        if k[2] not in allocs:
            allocs.append(k[2])
    w(f"#### Test {test}{' (--rt)' if mode != 'normal' else ''}: {TEST_TEXT[test]}")
    w()
    freed = test in ("II", "IV")
    hdr = ["allocator", "T", "over", "mallocs", "fail", "min", "median", "p99", "p99.9", "max", "mean", "c_v",
           "ops/s", "util"]
    if freed:
        hdr += ["free median", "free p99", "free max"]
    out = []
    for a in allocs:
        for t in threads:
            r = by.get((mode, test, a, t))
            if not r:
                continue
            over = "-"
            if r["oversubscribed"] == "1":
                c = _i(r["cpus"]) or 1
                over = f"{(t + c - 1) // c}x"
            util = "./."
            if not freed:
                v = _f(r["util_pct"])
                util = "n/a" if v is None else f"{v:.2f}{'*' if r['budget_capped'] == '1' else ''}"
            name = a + (" (interrupted)" if r.get("interrupted") == "1" else "")
            row = [name, t, over, r["mallocs"], r["failures"], r["malloc_min"], r["malloc_median"], r["malloc_p99"],
                   r["malloc_p999"], r["malloc_max"], m.fmt(r["malloc_mean"]), m.fmt(r["malloc_cv"], 2),
                   _rate(r["ops_per_s"]), util]
            if freed:
                row += [r["free_median"], r["free_p99"], r["free_max"]]
            out.append(row)
    w(m.table(hdr, out))
    w()


def _cdf_plots(rep, m, cdf, unit, threads):
    if not cdf or rep.plt is None:
        return
    for test in TESTS:
        rows = [r for r in cdf if r["mode"] == "normal" and r["test"] == test and r["op"] == "malloc"]
        if not rows or not rep.want(f"stellwag_cdf_{test}.png"):
            continue
        ts = [t for t in threads if any(_i(r["threads"]) == t for r in rows)]
        fig, axes = rep.fig(1, len(ts), figsize=(5.2 * len(ts), 4.6), squeeze=False)
        for ax, t in zip(axes[0], ts):
            allocs = []
            for r in rows:
                if _i(r["threads"]) == t and r["allocator"] not in allocs:
                    allocs.append(r["allocator"])
            for i, a in enumerate(plot_series(allocs, must=("wfc", "tlsf+mutex", "aomalloc", "wf", "glibc"))):
                pts = [(_f(r[unit]), _f(r["percentile"]) / 100.0) for r in rows
                       if _i(r["threads"]) == t and r["allocator"] == a]
                xs, ys = zip(*pts)
                st = m.style(a)
                ax.step(xs, ys, where="post", label=a, **st)
            ax.set_xscale("log")
            ax.set_xlabel(f"malloc {unit} (raw; log scale)")
            ax.set_title(f"test {test}, {t} thread{'s' if t != 1 else ''}")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].set_ylabel("fraction of mallocs")
        fig.suptitle(f"Stellwag test {test}: CDF of malloc latency, all threads pooled -- left and steep is better; the "
                     "right end is the worst wait (at most six allocators a panel; all in the tables)")
        rep.save(fig, f"stellwag_cdf_{test}.png", f"stellwag test {test} malloc CDF")


def _work(rep, m, rows):
    wr = [r for r in rows if r["mode"] == "normal" and r.get("malloc_nodes_max") not in (None, "")]
    if not wr:
        return
    w = rep.w
    w("### Work per call (clock-free evidence)")
    w()
    w("A second run of each test through the counting entry points (the descriptors' `malloc_work` / "
      "`free_work`: `rt_wf_malloc_ex` / `rt_wf_free_ex`, `rt_wfc_malloc_ex` / `rt_wfc_free_ex`): nodes "
      "visited and atomic read-modify-writes on the tree's counters (the statistics counters add 2-4 more per "
      "tree call), max / p99 / mean over every thread's calls, under the same contention; [bound]: the largest "
      "stated worst case among the calls (`rt_wf_bound` / `rt_wfc_bound`, the tables of `rtalloc/waitfree.h` and "
      "`rtalloc/wfcache.h`); cache: chunks moved onto or off the caller's cache (max / mean; wfc only); over: "
      "calls above their own bound; failed: the most nodes of a malloc that failed. This is the paper's WCET "
      "argument counted, independent of this VM's clock noise.")
    w()
    out = []
    for r in wr:
        has_free = r.get("free_nodes_max") not in (None, "") and r["free_n"] not in ("0", "")
        over = (_i(r["malloc_over_bound"]) or 0) + (_i(r.get("free_over_bound")) or 0)
        out.append([r["allocator"], r["test"], r["threads"],
                    f"{r['malloc_nodes_max']} / {r['malloc_nodes_p99']} / {m.fmt(r['malloc_nodes_mean'], 1)}",
                    r["malloc_nodes_bound"],
                    f"{r['malloc_rmw_max']} / {r['malloc_rmw_p99']} / {m.fmt(r['malloc_rmw_mean'], 1)}",
                    r["malloc_rmw_bound"],
                    f"{r['free_nodes_max']} / {r['free_nodes_p99']} / {m.fmt(r['free_nodes_mean'], 1)}"
                    if has_free else "-", r["free_nodes_bound"] if has_free else "-",
                    f"{r['free_rmw_max']} / {r['free_rmw_p99']} / {m.fmt(r['free_rmw_mean'], 1)}"
                    if has_free else "-",
                    (f"{r.get('malloc_cache_max')} / {m.fmt(r.get('malloc_cache_mean'), 2)}" +
                     (f"; {r.get('free_cache_max')} / {m.fmt(r.get('free_cache_mean'), 2)}" if has_free else ""))
                    if is_cached(m, r["allocator"]) and r.get("malloc_cache_max") not in (None, "") else "-",
                    over, r.get("fail_nodes_max", "")])
    w(m.table(["variant", "test", "T", "malloc nodes max / p99 / mean", "bound", "malloc RMW max / p99 / mean",
               "bound", "free nodes max / p99 / mean", "bound", "free RMW max / p99 / mean",
               "cache malloc; free max / mean", "over bound", "failed malloc nodes"], out))
    w()


def _targets(rep, m, by, rows, threads, modes):
    """The wait-free targets: a matrix per wait-free variant, and one line each in the report's Targets."""
    variants = []
    for r in rows:
        if r["mode"] == "normal" and is_waitfree(m, r["allocator"]) and r["allocator"] not in variants:
            variants.append(r["allocator"])
    if not variants:
        return
    w = rep.w
    t2 = 2 if 2 in threads else None
    t16 = max(threads) if max(threads) > 2 else None
    tmax_all = max(threads)

    def g(test, a, t, col):
        r = by.get(("normal", test, a, t))
        return _f(r[col]) if r else None

    def worst_nodes(test, a):
        vs = [_f(r["malloc_nodes_max"]) for r in rows if r["mode"] == "normal" and r["test"] == test
              and r["allocator"] == a and r.get("malloc_nodes_max") not in (None, "")]
        over = sum(_i(r.get("malloc_over_bound")) or 0 for r in rows if r["mode"] == "normal"
                   and r["test"] == test and r["allocator"] == a)
        return (max(vs) if vs else None), over

    results = {}  # target -> {variant: (ok or None, text)}

    def put(target, a, ok, text):
        results.setdefault(target, {})[a] = (ok, text)

    names = {
        "work": "Worst nodes per malloc, I and III: >= 10x below wf, within the stated bound",
        "lat2": f"II, {t2} threads: median and p99.9 below {TLSF}'s",
        "lat16": f"II, {t16} threads: p99 <= 0.2 x {TLSF}'s",
        "jit": f"II jitter p99.9 / median <= {TLSF}'s ({_threads(t2, t16)})",
        "thr": f"II throughput >= 2 x {TLSF}'s and >= {AO}'s ({_threads(t2, t16)})",
        "util": f"Utilisation I >= 92.58 %, III >= 66.79 % at {max(threads)} threads (others in brackets; "
                "compared at the paper's two decimals)",
    }
    base = {t: worst_nodes(t, BASELINE)[0] for t in ("I", "III")}
    for a in variants:
        # work
        cells, ok = [], True
        for t in ("I", "III"):
            wn, over = worst_nodes(t, a)
            if wn is None or base[t] is None:
                ok = None
                cells.append(f"{t}: n/a")
                continue
            x = base[t] / wn if wn else float("inf")
            cells.append(f"{t}: {wn:.0f} vs {base[t]:.0f} ({x:.1f}x){', ' + str(over) + ' over bound' if over else ''}")
            ok = ok and x >= 10 and over == 0 if ok is not None else None
        put("work", a, None if a == BASELINE else ok, "; ".join(cells) + (" (the baseline)" if a == BASELINE else ""))
        # latency at 2 threads
        if t2:
            med, p999 = g("II", a, t2, "malloc_median"), g("II", a, t2, "malloc_p999")
            tmed, tp999 = g("II", TLSF, t2, "malloc_median"), g("II", TLSF, t2, "malloc_p999")
            if None in (med, p999, tmed, tp999):
                put("lat2", a, None, "n/a")
            else:
                put("lat2", a, med < tmed and p999 < tp999, f"{med:.0f} / {p999:.0f} vs {tmed:.0f} / {tp999:.0f}")
        if t16:
            p99, tp99 = g("II", a, t16, "malloc_p99"), g("II", TLSF, t16, "malloc_p99")
            if None in (p99, tp99):
                put("lat16", a, None, "n/a")
            else:
                put("lat16", a, p99 <= 0.2 * tp99, f"{p99:.0f} vs 0.2 x {tp99:.0f} = {0.2 * tp99:.0f}")
        # jitter
        cells, ok = [], True
        for t in (t2, t16):
            if t is None:
                continue
            med, p999 = g("II", a, t, "malloc_median"), g("II", a, t, "malloc_p999")
            tmed, tp999 = g("II", TLSF, t, "malloc_median"), g("II", TLSF, t, "malloc_p999")
            if None in (med, p999, tmed, tp999) or not med or not tmed:
                ok = None
                cells.append(f"{t}: n/a")
                continue
            j, tj = p999 / med, tp999 / tmed
            cells.append(f"{t}: {j:.1f} vs {tj:.1f}")
            ok = ok and j <= tj if ok is not None else None
        put("jit", a, ok, "; ".join(cells))
        # throughput
        cells, ok = [], True
        for t in (t2, t16):
            if t is None:
                continue
            v, tv, av = g("II", a, t, "ops_per_s"), g("II", TLSF, t, "ops_per_s"), g("II", AO, t, "ops_per_s")
            if v is None or tv is None:
                ok = None
                cells.append(f"{t}: n/a")
                continue
            good = v >= 2 * tv and (av is None or v >= av)
            cells.append(f"{t}: {_rate(v)} vs 2 x {_rate(tv)}" + (f", {AO} {_rate(av)}" if av is not None else
                                                                   f", {AO} not measured"))
            ok = ok and good if ok is not None else None
        put("thr", a, ok, "; ".join(cells))
        # utilisation: judged at the paper's thread count (the largest here), every count shown
        cells, ok = [], True
        for t, ref in PAPER_UTIL.items():
            us = {_i(r["threads"]): _f(r["util_pct"]) for r in rows if r["mode"] == "normal" and r["test"] == t
                  and r["allocator"] == a and r["util_pct"] not in ("", None)}
            if tmax_all not in us:
                ok = None
                cells.append(f"{t}: n/a")
                continue
            cells.append(f"{t}: {us[tmax_all]:.3f} % (" +
                         ", ".join(f"{u:.2f} at {k}" for k, u in sorted(us.items()) if k != tmax_all) + ")")
            # compared at the paper's precision (two decimals)
            ok = ok and round(us[tmax_all], 2) >= ref if ok is not None else None
        put("util", a, ok, "; ".join(cells))

    def mark(ok):
        return "" if ok is None else (" -- yes" if ok else " -- **no**")

    w("### The wait-free targets, per variant (shown, never asserted)")
    w()
    keys = [k for k in names if k in results]
    # One table per target, one row per variant: the targets' texts are long, side by side they
    # made lines of 400 characters.
    for k in keys:
        w(f"**{names[k]}**")
        w()
        w(m.table(["variant", "measured", "met"],
                  [[a, results[k][a][1], mark(results[k][a][0]).replace(" -- ", "")] if a in results[k]
                   else [a, None, None] for a in variants], ["l", "l", "l"]))
        w()
    for k in keys:
        met = [a for a in variants if results[k].get(a, (None,))[0]]
        judged = [a for a in variants if results[k].get(a, (None,))[0] is not None]
        if not judged:
            rep.targets.append([f"stellwag: {names[k]}", "some wait-free variant", "not measured", "n/a"])
            continue
        text = (f"met by {', '.join(met)} of {len(judged)} judged" if met else f"met by none of {len(judged)}")
        if k == "work":
            best = min((worst_nodes("I", a)[0] or 0) + (worst_nodes("III", a)[0] or 0) for a in judged)
            text += f" (best I+III worst nodes {best:.0f}; wf {base['I'] or 0:.0f}+{base['III'] or 0:.0f})"
        rep.targets.append([f"stellwag: {names[k]}", "at least our best variant", text, m.verdict(bool(met))])
    rt = [mo for mo in modes if mo != "normal"]
    if rt:
        granted = all(r["rt_granted"] == "1" for r in rows if r["mode"] == "rt")
        rep.targets.append(["stellwag --rt: the same tables with SCHED_FIFO and locked memory", "reported",
                            "reported" + ("" if granted else " (SCHED_FIFO not granted everywhere)"),
                            m.verdict(True)])
    else:
        rep.targets.append(["stellwag --rt: the same tables with SCHED_FIFO and locked memory", "reported",
                            "not run in this report (`rtbench run stellwag --rt`)", "not run"])


def _targets_cached(rep, m, by, rows, threads):
    """The targets of the tree behind per-thread caches (family tree-cached), measured in the
    same run as TLSF under a mutex, AO_malloc and the paper's variant (wf); shown, never asserted."""
    cached = []
    for r in rows:
        if r["mode"] == "normal" and is_cached(m, r["allocator"]) and r["allocator"] not in cached:
            cached.append(r["allocator"])
    if not cached:
        return
    w = rep.w
    t2 = 2 if 2 in threads else None
    t16 = max(threads) if max(threads) > 2 else None

    def g(test, a, t, col):
        r = by.get(("normal", test, a, t))
        return _f(r[col]) if r and r.get(col) not in (None, "") else None

    out, lines = [], []
    for a in cached:
        def thr(t):
            v, tv, av = g("II", a, t, "ops_per_s"), g("II", TLSF, t, "ops_per_s"), g("II", AO, t, "ops_per_s")
            if v is None or tv is None:
                return None, "n/a"
            ok = v >= 2 * tv and (av is None or v >= av)
            return ok, (f"{_rate(v)} = {v / tv:.2f} x {TLSF} ({_rate(tv)})" +
                        (f", {v / av:.2f} x {AO} ({_rate(av)})" if av else f", {AO} not measured"))
        rows_t = []
        for t in (t2, t16):
            if t is not None:
                ok, text = thr(t)
                rows_t.append((f"II throughput at {t} threads: >= 2 x {TLSF} and >= {AO}", ok, text))
        if t2:
            p, tp = g("II", a, t2, "malloc_p999"), g("II", TLSF, t2, "malloc_p999")
            rows_t.append((f"II malloc p99.9 at {t2} threads <= {TLSF}'s",
                           None if None in (p, tp) else p <= tp,
                           "n/a" if None in (p, tp) else f"{p:.0f} vs {tp:.0f} cycles"))
        for test, ref in PAPER_UTIL.items():
            us = {_i(r["threads"]): _f(r["util_pct"]) for r in rows if r["mode"] == "normal" and r["test"] == test
                  and r["allocator"] == a and r["util_pct"] not in ("", None)}
            judged = t2 if t2 in us else (max(us) if us else None)
            if judged is None:
                rows_t.append((f"{test} utilisation >= {ref} % (what caches hold counts as unused)", None, "not run"))
                continue
            rows_t.append((f"{test} utilisation >= {ref} % at {judged} threads (what caches hold counts as unused)",
                           round(us[judged], 2) >= ref,
                           f"{us[judged]:.2f} % (" + ", ".join(f"{u:.2f} at {k}" for k, u in sorted(us.items())
                                                                if k != judged) + ")"))
        # bounds: every counted call within its own stated bound, over every test and thread count
        wr = [r for r in rows if r["mode"] == "normal" and r["allocator"] == a and
              r.get("malloc_nodes_max") not in (None, "")]
        if wr:
            over = sum((_i(r.get("malloc_over_bound")) or 0) + (_i(r.get("free_over_bound")) or 0) for r in wr)
            mx = max(_f(r["malloc_nodes_max"]) for r in wr)
            fx = max((_f(r["free_nodes_max"]) for r in wr if r.get("free_nodes_max") not in (None, "")), default=0)
            rows_t.append(("every counted call within its stated bound (nodes, RMW)", over == 0,
                           f"{over} calls over; worst malloc {mx:.0f} nodes, worst free {fx:.0f} nodes "
                           f"(bounds: up to {max(_f(r['malloc_nodes_bound']) for r in wr):.0f} / "
                           f"{max((_f(r['free_nodes_bound']) for r in wr if r.get('free_nodes_bound') not in (None, '')), default=0):.0f})"))
        # the common call: mean nodes per malloc and per free in II against the paper's variant
        cells, ok = [], True
        for t in (t2, t16):
            if t is None:
                continue
            mn, bn = g("II", a, t, "malloc_nodes_mean"), g("II", BASELINE, t, "malloc_nodes_mean")
            fn, bf = g("II", a, t, "free_nodes_mean"), g("II", BASELINE, t, "free_nodes_mean")
            if None in (mn, bn, fn, bf) or not mn or not fn:
                ok = None if ok is not True else None
                cells.append(f"{t}: n/a")
                continue
            cells.append(f"{t}: malloc {mn:.2f} vs {bn:.1f} ({bn / mn:.0f}x), free {fn:.2f} vs {bf:.1f} ({bf / fn:.0f}x)")
            ok = ok and bn / mn >= 5 and bf / fn >= 5 if ok is not None else None
        rows_t.append((f"II node visits per call (mean) >= 5x below {BASELINE}'s", ok, "; ".join(cells) or "n/a"))
        for name, ok, text in rows_t:
            out.append([a, name, text, "" if ok is None else ("yes" if ok else "**no**")])
            lines.append((f"stellwag ({a}): {name}", ok, text))
    w("### Targets of the wait-free tree behind per-thread caches (shown, never asserted)")
    w()
    w(f"Measured in the same run as {TLSF}, {AO} and the paper's variant ({BASELINE}); what the caches hold at the "
      "end of I and III is not live, so it counts as unused. Thread counts above the CPUs are oversubscribed (see "
      "the tables); no multi-core machine was lent to this report's run, so every figure is from this machine.")
    w()
    w(m.table(["allocator", "target", "measured", "met"], out, ["l", "l", "l", "l"]))
    w()
    for name, ok, text in lines:
        rep.targets.append([name, "met", text, "not measured" if ok is None else m.verdict(bool(ok))])
