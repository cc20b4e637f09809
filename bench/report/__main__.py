# SPDX-License-Identifier: MIT
"""python3 -m report (from bench/) or python3 bench/report.py: see __init__.py."""
import os
import sys

USAGE = ("usage: report.py [--no-plots | --plots a.png,b.png] [--partial REASON] [RESULTS_DIR]\n"
         "       report.py --parse-target DIR")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    plots = None
    partial = None
    d = None
    while argv:
        a = argv.pop(0)
        if a == "--no-plots":
            plots = set()
        elif a == "--plots" and argv:
            plots = {p for p in argv.pop(0).split(",") if p and p != "none"}
        elif a == "--partial" and argv:
            partial = argv.pop(0)
        elif a == "--parse-target" and argv:
            from . import target
            return target.parse(argv.pop(0))
        elif a in ("-h", "--help"):
            print(USAGE)
            return 0
        elif a.startswith("-") or d is not None:
            print(USAGE, file=sys.stderr)
            return 2
        else:
            d = a
    d = d or os.path.join("results", "latest")
    if not os.path.isdir(d):
        print(f"report: no directory {d}", file=sys.stderr)
        return 1
    from .core import Report
    Report(d, plots=plots, partial=partial).write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
