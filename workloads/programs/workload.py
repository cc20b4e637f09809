# SPDX-License-Identifier: MIT
# workloads/programs/workload.py -- a deterministic CPython workload for the real-program tests
# and the trace recorder (doc/traces.md).
#
# Run from the repository root:
#     PYTHONHASHSEED=0 /usr/bin/python3 workloads/programs/workload.py
# (PYTHONHASHSEED only pins the allocation sequence between runs; stdout is the same under any
# seed: nothing printed depends on set or dict-of-str iteration order.)
#
# What it exercises in the allocator: dicts growing and shrinking (resize = a new table),
# lists appended to, sliced and sorted (realloc of the item array), strings of every size (join,
# replace, format, encode), JSON dumps/loads round trips (many small objects and one big string),
# churn of small objects (tuples, class instances with __dict__ and with __slots__), bytes and
# bytearray buffers of hundreds of KB, and explicit gc.collect() passes. CPython serves objects up
# to 512 bytes from its own arenas (pymalloc, 256 KiB each, from mmap or malloc); everything
# larger, and the arenas' bookkeeping, comes from malloc -- so large buffers, big lists and dicts
# are what reach the allocator most often; section 8 churns such medium objects on purpose. About
# 2 * 10^5 malloc-family calls under glibc; with PYTHONMALLOC=malloc (pymalloc off: every object a
# malloc) about 1.6 * 10^7.
#
# Deterministic: no time, random, id() or hash(); every printed figure is a count, a sum, or a
# CRC-32 of data taken in sorted or insertion order.
import gc
import json
import sys
import zlib

M = 2**31


def lcg(x):
    return (x * 1103515245 + 12345) % M


def crc(s):
    if isinstance(s, str):
        s = s.encode()
    return zlib.crc32(s)


# 1. Dicts: int and str keys, deletions, a rebuild by comprehension.
d = {}
x = 1
for i in range(60000):
    x = lcg(x)
    d[x % 50000] = d.get(x % 50000, 0) + i
for k in range(0, 50000, 3):
    d.pop(k, None)
names = {"n%05d" % k: v for k, v in d.items()}
s = sum(v * (k % 101) for k, v in d.items()) % M
print("dict", len(d), len(names), s, min(names), max(names))

# 2. Lists: append, slice, sort with a key, reverse, del.
lst = []
x = 3
for i in range(100000):
    x = lcg(x)
    lst.append(x % 1000003)
lst.sort()
pairs = sorted(((v % 97, v) for v in lst[::5]), key=lambda p: (p[0], -p[1]))
del lst[::2]
lst.reverse()
print("list", len(lst), sum(lst[::7]) % M, len(pairs), pairs[0], pairs[-1])

# 3. Strings: build, join, replace, format, encode.
parts = ["%05d:%x;" % (i, lcg(i) % 65536) for i in range(30000)]
big = "".join(parts)
rep = big.replace(";", "|\n").replace(":", " = ")
lines = rep.splitlines()
acc = ""
for i in range(3000):
    acc += str(i % 10)  # grows one string by one character: realloc chains
up = rep.upper().encode("utf-8")
print("strings", len(big), len(rep), len(lines), crc(rep), crc(up), len(acc), crc(acc))

# 4. JSON round trips: many small objects, one big document.
doc = {
    "records": [
        {"id": i, "name": "rec-%d" % i, "tags": ["t%d" % (i % 7), "u%d" % (i % 11)],
         "score": (lcg(i) % 10000) / 100.0, "nested": {"a": i % 3, "b": [i, i * 2]}}
        for i in range(8000)
    ],
    "meta": {"version": 1, "title": "workload"},
}
total = 0
for round_ in range(4):
    text = json.dumps(doc, sort_keys=True)
    back = json.loads(text)
    back["meta"]["round"] = round_
    for r in back["records"][:: round_ + 1]:
        r["score"] = round(r["score"] * 1.5, 2)
        r["tags"].append("r%d" % round_)
    total = (total + len(text) + crc(text)) % M
    doc = back
final = json.dumps(doc, sort_keys=True, separators=(",", ":"))
print("json", len(final), crc(final), total)


# 5. Small object churn: instances with __dict__ and __slots__, tuples, cycles for the GC.
class Node:
    def __init__(self, v, nxt=None):
        self.v = v
        self.nxt = nxt
        self.extra = {"v": v}


class Slot:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


acc = 0
keep = []
for round_ in range(5):
    head = None
    for i in range(20000):
        head = Node(i, head)
        t = Slot(i, (i, round_))
        acc = (acc + t.b[0] + head.extra["v"]) % M
        if i % 100 == 0:
            a = Node(i)
            b = Node(-i, a)
            a.nxt = b  # a cycle only the collector frees
            keep.append((a.v, b.v))
    n = 0
    while head is not None:
        n += 1
        head = head.nxt
    acc = (acc + n) % M
    gc.collect()
print("objects", acc, len(keep), sum(a for a, b in keep))

# 6. Big buffers: bytes and bytearray of hundreds of KB, grown and compressed.
buf = bytearray()
x = 5
for i in range(60000):
    x = lcg(x)
    buf += x.to_bytes(4, "little")
blob = bytes(buf) * 2
comp = zlib.compress(blob, 6)
back = zlib.decompress(comp)
print("buffers", len(buf), len(blob), len(comp) > 0, back == blob, crc(blob), crc(buf[::3]))

# 7. Sets and sorting of strings; frozensets compared by sorted contents.
words = ["w%d" % (lcg(i) % 5000) for i in range(30000)]
uniq = sorted(set(words))
counts = {}
for w in words:
    counts[w] = counts.get(w, 0) + 1
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
print("sets", len(uniq), uniq[0], uniq[-1], top)

# 8. Medium objects, past pymalloc's 512-byte limit, so that each one is a malloc and a free:
# strings of 0.5-4 KB, lists of 70-500 items, dicts of 40 keys, a window of them kept alive.
window = [None] * 64
x = 9
h = 0
for i in range(60000):
    x = lcg(x)
    n = 520 + x % 3500
    s = ("%d," % i) * (n // 6 + 1)
    obj = (s, list(range(70 + x % 430)), {j: j for j in range(40)}) if i % 4 == 0 else s
    window[x % 64] = obj
    h = (h + len(s) + (len(obj[1]) if isinstance(obj, tuple) else 0)) % M
print("medium", h, sum(len(o if isinstance(o, str) else o[0]) for o in window))
print("done")
sys.stdout.flush()
