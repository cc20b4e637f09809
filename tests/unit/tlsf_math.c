/* SPDX-License-Identifier: MIT */
/*
 * tlsf_math.c -- white-box checks of the arithmetic the TLSF hot paths rest on (doc/performance.md:
 * src/index/tlsf.h, src/block/block.h), against the plain formulas they replace:
 *   - tlsf_list (branch-free insert mapping) equals the two-branch mapping of Masmano's TLSF for
 *     every block size up to 2^20 and for sampled sizes up to the largest block;
 *   - the search list, tlsf_list(need - 1) + 1, is the list of need rounded up to its slot's
 *     start (rounded up, then mapped, as before), and every block of that list or above fits;
 *   - tlsf_list_start(i) is the smallest size list i holds;
 *   - the header tag: every change of one byte of a header word, of any value, is detected
 *     (blk_head_ok), the zero word is at most a header of size 0 (which only a sentinel has), a
 *     flag set or cleared by blk_set_flag / blk_clear_flag is the header re-encoded, and
 *     blk_decode gives the data back; a header moved to another address does not verify there
 *     (tests/unit/tag_copy.c checks every copy of a heap's metadata).
 * Compiled against the core's private headers (src/); needs no heap.
 */
#include "testlib.h"

#include "index/tlsf.h"

/* list.h declares what a walking index asks its owner; this test is the owner. */
RT_HOT bool idx_member(const rt_heap_t *owner, const rt_blk *b, rt_blk *const *slot)
{
    (void)owner, (void)b, (void)slot;
    return true;
}
RT_HOT size_t idx_key(const rt_heap_t *owner)
{
    (void)owner;
    return 0;
}

/* Masmano's mapping, as tlsf.h wrote it before the work of doc/performance.md. */
static unsigned ref_list(size_t size)
{
    if (size < TLSF_SMALL) {
        return (unsigned)(size >> TLSF_A_LOG2);
    }
    unsigned l = 63u - (unsigned)__builtin_clzll((unsigned long long)size);
    unsigned fl = l - TLSF_FL_SHIFT + 1u;
    unsigned sl = (unsigned)(size >> (l - TLSF_SL_LOG2)) - TLSF_SL_COUNT;
    return fl * TLSF_SL_COUNT + sl;
}

/* need rounded up to the start of the next slot, then mapped (the old search). */
static unsigned ref_search(size_t need)
{
    if (need < TLSF_SMALL) {
        return ref_list(need);
    }
    unsigned l = 63u - (unsigned)__builtin_clzll((unsigned long long)need);
    size_t t = need + ((size_t)1 << (l - TLSF_SL_LOG2)) - 1u;
    return ref_list(t);
}

static void check_mapping(void)
{
    size_t largest = ((size_t)1 << RT_HEAP_MAX_BLOCK_LOG2) - BLK_A;
    size_t dense = (size_t)1 << 20 < largest ? (size_t)1 << 20 : largest;
    unsigned bad_list = 0, bad_search = 0, bad_start = 0;
    for (size_t s = BLK_MIN; s <= dense; s += BLK_A) {
        bad_list += tlsf_list(s) != ref_list(s);
        bad_search += tlsf_list(s - 1u) + 1u != ref_search(s);
        unsigned i = tlsf_list(s);
        bad_start += tlsf_list_start(i) > s || (i + 1u < TLSF_FL_COUNT * TLSF_SL_COUNT && tlsf_list_start(i + 1u) <= s);
    }
    tl_rng_t r = tl_rng_seed(15);
    for (unsigned k = 0; k < 200000u; k++) {
        size_t s = (size_t)(tl_next(&r) % (largest - BLK_MIN)) + BLK_MIN;
        s &= ~(BLK_A - 1u);
        bad_list += tlsf_list(s) != ref_list(s);
        bad_search += tlsf_list(s - 1u) + 1u != ref_search(s);
    }
    TL_CHECK(bad_list == 0u, "tlsf_list differs from the reference mapping %u times", bad_list);
    TL_CHECK(bad_search == 0u, "the search list differs from rounding up then mapping %u times", bad_search);
    TL_CHECK(bad_start == 0u, "tlsf_list_start is not the smallest size of its list %u times", bad_start);
    /* Every block of the search list fits: the list's smallest size is >= need. */
    unsigned short_fit = 0;
    for (size_t need = BLK_MIN; need <= dense; need += BLK_A) {
        unsigned i = tlsf_list(need - 1u) + 1u;
        short_fit += i < TLSF_FL_COUNT * TLSF_SL_COUNT && tlsf_list_start(i) < need;
    }
    TL_CHECK(short_fit == 0u, "a search list holds blocks smaller than the request %u times", short_fit);
}

static void check_tag(void)
{
#if RT_HARDENING >= 1
    tl_rng_t r = tl_rng_seed(1515);
    unsigned escaped = 0, flags = 0, decoded = 0, zero = 0;
    for (unsigned k = 0; k < 2000u; k++) {
        size_t raw = (size_t)tl_next(&r);
#if BLK_LINEAR_TAG
        size_t key = (size_t)((raw | 1u) & 0xFFFFFFFFu) << 32;
#else
        size_t key = raw | 1u;
#endif
        size_t data = (size_t)tl_next(&r) & BLK_DATA_MASK & ~(BLK_A - 1u);
        data |= (size_t)(k & 3u); /* FREE and PREV_FREE in every combination */
        rt_blk b = {0, NULL, NULL};
        size_t head = blk_enc(key, &b, data);
        b.head = head;
        decoded += blk_decode(key, &b, head) != data || !blk_head_ok(key, &b, head);
        zero += blk_head_ok(key, &b, 0u) && blk_decode(key, &b, 0u) != 0u;
        for (unsigned byte = 0; byte < sizeof(size_t); byte++) {
            for (unsigned v = 1; v < 256u; v++) {
                size_t changed = head ^ ((size_t)v << (8u * byte));
                escaped += blk_head_ok(key, &b, changed);
            }
        }
        if ((data & BLK_PREV_FREE) == 0u) {
            blk_set_flag(key, &b, BLK_PREV_FREE);
            flags += b.head != blk_enc(key, &b, data | BLK_PREV_FREE);
            blk_clear_flag(key, &b, BLK_PREV_FREE);
            flags += b.head != head;
        }
        if ((data & BLK_MARK) == 0u) {
            blk_set_flag(key, &b, BLK_MARK);
            flags += b.head != blk_enc(key, &b, data | BLK_MARK);
        }
    }
    TL_CHECK(decoded == 0u, "blk_decode did not give the data back %u times", decoded);
    TL_CHECK(zero == 0u, "the zero word passed as a header of a nonzero size %u times", zero);
    TL_CHECK(escaped == 0u, "a change of one byte of a header passed %u times", escaped);
    TL_CHECK(flags == 0u, "a flag set or cleared by add differs from the re-encoded header %u times", flags);
#endif
}

/* The index's integrity walk is the facade's; referenced so that -Wunused-function is quiet. */
static bool (*const keep_check)(idx_t *, rt_idx_visit_fn, void *, bool) = idx_check;

int main(void)
{
    (void)keep_check, (void)idx_member, (void)idx_key;
    check_mapping();
    check_tag();
    return tl_summary("tlsf_math");
}
