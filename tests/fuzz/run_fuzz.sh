#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_fuzz.sh FUZZER CORPUS WORKDIR RUNS MAX_SECONDS [MAX_LEN] -- the ctests 'fuzz' and
# 'fuzz_trace': libFuzzer over a copy of the committed seed corpus (which is never written), for
# RUNS executions or MAX_SECONDS at most, inputs up to MAX_LEN bytes (default 1024).
# A crash leaves its input in WORKDIR/artifacts/ and fails the test; replay it with
# `fuzz_alloc_replay -v FILE` / `fuzz_trace_replay -v FILE` (or RTFUZZ_VERBOSE=1 FUZZER FILE).
set -euo pipefail
fuzzer=$1 corpus=$2 work=$3 runs=$4 max_time=$5 max_len=${6:-1024}

rm -rf "$work/corpus"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$corpus"/* "$work/corpus/"
echo "fuzz: $(ls "$work/corpus" | wc -l) seeds, -seed=1 (repeatable in CI; tools/fuzz.sh explores) -runs=$runs -max_total_time=$max_time -max_len=$max_len"
status=0
"$fuzzer" -seed=1 -runs="$runs" -max_total_time="$max_time" -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log.txt" 2>&1 || status=$?
# libFuzzer's progress lines are many; keep the start, the stats and any failure
grep -v -E '^#[0-9]+.*(NEW|REDUCE|pulse)' "$work/log.txt" | tail -n 60
if [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED (exit $status); input(s): $(ls "$work/artifacts" 2>/dev/null | tr '\n' ' ')"
    exit 1
fi
echo "fuzz: passed"
