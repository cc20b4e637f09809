/* SPDX-License-Identifier: MIT */
/*
 * lua_fixed_heap.c -- a Lua interpreter whose every allocation comes from one fixed rtalloc heap.
 *
 * Lua takes all of its memory through one function, the lua_Alloc given to lua_newstate: a
 * realloc with the old size passed in. Here it sits on a TLSF heap (rtalloc/heap.h) over a
 * static buffer: each call is O(1) whatever the heap holds -- Lua's allocation pattern (many
 * small objects, strings and tables growing by doubling, a collector that frees in bursts) never
 * makes one call slow -- and the interpreter can never take more than the buffer. When it runs
 * out, Lua raises its "not enough memory" error: a script can catch it with pcall, and the host
 * gets LUA_ERRMEM from lua_pcall, with the state still usable.
 *
 * The program runs a Lua chunk and prints its results and the heap's peak, then a chunk that
 * asks for more than the heap holds, once caught inside Lua and once reaching the host.
 *
 * Build: see examples/CMakeLists.txt (find_package(rtalloc) + pkg-config lua5.4), or
 *     cc -std=c11 lua_fixed_heap.c $(pkg-config --cflags --libs rtalloc lua5.4)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <rtalloc/rtalloc.h>

/* 1 MiB: the standard libraries and the first chunk below need about 400 KiB (the peak printed
 * after it; size a real application's buffer from that figure plus a margin). No alignment
 * needed: the heap aligns its blocks to RT_HEAP_ALIGN (16 on 64-bit), which covers the alignment
 * Lua expects of any allocation (LUAI_MAXALIGN: double, pointer, long long). */
static unsigned char lua_memory[1u << 20];

/* The lua_Alloc (Lua 5.4 manual, section 4.1). `ud` is the heap, given to lua_newstate.
 *   ptr == NULL:  a new object; then osize is not a size but the type of object being created
 *                 (LUA_TSTRING, LUA_TTABLE, ...), useful for per-type accounting, and must not
 *                 be used as a size.
 *   nsize == 0:   free ptr and return NULL. This case is written out rather than left to
 *                 rt_heap_realloc(ptr, 0) (which also frees and returns NULL): a free must never
 *                 fail, and the explicit call says so.
 *   otherwise:    realloc. NULL means "could not" and Lua keeps the old block (so the old
 *                 block must survive a failed realloc: rt_heap_realloc guarantees that). On NULL
 *                 Lua runs a full collection and tries once more, then raises "not enough
 *                 memory". Shrinking (nsize < osize) must not fail in practice -- Lua shrinks
 *                 tables and stacks during collection -- and rt_heap_realloc shrinks in place,
 *                 always.
 * rt_heap_realloc(heap, NULL, n) is malloc(n), so one call covers both the new and the resize
 * case. osize of a live block is the size Lua asked for: the heap keeps its own sizes in the
 * block headers and does not need it. */
static void *heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    rt_heap_t *heap = ud;
    (void)osize;
    if (nsize == 0) {
        rt_heap_free(heap, ptr); /* NULL: a no-op */
        return NULL;
    }
    return rt_heap_realloc(heap, ptr, nsize);
}

static void print_heap(rt_heap_t *heap, const char *when)
{
    rt_stats_t stats;
    rt_heap_stats(heap, &stats);
    printf("heap %s: %zu of %zu bytes in use, peak %zu, %" PRIu64 " mallocs, %" PRIu64 " failed\n", when,
           stats.used_bytes, stats.capacity, stats.peak_used, stats.mallocs, stats.failures);
}

/* Runs `chunk`; prints its error, if any. Returns lua_pcall's status. */
static int run(lua_State *L, const char *name, const char *chunk)
{
    int status = luaL_loadbuffer(L, chunk, strlen(chunk), name);
    if (status == LUA_OK) {
        status = lua_pcall(L, 0, 0, 0);
    }
    if (status != LUA_OK) {
        /* The message is a Lua string; for LUA_ERRMEM Lua uses a string it preallocated, so
         * reporting the error needs no memory. */
        printf("%s: %s (%s)\n", name, lua_tostring(L, -1), status == LUA_ERRMEM ? "LUA_ERRMEM" : "other error");
        lua_pop(L, 1);
    }
    return status;
}

int main(void)
{
    rt_heap_t *heap = rt_heap_create(lua_memory, sizeof lua_memory);
    if (heap == NULL) {
        return 1;
    }
    /* lua_newstate (not luaL_newstate, which installs the C library's realloc) returns NULL when
     * even the state does not fit. No lock on the heap: one Lua state is used by one thread at a
     * time (Lua's rule too); states in several threads sharing one heap would install
     * rt_heap_set_lock hooks (rtalloc::drivers has pthread ones). */
    lua_State *L = lua_newstate(heap_alloc, heap);
    if (L == NULL) {
        printf("lua_newstate: heap too small\n");
        return 1;
    }
    luaL_openlibs(L);
    printf("%s on a %zu-byte rtalloc %s heap\n", LUA_RELEASE, sizeof lua_memory, rt_heap_index_name(heap));
    int failures = 0;

    failures += run(L, "work",
                    "local t = {}\n"
                    "for i = 1, 2000 do t[i] = string.format('item %d', i) end\n"
                    "local words = {}\n"
                    "for w in table.concat(t, ' '):gmatch('%d+') do\n"
                    "  words[#words + 1] = tonumber(w)\n"
                    "end\n"
                    "local sum = 0\n"
                    "for _, v in ipairs(words) do sum = sum + v end\n"
                    "local co = coroutine.wrap(function() for i = 1, 3 do\n"
                    "  coroutine.yield(i * i) end end)\n"
                    "print('result: items ' .. #t .. ', sum ' .. sum ..\n"
                    "      ', squares ' .. co() .. ' ' .. co() .. ' ' .. co())\n") != LUA_OK;
    lua_gc(L, LUA_GCCOLLECT);
    print_heap(heap, "after the chunk");

    /* Exhaustion caught inside Lua: pcall turns the memory error into a value. The table the
     * chunk filled is garbage once pcall returns, and the next collection gives it back. */
    failures += run(L, "caught",
                    "local ok, err = pcall(function()\n"
                    "  local t = {}\n"
                    "  for i = 1, 1e6 do t[i] = string.rep('x', 4096, i) end\n"
                    "end)\n"
                    "print('caught in Lua: ' .. tostring(err))\n") != LUA_OK;
    lua_gc(L, LUA_GCCOLLECT);
    print_heap(heap, "after the caught error");

    /* Exhaustion reaching the host: one string larger than the whole heap. lua_pcall returns
     * LUA_ERRMEM, the state stays usable. */
    if (run(L, "uncaught", "local s = string.rep('y', 4 * 1024 * 1024)") != LUA_ERRMEM) {
        failures++;
    }
    failures += run(L, "after", "print('still running: ' .. (6 * 7))") != LUA_OK;

    lua_close(L);
    print_heap(heap, "after lua_close");
    printf("lua_fixed_heap: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
