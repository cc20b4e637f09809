#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/fuzz.sh -- the longer fuzz run of tests/fuzz/fuzz_alloc.c, or with --trace of
# tests/fuzz/fuzz_trace.c (the trace loader and replayer) (libFuzzer, ASan + UBSan).
#
#   tools/fuzz.sh [SECONDS]          fuzz for SECONDS (default 600) in parallel jobs
#   tools/fuzz.sh --runs N           fuzz for N executions in all (whichever comes first with SECONDS)
#   options: --jobs J (default: JOBS or 2)   --only ALLOCATOR (every input on that allocator)
#            --no-corrupt (no CORRUPT or COPY writes: clean runs only)   --fresh (forget the grown corpus)
#            --no-contain (no containment checks at the end of a tainted run)
#            --trace (fuzz_trace: corpus_trace, crashes_trace, inputs up to 4 KiB; --only,
#            --no-corrupt and --no-contain do not apply)
#   FUZZ_BUILD_DIR overrides the build directory (build/fuzz).
#
# Builds build/fuzz (clang, RelWithDebInfo, RTALLOC_FUZZ=ON), grows build/fuzz/corpus from the
# committed seeds (tests/fuzz/corpus, never written), runs libFuzzer in fork mode with J jobs and
# -ignore_crashes, so one run collects every distinct crash; each is kept in build/fuzz/crashes/
# and replayed at the end by fuzz_alloc_replay for a one-line diagnosis. Prints the executions
# and exits non-zero if any crash was found. Replay one: build/fuzz/tests/fuzz/fuzz_alloc_replay -v FILE
# (--trace: build/fuzz/corpus_trace, build/fuzz/crashes_trace, fuzz_trace_replay -v FILE)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECONDS_LIMIT=600
RUNS=-1
JOBS=${JOBS:-2}
ONLY=
NO_CORRUPT=
NO_CONTAIN=
FRESH=
TRACE=
while [ "$#" -gt 0 ]; do
    case "$1" in
        --trace) TRACE=1; shift ;;
        --runs) RUNS=$2; SECONDS_LIMIT=${SECONDS_LIMIT_FOR_RUNS:-86400}; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --no-corrupt) NO_CORRUPT=1; shift ;;
        --no-contain) NO_CONTAIN=1; shift ;;
        --fresh) FRESH=1; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        [0-9]*) SECONDS_LIMIT=$1; shift ;;
        *) echo "tools/fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

BUILD=${FUZZ_BUILD_DIR:-build/fuzz}
cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTALLOC_SANITIZE=address,undefined -DRTALLOC_FUZZ=ON \
    -DRTALLOC_BUILD_BENCH=OFF -DRTALLOC_DEBUG= >/dev/null
NAME=alloc SUFFIX= MAX_LEN=1024
if [ -n "$TRACE" ]; then NAME=trace SUFFIX=_trace MAX_LEN=4096; fi
cmake --build "$BUILD" -j "$JOBS" --target "rtalloc_fuzz_$NAME" "rtalloc_fuzz_${NAME}_replay" >/dev/null
FUZZER=$BUILD/tests/fuzz/fuzz_$NAME
REPLAY=$BUILD/tests/fuzz/fuzz_${NAME}_replay
CORPUS=$BUILD/corpus$SUFFIX
CRASHES=$BUILD/crashes$SUFFIX

if [ -n "$FRESH" ]; then rm -rf "$CORPUS"; fi
mkdir -p "$CORPUS" "$CRASHES"
cp -n tests/fuzz/corpus$SUFFIX/* "$CORPUS/" 2>/dev/null || true
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -n "$ONLY" ]; then export RTFUZZ_ONLY=$ONLY; fi
if [ -n "$NO_CORRUPT" ]; then export RTFUZZ_NO_CORRUPT=1; fi
if [ -n "$NO_CONTAIN" ]; then export RTFUZZ_NO_CONTAIN=1; fi

# Old ASan runtimes fail at start-up on kernels with high mmap randomisation: then without ASLR.
RUNNER=()
if ! "$FUZZER" -runs=0 "$CORPUS" >/dev/null 2>&1 && command -v setarch >/dev/null 2>&1 &&
    setarch "$(uname -m)" -R "$FUZZER" -runs=0 "$CORPUS" >/dev/null 2>&1; then
    RUNNER=(setarch "$(uname -m)" -R)
fi

before=$(ls "$CRASHES" | wc -l)
log=$BUILD/fuzz$SUFFIX.log
echo "tools/fuzz.sh: fuzz_$NAME, $JOBS jobs, ${SECONDS_LIMIT}s, runs $RUNS${ONLY:+, only $ONLY}${NO_CORRUPT:+, no corrupt}${NO_CONTAIN:+, no contain}; log $log"
set +e
"${RUNNER[@]}" "$FUZZER" -fork="$JOBS" -ignore_crashes=1 -max_total_time="$SECONDS_LIMIT" -runs="$RUNS" \
    -max_len="$MAX_LEN" -artifact_prefix="$CRASHES/" "$CORPUS" 2>&1 | tee "$log" |
    grep --line-buffered -E '^#[0-9]+: cov|INFO: fuzzed|INFO: exiting|crash-'
set -e
last=$(grep -E '^#[0-9]+: cov' "$log" | tail -n 1 || true)
echo "executions: $(echo "$last" | sed -E 's/^#([0-9]+):.*/\1/')  (last status: ${last:-none})"
after=$(ls "$CRASHES" | wc -l)
echo "crashes: $after in $CRASHES ($((after - before)) new)"
for f in "$CRASHES"/*; do
    [ -e "$f" ] || continue
    out=$(RTFUZZ_VERBOSE=1 "${RUNNER[@]}" "$REPLAY" "$f" 2>&1 || true)
    name=$(echo "$out" | grep -m1 -oE ' create +[A-Za-z0-9_]+| on [A-Za-z0-9_]+:' | awk '{print $2}' | tr -d : || true)
    why=$(echo "$out" | grep -m1 -E 'fuzz_(alloc|trace): FAIL|SUMMARY:|runtime error' || true)
    echo "  $(basename "$f") [${name:-?}]: ${why:-no longer fails}"
done
[ "$after" -eq 0 ]
