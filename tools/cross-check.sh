#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/cross-check.sh -- proves the core is freestanding C11 that builds warning-free for the
# embedded targets, and prints its Cortex-M4 footprint.
#
# Usage (from anywhere; no arguments):  tools/cross-check.sh
#   CROSS_CHECK_ONLY="cortex-m4 rv32imac" tools/cross-check.sh   only the named targets (./test.sh quick)
#
# 1. Every core source (src/base, src/heap, src/buddy, src/waitfree, src/fma, src/registry) is compiled with -std=c11 -ffreestanding
#    -Os and the project's warning set (-Werror) for: Cortex-M4F (arm-none-eabi-gcc), RV32IMAC
#    and RV64IMAC (riscv64-unknown-elf-gcc), host gcc and clang at -m32 and -m64, and Cortex-M4F
#    again with RT_DEBUG=2 (the debug paths must stay freestanding too).
# 2. Each target's objects may leave undefined only symbols defined by another core object, the
#    four memory functions a freestanding compiler may call by itself (memcpy, memset, memmove,
#    memcmp) and compiler-runtime helpers (libgcc: __aeabi_*, __udivdi3, __clzsi2, ...).
# 3. The core's headers and sources (src/, include/rtalloc/ except hosted/) may include only
#    the C11 freestanding headers (<stddef.h>, <stdint.h>, <stdbool.h>, <limits.h>, <stdalign.h>,
#    <stdatomic.h>, <float.h>, <stdarg.h>, <iso646.h>, <stdnoreturn.h>).
# 4. Prints .text/.data/.bss of each Cortex-M4 object at -Os (arm-none-eabi-size).
# 5. The lock headers (include/rtalloc/port/: target code, outside the core, header-only) compile
#    with the same flags for their targets -- cortex_m.h for Cortex-M4F, M0 (no BASEPRI) and M33,
#    riscv.h for RV32IMAC and RV64IMAC -- and their functions have the types rt_lock_fn and
#    rt_unlock_fn.
#
# Objects go to $CROSS_CHECK_OUT/<target>/ (default build/cross-check). Exits non-zero on any
# failure, after reporting all of them.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${CROSS_CHECK_OUT:-build/cross-check}
FAILED=0

fail() {
    echo "cross-check: FAIL: $*" >&2
    FAILED=1
}

shopt -s nullglob
SOURCES=(src/base/*.c src/heap/*.c src/buddy/*.c src/waitfree/*.c src/fma/*.c src/mcheap/*.c src/registry/*.c)
shopt -u nullglob
if [ "${#SOURCES[@]}" -eq 0 ]; then
    echo "cross-check: no core sources found under src/" >&2
    exit 1
fi

CFLAGS=(-std=c11 -ffreestanding -Os -Wall -Wextra -Werror -pedantic -Wconversion
        -Wsign-conversion -Wcast-align -Wundef -Wstrict-prototypes -Wmissing-prototypes -Wshadow
        -Iinclude -Isrc -ffunction-sections -fdata-sections)

# name | compiler | nm | target flags
TARGETS=(
    "cortex-m4|arm-none-eabi-gcc|arm-none-eabi-nm|-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
    "cortex-m4-debug|arm-none-eabi-gcc|arm-none-eabi-nm|-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -DRT_DEBUG=2"
    "rv32imac|riscv64-unknown-elf-gcc|riscv64-unknown-elf-nm|-march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany"
    "rv64imac|riscv64-unknown-elf-gcc|riscv64-unknown-elf-nm|-march=rv64imac_zicsr -mabi=lp64 -mcmodel=medany"
    "gcc-m32|gcc|nm|-m32"
    "gcc-m64|gcc|nm|-m64"
    "clang-m32|clang|nm|-m32"
    "clang-m64|clang|nm|-m64"
)
# CROSS_CHECK_ONLY="name ...": only those targets (./test.sh quick: cortex-m4 rv32imac)
if [ -n "${CROSS_CHECK_ONLY:-}" ]; then
    _only=()
    for spec in "${TARGETS[@]}"; do
        if [[ " $CROSS_CHECK_ONLY " == *" ${spec%%|*} "* ]]; then
            _only+=("$spec")
        fi
    done
    TARGETS=("${_only[@]}")
fi

# Symbols an object may import from outside the core.
ALLOWED_EXTERNAL='^(mem(cpy|set|move|cmp)|__aeabi_[a-z0-9_]+|__(u?(div|mod|mul)|udivmod|divmod|ash[lr]|lshr|neg|cmp|ucmp)[sdt]i[234]|__(clz|ctz|ffs|popcount|parity|bswap)[sdt]i2|__riscv_(save|restore)_[0-9]+|_GLOBAL_OFFSET_TABLE_|__x86\.get_pc_thunk\.[a-z]+)$'

# ---- 1 and 2: compile for every target, check the undefined symbols ------------------------
for spec in "${TARGETS[@]}"; do
    IFS='|' read -r name cc nm tflags <<<"$spec"
    if ! command -v "$cc" >/dev/null 2>&1; then
        fail "$name: compiler '$cc' not found"
        continue
    fi
    dir="$OUT/$name"
    rm -rf "$dir"
    mkdir -p "$dir"
    read -r -a tflag_array <<<"$tflags"
    objects=()
    ok=1
    for src in "${SOURCES[@]}"; do
        obj="$dir/$(basename "${src%.c}").o"
        if ! "$cc" "${tflag_array[@]}" "${CFLAGS[@]}" -c "$src" -o "$obj"; then
            fail "$name: $src does not compile"
            ok=0
            continue
        fi
        objects+=("$obj")
    done
    if [ "$ok" -eq 1 ]; then
        defined=$("$nm" -g --defined-only "${objects[@]}" | awk 'NF >= 3 { print $3 }' | sort -u)
        undefined=$("$nm" -u "${objects[@]}" | awk 'NF >= 2 && $1 == "U" { print $2 }' | sort -u)
        external=$(comm -23 <(printf '%s\n' "$undefined") <(printf '%s\n' "$defined") \
                   | grep -Ev "$ALLOWED_EXTERNAL" | grep -v '^$' || true)
        if [ -n "$external" ]; then
            fail "$name: the core imports symbols a freestanding target may lack:" \
                 $(printf '%s ' $external)
            ok=0
        fi
    fi
    if [ "$ok" -eq 1 ]; then
        echo "cross-check: ok   $name ($cc $tflags): ${#objects[@]} objects"
    fi
done

# ---- 3: no hosted header in the core -----------------------------------------------------------
FREESTANDING='stddef.h|stdint.h|stdbool.h|limits.h|stdalign.h|stdatomic.h|float.h|stdarg.h|iso646.h|stdnoreturn.h'
hosted=$(find src include/rtalloc -type f \( -name '*.c' -o -name '*.h' -o -name '*.inc' \) \
             ! -path 'include/rtalloc/hosted/*' -print0 \
         | xargs -0 grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' \
         | grep -Ev "<($FREESTANDING)>" || true)
if [ -n "$hosted" ]; then
    fail "the core includes hosted headers:"
    sed 's/^/    /' <<<"$hosted" >&2
else
    echo "cross-check: ok   the core includes only freestanding headers"
fi

# ---- 4: Cortex-M4 footprint ----------------------------------------------------------------
if command -v arm-none-eabi-size >/dev/null 2>&1 && [ -d "$OUT/cortex-m4" ]; then
    shopt -s nullglob
    cm4_objects=("$OUT"/cortex-m4/*.o)
    shopt -u nullglob
    if [ "${#cm4_objects[@]}" -gt 0 ]; then
        echo
        echo "Footprint, Cortex-M4F, arm-none-eabi-gcc $(arm-none-eabi-gcc -dumpversion) -Os" \
             "(bytes; each heap_<index>.o is one complete heap; the linker keeps only what is used)"
        arm-none-eabi-size -B "${cm4_objects[@]}" | awk '
            NR == 1 { printf "%-22s %8s %8s %8s\n", "object", ".text", ".data", ".bss"; next }
            { n = $6; sub(".*/", "", n); printf "%-22s %8d %8d %8d\n", n, $1, $2, $3
              t += $1; d += $2; b += $3 }
            END { printf "%-22s %8d %8d %8d\n", "total", t, d, b }'
    fi
else
    fail "no Cortex-M4 objects to measure (arm-none-eabi-size or the build missing)"
fi

# ---- 5: the lock headers, on their targets ------------------------------------------------------
# name | compiler | target flags | header | lock/unlock pairs the probe takes the address of
LOCK_TARGETS=(
    "cortex-m4|arm-none-eabi-gcc|-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16|cortex_m.h|rt_cortex_m_primask rt_cortex_m_basepri"
    "cortex-m0|arm-none-eabi-gcc|-mcpu=cortex-m0 -mthumb|cortex_m.h|rt_cortex_m_primask"
    "cortex-m33|arm-none-eabi-gcc|-mcpu=cortex-m33 -mthumb|cortex_m.h|rt_cortex_m_primask rt_cortex_m_basepri"
    "rv32imac|riscv64-unknown-elf-gcc|-march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany|riscv.h|rt_riscv_mie rt_riscv_sie"
    "rv64imac|riscv64-unknown-elf-gcc|-march=rv64imac_zicsr -mabi=lp64 -mcmodel=medany|riscv.h|rt_riscv_mie rt_riscv_sie"
)
mkdir -p "$OUT/port-headers"
for spec in "${LOCK_TARGETS[@]}"; do
    IFS='|' read -r name cc tflags header pairs <<<"$spec"
    if [[ -n "${CROSS_CHECK_ONLY:-}" && " $CROSS_CHECK_ONLY " != *" $name "* && "$name" != cortex-m0 ]]; then
        continue
    fi
    if ! command -v "$cc" >/dev/null 2>&1; then
        fail "lock header $header for $name: compiler '$cc' not found"
        continue
    fi
    probe="$OUT/port-headers/$name.c"
    {
        echo "#include <rtalloc/port/$header>"
        for pair in $pairs; do
            echo "rt_lock_fn ${pair}_l = ${pair}_lock;"
            echo "rt_unlock_fn ${pair}_u = ${pair}_unlock;"
        done
        if [ "$name" = cortex-m0 ]; then # no BASEPRI on ARMv6-M: the guard must say so
            echo "_Static_assert(RT_CORTEX_M_HAVE_BASEPRI == 0, \"ARMv6-M has no BASEPRI\");"
        elif [ "$header" = cortex_m.h ]; then
            echo "_Static_assert(RT_CORTEX_M_HAVE_BASEPRI == 1, \"ARMv7-M/v8-M Mainline have BASEPRI\");"
        fi
    } >"$probe"
    read -r -a tflag_array <<<"$tflags"
    if "$cc" "${tflag_array[@]}" "${CFLAGS[@]}" -c "$probe" -o "${probe%.c}.o"; then
        echo "cross-check: ok   rtalloc/port/$header on $name ($pairs)"
    else
        fail "rtalloc/port/$header does not compile for $name"
    fi
done

if [ "$FAILED" -ne 0 ]; then
    echo "cross-check: FAILED" >&2
    exit 1
fi
echo "cross-check: all passed"
