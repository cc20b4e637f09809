#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench.sh -- the benchmark command: build, measure, report, into results/latest/.
#
#   ./bench.sh                  quick scale: rtbench's quick subset, tlsf's and tlsfq's exact churn
#                               and small means (callgrind), footprint, the on-target study on Cortex-M4 alone
#                               (about 5 min on 2 cores)
#   ./bench.sh --full           everything the benchmark measures: every experiment at rtbench's
#                               standard scale (--scale standard), the callgrind cross-check (every
#                               allocator, churn and small), the on-target study; about 55 minutes
#                               on 2 cores
#   ./bench.sh --scale paper    the same steps with the papers' own run lengths (several hours)
#   ./bench.sh --no-deps        install nothing (skip tools/deps.sh bench)
#   ./bench.sh --no-rt          leave out the stellwag study's SCHED_FIFO pass (rtbench --rt)
#   ./bench.sh --alloc tlsf,glibc,noop     any other argument is passed to `rtbench run all`
#
# Steps (each printed as `bench.sh: [k/n] step`): dependencies (tools/deps.sh bench), build
# (Release, -O2 -DNDEBUG, build/bench), rtbench, callgrind (quick: tlsf and tlsfq), footprint (when
# arm-none-eabi-gcc is there), on-target study (when a cross compiler + QEMU pair is there; quick:
# Cortex-M4 alone),
# report (bench/report.py: REPORT.md and PNGs).
#
# A run writes into a directory of its own beside the last one (results/.run-PID, git-ignored) and,
# when it has finished, takes results/latest/'s place with it: a run never shows an earlier run's
# figures, an interrupted run (or one whose build failed) never deletes the last one, and no
# tracked file changes. results/REPORT.md and results/*.png are a committed snapshot that a run never touches
# (its header says how to refresh it). The report says "complete" only when every step ran and
# succeeded; otherwise "incomplete: ..." with the steps that failed or were skipped.
#
# One Ctrl-C (SIGINT, or SIGTERM) stops the whole run within about a second: the running step's
# process group is interrupted (rtbench records the experiment as interrupted), killed if still
# there, and the report of what finished, marked partial, goes to results/partial/ (replacing an
# earlier partial one); results/latest/ is left as it was, and no temporary file stays behind.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")" || exit 2
BUILD=build/bench
FINAL=results/latest
OUT=results/.run-$$
RTBENCH=$BUILD/bench/rtbench
PY=python3
pick_python() { # after the deps step: the python3 that has matplotlib, if any
    PY=python3
    if /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1; then
        PY=/usr/bin/python3
    elif ! python3 -c 'import matplotlib' >/dev/null 2>&1; then
        echo "bench.sh: no python3 with matplotlib: the report is written without plots" >&2
    fi
}

scale=quick
rt=(--rt)
deps=1
args=()
while [ $# -gt 0 ]; do
    case $1 in
    --full) scale=standard ;;
    --scale) scale=${2:-}; shift ;;
    --scale=*) scale=${1#--scale=} ;;
    --no-rt) rt=() ;;
    --no-deps) deps=0 ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$1") ;;
    esac
    shift
done
case $scale in
quick | standard | paper) ;;
full) scale=paper ;; # rtbench's name for the papers' scale
*) echo "bench.sh: --scale quick|standard|paper (got '$scale')" >&2; exit 2 ;;
esac

have() { command -v "$1" >/dev/null 2>&1; }
steps=(deps build rtbench callgrind)
steps+=(footprint)
steps+=(target)
steps+=(report)
n=${#steps[@]}

# --- the run's record and directory ------------------------------------------------------------
rm -rf "$OUT"
mkdir -p "$OUT"
finish() { # finish DIR: the run's directory takes DIR's place (no temporary file left in it)
    find "$OUT" -name '*.tmp' -delete 2>/dev/null
    rm -rf "$1.old"
    [ -e "$1" ] && mv "$1" "$1.old"
    mv "$OUT" "$1" && rm -rf "$1.old"
}
LOG=$OUT/rtbench.txt
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
command_line="./bench.sh --scale $scale"
[ ${#rt[@]} -eq 0 ] && command_line+=" --no-rt"
[ "$deps" = 0 ] && command_line+=" --no-deps"
[ ${#args[@]} -gt 0 ] && command_line+=" ${args[*]}"
write_run() { # write_run STATUS DONE: results/latest/run.csv, read by the report's header
    {
        echo "key,value"
        echo "command,\"$command_line\""
        echo "commit,\"$commit\""
        echo "started,$started"
        echo "finished,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "scale,$scale"
        echo "status,$1"
        echo "steps_planned,\"${steps[*]}\""
        echo "steps_done,\"$2\""
    } >"$OUT/run.csv"
}
done_steps=()
missing=() # steps that failed or were skipped: the report then says incomplete
write_run running ""

# --- running a step in its own process group, and Ctrl-C ------------------------------------------
set -m # background jobs get a process group of their own: one kill reaches a step and its children
child=
k=0
step() { # step NAME COMMAND...: runs it in the background, output to the terminal and the log
    local name=$1
    shift
    k=$((k + 1))
    echo "bench.sh: [$k/$n] $name" >&2
    { "$@" 2>&1 | tee -a "$LOG"; exit "${PIPESTATUS[0]}"; } &
    child=$!
    wait "$child"
    local rc=$?
    child=
    [ "$rc" -eq 0 ] && done_steps+=("$name")
    return "$rc"
}
report() { # report STATUS [report.py options]
    write_run "$1" "${done_steps[*]}"
    echo "bench.sh: [$n/$n] report" >&2
    "$PY" bench/report.py "${@:2}" "$OUT" || echo "bench.sh: the report failed" >&2
    echo "bench.sh: report written${1:+ ($1)}" >&2
}
stop() { # the INT/TERM trap: stop the running step, report what finished, exit
    trap '' INT TERM
    echo >&2
    echo "bench.sh: interrupted in step [$k/$n] ${steps[$((k - 1))]:-}; stopping it" >&2
    if [ -n "$child" ]; then
        kill -INT -- "-$child" 2>/dev/null # rtbench marks the running experiment interrupted
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 -- "-$child" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL -- "-$child" 2>/dev/null
        wait "$child" 2>/dev/null
    fi
    set +m
    local where=${steps[$((k - 1))]:-}
    k=$((n - 1))
    # Without plots: the tables take half a second, the plots several (python3 bench/report.py
    # results/latest draws them afterwards), and the stop must come within two.
    report "partial: interrupted in step $where" --no-plots
    finish results/partial
    echo "bench.sh: results/latest/ is unchanged; this run's partial report is results/partial/REPORT.md" >&2
    echo "bench.sh: plots left out; draw them with: $PY bench/report.py results/partial" >&2
    exit 130
}
trap stop INT TERM

# --- the steps -------------------------------------------------------------------------------------
# In the foreground, not in a group of its own: sudo may ask for a password on the terminal, which a
# background process group could not read. A Ctrl-C reaches apt-get and this script alike.
k=$((k + 1))
echo "bench.sh: [$k/$n] deps" >&2
if [ "$deps" = 0 ]; then
    echo "bench.sh: --no-deps: nothing installed" >&2
    done_steps+=(deps)
elif tools/deps.sh bench; then
    done_steps+=(deps)
else
    echo "bench.sh: tools/deps.sh bench failed; going on with what is there" >&2
    missing+=("deps failed")
fi
pick_python

step build bash -c "cmake -S . -B '$BUILD' -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE='-O2 -DNDEBUG' \
    -DRTALLOC_BUILD_TESTS=OFF -DRTALLOC_BUILD_BENCH=ON >/dev/null && cmake --build '$BUILD' -j${JOBS:-2} --target rtbench-all" ||
    { echo "bench.sh: the build failed" >&2; report "partial: the build failed"; finish results/partial
      echo "bench.sh: results/latest/ is unchanged; see results/partial/REPORT.md" >&2; exit 1; }

# Debian's jemalloc is dlopen()ed and needs room in the static TLS block (bench/peers.c; rtbench
# would otherwise re-execute itself with this, and valgrind would not follow).
case "${GLIBC_TUNABLES:-}" in
*glibc.rtld.optional_static_tls*) ;;
*) export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=65536" ;;
esac

step rtbench "$RTBENCH" run all --scale "$scale" --csv "$OUT" "${rt[@]}" "${args[@]}" || {
    echo "bench.sh: rtbench stopped (status $?); the report shows what it measured" >&2
    missing+=("rtbench stopped")
}

# Exact means over every call (the report's instruction targets): quick, tlsf and tlsfq (TLSF behind quick lists)
# on churn and small (about 25 s); otherwise every allocator on both.
cg=(tlsf tlsfq); [ "$scale" != quick ] && cg=()
if have valgrind; then
    step callgrind bench/callgrind_check.sh -r "$RTBENCH" -o "$OUT" -w churn,small "${cg[@]}" ||
        { echo "bench.sh: the callgrind cross-check failed" >&2; missing+=("callgrind failed"); }
else
    k=$((k + 1)); echo "bench.sh: [$k/$n] callgrind: skipped, no valgrind" | tee -a "$LOG" >&2
    missing+=("callgrind skipped")
fi

if have arm-none-eabi-gcc; then
    fp=(); [ "$scale" = quick ] && fp=(--quick)
    step footprint tools/footprint.sh "${fp[@]}" --csv "$OUT" ||
        { echo "bench.sh: tools/footprint.sh failed; the report's footprint section says not measured" >&2
          missing+=("footprint failed"); }
else
    k=$((k + 1))
    echo "bench.sh: [$k/$n] footprint: skipped, no arm-none-eabi-gcc (Debian: gcc-arm-none-eabi)" | tee -a "$LOG" >&2
    missing+=("footprint skipped")
fi

tports="cortex-m4 rv32"
[ "$scale" = quick ] && tports=cortex-m4 # the quick scale: one port (RV32 at --full)
if { have arm-none-eabi-gcc && have qemu-system-arm; } || { [ "$scale" != quick ] && have riscv64-unknown-elf-gcc && have qemu-system-riscv32; }; then
    step target tools/target-bench.sh --out "$OUT" --build build/bench-target --ports "$tports" ||
        { echo "bench.sh: tools/target-bench.sh failed; the report shows what it measured" >&2
          missing+=("target failed"); }
else
    k=$((k + 1))
    echo "bench.sh: [$k/$n] target: skipped, no cross compiler + QEMU pair (gcc-arm-none-eabi" \
         "gcc-riscv64-unknown-elf qemu-system-arm qemu-system-misc)" | tee -a "$LOG" >&2
    missing+=("target skipped")
fi

trap '' INT TERM # the report is fast; let it finish
set +m
status=complete
if [ ${#missing[@]} -gt 0 ]; then
    status="incomplete: $(IFS=,; echo "${missing[*]}" | sed 's/,/, /g')"
fi
report "$status"
finish "$FINAL"
echo "bench.sh: see $FINAL/REPORT.md ($status)" >&2
[ "$status" = complete ]
