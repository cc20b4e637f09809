#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""spdx.py -- every source file of the repository names its licence (LICENSE: MIT) in an SPDX line
near its top: `SPDX-License-Identifier: MIT` within its first 3 lines, in the file's own comment
syntax.

Usage: tools/spdx.py [--check | --add] [--root DIR]
  --check  (default) exit 1, listing the source files without the line (ctest `spdx`)
  --add    insert the line where it is missing: first line, or after a #! line

Source files: tracked files ending in .c .h .hpp .cpp .S .ld .py .sh .cmake .in .sql .lua,
CMakeLists.txt, tools/mutants.txt, and the scripts without an extension (.ci/run,
tools/commit-msg). Data (CSV, corpora, fixtures), documents (.md) and images are not sources.
"""
import argparse
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: MIT"
EXT = {
    ".c": ("/* ", " */"), ".h": ("/* ", " */"), ".hpp": ("// ", ""), ".cpp": ("// ", ""),
    ".S": ("/* ", " */"), ".ld": ("/* ", " */"), ".py": ("# ", ""), ".sh": ("# ", ""),
    ".cmake": ("# ", ""), ".in": ("# ", ""), ".sql": ("-- ", ""), ".lua": ("-- ", ""),
}
NAMED = {"CMakeLists.txt": ("# ", ""), "mutants.txt": ("# ", ""), "run": ("# ", ""), "commit-msg": ("# ", "")}
SKIP_PARTS = ("tests/fixtures/", "tests/fuzz/corpus", "tests/fuzz/regressions", "results/")


def comment_of(path):
    base = os.path.basename(path)
    if base in NAMED and (base != "run" or path == ".ci/run") and (base != "commit-msg" or path.startswith("tools/")):
        return NAMED[base]
    ext = os.path.splitext(base)[1]
    return EXT.get(ext)


def sources(root):
    out = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True).stdout
    for path in out.splitlines():
        if any(path.startswith(p) for p in SKIP_PARTS):
            continue
        if comment_of(path) is not None and os.path.isfile(os.path.join(root, path)):
            yield path


def has_tag(text):
    return any(TAG in line for line in text.splitlines()[:3])


def add_tag(path, text):
    start, end = comment_of(path)
    line = f"{start}{TAG}{end}\n"
    if path.endswith(".in") and os.path.basename(path).endswith(".pc.in"):
        line = f"# {TAG}\n"
    lines = text.splitlines(keepends=True)
    at = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(at, line)
    return "".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--add", action="store_true")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    missing = []
    count = 0
    for path in sources(a.root):
        count += 1
        full = os.path.join(a.root, path)
        with open(full, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        if has_tag(text):
            continue
        if a.add:
            with open(full, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(add_tag(path, text))
        else:
            missing.append(path)
    for path in missing:
        print(f"{path}: no '{TAG}' in its first 3 lines")
    print(f"spdx: {count} source files, {len(missing)} without the line" + (" (added)" if a.add else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
