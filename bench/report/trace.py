# SPDX-License-Identifier: MIT
"""The "real programs" section of results/REPORT.md (doc/traces.md), called by bench/report.py.

Reads trace.csv (one row per program, stream and allocator) and trace_programs.csv (program, status,
streams, ops, live_peak, command) written by `rtbench run trace` (bench/studies/exp_trace.c): per
program the heap each allocator needs beside the live peak (and the bound where one is defended),
F at the peak, instructions per call (mean / p99 / max of a ptrace sample), ns per call as a ratio
to glibc's in the same run, the worst counted call; glibc's footprint over the live peak (columns
glibc_footprint, glibc_footprint_ratio, glibc_fresh: the peak of mallinfo2 arena + hblkhd over a
replay in a process of its own, on a new arena); a line naming the allocator that fits the trace
in the smallest heap and the one with the lowest worst case; the real-program targets for TLSF and the
layout target (tlsf's heap needed <= glibc's footprint, with this binary's alignment); plots
trace_heap.png (heap needed / live peak per allocator per program) and trace_instructions.png
(instructions per call: mean and max). A program that was not run shows its reason.
A program with several streams: each stream sized and replayed on its own; the tables show, per
allocator, the stream with the largest heap needed (the others are in the CSV).

The threaded program (python3-threads: workload_threads.py, 4 producers and a consumer) is
replayed with one thread per recorded thread (trace/threads.h) and has a table of its own,
from trace_threads.csv: per thread-safe allocator the heap needed (the calls in recorded order),
ns per call with the threads running at once (and its ratio to glibc's in the same run), p99 and
max per call, failures.
"""

TLSF = "tlsf"
THREADED = ("python3-threads",)  # replayed with one thread per recorded thread: _threads_section
TARGET_NS = 1.00     # target: TLSF's ns per call <= glibc's in the same run
TARGET_HEAP = 1.25   # target: TLSF's heap needed <= 1.25 x the live peak
# target: TLSF's heap needed <= glibc's footprint on the same stream (16-byte alignment)


def _align(meta):
    """RT_HEAP_ALIGN from the CSV's "# layout:" line ("64-bit words, RT_HEAP_ALIGN=16"), else None."""
    for line in meta or []:
        if line.startswith("layout:") and "RT_HEAP_ALIGN=" in line:
            return line.split("RT_HEAP_ALIGN=", 1)[1].split()[0].rstrip(",")
    return None


def _glibc_target(rep, m, prog, tl, where, align):
    """The layout target: tlsf's heap needed / live peak <= glibc's footprint / live peak, same stream. The
    heap needed is the upper end of the bisection's last step: when it is above the footprint but
    its lower end is not, the verdict says so."""
    num = m.num
    hn, gf, lp = num(tl.get("heap_needed")), num(tl.get("glibc_footprint")), num(tl.get("live_peak"))
    if hn is None or hn <= 0 or gf is None or gf <= 0 or not lp:
        return
    res = num(tl.get("resolution")) or 0
    note = "" if tl.get("glibc_fresh") in (None, "", "1") else "; glibc's arena reused: footprint a floor"
    if hn > gf and hn - res <= gf:
        note += f"; within the bisection's resolution ({res:,.0f} B)"
    layout = f"A={align}" if align else "layout not recorded"
    rep.targets.append([f"trace {prog}: tlsf heap needed / live peak vs glibc's footprint ({layout})",
                        f"<= {gf / lp:.3f} (glibc footprint / live peak)", f"{hn / lp:.3f}{where}{note}",
                        m.verdict(hn <= gf)])


def _worst_stream(rows, num):
    """Per allocator, the row of the stream with the largest heap needed (the heap that hosts the
    whole program), else the one with the most ops (system peers: not sized). A tiny stream's
    ratio says more about the allocator's smallest buffer than about the program."""
    out = {}
    for r in rows:
        a = r["allocator"]
        cur = out.get(a)
        key = (num(r.get("heap_needed")) or 0, num(r.get("ops")) or 0)
        if cur is None or key > (num(cur.get("heap_needed")) or 0, num(cur.get("ops")) or 0):
            out[a] = r
    return out


def section(rep, m):
    meta, rows = m.read_csv(rep.path("trace.csv"))
    _, progs = m.read_csv(rep.path("trace_programs.csv"))
    if rows is None:
        return
    progs = progs or []
    num, fmt, table, cell = m.num, m.fmt, m.table, m.cell
    w = rep.w
    w("## Real programs: recorded traces replayed and sized")
    w()
    w("`rtbench run trace` records three programs with `rtbench trace record` (sqlite3 on "
      "`workloads/programs/workload.sql`, lua5.4 on `workload.lua`, python3 on `workload.py`) and replays "
      "each stream single-threaded on every allocator (trace/replay.c). **Heap needed**: the smallest "
      "size passed to create on which every call that got memory in the recording gets it again, by "
      "bisection (verified by one more replay; sizes above it replayed too: a failure there is reported as "
      "non-monotone); **/ live peak**: that over the most requested bytes live at once. **Bound**: the "
      "buddy and the wait-free trees, (r+1)M + 2B bytes of blocks (Knuth, TAOCP 2.5 ex. 41; M the peak of "
      "live blocks rounded to a multiple of B, the largest block, r = log2(B / smallest block); metadata "
      "not included); TLSF, the fit lists, FMA and BSD 4.4: no bound defended. **F**: (watermark on the "
      "heap needed / live peak - 1) x 100 % (not measured for system peers). **Instructions**: exact, a "
      "ptrace sample (its stride in the CSV). **x glibc**: median ns per call of untimed replays over glibc's, "
      "interleaved in the same run (the machine may be loaded). **glibc's footprint**: the peak, over a replay "
      "of the stream, of the bytes glibc holds from the system for its blocks (`mallinfo2()` arena + hblkhd: "
      "arena bytes obtained, free chunks and top included, plus mmapped chunks), sampled after every call that "
      "can grow it, the replay in a process of its own on a new arena (bench/harness/glibcmem.h) so that "
      "rtbench's own allocations do not count; over the live peak, it is the figure to set beside the heap "
      "needed / live peak.")
    w()
    by_prog = {}
    for r in rows:
        by_prog.setdefault(r["program"], []).append(r)
    order = [p["program"] for p in progs] or list(by_prog)
    for p in by_prog:
        if p not in order:
            order.append(p)
    order = [p for p in order if p not in THREADED]
    pinfo = {p["program"]: p for p in progs}
    headline = []
    plot_data = {}
    for prog in order:
        info = pinfo.get(prog, {})
        status = info.get("status") or "complete"
        if status.startswith("not run") or prog not in by_prog:
            w(f"### {prog}")
            w()
            w(f"**{status if status.startswith('not run') else 'not run: no rows'}**")
            w()
            headline.append([prog, status if status.startswith("not run") else "not run", None, None, None, None,
                             None])
            continue
        prs = by_prog[prog]
        best = _worst_stream(prs, num)
        ops_replayed = max(int(num(r["ops"]) or 0) for r in prs)
        ops_total = int(num(info.get("ops")) or 0)
        prefix = ops_total > ops_replayed and len({r["stream"] for r in prs}) == 1
        peak = max(num(r["live_peak"]) or 0 for r in prs)
        w(f"### {prog}")
        w()
        w(f"`{info.get('command', prog)}`: {info.get('streams') or '1'} stream(s), "
          f"{ops_total:,} ops recorded" + (f", the first {ops_replayed:,} replayed (quick scale)" if prefix else "")
          + f"; live peak {peak:,.0f} bytes.")
        w()
        t1, t2 = [], []
        for a, r in best.items():
            ratio = num(r.get("ratio"))
            hn = num(r.get("heap_needed"))
            heap = m.DASH if hn is None else ("does not fit" if hn < 0 else f"{hn:,.0f}")
            bound = num(r.get("bound"))
            lp = num(r.get("live_peak"))
            bratio = bound / lp if bound is not None and lp else None
            note = []
            if r.get("nonmonotone") not in (None, "", "0"):
                note.append("non-monotone")
            if r.get("verified") == "0":
                note.append("not verified")
            t1.append([a, heap, fmt(ratio, 3), fmt(bound) if bound is None else f"{bound:,.0f}", fmt(bratio, 2),
                       fmt(r.get("f_percent"), 1), cell(r.get("failures")), ", ".join(note) or m.DASH])
            worst = m.DASH
            if num(r.get("worst_ins")) is not None:
                worst = f"op {r['worst_op']} {r['worst_kind']}({r['worst_size']}): {r['worst_ins']}"
            t2.append([a, fmt(r.get("ins_mean"), 1), fmt(r.get("ins_p99")), fmt(r.get("ins_max")),
                       fmt(r.get("ns_per_call"), 1), fmt(r.get("ns_ratio_glibc"), 2), worst])
        w(table(["allocator", "heap needed (B)", "/ live peak", "bound (B)", "bound / live peak", "F %", "failures",
                 "notes"], t1, ["l", "r", "r", "r", "r", "r", "r", "l"]))
        w()
        w(table(["allocator", "instructions mean", "p99", "max", "ns/call", "x glibc", "worst call counted"], t2,
                ["l", "r", "r", "r", "r", "r", "l"]))
        w()
        kinds = ("malloc", "free", "realloc", "calloc", "memalign")
        if any(f"{k}_max" in r for r in best.values() for k in kinds):
            t3 = []
            for a, r in best.items():
                row = [a]
                for k in kinds:
                    mx = num(r.get(f"{k}_max"))
                    row.append(None if mx is None else
                               f"{fmt(r.get(f'{k}_mean'), 1)} / {fmt(r.get(f'{k}_p99'))} / {fmt(mx)} "
                               f"({fmt(r.get(f'{k}_calls'))})")
                t3.append(row)
            w("Instructions per call by kind, mean / p99 / max (calls counted):")
            w()
            w(table(["allocator"] + list(kinds), t3, ["l", "r", "r", "r", "r", "r"]))
            w()
        sized = [(num(r.get("heap_needed")), a) for a, r in best.items() if (num(r.get("heap_needed")) or -1) > 0]
        counted = [(num(r.get("ins_max")), a) for a, r in best.items() if num(r.get("ins_max")) is not None]
        line = []
        if sized:
            hv, ha = min(sized)
            line.append(f"smallest heap: **{ha}** ({hv:,.0f} bytes, {hv / peak:.3f} x the live peak)" if peak else
                        f"smallest heap: **{ha}**")
        if counted:
            iv, ia = min(counted)
            line.append(f"lowest worst case counted: **{ia}** ({iv:,.0f} instructions)")
        if line:
            w("; ".join(line) + ".")
            w()
        tl = best.get(TLSF)
        fp_row = tl if tl is not None and num(tl.get("glibc_footprint")) else next(
            (r for r in prs if num(r.get("glibc_footprint"))), None)
        gratio = None
        if fp_row is not None:
            gf = num(fp_row.get("glibc_footprint"))
            gratio = num(fp_row.get("glibc_footprint_ratio"))
            fresh = "a new arena" if fp_row.get("glibc_fresh") in ("", "1", None) else \
                "an arena reused (a floor)"
            w(f"glibc's footprint: {gf:,.0f} bytes, **{fmt(gratio, 3)} x the live peak** (stream "
              f"{fp_row.get('stream', '0')}, {fresh}).")
            w()
        plot_data[prog] = best
        tq = best.get("tlsfq")  # TLSF behind quick lists: the same targets, shown beside tlsf's
        if tq is not None:
            where = f" (first {ops_replayed:,} ops)" if prefix else ""
            nsq = num(tq.get("ns_ratio_glibc"))
            if nsq is not None:
                rep.targets.append([f"trace {prog}: tlsfq ns per call vs glibc (same run)", f"<= {TARGET_NS:.2f}x",
                                    f"{nsq:.2f}x{where}", m.timed_verdict(nsq <= TARGET_NS, meta)])
        if tl is not None:
            ns = num(tl.get("ns_ratio_glibc"))
            hr = num(tl.get("ratio"))
            where = f" (first {ops_replayed:,} ops)" if prefix else ""
            if ns is not None:
                rep.targets.append([f"trace {prog}: tlsf ns per call vs glibc (same run)", f"<= {TARGET_NS:.2f}x",
                                    f"{ns:.2f}x{where}", m.timed_verdict(ns <= TARGET_NS, meta)])
            if hr is not None and hr > 0:
                rep.targets.append([f"trace {prog}: tlsf heap needed / live peak", f"<= {TARGET_HEAP:.2f}",
                                    f"{hr:.3f}{where}", m.verdict(hr <= TARGET_HEAP)])
            _glibc_target(rep, m, prog, tl, where, _align(meta))
            headline.append([prog, "complete" + (" (prefix)" if prefix else ""), f"{peak:,.0f}", fmt(hr, 3),
                             fmt(gratio, 3), fmt(ns, 2), min(sized)[1] if sized else None])
        else:
            headline.append([prog, "complete", f"{peak:,.0f}", None, fmt(gratio, 3), None,
                             min(sized)[1] if sized else None])
    rep.headlines.append(("Real programs: TLSF on recorded traces", table(
        ["program", "status", "live peak (B)", "tlsf heap / live peak", "glibc footprint / live peak", "tlsf x glibc",
         "smallest heap"], headline)))
    _threads_section(rep, m, progs)
    if plot_data and rep.want("trace_heap.png"):
        _bars(rep, m, plot_data, "ratio", "heap needed / live peak", "trace_heap.png",
              "Heap needed per allocator over the live peak (1 = no overhead at all)", log=False, ref=1.0)
    if plot_data and rep.want("trace_instructions.png"):
        _bars(rep, m, plot_data, "ins_mean", "instructions per call (bar: mean; dot: max counted; log)",
              "trace_instructions.png", "Instructions per call on the recorded traces", log=True, top="ins_max")


def _threads_section(rep, m, progs):
    """The threaded program's table (trace_threads.csv), or why it was not run."""
    _, rows = m.read_csv(rep.path("trace_threads.csv"))
    pinfo = {p["program"]: p for p in progs}
    num, fmt, table, cell = m.num, m.fmt, m.table, m.cell
    w = rep.w
    for prog in THREADED:
        prs = [r for r in rows or [] if r.get("program") == prog]
        status = (pinfo.get(prog) or {}).get("status") or ""
        if not prs and not status:
            continue
        w(f"### {prog}: one thread per recorded thread")
        w()
        if not prs:
            w(f"**{status if status.startswith('not run') else 'not run: no rows'}**")
            w()
            continue
        r0 = prs[0]
        ops_total = int(num((pinfo.get(prog) or {}).get("ops")) or 0)
        ops = int(num(r0.get("ops")) or 0)
        w(f"`{(pinfo.get(prog) or {}).get('command', prog)}`, stream {r0.get('stream')}: {cell(r0.get('threads'))} "
          f"threads, {ops:,} ops" + (f" (the first of {ops_total:,}: quick scale)" if ops_total > ops else "")
          + f", {int(num(r0.get('cross_frees')) or 0):,} frees and reallocs of another thread's block, live peak "
          f"{num(r0.get('live_peak')) or 0:,.0f} bytes. Each recorded thread is a thread of the replay "
          "(`rtbench trace threads`, trace/threads.h). **Heap needed**: the smallest buffer on which every "
          "call that got memory in the recording gets it again, the calls in their recorded order, each made by its "
          "own thread (a baton passed between them); **ns/call**: the threads run at once, a call waiting only for "
          "the earlier calls on its block; every call timed with the benchmark's clock, the mean, median of the "
          "runs; **x glibc**: over glibc's in the same run; p99 and max per call in "
          f"{'cycles' if any('p99_cycles' in r for r in prs) else 'ns'} (the max includes preemption when the "
          "threads outnumber the CPUs).")
        w()
        glibc = next((num(r.get("ns_per_call")) for r in prs if r.get("allocator") == "glibc"), None)
        unit = "cycles" if any("p99_cycles" in r for r in prs) else "ns"
        t1, t2 = [], []
        for r in prs:
            hn = num(r.get("heap_needed"))
            ns = num(r.get("ns_per_call"))
            t1.append([r.get("allocator"), m.DASH if hn is None else f"{hn:,.0f}", fmt(r.get("ratio"), 3),
                       "not verified" if r.get("verified") == "0" else m.DASH])
            t2.append([r.get("allocator"), fmt(ns, 1), fmt(ns / glibc, 2) if ns is not None and glibc else m.DASH,
                       fmt(r.get(f"p99_{unit}")), fmt(r.get(f"max_{unit}")), cell(r.get("failures"))])
        w(table(["allocator", "heap needed (B)", "/ live peak", "notes"], t1, ["l", "r", "r", "l"]))
        w()
        w(table(["allocator", "ns/call", "x glibc", f"p99 ({unit})", f"max ({unit})", "failures"], t2,
                ["l", "r", "r", "r", "r", "r"]))
        w()


def _bars(rep, m, data, key, ylabel, fname, title, log, ref=None, top=None):
    allocs = []
    for best in data.values():
        for a in best:
            if a not in allocs and m.num(best[a].get(key)) is not None and (m.num(best[a].get(key)) or 0) > 0:
                allocs.append(a)
    if not allocs:
        return
    progs = list(data)
    fig, ax = rep.fig(figsize=(max(7, 1.2 * len(allocs) + 2), 4.5))
    width = 0.8 / max(1, len(progs))
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"]
    for j, p in enumerate(progs):
        xs, ys, tx, ty = [], [], [], []
        for i, a in enumerate(allocs):
            r = data[p].get(a)
            v = m.num(r.get(key)) if r else None
            if v is None or v <= 0:
                continue
            xs.append(i + (j - (len(progs) - 1) / 2) * width)
            ys.append(v)
            if top:
                t = m.num(r.get(top))
                if t:
                    tx.append(xs[-1])
                    ty.append(t)
        ax.bar(xs, ys, width=width, label=p, color=colours[j % len(colours)])
        if tx:
            ax.plot(tx, ty, "o", color=colours[j % len(colours)], markersize=4, markeredgecolor="black",
                    markeredgewidth=0.5)
    if ref is not None:
        ax.axhline(ref, color="black", linewidth=0.8)
    ax.set_xticks(range(len(allocs)))
    ax.set_xticklabels(allocs, rotation=45, ha="right")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    rep.save(fig, fname, title)
