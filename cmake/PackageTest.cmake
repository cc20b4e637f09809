# SPDX-License-Identifier: MIT
# cmake/PackageTest.cmake -- ctest "package": installs this build into a scratch prefix, then
# builds and runs two small consumers against the installed files only:
#   1. a CMake project:  find_package(rtalloc 0.1 REQUIRED COMPONENTS core drivers)
#                        target_link_libraries(... rtalloc::drivers rtalloc::rtalloc)
#   3. with C++ (-DCXX=ON): a C++17 CMake project against rtalloc::fma_new and rtalloc/pmr.hpp
#   2. a plain compile:  cc main.c $(pkg-config --cflags --libs rtalloc-drivers), and the core
#                        alone with $(pkg-config --cflags --libs rtalloc)  (skipped without
#                        pkg-config)
# With -DEXAMPLES_DIR=<source>/examples it is the ctest "examples" instead: the same install, then
# the examples/ project (SQLite and Lua on a fixed heap) configured and built against the prefix
# like any application, each program run and its output checked; the consumers above are left
# to "package". Prints "examples: SKIP: ..." (the test's SKIP_REGULAR_EXPRESSION) when neither
# sqlite3 nor lua5.4 can be found and linked through pkg-config.
#
# cmake -DBUILD_DIR=... -DWORK_DIR=... -DC_COMPILER=... [-DC_FLAGS=...] [-DEMULATOR=...]
#       [-DCONFIG=...] -DDRIVERS=ON|OFF [-DCXX=ON -DCXX_COMPILER=...] [-DEXAMPLES_DIR=...]
#       -P PackageTest.cmake
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

# 4. The examples (only with EXAMPLES_DIR, and then only they).
if(EXAMPLES_DIR)
    run(${CMAKE_COMMAND} -S ${EXAMPLES_DIR} -B ${WORK_DIR}/examples-build
        -DCMAKE_C_COMPILER=${C_COMPILER} "-DCMAKE_C_FLAGS=${C_FLAGS} -Werror"
        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
    message(STATUS "examples configured:\n${run_output}")
    run(${CMAKE_COMMAND} --build ${WORK_DIR}/examples-build)
    # What each program must print: its query results, the out-of-memory case handled, the heap
    # empty again at the end, and its own verdict.
    set(expect_sqlite_fixed_heap
        "query: rows=1000 sum_v=47867 last=row 1000"
        "group: v=1 n=21"
        "exhaustion: out of memory after more than 10 rows of 64 KiB"
        "after rollback: big_rows=0"
        "after rollback: rows=1000"
        "heap after close: 0 of [0-9]+ bytes in use, [^\n]*"
        "sqlite_fixed_heap: ok")
    set(expect_lua_fixed_heap
        "result: items 2000, sum 2001000, squares 1 4 9"
        "caught in Lua: not enough memory"
        "uncaught: not enough memory [(]LUA_ERRMEM[)]"
        "still running: 42"
        "heap after lua_close: 0 of [0-9]+ bytes in use, [^\n]*"
        "lua_fixed_heap: ok")
    set(ran 0)
    foreach(example sqlite_fixed_heap lua_fixed_heap)
        set(exe ${WORK_DIR}/examples-build/${example})
        if(NOT EXISTS ${exe})
            message(STATUS "${example}: not built (its library is missing; see above)")
            continue()
        endif()
        run(${emulator} ${exe})
        message(STATUS "${example}:\n${run_output}")
        foreach(line IN LISTS expect_${example})
            if(NOT run_output MATCHES "(^|\n)${line}\n")
                message(FATAL_ERROR "examples: ${example} did not print a line matching \"${line}\"")
            endif()
        endforeach()
        math(EXPR ran "${ran} + 1")
    endforeach()
    if(ran EQUAL 0)
        message("examples: SKIP: neither sqlite3 nor lua5.4 found and linkable through pkg-config "
                "(Debian: libsqlite3-dev liblua5.4-dev, installed by tools/deps.sh)")
    endif()
    return()
endif()

file(WRITE ${WORK_DIR}/consumer/main.c [=[
#include <stdio.h>
#include <rtalloc/rtalloc.h>
#ifdef WITH_DRIVERS
#include <pthread.h>
#include <rtalloc/drivers.h>        /* the former path: a forwarding header */
#include <rtalloc/hosted/drivers.h> /* where it lives */
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

# 3. C++: the pmr adapters over a registry heap, and the region behind operator new
if(CXX AND DRIVERS)
    file(MAKE_DIRECTORY ${WORK_DIR}/consumer-cxx)
    file(WRITE ${WORK_DIR}/consumer-cxx/main.cpp [=[
#include <cstdio>
#include <vector>
#include <rtalloc/fma_new.hpp>
#include <rtalloc/hosted/fma_new.hpp>
#include <rtalloc/hosted/pmr.hpp>
#include <rtalloc/pmr.hpp>

int main()
{
    rtalloc::heap_resource tlsf(rt_registry_find("tlsf"), std::size_t{1} << 20);
    std::pmr::vector<int> v(&tlsf);
    for (int i = 0; i < 10000; i++) {
        v.push_back(i);
    }
    if (v[9999] != 9999) {
        return 1;
    }
    rt_heap_policy = rt_heappolicy{std::size_t{1} << 20, RT_FMA_PRIVATE, 0, false, nullptr};
    void *p = rtalloc::fma_new_allocate(100, 16);
    if (p == nullptr || !rt_fma_region_contains(rtalloc::new_region(), p)) {
        return 2;
    }
    rtalloc::fma_new_release(p);
    std::printf("rtalloc C++ consumer: ok\n");
    return 0;
}
]=])
    file(WRITE ${WORK_DIR}/consumer-cxx/CMakeLists.txt "
cmake_minimum_required(VERSION 3.16)
project(rtalloc_consumer_cxx LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(rtalloc 0.1 REQUIRED COMPONENTS core drivers fma_new)
add_executable(consumer_cxx main.cpp)
target_link_libraries(consumer_cxx PRIVATE rtalloc::fma_new rtalloc::drivers rtalloc::rtalloc)
")
    # Clang links its sanitizer runtimes statically and whole, operator new/delete included:
    # with AddressSanitizer the consumer takes the shared runtime, so that fma_new's operators
    # interpose (as drivers/CMakeLists.txt does in the build tree).
    set(cxx_link "")
    if(CXX_COMPILER MATCHES "clang" AND C_FLAGS MATCHES "-fsanitize=[^ ]*address")
        execute_process(COMMAND ${CXX_COMPILER} -print-resource-dir
            OUTPUT_VARIABLE resource_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
        set(cxx_link "-shared-libsan -Wl,-rpath,${resource_dir}/lib/linux")
    endif()
    run(${CMAKE_COMMAND} -S ${WORK_DIR}/consumer-cxx -B ${WORK_DIR}/consumer-cxx-build
        -DCMAKE_C_COMPILER=${C_COMPILER} "-DCMAKE_C_FLAGS=${C_FLAGS}"
        -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${C_FLAGS}"
        "-DCMAKE_EXE_LINKER_FLAGS=${cxx_link}"
        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
    run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-cxx-build)
    run(${emulator} ${WORK_DIR}/consumer-cxx-build/consumer_cxx)
    message(STATUS "C++ consumer: ${run_output}")
endif()

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
