-- SPDX-License-Identifier: MIT
-- workloads/programs/workload.sql -- a deterministic SQLite workload for the real-program tests
-- and the trace recorder (doc/traces.md).
--
-- Run from the repository root:
--     sqlite3 :memory: ".read workloads/programs/workload.sql"
--
-- What it exercises in the allocator: page cache and B-tree pages of tables and indexes (inserts
-- in random-looking order, so pages split), the sorter (ORDER BY, GROUP BY, CREATE INDEX), joins,
-- recursive CTEs (the queue of rows in flight), string building (printf, group_concat, replace),
-- large blobs and strings of hundreds of KB (overflow pages, big realloc chains), updates and
-- deletes that free pages, and a VACUUM that rebuilds the whole database.
--
-- Deterministic: no random(), randomblob(), dates or rowid-order assumptions; every row is a
-- function of its number through an integer hash (a linear congruential step mod 2^31). Every
-- printed figure is an aggregate or a checksum over an ORDER BY, so stdout depends on the script
-- only. About 1.3 * 10^6 malloc-family calls under glibc, 0.5 s.
.bail on
.headers off
.mode list

PRAGMA cache_size = 2000;

-- A hash of n: (n * 1103515245 + 12345) mod 2^31.
CREATE TABLE item(id INTEGER PRIMARY KEY, k INTEGER, grp INTEGER, name TEXT, payload TEXT);
WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 60000)
INSERT INTO item(id, k, grp, name, payload)
SELECT n,
       (n * 1103515245 + 12345) % 2147483648,
       ((n * 1103515245 + 12345) % 2147483648) % 97,
       printf('item-%06d-%x', n, (n * 2654435761) % 4294967296),
       substr('abcdefghijklmnopqrstuvwxyz0123456789', 1 + n % 20, 5 + n % 17)
FROM seq;

CREATE INDEX item_k ON item(k);
CREATE INDEX item_grp_name ON item(grp, name);

CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT, weight INTEGER);
WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < 96)
INSERT INTO grp SELECT n, printf('group %02d', n), 1 + (n * 37) % 11 FROM seq;

SELECT 'items', count(*), sum(k) % 1000000007, sum(length(name)), sum(length(payload)) FROM item;

-- Joins and aggregates.
SELECT 'join', count(*), sum(i.k % 1000 * g.weight) FROM item i JOIN grp g ON g.id = i.grp;
SELECT 'top groups', group_concat(label || ':' || c, ',') FROM (
    SELECT g.label AS label, count(*) AS c FROM item i JOIN grp g ON g.id = i.grp
    GROUP BY g.id ORDER BY c DESC, g.id LIMIT 5);
SELECT 'range', count(*), min(id), max(id) FROM item WHERE k BETWEEN 500000000 AND 900000000;
SELECT 'self join', count(*) FROM item a JOIN item b ON b.id = a.id + 1 AND b.k > a.k;

-- Large blobs and strings: hundreds of KB built from recursive-CTE data.
CREATE TABLE big(id INTEGER PRIMARY KEY, data BLOB, text TEXT);
WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 8)
INSERT INTO big SELECT n, zeroblob(50000 * n), NULL FROM seq;
UPDATE big SET text = (
    WITH RECURSIVE s(i, v) AS (SELECT 0, big.id UNION ALL
                               SELECT i + 1, (v * 1103515245 + 12345) % 2147483648 FROM s
                               WHERE i < 4000 + 1000 * big.id)
    SELECT group_concat(printf('%08x', v), '') FROM s);
UPDATE big SET data = CAST(text AS BLOB) || data WHERE id % 2 = 0;
SELECT 'big', count(*), sum(length(data)), sum(length(text)),
       sum(unicode(substr(text, 1000, 1))) FROM big;
SELECT 'big hex', id, length(hex(data)), substr(hex(data), 1, 16), substr(text, -8)
FROM big WHERE id IN (2, 7) ORDER BY id;
SELECT 'replace', sum(length(replace(text, '0', 'zero'))) FROM big;

-- Updates and deletes that free pages and move rows between index pages.
UPDATE item SET payload = payload || printf('-%d', k % 1000), grp = (grp * 7 + 3) % 97
WHERE id % 3 = 0;
DELETE FROM item WHERE k % 5 = 0;
DELETE FROM big WHERE id % 3 = 0;
SELECT 'after update', count(*), sum(grp), sum(length(payload)) FROM item;

-- A recursive CTE generating rows: Collatz lengths of 1..3000, kept in a table.
CREATE TABLE collatz(n INTEGER PRIMARY KEY, steps INTEGER);
WITH RECURSIVE c(start, v, steps) AS (
    SELECT n, n, 0 FROM (WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq
                                                   WHERE n < 3000) SELECT n FROM seq)
    UNION ALL
    SELECT start, CASE WHEN v % 2 = 0 THEN v / 2 ELSE 3 * v + 1 END, steps + 1 FROM c WHERE v > 1)
INSERT INTO collatz SELECT start, max(steps) FROM c GROUP BY start;
SELECT 'collatz', count(*), sum(steps), max(steps),
       (SELECT n FROM collatz ORDER BY steps DESC, n LIMIT 1) FROM collatz;

-- Sorting through the sorter, without and with an index.
SELECT 'sorted', sum(rn * (k % 1000)) % 1000000007 FROM (
    SELECT k, row_number() OVER (ORDER BY name DESC) AS rn FROM item);
SELECT 'distinct', count(DISTINCT payload), count(DISTINCT grp) FROM item;

-- Rebuild everything.
VACUUM;
SELECT 'after vacuum', count(*), sum(k) % 1000000007 FROM item;
PRAGMA integrity_check;
