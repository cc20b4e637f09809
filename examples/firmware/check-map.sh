#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/firmware/check-map.sh -- checks a firmware's link map: malloc is rtalloc's shim, and
# none of the C library's own allocator objects is linked.
#
# Usage: examples/firmware/check-map.sh newlib|picolibc MAP...
#
# The C library's allocator, by archive member:
#   newlib     lib_a-nano-mallocr.o, lib_a-mallocr.o and their siblings that hold the allocator
#              (freer, reallocr, callocr, malignr, msizer, mallinfor, mallstatsr), the plain
#              wrappers (lib_a-malloc.o, ...), and its heap's _sbrk (lib_a-sbrkr.o,
#              lib_a-syssbrk.o)
#   picolibc   nano-malloc-<malloc, free, realloc, calloc, memalign, ...>.c.o and sbrk
#              (libc_picolib_picosbrk.c.o)
# Not counted: the wrappers that only call the shim (valloc, pvalloc, mallopt, reallocf, ...).
# Linked means named in the map at all: an archive member the linker took, even one whose
# sections --gc-sections then dropped. And the shim must be there: the sections of malloc (and,
# newlib, _malloc_r) come from rtalloc_libc.c's object. Exits 1 on any failure.
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: check-map.sh newlib|picolibc MAP..." >&2
    exit 2
fi
libc=$1
shift
case "$libc" in
    newlib)
        own='\(lib_a-(nano-)?(mallocr|freer|reallocr|callocr|malignr|msizer|mallinfor|mallstatsr)\.o\)|\(lib_a-(malloc|free|realloc|calloc|malign|msize|sbrkr|syssbrk)\.o\)'
        entries=(malloc _malloc_r)
        ;;
    picolibc)
        own='\((nano-)?malloc-(malloc|free|realloc|calloc|memalign|posix_memalign|malloc_usable_size|mallinfo|malloc_stats|cfree)\.c\.o\)|\(libc_picolib_picosbrk\.c\.o\)'
        entries=(malloc)
        ;;
    *)
        echo "check-map.sh: unknown C library '$libc' (newlib, picolibc)" >&2
        exit 2
        ;;
esac

status=0
for map in "$@"; do
    name=$(basename "$map")
    ok=1
    if [ ! -s "$map" ]; then
        echo "check-map: FAIL: $map: no map file" >&2
        status=1
        continue
    fi
    linked=$(grep -Eo "$own" "$map" | sort -u | tr '\n' ' ' || true)
    if [ -n "$linked" ]; then
        echo "check-map: FAIL: $name: the C library's allocator is linked: $linked" >&2
        ok=0
    fi
    for entry in "${entries[@]}"; do
        # the input section .text.<entry>: its object on the same line or, for a long name, the next
        object=$(grep -A1 -E "^ \.text\.$entry([[:space:]]|$)" "$map" | grep -Eo '[^ /]*rtalloc_libc\.c\.obj?' | head -1 || true)
        if [ -z "$object" ]; then
            echo "check-map: FAIL: $name: $entry is not rtalloc_libc.c's" >&2
            ok=0
        fi
    done
    if [ "$ok" -eq 1 ]; then
        echo "check-map: ok  $name: ${entries[*]} from rtalloc_libc.c; no object of $libc's allocator"
    else
        status=1
    fi
done
exit "$status"
