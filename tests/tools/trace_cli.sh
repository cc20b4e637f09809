#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# trace_cli.sh -- `rtbench trace size` and `rtbench trace replay` on a trace file: the
# synthetic realloc-heavy trace of tests/unit/trace_replay.c written by `trace_replay --write`, sized
# and replayed through the command line, their CSVs checked: a row per allocator asked for, the
# buddy's bound of this trace (2,588,672 bytes of blocks: b = 32, B = 32,768, r = 10, M =
# 229,376), the size verified, no replay failure beyond the one call flagged as failed in the
# "recording", glibc's ratio to itself 1, instructions counted (per kind where the sample has
# one: under ASan the budget holds fewer calls). A missing file is refused.
#
# `rtbench trace threads` on the five-thread stream `trace_threads --write` makes (when given):
# a row per allocator asked for, the heap found and verified for tlsfmc (none for glibc, which
# has no heap of its own), a time per call, no failure; a single-threaded trace says it has no
# threaded stream.
#
# rttrace (the trace tool's own program, when given): its size rows equal rtbench's, and it
# records a program (bash) on its own.
#
#   tests/tools/trace_cli.sh RTBENCH TRACE_REPLAY [TRACE_THREADS [RTTRACE]]
set -euo pipefail
RTBENCH=$1
WRITER=$2
THREADS_WRITER=${3:-}
RTTRACE=${4:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rt_trace_cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail=0
passed=0
check() {
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "FAIL trace_cli: $what"
        fail=$((fail + 1))
    fi
}
body() { grep -v '^#' "$1"; }

check "the synthetic trace written" "$WRITER" --write "$TMP/s.rtt"
check "trace size exits 0" "$RTBENCH" trace size "$TMP/s.rtt" --alloc tlsf,buddy --csv "$TMP" >"$TMP/size.out"
check "trace_size.csv: tlsf row, verified, no bound" \
    grep -Eq '^-,0,tlsf,143116,[0-9]+,1\.[0-9]+,[0-9]+,1,[0-9]+,[0-9]+,,no bound$' <(body "$TMP/trace_size.csv")
check "trace_size.csv: buddy row with its bound" \
    grep -Eq '^-,0,buddy,143116,[0-9]+,[0-9.]+,[0-9]+,1,[0-9]+,[0-9]+,2588672,"\(r\+1\)M\+2B; r=log2\(B/b\)=10, b=32, B=32768, M=229376"$' \
    <(body "$TMP/trace_size.csv")
check "trace replay exits 0" "$RTBENCH" trace replay "$TMP/s.rtt" --alloc tlsf,glibc --sample 8 --reps 3 \
    --csv "$TMP" >"$TMP/replay.out"
check "trace_replay.csv: tlsf, no failure, one flagged, instructions and F measured" \
    grep -Eq '^-,0,tlsf,4000,0,1,[0-9]+,[0-9.]+,[0-9]+,[0-9]+,([0-9.]*,){20}[0-9.]+,[0-9.]+,[0-9.]+,0,' \
    <(body "$TMP/trace_replay.csv")
check "trace_replay.csv: glibc's ratio to itself, no F" \
    grep -Eq '^-,0,glibc,4000,0,1,.*,[0-9.]+,1\.000,,,' <(body "$TMP/trace_replay.csv")
check "a missing file is refused" bash -c "! '$RTBENCH' trace size '$TMP/none.rtt' 2>/dev/null"
# the advisor: a line per need, each with an allocator, a heap and a runner-up
# (a few counted calls: a debug build single-steps its whole-heap check inside every call)
check "trace advise exits 0" "$RTBENCH" trace advise "$TMP/s.rtt" --alloc tlsf,buddy,wf_hint,glibc \
    --sample 4 --footprint "$TMP/none.csv" >"$TMP/advise.out"
check "advise: bounded worst case names an allocator, a heap with its margin, the worst call" \
    grep -Eq '^bounded worst case +(tlsf|buddy|wf_hint) +[0-9.]+ [KM]iB \(needed [0-9.]+ [KM]iB \+ 20 %\) *[0-9]+ ins +([a-z_0-9]+: .*|-)$' \
    "$TMP/advise.out"
# (which wins depends on the build: a debug build's counts include its whole-heap checks)
check "advise: the bounded need's runner-up, with why it lost" \
    grep -Eq '^bounded worst case +[a-z_0-9]+ .* (tlsf|buddy|wf_hint): (worst call|the same worst call)' "$TMP/advise.out"
check "advise: bounded and thread-safe is the wait-free tree here, with its guaranteed bound" \
    bash -c "grep -Eq '^bounded, thread-safe +wf_hint ' '$TMP/advise.out' && grep -q 'guaranteed: ' '$TMP/advise.out'"
check "advise: smallest heap and fastest answered" \
    bash -c "grep -Eq '^smallest heap +[a-z_]+ ' '$TMP/advise.out' && grep -Eq '^fastest \(instructions\) +[a-z_]+ ' '$TMP/advise.out'"
check "advise: no flash figures says how to get them" grep -q 'run tools/footprint.sh' "$TMP/advise.out"
# flash: the footprint tool's CSV (two rows); no budget -> the least code; a budget both fit -> the
# smaller heap of the bounded ones; a budget only the buddy fits -> the buddy
printf '# footprint\ntarget,allocator,text\ncortex-m4,tlsf,10320\ncortex-m4,buddy,4910\n' >"$TMP/fp.csv"
check "advise --footprint: no budget, the least code (buddy, 4910 B)" bash -c \
    "'$RTBENCH' trace advise '$TMP/s.rtt' --alloc tlsf,buddy --sample 2 --footprint '$TMP/fp.csv' 2>/dev/null | grep -Eq '^least flash / budget +buddy .* tlsf: 10320 B of code against 4910 B'"
check "advise --flash 12K: both fit, the smaller heap (tlsf)" bash -c \
    "'$RTBENCH' trace advise '$TMP/s.rtt' --alloc tlsf,buddy --sample 2 --footprint '$TMP/fp.csv' --flash 12K 2>/dev/null | grep -Eq '^least flash / budget +tlsf '"
check "advise --flash 8K: only the buddy fits" bash -c \
    "'$RTBENCH' trace advise '$TMP/s.rtt' --alloc tlsf,buddy --sample 2 --footprint '$TMP/fp.csv' --flash 8K 2>/dev/null | grep -Eq '^least flash / budget +buddy +[0-9.]+ KiB .* -$'"
check "the empty trace written" "$WRITER" --write-empty "$TMP/e.rtt"
check "advise: a trace with no allocation gets one clear line, status 1" \
    bash -c "'$RTBENCH' trace advise '$TMP/e.rtt' >/dev/null 2>'$TMP/e.err'; test \$? -eq 1 && grep -q 'no allocation' '$TMP/e.err' && test \$(wc -l <'$TMP/e.err') -eq 1"
head -c 3000 "$TMP/s.rtt" >"$TMP/cut.rtt"
check "advise: a damaged (cut) file gets one line, status 1" \
    bash -c "'$RTBENCH' trace advise '$TMP/cut.rtt' >/dev/null 2>'$TMP/c.err'; test \$? -eq 1 && test \$(wc -l <'$TMP/c.err') -eq 1"
if [ -n "$THREADS_WRITER" ]; then
    check "the threaded trace written" "$THREADS_WRITER" --write "$TMP/t.rtt"
    check "trace threads exits 0" "$RTBENCH" trace threads "$TMP/t.rtt" --alloc tlsfmc,glibc --reps 1 \
        --csv "$TMP" >"$TMP/threads.out"
    check "trace_threads.csv: tlsfmc's heap verified, a time, no failure" \
        grep -Eq '^-,0,tlsfmc,5,[0-9]+,[1-9][0-9]*,[0-9]+,[0-9]+,[0-9.]+,1,[0-9.]+,[0-9]+,[0-9]+,[0-9.]+,0$' <(body "$TMP/trace_threads.csv")
    check "trace_threads.csv: glibc, no heap of its own, a time, no failure" \
        grep -Eq '^-,0,glibc,5,[0-9]+,[1-9][0-9]*,[0-9]+,,,,[0-9.]+,[0-9]+,[0-9]+,[0-9.]+,0$' <(body "$TMP/trace_threads.csv")
    check "trace threads: the stream's threads and cross-thread frees printed" \
        grep -Eq '^stream 0: .*: 5 threads, [0-9]+ ops, [1-9][0-9]* cross-thread' "$TMP/threads.out"
    check "trace threads: a single-threaded trace has nothing to replay" bash -c \
        "'$RTBENCH' trace threads '$TMP/s.rtt' --alloc glibc | grep -q 'no stream of this trace was recorded with more than one thread'"
    check "trace threads: a lock-needing allocator is left out" bash -c \
        "'$RTBENCH' trace threads '$TMP/t.rtt' --alloc tlsf,glibc --reps 1 2>&1 >/dev/null | grep -q \"'tlsf' is not thread-safe\""
fi
if [ -n "$RTTRACE" ]; then
    mkdir -p "$TMP/rt"
    check "rttrace size exits 0" "$RTTRACE" size "$TMP/s.rtt" --alloc tlsf,buddy --csv "$TMP/rt" >"$TMP/rt/size.out"
    check "rttrace size: the same heaps and bounds as rtbench trace size" \
        cmp -s <(body "$TMP/trace_size.csv") <(body "$TMP/rt/trace_size.csv")
    check "rttrace record: a program recorded, its trace loads" bash -c \
        "'$RTTRACE' record -o '$TMP/rt/bash.rtt' -- bash -c 'x=\$(seq 2000); echo \${#x}' >'$TMP/rt/rec.out' &&
         grep -Eq '^  stream 0: .*: [1-9][0-9]* ops' '$TMP/rt/rec.out' &&
         '$RTTRACE' size '$TMP/rt/bash.rtt' --alloc tlsf --csv - >/dev/null"
    check "rttrace: an unknown command, status 2" bash -c "'$RTTRACE' frobnicate 2>/dev/null; test \$? -eq 2"
fi
if [ "$fail" -ne 0 ] && [ -f "$TMP/advise.out" ]; then
    echo "--- trace advise printed:"
    cat "$TMP/advise.out"
fi
echo "trace_cli: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
