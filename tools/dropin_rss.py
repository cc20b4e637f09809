#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dropin_rss.py -- a real program under the drop-in malloc: its peak resident memory and CPU time
per allocator, as ratios to the same program on glibc's malloc, measured in the same run.

    tools/dropin_rss.py [--lib build/bench/drivers/librtalloc-malloc.so] [--reps 3]
                        [--alloc tlsf,tlsfq,buddy,fma,bsd44] [--lines 300000]

The program is coreutils' `sort` over a text file this tool writes (deterministic: seeded lines of
5..30 letters, --lines of them, 5.5 MB at the default). sort asks malloc for a buffer sized from
the machine's memory and fills only part of it, so the figure shows whether an allocator touches
memory the program never writes (glibc maps such a block and leaves it untouched). Each run is a
child process of its own; max RSS (getrusage's ru_maxrss of the child) and user+system CPU time
are the medians of --reps runs, allocators interleaved. The output of every run must equal
glibc's (byte for byte), else the tool says so and exits 1.
"""
import argparse
import os
import random
import resource
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_one(cmd, env, out_path):
    """(status, stderr, cpu seconds, max RSS KiB) of one child, by os.wait4."""
    with open(out_path, "wb") as out:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            try:
                os.execvpe(cmd[0], cmd, env)
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/bench/drivers/librtalloc-malloc.so"))
    ap.add_argument("--alloc", default="tlsf,tlsfq,buddy,fma,bsd44")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lines", type=int, default=300000)
    a = ap.parse_args()
    if not os.path.exists(a.lib):
        sys.exit("dropin_rss: %s not built (cmake --build build/bench)" % a.lib)
    allocs = ["glibc"] + [x for x in a.alloc.split(",") if x and x != "glibc"]
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "lines.txt")
        rng = random.Random(1)
        with open(data, "w") as f:
            for _ in range(a.lines):
                f.write("".join(rng.choice("abcdefghij") for _ in range(rng.randint(5, 30))) + "\n")
        size = os.path.getsize(data)
        cmd = ["sort", data]
        rss = {x: [] for x in allocs}
        cpu = {x: [] for x in allocs}
        bad = []
        ref = os.path.join(d, "glibc.out")
        for rep in range(a.reps):
            for k in range(len(allocs)):
                name = allocs[(k + rep) % len(allocs)]
                env = dict(os.environ)
                out = os.path.join(d, name + ".out")
                if name != "glibc":
                    env.update(LD_PRELOAD=a.lib, RTALLOC=name)
                rc, c, m = run_one(cmd, env, out)
                if rc != 0:
                    bad.append("%s: exit status %d" % (name, rc))
                rss[name].append(m)
                cpu[name].append(c)
            for name in allocs[1:]:
                if os.path.exists(ref) and open(ref, "rb").read() != open(os.path.join(d, name + ".out"), "rb").read():
                    bad.append("%s: output differs from glibc's" % name)
        g_rss, g_cpu = statistics.median(rss["glibc"]), statistics.median(cpu["glibc"])
        print("sort of %d lines (%.1f MB) under the drop-in (%s); medians of %d runs, allocators interleaved"
              % (a.lines, size / 1e6, os.path.relpath(a.lib, ROOT), a.reps))
        print("%-8s %12s %9s %10s %9s" % ("allocator", "max RSS KiB", "x glibc", "CPU s", "x glibc"))
        for name in allocs:
            r, c = statistics.median(rss[name]), statistics.median(cpu[name])
            print("%-8s %12d %9.2f %10.3f %9.2f" % (name, r, r / g_rss, c, c / g_cpu if g_cpu > 0 else 0.0))
        print("CPU time is a clock: on a loaded machine its ratios are noise; max RSS is a count of pages")
        for b in sorted(set(bad)):
            print("FAIL: " + b)
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
