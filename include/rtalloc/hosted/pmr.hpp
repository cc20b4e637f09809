// SPDX-License-Identifier: MIT
// rtalloc/hosted/pmr.hpp -- std::pmr::memory_resource adapters (C++17, header-only; rtalloc/pmr.hpp
// forwards here):
//
//   rtalloc::heap_resource        any allocator of the registry (rtalloc/registry.h): a
//                                 descriptor and a handle the caller owns, or a buffer it owns
//   rtalloc::fma_resource         an FMA instance (rtalloc/fma.h), given or over an owned buffer
//   rtalloc::fma_region_resource  an FMA region (rtalloc/hosted/fma_region.h; rtalloc::drivers)
//
//   rtalloc::heap_resource tlsf(rt_registry_find("tlsf"), 1 << 20);
//   std::pmr::vector<int> v(&tlsf);
//
// allocate(bytes, alignment): alignment up to the allocator's own (descriptor .alignment; FMA
// 16) is a plain malloc; beyond it memalign where the allocator has one, else std::bad_alloc.
// Out of memory => std::bad_alloc. allocate(0) asks for 1 byte. deallocate ignores size and
// alignment (every allocator here finds the block from its pointer). Equality is identity: two
// resources are equal only if they are the same object (memory of one is never freed by another).
// Time: the allocator's own bound (rt_allocator_t::malloc_bound / free_bound) plus a virtual
// call. Thread safety: the handle's -- give it lock hooks (rtalloc/hosted/drivers.h) to share it
// between threads; a region locks itself.
#ifndef RTALLOC_PMR_HPP
#define RTALLOC_PMR_HPP

// std::pmr and aligned new are C++17: say so, instead of the compiler's errors deep inside.
#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define RTALLOC_PMR_CPLUSPLUS _MSVC_LANG
#else
#define RTALLOC_PMR_CPLUSPLUS __cplusplus
#endif
#if RTALLOC_PMR_CPLUSPLUS < 201703L
#error "rtalloc/hosted/pmr.hpp needs C++17 (std::pmr): compile with -std=c++17 or later"
#else // the whole header: under C++14 the one error above, not dozens from inside it
#undef RTALLOC_PMR_CPLUSPLUS

#include <cstddef>
#include <memory>
#include <memory_resource>
#include <new>
#include <stdexcept>

#include "../fma.h"
#include "../registry.h"
#include "fma_region.h"

namespace rtalloc {

namespace detail {

inline void *checked(void *p)
{
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

// A buffer of `bytes` aligned to 4 KiB (FMA pages, buddy trees), released with its resource.
class owned_buffer {
  public:
    static constexpr std::size_t alignment = 4096;
    owned_buffer() noexcept = default;
    explicit owned_buffer(std::size_t bytes) : mem_(::operator new (bytes, std::align_val_t{alignment})), size_(bytes)
    {
    }
    owned_buffer(const owned_buffer &) = delete;
    owned_buffer &operator=(const owned_buffer &) = delete;
    ~owned_buffer()
    {
        if (mem_ != nullptr) {
            ::operator delete (mem_, std::align_val_t{alignment});
        }
    }
    void *data() const noexcept { return mem_; }
    std::size_t size() const noexcept { return size_; }

  private:
    void *mem_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace detail

class heap_resource : public std::pmr::memory_resource {
  public:
    // Over an instance the caller owns (handle from allocator->create; nullptr for a system
    // allocator). Must outlive every allocation made through this resource.
    heap_resource(const rt_allocator_t *allocator, void *handle) : allocator_(allocator), handle_(handle)
    {
        if (allocator_ == nullptr) {
            throw std::invalid_argument("rtalloc::heap_resource: no allocator");
        }
    }

    // Over a buffer of `bytes` that the resource allocates and owns. Throws
    // std::invalid_argument for allocators without create (system allocators), std::bad_alloc
    // when the buffer cannot be had or the allocator refuses it (below its min_buffer).
    heap_resource(const rt_allocator_t *allocator, std::size_t bytes) : allocator_(allocator)
    {
        if (allocator_ == nullptr || allocator_->create == nullptr) {
            throw std::invalid_argument("rtalloc::heap_resource: allocator has no create");
        }
        buffer_ = std::make_unique<detail::owned_buffer>(bytes);
        handle_ = detail::checked(allocator_->create(buffer_->data(), bytes));
    }

    heap_resource(const heap_resource &) = delete;
    heap_resource &operator=(const heap_resource &) = delete;
    ~heap_resource() override = default;

    const rt_allocator_t *allocator() const noexcept { return allocator_; }
    void *handle() const noexcept { return handle_; }

  protected:
    void *do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        std::size_t n = bytes != 0 ? bytes : 1;
        if (alignment <= allocator_->alignment) {
            return detail::checked(allocator_->malloc(handle_, n));
        }
        if (allocator_->memalign == nullptr) {
            throw std::bad_alloc();
        }
        return detail::checked(allocator_->memalign(handle_, alignment, n));
    }

    void do_deallocate(void *p, std::size_t, std::size_t) override { allocator_->free(handle_, p); }

    bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override { return this == &other; }

  private:
    const rt_allocator_t *allocator_;
    void *handle_ = nullptr;
    std::unique_ptr<detail::owned_buffer> buffer_;
};

class fma_resource : public std::pmr::memory_resource {
  public:
    static constexpr std::size_t alignment = 16; // every FMA block (16 B minimum, powers of two)

    explicit fma_resource(rt_fma_t *fma) : fma_(fma)
    {
        if (fma_ == nullptr) {
            throw std::invalid_argument("rtalloc::fma_resource: no FMA instance");
        }
    }

    // Over an owned buffer of `bytes`: rt_fma_create_ex(buffer, bytes, page_log2, flags)
    // (flags: 0 for FMA, RT_FMA_BSD44 for the baseline). std::bad_alloc when refused.
    explicit fma_resource(std::size_t bytes, unsigned page_log2 = 12, unsigned flags = 0)
        : buffer_(std::make_unique<detail::owned_buffer>(bytes))
    {
        fma_ = static_cast<rt_fma_t *>(detail::checked(rt_fma_create_ex(buffer_->data(), bytes, page_log2, flags)));
    }

    fma_resource(const fma_resource &) = delete;
    fma_resource &operator=(const fma_resource &) = delete;
    ~fma_resource() override = default;

    rt_fma_t *fma() const noexcept { return fma_; }

  protected:
    void *do_allocate(std::size_t bytes, std::size_t align) override
    {
        std::size_t n = bytes != 0 ? bytes : 1;
        return detail::checked(align <= alignment ? rt_fma_malloc(fma_, n) : rt_fma_memalign(fma_, align, n));
    }

    void do_deallocate(void *p, std::size_t, std::size_t) override { rt_fma_free(fma_, p); }

    bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override { return this == &other; }

  private:
    std::unique_ptr<detail::owned_buffer> buffer_;
    rt_fma_t *fma_ = nullptr;
};

// Over an open region (not owned: rt_fma_region_down it after the last container is gone).
// Thread-safe and, for a shared region, process-safe: the region locks every request.
class fma_region_resource : public std::pmr::memory_resource {
  public:
    static constexpr std::size_t alignment = 16;

    explicit fma_region_resource(rt_fma_region_t *region) : region_(region)
    {
        if (region_ == nullptr) {
            throw std::invalid_argument("rtalloc::fma_region_resource: no region");
        }
    }

    fma_region_resource(const fma_region_resource &) = delete;
    fma_region_resource &operator=(const fma_region_resource &) = delete;
    ~fma_region_resource() override = default;

    rt_fma_region_t *region() const noexcept { return region_; }

  protected:
    void *do_allocate(std::size_t bytes, std::size_t align) override
    {
        std::size_t n = bytes != 0 ? bytes : 1;
        return detail::checked(align <= alignment ? rt_fma_region_alloc(region_, n)
                                                  : rt_fma_region_memalign(region_, align, n));
    }

    void do_deallocate(void *p, std::size_t, std::size_t) override { rt_fma_region_free(region_, p); }

    bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override { return this == &other; }

  private:
    rt_fma_region_t *region_;
};

} // namespace rtalloc

#endif // C++17

#endif // RTALLOC_PMR_HPP
