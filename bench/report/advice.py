# SPDX-License-Identifier: MIT
"""The report's opening answer: which allocator for which need, from this run's programs.

Built as `rtbench trace advise` decides (trace/replay.c, doc/traces.md), from the run's own
CSVs: trace.csv (the recorded programs sqlite3, lua5.4, python3: heap needed, instructions of a
fixed sample, the same calls for every allocator), allocators.csv (each allocator's stated bounds
and thread safety) and, where the footprint step ran, footprint_alloc.csv (Cortex-M4 code bytes).
Every verdict rests on counts -- heap bytes, exact instructions, code bytes -- never on a clock.
Per allocator, over the programs: the largest heap needed over the live peak (the heap a system
hosting all three needs, relative), the mean instructions per counted call, the worst counted call.
"""
from . import common as m

NEEDS = ["bounded worst case", "bounded, thread-safe", "smallest heap", "fastest (instructions)",
         "least flash"]


def _bounded(a):
    mb, fb = a.get("malloc_bound", ""), a.get("free_bound", "")
    return all(w not in mb and w not in fb for w in ("unbounded", "free blocks")) and a.get("family") != "system"


def gather(path):
    """{allocator: figures} over the programs of trace.csv, or None when the run has none."""
    _, rows = m.read_csv(path("trace.csv"))
    _, allocs = m.read_csv(path("allocators.csv"))
    if not rows or not allocs:
        return None, None
    info = {a["name"]: a for a in allocs}
    _, fp = m.read_csv(path("footprint_alloc.csv"))
    flash = {r["allocator"]: m.num(r.get("text")) for r in (fp or []) if r.get("target") == "cortex-m4"}
    progs = sorted({r["program"] for r in rows})
    agg = {}
    for r in rows:
        name = r["allocator"]
        a = agg.setdefault(name, {"ratio": 0.0, "ins": 0.0, "calls": 0, "worst": 0, "worst_where": "",
                                  "ok": True, "programs": set()})
        a["programs"].add(r["program"])
        ratio, mean, worst = m.num(r.get("ratio")), m.num(r.get("ins_mean")), m.num(r.get("ins_max"))
        calls = sum(m.num(r.get(k + "_calls"), 0) for k in ("malloc", "free", "realloc", "calloc", "memalign"))
        if info.get(name, {}).get("family") != "system":
            if ratio is None or (m.num(r.get("failures"), 0) or 0) > 0:
                a["ok"] = False
            else:
                a["ratio"] = max(a["ratio"], ratio)
        if mean is not None and calls:
            a["ins"] += mean * calls
            a["calls"] += calls
        if worst is not None and worst > a["worst"]:
            a["worst"] = int(worst)
            a["worst_where"] = f'{r["program"]} {r.get("worst_kind", "")} of {r.get("worst_size", "")} B'
    for name, a in agg.items():
        a["ok"] = a["ok"] and a["programs"] == set(progs) and a["calls"] > 0
        a["mean"] = a["ins"] / a["calls"] if a["calls"] else None
        a["flash"] = flash.get(name)
        a["info"] = info.get(name, {})
    return agg, progs


def _score(a, need):
    """(qualifies, score: lower is better)."""
    info = a["info"]
    own = info.get("family") != "system"
    if not a["ok"]:
        return False, 0
    if need == 0:
        return own and _bounded(info), (a["worst"], a["ratio"])
    if need == 1:
        return own and _bounded(info) and info.get("thread_safe") == "1", (a["worst"], a["ratio"])
    if need == 2:
        return own, (a["ratio"], a["worst"])
    if need == 3:
        return a["mean"] is not None, (a["mean"], 0)
    return own and a["flash"] is not None, (a["flash"], a["ratio"])


def _why(need, w, r):
    if need in (0, 1):
        return (f"worst call {r['worst']} instructions against {w['worst']}" if r["worst"] != w["worst"]
                else f"the same worst call, heap {r['ratio']:.4f}x the live peak against {w['ratio']:.4f}x")
    if need == 2:
        return f"heap {r['ratio']:.4f}x the live peak against {w['ratio']:.4f}x"
    if need == 3:
        return f"{r['mean']:.1f} instructions a call against {w['mean']:.1f}"
    return f"{r['flash']:.0f} B of code against {w['flash']:.0f} B"


def table(path):
    """The markdown of the answer, or None when the run has no programs."""
    agg, progs = gather(path)
    if not agg:
        return None
    rows = []
    for n, need in enumerate(NEEDS):
        ranked = sorted((s, name) for name, a in agg.items() for q, s in [_score(a, n)] if q)
        if not ranked:
            why = ("no footprint figures in this run (the footprint step)" if n == 4
                   else "none of the allocators measured qualifies")
            rows.append([need, m.DASH, m.DASH, m.DASH, why])
            continue
        win = agg[ranked[0][1]]
        heap = (f"{win['ratio']:.3f}x live peak" if win["info"].get("family") != "system" else "its own")
        if n == 4:
            heap += f"; {win['flash']:.0f} B code"
        runner = m.DASH
        if len(ranked) > 1:
            r = agg[ranked[1][1]]
            runner = f"{ranked[1][1]}: {_why(n, win, r)}"
        rows.append([need, ranked[0][1], heap, f"{win['worst']} ({win['worst_where']})", runner])
    out = [f"From this run's recorded programs ({', '.join(progs)}), as `rtbench trace advise` decides: "
           "every verdict on counts (heap bytes by bisection, exact instructions of the same sampled calls for "
           "every allocator, Cortex-M4 code bytes), none on a clock. Heap: the largest heap needed over the "
           "programs, over that program's live peak -- configure it plus a margin (`trace advise` prints bytes "
           "with 20 %). Bounded: the allocator's stated bound does not grow with the free blocks "
           "(allocators.csv). Worst call: the most instructions of one counted call. Record your own program "
           "(`rtbench trace record`) and run `rtbench trace advise` on it: this table answers for these three.",
           "",
           m.table(["need", "use", "heap to configure", "worst call counted (instructions)",
                    "runner-up, and why it lost"], rows, ["l", "l", "l", "l", "l"])]
    return "\n".join(out)
