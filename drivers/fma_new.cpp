// SPDX-License-Identifier: MIT
// drivers/fma_new.cpp -- global operator new/delete over an FMA region (rtalloc/fma_new.hpp).
//
// Built as its own library (rtalloc_fma_new): a program that links it gets these operators in
// place of the standard library's; nothing else in rtalloc depends on it. Only constant-
// initialised state here (atomics, a PTHREAD_MUTEX_INITIALIZER mutex), because operator new can
// run before any dynamic initialiser.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>

#include <pthread.h>

#include "rtalloc/fma_new.hpp"

// The library's default policy: no region. Weak, so that a program's own definition (with its
// own initialiser, in place before any constructor runs) replaces it.
__attribute__((weak)) rt_heappolicy rt_heap_policy = {0, 0, 0, false, nullptr};

namespace {

pthread_mutex_t open_mutex = PTHREAD_MUTEX_INITIALIZER;
std::atomic<rt_fma_region_t *> active{nullptr};
// The range of the region last removed by remove_now: deletes into it are ignored.
std::atomic<std::uintptr_t> removed_lo{0};
std::atomic<std::uintptr_t> removed_hi{0};

struct lock_guard {
    lock_guard() { (void)pthread_mutex_lock(&open_mutex); }
    ~lock_guard() { (void)pthread_mutex_unlock(&open_mutex); }
    lock_guard(const lock_guard &) = delete;
    lock_guard &operator=(const lock_guard &) = delete;
};

// The region new should use: *failed is set when the policy asks for one that cannot be opened.
rt_fma_region_t *region_for_new(bool *failed) noexcept
{
    *failed = false;
    rt_fma_region_t *r = active.load(std::memory_order_acquire);
    if (r != nullptr || rt_heap_policy.size == 0) {
        return r;
    }
    lock_guard guard;
    r = active.load(std::memory_order_acquire);
    if (r == nullptr && rt_heap_policy.size != 0) {
        char key[RT_FMA_CHAR_KEY_MAX];
        const char *name = rt_heap_policy.name;
        if (name == nullptr) {
            name = rt_fma_char_key(rt_heap_policy.key, key);
        }
        r = rt_fma_region_init(rt_heap_policy.size, rt_heap_policy.flags, name, true);
        if (r == nullptr) {
            *failed = true;
            return nullptr;
        }
        active.store(r, std::memory_order_release);
    }
    return r;
}

void *allocate(std::size_t size, std::size_t align) noexcept
{
    std::size_t n = size != 0 ? size : 1;
    bool failed = false;
    rt_fma_region_t *r = region_for_new(&failed);
    if (failed) {
        return nullptr;
    }
    if (r != nullptr) {
        return align <= alignof(std::max_align_t) ? rt_fma_region_alloc(r, n) : rt_fma_region_memalign(r, align, n);
    }
    if (align <= alignof(std::max_align_t)) {
        return std::malloc(n);
    }
    void *p = nullptr;
    return posix_memalign(&p, align, n) == 0 ? p : nullptr;
}

void remove_region() noexcept
{
    lock_guard guard;
    rt_fma_region_t *r = active.exchange(nullptr, std::memory_order_acq_rel);
    rt_heap_policy.remove_now = false;
    rt_heap_policy.size = 0;
    if (r == nullptr) {
        return;
    }
    rt_fma_region_info_t info;
    rt_fma_region_info(r, &info);
    removed_lo.store(reinterpret_cast<std::uintptr_t>(info.base), std::memory_order_relaxed);
    removed_hi.store(reinterpret_cast<std::uintptr_t>(info.base) + info.size, std::memory_order_relaxed);
    (void)rt_fma_region_down(r);
}

void release(void *p) noexcept
{
    if (p != nullptr) {
        rt_fma_region_t *r = active.load(std::memory_order_acquire);
        auto a = reinterpret_cast<std::uintptr_t>(p);
        if (r != nullptr && rt_fma_region_contains(r, p)) {
            rt_fma_region_free(r, p);
        } else if (a >= removed_lo.load(std::memory_order_relaxed) && a < removed_hi.load(std::memory_order_relaxed)) {
            // its region is gone: nothing to give back
        } else {
            std::free(p);
        }
    }
    if (rt_heap_policy.remove_now) {
        remove_region();
    }
}

} // namespace

rt_fma_region_t *rtalloc::new_region() noexcept { return active.load(std::memory_order_acquire); }

void *rtalloc::fma_new_allocate(std::size_t size, std::size_t alignment) noexcept { return allocate(size, alignment); }

void rtalloc::fma_new_release(void *ptr) noexcept { release(ptr); }

#if !defined(RTALLOC_FMA_NEW_NO_OPERATORS)
namespace {

void *allocate_or_throw(std::size_t size, std::size_t align)
{
    for (;;) {
        void *p = allocate(size, align);
        if (p != nullptr) {
            return p;
        }
        std::new_handler handler = std::get_new_handler();
        if (handler == nullptr) {
            throw std::bad_alloc();
        }
        handler();
    }
}

void *allocate_nothrow(std::size_t size, std::size_t align) noexcept
{
    try {
        return allocate_or_throw(size, align);
    } catch (...) {
        return nullptr;
    }
}

constexpr std::size_t plain = alignof(std::max_align_t);

} // namespace

void *operator new(std::size_t n) { return allocate_or_throw(n, plain); }
void *operator new[](std::size_t n) { return allocate_or_throw(n, plain); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return allocate_nothrow(n, plain); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return allocate_nothrow(n, plain); }
void *operator new(std::size_t n, std::align_val_t a) { return allocate_or_throw(n, static_cast<std::size_t>(a)); }
void *operator new[](std::size_t n, std::align_val_t a) { return allocate_or_throw(n, static_cast<std::size_t>(a)); }
void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    return allocate_nothrow(n, static_cast<std::size_t>(a));
}
void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
    return allocate_nothrow(n, static_cast<std::size_t>(a));
}

void operator delete(void *p) noexcept { release(p); }
void operator delete[](void *p) noexcept { release(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { release(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { release(p); }
void operator delete(void *p, std::size_t) noexcept { release(p); }
void operator delete[](void *p, std::size_t) noexcept { release(p); }
void operator delete(void *p, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, std::align_val_t) noexcept { release(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { release(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { release(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { release(p); }
#endif // !RTALLOC_FMA_NEW_NO_OPERATORS
