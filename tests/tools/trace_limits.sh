#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# trace_limits.sh -- `rtbench trace replay|size` bound what a trace may ask for (--max-memory;
# doc/traces.md, "What a replay may take"). Files:
#   big.rtt      300 live mallocs of 4 GiB - 1 (a valid 2 KB file): live peak 1.2 TiB, heap 9.4 TiB
#   multi.rtt    a small stream, then big.rtt's: refused before the small one is replayed
#   claim_*.rtt  headers claiming 2^40 ops or 2^32 streams (checksums right)
#   s.rtt        the synthetic trace of tests/unit/trace_replay.c (live peak 143,116 bytes, one call
#                flagged failed asking for 3 GiB): heap 64 MiB, replay on tlsf 128 MiB exactly
# Each refusal: exit status 1, exactly one line on stderr saying why, nothing on stdout, no CSV.
# The flag lowers the limit (s.rtt refused at 127M, replayed at 128M; sized at 4G, refused at
# 3G), raises it (big.rtt passes the check at 64T and then fails to map its 9.4 TiB heap -- only
# where the address space is limited here, so that nothing large can be mapped), and its bad
# values are refused. The whole script runs under `ulimit -v` 4 GiB where rtbench starts under
# it: a refusal that came too late would fail to map rather than be refused, and fail the check.
#
#   tests/tools/trace_limits.sh RTBENCH TRACE_REPLAY TRACE_FORMAT
set -euo pipefail
RTBENCH=$1
REPLAY_WRITER=$2
FORMAT_WRITER=$3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rt_trace_limits.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail=0
passed=0
check() {
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "FAIL trace_limits: $what"
        fail=$((fail + 1))
    fi
}

check "the hostile files written" "$FORMAT_WRITER" --write-hostile "$TMP"
check "the synthetic trace written" "$REPLAY_WRITER" --write "$TMP/s.rtt"

# 4 GiB of address space, if rtbench (its peers loaded) starts under it
limited=0
if (ulimit -v 4194304 && "$RTBENCH" list >/dev/null 2>&1); then
    ulimit -v 4194304
    limited=1
else
    echo "trace_limits: rtbench does not start under ulimit -v 4 GiB (a sanitizer?): address space not limited"
fi

# run NAME ARGS...: rtbench ARGS with stdout, stderr and status kept as $TMP/NAME.{out,err,rc}
run() {
    local name=$1
    shift
    local rc=0
    "$RTBENCH" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
    echo "$rc" >"$TMP/$name.rc"
}
# refused NAME STATUS PATTERN: the run exited with STATUS, printed nothing on stdout and one line on
# stderr matching the extended regex PATTERN
refused() {
    local name=$1 status=$2 pattern=$3
    [ "$(cat "$TMP/$name.rc")" = "$status" ] || { echo "  $name: exit $(cat "$TMP/$name.rc"), not $status"; return 1; }
    [ ! -s "$TMP/$name.out" ] || { echo "  $name: stdout not empty:"; head -3 "$TMP/$name.out"; return 1; }
    [ "$(wc -l <"$TMP/$name.err")" -eq 1 ] || { echo "  $name: stderr not one line:"; cat "$TMP/$name.err"; return 1; }
    grep -Eq -- "$pattern" "$TMP/$name.err" || { echo "  $name: stderr: $(cat "$TMP/$name.err")"; return 1; }
}
ran() {
    [ "$(cat "$TMP/$1.rc")" = 0 ] && grep -q '^stream 0' "$TMP/$1.out" ||
        { echo "  $1: exit $(cat "$TMP/$1.rc")"; cat "$TMP/$1.err"; return 1; }
}

# The default limit is half of physical memory, printed as rtbench prints sizes (rp_format_size).
half=$(($(getconf _PHYS_PAGES) * $(getconf PAGE_SIZE) / 2))
default=$(awk -v b="$half" 'BEGIN { split("B KiB MiB GiB TiB PiB EiB", u, " "); k = 1;
    while (b >= 1024 && k < 7) { b /= 1024; k++ } if (k == 1) printf "%d B", b; else printf "%.1f %s", b, u[k] }')

hostile="would need [0-9.]+ TiB \(live peak 1\.2 TiB, largest request 4\.0 GiB, heap 9\.4 TiB\), more than --max-memory"
for cmd in replay size; do
    mkdir -p "$TMP/csv-$cmd"
    run "big-$cmd" trace "$cmd" "$TMP/big.rtt" --csv "$TMP/csv-$cmd"
    check "big.rtt refused by trace $cmd at the default limit" refused "big-$cmd" 1 \
        "^rtbench trace $cmd: .*/big\.rtt: stream 0 $hostile $default \(default: half of physical memory\); refused$"
    run "multi-$cmd" trace "$cmd" "$TMP/multi.rtt" --csv "$TMP/csv-$cmd"
    check "multi.rtt refused by trace $cmd before its small stream" refused "multi-$cmd" 1 "stream 1 $hostile"
    check "no CSV written by the refused trace $cmd" bash -c "[ -z \"\$(ls -A '$TMP/csv-$cmd')\" ]"
    run "claim-ops-$cmd" trace "$cmd" "$TMP/claim_ops.rtt"
    check "2^40 ops claimed: refused by trace $cmd" refused "claim-ops-$cmd" 1 \
        "^rtbench trace $cmd: .*claim_ops\.rtt: stream 0: corrupt \(more ops than the file can hold\)$"
    run "claim-streams-$cmd" trace "$cmd" "$TMP/claim_streams.rtt"
    check "2^32 streams claimed: refused by trace $cmd" refused "claim-streams-$cmd" 1 \
        "claim_streams\.rtt: header: corrupt \(more streams than the file can hold\)$"
    run "loader-$cmd" trace "$cmd" "$TMP/s.rtt" --max-memory 16K
    check "the loader's limit is --max-memory ($cmd)" refused "loader-$cmd" 1 \
        "s\.rtt: .*more than the memory limit of 16384 bytes.* \(--max-memory\)$"
    if [ "$limited" = 1 ]; then
        # past the check, the 9.4 TiB heap cannot be mapped in 4 GiB of address space
        run "raised-$cmd" trace "$cmd" "$TMP/big.rtt" --alloc tlsf --max-memory 64T
        check "--max-memory 64T lets big.rtt past the check ($cmd), its mapping fails" bash -c \
            "[ \"\$(cat '$TMP/raised-$cmd.rc')\" = 1 ] && grep -Eqx 'rtbench trace $cmd: cannot map [0-9]+ MiB' '$TMP/raised-$cmd.err'"
    fi
done

# s.rtt on tlsf: replay takes 2 x 64 MiB = 128 MiB exactly
run low trace replay "$TMP/s.rtt" --alloc tlsf --max-memory 127M
check "s.rtt refused by replay at 127M" refused low 1 \
    "stream 0 would need 128\.0 MiB \(live peak 139\.8 KiB, largest request 3\.0 GiB, heap 64\.0 MiB\), more than --max-memory 127\.0 MiB; refused$"
run at trace replay "$TMP/s.rtt" --alloc tlsf --max-memory 128M --sample 4 --reps 1
check "s.rtt replayed at 128M" ran at
# with a system peer, its blocks count: 128 MiB + live peak + the 3 GiB flagged request
run peer trace replay "$TMP/s.rtt" --alloc tlsf,glibc --max-memory 3G
check "s.rtt with glibc refused at 3G" refused peer 1 "would need 3\.1 GiB .*more than --max-memory 3\.0 GiB; refused$"
# size takes 4 x 64 MiB + live peak + 3 GiB
run size-low trace size "$TMP/s.rtt" --alloc tlsf --max-memory 3G
check "s.rtt refused by size at 3G" refused size-low 1 "would need 3\.3 GiB .*more than --max-memory 3\.0 GiB; refused$"
run size-at trace size "$TMP/s.rtt" --alloc tlsf --max-memory 4G
check "s.rtt sized at 4G" ran size-at

for bad in 0 12Q 1.5G 99999999999999999999 ""; do
    run bad trace replay "$TMP/s.rtt" --max-memory "$bad"
    check "--max-memory '$bad' refused" refused bad 2 "--max-memory needs a size above 0"
done
run help trace size --help
check "trace size --help documents --max-memory" grep -q -- "--max-memory SIZE" "$TMP/help.out"
run help2 --help
check "rtbench --help documents --max-memory" grep -q -- "--max-memory SIZE" "$TMP/help2.out"

echo "trace_limits: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
