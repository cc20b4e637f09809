#!/usr/bin/env bash
# deps.sh -- installs what a part of the project needs, on Debian/Ubuntu (apt-get
# --no-install-recommends; sudo unless root). Nothing is installed when all is present.
#
#   tools/deps.sh bench
#
# bench: required cmake gcc make valgrind python3 python3-matplotlib libjemalloc-dev
#        libmimalloc-dev (rtbench dlopen()s the peers; a missing one is skipped at run time);
#        optional gcc-arm-none-eabi (footprint), libatomic-ops-dev (aomalloc),
#        gcc-riscv64-unknown-elf qemu-system-arm qemu-system-misc (on-target study).
# Exit status 0 when everything required is present or was installed; an optional package that
# fails to install is reported and does not fail it.
#
# Minimal version written for bench.sh (issue 13); the lead merges it with the full one.
set -uo pipefail

what=${1:-}
if [ "$what" != bench ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi

have_lib() { # a shared library by soname, as the dynamic loader would find it
    { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q "^[[:space:]]*$1 "
}
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import matplotlib' >/dev/null 2>&1 || /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1 ||
    missing+=(python3-matplotlib)
have_lib libjemalloc.so.2 || missing+=(libjemalloc-dev)
have_lib libmimalloc.so.2 || missing+=(libmimalloc-dev)
optional=()
command -v arm-none-eabi-gcc >/dev/null 2>&1 || optional+=(gcc-arm-none-eabi)
[ -e /usr/include/atomic_ops_malloc.h ] || optional+=(libatomic-ops-dev)
command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 || optional+=(gcc-riscv64-unknown-elf)
command -v qemu-system-arm >/dev/null 2>&1 || optional+=(qemu-system-arm)
command -v qemu-system-riscv32 >/dev/null 2>&1 || optional+=(qemu-system-misc)

[ $((${#missing[@]} + ${#optional[@]})) -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps.sh: no apt-get; please install: ${missing[*]} (optional: ${optional[*]})" >&2
    [ ${#missing[@]} -eq 0 ]
    exit
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "deps.sh: installing ${missing[*]} ${optional[*]}" >&2
$SUDO apt-get update || echo "deps.sh: apt-get update failed" >&2
rc=0
if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}" || rc=1
fi
for pkg in "${optional[@]}"; do # one at a time: one that fails leaves the others
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "$pkg" ||
        echo "deps.sh: could not install optional $pkg (gcc-arm-none-eabi: no footprint;" \
             "libatomic-ops-dev: aomalloc unavailable; cross compilers, qemu: no on-target study)" >&2
done
exit "$rc"
