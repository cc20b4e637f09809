#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The on-target section of results/REPORT.md (ports/README.md, "The on-target study"), and the parser of the target
program's output.

    python3 bench/report_target.py --parse DIR     DIR/target/<port>.out -> DIR/target_*.csv
    (bench/report.py calls section() when DIR holds target_runs.csv)

tools/target-bench.sh runs ports/study/vaios_study.c twice per port under QEMU (-icount: exact
instruction counts), keeps the first output as DIR/target/<port>.out when both are byte-identical,
lists both runs in DIR/target/runs.csv and calls --parse, which writes:
  target_runs.csv        one row per port: the counter's unit and self-check, the two runs (exit
                         status, seconds, sha256, byte-identical), the hooks' costs, the trace's hash
  target_alloc.csv       per port and allocator: its stated bounds, lock hooks or lock-free
  target_memstress.csv   per port and allocator: A/F/O, instructions of malloc and free and probes
                         (median / p99 / worst, nearest rank as rtbench), the masked stretch per op
  target_memstress_bins.csv  mean instructions of malloc binned by its probes
  target_memfrag.csv     per port, allocator and N = 1..256: malloc(120) instructions and probes, the
                         free's instructions, their masked stretches and the set-up's longest one
  target_worst.csv       per port, allocator and adversarial scenario: the longest calls and stretches
Masked stretches in the CSVs are the allocator's own instructions from its lock hook's return to its
call of the unlock hook, inclusive; the hooks' own masked instructions (target_runs.csv: hook_masked,
checked against the disassembly: hook_masked_disasm) are added by the section, which says so.

The section: the runs and their verdicts, mem_stress beside the blog's hardware cycles (its section
9), the mechanism (mean instructions by probe count), the mem_frag ramp, the interrupts-masked
stretch per allocator and port with TLSF's stated constant, and the on-target targets with verdicts
computed from the data. Plots: target_memstress_bins.png, target_memfrag.png.
"""
import csv
import math
import os
import sys

from .common import fmt_sep as _n, to_int as _i  # noqa: E402

PORTS = ["cortex-m4", "rv32"]
PORT_LABEL = {"cortex-m4": "Cortex-M4 (QEMU mps2-an386)", "rv32": "RV32IMAC (QEMU virt)"}

# The VaiOS blog: section 8 (probes, QEMU), section 9 (DWT cycles, STM32F401 board), section 10
# (mem_frag on the board).
BLOG_MS = {"seglist": {"probes": (1, 6, 8), "cycles": (415, 490)},
           "tlsf": {"probes": (1, 2, 2), "cycles": (422, 468)}}
BLOG_BINS = {"seglist": {1: 356, 2: 416, 3: 439, 4: 457, 5: 471, 8: 530}, "tlsf": {1: 350, 2: 449}}
BLOG_FRAG = "segregated fit: probes = N + 3, ~12 cycles per block (3,483 cycles, 255 probes at depth 252); " \
            "TLSF: 2 probes, 455 cycles, flat"
FLAT_BOUND = 1.05   # target: TLSF's worst malloc and free flat across N = 1..256, max/min <= 1.05
SHOW_N = (1, 2, 16, 64, 128, 256)
TLSF_CONSTANT_SCENARIO = "splitmerge"


# --- parsing ----------------------------------------------------------------------------------------

def _pct(sorted_v, p):
    """Nearest rank, as bench/metrics.c's mt_percentile."""
    if not sorted_v:
        return None
    r = max(1, math.ceil(p / 100.0 * len(sorted_v)))
    return sorted_v[min(r, len(sorted_v)) - 1]


def _summ(v):
    s = sorted(v)
    return (_pct(s, 50), _pct(s, 99), s[-1] if s else None)


def parse_out(path):
    d = {"meta": {}, "alloc": {}, "ms": {}, "mk": {}, "lockfree": set(), "mf": {}, "wc": [], "rs": [],
         "counter": "", "end": False}
    cur_ms = cur_mk = cur_mf = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("port: counter"):
                d["counter"] = line
            elif line.startswith("@META,"):
                _, k, v = line.split(",", 2)
                d["meta"][k] = v
            elif line.startswith("@ALLOC|"):
                _, name, mb, fb, lock = line.split("|")
                d["alloc"][name] = (mb, fb, lock)
            elif line.startswith("# allocator "):
                cur_ms = line.split()[2]
                d["ms"][cur_ms] = []
            elif line.startswith("# masked "):
                name = line.split()[2].rstrip(":")
                if "lock-free" in line:
                    d["lockfree"].add(name)
                    cur_mk = None
                else:
                    cur_mk = name
                    d["mk"][cur_mk] = []
            elif line.startswith("# memfrag "):
                cur_mf = line.split()[2]
                d["mf"][cur_mf] = []
                if "lock-free" in line:
                    d["lockfree"].add(cur_mf)
            elif line.startswith("@MS,") and cur_ms:
                p = line.split(",")
                d["ms"][cur_ms].append((int(p[1]), p[2], int(p[3]), int(p[4]), int(p[5]), int(p[6]), int(p[7])))
            elif line.startswith("@MK,") and cur_mk:
                p = line.split(",")
                d["mk"][cur_mk].append((int(p[1]), int(p[2]), int(p[3])))
            elif line.startswith("@MF,") and cur_mf:
                p = line.split(",")
                if p[2] == "O":
                    d["mf"][cur_mf].append((int(p[1]), None))
                else:
                    d["mf"][cur_mf].append((int(p[1]), [int(x) for x in p[2:8]]))
            elif line.startswith("@WC,"):
                p = line.split(",")
                d["wc"].append(p[1:])
            elif line.startswith("@RS,"):
                d["rs"].append(line.split(",")[1:])
            elif line == "@END":
                d["end"] = True
    return d


def _meta_lines(w, extra):
    w.writerow([f"# target study: ports/study/vaios_study.c under QEMU -icount (tools/target-bench.sh)"])
    for k, v in extra:
        w.writerow([f"# {k}: {v}"])


def parse(dirpath):
    runs = []
    rpath = os.path.join(dirpath, "target", "runs.csv")
    if os.path.exists(rpath):
        with open(rpath, encoding="utf-8") as f:
            runs = list(csv.DictReader(f))
    parsed = {}
    for r in runs:
        out = os.path.join(dirpath, "target", f"{r['target']}.out")
        if os.path.exists(out):
            parsed[r["target"]] = parse_out(out)
    if not runs:
        print("report_target: no DIR/target/runs.csv (tools/target-bench.sh writes it)", file=sys.stderr)
        return 1
    src = os.popen("git describe --always --dirty 2>/dev/null").read().strip() or "unknown"

    def open_csv(name, header):
        f = open(os.path.join(dirpath, name), "w", encoding="utf-8", newline="")
        f.write("# target study: ports/study/vaios_study.c under QEMU -icount (tools/target-bench.sh; "
                "bench/report_target.py --parse)\n")
        f.write(f"# source: {src}\n")
        for t, d in parsed.items():
            f.write(f"# {t}: {d['meta'].get('port', '')}; {d['meta'].get('unit', '')}; "
                    f"{d['meta'].get('compiler', '')}\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        return f, w

    f, w = open_csv("target_runs.csv", ["target", "port", "unit", "counter", "status_1", "status_2", "seconds_1",
                                        "seconds_2", "bytes", "sha256_1", "sha256_2", "identical", "complete",
                                        "hook_pair", "hook_masked", "hook_masked_disasm", "wrapper_calibration",
                                        "seed", "memstress_trace", "memstress_heap", "memfrag_heap", "worst_heap",
                                        "qemu", "compiler"])
    for r in runs:
        d = parsed.get(r["target"], {"meta": {}, "counter": "", "end": False})
        m = d["meta"]
        w.writerow([r["target"], m.get("port", ""), m.get("unit", ""), d["counter"], r["status_1"], r["status_2"],
                    r["seconds_1"], r["seconds_2"], r["bytes"], r["sha256_1"], r["sha256_2"], r["identical"],
                    "yes" if d["end"] else "no", m.get("hook_pair", ""), m.get("hook_masked", ""),
                    r["hook_masked_disasm"], m.get("wrapper_calibration", ""), m.get("seed", ""),
                    m.get("memstress_trace", ""), m.get("memstress_heap", ""), m.get("memfrag_heap", ""),
                    m.get("worst_heap", ""), r["qemu"], m.get("compiler", "")])
    f.close()

    f, w = open_csv("target_alloc.csv", ["target", "allocator", "malloc_bound", "free_bound", "lock"])
    for t, d in parsed.items():
        for a, (mb, fb, lock) in d["alloc"].items():
            w.writerow([t, a, mb, fb, lock])
    f.close()

    f, w = open_csv("target_memstress.csv", ["target", "allocator", "allocs", "frees", "oom", "malloc_median",
                                             "malloc_p99", "malloc_max", "probes_median", "probes_p99", "probes_max",
                                             "free_median", "free_p99", "free_max", "masked_median", "masked_p99",
                                             "masked_max", "masked_max_seq", "lock"])
    fb, wb = open_csv("target_memstress_bins.csv", ["target", "allocator", "probes", "mallocs", "instr_mean"])
    for t, d in parsed.items():
        for a, rows in d["ms"].items():
            al = [r for r in rows if r[1] == "A"]
            fr = [r for r in rows if r[1] == "F" and r[3] > 0]
            mi, pr, fi = _summ([r[3] for r in al]), _summ([r[4] for r in al]), _summ([r[3] for r in fr])
            has_probes = any(r[4] for r in al)
            lockfree = a in d["lockfree"]
            mk = [x for x in d["mk"].get(a, []) if x[2] > 0]
            if lockfree or not mk:
                mm = ("", "", "")
                mseq = ""
            else:
                mm = _summ([x[1] for x in mk])
                mseq = max(mk, key=lambda x: x[1])[0]
            w.writerow([t, a, len(al), sum(1 for r in rows if r[1] == "F"), sum(1 for r in rows if r[1] == "O"),
                        *mi, *(pr if has_probes else ("", "", "")), *fi, *mm, mseq,
                        "lock-free" if lockfree else "lock hooks"])
            if has_probes:
                bins = {}
                for r in al:
                    bins.setdefault(r[4], []).append(r[3])
                for p in sorted(bins):
                    wb.writerow([t, a, p, len(bins[p]), f"{sum(bins[p]) / len(bins[p]):.1f}"])
    f.close()
    fb.close()

    f, w = open_csv("target_memfrag.csv", ["target", "allocator", "n", "malloc_instr", "probes", "free_instr",
                                           "malloc_masked", "free_masked", "setup_masked", "lock"])
    for t, d in parsed.items():
        for a, rows in d["mf"].items():
            lockfree = a in d["lockfree"]
            for n, v in rows:
                if v is None:
                    w.writerow([t, a, n, "O", "", "", "", "", "", ""])
                    continue
                mk = ("", "", "") if lockfree else (v[3], v[4], v[5])
                w.writerow([t, a, n, v[0], v[1], v[2], *mk, "lock-free" if lockfree else "lock hooks"])
    f.close()

    f, w = open_csv("target_worst.csv", ["target", "allocator", "scenario", "ops", "oom", "max_malloc", "max_free",
                                         "max_malloc_any", "max_free_any", "masked_measured", "masked_any"])
    for t, d in parsed.items():
        for p in d["wc"]:
            scen, a = p[0], p[1]
            vals = ["" if x == "lock-free" else x for x in p[2:10]]
            w.writerow([t, a, scen, *vals])
    f.close()

    f, w = open_csv("target_realloc.csv", ["target", "allocator", "block", "slid", "instructions", "masked",
                                           "sections"])
    for t, d in parsed.items():
        for p in d["rs"]:
            w.writerow([t, *p])
    f.close()
    print(f"report_target: wrote {dirpath}/target_*.csv ({', '.join(parsed) or 'no port'})", file=sys.stderr)
    return 0


# --- the section ------------------------------------------------------------------------------------


def _fit(xs, ys):
    """Least squares y = a x + b: (a, b, r^2)."""
    n = len(xs)
    if n < 2:
        return None
    sx, sy = sum(xs), sum(ys)
    sxx = sum(x * x for x in xs)
    sxy = sum(x * y for x, y in zip(xs, ys))
    den = n * sxx - sx * sx
    if den == 0:
        return None
    a = (n * sxy - sx * sy) / den
    b = (sy - a * sx) / n
    my = sy / n
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (a * x + b)) ** 2 for x, y in zip(xs, ys))
    return a, b, (1.0 - ss_res / ss_tot) if ss_tot > 0 else 1.0


def section(rep, m):
    """Writes the section into rep (a report.Report); m is the report module (helpers)."""
    meta, runs = m.read_csv(rep.path("target_runs.csv"))
    if runs is None:
        return
    _, allocs = m.read_csv(rep.path("target_alloc.csv"))
    _, ms = m.read_csv(rep.path("target_memstress.csv"))
    _, bins = m.read_csv(rep.path("target_memstress_bins.csv"))
    _, mf = m.read_csv(rep.path("target_memfrag.csv"))
    _, wc = m.read_csv(rep.path("target_worst.csv"))
    _, rs = m.read_csv(rep.path("target_realloc.csv"))
    allocs, ms, bins, mf, wc, rs = allocs or [], ms or [], bins or [], mf or [], wc or [], rs or []
    w, table, verdict = rep.w, m.table, m.verdict
    targets = [r["target"] for r in runs]
    good = [r["target"] for r in runs if r["identical"] == "yes" and r["complete"] == "yes"]
    info = {r["target"]: r for r in runs}
    hook = {t: _i(info[t]["hook_masked"]) or 0 for t in targets}

    w("## On target: Cortex-M4 and RV32 under QEMU (the VaiOS blog, sections 7-12)")
    w()
    w("`ports/study/vaios_study.c`, built for both ports and run by `tools/target-bench.sh` under QEMU with "
      "`-icount`: **every count below is an exact number of executed instructions, not cycles** (QEMU models no "
      "pipeline, caches or wait states), from the port's counter, which verified itself on loops of known length "
      "before the program reported anything. The operations come from the host benchmark's own generators "
      "(`bench/workload.c`, compiled unchanged for the targets): the same seed gives every backend, on the host "
      "and on both targets, the same trace. Each program ran twice; its two outputs must be byte-identical.")
    w()
    for mline in meta or []:
        if mline.startswith(("source", "cortex-m4", "rv32")):
            k, v = mline.split(":", 1)
            w(f"- **{k.strip()}**: {v.strip()}")
    w()
    out = []
    for r in runs:
        ok = r["counter"].startswith("port: counter ok")
        out.append([PORT_LABEL.get(r["target"], r["target"]), r["unit"] or "n/a",
                    "passed" if ok else "**FAILED or absent**",
                    f"{r['status_1']} / {r['status_2']}", f"{r['seconds_1']} s / {r['seconds_2']} s",
                    f"{_n(_i(r['bytes']))} B", f"{r['sha256_1']} / {r['sha256_2']}",
                    "**yes**" if r["identical"] == "yes" else "**no**", r["hook_pair"] or "n/a",
                    f"{r['hook_masked']} (disassembly: {r['hook_masked_disasm']})", r["wrapper_calibration"] or "n/a"])
    w(table(["port", "unit", "counter self-check", "exit status (runs 1 / 2)", "wall time", "output",
             "sha256 (runs 1 / 2, first 16)", "byte-identical", "lock+unlock hooks, instructions",
             "hooks' masked instructions", "counting-hook calibration"], out,
            ["l", "l", "l", "r", "r", "r", "l", "l", "r", "l", "r"]))
    w()
    tr = {r["memstress_trace"] for r in runs if r["memstress_trace"]}
    if tr:
        w("mem_stress trace on target: " + "; ".join(sorted(tr)) + (" (the same on both ports)." if len(tr) == 1
                                                                    else " (**the ports' traces differ**)."))
        w()
    for r in runs:
        rep.targets.append([f"target {r['target']}: two runs byte-identical", "identical",
                            f"{r['sha256_1']} / {r['sha256_2']}", verdict(r["identical"] == "yes")])
        rep.targets.append([f"target {r['target']}: instruction counter self-check", "passes",
                            "passed" if r["counter"].startswith("port: counter ok") else "failed or absent",
                            verdict(r["counter"].startswith("port: counter ok"))])
    if not good:
        w("**No port completed with byte-identical output**: nothing below is reported.")
        w()
        return

    bounds = {(r["target"], r["allocator"]): r for r in allocs}

    # --- mem_stress
    w("### mem_stress (blog sections 7-9)")
    w()
    w("1,200 operations, live set <= 48, xorshift64* seed 42 (sizes 70 % 8..64, 25 % 65..256, 5 % 257..1024), a "
      "32 KiB heap per allocator with the port's interrupt-masking lock hooks installed (as a firmware would run "
      "it). Every operation is one `@MS,<seq>,<A|F|O>,<size>,<cycles>,<probes>,<live>,<bytes_in_use>` line in "
      "`target/<port>.out`, **its cycles column holding exact instructions** (the output's header says so). The "
      "blog's cycles are DWT cycles of an STM32F401 board (section 9), its probes section 8's: beside ours for "
      "shape, not value.")
    w()
    for t in good:
        out = []
        for r in ms:
            if r["target"] != t:
                continue
            b = BLOG_MS.get(r["allocator"])
            out.append([r["allocator"], r["allocs"], r["frees"], r["oom"],
                        f"{r['malloc_median']} / {r['malloc_p99']} / {r['malloc_max']}",
                        f"{r['probes_median']} / {r['probes_p99']} / {r['probes_max']}" if r["probes_max"] else "n/a",
                        f"{r['free_median']} / {r['free_p99']} / {r['free_max']}",
                        "/".join(str(x) for x in b["cycles"]) if b else "",
                        "/".join(str(x) for x in b["probes"]) if b else ""])
        w(f"**{PORT_LABEL.get(t, t)}**")
        w()
        w(table(["allocator", "A", "F", "O", "malloc instructions median / p99 / worst", "probes median / p99 / worst",
                 "free instructions median / p99 / worst", "blog DWT cycles median/p99", "blog probes med/p99/worst"],
                out))
        w()

    # mechanism
    by = {}
    for r in bins:
        if r["target"] in good:
            by.setdefault((r["target"], r["allocator"]), {})[int(r["probes"])] = float(r["instr_mean"])
    if by:
        w("Mean instructions of malloc binned by its probe count (the blog's mechanism plot: on the board segregated "
          "fit costs 356 cycles at one probe and ~+25 per probe after, TLSF 350 / 449 at one / two probes):")
        w()
        maxp = min(10, max(p for v in by.values() for p in v))
        out = []
        for (t, a), v in by.items():
            out.append([t, a] + [f"{v[p]:.0f}" if p in v else "" for p in range(1, maxp + 1)])
        for a, v in BLOG_BINS.items():
            out.append(["blog (board, cycles)", a] + [f"{v[p]}" if p in v else "" for p in range(1, maxp + 1)])
        w(table(["port", "allocator"] + [f"{p} probe{'s' if p != 1 else ''}" for p in range(1, maxp + 1)], out))
        w()
        if rep.want("target_memstress_bins.png"):
            fig, axes = rep.fig(1, len(good), figsize=(6 * len(good), 4.5), squeeze=False)
            for ax, t in zip(axes[0], good):
                i = 0
                for (tt, a), v in by.items():
                    if tt != t or m.run.family(a) == "tree":  # the trees' probes are nodes visited: see the table
                        continue
                    ps = sorted(v)
                    ax.plot(ps, [v[p] for p in ps], label=a, **m.style(a))
                    i += 1
                for a, v in BLOG_BINS.items():
                    ps = sorted(v)
                    ax.plot(ps, [v[p] for p in ps], color="grey", linestyle=":", marker=".",
                            label=f"blog {a} (board cycles)")
                ax.set_xlabel("probes of the malloc")
                ax.set_ylabel("mean instructions of malloc (blog: cycles)")
                ax.set_title(f"mem_stress on {t}: cost by probe count")
                ax.grid(True, alpha=0.3)
            rep.save(fig, "target_memstress_bins.png")
            w("(The plot leaves out the wait-free trees, whose probes are tree nodes visited; the table has them.)")
            w()

    # --- mem_frag
    frag = {}
    for r in mf:
        if r["target"] in good and r["malloc_instr"] not in ("O", ""):
            frag.setdefault((r["target"], r["allocator"]), []).append(r)
    fits = {}
    if frag:
        w("### mem_frag ramp (blog section 10)")
        w()
        w("For N = 1..256, on a fresh 256 KiB instance each: N x {malloc(72); malloc(8)}, free the 72s (fenced by "
          "the live 8s: none can coalesce), then the measured malloc(120) and the free of its block. Deterministic: "
          f"one run per N is the figure. The blog on the board: {BLOG_FRAG}.")
        w()
        for t in good:
            out = []
            for (tt, a), rows in frag.items():
                if tt != t:
                    continue
                d = {int(r["n"]): r for r in rows}
                ns = sorted(d)
                mi = [int(d[n]["malloc_instr"]) for n in ns]
                fi = [int(d[n]["free_instr"]) for n in ns]
                pr = [int(d[n]["probes"]) for n in ns]
                fm = _fit(ns, [float(x) for x in mi])
                fp = _fit(ns, [float(x) for x in pr])
                fits[(t, a)] = {"mi": mi, "fi": fi, "pr": pr, "ns": ns, "fit_i": fm, "fit_p": fp}
                out.append([a] + [d[n]["probes"] if n in d else "-" for n in SHOW_N] +
                           [d[n]["malloc_instr"] if n in d else "-" for n in (1, 16, 64, 256)] +
                           [f"{fi[0]} / {fi[-1]}", f"{max(mi) / min(mi):.3f}", f"{max(fi) / min(fi):.3f}",
                            f"{fp[0]:.2f}" if fp else "n/a", f"{fm[0]:.2f}" if fm else "n/a"])
            w(f"**{PORT_LABEL.get(t, t)}**")
            w()
            w(table(["allocator"] + [f"probes N={n}" for n in SHOW_N] + [f"malloc instr N={n}" for n in (1, 16, 64, 256)]
                    + ["free instr N=1 / 256", "malloc max/min", "free max/min", "probes per N", "instructions per N"],
                    out))
            w()
        if rep.want("target_memfrag.png"):
            fig, axes = rep.fig(2, len(good), figsize=(6.5 * len(good), 8.5), squeeze=False)
            for col, t in enumerate(good):
                i = 0
                for (tt, a), v in fits.items():
                    if tt != t:
                        continue
                    axes[0][col].plot(v["ns"], v["mi"], label=a, **m.style(a))
                    axes[1][col].plot(v["ns"], v["pr"], label=a, **m.style(a))
                    i += 1
                axes[0][col].set_yscale("log")
                axes[1][col].set_yscale("log")
                axes[0][col].set_ylabel("instructions of malloc(120)")
                axes[1][col].set_ylabel("probes of malloc(120)")
                axes[0][col].set_title(f"mem_frag on {t}: instructions vs N")
                axes[1][col].set_title(f"mem_frag on {t}: probes vs N")
                for r in (0, 1):
                    axes[r][col].set_xlabel("N (fenced 72-byte free blocks)")
                    axes[r][col].grid(True, which="both", alpha=0.3)
            rep.save(fig, "target_memfrag.png")
        for t in good:
            v = fits.get((t, "tlsf"))
            if v:
                rm, rf = max(v["mi"]) / min(v["mi"]), max(v["fi"]) / min(v["fi"])
                rep.targets.append([f"target {t}: TLSF malloc(120) and its free flat over mem_frag N = {v['ns'][0]}..{v['ns'][-1]}",
                                    f"max/min <= {FLAT_BOUND}",
                                    f"malloc {min(v['mi'])}..{max(v['mi'])} instructions ({rm:.3f}); free "
                                    f"{min(v['fi'])}..{max(v['fi'])} ({rf:.3f}); probes {min(v['pr'])}..{max(v['pr'])}",
                                    verdict(rm <= FLAT_BOUND and rf <= FLAT_BOUND)])
            v = fits.get((t, "seglist"))
            if v and v["fit_i"] and v["fit_p"]:
                off = {p - n for n, p in zip(v["ns"], v["pr"])}
                a_i, _, r2 = v["fit_i"]
                lin = len(off) == 1 and r2 >= 0.99
                rep.targets.append([f"target {t}: segregated fit rises linearly over mem_frag N = {v['ns'][0]}..{v['ns'][-1]}",
                                    "probes = N + c; instructions linear in N (blog: N + 3, ~12 cycles per block)",
                                    f"probes = N + {', '.join(str(o) for o in sorted(off))}; {a_i:.2f} instructions "
                                    f"per block (r^2 {r2:.4f})", verdict(lin)])

    # --- interrupts masked
    w("### Interrupts masked (blog section 12, the open thread)")
    w()
    w("The longest stretch each allocator runs with interrupts masked, counted exactly: the counting lock hooks "
      "wrap `port_lock_hook`/`port_unlock_hook` (PRIMASK on Cortex-M4, mstatus.MIE on RV32), start a count after "
      "masking and end it before unmasking (nested sections count as the outermost); the wrappers' own "
      "instructions are calibrated on a call sequence of known length and taken out. **A stretch below = the "
      "allocator's instructions from its lock hook's return to its call of the unlock hook, inclusive, plus the "
      "hooks' own masked instructions** (after the mask in the lock hook, up to and including the unmask in the "
      "unlock hook: " + ", ".join(f"{hook[t]} on {t}" for t in good) + ", read from the disassembly by "
      "`tools/target-bench.sh`). The hooks' whole fixed cost, a lock and an unlock called directly: " +
      ", ".join(f"{info[t]['hook_pair']} instructions on {t}" for t in good) + ". Every operation of every "
      "workload is measured (set-up operations too); adversarial workloads (Masmano's, `wl_worst`) on a fresh "
      f"2 MiB heap: {', '.join(sorted({r['scenario'] for r in wc}))}. The wait-free trees take no lock hooks: they "
      "never mask interrupts (0, lock-free).")
    w()
    worst_by = {}
    for r in wc:
        if r["target"] in good:
            worst_by.setdefault((r["target"], r["allocator"]), {})[r["scenario"]] = r
    scen = []
    for r in wc:
        if r["scenario"] not in scen:
            scen.append(r["scenario"])
    stretch = {}  # (t, a) -> dict of workload -> total masked (None: lock-free)
    for t in good:
        out = []
        for r in ms:
            if r["target"] != t:
                continue
            a = r["allocator"]
            b = bounds.get((t, a))
            lockfree = r["lock"] == "lock-free"
            h = hook[t]
            cells = {}
            if lockfree:
                cells = {k: None for k in ["memstress", "memfrag"] + scen}
            else:
                cells["memstress"] = _i(r["masked_max"]) + h if r["masked_max"] else None
                frows = [x for x in mf if x["target"] == t and x["allocator"] == a and x["malloc_masked"]]
                cells["memfrag"] = max(max(int(x["malloc_masked"]), int(x["free_masked"]), int(x["setup_masked"]))
                                       for x in frows) + h if frows else None
                for s in scen:
                    x = worst_by.get((t, a), {}).get(s)
                    cells[s] = _i(x["masked_any"]) + h if x and x["masked_any"] else None
            stretch[(t, a)] = cells
            vals = [v for v in cells.values() if v is not None]
            ms_med = f"{_i(r['masked_median']) + h} / {_i(r['masked_max']) + h}" if r["masked_max"] else "0 / 0"
            bnd = (b["malloc_bound"].split(":")[0] + " / " + b["free_bound"].split(":")[0]) if b else ""
            out.append([a, bnd, "lock-free" if lockfree else "masks"] +
                       (["0"] * (2 + len(scen)) + ["**0, lock-free**"] if lockfree else
                        [ms_med, _n(cells["memfrag"])] + [_n(cells[s]) for s in scen] +
                        [f"**{_n(max(vals))}**" if vals else "n/a"]))
        w(f"**{PORT_LABEL.get(t, t)}**: instructions with interrupts masked (hooks included)")
        w()
        rep.headline("On target: longest interrupts-masked stretch (instructions)")
        w(table(["allocator", "stated bound malloc / free", "lock", "mem_stress median / worst", "mem_frag N=1..256 worst"] +
                [f"{s} worst" for s in scen] + ["longest stretch"], out))
        w()

    # TLSF's constant
    for t in good:
        sm = worst_by.get((t, "tlsf"), {}).get(TLSF_CONSTANT_SCENARIO)
        cells = stretch.get((t, "tlsf"))
        if not sm or not cells or not sm["masked_any"]:
            continue
        C = _i(sm["masked_any"]) + hook[t]
        others = {k: v for k, v in cells.items() if v is not None}
        over = {k: v for k, v in others.items() if v > C}
        non_o1 = []
        for (tt, a), c in stretch.items():
            b = bounds.get((tt, a))
            if tt != t or not b or (b["malloc_bound"] == "O(1)" and b["free_bound"] == "O(1)"):
                continue
            adv = [c[s] for s in scen if c.get(s) is not None]
            if b["lock"] == "lock-free":
                continue
            non_o1.append((a, max(adv) if adv else None))
        below = all(v is not None and C < v for _, v in non_o1)
        lo = min((v for _, v in non_o1 if v is not None), default=None)
        w(f"**TLSF's constant on {t}: C = {C} instructions** with interrupts masked. TLSF's critical section runs no "
          "loop whose length depends on the heap (two bitmap searches, one list removal, one split or up to two "
          "merges, the pool check bounded by `RT_HEAP_MAX_POOLS`), so its longest stretch is a constant of the "
          f"code; C is that stretch measured on `{TLSF_CONSTANT_SCENARIO}`, the workload built for TLSF's longest "
          "paths (a malloc that climbs octaves and splits, a free that merges both neighbours), hooks included. "
          "Every other workload must stay at or below it: " +
          ", ".join(f"{k} {v}" for k, v in others.items()) + (" -- none above C." if not over else
                                                               f" -- **above C: {', '.join(over)}**.") +
          " The non-O(1) allocators that mask interrupts, longest stretch on the adversarial workloads: " +
          ", ".join(f"{a} {_n(v)}" for a, v in non_o1) + ".")
        w()
        rep.targets.append([f"target {t}: TLSF's longest interrupts-masked stretch bounded by a stated constant",
                            f"<= C = {C} instructions (its {TLSF_CONSTANT_SCENARIO} stretch) on every workload",
                            f"longest {max(others.values())} over mem_stress, mem_frag N = 1..256 and "
                            f"{len(scen)} adversarial workloads", verdict(not over)])
        rep.targets.append([f"target {t}: TLSF's masked stretch below every non-O(1) allocator's (adversarial)",
                            "C below each", f"C = {C}; lowest non-O(1): {_n(lo)}", verdict(below and bool(non_o1))])


    # realloc's slide: the copy outside the lock
    if rs:
        w("### realloc's slide: the copy is made with interrupts unmasked")
        w()
        w("A boundary-tag heap's realloc that grows a block into its free predecessor moves the payload down. "
          "The move is made with the lock released: the span becomes one used block first, the tail is given "
          "back after (`src/heap/facade.h`, `heap_slide`). `[free S][b: S bytes][used]`, `realloc(b, S + S/2)` "
          "on a fresh heap with the counting hooks: the call's instructions grow with S (the copy), the longest "
          "masked stretch must not (hooks included).")
        w()
        for t in good:
            rows = [r for r in rs if r["target"] == t]
            if not rows:
                continue
            sizes = []
            for r in rows:
                if r["block"] not in sizes:
                    sizes.append(r["block"])
            allocs_rs = []
            for r in rows:
                if r["allocator"] not in allocs_rs:
                    allocs_rs.append(r["allocator"])
            out = []
            flat = True
            spreads = []
            for a in allocs_rs:
                cells = []
                masks = []
                calls = []
                for sz in sizes:
                    x = next((r for r in rows if r["allocator"] == a and r["block"] == sz), None)
                    if x is None:
                        cells.append("")
                        continue
                    mk = _i(x["masked"]) + hook[t]
                    masks.append(mk)
                    calls.append(_i(x["instructions"]))
                    cells.append(f"{_n(_i(x['instructions']))} / {mk}" + ("" if x["slid"] == "1" else " (moved)"))
                # independent of S: the stretch's spread over S is a few instructions (another list
                # of the index for the tail), not a part of the copy, which grows the call by thousands
                spread = max(masks) - min(masks) if masks else 0
                spreads.append(spread)
                flat = flat and bool(calls) and spread * 100 < max(calls) - min(calls)
                out.append([a] + cells)
            w(f"**{PORT_LABEL.get(t, t)}**: instructions of the call / longest masked stretch, per block size S")
            w()
            w(table(["allocator"] + [f"S = {sz} B" for sz in sizes], out))
            w()
            rep.targets.append([f"target {t}: realloc's slide masks interrupts for a constant, whatever the block",
                                "the stretch's spread over S = " + ", ".join(sizes) + " B below 1 % of the call's growth",
                                f"spread at most {max(spreads)} instructions", verdict(flat)])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--parse":
        return parse(sys.argv[2])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
