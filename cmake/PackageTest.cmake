# cmake/PackageTest.cmake -- ctest "package": installs this build into a scratch prefix, then
# builds and runs two small consumers against the installed files only:
#   1. a CMake project:  find_package(rtalloc 0.1 REQUIRED COMPONENTS core drivers)
#                        target_link_libraries(... rtalloc::drivers rtalloc::rtalloc)
#   2. a plain compile:  cc main.c $(pkg-config --cflags --libs rtalloc-drivers), and the core
#                        alone with $(pkg-config --cflags --libs rtalloc)  (skipped without
#                        pkg-config)
#
# cmake -DBUILD_DIR=... -DWORK_DIR=... -DC_COMPILER=... [-DC_FLAGS=...] [-DEMULATOR=...]
#       [-DCONFIG=...] -DDRIVERS=ON|OFF -P PackageTest.cmake
cmake_minimum_required(VERSION 3.16)

foreach(var BUILD_DIR WORK_DIR C_COMPILER)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "PackageTest.cmake: ${var} not set")
    endif()
endforeach()
separate_arguments(c_flags UNIX_COMMAND "${C_FLAGS}")
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")

function(run)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
        string(REPLACE ";" " " line "${ARGN}")
        message(FATAL_ERROR "package test: `${line}` failed (${rc}):\n${out}")
    endif()
    set(run_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/consumer)
if(CONFIG)
    run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --config ${CONFIG})
else()
    run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
endif()

file(WRITE ${WORK_DIR}/consumer/main.c [=[
#include <stdio.h>
#include <rtalloc/rtalloc.h>
#ifdef WITH_DRIVERS
#include <pthread.h>
#include <rtalloc/drivers.h>
#endif

static _Alignas(16) unsigned char buffer[1u << 16];

int main(void)
{
    rt_heap_t *heap = rt_heap_create(buffer, sizeof buffer);
    if (heap == NULL) {
        return 1;
    }
#ifdef WITH_DRIVERS
    static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    rt_heap_set_lock(heap, rt_pthread_lock, rt_pthread_unlock, &mutex);
#endif
    void *p = rt_heap_malloc(heap, 100);
    if (p == NULL || !rt_heap_check(heap)) {
        return 2;
    }
    rt_heap_free(heap, p);
    size_t count = 0;
    if (rt_registry(&count) == NULL || count == 0) {
        return 3;
    }
    printf("rtalloc %d.%d.%d consumer: ok, %zu allocators\n", RTALLOC_VERSION_MAJOR,
           RTALLOC_VERSION_MINOR, RTALLOC_VERSION_PATCH, count);
    return 0;
}
]=])

# 1. find_package
if(DRIVERS)
    set(components "core drivers")
    set(libs "rtalloc::drivers rtalloc::rtalloc")
    set(defs "WITH_DRIVERS")
else()
    set(components "core")
    set(libs "rtalloc::rtalloc")
    set(defs "")
endif()
file(WRITE ${WORK_DIR}/consumer/CMakeLists.txt "
cmake_minimum_required(VERSION 3.16)
project(rtalloc_consumer LANGUAGES C)
set(CMAKE_C_STANDARD 11)
find_package(rtalloc 0.1 REQUIRED COMPONENTS ${components})
add_executable(consumer main.c)
target_compile_definitions(consumer PRIVATE ${defs})
target_link_libraries(consumer PRIVATE ${libs})
")
run(${CMAKE_COMMAND} -S ${WORK_DIR}/consumer -B ${WORK_DIR}/consumer-build
    -DCMAKE_C_COMPILER=${C_COMPILER} "-DCMAKE_C_FLAGS=${C_FLAGS}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run(${emulator} ${WORK_DIR}/consumer-build/consumer)
message(STATUS "find_package consumer: ${run_output}")

# 2. pkg-config
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG_EXECUTABLE)
    message(STATUS "pkg-config not found: pkg-config consumers skipped")
    return()
endif()
file(GLOB pcdir LIST_DIRECTORIES true ${prefix}/lib*/pkgconfig ${prefix}/lib/*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
set(ENV{PKG_CONFIG_LIBDIR} "${pcdir}")
set(packages rtalloc)
if(DRIVERS)
    list(APPEND packages rtalloc-drivers)
endif()
foreach(pkg IN LISTS packages)
    run(${PKG_CONFIG_EXECUTABLE} --cflags --libs ${pkg})
    separate_arguments(pc_flags UNIX_COMMAND "${run_output}")
    string(REGEX MATCH "-L([^ \n]+)" _ "${run_output}")
    set(exe ${WORK_DIR}/consumer-${pkg})
    set(extra "")
    if(pkg STREQUAL "rtalloc-drivers")
        set(extra -DWITH_DRIVERS)
    endif()
    run(${C_COMPILER} ${c_flags} -std=c11 ${extra} ${WORK_DIR}/consumer/main.c -o ${exe}
        ${pc_flags} -Wl,-rpath,${CMAKE_MATCH_1})
    run(${emulator} ${exe})
    message(STATUS "pkg-config ${pkg} consumer: ${run_output}")
endforeach()
