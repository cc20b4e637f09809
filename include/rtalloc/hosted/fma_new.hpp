// SPDX-License-Identifier: MIT
// rtalloc/hosted/fma_new.hpp -- global operator new/delete backed by an FMA region, the
// article's C++ interface (Listings One and Two). Link rtalloc::fma_new (pkg-config:
// rtalloc-fma-new): linking it replaces the global operators of the program; programs that do
// not link it keep the standard ones. rtalloc/fma_new.hpp forwards here.
//
// The policy (Listing One) decides the region; set it before the first `new` that should use
// the region -- either define the object yourself, which replaces the library's default
// (a weak symbol) and so is in place before any constructor runs:
//
//     rt_heappolicy rt_heap_policy = {1 << 20, RT_FMA_PRIVATE, 1, false};
//
// or assign it at run time (rt_heap_policy = {...}). Fields (the article's, plus `name`):
//   size        bytes of the region; 0 = no region: new/delete use std::malloc/std::free
//   flags       RT_FMA_PRIVATE or RT_FMA_SHARED, | RT_FMA_PINNED | RT_FMA_BSD44 (fma_region.h)
//   key         the article's char key of a shared region (string key "u<euid>-k<key>")
//   remove_now  set it to make the next delete (after freeing its pointer) detach from the
//               region and remove it if this process was the last; the policy is then consumed
//               (size and remove_now reset to 0) so later news use malloc until it is set again
//   name        optional string key, used instead of `key` when not null
//
// Routing. The first `new` with size != 0 opens the region (create or attach; a shared region
// with a key another process opened is attached). Every new goes to the region while it is
// open; every delete frees into the region when the pointer lies in it (an address-range test)
// and with std::free otherwise -- so objects allocated before the policy was set, or before the
// region was opened, are freed correctly. Deletes of pointers into a region already removed by
// remove_now are ignored (its memory is gone). Aligned forms use rt_fma_region_memalign (and
// posix_memalign without a region); sized forms ignore the size.
//
// Failure: a region that cannot be opened (rt_fma_region_error() says why) or is full fails the
// request: the throwing forms call the new-handler and throw std::bad_alloc, the nothrow forms
// return nullptr. No fallback to malloc while a policy is set: the article's region is the heap.
//
// Time: one region request (O(1) + the region's lock) per new/delete; the first new opens the
// region (system calls). Thread-safe; the policy itself must not be changed concurrently with
// new/delete.
#ifndef RTALLOC_FMA_NEW_HPP
#define RTALLOC_FMA_NEW_HPP

#include <cstddef>

#include "fma_region.h"

struct rt_heappolicy {
    std::size_t size;
    unsigned flags;
    char key;
    bool remove_now;
    const char *name;
};
using t_heappolicy = rt_heappolicy; // the article's name

// The policy read by operator new/delete (the library's default is all zeros).
extern rt_heappolicy rt_heap_policy;

namespace rtalloc {

// The region operator new uses now, or nullptr (none opened yet, or removed).
rt_fma_region_t *new_region() noexcept;

// What the operators call: allocate (nullptr on failure; no new-handler, no exception) and
// release (routing by address, then remove_now). Built without the operators
// (RTALLOC_FMA_NEW_NO_OPERATORS: clang's ThreadSanitizer runtime, linked statically and whole,
// defines them itself), the library offers only these.
void *fma_new_allocate(std::size_t size, std::size_t alignment) noexcept;
void fma_new_release(void *ptr) noexcept;

} // namespace rtalloc

#endif // RTALLOC_FMA_NEW_HPP
