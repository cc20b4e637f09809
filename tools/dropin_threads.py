#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dropin_threads.py -- the drop-in malloc under threads: CPU nanoseconds per malloc/free pair of
bench/dropin/pairs.c (T threads, each N pairs of 16..512 bytes over a window of 256 blocks) on
glibc's malloc and under LD_PRELOAD of librtalloc-malloc.so for each allocator, as medians of
--reps runs, allocators interleaved, and each as a ratio to glibc's in the same run.

    tools/dropin_threads.py [--bin build/bench/bench/rtbench-pairs]
                            [--lib build/bench/drivers/librtalloc-malloc.so]
                            [--alloc tlsf,tlsfq,tlsfmc,wfc] [--threads 1,2] [--pairs 2000000] [--reps 3]
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one(binary, lib, alloc, threads, pairs):
    env = dict(os.environ)
    if alloc != "glibc":
        env["LD_PRELOAD"] = lib
        env["RTALLOC"] = alloc
    out = subprocess.run([binary, str(threads), str(pairs)], env=env, capture_output=True, text=True, check=True)
    f = out.stdout.split()
    return float(f[f.index("cpu_ns_per_pair") + 1]), float(f[f.index("wall_ns_per_pair") + 1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/bench/bench/rtbench-pairs"))
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/bench/drivers/librtalloc-malloc.so"))
    ap.add_argument("--alloc", default="tlsf,tlsfq,tlsfmc,wfc")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--pairs", type=int, default=2000000)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    allocs = ["glibc"] + [x for x in a.alloc.split(",") if x]
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"# load average at start {' '.join(load)}; {a.reps} runs each, interleaved; medians")
    print(f"{'threads':>7} {'allocator':<10} {'cpu ns/pair':>12} {'x glibc':>8} {'wall ns/pair':>13}")
    for t in [int(x) for x in a.threads.split(",")]:
        cpu = {x: [] for x in allocs}
        wall = {x: [] for x in allocs}
        for _ in range(a.reps):
            for x in allocs:
                c, w = one(a.bin, a.lib, x, t, a.pairs)
                cpu[x].append(c)
                wall[x].append(w)
        base = statistics.median(cpu["glibc"])
        for x in allocs:
            c = statistics.median(cpu[x])
            print(f"{t:>7} {x:<10} {c:>12.1f} {c / base:>8.2f} {statistics.median(wall[x]):>13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
