#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/format.sh -- clang-format over the C and C++ sources that git knows, with .clang-format.
#
#   tools/format.sh --check   list the files that clang-format would change; exit 1 if any
#   tools/format.sh --fix     rewrite those files in place (only those: the others keep their
#                             timestamps, so a build does not recompile them)
#
# The files: git ls-files '*.c' '*.h' '*.hpp' '*.cpp', less EXCLUDE below. Needs clang-format 14
# (Debian 12: apt-get install clang-format); another major version may lay a few constructs out
# differently, so the version is printed with the result. Exit status: 0 all formatted (or fixed),
# 1 files differ (--check), 2 usage error or no clang-format.
set -euo pipefail

# Paths never formatted: inputs a program reads byte for byte (the fuzz corpora), and code that is
# not ours if any arrives (third_party/, vendor/).
EXCLUDE=(':(exclude)tests/fuzz/corpus*' ':(exclude)third_party/**' ':(exclude)vendor/**')

usage() {
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
[ "$#" -eq 1 ] || usage
case "$1" in
--check | --fix) mode=$1 ;;
*) usage ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

fmt=""
for f in clang-format-14 clang-format; do
    if command -v "$f" >/dev/null 2>&1; then
        fmt=$f
        break
    fi
done
if [ -z "$fmt" ]; then
    echo "format.sh: no clang-format found (Debian 12: apt-get install clang-format)" >&2
    exit 2
fi
version=$("$fmt" --version | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p')

mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.hpp' '*.cpp' "${EXCLUDE[@]}")
present=()
for f in "${files[@]}"; do
    [ -f "$f" ] && present+=("$f") # one in the index but gone from the working tree: a rename under way
done
files=("${present[@]}")
# One clang-format for all the files: --dry-run reports the first difference of each file.
mapfile -t differ < <("$fmt" --style=file --dry-run --Werror --ferror-limit=1 "${files[@]}" 2>&1 |
    sed -n 's/^\(.*\):[0-9][0-9]*:[0-9][0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)

if [ "${#differ[@]}" -eq 0 ]; then
    echo "format.sh: ${#files[@]} files formatted (clang-format $version)"
    exit 0
fi
if [ "$mode" = --check ]; then
    printf '%s\n' "${differ[@]}"
    echo "format.sh: ${#differ[@]} of ${#files[@]} files differ from .clang-format" \
        "(clang-format $version); tools/format.sh --fix rewrites them" >&2
    exit 1
fi
"$fmt" --style=file -i "${differ[@]}"
echo "format.sh: rewrote ${#differ[@]} of ${#files[@]} files (clang-format $version); see git diff"
