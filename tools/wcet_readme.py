#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""wcet_readme.py -- writes (or checks) the static worst-case tables of doc/embedded.md and
ports/README.md from the tools' own output, so that no bound there is typed:

  doc/embedded.md, between "<!-- wcet:begin -->" and "<!-- wcet:end -->": tools/wcet.py --markdown
      over the WCET scenario ELFs of both ports at -Os and -O2 (the bounds, normal and damage paths);
  ports/README.md, between "<!-- wcet-check:begin -->" and "<!-- wcet-check:end -->": the largest
      measured call against its bound, from the JSON files ctest's wcet_m4 / wcet_rv32 wrote
      (tools/wcet_check.py --json), rendered as tools/wcet_check.py --markdown does.

Usage: tools/wcet_readme.py [--write | --check] [--build-m4 DIR] [--build-rv32 DIR]
  (default DIRs: build/test-target-m4 and build/test-target-rv32, as ./test.sh target builds them)
  --check   exit 1 when a section differs from what the builds give (./test.sh target runs it)
  --write   rewrite the sections
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import wcet_check  # noqa: E402  (its markdown renderer)


def compilers():
    """The cross compilers' version lines: the bounds and counts hold for the code they emit."""
    out = []
    for cc in ("arm-none-eabi-gcc", "riscv64-unknown-elf-gcc"):
        r = subprocess.run([cc, "--version"], stdout=subprocess.PIPE, text=True, check=True)
        out.append(r.stdout.split("\n")[0])
    return "; ".join(out)


def written_with(text, name):
    """The compilers line of a section, or None."""
    begin = "<!-- %s:begin -->" % name
    lines = text.split("\n")
    if begin in lines:
        nxt = lines[lines.index(begin) + 1]
        if nxt.startswith("<!-- written with: ") and nxt.endswith(" -->"):
            return nxt[len("<!-- written with: "):-len(" -->")]
    return None


def replace(text, name, body):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    lines = text.split("\n")
    if lines.count(begin) != 1 or lines.count(end) != 1:
        raise SystemExit("wcet_readme: the file must hold one %s ... %s pair" % (begin, end))
    a, b = lines.index(begin), lines.index(end)
    return "\n".join(lines[:a + 1] + body.rstrip("\n").split("\n") + lines[b:])


def main():
    ap = argparse.ArgumentParser(description="doc/embedded.md's and ports/README.md's WCET tables from the tools' output")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    ap.add_argument("--build-m4", default=os.path.join(ROOT, "build/test-target-m4"))
    ap.add_argument("--build-rv32", default=os.path.join(ROOT, "build/test-target-rv32"))
    a = ap.parse_args()
    elfs = [os.path.join(d, "ports", "wcet_scenarios_%s.elf" % lv)
            for d in (a.build_m4, a.build_rv32) for lv in ("Os", "O2")]
    jsons = [os.path.join(a.build_m4, "ports", "wcet_m4.json"), os.path.join(a.build_rv32, "ports", "wcet_rv32.json")]
    missing = [f for f in elfs + jsons if not os.path.exists(f)]
    if missing:
        raise SystemExit("wcet_readme: not built (./test.sh target): %s" % ", ".join(missing))
    bounds = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "wcet.py")] + elfs + ["--markdown"],
                            check=True, stdout=subprocess.PIPE, text=True).stdout
    out = []
    for j in jsons:
        with open(j) as f:
            out += json.load(f)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        wcet_check.markdown(out)
    here = compilers()
    stamp = "<!-- written with: %s -->\n" % here
    changed = []
    for path, name, body in (("doc/embedded.md", "wcet", bounds), ("ports/README.md", "wcet-check", buf.getvalue())):
        full = os.path.join(ROOT, path)
        with open(full) as f:
            old = f.read()
        if a.check and written_with(old, name) not in (None, here):
            # another toolchain (a Debian point release) emits other code: say so, do not fail
            print("wcet_readme: %s's tables were written with other compilers (%s; here: %s): not compared"
                  % (path, written_with(old, name), here), file=sys.stderr)
            continue
        new = replace(old, name, stamp + body)
        if new != old:
            changed.append(path)
            if a.write:
                with open(full, "w") as f:
                    f.write(new)
    if a.check and changed:
        print("wcet_readme: the static-bound tables of %s differ from this build's (tools/wcet_readme.py --write)"
              % " and ".join(changed), file=sys.stderr)
        return 1
    print("wcet_readme: %s" % (("rewrote " + ", ".join(changed)) if a.write and changed else "tables match"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
