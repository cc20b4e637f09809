#!/usr/bin/env bash
# test.sh -- the project's one test command: builds and tests rtalloc in every configuration.
#
#   ./test.sh            all configurations (about 5 minutes on 2 cores, plus installs)
#   ./test.sh quick      gcc-release and cross-check only (for developers)
#   ./test.sh NAME...    the named configurations, e.g. ./test.sh gcc-asan clang-asan
#
# Configurations (each builds in build/test-<name>, log in build/test-logs/<name>.log; every
# CMake one runs the whole ctest suite, including 'package', the install + consumer test):
#   gcc-release   gcc, Release, 64-bit
#   clang-debug   clang, Debug, RTALLOC_DEBUG=2 (assertions and full integrity walks)
#   gcc-asan      gcc, RelWithDebInfo, AddressSanitizer + UndefinedBehaviorSanitizer
#   clang-asan    clang, RelWithDebInfo, AddressSanitizer + UndefinedBehaviorSanitizer, and the
#                 libFuzzer harness (RTALLOC_FUZZ=ON: ctest 'fuzz', a bounded run; tests/fuzz)
#   clang-tsan    clang, RelWithDebInfo, ThreadSanitizer (the lock-hook and driver tests)
#   gcc-m32       gcc, Release, -m32 (benchmark off; tests under qemu-i386 where the kernel
#                 cannot run 32-bit x86 programs)
#   cross         tools/cross-check.sh: freestanding Cortex-M4F / RISC-V / host builds, footprint
#   target        the core, the port (ports/) and the contract, model and port tests built for
#                 Cortex-M4F and RV32IMAC (build/test-target-m4, build/test-target-rv32) and run
#                 under QEMU (mps2-an386, virt): each twice, output compared byte for byte
#
# First installs what is missing (Debian/Ubuntu, with apt-get; sudo unless root). Runs every
# requested configuration even when one fails, prints a summary line per configuration, and
# exits non-zero if any failed. Environment: JOBS (default 2) sets build and ctest parallelism.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$(pwd)
JOBS=${JOBS:-2}

ALL_CONFIGS=(gcc-release clang-debug gcc-asan clang-asan clang-tsan gcc-m32 cross target)
QUICK_CONFIGS=(gcc-release cross)

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

# ---- dependencies --------------------------------------------------------------------------
# libclang-rt-14-dev: clang 14's sanitizer and libFuzzer runtimes (only recommended by clang-14)
PACKAGES=(cmake gcc g++ clang libclang-rt-14-dev gcc-multilib g++-multilib valgrind gcc-arm-none-eabi libnewlib-arm-none-eabi
          gcc-riscv64-unknown-elf python3 python3-matplotlib pkg-config qemu-system-arm
          qemu-system-misc)

# Prints the packages that are missing. With dpkg, asks it; elsewhere checks the tools.
missing_packages() {
    local pkg
    if command -v dpkg-query >/dev/null 2>&1; then
        for pkg in "${PACKAGES[@]}"; do
            if ! dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
                echo "$pkg"
            fi
        done
        return 0
    fi
    local tool
    for tool in cmake ctest gcc g++ clang valgrind arm-none-eabi-gcc riscv64-unknown-elf-gcc python3 \
        qemu-system-arm qemu-system-riscv32; do
        command -v "$tool" >/dev/null 2>&1 || echo "$tool"
    done
}

# apt_install PACKAGE...: apt-get update + install, with sudo unless root.
apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: missing: $* -- install them (no apt-get here)" >&2
        return 1
    fi
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "test.sh: missing: $*, and neither root nor sudo to install them" >&2
            return 1
        fi
        sudo=(sudo)
    fi
    banner "installing: $*"
    if [ -z "${APT_UPDATED:-}" ]; then
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update </dev/null || return 1
        APT_UPDATED=1
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "$@" </dev/null
}

install_dependencies() {
    local -a missing
    mapfile -t missing < <(missing_packages)
    if [ "${#missing[@]}" -eq 0 ]; then
        echo "test.sh: all tools present"
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: missing: ${missing[*]} -- install them (no apt-get here); continuing" >&2
        return 0
    fi
    apt_install "${missing[@]}"
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
        apt_install qemu-user || return 1
    fi
    if ! qemu-i386 "$probe"; then
        echo "test.sh: qemu-i386 cannot run the 32-bit probe either" >&2
        return 1
    fi
    M32_EMULATOR=$(command -v qemu-i386)
}

# ---- one CMake configuration: configure, build, ctest -------------------------------------
# cmake_config NAME C_COMPILER CXX_COMPILER [cmake -D options...]
cmake_config() {
    local name=$1 cc=$2 cxx=$3
    shift 3
    local dir="build/test-$name"
    local ctest_args=(--output-on-failure --no-tests=error -j "$JOBS")

    echo "-- configure: cmake -S . -B $dir -DCMAKE_C_COMPILER=$cc $*"
    cmake --no-warn-unused-cli -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
        -DRTALLOC_WERROR=ON "$@" || return 1
    echo "-- build"
    cmake --build "$dir" -j "$JOBS" || return 1
    echo "-- test: ctest ${ctest_args[*]}"
    (cd "$dir" && "${RUNNER[@]}" ctest "${ctest_args[@]}") || return 1
}

run_config() {
    local name=$1
    RUNNER=()
    case "$name" in
        gcc-release)
            cmake_config "$name" gcc g++ -DCMAKE_BUILD_TYPE=Release -DRTALLOC_SANITIZE= \
                -DRTALLOC_DEBUG= -DCMAKE_C_FLAGS= -DRTALLOC_BUILD_BENCH=ON
            ;;
        clang-debug)
            cmake_config "$name" clang clang++ -DCMAKE_BUILD_TYPE=Debug -DRTALLOC_SANITIZE= \
                -DRTALLOC_DEBUG=2 -DCMAKE_C_FLAGS= -DRTALLOC_BUILD_BENCH=ON
            ;;
        gcc-asan | clang-asan)
            local cc=${name%-asan} cxx
            if [ "$cc" = gcc ]; then cxx=g++; else cxx=clang++; fi
            local fuzz=OFF
            if [ "$cc" = clang ]; then fuzz=ON; fi
            probe_sanitizer "$cc" "build/test-$name" || return 1
            cmake_config "$name" "$cc" "$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
                -DRTALLOC_SANITIZE=address,undefined -DRTALLOC_DEBUG= -DCMAKE_C_FLAGS= \
                -DRTALLOC_BUILD_BENCH=ON -DRTALLOC_FUZZ="$fuzz"
            ;;
        clang-tsan)
            cmake_config "$name" clang clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
                -DRTALLOC_SANITIZE=thread -DRTALLOC_DEBUG= -DCMAKE_C_FLAGS= -DRTALLOC_BUILD_BENCH=OFF
            ;;
        gcc-m32)
            probe_m32 "build/test-$name" || return 1
            cmake_config "$name" gcc g++ -DCMAKE_CROSSCOMPILING_EMULATOR="$M32_EMULATOR" -DCMAKE_BUILD_TYPE=Release -DRTALLOC_SANITIZE= \
                -DRTALLOC_DEBUG= -DCMAKE_C_FLAGS=-m32 -DCMAKE_CXX_FLAGS=-m32 \
                -DRTALLOC_BUILD_BENCH=OFF
            ;;
        cross)
            CROSS_CHECK_OUT=build/test-cross tools/cross-check.sh
            ;;
        target)
            # both ports, even when the first fails; ctest runs the programs under QEMU
            local status=0
            cmake_config target-m4 arm-none-eabi-gcc arm-none-eabi-g++ -DCMAKE_BUILD_TYPE=Release \
                -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-cortex-m4.cmake" -DRTALLOC_DEBUG= || status=1
            cmake_config target-rv32 riscv64-unknown-elf-gcc riscv64-unknown-elf-g++ \
                -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-rv32.cmake" \
                -DRTALLOC_DEBUG= || status=1
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
install_dependencies || {
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
