// SPDX-License-Identifier: MIT
// fma_new.cpp -- rtalloc_fma_new: the article's C++ interface (Listings One and Two). Global
// operator new/delete go to an FMA region once the policy is set, and back: by address range
// and by the region's statistics; objects made before the policy are freed with free; the
// aligned, sized, array and nothrow forms; std::bad_alloc and the new-handler on exhaustion;
// remove_now detaches (private) and removes the shared segment of the last process. The same
// routing is first driven through the functions the operators call (rtalloc::fma_new_allocate /
// fma_new_release): in a clang + ThreadSanitizer build the library has no operators (the TSan
// runtime defines them, statically), and only that part runs; the rest prints SKIP.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cxxcheck.hpp"
#include "fma_segment.h"
#include "rtalloc/fma_new.hpp"

namespace {

std::size_t used_blocks()
{
    rt_stats_t s{};
    rt_fma_region_stats(rtalloc::new_region(), &s);
    return s.used_blocks;
}

bool in_region(const void *p) { return rt_fma_region_contains(rtalloc::new_region(), p); }

void test_entry_points()
{
    void *early = rtalloc::fma_new_allocate(100, 16); // no policy yet: the system heap
    CHECK(early != nullptr && rtalloc::new_region() == nullptr, "no policy: system heap");
    rt_heap_policy = {1u << 20, RT_FMA_PRIVATE, 2, false, nullptr};
    void *p = rtalloc::fma_new_allocate(100, 16);
    if (!CHECK(p != nullptr && in_region(p), "the first allocation opens the region: %s", rt_fma_region_error())) {
        return;
    }
    void *a = rtalloc::fma_new_allocate(100, 512);
    CHECK(in_region(a) && (reinterpret_cast<std::uintptr_t>(a) & 511) == 0, "aligned to 512");
    CHECK(rtalloc::fma_new_allocate(2u << 20, 16) == nullptr, "larger than the region: nullptr");
    rtalloc::fma_new_release(early); // std::free: a sanitizer would catch a wrong route
    CHECK(used_blocks() == 2, "releasing a system-heap block leaves the region alone");
    rtalloc::fma_new_release(a);
    rt_heap_policy.remove_now = true;
    rtalloc::fma_new_release(p);
    CHECK(rtalloc::new_region() == nullptr && rt_heap_policy.size == 0, "remove_now: region gone");

    char key[64];
    std::snprintf(key, sizeof key, "t%ld-entry", static_cast<long>(getpid()));
    rt_heap_policy = {1u << 20, RT_FMA_SHARED, 0, false, key};
    auto *shared = static_cast<long *>(rtalloc::fma_new_allocate(sizeof(long), 16));
    if (!CHECK(shared != nullptr && in_region(shared) && segment_exists(key), "shared: %s", rt_fma_region_error())) {
        return;
    }
    *shared = 1;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        cxxcheck::passed = cxxcheck::failed = 0;
        (*shared)++;
        void *mine = rtalloc::fma_new_allocate(32, 16);
        CHECK(in_region(mine), "child allocates in the inherited region");
        rt_heap_policy.remove_now = true;
        rtalloc::fma_new_release(mine);
        CHECK(rtalloc::new_region() == nullptr && segment_exists(key), "the child detached only");
        std::fflush(stdout);
        _exit(cxxcheck::failed == 0 ? 0 : 1);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
    CHECK(*shared == 2 && used_blocks() == 1, "the parent sees the child's change; its block freed");
    rt_heap_policy.remove_now = true;
    rtalloc::fma_new_release(shared);
    CHECK(rtalloc::new_region() == nullptr && !segment_exists(key), "the last remove_now removes it");
}

#if !defined(RTALLOC_FMA_NEW_NO_OPERATORS)
struct alignas(256) over_aligned {
    char bytes[300];
};

int handler_calls = 0;
void handler()
{
    handler_calls++;
    std::set_new_handler(nullptr); // the next failure throws
}

void test_private()
{
    // Before the policy: the system heap.
    int *early = new int(5);
    auto *early_text = new std::string(200, 'e');
    CHECK(rtalloc::new_region() == nullptr, "no region before the policy");

    // Listing Two: a private heap of 1 MiB, created by the first new.
    rt_heap_policy = {1u << 20, RT_FMA_PRIVATE, 1, false, nullptr};
    int *ip = new int(7);
    if (!CHECK(rtalloc::new_region() != nullptr && in_region(ip), "the first new opens the region: %s",
               rt_fma_region_error())) {
        return;
    }
    std::size_t base = used_blocks();
    CHECK(base == 1, "one block in the region (%zu)", base);
    delete early; // not from the region: std::free
    delete early_text;
    CHECK(used_blocks() == base, "deleting system-heap objects leaves the region alone");

    int *array = new int[1000];
    CHECK(in_region(array) && used_blocks() == base + 1, "new[] in the region");
    delete[] array;
    auto *big = new over_aligned;
    CHECK(in_region(big) && (reinterpret_cast<std::uintptr_t>(big) & 255) == 0, "aligned new: 256");
    delete big;
    auto *bigs = new over_aligned[3];
    CHECK(in_region(bigs) && (reinterpret_cast<std::uintptr_t>(bigs) & 255) == 0, "aligned new[]");
    delete[] bigs;
    char *nt = new (std::nothrow) char[100];
    CHECK(nt != nullptr && in_region(nt), "nothrow new");
    delete[] nt;
    void *raw = ::operator new(48);
    void *raw_aligned = ::operator new (48, std::align_val_t{128}, std::nothrow);
    CHECK(raw_aligned != nullptr && in_region(raw_aligned), "aligned nothrow new");
#if defined(__cpp_sized_deallocation)
    ::operator delete(raw, 48);                                 // sized
    ::operator delete (raw_aligned, 48, std::align_val_t{128}); // sized aligned
#else
    ::operator delete(raw);
    ::operator delete (raw_aligned, std::align_val_t{128});
    std::printf("(no sized deallocation in this compiler mode: unsized forms)\n");
#endif
    {
        std::vector<int> v;
        for (int i = 0; i < 20000; i++) {
            v.push_back(i);
        }
        std::string s(5000, 's');
        CHECK(in_region(v.data()) && in_region(s.data()) && v[19999] == 19999,
              "standard containers live in the region");
    }
    CHECK(used_blocks() == base, "every delete went back to the region (%zu)", used_blocks());

    // Exhaustion: bad_alloc, nullptr for nothrow, the new-handler called first.
    bool thrown = false;
    try {
        char *volatile huge = new char[2u << 20]; // volatile: not elided ([expr.new]/10)
        delete[] huge;
    } catch (const std::bad_alloc &) {
        thrown = true;
    }
    CHECK(thrown, "a request larger than the region throws std::bad_alloc");
    char *volatile none = new (std::nothrow) char[2u << 20];
    CHECK(none == nullptr, "nothrow: nullptr");
    std::set_new_handler(handler);
    thrown = false;
    try {
        char *volatile huge = new char[4u << 20];
        delete[] huge;
    } catch (const std::bad_alloc &) {
        thrown = true;
    }
    CHECK(thrown && handler_calls == 1, "the new-handler runs once before bad_alloc (%d)", handler_calls);
    CHECK(rt_fma_region_check(rtalloc::new_region()), "region consistent");

    // remove_now: the next delete detaches the region (and destroys it: private).
    int *stale = new int(1);
    rt_heap_policy.remove_now = true;
    delete ip;
    CHECK(rtalloc::new_region() == nullptr && rt_heap_policy.size == 0 && !rt_heap_policy.remove_now,
          "remove_now: the region is gone and the policy consumed");
    delete stale; // its region is gone: ignored
    int *after = new int(3);
    CHECK(after != nullptr && rtalloc::new_region() == nullptr, "later news use the system heap");
    delete after;
}

void test_shared()
{
    char key[64];
    std::snprintf(key, sizeof key, "t%ld-new", static_cast<long>(getpid()));
    rt_heap_policy = {1u << 20, RT_FMA_SHARED, 0, false, key};
    long *shared = new long(41);
    if (!CHECK(rtalloc::new_region() != nullptr && in_region(shared) && segment_exists(key),
               "shared policy: region created: %s", rt_fma_region_error())) {
        return;
    }
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        cxxcheck::passed = cxxcheck::failed = 0;
        (*shared)++;
        long *mine = new long(100);
        CHECK(in_region(mine), "the forked child's new goes to the inherited region");
        rt_heap_policy.remove_now = true;
        delete mine; // detaches the child only
        CHECK(rtalloc::new_region() == nullptr && segment_exists(key),
              "the child detached; the parent keeps the segment");
        std::fflush(stdout);
        _exit(cxxcheck::failed == 0 ? 0 : 1);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child");
    CHECK(*shared == 42, "the parent sees the child's change");
    CHECK(used_blocks() == 1, "the child's object was freed into the shared region");
    rt_heap_policy.remove_now = true;
    delete shared;
    CHECK(rtalloc::new_region() == nullptr && !segment_exists(key),
          "remove_now in the last process removes the segment");
}

#endif // !RTALLOC_FMA_NEW_NO_OPERATORS

} // namespace

int main()
{
    test_entry_points();
#if !defined(RTALLOC_FMA_NEW_NO_OPERATORS)
    test_private();
    test_shared();
#else
    cxxcheck::skip("operator new/delete forms: this build's library has no global operators "
                   "(clang's ThreadSanitizer runtime defines them, linked statically); their "
                   "routing was tested through fma_new_allocate/fma_new_release above");
#endif
    return cxxcheck::summary("fma_new");
}
