# SPDX-License-Identifier: MIT
# tests/tools/tiers.cmake -- every ctest of a build carries exactly one tier label (the ctest
# `tiers`; the tiers are described at the top of tests/CMakeLists.txt).
#
#   cmake -DCTEST=ctest -DBUILD_DIR=DIR -DTIERS="unit;contract;stress;tools" -P tests/tools/tiers.cmake
#
# Lists the build's tests (ctest -N), then each tier's (ctest -N -L ^TIER$), and fails naming every
# test found in no tier or in more than one. Prints the count of each tier: their sum is the total
# when it passes.
foreach(var CTEST BUILD_DIR TIERS)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "tiers.cmake: -D${var}=... is missing")
    endif()
endforeach()

# list_tests(OUT [ctest arguments]): the names ctest -N lists
function(list_tests out)
    execute_process(COMMAND ${CTEST} -N ${ARGN} WORKING_DIRECTORY ${BUILD_DIR}
        OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "tiers: ctest -N ${ARGN} failed (${rc}): ${err}")
    endif()
    string(REGEX MATCHALL "Test +#[0-9]+: [^\n]+" lines "${text}")
    set(names "")
    foreach(line IN LISTS lines)
        string(REGEX REPLACE "^Test +#[0-9]+: " "" name "${line}")
        string(STRIP "${name}" name)
        list(APPEND names ${name})
    endforeach()
    set(${out} ${names} PARENT_SCOPE)
endfunction()

list_tests(all)
list(LENGTH all total)
if(total EQUAL 0)
    message(FATAL_ERROR "tiers: no tests in ${BUILD_DIR}")
endif()

set(summary "")
set(sum 0)
foreach(tier IN LISTS TIERS)
    list_tests(in_tier -L "^${tier}$")
    list(LENGTH in_tier n)
    math(EXPR sum "${sum} + ${n}")
    string(APPEND summary " ${tier} ${n}")
    foreach(name IN LISTS in_tier)
        list(APPEND tiers_of_${name} ${tier})
    endforeach()
endforeach()

set(bad "")
foreach(name IN LISTS all)
    list(LENGTH tiers_of_${name} n)
    if(NOT n EQUAL 1)
        string(APPEND bad "\n  ${name}: ${n} tier labels (${tiers_of_${name}})")
    endif()
endforeach()

message("tiers: ${total} tests:${summary}")
if(NOT bad STREQUAL "" OR NOT sum EQUAL total)
    message(FATAL_ERROR "tiers: every test needs exactly one label of ${TIERS} (tests/CMakeLists.txt, "
                        "rtalloc_add_test and rtalloc_test_tier):${bad}")
endif()
