# SPDX-License-Identifier: MIT
# workload_threads.py -- the drop-in malloc under a threaded program: 4 producer threads build
# objects (dicts, lists, strings, bytes) and hand them through one queue to a consumer thread that
# reads and drops them, so most objects are freed by another thread than the one that made them
# (run with PYTHONMALLOC=malloc: every object is a malloc of ours). The output is the same whatever
# the threads' interleaving: per-producer counts and order-independent digests.
import hashlib
import json
import queue
import threading

N = 4
ITEMS = 4000
q = queue.Queue(maxsize=256)
totals = {}


def producer(i):
    for k in range(ITEMS):
        obj = {"id": k, "thread": i, "words": [str(k * j) for j in range(k % 17 + 3)],
               "blob": bytes((k + i) % 256 for _ in range(k % 200)), "text": ("t%d-" % k) * (k % 31)}
        q.put(obj)
    q.put(None)


def consumer():
    done = 0
    while done < N:
        o = q.get()
        if o is None:
            done += 1
            continue
        s = json.dumps({"id": o["id"], "words": o["words"], "text": o["text"]}, sort_keys=True)
        d = int.from_bytes(hashlib.sha256(s.encode() + o["blob"]).digest()[:8], "big")
        n, x, total = totals.get(o["thread"], (0, 0, 0))
        totals[o["thread"]] = (n + 1, x ^ d, total + len(s) + len(o["blob"]))


threads = [threading.Thread(target=producer, args=(i,)) for i in range(N)]
c = threading.Thread(target=consumer)
c.start()
for t in threads:
    t.start()
for t in threads:
    t.join()
c.join()
for i in sorted(totals):
    n, x, total = totals[i]
    print("producer %d: %d objects, digest %016x, %d bytes" % (i, n, x, total))
