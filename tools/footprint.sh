#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# footprint.sh -- the heap's footprint on the embedded targets:
#   0. the linked figure: what rtalloc's TLSF adds to a firmware's flash. tools/footprint_app.c
#      (a heap over a static 64 KiB buffer; create + malloc + free, then each of realloc, calloc,
#      memalign, rt_heap_check, rt_heap_check_fast added alone) is linked with
#      -ffunction-sections -fdata-sections -Wl,--gc-sections, no C library (tools/footprint_libc.c's
#      plain memset/memcpy/memmove, counted when the heap calls them; libgcc), and its
#      .text + .rodata + .data minus the baseline program's (the same entry, no heap) is the figure.
#      Cortex-M4 and RV32, -Os and -O2, RT_HARDENING 0, 1 and 2, with and without RT_ERROR_TEXT;
#      and the control block of that 64 KiB heap (RT_HEAP_MAX_BLOCK_LOG2 16, and the default);
#   1. .text/.data/.bss of each backend's object and of the shared code, Cortex-M4 and RV32
#      (Berkeley `size`: .text counts read-only data too);
#   2. per allocator, what a firmware that creates only that allocator links: heap_common + hooks +
#      the backend for the boundary-tag heaps, hooks + buddy for the buddy (object sizes before the
#      linker drops unused functions: an upper bound of what it keeps);
#   3. the control structure (the index alone, and the whole control block at the start of the
#      caller's buffer) on Cortex-M4 and RV32 for several largest-block settings
#      (RT_HEAP_MAX_BLOCK_LOG2), i.e. heap-size ranges; the buddy's does not depend on it (its
#      table, 1/32 of the arena, is not counted);
#   4. configurations: each allocator's objects again with RT_DEBUG=1 (cheap internal assertions),
#      RT_TLSF_SL_LOG2=5 (tlsf with 32 slots per octave) and RT_HEAP_MAX_BLOCK_LOG2=16 (a heap
#      below 64 KiB), both targets.
# Nothing is linked or run: the control sizes are sizeof() read back from tools/footprint_probe.c's
# objects with the cross nm.
#
# Usage: tools/footprint.sh [--markdown] [--quick] [--linked-only] [--readme] [--csv DIR]
#   --markdown   the tables as markdown
#   --linked-only  step 0 alone
#   --readme     step 0 alone, written into doc/embedded.md between the lines
#                "<!-- footprint:begin -->" and "<!-- footprint:end -->" (its flash table, section
#                "Flash and RAM on a microcontroller", is this output, not typed)
#   --check-readme  step 0 alone, compared with doc/embedded.md's section: exit 1 when they differ; when
#                the section names other compilers than this machine's (its "Compilers:" line), it
#                says so and exits 0: the figures are those of one toolchain
#   --quick      steps 1-3 only, step 3 for 2^16, 2^20 and 2^24 (bench.sh's quick scale; no
#                footprint_linked.csv or footprint_config.csv)
#   --csv DIR    also writes DIR/footprint.csv (target,object,text,data,bss),
#                DIR/footprint_alloc.csv (target,allocator,backend,shared, .text/.data/.bss of the
#                backend, of the shared objects and in total) and DIR/footprint_control.csv
#                (target,max_block_log2,allocator,index_bytes,control_bytes) and DIR/footprint_config.csv
#                (target,allocator,config,text,data,bss: step 4) and DIR/footprint_linked.csv
#                (target,opt,hardening,error_text,calls,bytes: step 0); bench.sh uses it for
#                the report's footprint section. Each starts with '#' lines: compilers, flags, date.
# A target whose cross compiler is missing is skipped with a note on stderr; exits 1 when neither
# is present (and writes no CSV then).
set -euo pipefail
md=
csv=
quick=
linked_only=
readme=
doc=doc/embedded.md # the document whose footprint section --readme writes and --check-readme reads
while [ $# -gt 0 ]; do
  case "$1" in
    --markdown) md=--markdown ;;
    --quick) quick=1 ;;
    --linked-only) linked_only=1 ;;
    --readme) linked_only=1 readme=write md=--markdown ;;
    --check-readme) linked_only=1 readme=check md=--markdown ;;
    --csv) [ $# -ge 2 ] || { echo "footprint.sh: --csv needs a directory" >&2; exit 2; }
           mkdir -p "$2"; csv=$(cd "$2" && pwd); shift ;;
    -h|--help) sed -n '2,/^set -/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "footprint.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c11 -Os -ffreestanding -ffunction-sections -fdata-sections -Iinclude -Isrc
       -Wall -Wextra -Werror)
targets=(cortex-m4 rv32imac)
declare -A cc=(
  [cortex-m4]="arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
  [rv32imac]="riscv64-unknown-elf-gcc -march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany"
)
# Objects, and what a firmware links per allocator: the backend, then the shared objects.
objects=(heap_common hooks heap_tlsf heap_tlsf32 heap_seglist heap_firstfit heap_bestfit heap_halffit heap_tlsfq buddy
         waitfree fma)
declare -A src=([heap_common]=src/heap/heap_common.c [hooks]=src/base/hooks.c [buddy]=src/buddy/buddy.c
                [waitfree]=src/waitfree/waitfree.c [fma]=src/fma/fma.c)
# wf: every variant of the wait-free tree (one object); fma: the FMA and its BSD 4.4 baseline (one object)
allocators=(tlsf tlsf32 seglist firstfit bestfit halffit tlsfq buddy wf fma)
backend_of() { case "$1" in buddy) echo buddy ;; wf) echo waitfree ;; fma) echo fma ;; *) echo "heap_$1" ;; esac; }
shared_of() { case "$1" in buddy | wf | fma) echo hooks ;; *) echo "heap_common hooks" ;; esac; }

present=()
for t in "${targets[@]}"; do
  read -r -a c <<<"${cc[$t]}"
  if command -v "${c[0]}" >/dev/null 2>&1 && command -v "${c[0]%-gcc}-size" >/dev/null 2>&1; then
    present+=("$t")
  else
    echo "footprint.sh: ${c[0]} (or ${c[0]%-gcc}-size) not found: $t skipped" >&2
  fi
done
if [ ${#present[@]} -eq 0 ]; then
  echo "footprint.sh: no cross compiler (arm-none-eabi-gcc, riscv64-unknown-elf-gcc): nothing measured" >&2
  exit 1
fi

row() { if [ "$md" = --markdown ]; then printf '| %s |\n' "$(printf '%s | ' "$@" | sed 's/ | $//')"; else printf '%-10s %-22s %8s %8s %8s\n' "$@"; fi; }
meta() { # the '#' lines at the top of each CSV
  local t c
  echo "# footprint: tools/footprint.sh, sizes of objects compiled for the target (nothing linked or run)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# source: $(git describe --always --dirty 2>/dev/null || echo unknown)"
  for t in "${present[@]}"; do
    read -r -a c <<<"${cc[$t]}"
    echo "# compiler $t: ${c[0]} $("${c[0]}" -dumpversion) ${c[*]:1}"
  done
  echo "# flags: ${flags[*]}"
}
if [ -n "$csv" ]; then
  { meta; echo "target,object,text,data,bss"; } >"$out/footprint.csv"
  { meta; echo "target,allocator,backend,shared,backend_text,backend_data,backend_bss,shared_text,shared_data,shared_bss,text,data,bss"; } >"$out/footprint_alloc.csv"
  { meta; echo "target,max_block_log2,allocator,index_bytes,control_bytes"; } >"$out/footprint_control.csv"
  { meta; echo "target,allocator,config,text,data,bss"; } >"$out/footprint_config.csv"
fi

# --- 0. the linked figure -------------------------------------------------------------------------
# One library build per target x optimisation x hardening x error text; one link per set of calls.
linked_section() {
  local t o lv et calls elf base n
  local -a c lib
  local sets=(1 3 5 9 17 33) # create+malloc+free, + realloc, + calloc, + memalign, + check, + check_fast
  echo "Flash a firmware links for rtalloc's TLSF (bytes: .text + .rodata + .data, baseline subtracted;"
  echo "a heap over a static 64 KiB buffer, -ffunction-sections -fdata-sections --gc-sections; each"
  echo "\"+\" column is what that call adds to create + malloc + free; tools/footprint.sh --linked-only)."
  echo "Compilers: $(compilers)."
  if [ "$md" = --markdown ]; then
    echo
    echo "| target | opt | RT_HARDENING | messages | create + malloc + free | + realloc | + calloc | + memalign | + check | + check_fast |"
    echo "|---|---|---:|---|---:|---:|---:|---:|---:|---:|"
  else
    printf '%-10s %-4s %5s %-9s %10s %9s %8s %10s %8s %11s\n' target opt level messages malloc+free +realloc +calloc +memalign +check +check_fast
  fi
  for t in "${present[@]}"; do
    read -r -a c <<<"${cc[$t]}"
    for o in -Os -O2; do
      for lv in 0 1 2; do
        for et in 1 0; do
          local d="$out/linked-$t$o-$lv-$et"
          mkdir -p "$d"
          local lf=("${flags[@]/-Os/$o}" -DRT_HARDENING=$lv -DRT_ERROR_TEXT=$et)
          # the heap's part of the core as a firmware links it: an archive the linker takes from
          lib=()
          for f in src/base/hooks.c src/heap/heap_*.c; do
            "${c[@]}" "${lf[@]}" -c "$f" -o "$d/$(basename "$f" .c).o" &
            lib+=("$d/$(basename "$f" .c).o")
          done
          wait
          rm -f "$d/librtalloc.a"
          "${c[0]%-gcc}-ar" rcs "$d/librtalloc.a" "${lib[@]}"
          lib=("$d/librtalloc.a")
          "${c[@]}" -std=c11 "$o" -ffreestanding -fno-builtin -ffunction-sections $nodist -c tools/footprint_libc.c -o "$d/libc.o"
          # libgcc of the right multilib (RV32IMAC: __clzsi2/__ctzsi2; the multilib directories are
          # named without the _zicsr extension)
          local libgcc
          libgcc=$("${c[@]/_zicsr/}" -print-libgcc-file-name)
          declare -A got=()
          for calls in 0 "${sets[@]}"; do
            elf="$d/app$calls.elf"
            "${c[@]}" "${lf[@]}" -DFP_CALLS=$calls tools/footprint_app.c "${lib[@]}" "$d/libc.o" \
              -nostdlib -nostartfiles -Wl,--gc-sections -Wl,-e,_start "$libgcc" -o "$elf"
            read -r text data < <("${c[0]%-gcc}-size" "$elf" | awk 'NR==2{print $1, $2}')
            got[$calls]=$((text + data))
          done
          base=${got[0]}
          local mf=$((got[1] - base))
          local row=("$t" "$o" "$lv" "$([ $et = 1 ] && echo text || echo 'no text')" "$mf")
          for calls in 3 5 9 17 33; do row+=("+$((got[$calls] - got[1]))"); done
          if [ "$md" = --markdown ]; then
            printf '| %s |\n' "$(printf '%s | ' "${row[@]}" | sed 's/ | $//')"
          else
            printf '%-10s %-4s %5s %-9s %10s %9s %8s %10s %8s %11s\n' "${row[@]}"
          fi
          if [ -n "$csv" ]; then
            for calls in "${sets[@]}"; do
              echo "$t,$o,$lv,$et,$calls,$((got[$calls] - base))" >>"$out/footprint_linked.csv"
            done
          fi
        done
      done
    done
  done
  echo
  echo "Control block of that 64 KiB heap (bytes, the whole heap_full at the buffer's start):"
  for t in "${present[@]}"; do
    read -r -a c <<<"${cc[$t]}"
    local k16 kdef
    read -r _ k16 < <(probe -DRT_HEAP_MAX_BLOCK_LOG2=16 '-DPROBE_BACKEND="heap/heap_tlsf.c"')
    read -r _ kdef < <(probe '-DPROBE_BACKEND="heap/heap_tlsf.c"')
    echo "- $t: $k16 with RT_HEAP_MAX_BLOCK_LOG2=16 (blocks below 64 KiB), $kdef at the default"
  done
}
compilers() { # the cross compilers' own version lines: the figures hold for these
  local t first=1
  local -a c
  for t in "${present[@]}"; do
    read -r -a c <<<"${cc[$t]}"
    [ $first = 1 ] || printf '; '
    printf '%s' "$("${c[0]}" --version | head -1)"
    first=0
  done
}
nodist=-fno-tree-loop-distribute-patterns # both cross compilers are gcc
probe() { # probe EXTRA_FLAGS...: "index control", the sizes in bytes of tools/footprint_probe.c's
  local o="$out/probe.o" i=- k=- v n  # two objects ("-" for one the probe does not define)
  "${c[@]}" "${flags[@]}" "$@" -c tools/footprint_probe.c -o "$o"
  while read -r _ v _ n; do
    case "$n" in probe_index) i=$((16#$v)) ;; probe_control) k=$((16#$v)) ;; esac
  done < <("${c[0]%-gcc}-nm" -S "$o")
  echo "$i $k"
}
if [ -n "$csv" ]; then
  { meta; echo "target,opt,hardening,error_text,calls,bytes"; } >"$out/footprint_linked.csv"
fi
if [ "$readme" = check ]; then
  # the figures are those of one toolchain: a machine with other compilers (a Debian point
  # release) cannot reproduce them, and says so instead of failing
  written=$(sed -n '/^<!-- footprint:begin -->$/,/^<!-- footprint:end -->$/s/^Compilers: \(.*\)\.$/\1/p' "$doc")
  if [ "$written" != "$(compilers)" ]; then
    echo "footprint.sh: $doc's flash table was written with other compilers ($written;" \
         "here: $(compilers)): not compared" >&2
    exit 0
  fi
fi
if [ -n "$readme" ]; then
  section=$(linked_section)
  new=$(awk -v sec="$section" '
    /^<!-- footprint:begin -->$/ { print; print sec; skip = 1; found++; next }
    /^<!-- footprint:end -->$/ { skip = 0 }
    !skip { print }
    END { if (found != 1) exit 3 }' "$doc") || { echo "footprint.sh: $doc has no footprint:begin/end section" >&2; exit 1; }
  if [ "$readme" = write ]; then
    printf '%s\n' "$new" >"$doc"
    echo "footprint.sh: $doc's footprint section written"
  elif [ "$new" != "$(cat "$doc")" ]; then
    diff <(printf '%s\n' "$new") "$doc" >&2 || true
    echo "footprint.sh: $doc's footprint section differs from this build's figures (tools/footprint.sh --readme)" >&2
    exit 1
  else
    echo "footprint.sh: $doc's footprint section matches"
  fi
  exit 0
fi
if [ -z "$quick" ] || [ -n "$linked_only" ]; then # --quick (bench.sh's quick scale) leaves it out
  linked_section
  echo
fi
if [ -n "$linked_only" ]; then
  [ -z "$csv" ] || cp "$out/footprint_linked.csv" "$csv/footprint_linked.csv"
  exit 0
fi

# --- 1. per object -------------------------------------------------------------------------------
declare -A sz # sz[target/object] = "text data bss"
echo "Code and data per object (bytes, -Os). A firmware links heap_common, hooks and the one backend it creates."
[ "$md" = --markdown ] && { echo; echo "| target | object | .text | .data | .bss |"; echo "|---|---|---:|---:|---:|"; }
[ "$md" = --markdown ] || row target object .text .data .bss
for t in "${present[@]}"; do
  read -r -a c <<<"${cc[$t]}"
  for obj in "${objects[@]}"; do
    f=${src[$obj]:-src/heap/$obj.c}
    [ -f "$f" ] || continue
    o="$out/$t-$obj.o"
    "${c[@]}" "${flags[@]}" -c "$f" -o "$o"
    read -r text data bss < <("${c[0]%-gcc}-size" "$o" | awk 'NR==2{print $1, $2, $3}')
    sz[$t/$obj]="$text $data $bss"
    row "$t" "$obj" "$text" "$data" "$bss"
    [ -z "$csv" ] || echo "$t,$obj,$text,$data,$bss" >>"$out/footprint.csv"
  done
done

# --- 2. per allocator ----------------------------------------------------------------------------
echo
echo "Per allocator: backend + shared objects, what a firmware creating only it links (bytes, before --gc-sections)."
if [ "$md" = --markdown ]; then
  echo; echo "| target | allocator | shared | .text | .data | .bss |"; echo "|---|---|---|---:|---:|---:|"
else
  printf '%-10s %-10s %-20s %8s %8s %8s\n' target allocator shared .text .data .bss
fi
for t in "${present[@]}"; do
  for a in "${allocators[@]}"; do
    b=$(backend_of "$a")
    [ -n "${sz[$t/$b]:-}" ] || continue
    read -r bt bd bb <<<"${sz[$t/$b]}"
    st=0 sd=0 sb=0 names=()
    for s in $(shared_of "$a"); do
      read -r x y z <<<"${sz[$t/$s]:-0 0 0}"
      st=$((st + x)) sd=$((sd + y)) sb=$((sb + z)) names+=("$s")
    done
    shared=$(IFS=+; echo "${names[*]}")
    if [ "$md" = --markdown ]; then
      echo "| $t | $a | $shared | $((bt + st)) | $((bd + sd)) | $((bb + sb)) |"
    else
      printf '%-10s %-10s %-20s %8s %8s %8s\n' "$t" "$a" "$shared" $((bt + st)) $((bd + sd)) $((bb + sb))
    fi
    [ -z "$csv" ] || echo "$t,$a,$b,$shared,$bt,$bd,$bb,$st,$sd,$sb,$((bt + st)),$((bd + sd)),$((bb + sb))" \
      >>"$out/footprint_alloc.csv"
  done
done

# --- 3. control structure, each target ----------------------------------------------------------
heaps=(tlsf tlsf32 seglist firstfit bestfit halffit)
for t in "${present[@]}"; do
  read -r -a c <<<"${cc[$t]}"
  echo
  echo "Control structure on $t (32-bit), bytes: the index alone / the whole heap control block"
  echo "(blog: TLSF control block 956 B = 14x16 list heads + bitmaps; seglist 32 B)"
  [ "$md" = --markdown ] && { echo; echo "| largest block | tlsf index | tlsf heap | tlsf32 index | seglist index | seglist heap | halffit index | fit-list index | buddy control |"; echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"; }
  [ "$md" = --markdown ] || printf '%-14s %10s %10s %12s %13s %12s %13s %14s %14s\n' "largest block" "tlsf idx" "tlsf heap" "tlsf32 idx" "seglist idx" "seglist heap" "halffit idx" "fitlist idx" "buddy control"
  read -r _ buddy < <(probe -DPROBE_BUDDY) # independent of RT_HEAP_MAX_BLOCK_LOG2
  Ls=(12 16 20 24 28 31)
  [ -z "$quick" ] || Ls=(16 20 24) # --quick: the blog's range (2^20) and the hardened defaults' neighbours
  for L in "${Ls[@]}"; do
    declare -A idx=() heap=()
    # The default hardening takes the header bits above the largest block for its tag, so it
    # accepts only multiples of 8 up to 24 on 32-bit; the other ranges exist at RT_HARDENING=0
    # (the sizes of the control structures do not depend on the level).
    level=()
    label="< 2^$L B"
    if [ $((L % 8)) -ne 0 ] || [ "$L" -gt 24 ]; then level=(-DRT_HARDENING=0); label="< 2^$L B (level 0)"; fi
    for a in "${heaps[@]}"; do
      read -r "idx[$a]" "heap[$a]" < <(probe "${level[@]}" -DRT_HEAP_MAX_BLOCK_LOG2="$L" "-DPROBE_BACKEND=\"heap/heap_$a.c\"")
      [ -z "$csv" ] || echo "$t,$L,$a,${idx[$a]},${heap[$a]}" >>"$out/footprint_control.csv"
    done
    [ -z "$csv" ] || echo "$t,$L,buddy,,$buddy" >>"$out/footprint_control.csv"
    if [ "$md" = --markdown ]; then
      echo "| $label | ${idx[tlsf]} | ${heap[tlsf]} | ${idx[tlsf32]} | ${idx[seglist]} | ${heap[seglist]} | ${idx[halffit]} | ${idx[firstfit]} | $buddy |"
    else
      printf '%-14s %10s %10s %12s %13s %12s %13s %14s %14s\n' "$label" "${idx[tlsf]}" "${heap[tlsf]}" "${idx[tlsf32]}" "${idx[seglist]}" "${heap[seglist]}" "${idx[halffit]}" "${idx[firstfit]}" "$buddy"
    fi
  done
done

# --- 4. configurations ---------------------------------------------------------------------------
# Each allocator's objects (backend + shared, as in 2) compiled again with one knob changed.
configs=("RT_DEBUG=1" "RT_TLSF_SL_LOG2=5" "RT_HEAP_MAX_BLOCK_LOG2=16")
if [ -n "$quick" ]; then # --quick: no configurations
  present=()
  rm -f "$out/footprint_config.csv"
else
  echo
  echo "Per allocator and configuration: .text/.data/.bss of backend + shared objects (bytes, -Os)."
fi
if [ -n "$quick" ]; then
  :
elif [ "$md" = --markdown ]; then
  echo; echo "| target | allocator | configuration | .text | .data | .bss |"; echo "|---|---|---|---:|---:|---:|"
else
  printf '%-10s %-10s %-26s %8s %8s %8s\n' target allocator configuration .text .data .bss
fi
for t in "${present[@]}"; do
  read -r -a c <<<"${cc[$t]}"
  for cfg in "${configs[@]}"; do
    declare -A csz=()
    for obj in "${objects[@]}"; do
      f=${src[$obj]:-src/heap/$obj.c}
      [ -f "$f" ] || continue
      o="$out/$t-cfg-$obj.o"
      "${c[@]}" "${flags[@]}" "-D$cfg" -c "$f" -o "$o"
      csz[$obj]=$("${c[0]%-gcc}-size" "$o" | awk 'NR==2{print $1, $2, $3}')
    done
    for a in "${allocators[@]}"; do
      tt=0 dd=0 bb=0
      for obj in $(backend_of "$a") $(shared_of "$a"); do
        read -r x y z <<<"${csz[$obj]:-0 0 0}"
        tt=$((tt + x)) dd=$((dd + y)) bb=$((bb + z))
      done
      if [ "$md" = --markdown ]; then
        echo "| $t | $a | $cfg | $tt | $dd | $bb |"
      else
        printf '%-10s %-10s %-26s %8s %8s %8s\n' "$t" "$a" "$cfg" "$tt" "$dd" "$bb"
      fi
      [ -z "$csv" ] || echo "$t,$a,$cfg,$tt,$dd,$bb" >>"$out/footprint_config.csv"
    done
  done
done

if [ -n "$csv" ]; then
  written=()
  for f in footprint_linked.csv footprint.csv footprint_alloc.csv footprint_control.csv footprint_config.csv; do
    [ -f "$out/$f" ] && cp "$out/$f" "$csv/$f" && written+=("$f")
  done
  echo
  echo "footprint.sh: wrote in $csv: ${written[*]}"
fi
