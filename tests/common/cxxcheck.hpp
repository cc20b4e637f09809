// SPDX-License-Identifier: MIT
// cxxcheck.hpp -- the C++ tests' counterpart of testlib.h: CHECK(cond, "fmt", ...) counts and
// prints "FAIL file:line: (cond) message" on failure; skip() prints "SKIP ..."; summary() prints
// "N passed, N failed" and returns the exit status.
#ifndef RT_CXXCHECK_HPP
#define RT_CXXCHECK_HPP

#include <cstdarg>
#include <cstdio>

namespace cxxcheck {

inline unsigned long passed = 0;
inline unsigned long failed = 0;
inline unsigned long skipped = 0;

__attribute__((format(printf, 5, 6))) inline bool check(bool ok, const char *file, int line, const char *expr,
                                                        const char *fmt, ...)
{
    if (ok) {
        passed++;
        return true;
    }
    failed++;
    std::printf("FAIL %s:%d: (%s) ", file, line, expr);
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
    return false;
}

__attribute__((format(printf, 1, 2))) inline void skip(const char *fmt, ...)
{
    skipped++;
    std::printf("SKIP ");
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
}

inline int summary(const char *name)
{
    std::printf("%s: %lu passed, %lu failed", name, passed, failed);
    if (skipped != 0) {
        std::printf(" (%lu cases skipped)", skipped);
    }
    std::printf("\n%lu passed, %lu failed\n", passed, failed);
    std::fflush(stdout);
    return failed == 0 ? 0 : 1;
}

} // namespace cxxcheck

#define CHECK(cond, ...) cxxcheck::check((cond) ? true : false, __FILE__, __LINE__, #cond, __VA_ARGS__)

#endif // RT_CXXCHECK_HPP
