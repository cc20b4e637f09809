#!/usr/bin/env python3
"""Writes results/REPORT.md (and PNG plots, when matplotlib is present) from rtbench's CSVs.

    python3 bench/report.py [RESULTS_DIR]        (default: results)

Reads what `rtbench run all --csv DIR` and bench/callgrind_check.sh wrote: clock.csv, churn.csv,
small.csv, churn_cdf.csv, small_cdf.csv, memfrag.csv, inscount.csv, inscount_memfrag.csv,
inscount_selftest.csv, callgrind.csv. Missing files leave their section out. Every table is
preceded by the run's header (machine, compiler, flags, seed, date), as STYLE rule 11 asks.
Plots: memfrag_probes.png, memfrag_cycles.png, memfrag_instructions.png, churn_malloc_cdf.png,
small_malloc_cdf.png.
"""
import csv
import os
import sys

# Issue 2, "Targets": the most used public C TLSF measured on exactly these workloads.
REFERENCE = {
    "churn": {"malloc_mean": 174, "malloc_max": 208, "free_mean": 114, "free_max": 192, "loop_x_glibc": 1.07},
    "small": {"malloc_mean": 118, "free_mean": 77, "loop_x_glibc": 1.24},
}
LOOP_TARGET = {"churn": 0.85, "small": 1.00}


# Coinciding curves (seglist = first fit = best fit on mem_frag, tlsf = tlsf32) must stay visible:
# every allocator gets its own dash pattern, width and marker, wider lines drawn first.
_STYLES = [("-", 3.2, None), ((0, (6, 2)), 2.6, None), ((0, (2, 2)), 2.2, "o"), ("-.", 1.8, "s"),
           ((0, (1, 1)), 1.6, "^"), ((0, (8, 3, 2, 3)), 1.4, "v"), ("-", 1.0, "x"), ((0, (3, 1)), 1.0, "+")]


def style(name, i):
    """matplotlib keyword arguments for the i-th allocator of a plot."""
    if name in ("noop", "glibc"):
        return {"linestyle": "--", "linewidth": 1.2}
    ls, lw, marker = _STYLES[i % len(_STYLES)]
    return {"linestyle": ls, "linewidth": lw, "marker": marker, "markevery": 32, "markersize": 4}


def read_csv(path):
    """(header comment lines without '# ', rows as dicts) or (None, None) when absent."""
    if not os.path.exists(path):
        return None, None
    meta = []
    body = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                meta.append(line[1:].strip())
            else:
                body.append(line)
    return meta, list(csv.DictReader(body))


def num(x, default=None):
    try:
        return float(x)
    except (TypeError, ValueError):
        return default


def fmt(x, nd=0):
    v = num(x)
    if v is None:
        return "n/a"
    return f"{v:.{nd}f}" if nd else f"{v:.0f}"


def table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def verdict(ok):
    return "met" if ok else "**not met**"


class Report:
    def __init__(self, d):
        self.d = d
        self.lines = []
        self.plots = []
        self.targets = []
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            self.plt = plt
        except ImportError:
            self.plt = None

    def w(self, s=""):
        self.lines.append(s)

    def path(self, name):
        return os.path.join(self.d, name)

    # --- sections -------------------------------------------------------------------------------

    def header(self):
        meta, rows = read_csv(self.path("clock.csv"))
        self.w("# rtalloc benchmark report")
        self.w()
        self.w("Written by `bench/report.py` from the CSVs of `rtbench run all` and `bench/callgrind_check.sh` "
               "(`./bench.sh` runs all three). Regenerate, never edit by hand.")
        self.w()
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
        self.w(table(["allocator", "malloc median", "p99", "p99.9", "max", "mean", "free median", "p99", "p99.9",
                      "max", "mean", "loop ns/op", "glibc (paired) ns/op", "x glibc", "probes max", "probes mean"],
                     out))
        self.w()
        failures = [r["allocator"] for r in rows if r.get("failures") not in ("0", "", None)]
        if failures:
            self.w(f"Allocation failures: {', '.join(failures)} (see the CSV).")
            self.w()
        for r in rows:
            if r["allocator"] == "tlsf":
                ratio = num(r["loop_x_glibc"])
                if ratio:
                    ref = REFERENCE[name]["loop_x_glibc"]
                    self.targets.append([f"{name}: tlsf loop vs glibc (same run)", f"<= {LOOP_TARGET[name]:.2f}x",
                                         f"{ratio:.2f}x (reference TLSF: {ref:.2f}x)",
                                         verdict(ratio <= LOOP_TARGET[name])])
            if r["allocator"] in ("tlsf", "tlsf32") and r["probes_max"]:
                self.targets.append([f"{name}: {r['allocator']} probes per malloc", "<= 2", r["probes_max"],
                                     verdict(int(r["probes_max"]) <= 2)])
        self.cdf_plot(name)

    def cdf_plot(self, name):
        meta, rows = read_csv(self.path(f"{name}_cdf.csv"))
        if rows is None or self.plt is None:
            return
        unit = [k for k in rows[0].keys() if k not in ("allocator", "op", "percentile")][0]
        plt = self.plt
        fig, ax = plt.subplots(figsize=(8, 5))
        allocs = []
        for r in rows:
            if r["allocator"] not in allocs:
                allocs.append(r["allocator"])
        for a in allocs:
            pts = [(num(r[unit]), num(r["percentile"]) / 100.0) for r in rows if r["allocator"] == a and r["op"] == "malloc"]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.step(xs, ys, where="post", label=a, linestyle="--" if a in ("noop", "glibc") else "-")
        ax.set_xscale("log")
        ax.set_xlabel(f"malloc {unit} (raw, per-op min of 2 runs; log scale)")
        ax.set_ylabel("fraction of mallocs")
        ax.set_title(f"{name}: CDF of malloc cost per call")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fname = f"{name}_malloc_cdf.png"
        fig.savefig(self.path(fname), dpi=110)
        plt.close(fig)
        self.w(f"![{name} malloc CDF]({fname})")
        self.w()

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
                                     f"{flat:.2f} (of the means: {flat_mean:.2f})", verdict(flat < 1.2)])
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
        self.w(table(["allocator"] + [f"probes N={n}" for n in show] + ["cycles N=1", "N=64", "N=256",
                                                                         "max/min median", "max/min mean"], out))
        self.w()
        if self.plt is not None:
            self.memfrag_plot(by, "probes", "probes of malloc(120)", "memfrag_probes.png", skip_na=True)
            self.memfrag_plot(by, "cycles_median", "cycles of malloc(120) (median of pair minima)",
                              "memfrag_cycles.png")

    def memfrag_plot(self, by, key, ylabel, fname, skip_na=False):
        plt = self.plt
        fig, ax = plt.subplots(figsize=(8, 5))
        for i, (a, rs) in enumerate(by.items()):
            pts = [(int(r["n"]), num(r[key])) for r in rs if r[key] != ""]
            if not pts or (skip_na and all(p[1] is None for p in pts)):
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, label=a, **style(a, i))
        ax.set_xlabel("N (free 72-byte blocks fenced by live 8-byte spacers)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"mem_frag: {ylabel} vs N")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(self.path(fname), dpi=110)
        plt.close(fig)
        self.w(f"![{fname}]({fname})")
        self.w()

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
        if mf and self.plt is not None:
            plt = self.plt
            fig, ax = plt.subplots(figsize=(8, 5))
            allocs = []
            for r in mf:
                if r["allocator"] not in allocs:
                    allocs.append(r["allocator"])
            for i, a in enumerate(allocs):
                pts = [(int(r["n"]), int(r["instructions"])) for r in mf if r["allocator"] == a]
                xs, ys = zip(*pts)
                ax.plot(xs, ys, label=a, **style(a, i))
            ax.set_xlabel("N")
            ax.set_ylabel("instructions of malloc(120)")
            ax.set_yscale("log")
            ax.set_title("mem_frag: exact instructions of malloc(120) vs N")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(self.path("memfrag_instructions.png"), dpi=110)
            plt.close(fig)
            self.w("![memfrag_instructions.png](memfrag_instructions.png)")
            self.w()

    def write(self):
        self.header()
        body_start = len(self.lines)
        self.clock()
        self.uniform("churn")
        self.uniform("small")
        self.memfrag()
        self.inscount()
        body = self.lines[body_start:]
        self.lines = self.lines[:body_start]
        if self.targets:
            self.w("## Targets (issue 2; shown, never asserted)")
            self.w()
            self.w(table(["target", "bound", "measured", "verdict"], self.targets, ["l", "l", "l", "l"]))
            self.w()
        self.lines += body
        if self.plt is None:
            self.lines.append("_Plots skipped: matplotlib is not installed for this Python._")
            self.lines.append("")
        out = self.path("REPORT.md")
        with open(out, "w", encoding="utf-8") as f:
            f.write("\n".join(self.lines).rstrip() + "\n")
        print(f"report: wrote {out}", file=sys.stderr)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "results"
    if not os.path.isdir(d):
        print(f"report: no directory {d}", file=sys.stderr)
        return 1
    Report(d).write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
