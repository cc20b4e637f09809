# SPDX-License-Identifier: MIT
"""The "block layouts" section of results/REPORT.md (doc/performance.md: alignment as a knob), called by core.py.

Reads layout.csv (measure, allocator, layout, word_bits, heap_align, workload, value, n, heap_needed,
live_peak) written by `rtbench run layout` (bench/studies/exp_layout.c), which runs rtbench and its
siblings rtbench-align8 (64-bit words, RT_HEAP_ALIGN=8) and rtbench-m32 (32-bit words,
RT_HEAP_ALIGN=8): per boundary-tag heap and layout, Masmano 2006 Tests 1-3 F (mean over the seeds of
experiment masmano's fragmentation runs) and the heap each recorded program needs over its live peak
(`trace size`, whole recordings, the stream needing the largest heap). The layout targets for TLSF as
verdicts: F with the 32-bit layout at or below the paper's TLSF; heap needed with A=8 (64-bit) at or
below the common C TLSF's 1.24; with A=16 at or below glibc's footprint: judged in the real-programs
section (bench/report/trace.py), whose experiment measures glibc's footprint on each trace. The headline table: TLSF per layout.
"""

TLSF = "tlsf"
PAPER_TLSF = {"test1": 10.49, "test2": 14.86, "test3": 11.15}  # Masmano 2006 Table 7, TLSF avg, 32-bit x86
TARGET_A8 = 1.24  # target: the common C TLSF, 8-byte alignment: 1.12-1.24 over the programs (upper end)


def _order(rows, key):
    out = []
    for r in rows:
        if r[key] not in out:
            out.append(r[key])
    return out


def section(rep, m):
    meta, rows = m.read_csv(rep.path("layout.csv"))
    if rows is None:
        return
    num, fmt, table, verdict = m.num, m.fmt, m.table, m.verdict
    w = rep.w
    w("## Block layouts: fragmentation per alignment and word size")
    w()
    w("`rtbench run layout` runs rtbench (the configured layout) and its siblings `rtbench-align8` (64-bit words, "
      "`RT_HEAP_ALIGN=8`) and `rtbench-m32` (`-m32`: 32-bit words, 8-byte alignment, the layout Masmano 2006 "
      "measured on 32-bit x86) as child processes: each runs experiment masmano's fragmentation runs "
      "(`RTBENCH_MM_FRAG_ONLY=1`, same seed and scale) and `trace size` on the programs of experiment trace, "
      "recorded once. **F**: (watermark / peak live - 1) x 100 %, mean over the seeds. **heap / live peak**: the "
      "smallest heap on which the whole recording runs, over its live peak, for the stream that needs the largest "
      "heap (the recordings are of the 64-bit programs: the 32-bit layout replays their request sizes). *no fit*: "
      "no heap up to 4x the replay's buffer runs it (on 32-bit at RT_HARDENING >= 1 a pool is below 2^24 bytes).")
    w()
    for mm in meta or []:
        if mm.startswith(("compiler", "flags", "hardening", "layout", "date", "scale")):
            k, v = mm.split(":", 1)
            w(f"- **{k.strip()}** (rtbench): {v.strip()}")
    w()
    layouts = _order(rows, "layout")
    allocs = _order(rows, "allocator")
    mf = {(r["allocator"], r["layout"], r["workload"]): r for r in rows if r["measure"] == "masmano_F"}
    tr = {(r["allocator"], r["layout"], r["workload"]): r for r in rows if r["measure"] == "trace_heap_ratio"}
    progs = _order([r for r in rows if r["measure"] == "trace_heap_ratio"], "workload")
    tests = ["test1", "test2", "test3"]

    def ratio(r):
        if r is None:
            return None
        return fmt(r.get("value"), 3) if num(r.get("value")) is not None else "no fit"

    out = []
    for a in allocs:
        for lay in layouts:
            cells = [a, lay] + [fmt(mf[(a, lay, t)]["value"], 2) if (a, lay, t) in mf else None for t in tests]
            cells += [ratio(tr.get((a, lay, p))) for p in progs]
            out.append(cells)
    hdr = ["allocator", "layout", "F % Test 1", "Test 2", "Test 3"] + [f"{p} heap / peak" for p in progs]
    w(table(hdr, out, ["l", "l"] + ["r"] * (len(hdr) - 2)))
    w()
    w("The paper's TLSF (32-bit x86): F 10.49 / 14.86 / 11.15 %. The target \"A=16 at most glibc's footprint\" is "
      "judged in the real-programs section (experiment trace measures glibc's footprint on each trace).")
    w()

    head = []
    for lay in layouts:
        if not any(k[0] == TLSF and k[1] == lay for k in list(mf) + list(tr)):
            continue
        head.append([lay] + [fmt(mf[(TLSF, lay, t)]["value"], 2) if (TLSF, lay, t) in mf else None for t in tests]
                    + [ratio(tr.get((TLSF, lay, p))) for p in progs])
    if head:
        rep.headlines.append(("Block layouts: TLSF's fragmentation per layout", table(
            ["layout", "F % Test 1", "Test 2", "Test 3"] + [f"{p} heap / peak" for p in progs], head)))

    for lay in layouts:
        sample = next((r for r in rows if r["layout"] == lay), None)
        bits, align = num(sample.get("word_bits")), num(sample.get("heap_align"))
        if bits == 32 and align == 8:
            for i, t in enumerate(tests):
                r = mf.get((TLSF, lay, t))
                if r is not None:
                    v = num(r["value"])
                    rep.targets.append([f"Masmano Test {i + 1}, 32-bit layout: tlsf F", f"<= {PAPER_TLSF[t]:.2f} %",
                                        f"{v:.2f} % (mean of {r['n']} seeds)", verdict(v <= PAPER_TLSF[t])])
        if bits == 64 and align == 8:
            for p in progs:
                r = tr.get((TLSF, lay, p))
                if r is not None:
                    v = num(r["value"])
                    rep.targets.append([f"trace {p}, 64-bit A=8: tlsf heap needed / live peak",
                                        f"<= {TARGET_A8:.2f} (common C TLSF, 8-byte alignment)",
                                        fmt(v, 3) if v is not None else "no fit",
                                        verdict(v is not None and v <= TARGET_A8)])
