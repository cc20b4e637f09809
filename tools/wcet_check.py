#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks TLSF's static worst case (tools/wcet.py) against exact counts on the target.

    tools/wcet_check.py --port cortex-m4 --scenarios ELF [--scenarios ELF ...] [--study ELF ...]
                        [--heap-bytes N] [--cflags FLAGS] [--timeout S] [--json FILE]

Bounds every ELF with tools/wcet.py (a refusal fails the check), runs each under QEMU
(ports/qemu-run.sh, -icount: exact instruction counts) and fails -- exit status 1, one line per
measurement over its bound -- if any measured call exceeds the bound of the ELF it ran in:
  * the WCET scenarios (ports/wcet/scenarios.c: "@W,entry,scenario,class,config,count"): the
    entry point's own instructions, entry to return, the copies' and the handler's taken out, with
    the port's hooks ("port") or none ("none"), against the entry's bound of that class (normal,
    or damage for a call that contains); the allocator's part of the longest lock-held stretch
    ("held") plus the port hooks' own masked instructions against the entry's lock-held bound;
  * the on-target study (ports/study/vaios_study.c, built with STUDY_WORST=0), allocator tlsf: each
    count of mem_stress and mem_frag goes through the descriptor's wrapper and the study's call
    site, so it is held against the entry's normal bound plus the wrapper's instructions plus the
    longest measurement site of that ELF (both from the ELF, tools/wcet.py --study); each masked
    stretch (@MK, @MF, @RS) plus the hooks' masked instructions against the lock-held bound (the
    study's realloc counts include the copy: only their masked stretch is checked).
Prints, per ELF, each entry point's bound beside the largest measured call.
"""
import argparse
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (ctest runs this)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wcet  # noqa: E402

ROOT = wcet.ROOT
SHORT = {e: e.replace("rt_tlsf_", "") for e in wcet.ENTRIES}


def qemu(port, elf, timeout):
    r = subprocess.run([os.path.join(ROOT, "ports", "qemu-run.sh"), "--timeout", str(timeout), port, elf],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout[-2000:] + r.stderr[-2000:])
        raise SystemExit("wcet_check: %s exited with status %d under QEMU" % (elf, r.returncode))
    if "@END" not in r.stdout:
        raise SystemExit("wcet_check: %s: output incomplete (no @END)" % elf)
    return r.stdout.splitlines()


class Check:
    def __init__(self):
        self.failures, self.best, self.count = [], {}, 0

    def hold(self, elf, entry, what, measured, bound, label):
        """measured must not exceed bound; keeps the largest measured per (elf, entry, what)."""
        self.count += 1
        if bound is None:
            self.failures.append("%s: %s %s: no bound (%s)" % (elf, entry, what, label))
            return
        if measured > bound:
            self.failures.append("%s: %s %s: measured %d > bound %d (%s)" % (os.path.basename(elf), entry, what,
                                                                              measured, bound, label))
        key = (elf, entry, what)
        if key not in self.best or measured > self.best[key][0]:
            self.best[key] = (measured, bound, label)


def check_scenarios(c, res, lines, hooks):
    e = res["entries"]
    seen = set()
    for ln in lines:
        if not ln.startswith("@W,"):
            continue
        _, entry, name, klass, cfg, value = ln.split(",")
        value = int(value)
        seen.add(entry)
        b = e[entry]
        if cfg == "held":
            bound = b["held" if klass == "normal" else "held_damage"]
            if value == 0:  # no lock taken
                continue
            c.hold(res["elf"], entry, "held " + klass, value + hooks, bound, name)
        else:
            c.hold(res["elf"], entry, klass, value, b[klass], "%s, %s" % (name, cfg))
    for entry in e:
        if entry not in seen:
            c.failures.append("%s: no scenario measured %s" % (res["elf"], entry))


def check_study(c, res, lines, hooks):
    e, st = res["entries"], res["study"]
    site = st["site"]

    def bound(entry):
        return e[entry]["normal"] + st["wrappers"][entry] + site
    section, kinds = None, {}
    held_mf = max(e["rt_tlsf_malloc"]["held"], e["rt_tlsf_free"]["held"])
    for ln in lines:
        if ln.startswith("@META,hook_masked,") and int(ln.split(",")[2]) != hooks:
            c.failures.append("%s: the study's hook_masked %s, the disassembly's %d" % (res["elf"], ln, hooks))
        if ln.startswith("# "):
            section = ln[2:].strip()
            continue
        f = ln.split(",")
        if section == "allocator tlsf" and f[0] == "@MS":
            entry = "rt_tlsf_free" if f[2] == "F" else "rt_tlsf_malloc"
            kinds[f[1]] = entry
            c.hold(res["elf"], entry, "study", int(f[4]), bound(entry), "mem_stress op %s" % f[1])
        elif section == "masked tlsf" and f[0] == "@MK":
            if int(f[3]) > 0:
                entry = kinds[f[1]]
                c.hold(res["elf"], entry, "study held", int(f[2]) + hooks, e[entry]["held"],
                       "mem_stress op %s" % f[1])
        elif section == "memfrag tlsf" and f[0] == "@MF" and f[2] != "O":
            n = f[1]
            c.hold(res["elf"], "rt_tlsf_malloc", "study", int(f[2]), bound("rt_tlsf_malloc"), "mem_frag N=%s" % n)
            c.hold(res["elf"], "rt_tlsf_free", "study", int(f[4]), bound("rt_tlsf_free"), "mem_frag N=%s" % n)
            c.hold(res["elf"], "rt_tlsf_malloc", "study held", int(f[5]) + hooks, e["rt_tlsf_malloc"]["held"],
                   "mem_frag N=%s" % n)
            c.hold(res["elf"], "rt_tlsf_free", "study held", int(f[6]) + hooks, e["rt_tlsf_free"]["held"],
                   "mem_frag N=%s" % n)
            c.hold(res["elf"], "rt_tlsf_malloc", "study held", int(f[7]) + hooks, held_mf,
                   "mem_frag N=%s setup" % n)
        elif f[0] == "@RS" and f[1] == "tlsf" and int(f[6]) > 0:
            c.hold(res["elf"], "rt_tlsf_realloc", "study held", int(f[5]) + hooks, e["rt_tlsf_realloc"]["held"],
                   "realloc slide S=%s" % f[2])
    if not kinds:
        c.failures.append("%s: no mem_stress lines of tlsf" % res["elf"])


def markdown(out):
    """Largest measured / bound per target, level and entry point: the scenarios' calls (normal
    paths, either hook configuration), their lock-held stretches, the study's calls (through the
    descriptor: wrapper and call site added to the bound), the scenarios' damage paths."""
    cols = [("normal", "scenarios: call"), ("held normal", "scenarios: lock held"), ("study", "study: call"),
            ("study held", "study: lock held"), ("damage", "damage path: call")]
    cell = {}
    rows = []
    for o in out:
        key = (o["target"], o["level"], o["entry"])
        if key not in cell:
            cell[key] = {}
            rows.append(key)
        cell[key][o["what"]] = "{:,} / {:,}".format(o["measured"], o["bound"])
    print("| target | level | entry point | " + " | ".join(c[1] for c in cols) + " |")
    print("|---|---|---|" + "---:|" * len(cols))
    for key in rows:
        print("| %s | %s | %s | " % (key[0], key[1], SHORT[key[2]]) +
              " | ".join(cell[key].get(c[0], "") for c in cols) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", required=True, choices=["cortex-m4", "rv32"])
    ap.add_argument("--scenarios", action="append", default=[])
    ap.add_argument("--study", action="append", default=[])
    ap.add_argument("--heap-bytes", type=int, default=65536)
    ap.add_argument("--cflags", action="append", default=[], help="flags for tools/wcet.py's probes")
    ap.add_argument("--define", action="append", default=[],
                    help="a definition the library was built with (NAME or NAME=VALUE; empty: none)")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json", help="write the bounds and the largest measured calls here")
    ap.add_argument("--markdown", action="store_true",
                    help="also print the largest measured call against its bound as a Markdown table")
    a = ap.parse_args()
    elfs = a.scenarios + a.study
    if not elfs:
        ap.error("no ELF to check")
    wargs = wcet.parser().parse_args(elfs + ["--heap-bytes", str(a.heap_bytes)])
    wargs.entry = wcet.ENTRIES
    wargs.cflags = [x for f in a.cflags for x in f.split()] + sorted({"-D" + d for d in a.define if d})
    studies = set(a.study)
    # (the study measures no create, and does not link rt_set_entropy, through which the tool knows
    # the entropy source that create calls)
    study = {"entry": [x for x in wcet.ENTRIES if x != "rt_tlsf_create"], "study": "tlsf_descriptor"}
    try:
        results, ann = wcet.run(elfs, wargs, lambda p: study if p in studies else {})
    except wcet.Refuse as e:
        print("wcet_check: FAIL: tools/wcet.py refused: %s" % e)
        return 1
    c = Check()
    for r in results:
        lines = qemu(a.port, r["elf"], a.timeout)
        if r["elf"] in studies:
            check_study(c, r, lines, r["hook_masked"])
        else:
            meta = [ln for ln in lines if ln.startswith("@META,heap_bytes,")]
            if not meta or int(meta[0].split(",")[2]) != a.heap_bytes:
                c.failures.append("%s: the scenarios' heap is not --heap-bytes %d" % (r["elf"], a.heap_bytes))
            check_scenarios(c, r, lines, r["hook_masked"])
    out = []
    for r in results:
        print("%s: %s, %s; hooks' own masked instructions %d%s" % (
            os.path.relpath(r["elf"]), r["target"], r["level"], r["hook_masked"],
            "; study: wrapper %d, call site %d (%s)" % (r["study"]["wrappers"]["rt_tlsf_malloc"], r["study"]["site"],
                                                        r["study"]["site_at"]) if "study" in r else ""))
        print("  %-16s %-11s %9s %9s  %s" % ("entry point", "what", "measured", "bound", "largest measured call"))
        for entry in r["entries"]:
            for what in ("normal", "damage", "held normal", "held damage", "study", "study held"):
                k = (r["elf"], entry, what)
                if k in c.best:
                    m, b, label = c.best[k]
                    print("  %-16s %-11s %9d %9d  %s" % (SHORT[entry], what, m, b, label))
                    out.append({"elf": r["elf"], "target": r["target"], "level": r["level"], "entry": entry,
                                "what": what, "measured": m, "bound": b, "call": label})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    if a.markdown:
        markdown(out)
    print("wcet_check: %d measurements against their bounds" % c.count)
    if c.failures:
        for x in c.failures:
            print("wcet_check: FAIL: %s" % x)
        return 1
    print("wcet_check: every measured call within its static bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
