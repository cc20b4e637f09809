#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/deps.sh -- installs the Debian/Ubuntu packages the project's two commands need.
#
#   tools/deps.sh test        what ./test.sh uses (every configuration); all required
#   tools/deps.sh bench       what ./bench.sh uses: required ones first, then the optional ones
#                             (gcc-arm-none-eabi, libatomic-ops-dev, the RISC-V compiler, QEMU)
#                             one at a time: a failure is reported, not fatal
#   tools/deps.sh m32-emulator   qemu-user, for test.sh's gcc-m32 where the kernel cannot run
#                             32-bit x86 programs (test.sh asks for it only then)
#
# Installs only what is missing (asks dpkg), with apt-get update once, --no-install-recommends,
# DEBIAN_FRONTEND=noninteractive and no stdin; sudo unless root. Prints what it installs. Without
# dpkg/apt-get it prints what may be missing and exits 0 (the build then says what it lacks).
# Exits non-zero when a required package could not be installed.
set -euo pipefail

# test: every package here is used by a test configuration (none "just in case"):
#   cmake make                      configure and build (make: CMake's default generator; cmake
#                                   only recommends it, and recommends are not installed)
#   gcc g++ clang                   the host compilers (C++: the adapters' tests, tests/unit/*.cpp)
#   libclang-rt-14-dev              clang 14's ASan/UBSan/TSan and libFuzzer runtimes (clang-asan,
#                                   clang-tsan; only recommended by clang-14)
#   gcc-multilib g++-multilib       gcc-m32 (and, for bench.sh, rtbench-m32 of the layout experiment)
#   valgrind                        inscount_test compares the ptrace counter with callgrind
#   python3 python3-matplotlib      the report test (bench/report.py and its figures)
#   pkg-config                      the package test's plain-compile consumer (cmake/PackageTest.cmake)
#   gcc-arm-none-eabi               cross (tools/cross-check.sh, footprint) and target (Cortex-M4F)
#   gcc-riscv64-unknown-elf         cross and target (RV32IMAC, RV64IMAC)
#   qemu-system-arm qemu-system-misc   target: mps2-an386 and riscv32 virt
#   libnewlib-arm-none-eabi         target: the firmware example with newlib-nano as its C library
#                                   (examples/firmware; rtalloc's TLSF heap as its malloc)
#   picolibc-arm-none-eabi          target: the same example with picolibc on Cortex-M4F ...
#   picolibc-riscv64-unknown-elf    ... and on RV32IMAC (the RISC-V compiler ships no C library)
#   sqlite3 lua5.4                  the real programs run under the drop-in malloc (dropin_programs)
#   libsqlite3-dev liblua5.4-dev    the hosting examples (examples/), built against the package
# The ports' own tests link no C library (-nostdlib: ports/common/port_libc.h brings the few
# functions they use); only the firmware example links newlib or picolibc.
TEST_PACKAGES=(cmake make gcc g++ clang libclang-rt-14-dev gcc-multilib g++-multilib valgrind python3
               python3-matplotlib pkg-config gcc-arm-none-eabi gcc-riscv64-unknown-elf qemu-system-arm
               qemu-system-misc libnewlib-arm-none-eabi picolibc-arm-none-eabi
               picolibc-riscv64-unknown-elf sqlite3 lua5.4 libsqlite3-dev liblua5.4-dev clang-format)
# test: clang-format is the ctest `format`'s (tools/format.sh --check; Debian 12: clang-format 14).
# bench: sqlite3 and lua5.4 are two of the three real programs whose traces the trace experiment
# records (python3, the third, is here already).
BENCH_PACKAGES=(cmake gcc make valgrind python3 python3-matplotlib libjemalloc-dev libmimalloc-dev
                sqlite3 lua5.4)
# optional for bench.sh: footprint section (arm), aomalloc (libatomic-ops-dev), on-target study,
# rtbench-m32 for the layout experiment (gcc-multilib)
BENCH_OPTIONAL=(gcc-arm-none-eabi libatomic-ops-dev gcc-riscv64-unknown-elf qemu-system-arm qemu-system-misc
                gcc-multilib)
M32_PACKAGES=(qemu-user)

usage() {
    sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

# is_installed PACKAGE
is_installed() {
    dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

SUDO=()
APT_UPDATED=
apt() {
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@" </dev/null
}

# install PACKAGE...: one apt-get install; apt-get update first, once per run
install() {
    echo "deps.sh: installing: $*"
    if [ -z "$APT_UPDATED" ]; then
        apt update || { echo "deps.sh: apt-get update failed" >&2; return 1; }
        APT_UPDATED=1
    fi
    apt install -y --no-install-recommends "$@"
}

# missing PACKAGE...: prints those not installed
missing() {
    local pkg
    for pkg in "$@"; do
        is_installed "$pkg" || echo "$pkg"
    done
}

main() {
    local mode=${1:-}
    local -a required optional=()
    case "$mode" in
        test) required=("${TEST_PACKAGES[@]}") ;;
        bench) required=("${BENCH_PACKAGES[@]}"); optional=("${BENCH_OPTIONAL[@]}") ;;
        m32-emulator) required=("${M32_PACKAGES[@]}") ;;
        -h | --help | help) usage; return 0 ;;
        *) usage >&2; return 2 ;;
    esac
    if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
        echo "deps.sh: no dpkg/apt-get here: make sure these are installed: ${required[*]} ${optional[*]}" >&2
        return 0
    fi
    local -a need need_opt
    mapfile -t need < <(missing "${required[@]}")
    mapfile -t need_opt < <(missing "${optional[@]}")
    if [ "${#need[@]}" -eq 0 ] && [ "${#need_opt[@]}" -eq 0 ]; then
        echo "deps.sh: $mode: all ${#required[@]} packages present${optional:+ (and the optional ones)}"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "deps.sh: missing ${need[*]} ${need_opt[*]}, and neither root nor sudo to install them" >&2
            return 1
        fi
        SUDO=(sudo)
    fi
    if [ "${#need[@]}" -gt 0 ]; then
        install "${need[@]}" || { echo "deps.sh: FAILED to install: ${need[*]}" >&2; return 1; }
    fi
    local pkg failed=()
    for pkg in "${need_opt[@]}"; do # one at a time: one that fails leaves the others
        install "$pkg" || failed+=("$pkg")
    done
    if [ "${#failed[@]}" -gt 0 ]; then
        echo "deps.sh: could not install the optional ${failed[*]} (gcc-arm-none-eabi: no footprint" \
             "section; libatomic-ops-dev: aomalloc unavailable; cross compilers, qemu: no on-target" \
             "study); going on" >&2
    fi
    return 0
}

main "$@"
