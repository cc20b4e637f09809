#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_docs.py -- the repository cites only itself, and every citation resolves.

Over the files git knows (tracked, and untracked ones it does not ignore), outside results/ (a
snapshot a run wrote):

  (a) links     every relative markdown link [x](path) or [x](path#anchor) of a *.md names a
                file or folder that exists (from the .md's folder, as GitHub reads it), and an
                #anchor into a .md (or into the file itself) names one of its headings, anchored
                as GitHub does (lowercase; spaces become '-'; punctuation but '-' and '_' dropped;
                a repeated heading gets -1, -2, ...);
  (b) paths     every mention of a document path (doc/NAME.md, README.md, ports/README.md,
                some/dir/README.md, ...) names a file that exists, from the repository root or
                from the mentioning file's folder; the files a run writes (REPORT.md, the
                mutation run's results.md) and the placeholders NAME.md and PATH.md are allowed;
  (c) sections  a citation of a section takes one form, `PATH.md, "Heading"` (doc/design.md
                states it), and the heading must exist in PATH.md: its text without the '#'s and
                the code marks, whole or without a closing parenthesis ("What a replay may take"
                for "What a replay may take (`--max-memory`)"); `PATH.md §...` and a bare
                `README, "..."` are refused;
  (d) self-contained: no file names a document from outside the repository (SPEC, DESIGN.md,
                ../shared) or a ticket number ("issue 12", "i15-..."), which a reader of the
                repository cannot look up.

PENDING below names files that are known to break (b)-(d) while their owners rewrite them: their
findings are printed as notes, not failures, and a PENDING file that has become clean is noted
so that it can be taken off the list.

Usage: tools/check_docs.py [--root DIR]   (default: the repository holding this file)
Exit status 0 when everything holds, 1 with one line per finding (FILE:LINE: what), 2 on a usage
error. Python 3 standard library only; ctest runs it as `docs`.
"""
import argparse
import os
import re
import subprocess
import sys
import urllib.parse

# This file states the patterns it refuses.
SELF = "tools/check_docs.py"

# Files whose citations are being rewritten (a long change in flight): reported as notes until
# they are clean. Empty: every file must hold.
PENDING = set()

SKIP_DIRS = ("results/",)
# Written by a run, never tracked: the benchmark's report, the mutation run's results; and the
# placeholders a text uses to state a form (doc/NAME.md, PATH.md).
GENERATED = {"REPORT.md", "results.md", "NAME.md", "PATH.md"}

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s)>\]\"'`]+")
DOC_PATH = re.compile(r"(?<![\w./${}-])((?:\.\.?/)*(?:[\w.-]+/)*[\w-]+\.md)(?![\w-])")
CITATION = re.compile(r"(?<![\w./${}-])((?:[\w.-]+/)*[\w-]+\.md),?[ \t]+\"")
CITATION_EOL = re.compile(r"(?<![\w./${}-])((?:[\w.-]+/)*[\w-]+\.md),?[ \t]*$")
SECTION_SIGN = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+\.md),?[ \t]*\u00a7")
BARE_README = re.compile(r"(?<![\w./-])README,?[ \t]+\"")
COMMENT_LEADER = re.compile(r"^[ \t]*(?:\*|#+|//|--|;)?[ \t]*")

OUTSIDE = [
    (re.compile(r"\bSPEC\b"), "SPEC is not a document of this repository"),
    (re.compile(r"\bDESIGN\.md\b"), "DESIGN.md is not a document of this repository (doc/design.md is)"),
    (re.compile(r"\.\./shared\b"), "../shared is outside the repository"),
    (re.compile(r"\bSTYLE(\.md| rule)\b"), "STYLE is not a document of this repository"),
    (re.compile(r"\b[Ii]ssues?[ \t]+#?\d+"), "a ticket number (issue N) a reader cannot look up"),
    (re.compile(r"\b[Ii]ssue[ \t]*#\d+"), "a ticket number (issue #N) a reader cannot look up"),
    (re.compile(r"\bi\d{2}-[a-z]"), "a ticket-numbered name (iNN-...)"),
]


def repo_files(root):
    """Paths (relative, '/') of the files git tracks or would track, that exist."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
        names = sorted(set(n for n in out.decode("utf-8", "replace").split("\0") if n))
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "build")]
            for f in files:
                names.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/"))
        names.sort()
    return [n for n in names if os.path.isfile(os.path.join(root, n))]


def read_text(path):
    """The file's lines, or None for a binary or unreadable file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace").split("\n")


def plain(text):
    """A heading's text as rendered: links reduced to their text, code and emphasis marks gone."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "").replace("**", "").replace("*", "")
    return re.sub(r"\s+", " ", text).strip()


def slug(text):
    s = plain(text).lower()
    s = "".join(c for c in s if c.isalnum() or c in "-_ ")
    return s.replace(" ", "-")


class Headings:
    """Headings and GitHub anchors of the .md files, read once each."""

    def __init__(self):
        self.cache = {}

    def of(self, path):
        if path not in self.cache:
            titles, anchors, seen = set(), set(), {}
            fenced = False
            for line in read_text(path) or []:
                if FENCE.match(line):
                    fenced = not fenced
                    continue
                if fenced:
                    continue
                m = HEADING.match(line)
                if m:
                    title = plain(m.group(2))
                    titles.add(title)
                    if title.endswith(")") and " (" in title:  # cited without its parenthesis
                        titles.add(title[:title.index(" (")])
                    s = slug(m.group(2))
                    n = seen.get(s, 0)
                    seen[s] = n + 1
                    anchors.add(s if n == 0 else "%s-%d" % (s, n))
                for a in HTML_ANCHOR.findall(line):
                    anchors.add(a)
            self.cache[path] = (titles, anchors)
        return self.cache[path]


def resolve(root, rel_file, target, link=False):
    """The existing path target names, or None: a link's from rel_file's folder (as GitHub reads
    it); a path named in text from the repository root, else from rel_file's folder."""
    here = os.path.dirname(rel_file)
    for base in ((here,) if link else ("", here)):
        p = os.path.normpath(os.path.join(root, base, target))
        if os.path.exists(p):
            return p
    return None


def main():
    ap = argparse.ArgumentParser(description="links, document paths, section citations, no outside references")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    heads = Headings()
    failures, notes = [], []
    counts = {"files": 0, "links": 0, "paths": 0, "citations": 0}
    dirty_pending = set()

    for rel in repo_files(root):
        if rel.startswith(SKIP_DIRS) or rel == SELF:
            continue
        lines = read_text(os.path.join(root, rel))
        if lines is None:
            continue
        counts["files"] += 1

        def report(lineno, what, rel=rel):
            line = "%s:%d: %s" % (rel, lineno, what)
            if rel in PENDING:
                dirty_pending.add(rel)
                notes.append(line)
            else:
                failures.append(line)

        is_md = rel.endswith(".md")
        fenced = False
        for i, line in enumerate(lines):
            n = i + 1
            if is_md and FENCE.match(line):
                fenced = not fenced
                continue
            bare = URL.sub("", line)

            # (a) markdown links, outside code
            if is_md and not fenced:
                for m in LINK.finditer(INLINE_CODE.sub(lambda c: c.group(1) + c.group(1), line)):
                    target = m.group(2)
                    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                        continue
                    counts["links"] += 1
                    path, _, anchor = target.partition("#")
                    path = urllib.parse.unquote(path)
                    full = os.path.join(root, rel) if path == "" else resolve(root, rel, path, link=True)
                    if full is None:
                        report(n, "link to %s: no such file" % target)
                        continue
                    if anchor and full.endswith(".md"):
                        if urllib.parse.unquote(anchor) not in heads.of(full)[1]:
                            report(n, "link to %s: %s has no heading with the anchor #%s"
                                   % (target, os.path.relpath(full, root), anchor))

            # (b) document paths
            for m in DOC_PATH.finditer(bare):
                p = m.group(1)
                counts["paths"] += 1
                if os.path.basename(p) in GENERATED or resolve(root, rel, p) is not None:
                    continue
                if any(r.search(p) for r, _ in OUTSIDE):
                    continue  # (d) says why
                report(n, "%s: no such document in the repository" % p)

            # (c) section citations: PATH.md, "Heading" (the heading may run on to the next line,
            # or start there)
            plain_line = bare.replace("`", "")  # `doc/x.md`, "Heading" is a citation too
            cites = [(m.group(1), plain_line[m.end():]) for m in CITATION.finditer(plain_line)]
            m = CITATION_EOL.search(plain_line)
            if m and i + 1 < len(lines):
                following = COMMENT_LEADER.sub("", lines[i + 1], count=1)
                if following.startswith('"'):
                    cites.append((m.group(1), following[1:]))
            for p, rest in cites:
                if '"' not in rest and i + 1 < len(lines):
                    rest += " " + COMMENT_LEADER.sub("", lines[i + 1], count=1)
                if '"' not in rest:
                    report(n, "%s, \"...: the cited heading has no closing quote" % p)
                    continue
                cited = plain(rest[:rest.index('"')])
                counts["citations"] += 1
                if os.path.basename(p) in GENERATED:
                    continue
                full = resolve(root, rel, p)
                if full is None:
                    if not any(r.search(p) for r, _ in OUTSIDE):
                        report(n, "%s, \"%s\": no such document" % (p, cited))
                    continue
                if cited not in heads.of(full)[0]:
                    report(n, "%s, \"%s\": %s has no such heading" % (p, cited, os.path.relpath(full, root)))
            for m in SECTION_SIGN.finditer(plain_line):
                report(n, "%s \u00a7...: cite a section as %s, \"Heading\" (doc/design.md)" % (m.group(1), m.group(1)))
            if BARE_README.search(plain_line):
                report(n, "README, \"...: cite it with its path, README.md, \"Heading\"")

            # (d) nothing from outside the repository
            for r, why in OUTSIDE:
                m = r.search(line)
                if m:
                    report(n, "%s: %s" % (m.group(0), why))

    for rel in sorted(PENDING - dirty_pending):
        if os.path.exists(os.path.join(root, rel)):
            notes.append("%s: clean now: take it off PENDING in %s" % (rel, SELF))
    for line in notes:
        print("note: " + line)
    for line in failures:
        print(line)
    summary = "check_docs: %d files, %d links, %d document paths, %d section citations" % (
        counts["files"], counts["links"], counts["paths"], counts["citations"])
    if failures:
        print("%s: %d problem(s)" % (summary, len(failures)))
        return 1
    print("%s: all resolve%s" % (summary, " (%d pending notes)" % len(notes) if notes else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
