#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact instructions per call from callgrind output files, beside rtbench's ptrace sample.

    callgrind_parse.py --csv OUT.csv [--inscount inscount.csv] [--meta clock.csv]
                       callgrind.WORKLOAD.ALLOC.out ...

For each file (named callgrind.<workload>.<allocator>.out, as bench/callgrind_check.sh writes
them), and for each malloc/free function of that allocator that was called, prints and writes:
calls (sum of the calls= lines into it, from every caller), inclusive Ir of those calls (the cost
lines that follow them: the callee and everything it calls), and their quotient, the exact mean
over ALL calls of the run. Two levels are reported: the descriptor's function (what rtbench's
ptrace counter counts from: for the library's heaps the wrapper <name>_d_malloc, one jump) and
the implementation (rt_<name>_malloc; glibc's and jemalloc's malloc; mimalloc's mi_malloc). Callgrind records the wrapper's tail jump
as a call, so descriptor = implementation + 1 instruction per call there.

Parses the callgrind format directly (name compression, any number of position columns); no
callgrind_annotate needed.
"""
import argparse
import csv
import os
import re
import sys
from collections import defaultdict


def parse_callgrind(path):
    """Returns {function: [calls, inclusive_ir]} for every function called at least once."""
    names = {}
    npos = 1
    ir_col = 0
    cur_fn = None
    callee = None
    pending = None
    calls = defaultdict(int)
    incl = defaultdict(int)
    name_re = re.compile(r"^\((\d+)\)(?:\s+(.*))?$")

    def fn_name(spec):
        spec = spec.strip()
        m = name_re.match(spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "(" + m.group(1) + ")")

    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if pending is not None:
                fields = line.split()
                costs = fields[npos:]
                ir = int(costs[ir_col]) if len(costs) > ir_col else 0
                calls[pending[0]] += pending[1]
                incl[pending[0]] += ir
                pending = None
                continue
            if not line or line.startswith("#"):
                continue
            if line.startswith("positions:"):
                npos = len(line.split()[1:])
            elif line.startswith("events:"):
                events = line.split()[1:]
                ir_col = events.index("Ir") if "Ir" in events else 0
            elif line.startswith("fn="):
                cur_fn = fn_name(line[3:])
            elif line.startswith("cfn="):
                callee = fn_name(line[4:])
            elif line.startswith("calls="):
                count = int(line[6:].split()[0])
                pending = (callee, count)
    return {k: [calls[k], incl[k]] for k in calls}


def candidates(alloc):
    """(function, op, level) names that may hold the allocator's malloc and free."""
    out = []
    for op in ("malloc", "free"):
        out.append((f"{alloc}_d_{op}", op, "descriptor"))  # the library's registry wrappers
        out.append((f"{alloc}_{op}", op, "descriptor"))    # rtbench's peers (glibc_malloc, noop_malloc)
        out.append((f"rt_{alloc}_{op}", op, "implementation"))
        if alloc in ("glibc", "jemalloc", "mimalloc"):
            # jemalloc's unprefixed malloc/free (dlopen'ed, bench/peers.c); mimalloc's mi_malloc is
            # an alias of its malloc, which callgrind names malloc. Functions are keyed by name, so
            # these rows also hold the few calls of glibc's own malloc/free in the same process
            # (about 20): their calls exceed the descriptor's by that many.
            out.append((op, op, "implementation"))
        if alloc == "mimalloc":
            out.append((f"mi_{op}", op, "implementation"))
    return out


def read_meta(path):
    lines = []
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.startswith("#"):
                    break
                lines.append(line.rstrip("\n"))
    return lines


def read_inscount(path):
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        for r in rows:
            out[(r["workload"], r["allocator"], r["op"])] = (float(r["mean"]), int(r["calls"]), int(r["max"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--csv", required=True)
    ap.add_argument("--inscount")
    ap.add_argument("--meta")
    ap.add_argument("--valgrind", default="")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()

    sample = read_inscount(args.inscount)
    rows = []
    for path in args.files:
        m = re.match(r"callgrind\.([^.]+)\.(.+)\.out$", os.path.basename(path))
        if not m:
            print(f"callgrind_parse: skipping {path} (not callgrind.WORKLOAD.ALLOC.out)", file=sys.stderr)
            continue
        workload, alloc = m.group(1), m.group(2)
        funcs = parse_callgrind(path)
        for fn, op, level in candidates(alloc):
            if fn in funcs and funcs[fn][0] > 0:
                n, ir = funcs[fn]
                s = sample.get((workload, alloc, op))
                rows.append({
                    "workload": workload, "allocator": alloc, "op": op, "level": level, "function": fn,
                    "calls": n, "inclusive_ir": ir, "mean": ir / n,
                    "ptrace_sample_mean": f"{s[0]:.3f}" if s and level == "descriptor" else "",
                    "ptrace_sample_calls": s[1] if s and level == "descriptor" else "",
                })

    print("callgrind cross-check: exact mean instructions per call over every call of the run")
    print(f"{'workload':8} {'allocator':10} {'function':18} {'level':14} {'calls':>9} {'inclusive Ir':>13} "
          f"{'mean':>8}  {'ptrace sample mean (calls)':>27}")
    for r in rows:
        ps = ""
        if r["ptrace_sample_mean"] != "":
            d = float(r["ptrace_sample_mean"]) - r["mean"]
            ps = f"{float(r['ptrace_sample_mean']):8.1f} ({r['ptrace_sample_calls']}) {d:+.1f}"
        print(f"{r['workload']:8} {r['allocator']:10} {r['function']:18} {r['level']:14} {r['calls']:9d} "
              f"{r['inclusive_ir']:13d} {r['mean']:8.2f}  {ps:>27}")

    with open(args.csv, "w", encoding="utf-8", newline="") as f:
        for line in read_meta(args.meta):
            f.write(line + "\n")
        if args.valgrind:
            f.write(f"# valgrind: {args.valgrind}\n")
        fields = ["workload", "allocator", "op", "level", "function", "calls", "inclusive_ir", "mean",
                  "ptrace_sample_mean", "ptrace_sample_calls"]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            r = dict(r)
            r["mean"] = f"{r['mean']:.3f}"
            w.writerow(r)
    print(f"callgrind_parse: wrote {args.csv}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
