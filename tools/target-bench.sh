#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# target-bench.sh -- the on-target study (ports/README.md): builds ports/study/vaios_study.c
# for Cortex-M4 (QEMU mps2-an386) and RV32IMAC (QEMU virt), runs each program twice under QEMU
# (ports/qemu-run.sh, -icount: every count is an exact number of instructions), requires the two
# outputs to be byte-identical, keeps the first as OUT/target/<port>.out and writes the report's
# CSVs (OUT/target_*.csv, bench/report.py --parse-target).
#
# Usage: tools/target-bench.sh [--out DIR] [--build PREFIX] [--ports "cortex-m4 rv32"] [--timeout S]
#   --out DIR       results directory (default results): DIR/target/<port>.out and DIR/target_*.csv
#   --build PREFIX  build directories PREFIX-m4 and PREFIX-rv32 (default build/target-bench)
#   --ports LIST    the ports to run (default both)
#   --timeout S     wall-clock limit of one QEMU run (default 600)
#
# A port whose cross compiler or QEMU is missing is skipped with a message; exit status 3 when no
# port could run, 1 when a run failed, its two outputs differ or the counter refused (then no CSV
# of that port is written: the report says so), 0 otherwise. Also checked from the disassembly:
# the hooks' own masked instructions (after the mask in port_lock_hook, up to and including the
# unmask in port_unlock_hook) equal what the program states (@META,hook_masked).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
out=results
prefix=build/target-bench
ports="cortex-m4 rv32"
timeout_s=600
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --build) prefix=$2; shift 2 ;;
        --ports) ports=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "target-bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out/target"
PY=python3
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1; then PY=$p; break; fi
done

declare -A short=([cortex-m4]=m4 [rv32]=rv32)
declare -A cc=([cortex-m4]=arm-none-eabi-gcc [rv32]=riscv64-unknown-elf-gcc)
declare -A qemu=([cortex-m4]=qemu-system-arm [rv32]=qemu-system-riscv32)
declare -A objdump=([cortex-m4]=arm-none-eabi-objdump [rv32]=riscv64-unknown-elf-objdump)
declare -A toolchain=([cortex-m4]=cmake/toolchain-cortex-m4.cmake [rv32]=cmake/toolchain-rv32.cmake)
# the instruction that masks / unmasks in the port's hooks (ports/*/port_arch.c)
declare -A mask_re=([cortex-m4]='cpsid' [rv32]='csrrc.*mstatus')
declare -A unmask_re=([cortex-m4]='msr.*PRIMASK' [rv32]='csrs.*mstatus')

# The hooks' masked instructions, read from the disassembly: in port_lock_hook those after the
# masking instruction, in port_unlock_hook those up to and including the unmasking one.
hook_masked() { # PORT ELF
    local d
    d=$("${objdump[$1]}" -d --no-show-raw-insn "$2") || return 1
    local lock unlock
    lock=$(awk -v re="${mask_re[$1]}" '/<port_lock_hook>:/{on=1; next} on && /^$/{exit}
        on && /^ *[0-9a-f]+:\t/{ if (seen) n++; if ($0 ~ re) seen=1 } END{print seen ? n : "?"}' <<<"$d")
    unlock=$(awk -v re="${unmask_re[$1]}" '/<port_unlock_hook>:/{on=1; next} on && /^$/{exit}
        on && /^ *[0-9a-f]+:\t/{ if (!done) n++; if ($0 ~ re) done=1 } END{print done ? n : "?"}' <<<"$d")
    if [ "$lock" = "?" ] || [ "$unlock" = "?" ]; then echo "?"; else echo $((lock + unlock)); fi
}

t_start=$SECONDS
ran=0
failed=0
runs_csv="$out/target/runs.csv"
echo "target,elf,status_1,status_2,seconds_1,seconds_2,bytes,sha256_1,sha256_2,identical,hook_masked_disasm,qemu" \
    >"$runs_csv"
for port in $ports; do
    s=${short[$port]:-}
    if [ -z "$s" ]; then
        echo "target-bench.sh: unknown port $port (cortex-m4, rv32)" >&2
        failed=1
        continue
    fi
    rm -f "$out/target/$port.out"
    if ! command -v "${cc[$port]}" >/dev/null 2>&1 || ! command -v "${qemu[$port]}" >/dev/null 2>&1; then
        echo "target-bench.sh: $port skipped: needs ${cc[$port]} and ${qemu[$port]}" \
             "(Debian: gcc-arm-none-eabi gcc-riscv64-unknown-elf qemu-system-arm qemu-system-misc)" >&2
        continue
    fi
    b="$prefix-$s"
    echo "target-bench.sh: $port: building vaios_study in $b" >&2
    mkdir -p "$b"
    # the study needs no C library: the firmware example (which does) stays out
    if ! cmake -S . -B "$b" -DCMAKE_TOOLCHAIN_FILE="$ROOT/${toolchain[$port]}" -DCMAKE_BUILD_TYPE=Release \
            -DRTALLOC_DEBUG= -DRTALLOC_PORT_FIRMWARE=OFF >"$b/configure.log" 2>&1; then
        cat "$b/configure.log" >&2
        echo "target-bench.sh: $port: configure failed" >&2
        failed=1
        continue
    fi
    if ! cmake --build "$b" -j"${JOBS:-2}" --target vaios_study >"$b/build.log" 2>&1; then
        cat "$b/build.log" >&2
        echo "target-bench.sh: $port: build failed" >&2
        failed=1
        continue
    fi
    elf="$b/ports/vaios_study.elf"
    declare -a st=() secs=()
    for n in 1 2; do
        t0=$(date +%s%N)
        ports/qemu-run.sh --timeout "$timeout_s" --output "$out/target/$port.run$n" "$port" "$elf" >/dev/null
        st[$n]=$?
        ms=$((($(date +%s%N) - t0) / 1000000))
        secs[$n]=$((ms / 1000)).$(((ms % 1000) / 100))
    done
    h1=$(sha256sum <"$out/target/$port.run1" | cut -c1-16)
    h2=$(sha256sum <"$out/target/$port.run2" | cut -c1-16)
    same=no
    cmp -s "$out/target/$port.run1" "$out/target/$port.run2" && same=yes
    hm=$(hook_masked "$port" "$elf" || echo "?")
    qv=$("${qemu[$port]}" --version | head -1 | sed 's/,/;/g')
    bytes=$(wc -c <"$out/target/$port.run1")
    printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$port" "$elf" "${st[1]}" "${st[2]}" "${secs[1]}" \
        "${secs[2]}" "$bytes" "$h1" "$h2" "$same" "$hm" "$qv" >>"$runs_csv"
    if [ "${st[1]}" -ne 0 ] || [ "${st[2]}" -ne 0 ] || [ "$same" != yes ]; then
        echo "target-bench.sh: $port: FAILED (exit status ${st[1]} / ${st[2]}, byte-identical: $same)" >&2
        [ "$same" = yes ] || diff "$out/target/$port.run1" "$out/target/$port.run2" | head -10 >&2
        failed=1
        rm -f "$out/target/$port.run2"
        continue
    fi
    mv "$out/target/$port.run1" "$out/target/$port.out"
    rm -f "$out/target/$port.run2"
    echo "target-bench.sh: $port: two runs byte-identical ($bytes bytes, sha256 $h1), ${secs[1]} s and" \
         "${secs[2]} s; hooks' masked instructions from the disassembly: $hm" >&2
    ran=$((ran + 1))
done
if [ "$ran" -eq 0 ]; then
    echo "target-bench.sh: no port ran: no target CSVs" >&2
    exit $((failed ? 1 : 3))
fi
"$PY" bench/report.py --parse-target "$out" || failed=1
echo "target-bench.sh: $ran port(s) in $((SECONDS - t_start)) s; CSVs in $out (target_*.csv)" >&2
exit "$failed"
