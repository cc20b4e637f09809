-- SPDX-License-Identifier: MIT
-- workloads/programs/workload.lua -- a deterministic Lua workload for the real-program tests and
-- the trace recorder (doc/traces.md).
--
-- Run from the repository root:
--     lua5.4 workloads/programs/workload.lua
--
-- What it exercises in the allocator: tables growing through their array part and their hash
-- part (rehash = realloc of both), strings of every length (short interned ones, long ones built
-- by concatenation, table.concat, string.rep, gsub and string.format), closures and their upvalues,
-- coroutines (each a Lua thread with its own stack, grown and freed), and GC churn: many objects
-- that die young, full collections (collectgarbage) and a switch between the incremental and the
-- generational collector.
--
-- Deterministic: no os.time, os.clock, math.random or addresses (tostring of a table); pairs()
-- order is never printed -- every figure is a sum, a count, or a checksum taken in sorted or
-- index order. About 2 * 10^6 malloc-family calls under glibc.

local M = 2147483648 -- 2^31
local function lcg(x) return (x * 1103515245 + 12345) % M end

-- A checksum of a string: polynomial hash mod 2^31.
local function strsum(s)
  local h = 0
  for i = 1, #s, 7 do h = (h * 31 + s:byte(i)) % M end
  return (h + #s) % M
end

-- 1. Array part: fill, sort, sum, shrink.
do
  local t, x = {}, 1
  for i = 1, 100000 do x = lcg(x); t[i] = x % 1000003 end
  table.sort(t)
  local s = 0
  for i = 1, #t, 3 do s = (s + t[i] * (i % 97)) % M end
  for i = #t, 50001, -1 do t[i] = nil end
  print("array", #t, s, t[1], t[#t])
end

-- 2. Hash part: string keys, deleted and reinserted, counted in sorted order.
do
  local h, x = {}, 7
  for i = 1, 40000 do
    x = lcg(x)
    h["k" .. (x % 20000)] = (h["k" .. (x % 20000)] or 0) + i
  end
  for i = 0, 19999, 3 do h["k" .. i] = nil end
  local keys = {}
  for k in pairs(h) do keys[#keys + 1] = k end
  table.sort(keys)
  local s = 0
  for i, k in ipairs(keys) do s = (s + h[k] * i) % M end
  print("hash", #keys, s, keys[1], keys[#keys])
end

-- 3. Strings: concatenation, table.concat, gsub, format, rep.
do
  local parts = {}
  for i = 1, 20000 do parts[i] = string.format("%05d:%x;", i, lcg(i) % 65536) end
  local big = table.concat(parts)
  local replaced, n = big:gsub("(%d+):(%x+);", "%2=%1|")
  local upper = replaced:upper()
  local acc = ""
  for i = 1, 2000 do acc = acc .. tostring(i % 10) end -- quadratic on purpose: realloc chains
  local rep = string.rep("abc", 50000, ",")
  local words = 0
  for w in rep:gmatch("%a+") do words = words + 1 end
  print("strings", #big, n, strsum(replaced), strsum(upper), #acc, strsum(acc), #rep, words)
end

-- 4. Closures: counters with their own upvalues, composed.
do
  local function counter(start, step)
    local v = start
    return function() v = v + step; return v end
  end
  local fs = {}
  for i = 1, 5000 do fs[i] = counter(i, i % 7 + 1) end
  local s = 0
  for round = 1, 20 do
    for i = 1, #fs, round do s = (s + fs[i]()) % M end
  end
  local function compose(f, g) return function(x) return f(g(x)) end end
  local f = function(x) return x end
  for i = 1, 200 do local k = i; f = compose(function(x) return (x * 3 + k) % M end, f) end
  print("closures", s, f(1), f(12345))
end

-- 5. Coroutines: producers and a consumer, many short-lived threads.
do
  local function producer(seed, n)
    return coroutine.wrap(function()
      local x = seed
      for _ = 1, n do x = lcg(x); coroutine.yield(x % 1000) end
    end)
  end
  local total, threads = 0, 0
  for round = 1, 300 do
    local ps = {}
    for j = 1, 10 do ps[j] = producer(round * 10 + j, 30) end
    for _ = 1, 30 do
      for j = 1, 10 do total = (total + ps[j]()) % M end
    end
    threads = threads + #ps
  end
  -- A deep generator: recursion inside a coroutine grows its stack.
  local function walk(depth)
    if depth == 0 then coroutine.yield(1) return end
    walk(depth - 1); walk(depth - 1)
  end
  local leaves = 0
  for _ in coroutine.wrap(function() walk(12) end) do leaves = leaves + 1 end
  print("coroutines", threads, total, leaves)
end

-- 6. GC churn: objects that die young, full collections, both collectors.
do
  local live, s = {}, 0
  for round = 1, 6 do
    if round == 4 then collectgarbage("generational") end
    for i = 1, 20000 do
      local o = { id = i, name = "obj" .. i, data = { i, i * 2, i * 3 } }
      if i % 50 == 0 then live[#live + 1] = o end
      s = (s + #o.name + o.data[3]) % M
    end
    collectgarbage("collect")
    for i = #live, 1, -2 do table.remove(live, i) end
  end
  collectgarbage("incremental")
  collectgarbage("collect")
  local n = 0
  for _, o in ipairs(live) do n = (n + o.id) % M end
  print("gc", #live, s, n)
end

-- 7. A table of records grown, reshaped and serialized.
do
  local recs = {}
  for i = 1, 20000 do
    recs[i] = { key = string.format("r%07d", lcg(i) % 10000000), v = i }
  end
  table.sort(recs, function(a, b) return a.key < b.key or (a.key == b.key and a.v < b.v) end)
  local out = {}
  for i = 1, #recs, 10 do out[#out + 1] = recs[i].key .. "=" .. recs[i].v end
  local s = table.concat(out, "\n")
  print("records", #recs, #out, strsum(s), recs[1].key, recs[#recs].key)
end
print("done")
