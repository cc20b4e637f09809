#!/usr/bin/env bash
# report_test.sh -- bench/report.py runs on a tiny CSV fixture (tests/fixtures/report/: every CSV
# that `rtbench run all --csv DIR` and bench/callgrind_check.sh write, cut down to a few rows) and
# produces every table and figure file:
#   - REPORT.md exists and holds every section heading (clock, churn, small, mem_frag,
#     mem_stress, instructions per call, Masmano, footprint, targets) and a table under each;
#   - the Stellwag section (stellwag.csv, stellwag_cdf.csv) shows Figure 10 beside the fixture's
#     numbers, a table per test with the rows of the CSV, the --rt tables, the work counters and
#     issue 4's targets; without those CSVs report.py still succeeds and leaves the section out;
#   - the FMA 1998 section (fma.csv, fma_instr.csv, fma_cdf.csv) shows the article's claims beside the
#     fixture's numbers, issue 5's targets with the verdicts computed from the CSV (one met, one not),
#     the time table with the noop row, the pages tables and the per-call table with instructions;
#     the burst pass (beyond the article) in a section of its own, its pages and per-call rows, and
#     the judged target rows the same whatever the burst rows hold (and without them); without those
#     CSVs report.py still succeeds and leaves the section out;
#   - the on-target section (tools/target-bench.sh: target_*.csv) shows mem_stress beside the blog's
#     cycles, the mechanism and mem_frag tables, the interrupts-masked table with TLSF's constant and
#     issue 6's targets computed from the CSVs; a port whose two runs differ is "not met" and its
#     figures are left out; without those CSVs the section is left out;
#   - the cost-of-hardening section (hardening.csv) shows each level's mean and max and the
#     differences over level 0, says where the levels counted other calls and where a level is
#     missing; without the CSV report.py still succeeds and leaves the section out;
#   - the footprint section (tools/footprint.sh --csv: footprint*.csv) shows the fixture's
#     per-allocator sizes and control block beside the blog's figures, and without those CSVs
#     report.py still succeeds and the section says "Not measured";
#   - every PNG that REPORT.md references exists and is non-empty, and every plot report.py
#     documents is among them (checked only when the Python has matplotlib; without it the test
#     says so and checks the tables alone).
#
#   tests/report_test.sh [PROJECT_SOURCE_DIR]
#
# REPORT_TEST_PYTHON=/path/to/python overrides the choice of interpreter (e.g. one without
# matplotlib, to check the tables-only path).
set -euo pipefail

SRC=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
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

check "report.py exits 0" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP"
REPORT=$TMP/REPORT.md
check "REPORT.md written and non-empty" test -s "$REPORT"
[ -s "$REPORT" ] || { echo "report_test: $passed passed, $fail failed"; exit 1; }

# Every section, by the start of its heading.
for heading in "# rtalloc benchmark report" "## Targets" "## Clock verification" "## churn" "## small" \
    "## mem_frag" "## mem_stress" "## Instructions per call" "## Cost of hardening" "## Masmano" "## Stellwag 2010" \
    "## FMA 1998" "## Footprint (Cortex-M4 and RV32IMAC, -Os)" "## On target"; do
    check "heading '$heading' in REPORT.md" grep -q "^$heading" "$REPORT"
done
# A table under every section (a markdown table's separator row), and no Python traceback text.
sections=$(grep -c '^## ' "$REPORT" || true)
tables=$(grep -c '^|[-:|]*---' "$REPORT" || true)
check "at least one table per section ($tables tables, $sections sections)" test "$tables" -ge "$sections"

# The footprint section: the fixture's numbers (footprint_alloc.csv: tlsf total .text 4700;
# footprint_control.csv: tlsf index 928 B, control block 1104 B for blocks < 2^20 B) beside the blog's.
footprint=$(sed -n '/^## Footprint/,/^## /p' "$REPORT")
check "footprint: per-allocator table (tlsf total .text from the CSV)" grep -q '^| tlsf | 2505 | 0 | 0 | heap_common+hooks | 2195 | 0 | 0 | \*\*4700\*\*' <<<"$footprint"
check "footprint: buddy links hooks alone" grep -q '^| buddy | 2624 | 0 | 0 | hooks | 612 ' <<<"$footprint"
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
check "stellwag: issue 4's targets in the Targets table" grep -q '^| stellwag: Utilisation I >= 92.58 %' "$REPORT"
# The on-target section (tools/target-bench.sh: target_*.csv, cut from a real run to tlsf, seglist,
# buddy, wf, fma and mem_frag N <= 16): mem_stress rows beside the blog's cycles, the mem_frag table,
# the masked-stretch table (wf lock-free), TLSF's constant, and issue 6's targets computed from the CSVs.
tgt=$(sed -n '/^## On target/,/^## /p' "$REPORT")
check "target: mem_stress tlsf row on Cortex-M4 beside the blog" \
    grep -q '^| tlsf | 604 | 596 | 0 | 156 / 176 / 176 | 2 / 2 / 2 | 137 / 180 / 180 | 422/468 | 1/2/2 |' <<<"$tgt"
check "target: mem_stress seglist row on RV32" \
    grep -q '^| seglist | 604 | 596 | 0 | 183 / 212 / 219 | 1 / 3 / 4 | 146 / 190 / 192 | 415/490 | 1/6/8 |' <<<"$tgt"
check "target: runs byte-identical and counter passed" grep -q '^| Cortex-M4 (QEMU mps2-an386) | instructions .* | passed | 0 / 0 | .* | \*\*yes\*\* | 10 | 2 (disassembly: 2) | 11 |' <<<"$tgt"
check "target: mechanism table with the blog's board row" grep -q '^| blog (board, cycles) | seglist | 356 | 416 | 439 |' <<<"$tgt"
check "target: mem_frag seglist row (probes N + 1, 9 instructions per block)" \
    grep -q '^| seglist | 2 | 3 | 17 | - | - | - | 143 | 278 | - | - | 120 / 120 | 1.944 | 1.000 | 1.00 | 9.00 |' <<<"$tgt"
check "target: masked table, tlsf" grep -q '^| tlsf | O(1) / O(1) | masks | 117 / 157 | 140 | 140 | 140 | 120 | 157 | 157 | \*\*157\*\* |' <<<"$tgt"
check "target: masked table, wf lock-free" grep -q '^| wf | .* | lock-free | 0 | .*\*\*0, lock-free\*\* |' <<<"$tgt"
check "target: TLSF's stated constant" grep -q "^\*\*TLSF's constant on cortex-m4: C = 157 instructions\*\*" <<<"$tgt"
check "target: TLSF flat target met" grep -q '^| target cortex-m4: TLSF malloc(120) and its free flat over mem_frag N = 1..16 | max/min <= 1.05 | malloc 176..176 .*| met |' "$REPORT"
check "target: seglist linear target" grep -q '^| target rv32: segregated fit rises linearly .*probes = N + 1; 6.98 instructions per block.*| met |' "$REPORT"
check "target: TLSF masked below the non-O(1) allocators" grep -q '^| target cortex-m4: TLSF.s masked stretch below every non-O(1) allocator.s (adversarial) | C below each | C = 157; lowest non-O(1): 594 | met |' "$REPORT"
mkdir "$TMP/tgtdiff"
cp "$FIXTURE"/*.csv "$TMP/tgtdiff"/
sed -i 's/,57779d912859082c,yes,/,57779d912859082c,no,/' "$TMP/tgtdiff/target_runs.csv"
check "report.py exits 0 with a port whose runs differ" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/tgtdiff"
check "runs that differ: byte-identical target not met" \
    grep -q '^| target rv32: two runs byte-identical | identical | .* | \*\*not met\*\* |' "$TMP/tgtdiff/REPORT.md"
check "runs that differ: that port's figures left out" bash -c "! grep -q '^\*\*RV32IMAC (QEMU virt)\*\*' '$TMP/tgtdiff/REPORT.md'"
mkdir "$TMP/notgt"
cp "$FIXTURE"/*.csv "$TMP/notgt"/
rm -f "$TMP/notgt"/target_*.csv
check "report.py exits 0 without target CSVs" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/notgt"
check "no On target section without its CSVs" bash -c "! grep -q '^## On target' '$TMP/notgt/REPORT.md'"
mkdir "$TMP/nosw"
cp "$FIXTURE"/*.csv "$TMP/nosw"/
rm -f "$TMP/nosw"/stellwag*.csv
check "report.py exits 0 without stellwag CSVs" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/nosw"
check "no Stellwag section without its CSVs" bash -c "! grep -q '^## Stellwag' '$TMP/nosw/REPORT.md'"
# The FMA 1998 section: the fixture's fma.csv (a real run cut down; 60,000 allocations: fma 289 pages
# touched, bsd44 293; worst cycles fma 312, bsd44 442) beside the article's 49.5 %; verdicts computed
# from the CSV (memory not met, worst case met).
fma=$(sed -n '/^## FMA 1998/,/^## /p' "$REPORT")
check "fma: the article's memory claim beside ours" \
    grep -q '^| FMA memory vs BSD 4.4, up to 60,000 allocations | ~49.5 % less | 1.4 % fewer pages touched, 1.4 % fewer at peak' <<<"$fma"
check "fma: other readings of memory" \
    grep -q '^| the same, other readings (see below) |  | 20.5 % fewer pages in use at the end; 10.0 % fewer pages touched with release by live block |' <<<"$fma"
check "fma: the article's time claim beside ours" grep -q '^| FMA time vs BSD 4.4 .* | ~40 % slower | +65 % (sum over the 3 run lengths)' <<<"$fma"
check "fma: the article's upper bounds" grep -q '^| upper bounds, FMA / BSD 4.4 | 1.26 | 0.71 |' <<<"$fma"
check "fma: memory target not met, from the CSV" \
    grep -q '^| fma: FMA >= 45 % fewer pages than BSD 4.4 at 60,000 allocations | >= 45 % | 1.4 % (pages touched 289 vs 293.*| \*\*not met\*\* |' "$REPORT"
check "fma: worst-case target met, from the CSV" \
    grep -q '^| fma: worst-case cycles per FMA call within 2x .*| 312 vs 442 = 0.71x .*; instructions, most of any counted call: 231 vs 2477 = 0.09x | met |' "$REPORT"
check "fma: time table with the noop row" \
    grep -q '^| 60,000 | 2 | 115752 | 0.393 | 0.132 (1.1) | 1.231 (10.6) | 0.736 (6.3) | 1.309 (11.3) | 2.291 (19.8) |' <<<"$fma"
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
check "fma: burst pages row" \
    grep -q '^| 60,000 | 0 | 1493 | 278 / 278 / 38 | 501 / 501 / 501 | 209 / 196 / 15 | 257 / 193 / 15 | 44.5 % | 92.4 % | 190.1 |' <<<"$fma"
check "fma: burst per-call row with instructions" \
    grep -q '^| fma | 1.019 (8.5) | 78 / 104 / 754 | 78 / 130 / 182 | 171 / 130.3 | 175 / 174.9 | 184 / 127.1 | 231 / 177.0 |' <<<"$fma"
check "fma: burst summary" \
    grep -q '^In this pass FMA touches 44.5 % fewer pages than BSD 4.4 at 60,000 allocations (278 vs 501); its time with heap calls minus without is 46 % more than BSD 4.4.s' <<<"$fma"
check "fma: two targets, none from the burst pass" test "$(grep -c '^| fma: ' "$REPORT")" -eq 2
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
check "report.py exits 0 with other burst rows" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/fmaburst"
check "report.py exits 0 without burst rows" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/fmanoburst"
check "fma: burst rows changed: the changed figures shown" grep -q '^| 60,000 | 0 | 1493 | 1 / 1 / 1 | 1 / 1 / 1 |' "$TMP/fmaburst/REPORT.md"
check "fma: burst rows changed: claims and targets the same" \
    diff <(fma_judged "$REPORT") <(fma_judged "$TMP/fmaburst/REPORT.md")
check "fma: without burst rows: claims and targets the same" \
    diff <(fma_judged "$REPORT") <(fma_judged "$TMP/fmanoburst/REPORT.md")
check "fma: without burst rows: no burst section" bash -c "! grep -q '^### Beyond the article: bursts' '$TMP/fmanoburst/REPORT.md'"
mkdir "$TMP/nofma"
cp "$FIXTURE"/*.csv "$TMP/nofma"/
rm -f "$TMP/nofma"/fma*.csv
check "report.py exits 0 without fma CSVs" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/nofma"
check "no FMA section without its CSVs" bash -c "! grep -q '^## FMA' '$TMP/nofma/REPORT.md'"
# The cost-of-hardening section (hardening.csv, cut from a real `rtbench run hardening`: tlsf churn
# malloc 117.9 at level 0, 158.8 at 1 and 2; seglist on small counted other calls at level 0).
hard=$(sed -n '/^## Cost of hardening/,/^## /p' "$REPORT")
check "hardening: tlsf churn malloc row, levels 0/1/2 and deltas" \
    grep -q '^| churn | tlsf | malloc | 117.9 | 160 | 158.8 | 202 | 158.8 | 202 | +40.9 | +40.9 | yes |' <<<"$hard"
check "hardening: the binary's level from the CSV header" grep -q '^- \*\*hardening\*\* (this binary): RT_HARDENING=1' <<<"$hard"
check "hardening: levels that counted other calls say so" \
    grep -q '^| small | seglist | malloc | 377.7 | 2395 | 1188.9 | 7274 | 1188.9 | 7274 | +811.2 | +811.2 | \*\*no\*\* (1037 / 392 / 392) |' <<<"$hard"
mkdir "$TMP/nohard"
cp "$FIXTURE"/*.csv "$TMP/nohard"/
rm -f "$TMP/nohard"/hardening.csv
check "report.py exits 0 without hardening.csv" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/nohard"
check "no Cost of hardening section without its CSV" bash -c "! grep -q '^## Cost of hardening' '$TMP/nohard/REPORT.md'"
mkdir "$TMP/hard2"
cp "$FIXTURE"/*.csv "$TMP/hard2"/
grep -v ',2,[0-9]*,[0-9.]*,[0-9]*$' "$FIXTURE/hardening.csv" >"$TMP/hard2/hardening.csv"
check "report.py exits 0 with a level missing" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/hard2"
check "a missing level is shown as such" grep -q '^Level 2 not measured' "$TMP/hard2/REPORT.md"

# Without the footprint CSVs (no arm-none-eabi-gcc): the report is still written, the section says so.
mkdir "$TMP/nofoot"
cp "$FIXTURE"/*.csv "$TMP/nofoot"/
rm -f "$TMP/nofoot"/footprint*.csv
check "report.py exits 0 without footprint CSVs" env MPLBACKEND=Agg "$PY" "$REPORT_PY" "$TMP/nofoot"
check "footprint section says not measured" grep -q '^\*\*Not measured\*\*' "$TMP/nofoot/REPORT.md"

if [ "$FIGURES" = 1 ]; then
    mapfile -t pngs < <(grep -o '([^()]*\.png)' "$REPORT" | tr -d '()' | sort -u)
    check "REPORT.md references PNGs" test "${#pngs[@]}" -gt 0
    for png in "${pngs[@]}"; do
        check "figure $png exists and is non-empty" test -s "$TMP/$png"
    done
    # Every plot report.py documents (its docstring's "Plots:" list) is referenced.
    mapfile -t documented < <("$PY" - "$REPORT_PY" <<'EOF'
import ast, re, sys
doc = ast.get_docstring(ast.parse(open(sys.argv[1], encoding="utf-8").read())) or ""
plots = doc.split("Plots:", 1)[1] if "Plots:" in doc else ""
for name in sorted(set(re.findall(r"[\w.-]+\.png", plots))):
    print(name)
EOF
    )
    for png in "${documented[@]}"; do
        check "documented plot $png referenced in REPORT.md" grep -q "($png)" "$REPORT"
    done
    echo "report_test: ${#pngs[@]} figures checked"
else
    echo "SKIP report_test figures: $PY has no matplotlib; tables checked only"
    check "REPORT.md says the plots were skipped" grep -q "Plots skipped" "$REPORT"
fi

echo "report_test: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
