#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# callgrind_check.sh -- exact instructions per call over EVERY call of the churn workload (or
# others), by valgrind's callgrind, to check rtbench's ptrace sample against.
#
#   bench/callgrind_check.sh [-r RTBENCH] [-o RESULTS_DIR] [-w WORKLOAD[,WORKLOAD...]] [ALLOCATOR...]
#
# Runs `rtbench replay WORKLOAD --alloc A` (one untimed replay of the same seeded trace the
# benchmark times) under valgrind --tool=callgrind for each workload and allocator (default: every
# allocator of `rtbench list`), keeps the callgrind files under RESULTS_DIR/raw/ and writes
# RESULTS_DIR/callgrind.csv with calls, inclusive Ir and the exact mean per call of each
# allocator's malloc and free, beside the ptrace sample mean from RESULTS_DIR/inscount.csv.
# Defaults: RTBENCH build/bench/bench/rtbench, RESULTS_DIR results, WORKLOAD churn. One replay of
# churn or small takes about 5 s under callgrind (tlsf, x86-64).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
RTBENCH=build/bench/bench/rtbench
OUT=results
WORKLOAD=churn
SEED=42
while getopts "r:o:w:s:h" opt; do
    case $opt in
    r) RTBENCH=$OPTARG ;;
    o) OUT=$OPTARG ;;
    w) WORKLOAD=$OPTARG ;;
    s) SEED=$OPTARG ;;
    *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

command -v valgrind >/dev/null || { echo "callgrind_check: valgrind is not installed" >&2; exit 1; }
[ -x "$RTBENCH" ] || { echo "callgrind_check: no $RTBENCH (build first)" >&2; exit 1; }

if [ $# -gt 0 ]; then
    ALLOCS=("$@")
else
    mapfile -t ALLOCS < <("$RTBENCH" list | awk '/^allocators:/{a=1; next} /^(unavailable|experiments|multi-thread)/{a=0} a{print $1}')
fi

# Debian's jemalloc, dlopen()ed by rtbench, needs room in the static TLS block; rtbench would
# re-execute itself to get it, but valgrind does not follow that exec (bench/peers.c).
case "${GLIBC_TUNABLES:-}" in
*glibc.rtld.optional_static_tls*) ;;
*) export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=65536" ;;
esac

PY=python3
mkdir -p "$OUT/raw"
files=()
IFS=, read -r -a WORKLOADS <<<"$WORKLOAD"
for w in "${WORKLOADS[@]}"; do
    for a in "${ALLOCS[@]}"; do
        f="$OUT/raw/callgrind.$w.$a.out"
        echo "callgrind_check: $w on $a under callgrind ..." >&2
        valgrind --tool=callgrind --callgrind-out-file="$f" "$RTBENCH" replay "$w" --alloc "$a" \
            --seed "$SEED" >/dev/null 2>"$OUT/raw/callgrind.$w.$a.log"
        files+=("$f")
    done
done
"$PY" bench/callgrind_parse.py --csv "$OUT/callgrind.csv" --inscount "$OUT/inscount.csv" \
    --meta "$OUT/clock.csv" --valgrind "$(valgrind --version)" "${files[@]}"
