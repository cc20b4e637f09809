#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# report_test.sh -- bench/report.py (the package bench/report/) on a small CSV fixture
# (tests/fixtures/report/: every CSV that `rtbench run all --csv DIR`, bench/callgrind_check.sh,
# tools/footprint.sh and tools/target-bench.sh write, cut down to a few rows, and allocators.csv):
#   - REPORT.md starts with the summary (status and scale per experiment, the Targets, the
#     headline tables), then every section's heading with its scale, and in every section the
#     fixture's rows with a figure from the CSV (clock, churn, small, mem_frag, mem_stress,
#     instructions per call, hardening, Masmano, worst cases, per-path instructions and the speed
#     targets, Stellwag, FMA, real programs, block layouts, on target, footprint);
#   - unmeasured cells show an em dash: no "n/a", no empty cell, no 0.0 in the fixture's report;
#   - a run with plan.csv / experiments.csv: a planned experiment that did not complete says
#     "interrupted -- not measured in this run" and the report is marked partial; one not planned
#     says "not run at this scale (./bench.sh --full)"; headings carry the plan's scale;
#   - the Stellwag, FMA, on-target, hardening and footprint variants (CSVs missing, burst rows
#     changed or missing, a port whose runs differ, a hardening level missing);
#   - one plot rendered (memfrag_cycles.png, --plots) and found non-empty, a PNG; every other run
#     uses --no-plots (rendering all of them took most of the old test's 50-140 s).
#
#   tests/tools/report_test.sh [PROJECT_SOURCE_DIR]
#
# REPORT_TEST_PYTHON=/path/to/python overrides the choice of interpreter (e.g. one without
# matplotlib: the plot check is then skipped and the report must say the plots were skipped).
set -euo pipefail

SRC=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
FIXTURE=$SRC/tests/fixtures/report
REPORT_PY=$SRC/bench/report.py

fail=0
passed=0
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "FAIL report_test: $what"
        fail=$((fail + 1))
    fi
}

# The Python: one with matplotlib if there is one (/usr/bin/python3 first), else any python3.
PY=
CANDIDATES=(/usr/bin/python3 python3)
[ -n "${REPORT_TEST_PYTHON:-}" ] && CANDIDATES=("$REPORT_TEST_PYTHON")
for p in "${CANDIDATES[@]}"; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' >/dev/null 2>&1; then
        PY=$p
        break
    fi
done
FIGURES=1
if [ -z "$PY" ]; then
    FIGURES=0
    for p in "${CANDIDATES[@]}"; do
        if command -v "$p" >/dev/null 2>&1; then
            PY=$p
            break
        fi
    done
fi
if [ -z "$PY" ]; then
    echo "SKIP report_test: no python3"
    exit 0
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rt_report_test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cp "$FIXTURE"/*.csv "$TMP"/

check "report.py exits 0" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP"
REPORT=$TMP/REPORT.md
check "REPORT.md written and non-empty" test -s "$REPORT"
[ -s "$REPORT" ] || { echo "report_test: $passed passed, $fail failed"; exit 1; }

# Every section, by the start of its heading.
check "summary first" test "$(grep -m1 '^## ' "$REPORT")" = "## Summary"
check "summary before the details" bash -c "grep -n '^## Headlines\|^# Details' '$REPORT' | head -2 | tr '\n' ' ' | grep -q 'Headlines.*Details'"
for heading in "# rtalloc benchmark report" "## Targets" "## Headlines" "# Details" "## Clock verification" "## churn" \
    "## small" "## mem_frag" "## mem_stress" "## Instructions per call" "## Cost of hardening" "## Masmano" \
    "## Worst cases" "## Per-path instructions" "## Stellwag 2010" "## FMA 1998" "## Real programs" \
    "## Block layouts" "## Footprint (Cortex-M4 and RV32IMAC, -Os)" "## On target"; do
    check "heading '$heading' in REPORT.md" grep -q "^$heading" "$REPORT"
done
# The opening answer (bench/report/advice.py) from the fixture's programs: decided on counts
check "which allocator: the answer opens the summary" bash -c \
    "grep -n '^## Which allocator\|^| section | experiment' '$REPORT' | head -2 | tr '\n' ' ' | grep -q 'Which allocator.*section'"
check "which allocator: bounded worst case is tlsf, buddy the runner-up (the same worst call, a larger heap)" \
    grep -q '^| bounded worst case | tlsf | 1.214x live peak | 199 (lua5.4 realloc of 29 B) | buddy: the same worst call, heap 1.9042x' "$REPORT"
check "which allocator: the smallest heap is tlsf's, firstfit's 1.2314x behind" \
    grep -q '^| smallest heap | tlsf | 1.214x live peak | .* | firstfit: heap 1.2314x the live peak against 1.2138x |' "$REPORT"
check "which allocator: least flash from footprint_alloc.csv" grep -q '^| least flash | buddy | .*3236 B code' "$REPORT"
check "which allocator: no thread-safe bounded allocator among the fixture's says so" \
    grep -q '^| bounded, thread-safe | — | — | — | none of the allocators measured qualifies |' "$REPORT"
# A loaded run: churn.csv's load above its CPUs -> its time verdict is the noise mark, said up front
mkdir -p "$TMP/loaded"
cp "$FIXTURE"/*.csv "$TMP/loaded/"
sed -i 's/^# load average at start (1\/5\/15 min): .* on \([0-9]*\) CPUs$/# load average at start (1\/5\/15 min): 13.00 12.00 11.00 on \1 CPUs/' "$TMP/loaded/churn.csv"
env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP/loaded" >/dev/null 2>&1 || true
check "loaded run: the summary says the timings are noisy" grep -q '^\*\*Timings noisy -- rerun on an idle machine.\*\* .*churn: load 13.00 on' "$TMP/loaded/REPORT.md"
check "loaded run: churn's loop target is not a verdict" grep -q '^| churn: tlsf loop vs glibc (same run) | .* | noisy -- rerun on an idle machine (load 13.00' "$TMP/loaded/REPORT.md"
check "quiet fixture: no noise mark" bash -c "! grep -q 'Timings noisy' '$REPORT'"
# Without plan.csv every section is complete at scale "unknown", and its heading says so.
check "every section heading carries its scale" \
    test "$(sed -n '/^# Details/,$p' "$REPORT" | grep '^## ' | grep -v '^## Targets in detail$' | grep -vc '(scale: unknown)$')" -eq 0
check "summary: status table" grep -q '^| churn | churn | complete | unknown | — |' "$REPORT"
check "summary: a headline table per study" test "$(sed -n '/^## Headlines/,/^# Details/p' "$REPORT" | grep -c '^\*\*')" -ge 9
# Unmeasured cells: an em dash, never n/a, an empty cell or 0.0.
check "no n/a cell" bash -c "! grep -q '| n/a |' '$REPORT'"
check "no empty cell" bash -c "! grep -q '|  |' '$REPORT'"
check "no 0.0 cell" bash -c "! grep -q '| 0\.0 |' '$REPORT'"
check "no table over 8 columns" bash -c "! grep '^|' '$REPORT' | awk -F'|' 'NF - 2 > 8 { bad = 1 } END { exit !bad }'"
# Every section's rows: the fixture's allocators with a figure from the CSV.
sec() { sed -n "/^$1/,/^## /p" "$REPORT"; }
check "clock: source row" grep -q '^| source | rdtsc, fenced' <<<"$(sec '## Clock')"
check "churn: tlsf malloc row" grep -q '^| tlsf | 84 | 315 | 336 | 483 | 94.7 |' <<<"$(sec '## churn')"
check "churn: glibc malloc row" grep -q '^| glibc | 126 | 336 | 441 | 19530 | 137.1 |' <<<"$(sec '## churn')"
check "churn: noop loop row, probes measured 0" grep -q '^| noop | 5.5 | 39.6 | 0.14 | 0 | 0.00 |' <<<"$(sec '## churn')"
check "churn: glibc has no probes (dash)" grep -q '^| glibc | 48.5 | 48.5 | 1.00 | — | — |' <<<"$(sec '## churn')"
check "small: seglist malloc row" grep -q '^| seglist | 84 | 819 | 1029 | 1344 | 116.2 |' <<<"$(sec '## small')"
check "mem_frag: seglist probes 2 .. 257" grep -q '^| seglist | 2 | — | — | — | — | 257 |' <<<"$(sec '## mem_frag')"
check "mem_frag: glibc has no probes" grep -q '^| glibc | — | — | — | — | — | — |' <<<"$(sec '## mem_frag')"
check "mem_stress: tlsf row" grep -q '^| tlsf | 604 | 596 | 0 | 2 | 2 | 2 |' <<<"$(sec '## mem_stress')"
check "instructions: churn tlsf row with callgrind's exact mean" grep -q '^| churn | tlsf | 1027 | 121.6 | 119.6 | 165 |' <<<"$(sec '## Instructions per call')"
check "masmano: Table 5(a) tlsf row" grep -q '^| tlsf | 80 / 20 / 567 / 63 | 75 / 14 / 315 / 42 | 78 / 15 / 420 / 42 |' <<<"$(sec '## Masmano')"
check "masmano: Table 7 tlsf row" grep -q '^| tlsf | 10.28 / 5.15 / 17.12 / 4.71 |' <<<"$(sec '## Masmano')"
check "masmano: paper rows" grep -q '^| _TLSF (paper)_ | 10.49 / 1.66 / 11.79 / 6.51 |' <<<"$(sec '## Masmano')"
check "worst: seglist row (memfrag N=10000 linear)" grep -q '^| seglist | 9096 / — | 90096 / — | 96 / 97 |' <<<"$(sec '## Worst cases')"
check "worst: tlsf row beside the paper's" grep -q '^| tlsf | .* | 162 / 161 | TLSF 170 / 194 |' <<<"$(sec '## Worst cases')"
check "paths: per-path row, halffit off its climb (dash)" \
    grep -q '^| malloc exact fit, climb | 122 / 144.0 / 166 | — |' <<<"$(sec '## Per-path')"
check "paths: worst single call row, one pool" \
    grep -q '^| \*\*worst single call, malloc / free\*\* | \*\*207 / 227\*\* | \*\*122 / 192\*\* |' <<<"$(sec '## Per-path')"
check "paths: worst single call row, the last of 4 pools" \
    grep -q '^| \*\*worst single call, malloc / free\*\* | \*\*221 / 325\*\* | \*\*151 / 305\*\* |' <<<"$(sec '## Per-path')"
check "paths: scenario row" grep -q '^| free merge both, lone | 4/4: 222 / 225.8 / 227 | 4/4: 186 / 186.0 / 186 |' <<<"$(sec '## Per-path')"
check "paths: churn sample by path" grep -q '^| churn | tlsf | free merge both | 18 | 210.9 | 203 | 217 |' <<<"$(sec '## Per-path')"
check "speed: churn free mean from callgrind" grep -q '^| speed: churn, tlsf instructions per free, exact mean | <= 60 | 108.0 (callgrind, every call) | \*\*not met\*\* |' "$REPORT"
check "speed: worst single free over paths (both pool counts) and worst" \
    grep -q '^| speed: tlsf worst single free | <= 150 | 325 (max of paths 227, paths, last of 4 pools 325, worst 161' "$REPORT"
# A table under every section (a markdown table's separator row), and no Python traceback text.
sections=$(grep -c '^## ' "$REPORT" || true)
tables=$(grep -c '^|[-:|]*---' "$REPORT" || true)
check "at least one table per section ($tables tables, $sections sections)" test "$tables" -ge "$sections"

# The footprint section: the fixture's numbers (footprint_alloc.csv: tlsf total .text 4700;
# footprint_control.csv: tlsf index 928 B, control block 1104 B for blocks < 2^20 B) beside the blog's.
footprint=$(sed -n '/^## Footprint/,/^## /p' "$REPORT")
check "footprint: per-allocator table (tlsf backend and shared)" grep -q '^| tlsf | 2505 | 0 | 0 | heap_common+hooks | 2195 | 0 |' <<<"$footprint"
check "footprint: per-allocator table (tlsf total .text from the CSV)" grep -q '^| tlsf | 0 | \*\*4700\*\* | 0 | 0 | 6021 |' <<<"$footprint"
check "footprint: buddy links hooks alone" grep -q '^| buddy | 2624 | 0 | 0 | hooks | 612 |' <<<"$footprint"
check "footprint: control-block table by largest block" grep -q '^| tlsf | 664 / 840 | 928 / 1104 |' <<<"$footprint"
check "footprint: the blog's whole-image rows" grep -q '30,568 B | 30,552 B' <<<"$footprint"
check "footprint: comparable row, ours from the CSV beside the blog's 956 B" \
    grep -q '^| the allocator backend alone (.bss) | 32 B | 956 B | +924 | 36 (216) | 928 (1,104) |' <<<"$footprint"
check "footprint: the TLSF control-block target" grep -q '^| TLSF control block.*| 928 B index' "$REPORT"
check "footprint: configurations (footprint_config.csv)" grep -q '^| cortex-m4 | tlsf | 4700 | 4734 / 0 / 0 | 4722 / 0 / 0 | 4728 / 0 / 0 |' <<<"$footprint"
check "footprint: TLSF control block smaller for smaller heaps" grep -q '^| TLSF control block smaller for smaller heaps .*664 B index for blocks < 2^16 B | met |' "$REPORT"
# The Stellwag section: the fixture's stellwag.csv (wf, test I, 16 threads: min 441, median 3570;
# wf_hint's worst nodes per malloc 30 in I) beside the paper's Figure 10 (min : our 5,006).
stellwag=$(sed -n '/^## Stellwag 2010/,/^## /p' "$REPORT")
check "stellwag: Figure 10 beside ours" grep -q '^| min : our | 5,006 | 441 | 2,252 | 378 |' <<<"$stellwag"
check "stellwag: test I row of wf at 16 threads, oversubscribed" \
    grep -q '^| wf | 16 | 8x | 65535 | 16 | 441 | 3570 |' <<<"$stellwag"
check "stellwag: a table per test" test "$(grep -c '^#### Test' <<<"$stellwag")" -ge 4
check "stellwag: the --rt tables" grep -q '^### With --rt' <<<"$stellwag"
check "stellwag: work counters with their bounds" grep -q '^| wf_hint | I | 16 | 30 / 27 / 23.1 | 393213 |' <<<"$stellwag"
check "stellwag: noop calibration rows" grep -q '^| noop | 16 | 8x |' <<<"$stellwag"
check "stellwag: the wait-free targets in the Targets table" grep -q '^| stellwag: Utilisation I >= 92.58 %' "$REPORT"
# The on-target section (tools/target-bench.sh: target_*.csv, cut from a real run to tlsf, seglist,
# buddy, wf, fma and mem_frag N <= 16): mem_stress rows beside the blog's cycles, the mem_frag table,
# the masked-stretch table (wf lock-free), TLSF's constant, and the on-target targets computed from the CSVs.
tgt=$(sed -n '/^## On target/,/^## /p' "$REPORT")
check "target: mem_stress tlsf row on Cortex-M4" grep -q '^| tlsf | 604 | 596 | 0 | 156 / 176 / 176 |' <<<"$tgt"
check "target: mem_stress tlsf row beside the blog" grep -q '^| tlsf | 2 / 2 / 2 | 137 / 180 / 180 | 422/468 | 1/2/2 |' <<<"$tgt"
check "target: mem_stress seglist row on RV32" grep -q '^| seglist | 604 | 596 | 0 | 183 / 212 / 219 |' <<<"$tgt"
check "target: mem_stress seglist row on RV32 beside the blog" grep -q '^| seglist | 1 / 3 / 4 | 146 / 190 / 192 | 415/490 | 1/6/8 |' <<<"$tgt"
check "target: runs byte-identical" grep -q '^| Cortex-M4 (QEMU mps2-an386) | instructions .* | passed | 0 / 0 | .* | c9a3301fcf58d272 / c9a3301fcf58d272 |' <<<"$tgt"
check "target: counter passed" grep -q '^| Cortex-M4 (QEMU mps2-an386) | instructions .* | passed | \*\*yes\*\* | 10 | 2 (disassembly: 2) | 11 |' <<<"$tgt"
check "target: mechanism table with the blog's board row" grep -q '^| blog (board, cycles) | seglist | 356 | 416 | 439 |' <<<"$tgt"
check "target: mem_frag seglist probes" grep -q '^| seglist | 2 | 3 | 17 | — | — |' <<<"$tgt"
check "target: mem_frag seglist instructions" grep -q '^| seglist | — | 143 | 278 | — | — |' <<<"$tgt"
check "target: mem_frag seglist fit (probes N + 1, 9 instructions per block)" grep -q '^| seglist | 120 / 120 | 1.944 | 1.000 | 1.00 | 9.00 |' <<<"$tgt"
check "target: masked table, tlsf" grep -q '^| tlsf | O(1) / O(1) | masks | 117 / 157 | 140 | 140 |' <<<"$tgt"
check "target: masked table, tlsf worst" grep -q '^| tlsf | 140 | 120 | 157 | 157 | \*\*157\*\* |' <<<"$tgt"
check "target: masked table, wf lock-free" grep -q '^| wf | 0 | 0 | 0 | 0 | \*\*0, lock-free\*\* |' <<<"$tgt"
check "target: TLSF's stated constant" grep -q "^\*\*TLSF's constant on cortex-m4: C = 157 instructions\*\*" <<<"$tgt"
check "target: TLSF flat target met" grep -q '^| target cortex-m4: TLSF malloc(120) and its free flat over mem_frag N = 1..16 | max/min <= 1.05 | malloc 176..176 .*| met |' "$REPORT"
check "target: seglist linear target" grep -q '^| target rv32: segregated fit rises linearly .*probes = N + 1; 6.98 instructions per block.*| met |' "$REPORT"
check "target: TLSF masked below the non-O(1) allocators" grep -q '^| target cortex-m4: TLSF.s masked stretch below every non-O(1) allocator.s (adversarial) | C below each | C = 157; lowest non-O(1): 594 | met |' "$REPORT"
mkdir "$TMP/tgtdiff"
cp "$FIXTURE"/*.csv "$TMP/tgtdiff"/
sed -i 's/,57779d912859082c,yes,/,57779d912859082c,no,/' "$TMP/tgtdiff/target_runs.csv"
rm "$TMP/tgtdiff/allocators.csv" # also: without it no wait-free variant is guessed (checked below)
check "report.py exits 0 with a port whose runs differ" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP/tgtdiff"
check "runs that differ: byte-identical target not met" \
    grep -q '^| target rv32: two runs byte-identical | identical | .* | \*\*not met\*\* |' "$TMP/tgtdiff/REPORT.md"
check "runs that differ: that port's figures left out" bash -c "! grep -q '^\*\*RV32IMAC (QEMU virt)\*\*' '$TMP/tgtdiff/REPORT.md'"
# One run without the optional studies' CSVs (on target, Stellwag, FMA, hardening, footprint): each
# section is left out (the footprint's says not measured) and the report is still written.
mkdir "$TMP/without"
cp "$FIXTURE"/*.csv "$TMP/without"/
rm -f "$TMP/without"/target_*.csv "$TMP/without"/stellwag*.csv "$TMP/without"/fma*.csv "$TMP/without"/hardening.csv \
    "$TMP/without"/footprint*.csv "$TMP/without"/trace*.csv "$TMP/without"/layout.csv
check "report.py exits 0 without the optional CSVs" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP/without"
check "no On target section without its CSVs" bash -c "! grep -q '^## On target' '$TMP/without/REPORT.md'"
check "no Stellwag section without its CSVs" bash -c "! grep -q '^## Stellwag' '$TMP/without/REPORT.md'"
# The FMA 1998 section: the fixture's fma.csv (a real run cut down; 60,000 allocations: fma 289 pages
# touched, bsd44 293; worst cycles fma 312, bsd44 442) beside the article's 49.5 %; verdicts computed
# from the CSV (memory not met, worst case met).
fma=$(sed -n '/^## FMA 1998/,/^## /p' "$REPORT")
check "fma: the article's memory claim beside ours" \
    grep -q '^| FMA memory vs BSD 4.4, up to 60,000 allocations | ~49.5 % less | 1.4 % fewer pages touched, 1.4 % fewer at peak' <<<"$fma"
check "fma: other readings of memory" \
    grep -q '^| the same, other readings (see below) | — | 20.5 % fewer pages in use at the end; 10.0 % fewer pages touched with release by live block |' <<<"$fma"
check "fma: the article's time claim beside ours" grep -q '^| FMA time vs BSD 4.4 .* | ~40 % slower | +65 % (sum over the 3 run lengths)' <<<"$fma"
check "fma: the article's upper bounds" grep -q '^| upper bounds, FMA / BSD 4.4 | 1.26 | 0.71 |' <<<"$fma"
check "fma: memory target not met, from the CSV" \
    grep -q '^| fma: FMA >= 45 % fewer pages than BSD 4.4 at 60,000 allocations | >= 45 % | 1.4 % (pages touched 289 vs 293.*| \*\*not met\*\* |' "$REPORT"
check "fma: worst-case target met, from the CSV" \
    grep -q '^| fma: worst-case cycles per FMA call within 2x .*| 312 vs 442 = 0.71x .*; instructions, most of any counted call: 231 vs 2477 = 0.09x | met |' "$REPORT"
# What the article's 49.5 % means: the fixture's fma_floor.csv (60,000 allocations: floor 278 pages,
# bsd44 peak 293, fma 289, the bsd44+hdr model 302 uniform / 582 exact).
check "fma: the floor beside the peaks and the bsd44+hdr model" \
    grep -q '^| uniform | 278 | 293 (+5.4 %) | 289 (+4.0 %) | 302 | 5.1 % |' <<<"$fma"
check "fma: the exact-size pass's model" grep -q '^| exact | 278 | 293 (+5.4 %) | 289 (+4.0 %) | 582 | 5.1 % |' <<<"$fma"
check "fma: the reading that reproduces 49.5 %, marked" \
    grep -q "^| fma peak vs bsd44+hdr, exact sizes | 50.3 %  <- the article's range |" <<<"$fma"
check "fma: a reading outside the article's range, unmarked" grep -q '^| fma peak vs bsd44 peak, uniform sizes | 1.4 % |$' <<<"$fma"
check "fma: which reading reproduces the article, named" \
    grep -q "^The reading that reproduces the article's 49.5 %: fma touched vs bsd44+hdr, exact sizes" <<<"$fma"
check "fma: time table with the noop row" grep -q '^| 60,000 | 2 | 115752 | 0.393 | 0.132 (1.1) |' <<<"$fma"
check "fma: time table, the allocators" grep -q '^| 60,000 | 1.231 (10.6) | 0.736 (6.3) | 1.309 (11.3) | 2.291 (19.8) |' <<<"$fma"
check "fma: pages table" grep -q '^| 60,000 | 289 / 289 | 293 / 293 | 242 / 232 | 263 / 229 | 1.4 % | 208.6 |' <<<"$fma"
check "fma: pages at the end and with release by live block" grep -q '^| 60,000 | 233 / 293 | 20.5 % | 0 | 18 / 20 | 10.0 % |' <<<"$fma"
check "fma: per-call row with instructions" \
    grep -q '^| fma | 78 / 104 / 312 | 78 / 104 / 208 | 120 | 171 / 132.1 | 175 / 173.8 | 171 / 128.2 | 231 / 174.3 |' <<<"$fma"
check "fma: exact-size table" grep -q '^| tlsf | 311 / 307 | 242 / 232 |' <<<"$fma"
# The burst pass (release "burst"), beyond the article: a section of its own that judges nothing --
# pages touched / peak / at the end per run length (60,000: fma 278, bsd44 501, 44.5 % fewer), the
# per-call row with its instructions, the sentence that sums it up.
check "fma: burst pass in a section of its own, beyond the article" \
    grep -q '^### Beyond the article: bursts of one size class (context, not judged)' <<<"$fma"
check "fma: burst pages row" grep -q '^| 60,000 | 0 | 1493 | 278 / 278 / 38 | 501 / 501 / 501 | 209 / 196 / 15 |' <<<"$fma"
check "fma: burst pages row, savings" grep -q '^| 60,000 | 257 / 193 / 15 | 44.5 % | 92.4 % | 190.1 |' <<<"$fma"
check "fma: burst per-call row with instructions" \
    grep -q '^| fma | 1.019 (8.5) | 78 / 104 / 754 | 78 / 130 / 182 | 171 / 130.3 | 175 / 174.9 | 184 / 127.1 | 231 / 177.0 |' <<<"$fma"
check "fma: burst summary" \
    grep -q '^In this pass FMA touches 44.5 % fewer pages than BSD 4.4 at 60,000 allocations (278 vs 501); its time with heap calls minus without is 46 % more than BSD 4.4.s' <<<"$fma"
check "fma: two targets, none from the burst pass" test "$(sed -n '/^## Targets in detail/,/^## /p' "$REPORT" | grep -c '^| fma: ')" -eq 2
check "summary: the verdicts alone" grep -q '^| fma: FMA >= 45 % fewer pages than BSD 4.4 at 60,000 allocations | \*\*not met\*\* |' "$REPORT"
# The judged rows read the article's test alone: burst rows changed (pages, worst cycles,
# instructions) or left out, the targets and the claims stay as they are.
fma_judged() { sed -n '/^## FMA 1998/,/^### Time with heap calls/p' "$1"; grep '^| fma: ' "$1"; }
mkdir "$TMP/fmaburst" "$TMP/fmanoburst"
cp "$FIXTURE"/*.csv "$TMP/fmaburst"/
cp "$FIXTURE"/*.csv "$TMP/fmanoburst"/
awk -F, -v OFS=, '$3 == "burst" { $21 = 99999; $25 = 99999; $28 = 1; $29 = 1; $30 = 1 } { print }' \
    "$FIXTURE/fma.csv" >"$TMP/fmaburst/fma.csv"
awk -F, -v OFS=, '$3 == "burst" { $8 = 99999 } { print }' "$FIXTURE/fma_instr.csv" >"$TMP/fmaburst/fma_instr.csv"
grep -v ',burst,' "$FIXTURE/fma.csv" >"$TMP/fmanoburst/fma.csv"
grep -v ',burst,' "$FIXTURE/fma_instr.csv" >"$TMP/fmanoburst/fma_instr.csv"
check "report.py exits 0 with other burst rows" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP/fmaburst"
check "report.py exits 0 without burst rows" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP/fmanoburst"
check "fma: burst rows changed: the changed figures shown" grep -q '^| 60,000 | 0 | 1493 | 1 / 1 / 1 | 1 / 1 / 1 |' "$TMP/fmaburst/REPORT.md"
check "fma: burst rows changed: claims and targets the same" \
    diff <(fma_judged "$REPORT") <(fma_judged "$TMP/fmaburst/REPORT.md")
check "fma: without burst rows: claims and targets the same" \
    diff <(fma_judged "$REPORT") <(fma_judged "$TMP/fmanoburst/REPORT.md")
check "fma: without burst rows: no burst section" bash -c "! grep -q '^### Beyond the article: bursts' '$TMP/fmanoburst/REPORT.md'"
check "no FMA section without its CSVs" bash -c "! grep -q '^## FMA' '$TMP/without/REPORT.md'"
# The cost-of-hardening section (hardening.csv, cut from a real `rtbench run hardening`: tlsf churn
# malloc 117.9 at level 0, 158.8 at 1 and 2; seglist on small counted other calls at level 0).
hard=$(sed -n '/^## Cost of hardening/,/^## /p' "$REPORT")
check "hardening: tlsf churn malloc row, levels 0/1/2" grep -q '^| churn | tlsf | malloc | 117.9 | 160 | 158.8 | 202 | 158.8 |' <<<"$hard"
check "hardening: tlsf churn malloc row, deltas" grep -q '^| churn | tlsf | malloc | 202 | +40.9 | +40.9 | yes |' <<<"$hard"
check "hardening: the binary's level from the CSV header" grep -q '^- \*\*hardening\*\* (this binary): RT_HARDENING=1' <<<"$hard"
check "hardening: levels that counted other calls say so" \
    grep -q '^| small | seglist | malloc | 7274 | +811.2 | +811.2 | \*\*no\*\* (1037 / 392 / 392) |' <<<"$hard"
check "no Cost of hardening section without its CSV" bash -c "! grep -q '^## Cost of hardening' '$TMP/without/REPORT.md'"
mkdir "$TMP/hard2"
cp "$FIXTURE"/*.csv "$TMP/hard2"/
grep -v ',2,[0-9]*,[0-9.]*,[0-9]*$' "$FIXTURE/hardening.csv" >"$TMP/hard2/hardening.csv"
check "report.py exits 0 with a level missing" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP/hard2"
check "a missing level is shown as such" grep -q '^Level 2 not measured' "$TMP/hard2/REPORT.md"

# Without the footprint CSVs (no arm-none-eabi-gcc): the report is still written, the section says so.
check "footprint section says not measured" grep -q '^\*\*Not measured\*\*' "$TMP/without/REPORT.md"

# A run with rtbench's bookkeeping (plan.csv, experiments.csv) and bench.sh's run.csv: churn
# complete, small planned but interrupted, the rest not planned (quick scale).
mkdir "$TMP/partial"
cp "$FIXTURE"/*.csv "$TMP/partial"/
printf 'step,experiment,scale\n1,clock,quick\n2,churn,quick\n3,small,quick\n' >"$TMP/partial/plan.csv"
printf 'experiment,status,scale,seconds\nclock,complete,quick,1.2\nchurn,complete,quick,30.5\nsmall,interrupted,quick,4.0\n' \
    >"$TMP/partial/experiments.csv"
printf "key,value\ncommand,./bench.sh --scale quick\ncommit,abc1234\nscale,quick\nstatus,partial: interrupted in step rtbench\nsteps_planned,deps build rtbench footprint report\nsteps_done,deps build\n" \
    >"$TMP/partial/run.csv"
check "report.py exits 0 on a partial run" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --no-plots "$TMP/partial"
P=$TMP/partial/REPORT.md
check "partial: marked at the top" grep -q '^> \*\*PARTIAL RUN\*\* (partial: interrupted in step rtbench)' "$P"
check "partial: the run's command in the header" grep -q '^- \*\*run command\*\*: ./bench.sh --scale quick' "$P"
check "partial: churn measured, heading with its scale" grep -q '^## churn (scale: quick)$' "$P"
check "partial: churn rows" grep -q '^| tlsf | 84 | 315 | 336 | 483 | 94.7 |' "$P"
check "partial: small interrupted" bash -c "sed -n '/^## small (scale: quick)\$/,/^## /p' '$P' | grep -q '^\*\*interrupted — not measured in this run\*\*'"
check "partial: small's rows not shown" bash -c "! grep -q '^| seglist | 84 | 819 | 1029 | 1344 | 116.2 |' '$P'"
check "partial: mem_frag not run at this scale" bash -c "sed -n '/^## mem_frag .*(scale: quick)\$/,/^## /p' '$P' | grep -q '^\*\*not run at this scale (./bench.sh --full)\*\*'"
check "partial: fma not run at this scale" bash -c "sed -n '/^## FMA 1998.*(scale: quick)\$/,/^## /p' '$P' | grep -q 'not run at this scale'"
check "partial: summary lists small as interrupted" grep -q '^| small | small | interrupted — not measured in this run | quick | 4.0 |' "$P"
check "partial: on target not run at this scale (bench.sh step)" bash -c "sed -n '/^## On target.*(scale: quick)\$/,/^## /p' '$P' | grep -q 'not run at this scale'"
# allocators.csv decides which allocators are wait-free trees: without it nothing is guessed from names.
check "stellwag: the wait-free variants from allocators.csv" grep -q '^| stellwag: .*met by wf' "$REPORT"
check "without allocators.csv (tgtdiff): no variant guessed from its name" bash -c "! grep -q '^| stellwag: .*met by wf' '$TMP/tgtdiff/REPORT.md'"

# --- trace replay and size ---
# The real-programs section (trace.csv, trace_programs.csv: a quick run's rows cut to glibc, tlsf,
# firstfit and buddy on sqlite3 and lua5.4; lua5.4's firstfit marked non-monotone by hand; python3
# "not installed"): heap needed beside the live peak, the buddy's bound, dashes for what a system
# peer has not (heap, bound, F), instructions and the ratio to glibc, the winners' line, the TLSF
# targets computed from the CSV, and the not-run program marked in its section and the headline.
# The layout target: glibc's footprint (glibc_footprint* columns, from a later quick run of the same traces)
# said per program, in the headline, and the target tlsf heap needed <= glibc's footprint (A=16).
tr=$(sed -n '/^## Real programs/,/^## /p' "$REPORT")
check "trace: sqlite3 tlsf heap row" grep -q '^| tlsf | 1,294,409 | 1.076 | — | — | 5.8 | 0 | — |' <<<"$tr"
check "trace: sqlite3 buddy row with its bound" grep -q '^| buddy | 2,291,436 | 1.904 | 29,229,056 | 24.29 | 84.6 | 0 | — |' <<<"$tr"
check "trace: glibc unsized, dashes" grep -q '^| glibc | — | — | — | — | — | 0 | — |' <<<"$tr"
check "trace: sqlite3 tlsf instructions and x glibc" grep -q '^| tlsf | 115.9 | 121 | 121 | 6.8 | 0.92 | op 17999 realloc(32): 121 |' <<<"$tr"
check "trace: sqlite3 tlsf instructions by kind" grep -q '^| tlsf | 117.0 / 117 / 117 (11) | 114.0 / 114 / 114 (12) | 121.0 / 121 / 121 (2) | — | — |' <<<"$tr"
check "trace: non-monotone size noted" grep -q '^| firstfit | 5,931,310 | 1.231 | — | — | 22.5 | 0 | non-monotone |' <<<"$tr"
check "trace: smallest heap and lowest worst case named" \
    grep -q '^smallest heap: \*\*firstfit\*\* (1,230,625 bytes, 1.023 x the live peak); lowest worst case counted: \*\*tlsf\*\* (121 instructions).' <<<"$tr"
check "trace: not-run program marked" grep -q '^\*\*not run: /usr/bin/python3 not installed\*\*' <<<"$tr"
check "trace: prefix said" grep -q 'the first 100,000 replayed (quick scale)' <<<"$tr"
check "trace: tlsf ns target from the CSV" \
    grep -q '^| trace sqlite3: tlsf ns per call vs glibc (same run) | <= 1.00x | 0.92x (first 100,000 ops) | met |' "$REPORT"
check "trace: tlsf heap target from the CSV" \
    grep -q '^| trace lua5.4: tlsf heap needed / live peak | <= 1.25 | 1.214 (first 100,000 ops) | met |' "$REPORT"
check "trace: glibc footprint said" grep -q "^glibc's footprint: 1,232,896 bytes, \*\*1.025 x the live peak\*\* (stream 0, a new arena)." <<<"$tr"
check "trace: glibc footprint target from the CSV (not met)" \
    grep -q "^| trace lua5.4: tlsf heap needed / live peak vs glibc's footprint (A=16) | <= 1.179 (glibc footprint / live peak) | 1.214 (first 100,000 ops) | \*\*not met\*\* |" "$REPORT"
check "trace: headline glibc footprint column" \
    grep -q '^| sqlite3 | complete (prefix) | 1,203,337 | 1.076 | 1.025 | 0.92 | firstfit |' "$REPORT"
check "trace: headline marks the program not run" \
    grep -q '^| python3 | not run: /usr/bin/python3 not installed | — | — | — | — | — |' "$REPORT"
# The threaded program (trace_threads.csv of that quick run, one thread per recorded thread): its
# own table, not a row of the single-threaded ones; heap needed and ns per call over glibc's.
check "trace: threaded program's section" grep -q '^### python3-threads: one thread per recorded thread' <<<"$tr"
check "trace: threaded program's tlsfmc heap row" grep -q '^| tlsfmc | 5,821,509 | 1.755 | — |' <<<"$tr"
check "trace: threaded program's tlsfmc time row, x glibc from the CSV" \
    grep -q '^| tlsfmc | 57.9 | 0.69 | 378 | 787185 | 0 |' <<<"$tr"
check "trace: threaded program not in the single-threaded headline" bash -c "! grep -q '^| python3-threads | ' '$REPORT'"
check "no Real programs section without its CSVs" bash -c "! grep -q '^## Real programs' '$TMP/without/REPORT.md'"
# --- end trace replay ---

# The block-layouts section (layout.csv, a quick `rtbench run layout --alloc tlsf,bestfit`: 64-bit
# A=16, 64-bit A=8, 32-bit A=8, sqlite3 "no fit" on 32-bit): F and heap / live peak per heap and
# layout, and the layout targets for TLSF computed from the CSV.
ly=$(sed -n '/^## Block layouts/,/^## /p' "$REPORT")
check "layout: tlsf 32-bit row, no fit marked" grep -q '^| tlsf | 32-bit A=8 | 6.30 | 13.48 | 7.92 | no fit | 1.143 | 1.099 |' <<<"$ly"
check "layout: bestfit 64-bit A=16 row" grep -q '^| bestfit | 64-bit A=16 | 3.60 | 17.48 | 6.95 | 1.011 | 1.179 | 1.068 |' <<<"$ly"
check "layout: Masmano 32-bit target from the CSV" \
    grep -q '^| Masmano Test 2, 32-bit layout: tlsf F | <= 14.86 % | 13.48 % (mean of 3 seeds) | met |' "$REPORT"
check "layout: A=8 trace target from the CSV" \
    grep -q '^| trace lua5.4, 64-bit A=8: tlsf heap needed / live peak | <= 1.24 (common C TLSF, 8-byte alignment) | 1.143 | met |' "$REPORT"
check "no Block layouts section without its CSV" bash -c "! grep -q '^## Block layouts' '$TMP/without/REPORT.md'"

if [ "$FIGURES" = 1 ]; then
    # One plot rendered (the others are the same code path); mem_frag's cycles on a log axis.
    mkdir "$TMP/plot"
    cp "$FIXTURE"/*.csv "$TMP/plot"/
    check "report.py exits 0 rendering one plot" env MPLBACKEND=Agg "$PY" "$REPORT_PY" --plots memfrag_cycles.png "$TMP/plot"
    check "memfrag_cycles.png referenced" grep -q '(memfrag_cycles.png)' "$TMP/plot/REPORT.md"
    check "memfrag_cycles.png is a non-empty PNG" bash -c "head -c 8 '$TMP/plot/memfrag_cycles.png' | od -An -c | grep -q 'P   N   G'"
    check "only the plot asked for" test "$(ls "$TMP/plot"/*.png | wc -l)" -eq 1
else
    echo "SKIP report_test figures: $PY has no matplotlib; tables checked only"
    env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/plot" >/dev/null 2>&1 || true
fi
check "--no-plots says so" grep -q '^_Plots skipped' "$REPORT"

echo "report_test: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
