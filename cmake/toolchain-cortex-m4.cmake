# SPDX-License-Identifier: MIT
# Cortex-M4F bare metal (arm-none-eabi-gcc), for QEMU mps2-an386 -- the port in ports/cortex-m4.
#
#   cmake -S . -B build/m4 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-cortex-m4.cmake
#   cmake --build build/m4 && ctest --test-dir build/m4
#
# Builds the core, the port (ports/) and the on-target tests, run under qemu-system-arm. No libc:
# -ffreestanding, and the port supplies the few C functions the tests use.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY) # no libc to link a test program against
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -ffreestanding")
set(CMAKE_ASM_FLAGS_INIT "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(RTALLOC_PORT cortex-m4 CACHE STRING "The bare-metal port (ports/<name>) to build and test")
