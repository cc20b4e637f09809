# SPDX-License-Identifier: MIT
# RV32IMAC bare metal (riscv64-unknown-elf-gcc, -march=rv32imac_zicsr -mabi=ilp32), for QEMU virt --
# the port in ports/rv32.
#
#   cmake -S . -B build/rv32 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-rv32.cmake
#   cmake --build build/rv32 && ctest --test-dir build/rv32
#
# Builds the core, the port (ports/) and the on-target tests, run under qemu-system-riscv32. The
# toolchain ships no libc: -ffreestanding, and the port supplies the few C functions the tests use.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "-march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany -ffreestanding")
set(CMAKE_ASM_FLAGS_INIT "-march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(RTALLOC_PORT rv32 CACHE STRING "The bare-metal port (ports/<name>) to build and test")
