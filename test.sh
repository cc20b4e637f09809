#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test.sh -- the project's one test command: builds and tests rtalloc in every configuration.
#
#   ./test.sh            all configurations: 35 min 18 s on a 2-core machine, incremental after
#                        a reformat that recompiled everything (2026-11-29: gcc-release 205 s,
#                        clang-debug 418, gcc-asan 233, clang-asan 218, clang-tsan 250, gcc-m32
#                        204, gcc-align8 306, cross 51, target 232),
#                        plus the package installs of a fresh machine (CI, from empty build
#                        directories: 1,824 s on 2026-11-29 before the firmware and WCET checks)
#   ./test.sh quick      for developers: gcc Release, the unit and contract tiers without the
#                        long tests, and a two-target cross check: 25 s on the 2-core machine,
#                        incremental (quick 14 s, 33 tests; cross-quick 11 s)
#   ./test.sh NAME...    the named configurations, e.g. ./test.sh gcc-asan clang-asan
#
# Each configuration is a configure preset of CMakePresets.json (cmake --preset NAME; the build
# in build/test-NAME), built and run with ctest; log in build/test-logs/NAME.log. Every CMake
# one runs the whole ctest suite, including 'package', the install + consumer test. The tests
# come in tiers, one ctest label each (tests/CMakeLists.txt): unit, contract, stress, tools;
# `ctest -L unit` in a build directory runs one.
#   gcc-release   gcc, Release, 64-bit
#   clang-debug   clang, Debug, RTALLOC_DEBUG=2 (assertions and full integrity walks)
#   gcc-asan      gcc, RelWithDebInfo, AddressSanitizer + UndefinedBehaviorSanitizer (benchmark
#                 off: gcc-release and clang-debug build it; no test runs rtbench)
#   clang-asan    clang, RelWithDebInfo, AddressSanitizer + UndefinedBehaviorSanitizer, and the
#                 libFuzzer harness (RTALLOC_FUZZ=ON: ctest 'fuzz', a bounded run; tests/fuzz)
#   clang-tsan    clang, RelWithDebInfo, ThreadSanitizer (the lock-hook and driver tests)
#   gcc-m32       gcc, Release, -m32 (benchmark off; tests under qemu-i386 where the kernel
#                 cannot run 32-bit x86 programs)
#   gcc-align8    gcc, Release, 64-bit, RTALLOC_HEAP_ALIGN=8 (blocks 8-byte aligned, below
#                 max_align_t: doc/allocators.md, "RT_HEAP_ALIGN=8 on 64-bit"; benchmark off):
#                 195 s from an empty build directory on the 2-core machine shared with two other
#                 builds (2026-11-26), not in the total above
#   cross         tools/cross-check.sh: freestanding Cortex-M4F / RISC-V / host builds, footprint
#   target        the core, the port (ports/) and the contract, model and port tests built for
#                 Cortex-M4F and RV32IMAC (presets target-m4, target-rv32) and run under QEMU
#                 (mps2-an386, virt): each twice, output compared byte for byte; and the firmware
#                 example (examples/firmware: newlib-nano and picolibc allocating from rtalloc
#                 while a timer interrupt does), whose figures are printed after each port's ctest
#                 then tools/footprint.sh --check-readme and tools/wcet_readme.py --check: the
#                 flash and static-bound tables of doc/embedded.md must be those tools' output for
#                 this build;
#                 and TLSF's static worst case (tools/wcet.py, the core again at -Os and -O2)
#                 checked against every call of the WCET scenarios and the study (ctest wcet_m4,
#                 wcet_rv32; about 27 s of build and 25 s of ctest per port). 431 s in all from
#                 empty build directories on the shared 2-core machine (2026-11-29)
#   quick         (only with 'quick') preset quick: gcc Release without the benchmark, the
#                 randomised tests at their reduced seeds (RTALLOC_TEST_REDUCED); ctest runs the
#                 tiers unit and contract, without the tests labelled 'long'
#   cross-quick   (only with 'quick') tools/cross-check.sh for Cortex-M4F and RV32IMAC only
# Sanitizer and emulated builds run the heavy randomised tests with fewer seeds (tests/
# CMakeLists.txt, SLOW_ARGS); every ctest TIMEOUT is a guard against hangs, sized for a loaded
# 2-core machine under TSan.
#
# First installs what is missing (tools/deps.sh test: Debian/Ubuntu, apt-get, sudo unless root).
# Runs every requested configuration even when one fails, prints a summary line per
# configuration, and exits non-zero if any failed. Environment: JOBS (default 2) sets build and
# ctest parallelism.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
JOBS=${JOBS:-2}

ALL_CONFIGS=(gcc-release clang-debug gcc-asan clang-asan clang-tsan gcc-m32 gcc-align8 cross target)
QUICK_CONFIGS=(quick cross-quick)

usage() {
    sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

# ---- arguments -----------------------------------------------------------------------------
CONFIGS=()
if [ "$#" -eq 0 ]; then
    CONFIGS=("${ALL_CONFIGS[@]}")
fi
for arg in "$@"; do
    case "$arg" in
        quick) CONFIGS+=("${QUICK_CONFIGS[@]}") ;;
        all) CONFIGS+=("${ALL_CONFIGS[@]}") ;;
        -h | --help | help) usage; exit 0 ;;
        *)
            if [[ " ${ALL_CONFIGS[*]} " == *" $arg "* ]]; then
                CONFIGS+=("$arg")
            else
                echo "test.sh: unknown configuration '$arg'" >&2
                usage >&2
                exit 2
            fi
            ;;
    esac
done

banner() {
    echo
    echo "================================================================================"
    echo "== $*"
    echo "================================================================================"
}

# ---- sanitizer runtime probe ---------------------------------------------------------------
# Old ASan runtimes (GCC 12, Clang 14) crash at start-up on kernels with a high
# vm.mmap_rnd_bits, and LeakSanitizer cannot run where ptrace is forbidden. A tiny probe finds
# out, before the tests do, and picks the mildest fix: run without ASLR (setarch -R), then
# without leak detection. RUNNER and ASAN_OPTIONS are set for the ctest that follows.
RUNNER=()
probe_sanitizer() {
    local cc=$1 dir=$2
    local probe="$dir/sanitizer-probe"
    mkdir -p "$dir"
    printf '%s\n' '#include <stdlib.h>' \
        'int main(void) { volatile char *p = malloc(16); p[0] = 1; free((void *)p); return 0; }' \
        >"$probe.c"
    RUNNER=()
    if ! "$cc" -fsanitize=address,undefined -fno-omit-frame-pointer -g "$probe.c" -o "$probe"; then
        echo "test.sh: $cc cannot build with -fsanitize=address,undefined" >&2
        return 1
    fi
    if "$probe" >/dev/null 2>&1; then
        return 0
    fi
    local arch
    arch=$(uname -m)
    if command -v setarch >/dev/null 2>&1 && setarch "$arch" -R "$probe" >/dev/null 2>&1; then
        echo "test.sh: ASan needs ASLR off on this kernel: running the tests under setarch -R"
        RUNNER=(setarch "$arch" -R)
        return 0
    fi
    if ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" "$probe" >/dev/null 2>&1; then
        echo "test.sh: LeakSanitizer cannot run here: leak detection off"
        ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
        return 0
    fi
    if command -v setarch >/dev/null 2>&1 &&
        ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" setarch "$arch" -R "$probe" >/dev/null 2>&1; then
        echo "test.sh: ASan needs ASLR off and LeakSanitizer cannot run here"
        RUNNER=(setarch "$arch" -R)
        ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
        return 0
    fi
    echo "test.sh: a program built with $cc -fsanitize=address,undefined does not run here:" >&2
    "$probe" || true
    return 1
}

# ---- can this machine run 32-bit x86 programs? -----------------------------------------------
# Some kernels and sandboxes (no IA32 emulation, gVisor) cannot exec them; there the 32-bit tests
# run under QEMU user mode (qemu-i386, package qemu-user) as the CMake test emulator.
M32_EMULATOR=
probe_m32() {
    local dir=$1
    local probe="$dir/m32-probe"
    mkdir -p "$dir"
    printf '%s\n' '#include <stdio.h>' 'int main(void) { return sizeof(void *) == 4 ? 0 : 1; }' \
        >"$probe.c"
    if ! gcc -m32 "$probe.c" -o "$probe"; then
        echo "test.sh: gcc -m32 cannot build a program (is gcc-multilib installed?)" >&2
        return 1
    fi
    M32_EMULATOR=
    if "$probe" 2>/dev/null; then
        return 0
    fi
    echo "test.sh: this machine cannot run 32-bit x86 programs: the tests run under qemu-i386"
    if ! command -v qemu-i386 >/dev/null 2>&1; then
        tools/deps.sh m32-emulator || return 1
    fi
    if ! qemu-i386 "$probe"; then
        echo "test.sh: qemu-i386 cannot run the 32-bit probe either" >&2
        return 1
    fi
    M32_EMULATOR=$(command -v qemu-i386)
}

# ---- one CMake configuration: configure (CMakePresets.json), build, ctest ------------------------
# cmake_config PRESET [ctest arguments...]: EXTRA_CMAKE (array) adds -D options to the preset's.
EXTRA_CMAKE=()
cmake_config() {
    local preset=$1
    shift
    local dir="build/test-$preset"
    local ctest_args=(--output-on-failure --no-tests=error -j "$JOBS" "$@")

    echo "-- configure: cmake --preset $preset ${EXTRA_CMAKE[*]}"
    cmake --preset "$preset" --no-warn-unused-cli "${EXTRA_CMAKE[@]}" || return 1
    echo "-- build"
    cmake --build "$dir" -j "$JOBS" || return 1
    echo "-- test: ctest ${ctest_args[*]}"
    (cd "$dir" && "${RUNNER[@]}" ctest "${ctest_args[@]}") || return 1
}

# The firmware example's figures from a target build's last ctest run (a passing test's output
# shows only with ctest -V): per program, its interrupts and how many landed inside main's
# allocator calls, or how the build without the lock (or with a trap) failed.
firmware_figures() {
    local log="build/test-$1/Testing/Temporary/LastTest.log"
    [ -f "$log" ] || return 0
    echo "-- the firmware example (examples/firmware; ctest -R firmware -V shows its whole output):"
    awk '/^[0-9]+\/[0-9]+ Testing: / { t = $3 }
         t ~ /^firmware_/ && /^firmware: (interrupts|FAIL|FAULT)/ { printf "   %-30s %s\n", t, $0 }' "$log"
}

run_config() {
    local name=$1
    RUNNER=()
    EXTRA_CMAKE=()
    case "$name" in
        gcc-release | clang-debug | clang-tsan | gcc-align8) cmake_config "$name" ;;
        quick) cmake_config quick -L '^(unit|contract)$' -LE '^long$' ;;
        gcc-asan | clang-asan)
            probe_sanitizer "${name%-asan}" "build/test-$name" || return 1
            cmake_config "$name"
            ;;
        gcc-m32)
            probe_m32 "build/test-$name" || return 1
            EXTRA_CMAKE=(-DCMAKE_CROSSCOMPILING_EMULATOR="$M32_EMULATOR")
            cmake_config "$name"
            ;;
        cross) CROSS_CHECK_OUT=build/test-cross tools/cross-check.sh ;;
        cross-quick) CROSS_CHECK_OUT=build/test-cross CROSS_CHECK_ONLY="cortex-m4 rv32imac" tools/cross-check.sh ;;
        target) # both ports, even when the first fails; ctest runs the programs under QEMU
            local status=0
            local preset
            for preset in target-m4 target-rv32; do
                rm -f "build/test-$preset/Testing/Temporary/LastTest.log" # no stale figures
                cmake_config "$preset" || status=1
                firmware_figures "$preset"
            done
            # doc/embedded.md's flash table is tools/footprint.sh's output for this build, and its
            # static bounds (and ports/README.md's measured-against-bound table) the WCET tools'
            tools/footprint.sh --check-readme || status=1
            python3 tools/wcet_readme.py --check || status=1
            return "$status"
            ;;
        *)
            echo "test.sh: no such configuration: $name" >&2
            return 1
            ;;
    esac
}

# ---- main ----------------------------------------------------------------------------------
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CTEST_OUTPUT_ON_FAILURE=1

START=$SECONDS
banner "rtalloc test.sh: ${CONFIGS[*]}"
echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') cores, JOBS=$JOBS"
tools/deps.sh test || {
    echo "test.sh: FAIL: could not install the dependencies" >&2
    exit 1
}

mkdir -p build/test-logs
RESULTS=()
FAILURES=0
for name in "${CONFIGS[@]}"; do
    banner "configuration $name"
    t0=$SECONDS
    log="build/test-logs/$name.log"
    # The subshell keeps each configuration's state (RUNNER, ASAN_OPTIONS) to itself; its
    # status is tee's input's, thanks to PIPESTATUS.
    set +e
    (run_config "$name") 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    secs=$((SECONDS - t0))
    if [ "$status" -eq 0 ]; then
        RESULTS+=("$(printf 'PASS  %-12s %4ds' "$name" "$secs")")
    else
        RESULTS+=("$(printf 'FAIL  %-12s %4ds  (exit %d; log: %s)' "$name" "$secs" "$status" "$log")")
        FAILURES=$((FAILURES + 1))
    fi
done

banner "summary ($((SECONDS - START))s)"
printf '%s\n' "${RESULTS[@]}"
if [ "$FAILURES" -ne 0 ]; then
    echo "test.sh: $FAILURES of ${#CONFIGS[@]} configurations FAILED"
    exit 1
fi
echo "test.sh: all ${#CONFIGS[@]} configurations passed"
