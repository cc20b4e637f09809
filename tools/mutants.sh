#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/mutants.sh -- mutation testing of the allocators' safety checks: applies each mutant of
# tools/mutants.txt (a check removed, a compare inverted, a bound off by one) to a copy of the tree
# in build/mutants/src, rebuilds it incrementally (Ninja, gcc Release as the `quick` preset) in
# build/mutants/build, runs the mutant's own ctest tests under a time limit, and reports each
# mutant killed / SURVIVED / NOT APPLICABLE / DID NOT BUILD, with a markdown table in
# build/mutants/results.md. The source tree is never written (Ctrl-C restores the copy too).
# Exits non-zero when a mutant survived (or no longer applies, or did not build).
#
#   tools/mutants.sh                 every mutant (144): 16 min 36 s on the 2-core machine with a
#                                    two-job fuzz run beside it (2026-11-29; 14 min 43 s for 134 from
#                                    an empty build/mutants, 2026-11-28, other builds beside it)
#   tools/mutants.sh 'heap.*'        the mutants whose id matches a glob
#   tools/mutants.sh --family fma    one family: heap, index, buddy, fma, tree, wfc
#   tools/mutants.sh --check         no build: every pattern matches the source exactly once and
#                                    every test exists (ctest 'mutants_spec' runs this)
#   tools/mutants.sh --list          the mutants
#   tools/mutants.sh --help          all options (tools/mutants.py)
#
# Needs python3, cmake, gcc (tools/deps.sh installs them) and ninja (apt-get install ninja-build).
set -euo pipefail
exec python3 "$(dirname "${BASH_SOURCE[0]}")/mutants.py" "$@"
