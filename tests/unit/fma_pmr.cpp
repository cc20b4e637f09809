// SPDX-License-Identifier: MIT
// fma_pmr.cpp -- rtalloc/pmr.hpp: std::pmr::vector and std::pmr::string grow on every heap of
// the registry (rtalloc::heap_resource), on FMA and BSD 4.4 directly (rtalloc::fma_resource) and
// on an FMA region (rtalloc::fma_region_resource); contents verified, every block returned
// (stats), over-aligned requests served by memalign or refused with std::bad_alloc, exhaustion
// throws std::bad_alloc, equality is identity.
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include "cxxcheck.hpp"
#include "rtalloc/pmr.hpp"

namespace {

constexpr std::size_t buffer_bytes = 2u << 20;

// Grows containers on `res`; returns false at the first wrong content.
bool exercise(std::pmr::memory_resource *res, const char *name)
{
    {
        std::pmr::vector<int> v(res);
        for (int i = 0; i < 20000; i++) {
            v.push_back(i * 3);
        }
        bool ok = true;
        for (int i = 0; i < 20000; i++) {
            ok = ok && v[static_cast<std::size_t>(i)] == i * 3;
        }
        if (!CHECK(ok, "%s: vector<int> of 20000 grown and read back", name)) {
            return false;
        }
        v.shrink_to_fit();
    }
    {
        std::pmr::string s(res);
        for (int i = 0; i < 6000; i++) {
            s += static_cast<char>('a' + i % 26);
            s += "0123456789";
        }
        bool ok = s.size() == 66000;
        for (std::size_t i = 0; ok && i < s.size(); i += 11) {
            ok = s[i] == static_cast<char>('a' + (i / 11) % 26) && s[i + 1] == '0' && s[i + 10] == '9';
        }
        if (!CHECK(ok, "%s: string of 66000 chars grown and read back", name)) {
            return false;
        }
    }
    {
        std::pmr::vector<std::pmr::string> words(res);
        for (int i = 0; i < 500; i++) {
            words.emplace_back(std::string(40, static_cast<char>('A' + i % 26)) + std::to_string(i));
        }
        bool ok = words.size() == 500 && words[0].get_allocator().resource() == res;
        for (int i = 0; ok && i < 500; i++) {
            const auto &w = words[static_cast<std::size_t>(i)];
            ok = w.size() == 40 + std::to_string(i).size() && w[0] == static_cast<char>('A' + i % 26);
        }
        if (!CHECK(ok, "%s: vector of 500 pmr::strings (the resource propagates)", name)) {
            return false;
        }
    }
    return true;
}

void test_aligned(std::pmr::memory_resource *res, const char *name, std::size_t natural, bool memalign)
{
    for (std::size_t align : {std::size_t{64}, std::size_t{256}, std::size_t{4096}}) {
        if (align <= natural) {
            continue;
        }
        try {
            void *p = res->allocate(100, align);
            CHECK(memalign, "%s: alignment %zu served only with memalign", name, align);
            CHECK((reinterpret_cast<std::uintptr_t>(p) & (align - 1)) == 0, "%s: aligned to %zu", name, align);
            res->deallocate(p, 100, align);
        } catch (const std::bad_alloc &) {
            CHECK(!memalign, "%s: alignment %zu refused although it has memalign", name, align);
        }
    }
}

void test_exhaustion(std::pmr::memory_resource *res, const char *name)
{
    bool thrown = false;
    try {
        void *p = res->allocate(buffer_bytes * 2, 16);
        res->deallocate(p, buffer_bytes * 2, 16);
    } catch (const std::bad_alloc &) {
        thrown = true;
    }
    CHECK(thrown, "%s: a request larger than the buffer throws std::bad_alloc", name);
}

void test_registry()
{
    std::size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
    CHECK(count >= 10, "registry lists %zu allocators", count);
    bool saw_fma = false;
    bool saw_bsd = false;
    for (std::size_t i = 0; i < count; i++) {
        const rt_allocator_t *a = all[i];
        if (a->create == nullptr) {
            continue;
        }
        // by property, never by name: a page allocator that unites pages (FMA) and one that never
        // unites (BSD 4.4)
        saw_fma = saw_fma || (a->family == RT_FAMILY_PAGES && !a->never_unites);
        saw_bsd = saw_bsd || (a->family == RT_FAMILY_PAGES && a->never_unites);
        std::size_t bytes = buffer_bytes;
        if (a->min_buffer != nullptr && a->min_buffer() > bytes) {
            bytes = a->min_buffer();
        }
        rtalloc::heap_resource res(a, bytes);
        CHECK(res.is_equal(res), "%s: equal to itself", a->name);
        bool ok = exercise(&res, a->name);
        test_aligned(&res, a->name, a->alignment, a->memalign != nullptr);
        test_exhaustion(&res, a->name);
        if (ok && a->stats != nullptr) {
            rt_stats_t s{};
            a->stats(res.handle(), &s);
            CHECK(s.used_blocks == 0 && s.mallocs > 0 && s.mallocs == s.frees,
                  "%s: every block returned (used %zu, mallocs %llu, frees %llu)", a->name, s.used_blocks,
                  static_cast<unsigned long long>(s.mallocs), static_cast<unsigned long long>(s.frees));
        }
        if (a->check != nullptr) {
            CHECK(a->check(res.handle()), "%s: check", a->name);
        }
    }
    CHECK(saw_fma && saw_bsd, "the registry has a uniting page allocator (%d) and one that never unites (%d)", saw_fma,
          saw_bsd);

    // two resources over the same kind are different resources
    const rt_allocator_t *tlsf = rt_registry_find("tlsf");
    if (CHECK(tlsf != nullptr, "tlsf in the registry")) {
        rtalloc::heap_resource a(tlsf, std::size_t{1} << 16);
        rtalloc::heap_resource b(tlsf, std::size_t{1} << 16);
        CHECK(!a.is_equal(b) && a.is_equal(a), "equality is identity");
        // non-owning over a caller's instance
        rtalloc::heap_resource c(tlsf, a.handle());
        CHECK(!c.is_equal(a) && c.handle() == a.handle(), "non-owning resource");
        bool refused = false;
        try {
            rtalloc::heap_resource tiny(tlsf, std::size_t{8});
        } catch (const std::bad_alloc &) {
            refused = true;
        }
        CHECK(refused, "a buffer below min_buffer throws std::bad_alloc");
    }
}

void test_fma_direct()
{
    rtalloc::fma_resource fma(buffer_bytes);
    CHECK(exercise(&fma, "fma_resource"), "fma_resource");
    test_aligned(&fma, "fma_resource", rtalloc::fma_resource::alignment, true);
    test_exhaustion(&fma, "fma_resource");
    rt_stats_t s{};
    rt_fma_stats(fma.fma(), &s);
    CHECK(s.used_blocks == 0 && rt_fma_check(fma.fma()), "fma_resource: clean (%zu)", s.used_blocks);

    rtalloc::fma_resource bsd(buffer_bytes, 12, RT_FMA_BSD44);
    CHECK(exercise(&bsd, "fma_resource(BSD44)"), "bsd44 resource");
    rt_fma_stats(bsd.fma(), &s);
    CHECK(s.used_blocks == 0 && rt_fma_check(bsd.fma()), "bsd44 resource: clean");
}

void test_region()
{
    rt_fma_region_t *r = rt_fma_region_init(buffer_bytes + 65536, RT_FMA_PRIVATE, nullptr, true);
    if (!CHECK(r != nullptr, "region: %s", rt_fma_region_error())) {
        return;
    }
    {
        rtalloc::fma_region_resource res(r);
        CHECK(exercise(&res, "fma_region_resource"), "region resource");
        test_aligned(&res, "fma_region_resource", rtalloc::fma_region_resource::alignment, true);
        std::pmr::vector<double> v(&res);
        v.resize(1000, 2.5);
        CHECK(rt_fma_region_contains(r, v.data()), "the vector's storage lies in the region");
    }
    rt_stats_t s{};
    rt_fma_region_stats(r, &s);
    CHECK(s.used_blocks == 0, "region: every block returned");
    CHECK(rt_fma_region_down(r) == 0, "down");
}

} // namespace

int main()
{
    test_registry();
    test_fma_direct();
    test_region();
    return cxxcheck::summary("fma_pmr");
}
