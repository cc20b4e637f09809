#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ports/qemu-run.sh -- runs a program built for a port under QEMU and returns its exit status.
#
# Usage: ports/qemu-run.sh [options] PORT PROGRAM.elf
#   PORT                 cortex-m4 (qemu-system-arm -M mps2-an386) or rv32 (qemu-system-riscv32 -M virt)
#   --timeout S          wall-clock limit of one run (default 300): exit 124 when it is exceeded
#   --twice              run twice and require byte-identical output (and the same status)
#   --no-icount          run without -icount (the instruction counter must then refuse to count)
#   --expect-status N    succeed iff the program exits with N (default 0); N may be a list,
#                        3,4,5: any of them
#   --expect-output RE   also require a line of the output to match the extended regex RE
#   --reject-output RE   also require that no line of the output matches RE
#   --output FILE        also keep the (first run's) output in FILE
#
# The guest's console (semihosting) is this script's stdout, QEMU's own messages its stderr
# (compared across --twice runs: the guest's output only). The exit status is the program's
# (semihosting SYS_EXIT_EXTENDED), or 124 on a timeout, or 1 when --twice finds two outputs that
# differ or an expectation fails. -icount makes the emulation deterministic: shift=7 on Cortex-M4
# (SysTick then counts 3.2 ticks per instruction), shift=0 on RV32 (minstret = instructions).
set -uo pipefail

timeout_s=300
twice=0
icount=1
expect_status=0
expect_output=
reject_output=
keep=
while [ $# -gt 0 ]; do
    case "$1" in
        --timeout) timeout_s=$2; shift 2 ;;
        --twice) twice=1; shift ;;
        --no-icount) icount=0; shift ;;
        --expect-status) expect_status=$2; shift 2 ;;
        --expect-output) expect_output=$2; shift 2 ;;
        --reject-output) reject_output=$2; shift 2 ;;
        --output) keep=$2; shift 2 ;;
        -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "qemu-run.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -ne 2 ]; then
    echo "usage: qemu-run.sh [options] PORT PROGRAM.elf (--help)" >&2
    exit 2
fi
port=$1
elf=$2

common=(-display none -monitor none -serial none -nographic -nodefaults
        -chardev stdio,id=semihost0 -semihosting-config enable=on,target=native,chardev=semihost0)
case "$port" in
    cortex-m4)
        qemu=(qemu-system-arm -M mps2-an386)
        shift_arg=7
        ;;
    rv32)
        qemu=(qemu-system-riscv32 -M virt -bios none)
        shift_arg=0
        ;;
    *)
        echo "qemu-run.sh: unknown port '$port' (cortex-m4, rv32)" >&2
        exit 2
        ;;
esac
if [ "$icount" -eq 1 ]; then
    common+=(-icount "shift=$shift_arg,align=off,sleep=off")
fi
if ! command -v "${qemu[0]}" >/dev/null 2>&1; then
    echo "qemu-run.sh: ${qemu[0]} not found (Debian: qemu-system-arm / qemu-system-misc)" >&2
    exit 2
fi
if [ ! -f "$elf" ]; then
    echo "qemu-run.sh: no program $elf" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/qemu-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# run N: output to $tmp/out.N (and to stdout for the first run), status to $tmp/status.N
run() {
    local n=$1 status
    local t0=$SECONDS
    timeout --kill-after=5 "$timeout_s" "${qemu[@]}" "${common[@]}" -kernel "$elf" </dev/null \
        >"$tmp/out.$n" 2>"$tmp/err.$n"
    status=$?
    echo "$status" >"$tmp/status.$n"
    if [ "$n" -eq 1 ]; then
        cat "$tmp/out.1"
    fi
    # QEMU's own messages (not the guest's), less the board's unconnected network card
    grep -v 'warning: nic .* has no peer' "$tmp/err.$n" >&2
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "qemu-run.sh: $(basename "$elf") on $port: TIMEOUT after ${timeout_s}s" >&2
    fi
    echo "qemu-run.sh: $(basename "$elf") on $port (run $n): exit status $status, $((SECONDS - t0))s" >&2
}

run 1
status=$(cat "$tmp/status.1")
[ -n "$keep" ] && cp "$tmp/out.1" "$keep"
result=0
if [[ ",$expect_status," != *",$status,"* ]]; then
    echo "qemu-run.sh: FAIL: exit status $status, expected $expect_status" >&2
    result=1
fi
if [ -n "$expect_output" ] && ! grep -Eq -- "$expect_output" "$tmp/out.1"; then
    echo "qemu-run.sh: FAIL: no output line matches '$expect_output'" >&2
    result=1
fi
if [ -n "$reject_output" ] && grep -Eq -- "$reject_output" "$tmp/out.1"; then
    echo "qemu-run.sh: FAIL: an output line matches '$reject_output'" >&2
    result=1
fi
if [ "$twice" -eq 1 ] && [ "$result" -eq 0 ]; then
    run 2
    if [ "$(cat "$tmp/status.2")" -ne "$status" ]; then
        echo "qemu-run.sh: FAIL: second run exited with $(cat "$tmp/status.2"), first with $status" >&2
        result=1
    elif ! cmp -s "$tmp/out.1" "$tmp/out.2"; then
        echo "qemu-run.sh: FAIL: the two runs' outputs differ:" >&2
        diff "$tmp/out.1" "$tmp/out.2" | head -20 >&2
        result=1
    else
        echo "qemu-run.sh: two runs, byte-identical output ($(wc -c <"$tmp/out.1") bytes)" >&2
    fi
fi
exit "$result"
