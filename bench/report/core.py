# SPDX-License-Identifier: MIT
"""The report: results/REPORT.md (and PNG plots) from the CSVs of one run. See __init__.py."""
import os
import sys

from . import advice
from .common import (DASH, NOTE, Run, Styler, legend_outside, read_csv, num, fmt, save, table,  # noqa: F401
                     verdict, timed_verdict, noisy, plot_series)

# The TLSF targets' reference: the most used public C TLSF measured on exactly these workloads.
REFERENCE = {
    "churn": {"malloc_mean": 174, "malloc_max": 208, "free_mean": 114, "free_max": 192, "loop_x_glibc": 1.07},
    "small": {"malloc_mean": 118, "free_mean": 77, "loop_x_glibc": 1.24},
}
LOOP_TARGET = {"churn": 0.85, "small": 1.00}

# The speed targets (doc/performance.md): tlsf's exact mean instructions per call at the default
# hardening level, and the worst single call of each.
SPEED_MEAN = {("churn", "malloc"): 100, ("churn", "free"): 60, ("small", "malloc"): 65, ("small", "free"): 55}
SPEED_WORST = 150

# Masmano et al. 2006, Tables 5 (cycles, Pentium 4) and 7 (F %): avg, stdv, max, min for Tests 1-3,
# keyed by the allocator of ours that stands for the paper's (glibc for DLmalloc 2.7.2).
MASMANO_NAMES = {"firstfit": "First-fit", "bestfit": "Best-fit", "buddy": "Binary-buddy", "glibc": "DLmalloc",
                 "halffit": "Half-fit", "tlsf": "TLSF"}
MASMANO_T5_MALLOC = {
    "firstfit": [[315, 239, 2185, 97], [248, 243, 2274, 97], [291, 279, 4758, 97]],
    "bestfit": [[511, 513, 2330, 112], [347, 352, 2380, 95], [1134, 1133, 6432, 107]],
    "buddy": [[170, 472, 5517, 143], [157, 262, 7433, 105], [161, 263, 5960, 121]],
    "glibc": [[342, 345, 5769, 114], [249, 278, 5859, 79], [292, 296, 6985, 83]],
    "halffit": [[196, 332, 1237, 129], [148, 569, 1269, 108], [161, 520, 1491, 128]],
    "tlsf": [[216, 274, 2017, 137], [173, 257, 2056, 115], [196, 230, 2473, 115]],
}
MASMANO_T5_FREE = {
    "firstfit": [[163, 189, 1433, 84], [148, 185, 1387, 84], [176, 196, 1529, 85]],
    "bestfit": [[153, 189, 1420, 85], [120, 212, 1292, 84], [143, 178, 1448, 85]],
    "buddy": [[147, 285, 1728, 120], [150, 287, 855, 120], [153, 284, 1412, 120]],
    "glibc": [[124, 198, 644, 85], [99, 354, 425, 74], [128, 181, 732, 75]],
    "halffit": [[184, 209, 1273, 104], [173, 216, 1209, 104], [186, 210, 1099, 110]],
    "tlsf": [[201, 220, 1641, 118], [170, 223, 741, 111], [191, 217, 1095, 118]],
}
MASMANO_T7 = {
    "firstfit": [[93.25, 3.99, 99.58, 87.57], [83.21, 9.04, 98.17, 70.67], [87.63, 4.41, 94.82, 70.76]],
    "bestfit": [[10.26, 1.25, 14.23, 7.20], [21.51, 2.73, 26.77, 17.17], [11.76, 1.32, 14.14, 9.71]],
    "buddy": [[73.56, 6.36, 85.25, 66.61], [61.97, 1.97, 65.06, 58.79], [77.58, 5.39, 84.34, 64.88]],
    "glibc": [[10.11, 1.55, 12.90, 7.39], [17.13, 2.07, 21.75, 14.71], [11.79, 1.39, 13.72, 9.90]],
    "halffit": [[84.67, 3.02, 90.07, 80.40], [71.50, 3.44, 75.45, 65.02], [98.14, 3.12, 104.67, 94.21]],
    "tlsf": [[10.49, 1.66, 11.79, 6.51], [14.86, 2.15, 18.56, 9.86], [11.15, 1.10, 13.91, 7.48]],
}

# Table 6 (instructions per call): avg, stdv, max, min for Tests 1-3.
MASMANO_T6_MALLOC = {
    "firstfit": [[204, 21, 478, 71], [201, 17, 818, 70], [203, 23, 957, 70]],
    "bestfit": [[582, 69, 798, 76], [442, 130, 1006, 76], [805, 179, 1539, 76]],
    "buddy": [[169, 17, 843, 157], [136, 22, 1113, 95], [153, 24, 1113, 95]],
    "glibc": [[279, 107, 921, 64], [161, 126, 933, 49], [232, 152, 1277, 57]],
    "halffit": [[118, 1, 123, 115], [116, 7, 123, 76], [118, 1, 123, 82]],
    "tlsf": [[147, 13, 164, 104], [118, 25, 164, 84], [133, 22, 164, 84]],
}
MASMANO_T6_FREE = {
    "firstfit": [[93, 96, 128, 59], [90, 92, 128, 57], [92, 95, 128, 57]],
    "bestfit": [[91, 115, 126, 57], [69, 148, 126, 57], [79, 198, 128, 57]],
    "buddy": [[68, 70, 225, 65], [68, 72, 277, 65], [69, 73, 228, 65]],
    "glibc": [[70, 128, 77, 53], [59, 177, 77, 39], [67, 168, 77, 39]],
    "halffit": [[117, 117, 167, 73], [115, 116, 165, 76], [117, 117, 167, 76]],
    "tlsf": [[140, 140, 217, 91], [107, 110, 216, 87], [120, 122, 217, 87]],
}


# Masmano et al. 2006, Table 2: worst-case instructions per malloc / free on adversarial loads.
MASMANO_T2 = {"firstfit": (81995, 126), "bestfit": (98385, 126), "buddy": (1403, 1379), "glibc": (721108, 83),
              "halffit": (136, 166), "tlsf": (170, 194)}


# The VaiOS blog, section 11: two whole VaiOS firmware images on an STM32F401 (Cortex-M4), the
# allocator's control block a static object in .bss: (SEGLIST, TLSF) bytes as published.
BLOG_FOOTPRINT = [("flash (.text)", 30568, 30552), ("static RAM (.bss)", 1920, 2848),
                  ("the allocator backend alone (.bss)", 32, 956)]
# The blog's TLSF has 14 first-level rows (14 x 16 list heads): blocks below 2^20 on our mapping.
BLOG_MAX_BLOCK_LOG2 = 20


# The sections in the order of the details, each with the experiment (rtbench's, or a bench.sh
# step) whose status it shows, its CSV and its title.
SECTIONS = [
    ("clock", "clock", "clock.csv", "Clock verification"),
    ("churn", "churn", "churn.csv", "churn"),
    ("small", "small", "small.csv", "small"),
    ("memfrag", "memfrag", "memfrag.csv", "mem_frag (the VaiOS blog, section 10)"),
    ("memstress", "memstress", "memstress.csv", "mem_stress (the VaiOS blog, sections 7-9)"),
    ("inscount", "inscount", "inscount.csv", "Instructions per call"),
    ("hardening", "hardening", "hardening.csv", "Cost of hardening"),
    ("masmano", "masmano", "masmano_time.csv", "Masmano 2006 (sections 3-4): the periodic task model"),
    ("worst", "worst", "worst.csv", "Worst cases (Masmano Table 2)"),
    ("paths", "paths", "paths.csv", "Per-path instructions of the boundary-tag heaps"),
    ("stellwag", "stellwag", "stellwag.csv",
     "Stellwag 2010: wait-free allocator vs TLSF under a lock, AO_malloc, system allocators"),
    ("prio", "prio", "prio.csv", "Priority inversion: a high-priority thread's malloc beside lower ones"),
    ("fma", "fma", "fma.csv", "FMA 1998: FMA vs BSD 4.4, TLSF and glibc on the article's test program"),
    ("trace", "trace", "trace.csv", "Real programs: recorded traces replayed and sized"),
    ("layout", "layout", "layout.csv", "Block layouts: fragmentation per alignment and word size"),
    ("target", "target", "target_runs.csv", "On target: Cortex-M4 and RV32 under QEMU (the VaiOS blog, sections 7-12)"),
    ("footprint", "footprint", "footprint_alloc.csv", "Footprint (Cortex-M4 and RV32IMAC, -Os)"),
]
STEPS = {"target", "footprint"}  # bench.sh steps, not rtbench experiments


class Report:
    def __init__(self, d, plots=None, partial=None):
        """plots: None for every plot, else the set of PNG names to render (empty: none)."""
        self.d = d
        self.lines = []
        self.targets = []
        self.headlines = []  # (title, markdown table) for the summary
        self._headline_next = None
        self.scale = None  # the scale of the section being written, put in its heading
        self.statuses = []  # (section title, experiment, status, scale, seconds)
        self.run = Run(d)
        self.style = Styler(self.run)
        self.partial_reason = partial or self.run.partial()
        self.plot_filter = plots
        self.plt = None
        self.plots_note = None
        if plots is not None and not plots:
            self.plots_note = "_Plots skipped (--no-plots)._"
            return
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            self.plt = plt
        except ImportError:
            self.plots_note = "_Plots skipped: matplotlib is not installed for this Python._"

    def want(self, fname):
        """Whether to render the plot fname (matplotlib there, and not filtered out)."""
        return self.plt is not None and (self.plot_filter is None or fname in self.plot_filter)

    def w(self, s=""):
        if s.startswith("## ") and self.scale is not None:
            s = f"{s} (scale: {self.scale})"
        if self._headline_next is not None and s.startswith("|"):
            self.headlines.append((self._headline_next, s))
            self._headline_next = None
        self.lines.append(s)

    def headline(self, title):
        """The next table written is also this study's headline table in the summary."""
        self._headline_next = title

    def path(self, name):
        return os.path.join(self.d, name)

    def fig(self, *args, **kw):
        kw.setdefault("constrained_layout", True)
        return self.plt.subplots(*args, **kw)

    def save(self, fig, fname, alt=None):
        legend_outside(fig, list(fig.axes))
        save(fig, self.path(fname))
        self.plt.close(fig)
        self.w(f"![{alt or fname}]({fname})")
        self.w()

    # --- sections -------------------------------------------------------------------------------

    def header(self):
        meta, rows = read_csv(self.path("clock.csv"))
        self.w("# rtalloc benchmark report")
        self.w()
        if self.partial_reason:
            self.w(f"> **PARTIAL RUN** ({self.partial_reason}): the sections below marked "
                   f"\"{NOTE['interrupted']}\" were not measured; what is shown was measured by this run.")
            self.w()
        self.w("Written by `bench/report.py` from the CSVs of one run of `./bench.sh` (rtbench, "
               "`bench/callgrind_check.sh`, `tools/footprint.sh`, `tools/target-bench.sh`). Regenerate, never edit "
               "by hand.")
        self.w()
        for k in ("command", "commit", "started", "finished", "status"):
            if self.run.run.get(k):
                self.w(f"- **run {k}**: {self.run.run[k]}")
        if meta:
            for m in meta:
                if ":" in m and not m.startswith("rtbench"):
                    k, v = m.split(":", 1)
                    self.w(f"- **{k.strip()}**: {v.strip()}")
        self.w()

    def clock(self):
        meta, rows = read_csv(self.path("clock.csv"))
        if rows is None:
            return
        kv = {r["key"]: r["value"] for r in rows}
        self.w("## Clock verification")
        self.w()
        self.w("Every cycle figure below is a raw reading of this clock; nothing is subtracted. The `noop` "
               "row of each timing table (an allocator that does nothing, through the same driver) shows the "
               "floor.")
        self.w()
        self.w(table(["check", "result"], [
            ["source", kv.get("source", "")],
            ["frequency", f"{num(kv.get('ghz'), 0):.4f} GHz (against CLOCK_MONOTONIC over "
                          f"{num(kv.get('calibration_ms'), 0):.0f} ms)"],
            ["resolution (smallest step seen in >= 0.1% of consecutive reads)", f"{kv.get('resolution')} ticks"],
            ["most common step / smallest ever / equal consecutive reads",
             f"{kv.get('common_step')} / {kv.get('smallest_step')} / {kv.get('zero_steps')} of "
             f"{kv.get('samples')}"],
            ["empty timed region (min / median / p99)",
             f"{kv.get('empty_min')} / {kv.get('empty_median')} / {kv.get('empty_p99')} {kv.get('unit')}"],
            ["constant_tsc / nonstop_tsc / rdtscp",
             f"{kv.get('constant_tsc')} / {kv.get('nonstop_tsc')} / {kv.get('rdtscp')}"],
        ], ["l", "l"]))
        self.w()

    def uniform(self, name):
        meta, rows = read_csv(self.path(f"{name}.csv"))
        if rows is None:
            return
        wl = next((m.split(":", 1)[1].strip() for m in meta if m.startswith("workload:")), "")
        self.w(f"## {name}")
        self.w()
        self.w(f"Workload: {wl}. Cycles: one call through the descriptor, fenced rdtsc, per-op minimum of two "
               "identical runs. Loop: the same operations untimed, wall time per op, best of 3; "
               "glibc (paired): glibc's loop replayed alternately with this allocator's, best of 3 each; "
               "x glibc: the ratio of the two (pairing cancels most of the shared machine's drift). "
               "Probes: free blocks or bitmap look-ups "
               "inspected by each malloc.")
        self.w()
        out = []
        for r in rows:
            flag = " (interrupted)" if r.get("interrupted") == "1" else ""
            out.append([r["allocator"] + flag, r["malloc_median"], r["malloc_p99"], r["malloc_p999"], r["malloc_max"],
                        fmt(r["malloc_mean"], 1), r["free_median"], r["free_p99"], r["free_p999"], r["free_max"],
                        fmt(r["free_mean"], 1), fmt(r["loop_ns_per_op"], 1), fmt(r["glibc_ref_ns_per_op"], 1),
                        fmt(r["loop_x_glibc"], 2),
                        r["probes_max"] or "n/a", fmt(r["probes_mean"], 2)])
        self.headlines.append((f"{name}: cycles per call and whole loop against glibc", table(
            ["allocator", "malloc median", "malloc p99", "malloc max", "free median", "free max", "loop x glibc"],
            [[r["allocator"], r["malloc_median"], r["malloc_p99"], r["malloc_max"], r["free_median"], r["free_max"],
              fmt(r["loop_x_glibc"], 2)] for r in rows])))
        self.w(table(["allocator", "malloc median", "p99", "p99.9", "max", "mean", "free median", "p99", "p99.9",
                      "max", "mean", "loop ns/op", "glibc (paired) ns/op", "x glibc", "probes max", "probes mean"],
                     out))
        self.w()
        failures = [r["allocator"] for r in rows if r.get("failures") not in ("0", "", None)]
        if failures:
            self.w(f"Allocation failures: {', '.join(failures)} (see the CSV).")
            self.w()
        for r in rows:
            if r["allocator"] in ("tlsf", "tlsfq"):
                ratio = num(r["loop_x_glibc"])
                if ratio:
                    ref = REFERENCE[name]["loop_x_glibc"]
                    self.targets.append([f"{name}: {r['allocator']} loop vs glibc (same run)",
                                         f"<= {LOOP_TARGET[name]:.2f}x",
                                         f"{ratio:.2f}x (reference TLSF: {ref:.2f}x)",
                                         timed_verdict(ratio <= LOOP_TARGET[name], meta)])
            if r["allocator"] in ("tlsf", "tlsf32") and r["probes_max"]:
                self.targets.append([f"{name}: {r['allocator']} probes per malloc", "<= 2", r["probes_max"],
                                     verdict(int(r["probes_max"]) <= 2)])
        self.cdf_plot(name)

    def cdf_plot(self, name):
        meta, rows = read_csv(self.path(f"{name}_cdf.csv"))
        if rows is None or not self.want(f"{name}_malloc_cdf.png"):
            return
        unit = [k for k in rows[0].keys() if k not in ("allocator", "op", "percentile")][0]
        fig, ax = self.fig(figsize=(8, 5))
        allocs = []
        for r in rows:
            if r["allocator"] not in allocs:
                allocs.append(r["allocator"])
        shown = plot_series(allocs)
        for a in shown:
            pts = [(num(r[unit]), num(r["percentile"]) / 100.0) for r in rows if r["allocator"] == a and r["op"] == "malloc"]
            if not pts:
                continue
            xs, ys = zip(*pts)
            st = self.style(a)
            st.pop("marker", None)
            st.pop("markevery", None)
            ax.step(xs, ys, where="post", label=a, **st)
        ax.set_xscale("log")
        ax.set_xlabel(f"malloc {unit} (raw, per-op min of 2 runs; log scale)")
        ax.set_ylabel("fraction of mallocs")
        ax.set_title(f"{name}: CDF of malloc cost -- the further left and the steeper the rise to 1, the better;\n"
                     f"the right end is the worst case ({len(shown)} of {len(allocs)} allocators; all in the table)",
                     fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        fname = f"{name}_malloc_cdf.png"
        self.save(fig, fname, f"{name} malloc CDF")

    def memfrag(self):
        meta, rows = read_csv(self.path("memfrag.csv"))
        if rows is None:
            return
        self.w("## mem_frag (the VaiOS blog, section 10)")
        self.w()
        self.w("N x {malloc(72); malloc(8) spacer}, free the 72-byte blocks (the live spacers keep them from "
               "coalescing), then malloc(120): its probes and cycles, N = 1..256, each N on a fresh instance "
               "(glibc: on its warm process heap). Cycles per N: median over pairs of the minimum of two "
               "identical runs. Flatness: largest / smallest per-N median over N.")
        self.w()
        by = {}
        for r in rows:
            by.setdefault(r["allocator"], []).append(r)
        show = [1, 2, 16, 64, 128, 256]
        out = []
        for a, rs in by.items():
            d = {int(r["n"]): r for r in rs}
            probes = [d[n]["probes"] if n in d and d[n]["probes"] != "" else "n/a" for n in show]
            meds = [num(r["cycles_median"]) for r in rs]
            means = [num(r["cycles_mean"]) for r in rs]
            flat = max(meds) / min(meds) if meds and min(meds) > 0 else None
            flat_mean = max(means) / min(means) if means and min(means) > 0 else None
            cyc = [d[n]["cycles_median"] if n in d else "-" for n in (1, 64, 256)]
            out.append([a] + probes + cyc + [fmt(flat, 2), fmt(flat_mean, 2)])
            if a == "tlsf" and flat is not None:
                pmax = max(int(r["probes"]) for r in rs if r["probes"] != "")
                self.targets.append(["mem_frag: tlsf flat in N (max/min of per-N medians)", "< 1.2",
                                     f"{flat:.2f} (of the means: {flat_mean:.2f})", timed_verdict(flat < 1.2, meta)])
                self.targets.append(["mem_frag: tlsf probes", "<= 2", str(pmax), verdict(pmax <= 2)])
            if a == "seglist":
                ps = [(int(r["n"]), int(r["probes"])) for r in rs if r["probes"] != ""]
                if len(ps) > 1:
                    n0, p0 = ps[0]
                    n1, p1 = ps[-1]
                    slope = (p1 - p0) / (n1 - n0)
                    self.targets.append(["mem_frag: seglist probes grow linearly in N", "growing (blog: N + 3)",
                                         f"{p0} at N={n0} .. {p1} at N={n1} (slope {slope:.2f})",
                                         verdict(slope > 0.5)])
        self.headlines.append(("mem_frag: malloc(120) after N fenced free blocks", table(
            ["allocator", "probes N=1", "probes N=256", "cycles N=1", "cycles N=256", "max/min median"],
            [[r[0], r[1], r[6], r[7], r[9], r[10]] for r in out])))
        self.w(table(["allocator"] + [f"probes N={n}" for n in show] + ["cycles N=1", "N=64", "N=256",
                                                                         "max/min median", "max/min mean"], out))
        self.w()
        if self.want("memfrag_probes.png"):
            self.memfrag_plot(by, "probes", "probes of malloc(120)", "memfrag_probes.png", skip_na=True, log=True)
        if self.want("memfrag_cycles.png"):
            # log y: one allocator's linear climb (first fit) would flatten every O(1) line to the axis
            self.memfrag_plot(by, "cycles_median", "cycles of malloc(120) (median of pair minima)",
                              "memfrag_cycles.png", log=True)

    def memfrag_plot(self, by, key, ylabel, fname, skip_na=False, log=False):
        fig, ax = self.fig(figsize=(8, 5))
        shown = plot_series(list(by), must=("tlsf", "seglist"))
        for i, (a, rs) in enumerate((a, by[a]) for a in shown):
            pts = [(int(r["n"]), num(r[key])) for r in rs if r[key] != ""]
            if not pts or (skip_na and all(p[1] is None for p in pts)):
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, label=a, **self.style(a))
        ax.set_xlabel("N (free 72-byte blocks fenced by live 8-byte spacers)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"mem_frag: {ylabel} vs N" + (" (log scale)" if log else "") +
                     " -- a flat line is a bound that does not grow\nwith the free blocks; seglist climbs with N "
                     f"({len(shown)} of {len(by)} allocators; all in the table)", fontsize=9)
        if log:
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        self.save(fig, fname, f"{fname}")

    def inscount(self):
        meta, rows = read_csv(self.path("inscount.csv"))
        if rows is None:
            return
        _, st = read_csv(self.path("inscount_selftest.csv"))
        _, cg = read_csv(self.path("callgrind.csv"))
        self.w("## Instructions per call")
        self.w()
        self.w("Exact counts of single calls by ptrace single-stepping (Masmano 2006): from the entry of the "
               "descriptor's malloc/free (for the library's heaps a one-jump wrapper around "
               "`rt_<index>_malloc`/`_free`) to its return, ret included. A sample: every stride-th operation "
               "of the same trace the timing tables replay, spread over the whole run (the stride widens if a "
               "budget of single steps would run out); mem_frag's malloc(120) counted for every N.")
        self.w()
        if st:
            checks = ", ".join(f"{r['function']}: expected {r['expected']}, counted {r['counted']}" for r in st)
            ok = all(r["expected"] == r["counted"] for r in st)
            self.w(f"Counter self-check on code of known length: {checks} -- {'exact' if ok else '**WRONG**'}.")
            self.w()
        exact = {}
        if cg:
            for r in cg:
                if r["level"] == "descriptor":
                    exact[(r["workload"], r["allocator"], r["op"])] = num(r["mean"])
        by = {}
        for r in rows:
            by.setdefault((r["workload"], r["allocator"]), {})[r["op"]] = r
        out = []
        for (wl, a), ops in by.items():
            m = ops.get("malloc", {})
            f = ops.get("free", {})
            ex_m = exact.get((wl, a, "malloc"))
            ex_f = exact.get((wl, a, "free"))
            stride = m.get("stride", "")
            if m.get("widened") == "1":
                stride = f"{stride}, widened (ended at {m.get('final_stride')})"
            out.append([wl, a, m.get("calls", ""), fmt(m.get("mean"), 1), fmt(ex_m, 1) if ex_m else "",
                        m.get("max", ""), f.get("calls", ""), fmt(f.get("mean"), 1) if f else "",
                        fmt(ex_f, 1) if ex_f else "", f.get("max", ""), stride])
        self.w(table(["workload", "allocator", "mallocs counted", "mean", "exact mean (callgrind)", "max",
                      "frees counted", "mean", "exact mean (callgrind)", "max", "stride"], out,
                     ["l", "l"] + ["r"] * 8 + ["l"]))
        self.w()
        for wl in ("churn", "small"):
            ref = REFERENCE[wl]
            t = by.get((wl, "tlsf"))
            if not t:
                continue
            for op in ("malloc", "free"):
                r = t.get(op)
                if not r:
                    continue
                ex = exact.get((wl, "tlsf", op))
                mean = ex if ex is not None else num(r["mean"])
                src = "exact, callgrind" if ex is not None else "ptrace sample"
                lim = 0.8 * ref[f"{op}_mean"]
                self.targets.append([f"{wl}: tlsf instructions per {op}, mean", f"<= 0.8 x {ref[op + '_mean']} = {lim:.1f}",
                                     f"{mean:.1f} ({src})", verdict(mean <= lim)])
                if f"{op}_max" in ref:
                    lim = 0.8 * ref[f"{op}_max"]
                    mx = num(r["max"])
                    self.targets.append([f"{wl}: tlsf instructions per {op}, worst", f"<= 0.8 x {ref[op + '_max']} = {lim:.1f}",
                                         f"{mx:.0f} (max of the ptrace sample of {r['calls']} calls)",
                                         verdict(mx <= lim)])
        if cg:
            self.w("Callgrind cross-check (every call of one untimed replay of the same trace, "
                   "`bench/callgrind_check.sh`): calls and inclusive Ir of each function; the descriptor level is "
                   "what the ptrace sample counts.")
            self.w()
            out = []
            for r in cg:
                ps = r["ptrace_sample_mean"]
                diff = f"{num(ps) - num(r['mean']):+.1f}" if ps else ""
                out.append([r["workload"], r["allocator"], f"`{r['function']}`", r["level"], r["calls"],
                            r["inclusive_ir"], fmt(r["mean"], 2), fmt(ps, 1) if ps else "", diff])
            self.w(table(["workload", "allocator", "function", "level", "calls", "inclusive Ir", "exact mean",
                          "ptrace sample mean", "sample - exact"], out, ["l", "l", "l", "l"] + ["r"] * 5))
            self.w()
        _, mf = read_csv(self.path("inscount_memfrag.csv"))
        if mf:
            counts = [int(r["instructions"]) for r in mf if r["allocator"] == "tlsf"]
            if counts and min(counts) > 0:
                flat = max(counts) / min(counts)
                self.targets.append(["mem_frag: tlsf flat in N, exact instructions of malloc(120) (max/min)",
                                     "< 1.2", f"{flat:.3f} ({min(counts)}..{max(counts)})", verdict(flat < 1.2)])
        if mf and self.want("memfrag_instructions.png"):
            fig, ax = self.fig(figsize=(8, 5))
            allocs = []
            for r in mf:
                if r["allocator"] not in allocs:
                    allocs.append(r["allocator"])
            for i, a in enumerate(allocs):
                pts = [(int(r["n"]), int(r["instructions"])) for r in mf if r["allocator"] == a]
                xs, ys = zip(*pts)
                ax.plot(xs, ys, label=a, **self.style(a))
            ax.set_xlabel("N")
            ax.set_ylabel("instructions of malloc(120)")
            ax.set_yscale("log")
            ax.set_title("mem_frag: exact instructions of malloc(120) vs N")
            ax.grid(True, which="both", alpha=0.3)
            self.save(fig, "memfrag_instructions.png", "memfrag_instructions.png")

    def hardening(self):
        meta, rows = read_csv(self.path("hardening.csv"))
        if not rows:
            return
        self.w("## Cost of hardening")
        self.w()
        self.w("Exact instructions per call (the ptrace sample of *Instructions per call*: same traces, same sample "
               "plan) of the library's allocators at each compile-time level `RT_HARDENING` -- 0: the papers' "
               "checks, 1: metadata integrity (the default), 2: more. One binary per level "
               "(`rtbench`, `rtbench-hardening<N>`), `rtbench run hardening`. Mean and the largest sampled "
               "call (not a bound); then the means' differences over level 0. *Same calls*: whether every level "
               "counted the same calls; where the step budget widened the stride more at one level than at another "
               "the calls counted differ (shown), and those means compare samples of the same trace.")
        self.w()
        for m in meta or []:
            if m.startswith(("compiler", "flags", "hardening", "date")):
                k, v = m.split(":", 1)
                self.w(f"- **{k.strip()}** (this binary): {v.strip()}")
        self.w()
        by = {}
        order = []
        levels = set()
        for r in rows:
            key = (r.get("workload", ""), r.get("allocator", ""), r.get("op", ""))
            if key not in by:
                by[key] = {}
                order.append(key)
            by[key][r.get("level", "")] = r
            levels.add(r.get("level", ""))
        out = []
        for key in order:
            lv = by[key]
            cells = list(key)
            for level in ("0", "1", "2"):
                r = lv.get(level)
                cells += [fmt(r.get("mean"), 1), r.get("max", "")] if r else ["-", "-"]
            base = num(lv["0"].get("mean")) if "0" in lv else None
            for level in ("1", "2"):
                v = num(lv[level].get("mean")) if level in lv else None
                cells.append(f"{v - base:+.1f}" if v is not None and base is not None else "-")
            calls = {r.get("calls") for r in lv.values()}
            cells.append("yes" if len(calls) == 1 else "**no** (" + " / ".join(
                lv[level].get("calls", "") for level in ("0", "1", "2") if level in lv) + ")")
            out.append(cells)
        self.headline("Cost of hardening: instructions per call by RT_HARDENING level")
        self.w(table(["workload", "allocator", "op", "level 0 mean", "max", "level 1 mean", "max", "level 2 mean",
                      "max", "1 - 0", "2 - 0", "same calls"], out, ["l", "l", "l"] + ["r"] * 8 + ["l"]))
        self.w()
        missing = [level for level in ("0", "1", "2") if level not in levels]
        if missing:
            self.w(f"Level {', '.join(missing)} not measured (its `rtbench-hardening<N>` was not built or failed; "
                   "rtbench's output says why).")
            self.w()

    def masmano(self):
        meta_t, trows = read_csv(self.path("masmano_time.csv"))
        meta_f, frows = read_csv(self.path("masmano_frag.csv"))
        _, t4rows = read_csv(self.path("masmano_test4.csv"))
        _, g4rows = read_csv(self.path("masmano_fig4.csv"))
        _, irows = read_csv(self.path("masmano_instr.csv"))
        _, g3rows = read_csv(self.path("masmano_fig3.csv"))
        if trows is None and frows is None and t4rows is None and irows is None:
            return
        self.w("## Masmano 2006 (sections 3-4): the periodic task model")
        self.w()
        self.w("3..10 periodic tasks (periods 10..150), g bytes per period (Test 1: 2048..20480, Test 2: 8..1024, "
               "Test 3: 8..20480), 2..5 requests per period of Normal(g/n, sd 10 % of it), holding times 30..50, "
               "immediate deallocation; 10 seeds per test (`bench/workload.h`, `bench/exp_masmano.c`). The "
               "paper's rows (Pentium 4 cycles, DLmalloc 2.7.2 for glibc) beside ours, each cell avg / stdv / "
               "max / min.")
        self.w()
        hdr = ["allocator"] + [f"Test {t}" for t in (1, 2, 3)]

        def cell(v, nd):
            return " / ".join(fmt(x, nd) for x in v)

        if trows:
            for op, paper, label in (("malloc", MASMANO_T5_MALLOC, "5(a) malloc"), ("free", MASMANO_T5_FREE,
                                                                                    "5(b) free")):
                out = []
                by = {}
                for r in trows:
                    if r["op"] == op:
                        by.setdefault(r["allocator"], {})[int(r["test"])] = r
                for a, d in by.items():
                    out.append([a] + [cell([d[t]["avg"], d[t]["stdv"], d[t]["max"], d[t]["min"]], 0)
                                      if t in d else "-" for t in (1, 2, 3)])
                    if a in paper:
                        out.append([f"_{MASMANO_NAMES[a]} (paper)_"] + [cell(v, 0) for v in paper[a]])
                self.w(f"**Table {label}: cycles per call** (per-op minimum of two identical runs; all calls "
                       "of the 10 seeds)")
                self.w()
                self.w(table(hdr, out))
                self.w()
        if irows:
            self.masmano_t6(irows, g3rows, hdr, cell)
        if frows:
            for key, title in (("F", "Table 7: fragmentation factor F %"),
                               ("F_used", "Table 7, internal only: F from the peak of bytes in live blocks %")):
                by = {}
                approx = set()
                for r in frows:
                    by.setdefault(r["allocator"], {}).setdefault(int(r["test"]), []).append(num(r[key], 0.0))
                    if r.get("approximated") == "1":
                        approx.add(r["allocator"])
                out = []
                for a, d in by.items():
                    row = [a + (" (approx.)" if a in approx else "")]
                    for t in (1, 2, 3):
                        v = d.get(t, [])
                        if not v:
                            row.append("-")
                            continue
                        m = sum(v) / len(v)
                        sd = (sum((x - m) ** 2 for x in v) / len(v)) ** 0.5
                        row.append(cell([m, sd, max(v), min(v)], 2))
                        if key == "F" and a == "tlsf":
                            paper = MASMANO_T7["tlsf"][t - 1][0]
                            bf = d and by.get("bestfit", {}).get(t)
                            bfm = sum(bf) / len(bf) if bf else None
                            ok = m <= paper and (bfm is None or m <= bfm)
                            self.targets.append([f"Masmano Test {t}: tlsf F at or below the paper's TLSF and "
                                                 "best fit", f"<= {paper} and <= best fit",
                                                 f"{m:.2f} (best fit {fmt(bfm, 2)})", verdict(ok)])
                    out.append(row)
                    if key == "F" and a in MASMANO_T7:
                        out.append([f"_{MASMANO_NAMES[a]} (paper)_"] + [cell(v, 2) for v in MASMANO_T7[a]])
                if key == "F":
                    self.headline("Masmano 2006: Table 7, fragmentation F % (avg / stdv / max / min)")
                self.w(f"**{title}** (avg / stdv / max / min over the seeds)")
                self.w()
                self.w(table(hdr, out))
                self.w()
            self.w("F = (peak memory / peak live - 1) x 100 %: the allocator's watermark (highest address handed "
                   "out, from the start of its memory) against the most requested bytes live at once. glibc "
                   "(approx.): each run in a thread on an arena of its own, from its lowest to its highest chunk "
                   "end. jemalloc and mimalloc (approx.): each run in a private arena (jemalloc, its own tcache, "
                   "decay off: its active + dirty + muzzy pages) or heap (mimalloc: the carved bytes of its "
                   "pages, sampled after every malloc), metadata left out: page-granular allocators with one slab "
                   "per size class, against Masmano's live sets of 30-150 KB. noop has no memory and is left out. "
                   "The binary buddy runs "
                   "over a power-of-two region aligned to its size. The internal-only table uses "
                   "rt_stats_t.peak_used (headers and rounding, no holes).")
            self.w()
        if t4rows:
            by = {}
            for r in t4rows:
                by.setdefault(r["allocator"], []).append((int(r["period"]), num(r["F_avg"]), num(r["F_inuse_avg"])))
            periods = sorted({p for v in by.values() for p, _, _ in v})
            out = [[a] + [fmt(dict((p, f) for p, f, _ in v).get(p), 2) for p in periods] for a, v in by.items()]
            self.w("**Test 4 (Figure 5): F % against the deallocation task's period P_d** (delayed deallocation: "
                   "blocks past their holding time are only marked; the task frees every marked block each P_d; "
                   "P_d = 0 is the reference, immediate deallocation). F against the peak of the bytes held, "
                   "marked ones included; the CSV also has F against the bytes within their holding time.")
            self.w()
            self.w(table(["allocator"] + ["immediate" if p == 0 else f"P_d={p}" for p in periods], out))
            self.w()
            if self.want("masmano_fig5.png"):
                fig, ax = self.fig(figsize=(8, 5))
                shown = plot_series(list(by))
                for i, (a, v) in enumerate((a, by[a]) for a in shown):
                    pts = sorted((p, f) for p, f, _ in v if p > 0 and f is not None and f > 0)
                    if pts:
                        xs, ys = zip(*pts)
                        st = self.style(a)
                        st["markevery"] = 1
                        st["marker"] = st.get("marker") or "o"
                        ax.plot(xs, ys, label=a, **st)
                ax.set_xlabel("deallocation task period P_d (time units)")
                ax.set_ylabel("F (%, log scale)")
                ax.set_yscale("log")
                ax.set_title("Test 4: F vs the deallocation task's period -- lower is better; the rise at short "
                             f"periods\nis delayed frees piling up ({len(shown)} of {len(by)} allocators; all in the "
                             "table)", fontsize=9)
                ax.grid(True, alpha=0.3)
                self.save(fig, "masmano_fig5.png", "masmano_fig5.png")
        if g4rows and self.want("masmano_fig4.png"):
            series = {}
            for r in g4rows:
                series.setdefault(r["series"], []).append((int(r["malloc"]), num(r["bytes"], 0.0)))
            fig, ax = self.fig(figsize=(8, 5))
            keep = ["live"] + plot_series([a for a in series if a != "live"])
            for i, (a, pts) in enumerate((a, series[a]) for a in keep if a in series):
                xs, ys = zip(*pts)
                ys = [y / 1024.0 for y in ys]
                if a == "live":
                    ax.plot(xs, ys, label="live (requested)", color="black", linewidth=1.0)
                else:
                    st = self.style(a)
                    st["markevery"] = 0.1
                    ax.plot(xs, ys, label=a, **st)
            ax.set_xlabel("mallocs")
            ax.set_ylabel("KiB")
            ax.set_title("Figure 4: memory used (watermark) vs live memory, Test 3, first 1400 mallocs --\nthe "
                         "closer a line hugs the black live line, the less it fragments", fontsize=9)
            ax.grid(True, alpha=0.3)
            self.save(fig, "masmano_fig4.png", "masmano_fig4.png")

    def masmano_t6(self, irows, g3rows, hdr, cell):
        strides = sorted({int(r["stride"]) for r in irows if r.get("stride")})
        cut = sorted({r["allocator"] for r in irows if r.get("widened") == "1"})
        for op, paper, label in (("malloc", MASMANO_T6_MALLOC, "6(a) malloc"), ("free", MASMANO_T6_FREE, "6(b) free")):
            by = {}
            for r in irows:
                if r["op"] == op:
                    by.setdefault(r["allocator"], {})[int(r["test"])] = r
            out = []
            for a, d in by.items():
                bad = any(d[t].get("error") == "1" for t in d)
                out.append([a + (" (counting failed)" if bad else "")] +
                           [cell([d[t]["avg"], d[t]["stdv"], d[t]["max"], d[t]["min"]], 0) if t in d else "-"
                            for t in (1, 2, 3)])
                if a in paper:
                    out.append([f"_{MASMANO_NAMES[a]} (paper)_"] + [cell(v, 0) for v in paper[a]])
            self.w(f"**Table {label}: instructions per call**, exact (ptrace single-stepping, `bench/inscount.h`)"
                   f" on a sample of each test's first time trace: every {', '.join(map(str, strides))}-th op")
            self.w()
            self.w(table(hdr, out))
            self.w()
        self.w("Counted from the entry of the descriptor's malloc/free to its return (ret included, kernel "
               "instructions not). The paper counted every op of 300,000-malloc traces on x86-32 "
               "(`RTBENCH_MM_INSTR_ALL=1` counts every op here; hours at paper scale); its max values are over all "
               "calls, ours over the sample." + (f" The step budget widened the stride or cut the sample for: "
                                                 f"{', '.join(cut)}." if cut else ""))
        self.w()
        tl = {int(r["test"]): r for r in irows if r["allocator"] == "tlsf" and r["op"] == "malloc"}
        tf = {int(r["test"]): r for r in irows if r["allocator"] == "tlsf" and r["op"] == "free"}
        if tl and tf:
            mm = max(num(r["max"], 0) for r in tl.values())
            fm = max(num(r["max"], 0) for r in tf.values())
            self.targets.append(["Masmano Tests 1-3: TLSF max instructions per malloc / free below Masmano's TLSF "
                                 "(sampled)", "< 164 / < 217", f"{mm:.0f} / {fm:.0f}", verdict(mm < 164 and fm < 217)])
        if g3rows and self.want("masmano_fig3.png"):
            series = {}
            for r in g3rows:
                series.setdefault(r["allocator"], []).append((int(r["malloc"]), int(r["instructions"])))
            names = [a for a in series if a != "noop"]
            if names:
                cols = 3
                rows = (len(names) + cols - 1) // cols
                fig, axes = self.fig(rows, cols, figsize=(12, 3.0 * rows), squeeze=False)
                for i, a in enumerate(names):
                    ax = axes[i // cols][i % cols]
                    xs, ys = zip(*series[a])
                    ax.scatter(xs, ys, s=4, color=self.style(a)["color"])
                    ax.set_title(a, fontsize=9)
                    ax.set_xlabel("malloc", fontsize=8)
                    ax.set_ylabel("instructions", fontsize=8)
                    ax.grid(True, alpha=0.3)
                    ax.tick_params(labelsize=7)
                for j in range(len(names), rows * cols):
                    axes[j // cols][j % cols].axis("off")
                fig.suptitle("Figure 3: instructions per malloc over time, Test 1 (sampled mallocs; own y scales)")
                self.save(fig, "masmano_fig3.png", "masmano_fig3.png")

    def worst(self):
        meta, rows = read_csv(self.path("worst.csv"))
        if not rows:
            return
        self.w("## Worst cases (Masmano Table 2)")
        self.w()
        self.w("Each allocator driven to its known worst or bad case (`bench/workload.h`, wl_worst; "
               "`bench/exp_worst.c`), every scenario on every allocator, each on a fresh instance over the 64 MiB "
               "arena (system allocators: the process heap of a forked child). Every measured call counted "
               "exactly (ptrace single-stepping, no sampling). memfrag N: N x {malloc(72); malloc(8)}, free the "
               "72s, malloc(120) measured (first fit, best fit, seglist); cascade: malloc(1) and its free on a "
               "fresh heap (buddy's split and merge cascades); consolidate N=4000: 4000 x malloc(24) freed, then "
               "malloc(65536) and its free (glibc's malloc_consolidate); splitmerge: a malloc that climbs to a "
               "higher octave and splits, a free that merges both neighbours (TLSF, half-fit). Cells: max "
               "instructions per malloc / free.")
        self.w()
        scen = []
        by = {}
        for r in rows:
            if r["scenario"] not in scen:
                scen.append(r["scenario"])
            c = f"{r['max_malloc']} / {r['max_free'] if r['scenario'] == 'worst' or r['frees'] != '0' else DASH}"
            if r.get("error") == "1":
                c = "failed"
            by.setdefault(r["allocator"], {})[r["scenario"]] = c
        out = []
        for a, d in by.items():
            p = MASMANO_T2.get(a)
            out.append([a] + [d.get(s, "-") for s in scen] +
                       [f"{MASMANO_NAMES[a]} {p[0]} / {p[1]}" if p else ""])
        self.headline("Worst cases: max instructions per malloc / free (Masmano Table 2)")
        self.w(table(["allocator"] + scen + ["paper (Table 2)"], out))
        self.w()

    def paths(self):
        meta, rows = read_csv(self.path("paths.csv"))
        if not rows:
            return
        self.w("## Per-path instructions of the boundary-tag heaps")
        self.w()
        self.w("Each path of a boundary-tag heap's malloc and free driven by its own scenario (`workloads/workload.h`, "
               "wl_paths; `bench/studies/exp_paths.c`): malloc exact fit (remainder below a smallest block), exact "
               "fit after climbing a first-level row (two bitmap probes), split, split after a climb; free with no "
               "merge, merging the predecessor, the successor, both. Each has a *kept* scenario (the lists it "
               "touches keep other blocks: no bitmap bit changes) and a *lone* one (every list it removes from "
               "empties, the insert goes to an empty list), and the split after a climb also a *new peak* one "
               "(the pool's rest cut at a new high: watermark and peak move), each repeated for blocks of 64, 256, "
               "1024 and 4096 bytes. Every measured call is counted exactly (ptrace single-stepping) and checked to "
               "be on its path from the heap's state (free-block count, walk, probes; `bench/harness/paths.c`); "
               "calls off their path are left out of the figures (\"on path\"). Each scenario runs twice: with one "
               "pool, and in the last of `RT_HEAP_MAX_POOLS` pools with the others full (the validation of a "
               "pointer and of each list link scans the pools: its longest scan). Cells: min / mean / max "
               "instructions of the calls on the path.")
        self.w()
        allocs = []
        configs = []
        per = {}
        worst = {}
        scen = {}
        for r in rows:
            a = r["allocator"]
            pools = r.get("pools") or "1"
            if a not in allocs:
                allocs.append(a)
            if pools not in configs:
                configs.append(pools)
            if r["scenario"] == "worst":
                worst.setdefault(pools, {}).setdefault(a, {})[r["op"]] = r["max"]
                continue
            on, n = int(r["on_path"]), int(r["measured"])
            fig = DASH if on == 0 else f"{r['min']} / {num(r['mean']):.1f} / {r['max']}"
            if r["scenario"].startswith("path:"):
                cell = fig + (f" ({on} of {n})" if 0 < on < n else "")
                per.setdefault(pools, {}).setdefault(r["path"], {})[a] = cell
            else:
                cell = "failed" if r.get("error") == "1" else f"{on}/{n}: {fig}"
                scen.setdefault(pools, {}).setdefault(r["scenario"], {})[a] = cell
        for pools in configs:
            where = "one pool" if pools == "1" else f"the last of {pools} pools"
            out = [[p] + [d.get(a, DASH) for a in allocs] for p, d in per.get(pools, {}).items()]
            wd = worst.get(pools, {})
            out.append(["**worst single call, malloc / free**"] +
                        [f"**{wd.get(a, {}).get('malloc', DASH)} / {wd.get(a, {}).get('free', DASH)}**" for a in allocs])
            if pools == configs[-1]:
                self.headline(f"Per-path instructions, min / mean / max, {where}")
            self.w(f"Per path, {where}:")
            self.w()
            self.w(table(["path"] + allocs, out, ["l"] + ["r"] * len(allocs)))
            self.w()
        for pools in configs:
            where = "one pool" if pools == "1" else f"the last of {pools} pools"
            self.w(f"Per scenario, {where} (calls on the path / measured: min / mean / max):")
            self.w()
            out = [[sname] + [d.get(a, DASH) for a in allocs] for sname, d in scen.get(pools, {}).items()]
            self.w(table(["scenario"] + allocs, out, ["l"] + ["r"] * len(allocs)))
            self.w()
        _, ip = read_csv(self.path("inscount_paths.csv"))
        if ip:
            self.w("The ptrace sample of churn and small (experiment inscount, one pool) by path: calls, mean, min, max.")
            self.w()
            out = [[r["workload"], r["allocator"], r["path"], r["calls"], fmt(r["mean"], 1), r["min"], r["max"]]
                   for r in ip]
            self.w(table(["workload", "allocator", "path", "calls", "mean", "min", "max"], out,
                         ["l", "l", "l", "r", "r", "r", "r"]))
            self.w()

    def speed_targets(self):
        """The speed targets in instructions, for tlsf and for tlsfq (the same TLSF behind quick lists): exact
        means (callgrind.csv, descriptor level; the ptrace sample of inscount.csv when callgrind did not run)
        and the worst single call over the paths experiment, the worst experiment and the sampled maxima of
        churn and small (tlsfq: its sampled maxima and the worst experiment; paths leaves it out)."""
        _, cg = read_csv(self.path("callgrind.csv"))
        _, ic = read_csv(self.path("inscount.csv"))
        _, pr = read_csv(self.path("paths.csv"))
        _, wr = read_csv(self.path("worst.csv"))
        for alloc in ("tlsf", "tlsfq"):
            exact = {(r["workload"], r["op"]): num(r["mean"]) for r in cg or []
                     if r["allocator"] == alloc and r["level"] == "descriptor"}
            sample = {(r["workload"], r["op"]): r for r in ic or [] if r["allocator"] == alloc}
            if alloc != "tlsf" and not exact and not sample:
                continue
            for (wl, op), lim in SPEED_MEAN.items():
                what = f"speed: {wl}, {alloc} instructions per {op}, exact mean"
                if (wl, op) in exact:
                    m = exact[(wl, op)]
                    self.targets.append([what, f"<= {lim}", f"{m:.1f} (callgrind, every call)", verdict(m <= lim)])
                elif (wl, op) in sample:
                    m = num(sample[(wl, op)]["mean"])
                    self.targets.append([what, f"<= {lim}", f"{m:.1f} (ptrace sample of {sample[(wl, op)]['calls']} "
                                         "calls; no callgrind.csv)", verdict(m <= lim)])
                else:
                    self.targets.append([what, f"<= {lim}", f"not measured (bench/callgrind_check.sh -w churn,small "
                                         f"{alloc})", "not measured"])
            for op in ("malloc", "free"):
                seen = []
                for r in pr or []:
                    if r["allocator"] == alloc and r["scenario"] == "worst" and r["op"] == op:
                        pools = r.get("pools") or "1"
                        seen.append((int(r["max"]), "paths" if pools == "1" else f"paths, last of {pools} pools"))
                for r in wr or []:
                    if r["allocator"] == alloc and r["scenario"] == "worst":
                        seen.append((int(r["max_" + op]), "worst"))
                for wl in ("churn", "small"):
                    r = sample.get((wl, op))
                    if r:
                        seen.append((int(r["max"]), f"{wl} sample"))
                what = f"speed: {alloc} worst single {op}"
                if not seen:
                    self.targets.append([what, f"<= {SPEED_WORST}", "not measured (rtbench run paths)",
                                         "not measured"])
                    continue
                mx = max(v for v, _ in seen)
                where = ", ".join(f"{src} {v}" for v, src in seen)
                self.targets.append([what, f"<= {SPEED_WORST}", f"{mx} (max of {where})",
                                     verdict(mx <= SPEED_WORST)])

    def footprint(self):
        meta, arows = read_csv(self.path("footprint_alloc.csv"))
        _, crows = read_csv(self.path("footprint_control.csv"))
        _, orows = read_csv(self.path("footprint.csv"))
        self.w("## Footprint (Cortex-M4 and RV32IMAC, -Os)")
        self.w()
        m4 = [r for r in arows or [] if r["target"] == "cortex-m4"]
        ctl = [r for r in crows or [] if r["target"] == "cortex-m4"]
        if not m4 and not ctl:
            self.w("**Not measured**: no footprint CSVs in this directory (`bench.sh` runs `tools/footprint.sh "
                   "--csv` when `arm-none-eabi-gcc` is installed; Debian: `gcc-arm-none-eabi`). The blog's "
                   "figures alone:")
            self.w()
        else:
            for m in meta or []:
                if m.startswith(("compiler", "flags", "date", "source")):
                    k, v = m.split(":", 1)
                    self.w(f"- **{k.strip()}**: {v.strip()}")
            self.w()
        if m4:
            rv = {r["allocator"]: r for r in arows if r["target"] == "rv32imac"}
            self.w("Bytes of each allocator's objects compiled for Cortex-M4 at `-Os` (`tools/footprint.sh`; "
                   "`arm-none-eabi-size`, whose .text counts read-only data too). A firmware that creates one "
                   "allocator links its backend and the shared objects: `heap_common` + `hooks` for the "
                   "boundary-tag heaps, `hooks` alone for the buddy. These are objects before linking: "
                   "`--gc-sections` drops the functions a firmware never calls (realloc, memalign, check, walk, "
                   "...), so a linked image keeps at most this much. None has .data or .bss: an allocator's "
                   "whole state is its control block (below), at the start of the buffer the caller gives.")
            self.w()
            out = []
            for r in m4:
                row = [r["allocator"], r["backend_text"], r["backend_data"], r["backend_bss"],
                       r["shared"], r["shared_text"], r["shared_data"], r["shared_bss"],
                       f"**{r['text']}**", r["data"], r["bss"]]
                if rv:
                    row.append(rv[r["allocator"]]["text"] if r["allocator"] in rv else "n/a")
                out.append(row)
            hdr = ["allocator", "backend .text", ".data", ".bss", "shared objects", "shared .text", ".data", ".bss",
                   "total .text", ".data", ".bss"] + (["RV32IMAC total .text"] if rv else [])
            self.w(table(hdr, out, ["l", "r", "r", "r", "l"] + ["r"] * (len(hdr) - 5)))
            self.w()
        ctl_by = {}
        for r in ctl:
            ctl_by.setdefault(r["allocator"], {})[int(r["max_block_log2"])] = (r["index_bytes"], r["control_bytes"])
        logs = sorted({int(r["max_block_log2"]) for r in ctl})
        if ctl_by:
            self.w("Control block, bytes on Cortex-M4 (32-bit), by the largest block the heap may hold "
                   "(`RT_HEAP_MAX_BLOCK_LOG2`, a build setting): the free-block index alone / the whole control "
                   "block the heap lays at the start of its buffer (`rt_heap_control_size()`: the index and the "
                   "facade's state: pools, counters, hooks). The buddy's (`rt_buddy_control_size()`, its list "
                   "heads included) does not depend on the setting; its table of one byte per 32-byte unit "
                   "follows it in the buffer.")
            self.w()
            out = []
            for a, d in ctl_by.items():
                cells = []
                for L in logs:
                    i, c = d.get(L, ("", ""))
                    cells.append(f"{i} / {c}" if i else (c or "n/a"))
                out.append([a] + cells)
            self.w(table(["allocator"] + [f"blocks < 2^{L} B" for L in logs], out))
            self.w()

        rv_ctl = {}
        for r in crows or []:
            if r["target"] == "rv32imac":
                rv_ctl.setdefault(r["allocator"], {})[int(r["max_block_log2"])] = (r["index_bytes"], r["control_bytes"])
        if rv_ctl:
            rlogs = sorted({L for d in rv_ctl.values() for L in d})
            self.w("The same on RV32IMAC (ILP32 as well: the same layouts, so the same sizes unless the compiler pads "
                   "differently):")
            self.w()
            self.w(table(["allocator"] + [f"blocks < 2^{L} B" for L in rlogs],
                         [[a] + [f"{d[L][0]} / {d[L][1]}" if L in d and d[L][0] else (d[L][1] if L in d else "n/a")
                                 for L in rlogs] for a, d in rv_ctl.items()]))
            self.w()
        _, cfg = read_csv(self.path("footprint_config.csv"))
        if cfg:
            base = {(r["target"], r["allocator"]): r["text"] for r in arows or []}
            cfgs = []
            for r in cfg:
                if r["config"] not in cfgs:
                    cfgs.append(r["config"])
            by_cfg = {(r["target"], r["allocator"], r["config"]): r for r in cfg}
            out = []
            for (t, a), txt in base.items():
                cells = []
                for c in cfgs:
                    r = by_cfg.get((t, a, c))
                    cells.append(f"{r['text']} / {r['data']} / {r['bss']}" if r else "n/a")
                out.append([t, a, txt] + cells)
            self.w("Per configuration (`tools/footprint.sh`, step 4): .text / .data / .bss of the allocator's objects "
                   "(backend + shared) compiled with one knob changed; `wf` is the wait-free tree's one object (all "
                   "its variants), `fma` the FMA's (with BSD 4.4).")
            self.w()
            self.w(table(["target", "allocator", "default .text"] + cfgs, out))
            self.w()

        # Beside the blog: only the control block compares like with like.
        def ours(a):
            d = ctl_by.get(a, {}).get(BLOG_MAX_BLOCK_LOG2)
            return (int(d[0]), int(d[1])) if d and d[0] else None
        tot = {r["allocator"]: r for r in m4}
        sg, tl = ours("seglist"), ours("tlsf")
        self.w(f"Beside the VaiOS blog (section 11). **The blog's rows are two whole VaiOS firmware images linked "
               f"for an STM32F401** (everything the firmware links, not the allocator alone; its control block a "
               f"static object in .bss); **ours are the allocator's objects alone**, unlinked, with no .bss at all "
               f"(the control block lives in the caller's buffer). Flash and .bss therefore do not compare; the "
               f"difference of flash (TLSF - SEGLIST, the rest of the image being the same) is the nearest code "
               f"comparison, ours unlinked. The comparable row is the control block: the blog's backend .bss "
               f"against our index for blocks < 2^{BLOG_MAX_BLOCK_LOG2} B (the blog's TLSF: 14 x 16 list heads "
               f"+ bitmaps), with our whole control block in parentheses.")
        self.w()

        def b(v):
            return f"{v:,}"

        def diff(x, y):
            return f"{y - x:+,}"
        out = []
        for (what, bs, bt), ours_row in zip(BLOG_FOOTPRINT, ("flash", "bss", "control")):
            if ours_row == "flash":
                if "seglist" in tot and "tlsf" in tot:
                    x, y = int(tot["seglist"]["text"]), int(tot["tlsf"]["text"])
                    o = [f"{b(x)} (objects)", f"{b(y)} (objects)", diff(x, y)]
                else:
                    o = ["not measured"] * 3
                note = "no: whole image vs allocator objects; the differences are the nearest comparison"
            elif ours_row == "bss":
                if "seglist" in tot and "tlsf" in tot:
                    x, y = int(tot["seglist"]["bss"]), int(tot["tlsf"]["bss"])
                    o = [b(x), b(y), diff(x, y)]
                else:
                    o = ["not measured"] * 3
                note = "no: ours keeps no static state; its control block is the next row"
            else:
                if sg and tl:
                    o = [f"{b(sg[0])} ({b(sg[1])})", f"{b(tl[0])} ({b(tl[1])})",
                         f"{diff(sg[0], tl[0])} ({diff(sg[1], tl[1])})"]
                else:
                    o = ["not measured"] * 3
                note = f"**yes**: index, blocks < 2^{BLOG_MAX_BLOCK_LOG2} B (whole control block)"
            out.append([what, f"{b(bs)} B", f"{b(bt)} B", diff(bs, bt)] + o + [note])
        self.headline("Footprint beside the VaiOS blog (bytes)")
        self.w(table(["figure", "blog SEGLIST", "blog TLSF", "blog TLSF - SEGLIST", "ours seglist", "ours tlsf",
                      "ours tlsf - seglist", "comparable"], out, ["l", "r", "r", "r", "r", "r", "r", "l"]))
        self.w()
        if tl:
            self.targets.append([f"TLSF control block, blocks < 2^{BLOG_MAX_BLOCK_LOG2} B (Cortex-M4)",
                                 "<= 956 B (the blog's)", f"{tl[0]} B index ({tl[1]} B whole control block)",
                                 verdict(tl[0] <= 956)])
            small = sorted((L, int(v[0])) for L, v in ctl_by.get("tlsf", {}).items()
                           if L < BLOG_MAX_BLOCK_LOG2 and v[0])
            if small:
                self.targets.append(["TLSF control block smaller for smaller heaps (Cortex-M4)",
                                     f"< {tl[0]} B below 2^{BLOG_MAX_BLOCK_LOG2} B",
                                     ", ".join(f"{i} B index for blocks < 2^{L} B" for L, i in small),
                                     verdict(all(i < tl[0] for _, i in small))])
        if orows is not None and not orows:
            self.w("footprint.csv holds no object rows.")
            self.w()

    def memstress(self):
        meta, rows = read_csv(self.path("memstress.csv"))
        if rows is None:
            return
        self.w("## mem_stress (the VaiOS blog, sections 7-9)")
        self.w()
        self.w("A live set of at most 48 blocks churned for 1,200 operations by xorshift64* (sizes 70 % 8..64, "
               "25 % 65..256, 5 % 257..1024), the same trace for every backend, each on a 32 KiB heap. Every "
               "operation is one `@MS,<seq>,<A|F|O>,<size>,<cycles>,<probes>,<live>,<bytes_in_use>` row in "
               "`memstress.ms` (cycles: per-op minimum of two identical runs). The blog's cycles are DWT cycles "
               "on a Cortex-M4 board and ours this host's TSC ticks: compare the shapes, not the values.")
        self.w()
        out = []
        for r in rows:
            blog_p = "/".join(x for x in (r["blog_probes_median"], r["blog_probes_p99"], r["blog_probes_max"]) if x)
            blog_c = "/".join(x for x in (r["blog_cycles_median"], r["blog_cycles_p99"]) if x)
            out.append([r["allocator"], r["allocs"], r["frees"], r["oom"], r["probes_median"] or "n/a",
                        r["probes_p99"] or "n/a", r["probes_max"] or "n/a", r["cycles_median"], r["cycles_p99"],
                        r["cycles_max"], blog_p, blog_c])
        self.headline("mem_stress: probes and cycles per malloc")
        self.w(table(["allocator", "A", "F", "O", "probes median", "p99", "worst", "cycles median", "p99", "worst",
                      "blog probes med/p99/worst", "blog DWT cycles med/p99"], out))
        self.w()
        counts = {(r["allocs"], r["frees"], r["oom"]) for r in rows}
        self.w("Identical operation sequence: every backend saw the same A/F/O counts." if len(counts) == 1 else
               "The A/F/O counts differ: some backend ran out of memory where others did not (the trace is the "
               "same; O marks a refused malloc).")
        self.w()
        _, bins = read_csv(self.path("memstress_bins.csv"))
        if bins:
            by = {}
            for r in bins:
                by.setdefault(r["allocator"], []).append((int(r["probes"]), int(r["mallocs"]), num(r["cycles_mean"])))
            maxp = max(p for v in by.values() for p, _, _ in v)
            cols = list(range(1, min(maxp, 10) + 1))
            out = []
            for a, v in by.items():
                d = {p: c for p, _, c in v}
                out.append([a] + [fmt(d.get(p), 0) if p in d else "" for p in cols])
            self.w("Mean cycles of malloc binned by its probe count (the blog's mechanism plot: segregated fit "
                   "+~25 cycles per probe, TLSF two points):")
            self.w()
            self.w(table(["allocator"] + [f"{p} probe{'s' if p > 1 else ''}" for p in cols], out))
            self.w()
            if self.want("memstress_bins.png"):
                fig, ax = self.fig(figsize=(8, 5))
                shown = plot_series(list(by), must=("tlsf", "seglist"))
                for i, (a, v) in enumerate((a, by[a]) for a in shown):
                    v = sorted(v)
                    ax.plot([p for p, _, _ in v], [c for _, _, c in v], label=a, **self.style(a))
                ax.set_xlabel("probes of the malloc")
                ax.set_ylabel("mean cycles of malloc")
                ax.set_title("mem_stress: mean malloc cost by probe count -- TLSF stays at two points; "
                             f"segregated\nfit climbs with each probe ({len(shown)} of {len(by)} allocators)",
                             fontsize=9)
                ax.grid(True, alpha=0.3)
                self.save(fig, "memstress_bins.png", "memstress_bins.png")
        msrows = {}
        try:
            with open(self.path("memstress.ms"), encoding="utf-8") as f:
                cur = None
                for line in f:
                    if line.startswith("# allocator "):
                        cur = line.split()[2]
                        msrows[cur] = []
                    elif line.startswith("@MS,") and cur is not None:
                        p = line.strip().split(",")
                        if p[2] == "A":
                            msrows[cur].append((int(p[5]), int(p[4])))
        except OSError:
            msrows = {}
        if msrows and self.want("memstress_cdf.png"):
            fig, axes = self.fig(1, 2, figsize=(11, 4.5))
            for i, (a, v) in enumerate((a, msrows[a]) for a in plot_series(list(msrows), must=("tlsf", "seglist"))):
                for ax, k in ((axes[0], 0), (axes[1], 1)):
                    xs = sorted(x[k] for x in v)
                    if not xs:
                        continue
                    ys = [(j + 1) / len(xs) for j in range(len(xs))]
                    ax.step(xs, ys, where="post", label=a, **self.style(a))
            axes[0].set_xlabel("probes per malloc")
            axes[1].set_xlabel("cycles per malloc (log scale)")
            axes[1].set_xscale("log")
            for ax in axes:
                ax.set_ylabel("fraction of mallocs")
                ax.grid(True, which="both", alpha=0.3)
            axes[0].set_title("mem_stress: CDF of probes -- left is fewer look-ups", fontsize=9)
            axes[1].set_title("mem_stress: CDF of cycles -- the right end is the worst call", fontsize=9)
            self.save(fig, "memstress_cdf.png", "memstress_cdf.png")

    def stellwag(self):
        from . import stellwag
        stellwag.section(self, self.m())

    def prio(self):
        meta, rows = read_csv(self.path("prio.csv"))
        if not rows:
            return
        self.w("## Priority inversion: a high-priority thread's malloc beside lower ones")
        self.w()
        self.w("`bench/studies/exp_prio.c`: four SCHED_FIFO threads on one CPU -- a high one that mallocs and "
               "frees every 500 us (each call timed), two low ones allocating without pause, a middle one "
               "spinning 2 ms in 5. Under one mutex the high thread waits for a preempted low holder while "
               "the middle one spins; a priority-inheritance mutex lends the holder its priority; the "
               "lock-free allocators make it wait for nobody. x lock: the worst malloc against tlsf+mutex's "
               "in the same run.")
        self.w()
        out = []
        for r in rows:
            out.append([r["allocator"], r["malloc_median"], r["malloc_p999"], r["malloc_max"],
                        f"{float(r['malloc_max_us']):.1f}", f"{float(r['malloc_max_vs_mutex']):.3f}",
                        r["free_p999"], f"{float(r['free_max_us']):.1f}"])
        self.headline("Priority inversion: the high-priority thread's worst malloc")
        self.w(table(["allocator", "malloc median", "p99.9", "max", "max us", "x lock", "free p99.9",
                      "free max us"], out))
        self.w()

    def fma(self):
        from . import fma
        fma.section(self, self.m())

    def trace(self):
        from . import trace
        trace.section(self, self.m())

    def layout(self):
        from . import layout
        layout.section(self, self.m())

    def target(self):
        from . import target
        target.section(self, self.m())

    def m(self):
        """What the study modules use of the shared helpers (one set for the whole report)."""
        import types
        from . import common
        return types.SimpleNamespace(read_csv=common.read_csv, table=common.table, verdict=common.verdict,
                                     timed_verdict=common.timed_verdict,
                                     fmt=common.fmt, num=common.num, cell=common.cell, DASH=common.DASH,
                                     style=self.style, run=self.run)

    def details(self):
        for key, experiment, csvname, title in SECTIONS:
            present = os.path.exists(self.path(csvname))
            if experiment in STEPS:
                st, scale = self.run.step_status(experiment, present)
            else:
                st, scale = self.run.status(experiment, present)
            seconds = self.run.done.get(experiment, {}).get("seconds")
            if st in ("interrupted", "not run"):
                self.statuses.append((title, experiment, st, scale, seconds))
                self.w(f"## {title} (scale: {scale})")
                self.w()
                self.w(f"**{NOTE[st]}**")
                self.w()
                continue
            if st == "absent" and key != "footprint":
                continue
            self.statuses.append((title, experiment, "complete" if present else "not measured", scale, seconds))
            self.scale = scale
            if key in ("churn", "small"):
                self.uniform(key)
            else:
                getattr(self, key)()
            self.scale = None

    def summary(self):
        self.w("## Summary")
        self.w()
        self.w("The verdicts, then one headline table per study; every section's details follow "
               "(\"Details\")." + ("" if self.run.plan is not None else
                                     " Scale `unknown`: the directory has no plan.csv (a run of an older rtbench)."))
        self.w()
        if self.run.run and "rtbench" not in (self.run.run.get("steps_done") or "").split():
            if not os.path.exists(self.path("clock.csv")):
                self.w("**rtbench did not run** (" + (self.run.run.get("status") or "") + "): no experiment was measured.")
            elif self.run.plan is None:
                self.w("**rtbench did not complete** (" + (self.run.run.get("status") or "") + "). This rtbench writes no "
                       "plan.csv: the experiments it did not reach are left out below, and the last one shown may be "
                       "cut short (rows marked \"(interrupted)\").")
            self.w()
        loaded = []
        for csvname in ("churn.csv", "small.csv", "memfrag.csv", "fma.csv", "trace.csv", "stellwag.csv"):
            why = noisy(read_csv(self.path(csvname))[0])
            if why:
                loaded.append(f"{csvname.split('.')[0]}: {why.split(' (', 1)[1].rstrip(')')}")
        if loaded:
            self.w("**Timings noisy -- rerun on an idle machine.** The machine was busier than its CPUs when these "
                   "experiments started (" + "; ".join(loaded) + "): their times and time ratios are shown but are "
                   "not verdicts (their targets say \"noisy\"); counts (instructions, probes, bytes) are unaffected.")
            self.w()
        answer = advice.table(self.path)
        if answer:
            self.w("## Which allocator")
            self.w()
            self.w(answer)
            self.w()
        if self.statuses:
            self.w(table(["section", "experiment", "status", "scale", "seconds"],
                         [[t.split(":")[0].split(" (")[0], e, NOTE.get(st, st), sc, sec]
                          for t, e, st, sc, sec in self.statuses], ["l", "l", "l", "l", "r"]))
            self.w()
        if self.targets:
            met = sum(1 for t in self.targets if t[3] == "met")
            self.w("## Targets (shown, never asserted)")
            self.w()
            self.w(f"{met} of {len(self.targets)} met. The bound and the measured figures of each: "
                   "\"Targets in detail\", first of the details.")
            self.w()
            self.w(table(["target", "verdict"], [[t[0], t[3]] for t in self.targets], ["l", "l"]))
            self.w()
        if self.headlines:
            self.w("## Headlines")
            self.w()
            for title, t in self.headlines:
                self.w(f"**{title}**")
                self.w()
                self.lines.append(t)  # as written in the details
                self.w()

    def write(self):
        self.header()
        head = self.lines
        self.lines = []
        self.details()
        self.speed_targets()
        body = self.lines
        self.lines = head
        self.summary()
        self.w("# Details")
        self.w()
        if self.targets:
            self.w("## Targets in detail")
            self.w()
            self.w(table(["target", "bound", "measured", "verdict"], self.targets, ["l", "l", "l", "l"]))
            self.w()
        self.lines += body
        if self.plots_note:
            self.lines.append(self.plots_note)
            self.lines.append("")
        out = self.path("REPORT.md")
        with open(out, "w", encoding="utf-8") as f:
            f.write("\n".join(self.lines).rstrip() + "\n")
        print(f"report: wrote {out}", file=sys.stderr)
