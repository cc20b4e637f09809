#!/usr/bin/env bash
# bench.sh -- the benchmark command: build, measure, report.
#
#   ./bench.sh                 quick scale (about 50 minutes on 2 cores)
#   ./bench.sh --scale full    larger instruction-count samples and mem_frag repetitions
#   ./bench.sh --alloc tlsf,glibc,noop     any `rtbench run` option is passed through
#   ./bench.sh --no-rt         skip the stellwag study's second pass with SCHED_FIFO threads
#
# 1. Installs what is missing on Debian/Ubuntu (cmake gcc valgrind python3-matplotlib, and the
#    system peers jemalloc and mimalloc: libjemalloc-dev libmimalloc-dev; apt-get, sudo unless root;
#    nothing is installed when all are present). rtbench dlopen()s the peers at run time; one
#    that is missing is listed as unavailable and skipped (bench/peers.c). Optional:
#    libatomic-ops-dev (AO_malloc, linked statically for the stellwag experiment; without it
#    aomalloc is listed unavailable).
# 2. Builds Release with -O2 -DNDEBUG in build/bench (library and benchmark alike).
# 3. Runs `rtbench run all --rt` (table to stdout and results/rtbench.txt; CSVs to results/); every
#    experiment of `rtbench list`, the FMA 1998 study (fma*.csv) included; --rt repeats the
#    stellwag study with SCHED_FIFO threads and locked memory where permitted (root or
#    CAP_SYS_NICE; otherwise rtbench says so and skips that pass).
# 4. Runs bench/callgrind_check.sh: exact instructions per call over every call of churn.
# 5. Runs tools/footprint.sh --csv: .text/.data/.bss per allocator and control-block sizes for
#    Cortex-M4 at -Os (results/footprint*.csv). Needs arm-none-eabi-gcc (gcc-arm-none-eabi, installed
#    like the rest but optional: the benchmark goes on without it and the report says why the
#    footprint is missing); RV32 rows too when riscv64-unknown-elf-gcc is present.
# 6. Runs tools/target-bench.sh: the VaiOS study on emulated Cortex-M4 and RV32 (QEMU -icount, exact
#    instructions per call, interrupts-masked stretches), each program twice, byte-identical outputs
#    required (results/target/*.out, results/target_*.csv). Needs the cross compilers and QEMU
#    (gcc-arm-none-eabi gcc-riscv64-unknown-elf qemu-system-arm qemu-system-misc, installed like the
#    rest but optional: without them the report leaves the on-target section out and says why here).
# 7. Runs bench/report.py: results/REPORT.md and the PNG plots.
# Per-operation CSVs (--raw) and callgrind files go to results/raw/, which git ignores.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
BUILD=build/bench
RESULTS=results
RTBENCH=$BUILD/bench/rtbench

# --- 1. dependencies ---------------------------------------------------------------------------
have_matplotlib() {
    local py
    for py in python3 /usr/bin/python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import matplotlib' >/dev/null 2>&1; then
            echo "$py"
            return 0
        fi
    done
    return 1
}
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
have_matplotlib >/dev/null || missing+=(python3-matplotlib)
have_lib() { # a shared library by soname, as the dynamic loader would find it
    { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q "^[[:space:]]*$1 "
}
have_lib libjemalloc.so.2 || missing+=(libjemalloc-dev)
have_lib libmimalloc.so.2 || missing+=(libmimalloc-dev)
# Optional: the footprint (step 5) and AO_malloc (stellwag); a failed install does not stop the benchmark.
optional=()
command -v arm-none-eabi-gcc >/dev/null 2>&1 || optional+=(gcc-arm-none-eabi)
[ -e /usr/include/atomic_ops_malloc.h ] || optional+=(libatomic-ops-dev)
command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 || optional+=(gcc-riscv64-unknown-elf)
command -v qemu-system-arm >/dev/null 2>&1 || optional+=(qemu-system-arm)
command -v qemu-system-riscv32 >/dev/null 2>&1 || optional+=(qemu-system-misc)
if [ $((${#missing[@]} + ${#optional[@]})) -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO=sudo
        echo "bench.sh: installing ${missing[*]} ${optional[*]}" >&2
        $SUDO apt-get update || echo "bench.sh: apt-get update failed" >&2
        if [ ${#missing[@]} -gt 0 ]; then
            DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
        fi
        if [ ${#optional[@]} -gt 0 ]; then
            for pkg in "${optional[@]}"; do # one at a time: one that fails leaves the others
                DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "$pkg" ||
                    echo "bench.sh: could not install $pkg (gcc-arm-none-eabi: no footprint section;" \
                         "libatomic-ops-dev: aomalloc unavailable; cross compilers, qemu: no on-target study)" >&2
            done
        fi
    else
        echo "bench.sh: please install: ${missing[*]} ${optional[*]}" >&2
    fi
fi
PY=$(have_matplotlib || echo python3)

# --- 2. build ----------------------------------------------------------------------------------
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DRTALLOC_BUILD_TESTS=OFF -DRTALLOC_BUILD_BENCH=ON >/dev/null
cmake --build "$BUILD" -j"${JOBS:-2}" --target rtbench-all # rtbench, rtbench-hardening<N>

# Debian's jemalloc is dlopen()ed and needs room in the static TLS block (bench/peers.c; rtbench
# would otherwise re-execute itself with this, and valgrind, step 4, would not follow).
case "${GLIBC_TUNABLES:-}" in
*glibc.rtld.optional_static_tls*) ;;
*) export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=65536" ;;
esac

# --- 3. measure --------------------------------------------------------------------------------
mkdir -p "$RESULTS"
RT_FLAG=(--rt)
ARGS=()
for arg in "$@"; do
    if [ "$arg" = "--no-rt" ]; then RT_FLAG=(); else ARGS+=("$arg"); fi
done
rc=0
"$RTBENCH" run all --csv "$RESULTS" "${RT_FLAG[@]}" "${ARGS[@]}" | tee "$RESULTS/rtbench.txt" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "bench.sh: rtbench stopped (status $rc); writing the report of what was measured" >&2
fi

# --- 4. callgrind cross-check ------------------------------------------------------------------
if [ "$rc" -eq 0 ] && command -v valgrind >/dev/null 2>&1; then
    bench/callgrind_check.sh -r "$RTBENCH" -o "$RESULTS" | tee -a "$RESULTS/rtbench.txt"
fi

# --- 5. footprint (Cortex-M4, -Os) -------------------------------------------------------------
# A previous run's CSVs are removed first, so that the report never shows sizes of other sources.
rm -f "$RESULTS"/footprint.csv "$RESULTS"/footprint_alloc.csv "$RESULTS"/footprint_control.csv
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
    tools/footprint.sh --csv "$RESULTS" | tee -a "$RESULTS/rtbench.txt" ||
        echo "bench.sh: tools/footprint.sh failed; the report's footprint section says not measured" >&2
else
    echo "bench.sh: no arm-none-eabi-gcc (Debian: gcc-arm-none-eabi): the report's footprint section" \
         "says not measured" | tee -a "$RESULTS/rtbench.txt" >&2
fi

# --- 6. on target (Cortex-M4 and RV32 under QEMU) ------------------------------------------------
# A previous run's CSVs are removed first, so that the report never shows another source's figures.
rm -f "$RESULTS"/target_*.csv "$RESULTS"/target/*.out "$RESULTS"/target/runs.csv
if { command -v arm-none-eabi-gcc && command -v qemu-system-arm; } >/dev/null 2>&1 ||
   { command -v riscv64-unknown-elf-gcc && command -v qemu-system-riscv32; } >/dev/null 2>&1; then
    tools/target-bench.sh --out "$RESULTS" --build build/bench-target 2>&1 | tee -a "$RESULTS/rtbench.txt" ||
        echo "bench.sh: tools/target-bench.sh failed; see above (the report shows what it measured)" >&2
else
    echo "bench.sh: no cross compiler + QEMU pair (Debian: gcc-arm-none-eabi gcc-riscv64-unknown-elf" \
         "qemu-system-arm qemu-system-misc): the on-target study is skipped and the report leaves it out" |
        tee -a "$RESULTS/rtbench.txt" >&2
fi

# --- 7. report ---------------------------------------------------------------------------------
"$PY" bench/report.py "$RESULTS"
echo "bench.sh: see $RESULTS/REPORT.md" >&2
exit "$rc"
