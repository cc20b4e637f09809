#!/usr/bin/env bash
# footprint.sh -- the heap's footprint on the embedded targets, at -Os:
#   1. .text/.data/.bss of each backend's object and of the shared code, Cortex-M4 and RV32;
#   2. the control structure (the index alone, and the whole heap control block) for several
#      largest-block settings (RT_HEAP_MAX_BLOCK_LOG2), i.e. heap-size ranges.
# Usage: tools/footprint.sh [--markdown]   (run from anywhere)
set -euo pipefail
cd "$(dirname "$0")/.."
md=${1:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c11 -Os -ffreestanding -ffunction-sections -fdata-sections -Iinclude -Isrc
       -Wall -Wextra -Werror)
declare -A cc=(
  [cortex-m4]="arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
  [rv32imac]="riscv64-unknown-elf-gcc -march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany"
)
row() { if [ "$md" = --markdown ]; then printf '| %s |\n' "$(printf '%s | ' "$@" | sed 's/ | $//')"; else printf '%-10s %-22s %8s %8s %8s\n' "$@"; fi; }

echo "Code and data per object (bytes, -Os). A firmware links heap_common, hooks and the one backend it creates."
[ "$md" = --markdown ] && { echo; echo "| target | object | .text | .data | .bss |"; echo "|---|---|---:|---:|---:|"; }
[ "$md" = --markdown ] || row target object .text .data .bss
for t in cortex-m4 rv32imac; do
  read -r -a c <<<"${cc[$t]}"
  for f in src/heap/heap_common.c src/core/hooks.c src/heap/heap_tlsf.c src/heap/heap_tlsf32.c src/heap/heap_seglist.c \
           src/heap/heap_firstfit.c src/heap/heap_bestfit.c src/heap/heap_halffit.c src/buddy/buddy.c; do
    [ -f "$f" ] || continue
    o="$out/$t-$(basename "$f" .c).o"
    "${c[@]}" "${flags[@]}" -c "$f" -o "$o"
    size=$("${c[0]}" -print-prog-name=size 2>/dev/null || true)
    sz=$(${c[0]%-gcc}-size "$o" 2>/dev/null | awk 'NR==2{print $1, $2, $3}')
    [ -n "$sz" ] || sz=$(riscv64-unknown-elf-size "$o" | awk 'NR==2{print $1, $2, $3}')
    read -r text data bss <<<"$sz"
    row "$t" "$(basename "$f" .c)" "$text" "$data" "$bss"
  done
done

echo
echo "Control structure on Cortex-M4 (32-bit), bytes: the index alone / the whole heap control block"
echo "(blog: TLSF control block 956 B = 14x16 list heads + bitmaps; seglist 32 B)"
[ "$md" = --markdown ] && { echo; echo "| largest block | tlsf index | tlsf heap | tlsf32 index | seglist index | seglist heap | halffit index | fit-list index |"; echo "|---|---:|---:|---:|---:|---:|---:|---:|"; }
[ "$md" = --markdown ] || printf '%-14s %10s %10s %12s %13s %12s %13s %14s\n' "largest block" "tlsf idx" "tlsf heap" "tlsf32 idx" "seglist idx" "seglist heap" "halffit idx" "fitlist idx"
read -r -a c <<<"${cc[cortex-m4]}"
for L in 16 20 24 28 31; do
  vals=()
  for p in "TLSF" "TLSF -DTLSF_SL_LOG2=5" SEGLIST HALFFIT FIT; do
    read -r -a extra <<<"-DPROBE_$p"
    o="$out/probe.o"
    "${c[@]}" "${flags[@]}" -Wno-unused-function -DRT_HEAP_MAX_BLOCK_LOG2=$L "${extra[@]}" -c tools/footprint_probe.c -o "$o"
    idx=$(arm-none-eabi-nm -S "$o" | awk '/probe_index/{print $2}' | xargs -I{} printf '%d' 0x{})
    heap=$(arm-none-eabi-nm -S "$o" | awk '/probe_heap/{print $2}' | xargs -I{} printf '%d' 0x{})
    vals+=("$idx" "$heap")
  done
  label="< 2^$L B"
  if [ "$md" = --markdown ]; then
    echo "| $label | ${vals[0]} | ${vals[1]} | ${vals[2]} | ${vals[4]} | ${vals[5]} | ${vals[6]} | ${vals[8]} |"
  else
    printf '%-14s %10s %10s %12s %13s %12s %13s %14s\n' "$label" "${vals[0]}" "${vals[1]}" "${vals[2]}" "${vals[4]}" "${vals[5]}" "${vals[6]}" "${vals[8]}"
  fi
done
