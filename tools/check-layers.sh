#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/check-layers.sh -- the core's sources form a staircase: a file may include a private
# header only from its own directory or from a layer below its own (doc/design.md, "Layers").
# Bottom to top:
#
#   0 base/                         hooks, error delivery, bit helpers
#   1 block/                        block verbs and tags
#   2 front/                        what every allocator does the same way
#   3 index/                        free-block indexes (know blocks only through block/)
#   4 heap/ buddy/ waitfree/ fma/   the allocators (none includes another: sideways is upward too)
#   5 mcheap/                       allocators built of the ones below through their public API
#   6 registry/                     every allocator's descriptor
#
# Public headers ("rtalloc/...", include/) and system headers (<...>) are allowed everywhere.
# A directory under src/ that is not in the table is an error, so a new one must be placed.
# Sources are .c and .h only: an included file named otherwise (.inc, .inl, .def) hides its
# functions from ctags and editors, and is an error too.
#
# Usage: tools/check-layers.sh [SRC_DIR]   (default: src/ next to this script)
# Prints each offending line (file:line: text -- why) and exits 1 if there is any, else 0.
set -euo pipefail

src=${1:-"$(dirname "${BASH_SOURCE[0]}")/../src"}
declare -A layer=([base]=0 [block]=1 [front]=2 [index]=3 [heap]=4 [buddy]=4 [waitfree]=4 [fma]=4 [mcheap]=5 [registry]=6)

bad=0
checked=0
while IFS= read -r -d '' file; do
    rel=${file#"$src"/}
    dir=${rel%%/*}
    if [ "$dir" = "$rel" ]; then # a file directly under src/ (CMakeLists.txt): no layer
        continue
    fi
    if [ -z "${layer[$dir]+x}" ]; then
        echo "$rel: directory src/$dir/ has no layer in tools/check-layers.sh" >&2
        bad=1
        continue
    fi
    case "$rel" in
    *.c | *.h) ;;
    *)
        echo "src/$rel: not a .c or .h file: ctags and editors do not index it (name it .h)" >&2
        bad=1
        continue
        ;;
    esac
    checked=$((checked + 1))
    while IFS= read -r hit; do
        line=${hit%%:*}
        text=${hit#*:}
        target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1/' <<<"$text")
        tdir=${target%%/*}
        if [ "$tdir" = "$target" ] || [ "$tdir" = "$dir" ] || [ "$tdir" = rtalloc ]; then
            continue # same directory, or the public headers
        fi
        if [ -z "${layer[$tdir]+x}" ]; then
            echo "src/$rel:$line:$text -- $tdir/ is not a layer" >&2
            bad=1
        elif [ "${layer[$tdir]}" -ge "${layer[$dir]}" ]; then
            why=upward
            [ "${layer[$tdir]}" -eq "${layer[$dir]}" ] && why=sideways
            echo "src/$rel:$line:$text -- $why: $dir/ (layer ${layer[$dir]}) includes $tdir/ (layer ${layer[$tdir]})" >&2
            bad=1
        fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.inc' -o -name '*.inl' -o -name '*.def' \) \
             -print0 | sort -z)

if [ "$checked" -eq 0 ]; then
    echo "check-layers: no sources under $src" >&2
    exit 1
fi
if [ "$bad" -ne 0 ]; then
    echo "check-layers: FAIL" >&2
    exit 1
fi
echo "check-layers: $checked files, every include goes down the staircase"
