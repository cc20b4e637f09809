#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/tidy.sh -- clang-tidy over the freestanding core, with the checks of .clang-tidy as errors.
#
#   tools/tidy.sh             every src/**/*.c that git knows
#   tools/tidy.sh FILE...     those files only (paths from the repository root)
#
# Configures build/tidy (clang, library only, compile_commands.json) on each run, which takes about
# a second, then runs clang-tidy on the files, JOBS at a time (default 2). Needs clang and
# clang-tidy 14 or later (Debian 12: apt-get install clang clang-tidy). Exit status 0 when no check
# fires, 1 when one does (its findings printed), 2 when a tool is missing or the configure fails.
# The 17 files of src/ take about 4 minutes of CPU (235 s, clang-tidy 14): 2 to 4 minutes on the
# 2-core development machine, too long for a ctest.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=build/tidy
jobs=${JOBS:-2}

tidy=""
for t in clang-tidy clang-tidy-14 clang-tidy-15 clang-tidy-16; do
    if command -v "$t" >/dev/null 2>&1; then
        tidy=$t
        break
    fi
done
if [ -z "$tidy" ]; then
    echo "tidy.sh: no clang-tidy found (Debian: apt-get install clang-tidy)" >&2
    exit 2
fi
cc=$(command -v clang || true)
if [ -z "$cc" ]; then
    echo "tidy.sh: no clang found (Debian: apt-get install clang): the compile commands must be clang's" >&2
    exit 2
fi

# The library alone: no tests, benchmark or C++, so that configuring is quick; the drivers stay
# in the database for a run that names them.
mkdir -p "$build"
if ! cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DRTALLOC_BUILD_TESTS=OFF -DRTALLOC_BUILD_BENCH=OFF \
        -DRTALLOC_BUILD_CXX=OFF >"$build/configure.log" 2>&1; then
    cat "$build/configure.log" >&2
    echo "tidy.sh: configuring $build failed" >&2
    exit 2
fi

if [ "$#" -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(git ls-files 'src/*.c') # the pathspec's * crosses folders
fi
if [ "${#files[@]}" -eq 0 ]; then
    echo "tidy.sh: no files to check" >&2
    exit 2
fi

# One clang-tidy per file, JOBS at once; each prints its findings in one piece, without its
# "N warnings generated" line. xargs fails when any clang-tidy did (a finding is an error under
# WarningsAsErrors; so is a file that does not compile).
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
printf '%s\n' "${files[@]}" |
    xargs -P "$jobs" -I{} sh -c '
        o=$("$0" -p "$1" --quiet "$2" 2>&1); rc=$?
        printf "%s\n" "$o" | grep -v -E "^[0-9]+ (warning|error)s? (and [0-9]+ (warning|error)s? )?generated\.$" || true
        exit $rc' "$tidy" "$build" {} >"$out" || status=1
if [ "$status" -ne 0 ]; then
    cat "$out"
    echo "tidy.sh: findings in ${#files[@]} files checked ($tidy, .clang-tidy): see above" >&2
else
    echo "tidy.sh: ${#files[@]} files clean ($tidy, .clang-tidy)"
fi
exit "$status"
