// SPDX-License-Identifier: MIT
// fma_shared_cxx.cpp -- C++ objects with virtual functions in a shared FMA region, built by one
// process and called by another: a forked child and an exec'd image of this test
// (`fma_shared_cxx --exec-child KEY PTR`).
//
// The article's requirement: "Classes containing virtual functions maintain a virtual function
// table that had to reside on the same address location for all processes." An object in the
// region holds the absolute address of its class's vtable, so (1) the region must be mapped at
// the same address everywhere -- the region does that -- and (2) the program image holding the
// vtables must be loaded at the same address in every process. A forked child has that for
// free; an exec'd process only if the executable is not position independent (or ASLR is off):
// this test is linked with -no-pie (tests/CMakeLists.txt), and the exec'd image checks that the
// vtable pointer stored by the parent equals its own before calling through it.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cxxcheck.hpp"
#include "fma_segment.h"
#include "rtalloc/fma_region.h"

namespace {

constexpr int skip_status = 77;

struct shape {
    virtual ~shape() = default;
    virtual long area() const = 0;
    virtual const char *name() const = 0;
};

struct square final : shape {
    explicit square(long s) : side(s) {}
    long area() const override { return side * side; }
    const char *name() const override { return "square"; }
    long side;
};

struct rectangle final : shape {
    rectangle(long w, long h) : width(w), height(h) {}
    long area() const override { return width * height; }
    const char *name() const override { return "rectangle"; }
    long width;
    long height;
};

struct board {
    shape *items[4] = {};
    int count = 0;
};

template <typename T, typename... Args> T *make(rt_fma_region_t *r, Args... args)
{
    void *p = rt_fma_region_alloc(r, sizeof(T));
    return p != nullptr ? new (p) T(args...) : nullptr;
}

void destroy(rt_fma_region_t *r, shape *s)
{
    s->~shape();
    rt_fma_region_free(r, s);
}

const void *vptr(const void *object)
{
    const void *v = nullptr;
    std::memcpy(&v, object, sizeof v);
    return v;
}

int wait_status(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int exec_child(const char *key, const char *ptr_text)
{
    auto *b = reinterpret_cast<board *>(static_cast<std::uintptr_t>(std::strtoull(ptr_text, nullptr, 16)));
    rt_fma_region_t *r = rt_fma_region_init(0, RT_FMA_SHARED, key, false);
    if (!CHECK(r != nullptr, "exec child: attach: %s", rt_fma_region_error())) {
        return 1;
    }
    square mine(1);
    rectangle mine2(1, 1);
    if (CHECK(b->count == 2 && vptr(b->items[0]) == vptr(&mine) && vptr(b->items[1]) == vptr(&mine2),
              "the parent's objects carry this image's vtable addresses (%p / %p): the executable "
              "is loaded at the same address (non-PIE)",
              vptr(b->items[0]), vptr(&mine))) {
        CHECK(b->items[0]->area() == 49 && std::strcmp(b->items[0]->name(), "square") == 0,
              "exec'd process calls the parent's square");
        CHECK(b->items[1]->area() == 15 && std::strcmp(b->items[1]->name(), "rectangle") == 0,
              "exec'd process calls the forked child's rectangle");
        b->items[b->count++] = make<square>(r, 11L);
    }
    CHECK(rt_fma_region_down(r) == 0, "exec child detaches");
    return cxxcheck::failed == 0 ? 0 : 1;
}

void test_shared_objects(const char *exe)
{
    char key[64];
    std::snprintf(key, sizeof key, "t%ld-cxx", static_cast<long>(getpid()));
    rt_fma_region_t *r = rt_fma_region_init(1u << 20, RT_FMA_SHARED, key, true);
    if (!CHECK(r != nullptr, "open: %s", rt_fma_region_error())) {
        return;
    }
    board *b = make<board>(r);
    b->items[b->count++] = make<square>(r, 7L);

    // forked child: calls the parent's object, builds one of its own
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        cxxcheck::passed = cxxcheck::failed = 0;
        CHECK(b->items[0]->area() == 49, "forked child calls the parent's square");
        b->items[b->count++] = make<rectangle>(r, 3L, 5L);
        CHECK(rt_fma_region_down(r) == 0, "forked child detaches");
        std::fflush(stdout);
        _exit(cxxcheck::failed == 0 ? 0 : 1);
    }
    CHECK(wait_status(pid) == 0, "forked child");
    CHECK(b->count == 2 && b->items[1]->area() == 15 && std::strcmp(b->items[1]->name(), "rectangle") == 0,
          "the parent calls the forked child's rectangle");

    // exec'd image: a fresh program, the same executable
    char ptr_text[32];
    std::snprintf(ptr_text, sizeof ptr_text, "%llx",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(b)));
    std::fflush(stdout);
    pid = fork();
    if (pid == 0) {
        char arg0[] = "fma_shared_cxx";
        char arg1[] = "--exec-child";
        char *argv[] = {arg0, arg1, key, ptr_text, nullptr};
        execv(exe, argv);
        std::printf("SKIP exec: execv(%s) failed: %s\n", exe, std::strerror(errno));
        std::fflush(stdout);
        _exit(skip_status);
    }
    int rc = wait_status(pid);
    if (rc == skip_status) {
        cxxcheck::skip("exec'd process (see above)");
    } else if (CHECK(rc == 0, "exec'd child: status %d", rc)) {
        CHECK(b->count == 3 && b->items[2]->area() == 121 && std::strcmp(b->items[2]->name(), "square") == 0,
              "the parent calls the exec'd process's square");
    }
    for (int i = 0; i < b->count; i++) {
        destroy(r, b->items[i]);
    }
    b->~board();
    rt_fma_region_free(r, b);
    rt_stats_t s;
    rt_fma_region_stats(r, &s);
    CHECK(s.used_blocks == 0, "every object destroyed and freed (%zu left)", s.used_blocks);
    CHECK(rt_fma_region_down(r) == 0 && !segment_exists(key), "gone after all detached");
}

} // namespace

int main(int argc, char **argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc == 4 && std::strcmp(argv[1], "--exec-child") == 0) {
        return exec_child(argv[2], argv[3]);
    }
    static char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        std::snprintf(exe, sizeof exe, "%s", argv[0]);
    } else {
        exe[n] = '\0';
    }
    test_shared_objects(exe);
    return cxxcheck::summary("fma_shared_cxx");
}
