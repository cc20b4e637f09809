#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/tools/dropin_programs.sh -- real programs under the drop-in malloc (doc/malloc.md, "Real programs").
#
#   dropin_programs.sh <librtalloc-malloc.so> <registry_names> <workloads/programs dir> \
#                      <sqlite3> <lua5.4> <python3>
#
# For every allocator of the families heap, buddy and pages (the list comes from the registry
# through tests/tools/registry_names, never written here), each of the three deterministic workloads of
# workloads/programs/ runs under LD_PRELOAD=librtalloc-malloc.so with RTALLOC=<allocator>, and its
# stdout and exit status must equal those of the same run on the system malloc (no preload). The
# runs set RTALLOC_ON_ERROR=abort: a real program never frees a bad pointer, so any report of the
# allocator (a false positive of its checks, or a bug of ours that corrupted a header) stops the
# program with a signal, and the test says which allocator and program. They also set
# RTALLOC_STATS=1: the statistics line on stderr at exit proves that the preload took, with the
# allocator asked for, and gives the peak printed beside each result.
#
# Then out of memory: each interpreter starts in a small heap (OOM_HEAP) and asks for more than it
# holds, three times -- "fill": 1 MiB requests until none fits; "huge": one request far above the
# heap; "workload": its workload in a 4 MiB heap (WORKLOAD_OOM_HEAP). It must report its own
# out-of-memory error (Python MemoryError, SQLite "out of memory", Lua "not enough memory") and
# exit with a non-zero status that is not a signal: the allocator returned
# NULL cleanly and the program was left in a state to say so. These runs keep
# RTALLOC_ON_ERROR=abort as well: a request that cannot be met is not bad input, and must return
# NULL (ENOMEM) without a report.
#
# Environment knobs (for replaying one case by hand):
#   DROPIN_ALLOCATORS="tlsf buddy"  only these allocators
#   DROPIN_PROGRAMS="sql lua"       only these programs (sql, lua, py, pyraw)
#   DROPIN_HEAP=256M                heap of the workload runs (RTALLOC_HEAP)
#   OOM_HEAP=32M                    heap of the out-of-memory snippets
#   WORKLOAD_OOM_HEAP=4M            heap of the workloads run out of memory
#   DROPIN_KEEP=1                   keep the scratch directory with every run's stdout and stderr
#
# Exit status: 0 all passed, 1 any failure, 77 skipped (a program or the library missing: CI
# installs sqlite3, lua5.4 and python3 through tools/deps.sh, so there it never skips).
set -u

if [ $# -ne 6 ]; then
    echo "usage: $0 <librtalloc-malloc.so> <registry_names> <workloads dir>" \
        "<sqlite3> <lua5.4> <python3>" >&2
    exit 2
fi
so=$1 names=$2 dir=$3 sqlite=$4 lua=$5 python=$6
heap=${DROPIN_HEAP:-256M}
oom_heap=${OOM_HEAP:-32M}
workload_oom_heap=${WORKLOAD_OOM_HEAP:-4M}

for prog in "$sqlite" "$lua" "$python"; do
    if [ ! -x "$prog" ]; then
        echo "SKIP: program '$prog' not found (tools/deps.sh installs sqlite3, lua5.4, python3)"
        exit 77
    fi
done
if [ ! -f "$so" ]; then
    echo "SKIP: drop-in library '$so' not built"
    exit 77
fi
for f in workload.sql workload.lua workload.py workload_threads.py; do
    if [ ! -f "$dir/$f" ]; then
        echo "FAIL: $dir/$f missing" >&2
        exit 1
    fi
done

registry=$("$names" heap buddy pages thread-heaps)
if [ -n "${DROPIN_ALLOCATORS:-}" ]; then
    allocators=$DROPIN_ALLOCATORS
else
    allocators=$(echo "$registry" | cut -d' ' -f1 | tr '\n' ' ')
fi
# Allocators whose malloc walks a free list (bound "O(free blocks)": seglist, firstfit, bestfit
# today) skip pyraw: its 8 * 10^6 calls over tens of thousands of free blocks take minutes there
# (seglist 185 s, bestfit over 300 s, loaded machine) -- their stated bound, not a failure. They
# run the three other workloads.
walkers=" $(echo "$registry" | grep ' O(free blocks)' | cut -d' ' -f1 | tr '\n' ' ')"
if [ -z "${allocators// /}" ]; then
    echo "FAIL: no allocator of the families heap, buddy, pages in the registry" >&2
    exit 1
fi
programs=${DROPIN_PROGRAMS:-sql lua py pyraw pyth}

# A guard against a hang, not a measure: the runs take 0.1 to 6 s each here (loaded machine).
if command -v timeout > /dev/null; then
    guard=(timeout 300)
else
    guard=()
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/dropin_programs.XXXXXX")
if [ -z "${DROPIN_KEEP:-}" ]; then
    trap 'rm -rf "$scratch"' EXIT
else
    echo "scratch: $scratch"
fi

# The command line of each workload, into wenv (extra environment) and argv. pyraw is the Python
# workload with pymalloc off (PYTHONMALLOC=malloc): every object, down to the smallest int, is a
# malloc of ours -- about 8 * 10^6 calls instead of 2 * 10^5 -- and its reference run on the
# system malloc sets the same.
workload() {
    wenv=(PYTHONHASHSEED=0)
    case $1 in
    sql) argv=("$sqlite" :memory: ".read $dir/workload.sql") ;;
    lua) argv=("$lua" "$dir/workload.lua") ;;
    py) argv=("$python" "$dir/workload.py") ;;
    pyraw) wenv+=(PYTHONMALLOC=malloc) argv=("$python" "$dir/workload.py") ;;
    # pyth: 4 producer threads hand objects to a consumer thread (most frees are another thread's)
    pyth) wenv+=(PYTHONMALLOC=malloc) argv=("$python" "$dir/workload_threads.py") ;;
    esac
}

# run <tag> <env...> -- <argv...>: runs with stdout and stderr to $scratch/<tag>.{out,err}, and
# sets $rc. The environment never inherits a preload of the caller's (a sanitizer's, say).
run() {
    local tag=$1
    shift
    local envs=()
    while [ "$1" != "--" ]; do
        envs+=("$1")
        shift
    done
    shift
    (
        # The out-of-memory runs ask for memory until refused: should the preload not take (a
        # broken build), the address-space limit stops them long before the machine's memory.
        if [ "$tag" != "${tag#oom.}" ]; then ulimit -v 1048576; fi
        exec env -u LD_PRELOAD -u RTALLOC -u RTALLOC_HEAP -u RTALLOC_ON_ERROR -u RTALLOC_STATS \
            -u RTALLOC_MLOCK -u PYTHONMALLOC -u PYTHONHASHSEED \
            "${envs[@]}" "${guard[@]}" "$@"
    ) > "$scratch/$tag.out" 2> "$scratch/$tag.err" < /dev/null
    rc=$?
}

# The statistics line of librtalloc-malloc (RTALLOC_STATS=1), written at exit:
#   rtalloc-malloc: stats: pid N, allocator NAME, heap N, ..., peak_used N, ..., failures N, ...
preloaded() { # <tag> <allocator>: the run's stderr holds the statistics of that allocator
    grep -q "^rtalloc-malloc: stats: pid [0-9]*, allocator $2," "$scratch/$1.err"
}
stat_of() { # <tag> <field>: the field's value in the statistics line of the run's busiest
    # process (most mallocs): every preloaded process writes one, the wrappers (timeout, env) too,
    # since the line survives a closed stderr
    grep "^rtalloc-malloc: stats: " "$scratch/$1.err" |
        awk -F', ' '{ for (i = 1; i <= NF; i++) if ($i ~ /^mallocs /) { split($i, m, " "); print m[2], $0 } }' |
        sort -n -k1,1 | tail -1 | cut -d' ' -f2- | tr ',' '\n' | sed -n "s/^ *$2 \([0-9]*\)$/\1/p"
}

failed=0 passed=0
fail() {
    echo "FAIL: $*"
    failed=$((failed + 1))
}
show_err() {
    sed -n '1,15s/^/    stderr: /p' "$scratch/$1.err"
}
describe() { # an exit status in words
    if [ "$1" -eq 124 ]; then
        echo "timed out"
    elif [ "$1" -gt 128 ]; then
        echo "killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2> /dev/null))"
    else
        echo "exit status $1"
    fi
}

# 1. The workloads: the same stdout and exit status as on the system malloc.
for p in $programs; do
    workload "$p"
    run "$p.glibc" "${wenv[@]}" -- "${argv[@]}"
    ref_rc=$rc
    if [ "$ref_rc" -ne 0 ]; then
        fail "$p on the system malloc: $(describe "$ref_rc") (the workload itself is broken)"
        show_err "$p.glibc"
        continue
    fi
    for a in $allocators; do
        if { [ "$p" = pyraw ] || [ "$p" = pyth ]; } && [ "$walkers" != "${walkers/ $a /}" ]; then
            echo "skip $p under $a: malloc walks a free list (O(free blocks))"
            continue
        fi
        tag="$p.$a"
        start=$SECONDS
        run "$tag" "${wenv[@]}" RTALLOC="$a" RTALLOC_HEAP="$heap" RTALLOC_ON_ERROR=abort \
            RTALLOC_STATS=1 LD_PRELOAD="$so" -- "${argv[@]}"
        if [ "$rc" -eq 124 ]; then
            fail "$p under $a: timed out"
        elif ! preloaded "$tag" "$a"; then
            fail "$p under $a: no statistics line of $a on stderr: the preload did not take"
            show_err "$tag"
        elif [ "$rc" -ne "$ref_rc" ]; then
            fail "$p under $a: $(describe "$rc"), expected $ref_rc"
            show_err "$tag"
        elif ! cmp -s "$scratch/$p.glibc.out" "$scratch/$tag.out"; then
            fail "$p under $a: stdout differs from the system malloc's"
            diff "$scratch/$p.glibc.out" "$scratch/$tag.out" | head -10 | sed 's/^/    /'
            show_err "$tag"
        else
            passed=$((passed + 1))
            echo "ok   $p under $a ($((SECONDS - start)) s, peak_used $(stat_of "$tag" peak_used))"
        fi
    done
done

# 2. Out of memory. The snippets of "fill" and "huge" print "started" once the interpreter runs,
# then ask for more than the heap (OOM_HEAP) holds ("huge" asks for 800 MB: more than any small
# heap, less than the 1 GiB address-space limit of these runs, so that it succeeds on the system
# malloc). "workload" is the program's workload in WORKLOAD_OOM_HEAP: enough to start the
# interpreter, far too little for the workload (peaks of 5 to 45 MB), so it fails part-way, at a
# point that depends on the allocator. Expected: the interpreter's own out-of-memory message on
# stderr, an exit status in 1..127, a failed request in the statistics, and for the snippets
# "started" on stdout.
oom_case() { # <program> <case>: sets wenv, argv, expect and started (the line to expect or "")
    wenv=() started=started
    case $1.$2 in
    *.workload)
        workload "$1"
        started=""
        case $1 in
        sql) expect="out of memory" ;;
        lua) expect="not enough memory" ;;
        py) expect="MemoryError" ;;
        esac ;;
    sql.fill)
        argv=("$sqlite" -bail :memory: "SELECT 'started';"
            "CREATE TABLE t(b); WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s
             WHERE n < 100000) INSERT INTO t SELECT zeroblob(1048576) FROM s;")
        expect="out of memory" ;;
    sql.huge)
        argv=("$sqlite" -bail :memory: "SELECT 'started';" "SELECT length(randomblob(800000000));")
        expect="out of memory" ;;
    lua.fill)
        argv=("$lua" -e 'io.stdout:setvbuf("no") print("started")
            local t = {} for i = 1, 1e6 do t[i] = string.rep("x", 1048576, tostring(i)) end')
        expect="not enough memory" ;;
    lua.huge)
        argv=("$lua" -e 'io.stdout:setvbuf("no") print("started")
            local s = string.rep("x", 800000000)')
        expect="not enough memory" ;;
    py.fill)
        argv=("$python" -c 'print("started", flush=True)
x = []
while True:
    x.append(bytearray(1 << 20))')
        expect="MemoryError" ;;
    py.huge)
        argv=("$python" -c 'print("started", flush=True)
x = bytearray(800000000)')
        expect="MemoryError" ;;
    esac
}
for p in $programs; do
    [ "$p" = pyraw ] || [ "$p" = pyth ] && continue # the out-of-memory cases of py cover the interpreter
    for c in fill huge workload; do
        oom_case "$p" "$c"
        h=$oom_heap
        [ "$c" = workload ] && h=$workload_oom_heap
        for a in $allocators; do
            tag="oom.$p.$c.$a"
            run "$tag" "${wenv[@]}" RTALLOC="$a" RTALLOC_HEAP="$h" RTALLOC_ON_ERROR=abort \
                RTALLOC_STATS=1 LD_PRELOAD="$so" -- "${argv[@]}"
            if [ "$rc" -eq 0 ] || [ "$rc" -gt 127 ]; then
                fail "$p $c out of memory under $a: $(describe "$rc"), expected a clean error exit"
                show_err "$tag"
            elif [ -n "$started" ] && ! grep -qx "$started" "$scratch/$tag.out"; then
                fail "$p $c out of memory under $a: no \"$started\" in $h ($(describe "$rc"))"
                show_err "$tag"
            elif ! grep -q "$expect" "$scratch/$tag.err"; then
                fail "$p $c out of memory under $a: $(describe "$rc") without \"$expect\" on stderr"
                show_err "$tag"
            elif ! preloaded "$tag" "$a" || [ "$(stat_of "$tag" failures)" = 0 ]; then
                fail "$p $c out of memory under $a: no failed request in the statistics of $a"
                show_err "$tag"
            else
                passed=$((passed + 1))
                echo "ok   $p $c out of memory under $a: $(describe "$rc"), \"$expect\"," \
                    "failures $(stat_of "$tag" failures)"
            fi
        done
    done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
