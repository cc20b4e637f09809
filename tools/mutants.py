#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mutants.py -- mutation testing of the allocators' safety checks (tools/mutants.sh runs it).

Each mutant of tools/mutants.txt removes one check, inverts one compare or moves one bound of a
range; the tool applies them one at a time to a copy of the source tree (build/mutants/src: the
tracked and untracked-but-not-ignored files of the tree, synchronised before a run), rebuilds
that copy incrementally (build/mutants/build, Ninja, gcc Release as the `quick` preset: no
benchmark, reduced seeds), runs the mutant's own ctest tests under a time limit and reports it:

    killed          a test failed, crashed or ran past the limit: the checks are seen
    SURVIVED        every test passed: a check no test needs
    NOT APPLICABLE  its pattern no longer matches the source (or matches twice): update the spec
    DID NOT BUILD   the mutated copy does not compile (-Werror): rewrite the mutant

The source tree is never written: the copy alone is mutated, and restored after each mutant, on
Ctrl-C and on any error. Results: a markdown table (default build/mutants/results.md). Exit
status: 0 when every mutant run was killed; 1 when one survived, did not build or was not
applicable; 2 on a usage or spec error; 3 when the unmutated copy fails its own tests; 130 on
Ctrl-C (the results written so far are kept, marked partial).

Usage:
    tools/mutants.sh [options] [ID-GLOB ...]   run the mutants (all, or those whose id matches)
    tools/mutants.sh --check                   parse the list; every pattern must match exactly
                                               once and every test name exist (no build)
    tools/mutants.sh --list                    the mutants, one per line
Options:
    --jobs N          build and ctest parallelism (default: $JOBS or 2)
    --results FILE    the markdown results (default build/mutants/results.md)
    --work DIR        the copy and its build (default build/mutants)
    --spec FILE       the mutant list (default tools/mutants.txt)
    --timeout S       time limit of one mutant's tests, unless its spec says (default 300)
    --no-baseline     skip the run of the unmutated copy's tests
    --family NAME     only the mutants of one family (heap, index, buddy, fma, tree, wfc, mcheap)
    --source DIR      the tree to copy and check (default: the one this script lies in)
    --tests "A B"     run these ctest tests for every mutant instead of each spec's own (to
                      find out which tests kill a new mutant)

The spec format is described at the top of tools/mutants.txt.
"""

import fcntl
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("remove", "invert", "bound", "replace")
KEYS = ("file", "in", "find", "regex", "replace", "tests", "timeout", "why")


class SpecError(Exception):
    pass


class Mutant:
    def __init__(self, ident, kind, line):
        self.id = ident
        self.kind = kind
        self.line = line
        self.fields = {}

    @property
    def file(self):
        return self.fields["file"]

    @property
    def tests(self):
        return self.fields["tests"].split()

    @property
    def family(self):
        f = self.file
        if f.startswith(("src/heap/", "src/block/")):
            return "heap"
        if f.startswith("src/index/"):
            return "index"
        if f.startswith("src/buddy/"):
            return "buddy"
        if f.startswith("src/fma/"):
            return "fma"
        if f.endswith("wfcache.c"):
            return "wfc"
        if f.startswith("src/mcheap/"):
            return "mcheap"
        if f.startswith("src/waitfree/"):
            return "tree"
        return "other"


def parse_spec(path):
    """The mutants of `path`, in order. Raises SpecError on a malformed list."""
    mutants, seen, cur = [], set(), None
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line[0].isspace():
                words = line.split()
                if len(words) != 3 or words[0] != "mutant":
                    raise SpecError(f"{path}:{n}: expected 'mutant ID KIND', got: {line.strip()}")
                if words[2] not in KINDS:
                    raise SpecError(f"{path}:{n}: kind '{words[2]}' is none of {', '.join(KINDS)}")
                if words[1] in seen:
                    raise SpecError(f"{path}:{n}: mutant '{words[1]}' defined twice")
                seen.add(words[1])
                cur = Mutant(words[1], words[2], n)
                mutants.append(cur)
                continue
            if cur is None:
                raise SpecError(f"{path}:{n}: a field before the first 'mutant' line")
            stripped = line.lstrip()
            key, _, value = stripped.partition(" ")
            if key not in KEYS:
                raise SpecError(f"{path}:{n}: unknown field '{key}' (fields: {', '.join(KEYS)})")
            value = value.strip()
            if key in cur.fields:
                raise SpecError(f"{path}:{n}: field '{key}' given twice (a pattern is one line: white space in it matches line breaks)")
            else:
                cur.fields[key] = value
    for m in mutants:
        where = f"{path}:{m.line}: mutant {m.id}"
        for key in ("file", "tests", "why"):
            if key not in m.fields:
                raise SpecError(f"{where}: no '{key}'")
        if ("find" in m.fields) == ("regex" in m.fields):
            raise SpecError(f"{where}: exactly one of 'find' and 'regex'")
        if "replace" not in m.fields:
            raise SpecError(f"{where}: no 'replace' (an empty replacement is written 'replace -')")
        if "timeout" in m.fields and not m.fields["timeout"].isdigit():
            raise SpecError(f"{where}: timeout must be a number of seconds")
        if "regex" in m.fields:
            try:
                re.compile(m.fields["regex"])
            except re.error as e:
                raise SpecError(f"{where}: bad regex: {e}")
    return mutants


def find_regex(m):
    """The compiled pattern of m: a 'find' text matches with any run of white space (a line break
    included) standing for any other, so that re-wrapped or re-indented code still matches."""
    if "regex" in m.fields:
        return re.compile(m.fields["regex"], re.S)
    parts = re.split(r"\s+", m.fields["find"].strip())
    return re.compile(r"\s+".join(re.escape(p) for p in parts))


def replacement(m):
    r = m.fields["replace"]
    return "" if r == "-" else r.replace("\\n", "\n")


def scope_of(m, text):
    """(start, end) of the text m may match in: the whole file, or with 'in ANCHOR' from the one
    occurrence of ANCHOR to the end of the top-level block after it (the first line that is '}'
    or '};' alone), so that a pattern names a place inside one function. Raises SpecError."""
    anchor = m.fields.get("in")
    if anchor is None:
        return 0, len(text)
    parts = re.split(r"\s+", anchor.strip())
    pat = re.compile(r"\s+".join(re.escape(p) for p in parts))
    hits = [x.start() for x in pat.finditer(text)]
    if len(hits) != 1:
        raise SpecError(f"anchor 'in {anchor}' occurs {len(hits)} times in {m.file} (must be once)")
    end = re.compile(r"^\}.*$", re.M).search(text, hits[0])
    return hits[0], end.end() if end else len(text)


def mutate(m, text):
    """The mutated text; SpecError when the pattern does not match exactly once in its scope."""
    start, end = scope_of(m, text)
    pat = find_regex(m)
    hits = list(pat.finditer(text, start, end))
    if len(hits) != 1:
        what = m.fields.get("find") or m.fields.get("regex")
        where = f" in the block of '{m.fields['in']}'" if "in" in m.fields else ""
        raise SpecError(f"pattern occurs {len(hits)} times{where} of {m.file} (must be once): {what}")
    hit = hits[0]
    new = hit.expand(replacement(m)) if "regex" in m.fields else replacement(m)
    if new == hit.group(0):
        raise SpecError("the replacement equals the text it replaces")
    return text[: hit.start()] + new + text[hit.end():]


def declared_tests(root):
    """Test names declared in tests/CMakeLists.txt and tests/*/CMakeLists.txt (every configuration)."""
    names = set()
    pats = [r"rtalloc_add_test\(\s*([A-Za-z0-9_]+)", r"rtalloc_add_cxx_test\(\s*([A-Za-z0-9_]+)",
            r"add_test\(\s*NAME\s+([A-Za-z0-9_]+)"]
    for d, _, files in os.walk(os.path.join(root, "tests")):
        if "CMakeLists.txt" in files:
            with open(os.path.join(d, "CMakeLists.txt"), encoding="utf-8") as fh:
                text = fh.read()
            for p in pats:
                names.update(re.findall(p, text))
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as fh:
        names.update(re.findall(pats[2], fh.read()))
    return names


def check(mutants, root):
    """Every mutant applies to the tree at root and names declared tests. Returns the problems."""
    problems, cache = [], {}
    tests = declared_tests(root)
    for m in mutants:
        path = os.path.join(root, m.file)
        if not os.path.isfile(path):
            problems.append(f"{m.id}: no file {m.file}")
            continue
        if path not in cache:
            with open(path, encoding="utf-8") as fh:
                cache[path] = fh.read()
        try:
            mutate(m, cache[path])
        except SpecError as e:
            problems.append(f"{m.id}: {e}")
        for t in m.tests:
            if t not in tests:
                problems.append(f"{m.id}: no ctest test named '{t}' in tests/CMakeLists.txt")
    return problems


# --- running ---------------------------------------------------------------------------------------

def run(cmd, cwd, timeout=None, log=None):
    """Runs cmd in its own process group (so that a terminal's Ctrl-C reaches this script alone,
    which then ends the group); (returncode, output, timed_out)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        timed_out = True
    except BaseException:  # Ctrl-C or SIGTERM: the build or the tests end with us
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()
        raise
    if log is not None:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"$ {' '.join(cmd)}\n{out}\n")
    return p.returncode, out, timed_out


def source_files(root):
    out = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=root, check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    return sorted(f for f in out.split("\0") if f and os.path.isfile(os.path.join(root, f)))


def sync_copy(root, copy):
    """Makes copy/ hold the tree's files: a file is rewritten only when its bytes differ (so the
    incremental build rebuilds only what changed); files gone from the tree are removed."""
    files = source_files(root)
    wanted = set(files)
    changed = 0
    for f in files:
        src, dst = os.path.join(root, f), os.path.join(copy, f)
        with open(src, "rb") as fh:
            data = fh.read()
        try:
            with open(dst, "rb") as fh:
                same = fh.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as fh:
                fh.write(data)
            shutil.copymode(src, dst)
            changed += 1
    for d, _, names in os.walk(copy):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), copy)
            if rel not in wanted:
                os.remove(os.path.join(d, n))
    return changed


def configure(copy, build, log):
    if os.path.exists(os.path.join(build, "build.ninja")):  # re-run cmake if a CMakeLists.txt changed
        rc, out, _ = run(["ninja", "build.ninja"], build, log=log)
        if rc != 0:
            print(out[-3000:])
        return rc == 0
    if shutil.which("ninja") is None:
        print("mutants: needs ninja (apt-get install ninja-build)", file=sys.stderr)
        return False
    cmd = ["cmake", "-S", copy, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
           "-DCMAKE_C_COMPILER=gcc", "-DCMAKE_CXX_COMPILER=g++", "-DRTALLOC_BUILD_BENCH=OFF",
           "-DRTALLOC_TEST_REDUCED=ON", "-DRTALLOC_WERROR=ON"]
    rc, out, _ = run(cmd, copy, log=log)
    if rc != 0:
        print(out[-3000:])
    return rc == 0


def test_targets(build):
    """ctest name -> the ninja outputs its command runs (executables of this build). Read from the
    CTestTestfile.cmake files, which name them before they are built (ctest's JSON does not)."""
    rc, tout, _ = run(["ninja", "-t", "targets", "all"], build)
    known = {line.split(":")[0] for line in tout.splitlines() if ":" in line}
    result = {}
    for d, _, files in os.walk(build):
        if "CTestTestfile.cmake" not in files:
            continue
        with open(os.path.join(d, "CTestTestfile.cmake"), encoding="utf-8") as fh:
            text = fh.read()
        for name, rest in re.findall(r'^add_test\((?:\[=\[)?([^\s\]]+)(?:\]=\])?\s+(.*)\)\s*$', text, re.M):
            outs = []
            for arg in re.findall(r'"([^"]*)"', rest):
                if os.path.isabs(arg) and arg.startswith(build + os.sep):
                    rel = os.path.relpath(arg, build)
                    if rel in known:
                        outs.append(rel)
            result[name] = outs
    return result


def build_for(build, targets, jobs, log):
    if not targets:  # tests of scripts only: nothing of this build to make
        return True, ""
    rc, out, _ = run(["ninja", "-j", str(jobs)] + sorted(set(targets)), build, log=log)
    return rc == 0, out


def ctest(build, tests, jobs, timeout, log):
    """(passed, detail): runs the named tests; detail names the failures or the time-out."""
    regex = "^(" + "|".join(re.escape(t) for t in tests) + ")$"
    cmd = ["ctest", "-R", regex, "-j", str(jobs), "--no-tests=error", "--output-on-failure"]
    t0 = time.time()
    rc, out, timed_out = run(cmd, build, timeout=timeout, log=log)
    if timed_out:
        return False, f"time-out after {int(time.time() - t0)} s"
    failed = re.findall(r"^\s*\d+ - (\S+) \(([^)]*)\)", out, re.M)
    if rc == 0:
        return True, ""
    if failed:
        return False, ", ".join(f"{n} ({why})" for n, why in failed)
    return False, f"ctest exit {rc}"


def fmt_s(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def write_results(path, rows, partial, started, total_time, baseline):
    counts = {}
    fams = {}
    for m, status, _, _ in rows:
        counts[status] = counts.get(status, 0) + 1
        f = fams.setdefault(m.family, {})
        f[status] = f.get(status, 0) + 1
    statuses = ["killed", "SURVIVED", "NOT APPLICABLE", "DID NOT BUILD"]
    lines = ["# Mutants of the safety checks" + (" (PARTIAL: interrupted)" if partial else ""), "",
             f"Run of {time.strftime('%Y-%m-%d %H:%M', time.localtime(started))}: {len(rows)} mutants in "
             f"{fmt_s(total_time)} (tools/mutants.sh; gcc Release, reduced seeds; baseline: {baseline}).", "",
             "| family | mutants | " + " | ".join(statuses) + " |", "|---|---:|" + "---:|" * len(statuses)]
    for fam in sorted(fams):
        c = fams[fam]
        lines.append(f"| {fam} | {sum(c.values())} | " + " | ".join(str(c.get(s, 0)) for s in statuses) + " |")
    lines.append(f"| all | {len(rows)} | " + " | ".join(str(counts.get(s, 0)) for s in statuses) + " |")
    lines += ["", "| # | mutant | family | kind | file | result | detail | time |", "|---:|---|---|---|---|---|---|---:|"]
    for i, (m, status, detail, secs) in enumerate(rows, 1):
        detail = detail.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {i} | {m.id} | {m.family} | {m.kind} | {m.file} | {status} | {detail} | {fmt_s(secs)} |")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def main(argv):
    args = {"jobs": int(os.environ.get("JOBS", "2")), "results": None, "work": None, "timeout": 300,
            "spec": os.path.join(ROOT, "tools", "mutants.txt"), "family": None, "tests": None}
    mode, baseline, globs = "run", True, []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if a == "--check":
            mode = "check"
        elif a == "--list":
            mode = "list"
        elif a == "--no-baseline":
            baseline = False
        elif a in ("--jobs", "--results", "--work", "--spec", "--timeout", "--family", "--source", "--tests"):
            v = next(it, None)
            if v is None:
                print(f"mutants: {a} needs a value", file=sys.stderr)
                return 2
            args[a[2:]] = int(v) if a in ("--jobs", "--timeout") else v
        elif a.startswith("-"):
            print(f"mutants: unknown option {a} (--help)", file=sys.stderr)
            return 2
        else:
            globs.append(a)
    root = os.path.abspath(args.get("source") or ROOT)
    try:
        mutants = parse_spec(args["spec"])
    except SpecError as e:
        print(f"mutants: {e}", file=sys.stderr)
        return 2
    if globs:
        mutants = [m for m in mutants if any(fnmatch.fnmatch(m.id, g) for g in globs)]
    if args["family"]:
        mutants = [m for m in mutants if m.family == args["family"]]
    if args["tests"]:
        for m in mutants:
            m.fields["tests"] = args["tests"]
    if mode == "list":
        for m in mutants:
            print(f"{m.id:34} {m.family:6} {m.kind:8} {m.file:28} {' '.join(m.tests)}")
        return 0
    problems = check(mutants, root)
    if mode == "check":
        fams = {}
        for m in mutants:
            fams[m.family] = fams.get(m.family, 0) + 1
        for p in problems:
            print(f"mutants: NOT APPLICABLE: {p}")
        print(f"mutants: {len(mutants)} mutants ({', '.join(f'{k} {v}' for k, v in sorted(fams.items()))}); "
              f"{len(problems)} problem(s)")
        return 1 if problems else 0
    if not mutants:
        print("mutants: no mutant selected", file=sys.stderr)
        return 2

    work = os.path.abspath(args["work"] or os.path.join(ROOT, "build", "mutants"))
    copy, build = os.path.join(work, "src"), os.path.join(work, "build")
    results = os.path.abspath(args["results"] or os.path.join(work, "results.md"))
    log = os.path.join(work, "mutants.log")
    os.makedirs(copy, exist_ok=True)
    with open(log, "w", encoding="utf-8") as fh:
        fh.write(f"mutants.py run of {time.ctime()}\n")
    started = time.time()
    rows = []
    pristine = {}  # copy path -> original text, while a mutant is applied
    baseline_note = "skipped"

    def restore():
        for path, text in list(pristine.items()):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            del pristine[path]

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored
    lock = open(os.path.join(work, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"mutants: another run holds {work} (its lock file)", file=sys.stderr)
        return 2
    try:
        n = sync_copy(root, copy)
        print(f"mutants: copy of the tree in {copy} ({n} file(s) updated); build in {build}; log {log}")
        if not configure(copy, build, log):
            print("mutants: cmake failed (see the log)", file=sys.stderr)
            return 2
        targets = test_targets(build)
        missing = sorted({t for m in mutants for t in m.tests if t not in targets})
        if missing:
            print(f"mutants: tests not in this build: {', '.join(missing)}", file=sys.stderr)
            return 2
        if baseline:
            union = sorted({t for m in mutants for t in m.tests})
            print(f"mutants: baseline: building and running the {len(union)} tests unmutated ...", flush=True)
            t0 = time.time()
            ok, out = build_for(build, [x for t in union for x in targets[t]], args["jobs"], log)
            if not ok:
                print(out[-3000:])
                print("mutants: the unmutated copy does not build", file=sys.stderr)
                return 3
            passed, detail = ctest(build, union, args["jobs"], args["timeout"] * 4, log)
            if not passed:
                print(f"mutants: the unmutated copy fails its tests: {detail}", file=sys.stderr)
                return 3
            baseline_note = f"{len(union)} tests passed unmutated in {fmt_s(time.time() - t0)}"
            print(f"mutants: baseline: {baseline_note}")
        for i, m in enumerate(mutants, 1):
            t0 = time.time()
            print(f"[{i}/{len(mutants)}] {m.id} ({m.family}, {m.kind}: {m.file}) ...", end=" ", flush=True)
            path = os.path.join(copy, m.file)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            try:
                mutated = mutate(m, text)
            except SpecError as e:
                rows.append((m, "NOT APPLICABLE", str(e), time.time() - t0))
                print(f"NOT APPLICABLE\n    !!! {e}\n    !!! update tools/mutants.txt", flush=True)
                continue
            pristine[path] = text
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(mutated)
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"\n===== [{i}/{len(mutants)}] {m.id}\n")
            ok, out = build_for(build, [x for t in m.tests for x in targets[t]], args["jobs"], log)
            if not ok:
                err = next((l for l in out.splitlines() if "error:" in l), "compiler error")
                status, detail = "DID NOT BUILD", err.strip()
            else:
                limit = int(m.fields.get("timeout", args["timeout"]))
                passed, detail = ctest(build, m.tests, args["jobs"], limit, log)
                status = "SURVIVED" if passed else "killed"
                if passed:
                    detail = "passed: " + " ".join(m.tests)
            restore()
            secs = time.time() - t0
            rows.append((m, status, detail, secs))
            print(f"{status} ({fmt_s(secs)}){': ' + detail if detail else ''}", flush=True)
            if status in ("SURVIVED", "DID NOT BUILD"):
                print(f"    !!! {m.id}: {m.fields['why']}", flush=True)
            write_results(results, rows, True, started, time.time() - started, baseline_note)
    except KeyboardInterrupt:
        restore()
        write_results(results, rows, True, started, time.time() - started, baseline_note)
        print(f"\nmutants: interrupted; the copy is restored, the source tree was never changed; "
              f"{len(rows)} result(s) in {results}", file=sys.stderr)
        return 130
    finally:
        restore()
    write_results(results, rows, False, started, time.time() - started, baseline_note)
    bad = [(m, s) for m, s, _, _ in rows if s != "killed"]
    print(f"mutants: {len(rows)} mutants in {fmt_s(time.time() - started)}: "
          f"{sum(1 for _, s, _, _ in rows if s == 'killed')} killed, {len(bad)} not; results in {results}")
    for m, s in bad:
        print(f"mutants: {s}: {m.id} -- {m.fields['why']}")
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SpecError as e:
        print(f"mutants: {e}", file=sys.stderr)
        sys.exit(2)
