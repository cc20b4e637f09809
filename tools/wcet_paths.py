#!/usr/bin/env python3
"""Static upper bound on TLSF's interrupts-masked stretch, from the machine code.

    tools/wcet_paths.py ELF [ELF ...] [--entry rt_tlsf_malloc --entry rt_tlsf_free] [-v]

For each ELF (Cortex-M4 Thumb-2 or RV32, told apart by objdump's file format line) it disassembles
the whole .text (arm-none-eabi-objdump -d / riscv64-unknown-elf-objdump -d), follows the direct
calls and tail calls from each entry point to the function holding the lock window (the function
that calls through the heap's lock hook field), and computes the longest path, in instructions,
from the instruction after the lock hook's call to the unlock hook's call, inclusive - exactly the
stretch the on-target study measures (ports/study/vaios_study.c) - plus the hooks' own masked
instructions, read from port_lock_hook / port_unlock_hook in the same ELF. Calls inside the window
are expanded by their callee's longest path (entry to return), recursively (libgcc's __clzsi2 /
__ctzsi2 on RV32). It also bounds the whole window function, entry to return, as a cross-check.

Soundness rules (the tool refuses, exit status 2, rather than guess):
  * every instruction is counted once per time a path passes it; an instruction predicated by an
    IT block counts as executed, a conditional branch has both successors;
  * an indirect branch (jump table, bx/jr through a register other than the return, a write to
    pc) or an indirect call other than the lock/unlock hooks is refused;
  * a loop (a strongly connected part of the control-flow graph) needs an annotation in LOOP_BOUNDS
    below, stating how many times its header may run per entry and the source line that justifies
    it; an unannotated loop, a loop with two entries or a nested loop is refused;
  * a path leaving the window function by a return (not through the unlock call) ends the window
    there, counted, so the bound covers it too; recursion is refused.
The hook calls are identified by what their register holds: on every path from the function's
entry (through register copies) it must be a word load at HOOK_LOCK_OFFSET / HOOK_UNLOCK_OFFSET,
the offsets of rt_heap_t's hooks.lock / hooks.unlock on both 32-bit targets; the unlock may be a
tail call through a register (bx r3 / jr a5).
hooks.unlock is non-NULL whenever hooks.lock is: rt_hooks_set_lock installs both or neither (a half
pair is refused with RT_ERR_BAD_HOOKS, tests/badinput.c); so the branches that skip the unlock call when the pointer loaded from its field is
NULL are dropped (with -v, listed). Everything else is taken from the code: the bound holds for any
heap contents and any arguments, on the ELF given (it is not a property of the source: rebuild,
rerun).
"""
import argparse
import os
import re
import subprocess
import sys

HOOK_LOCK_OFFSET = 24    # offsetof(rt_heap_t, hooks.lock) on ILP32 (ldr rN, [r0, #24] / lw a5,24(a0))
HOOK_UNLOCK_OFFSET = 28  # offsetof(rt_heap_t, hooks.unlock)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def max_pools():
    """RT_HEAP_MAX_POOLS's default, read from include/rtalloc/config.h (override: --max-pools)."""
    with open(os.path.join(ROOT, "include/rtalloc/config.h")) as f:
        m = re.search(r"#define\s+RT_HEAP_MAX_POOLS\s+(\d+)", f.read())
    return int(m.group(1))


# Loop annotations: function -> (number of loops the function must have, header runs per entry,
# justification). Filled in main() (the bound depends on RT_HEAP_MAX_POOLS).
LOOP_BOUNDS = {}


def set_loop_bounds(pools):
    # heap_validate -> heap_pool_of (src/heap/heap_internal.h:97): pool 0 is tested before the loop,
    # then `for (last = pool + h->npools; ++pool < last;)`, and h->npools <= RT_HEAP_MAX_POOLS
    # (src/heap/heap_common.c:17 refuses a pool beyond it; include/rtalloc/config.h:67). Whether the
    # compiler rotates the loop or not, its header runs at most npools <= RT_HEAP_MAX_POOLS times.
    why = "heap_pool_of, src/heap/heap_internal.h:97; npools <= RT_HEAP_MAX_POOLS = %d" % pools
    LOOP_BOUNDS["heap_free_locked"] = (1, pools, why)


class Refuse(Exception):
    pass


ARM_CC = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"
ARM_BCOND = re.compile(r"^b(%s)(\.n|\.w)?$" % ARM_CC)
ARM_POP = re.compile(r"^(pop|ldm|ldmia|ldmfd)(%s)?(\.n|\.w)?$" % ARM_CC)
ARM_BX = re.compile(r"^bx(%s)?(\.n)?$" % ARM_CC)
RV_BCOND = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez", "bgez", "bltz",
            "bgtz", "bgt", "ble", "bgtu", "bleu"}
TARGET = re.compile(r"\b([0-9a-f]+) <([^>]+)>")


class Insn:
    __slots__ = ("addr", "mn", "ops", "kind", "target", "reg")

    def __init__(self, addr, mn, ops):
        self.addr, self.mn, self.ops = addr, mn, ops
        self.kind, self.target, self.reg = "seq", None, None


def disassemble(elf):
    text = None
    for tool in ("arm-none-eabi-objdump", "riscv64-unknown-elf-objdump"):
        try:
            out = subprocess.run([tool, "-d", "--no-show-raw-insn", elf], capture_output=True,
                                 text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        fmt = re.search(r"file format (\S+)", out)
        if fmt and ("arm" in fmt.group(1) and tool.startswith("arm")
                    or "riscv" in fmt.group(1) and tool.startswith("riscv")):
            text = out
            arch = "arm" if tool.startswith("arm") else "riscv"
            break
    if text is None:
        raise Refuse("%s: neither objdump recognises it" % elf)
    funcs, order, cur = {}, [], None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            # static functions share names (each allocator has its heap_malloc_locked): key by
            # name@address, resolved through the address of calls and branches
            cur = "%s@%s" % (m.group(2), m.group(1).lstrip("0") or "0")
            funcs[cur] = []
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and cur is not None:
            funcs[cur].append(Insn(int(m.group(1), 16), m.group(2), m.group(3).split(";")[0].strip()))
    for name, insns in funcs.items():
        for i in insns:
            (classify_arm if arch == "arm" else classify_rv)(i)
    return arch, funcs


def target_of(i):
    m = TARGET.search(i.ops)
    return (int(m.group(1), 16), m.group(2)) if m else None


def base(key):
    return key.split("@")[0]


def classify_arm(i):
    mn, ops = i.mn, i.ops
    if mn in ("b", "b.n", "b.w"):
        i.kind, i.target = "jump", target_of(i)
    elif ARM_BCOND.match(mn) or mn in ("cbz", "cbnz"):
        i.kind, i.target = "cond", target_of(i)
    elif mn in ("bl", "blx") and target_of(i):
        i.kind, i.target = "call", target_of(i)
    elif mn == "blx":
        i.kind, i.reg = "icall", ops.strip()
    elif ARM_BX.match(mn):
        if ops.strip() != "lr":
            # a tail call through a register: allowed only as the unlock hook's (checked later)
            i.kind, i.reg = ("ijump", ops.strip()) if ARM_BX.match(mn).group(1) in (None, "al") else ("bad", None)
        else:
            i.kind = "ret" if ARM_BX.match(mn).group(1) in (None, "al") else "condret"
    elif ARM_POP.match(mn) and re.search(r"\bpc\b", ops):
        i.kind = "ret" if ARM_POP.match(mn).group(2) in (None, "al") else "condret"
    elif mn.startswith(("tbb", "tbh", ".word", ".short", "udf", "svc", "bkpt")) or \
            re.match(r"^pc\b", ops) or re.search(r"\{[^}]*\bpc\b", ops):
        i.kind = "bad"


def classify_rv(i):
    mn, ops = i.mn, i.ops
    if mn in RV_BCOND:
        i.kind, i.target = "cond", target_of(i)
    elif mn == "j":
        i.kind, i.target = "jump", target_of(i)
    elif mn == "jal":
        rd = ops.split(",")[0] if "," in ops else "ra"
        if rd == "zero":
            i.kind, i.target = "jump", target_of(i)
        elif rd == "ra":
            i.kind, i.target = "call", target_of(i)
        else:
            i.kind = "bad"
    elif mn == "ret":
        i.kind = "ret"
    elif mn == "jr":
        if ops.strip() == "ra":
            i.kind = "ret"
        else:  # a tail call through a register: allowed only as the unlock hook's (checked later)
            i.kind, i.reg = "ijump", ops.strip()
    elif mn == "jalr":
        parts = [p.strip() for p in ops.split(",")]
        if len(parts) == 1 or parts[0] == "ra":
            i.kind, i.reg = "icall", re.sub(r"^\d*\(|\)$", "", parts[-1])
        else:
            i.kind = "bad"
    elif mn in ("ecall", "ebreak", "mret", "wfi", "unimp", ".word", ".insn") or mn.startswith("c.unimp"):
        i.kind = "bad"


ARM_NOWRITE = re.compile(r"^(str\w*|cmp|cmn|tst|teq|push|it\w*|stm\w*|nop|dmb|dsb|isb|cpsi[de]|msr|pld|"
                         r"b|bl|blx|bx\w*|cbn?z|b(%s)(\.n|\.w)?)(\.n|\.w)?$" % ARM_CC)
ARM_CLOBBER = {"r0", "r1", "r2", "r3", "ip", "lr"}
RV_CLOBBER = {"ra", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "t0", "t1", "t2", "t3", "t4", "t5", "t6"}


def regs_written(arch, i):
    """The registers instruction i writes (calls: the caller-saved ones)."""
    if i.kind in ("call", "icall"):
        return ARM_CLOBBER if arch == "arm" else RV_CLOBBER
    if i.kind != "seq":
        return set()
    ops = [o.strip() for o in re.split(r",(?![^{]*\})", i.ops)]
    if arch == "arm":
        if ARM_NOWRITE.match(i.mn):
            return set()
        out = set()
        if i.mn.startswith(("ldm", "pop")):
            m = re.search(r"\{([^}]*)\}", i.ops)
            out |= {r.strip() for r in m.group(1).split(",")} if m else set()
            if i.mn.startswith("ldm") and ops[0].endswith("!"):
                out.add(ops[0][:-1])
            return out
        out.add(ops[0])
        if i.mn.startswith("ldrd") or i.mn.startswith("ldrexd"):
            out.add(ops[1])
        m = re.search(r"\[(\w+)(, [^\]]*)?\](!|, )", i.ops)
        if m:  # pre/post-indexed writeback
            out.add(m.group(1))
        return out
    if i.mn in ("sw", "sh", "sb", "fence", "fence.i", "nop"):
        return set()
    return {ops[0]} if ops and ops[0] else set()


def copy_source(arch, i):
    """The source register when i is a register copy (mov rd, rs / mv rd, rs), else None."""
    ops = [o.strip() for o in i.ops.split(",")]
    if i.kind == "seq" and len(ops) == 2 and (arch == "arm" and i.mn == "mov" or arch == "riscv" and i.mn == "mv") \
            and not ops[1].startswith("#") and re.match(r"^[a-z]+\d*$", ops[1]):
        return ops[1]
    return None


def load_offset(arch, i):
    if arch == "arm":
        m = re.match(r"^ldr(\.w)?$", i.mn) and re.match(r"^\w+, \[\w+, #(\d+)\]$", i.ops)
    else:
        m = i.mn == "lw" and re.match(r"^\w+,(\d+)\(\w+\)$", i.ops)
    return int(m.group(1)) if m else None


def preds_of(succ):
    preds = {}
    for k, ss in succ.items():
        for x in ss:
            preds.setdefault(x, []).append(k)
    return preds


def reg_source(arch, insns, preds, k, reg):
    """What reg holds just before insns[k]: the common offset of the word loads that define it on
    every path from the function's entry (through register copies), or None."""
    offs, seen, todo = set(), set(), [(p, reg) for p in preds.get(k, [])]
    if not preds.get(k) and k != 0:
        return None
    while todo:
        p, r = todo.pop()
        if (p, r) in seen:
            continue
        seen.add((p, r))
        i = insns[p]
        if r in regs_written(arch, i):
            src = copy_source(arch, i)
            if src is not None:
                todo.extend((q, src) for q in preds.get(p, []))
                if p == 0 or not preds.get(p):
                    return None
                continue
            off = load_offset(arch, i)
            if off is None:
                return None
            offs.add(off)
        elif p == 0 or not preds.get(p):
            return None  # reaches the entry undefined (an argument)
        else:
            todo.extend((q, r) for q in preds[p])
    return offs.pop() if len(offs) == 1 else None


def hook_field(arch, insns, succ, k):
    """The hook field offset an indirect call or jump at insns[k] goes through, or None."""
    return reg_source(arch, insns, preds_of(succ), k, insns[k].reg)


def unlock_null_tests(arch, insns, succ):
    """The branches that test a pointer loaded from the unlock hook field for NULL and branch when
    it is (cbz/beqz reg, or cmp reg, #0 then beq): index -> index of the taken target."""
    preds, out = preds_of(succ), {}
    for m, i in enumerate(insns):
        if i.kind != "cond":
            continue
        reg = None
        if i.mn in ("cbz", "beqz"):
            reg = i.ops.split(",")[0].strip()
        elif re.match(r"^beq(\.n|\.w)?$", i.mn) and m > 0 and insns[m - 1].mn == "cmp" and \
                re.match(r"^(\w+), #0$", insns[m - 1].ops):
            reg, m0 = insns[m - 1].ops.split(",")[0], m - 1
            if reg_source(arch, insns, preds, m0, reg) == HOOK_UNLOCK_OFFSET:
                out[m] = next(x for x, j in enumerate(insns) if j.addr == i.target[0])
            continue
        if reg and reg_source(arch, insns, preds, m, reg) == HOOK_UNLOCK_OFFSET:
            out[m] = next(x for x, j in enumerate(insns) if j.addr == i.target[0])
    return out


class Analyzer:
    def __init__(self, arch, funcs, verbose):
        self.arch, self.funcs, self.verbose = arch, funcs, verbose
        self.memo, self.stack = {}, []
        self.start = {int(k.split("@")[1], 16): k for k in funcs}

    def resolve(self, i):
        """The function a call or tail call at i enters (it must enter at a function's start)."""
        if i.target is None or i.target[0] not in self.start:
            raise Refuse("call or tail call at %#x into the middle of a function: %s" % (i.addr, i.ops))
        return self.start[i.target[0]]

    def named(self, name):
        keys = [k for k in self.funcs if base(k) == name]
        if len(keys) != 1:
            raise Refuse("%d functions named %s" % (len(keys), name))
        return keys[0]

    def log(self, msg):
        if self.verbose:
            print("  " + msg)

    def graph(self, name):
        insns = self.funcs.get(name)
        if not insns:
            raise Refuse("no code for %s" % name)
        index = {i.addr: k for k, i in enumerate(insns)}
        succ = {}
        for k, i in enumerate(insns):
            nxt = [k + 1] if k + 1 < len(insns) else []
            s = []
            if i.kind in ("seq", "call", "icall", "condret"):
                s = nxt
            elif i.kind in ("jump", "cond"):
                tgt = i.target
                inside = tgt is not None and tgt[0] in index
                if i.kind == "cond":
                    if not inside:
                        raise Refuse("%s: conditional branch out of the function at %#x" % (name, i.addr))
                    s = nxt + [index[tgt[0]]]
                elif inside:
                    s = [index[tgt[0]]]
                else:
                    i.kind = "tail"  # a tail call: the callee's cost, then the path ends
            succ[k] = s
        return insns, succ

    def cost(self, name):
        """Longest path through function `name`, entry to return (calls expanded)."""
        if name in self.memo:
            return self.memo[name]
        if name in self.stack:
            raise Refuse("recursion through %s" % " -> ".join(self.stack + [name]))
        self.stack.append(name)
        insns, succ = self.graph(name)
        c = self.longest(name, insns, succ, 0, stop=lambda k: False)
        self.stack.pop()
        self.memo[name] = c
        self.log("%s: %d instructions entry to return" % (name, c))
        return c

    def weight(self, name, i, allow_icall):
        if i.kind == "bad":
            raise Refuse("%s: indirect or unanalysable control flow at %#x: %s %s" % (name, i.addr, i.mn, i.ops))
        if i.kind in ("icall", "ijump") and not allow_icall(i):
            raise Refuse("%s: indirect call at %#x (%s %s) is not a lock hook" % (name, i.addr, i.mn, i.ops))
        if i.kind in ("call", "tail"):
            if i.target is None:
                raise Refuse("%s: call without a target at %#x" % (name, i.addr))
            return 1 + self.cost(self.resolve(i))
        return 1

    def longest(self, name, insns, succ, start, stop, allow_icall=lambda i: False):
        """Longest path from insns[start]; a path ends (inclusive) at stop(k), a return or a tail
        call. Loops are collapsed with their LOOP_BOUNDS annotation."""
        # reachable subgraph (not past stop nodes)
        reach, todo = set(), [start]
        while todo:
            k = todo.pop()
            if k in reach:
                continue
            reach.add(k)
            i = insns[k]
            if stop(k) or i.kind in ("ret", "tail", "ijump"):
                continue
            if not succ[k] and i.kind not in ("ret", "tail"):
                raise Refuse("%s: path falls off the end at %#x" % (name, i.addr))
            todo.extend(succ[k])
        edges = {k: ([] if stop(k) or insns[k].kind in ("ret", "tail", "ijump") else [s for s in succ[k]]) for k in reach}
        w = {k: self.weight(name, insns[k], allow_icall) for k in reach}
        sccs = tarjan(reach, edges)
        comp = {}
        for n, c in enumerate(sccs):
            for k in c:
                comp[k] = n
        loops = [c for c in sccs if len(c) > 1 or any(k in edges[k] for k in c)]
        if loops:
            ann = LOOP_BOUNDS.get(base(name))
            if ann is None:
                raise Refuse("%s: unbounded loop (at %#x): no annotation in LOOP_BOUNDS" %
                             (name, insns[min(loops[0])].addr))
            if ann[0] != len(loops):
                raise Refuse("%s: %d loops found, the annotation expects %d" % (name, len(loops), ann[0]))
        ccost = {}
        for n, c in enumerate(sccs):
            cs = set(c)
            if not (len(c) > 1 or any(k in edges[k] for k in c)):
                ccost[n] = w[c[0]]
                continue
            entries = {k for k in c if k == start or any(k in edges[p] for p in reach if p not in cs)}
            if len(entries) != 1:
                raise Refuse("%s: loop with %d entries" % (name, len(entries)))
            header = entries.pop()
            if any(stop(k) or insns[k].kind in ("ret", "tail", "ijump") for k in c):
                raise Refuse("%s: the window ends inside a loop" % name)
            # inside the loop without the back edges: must be acyclic (no nested loop)
            inner = {k: [s for s in edges[k] if s in cs and s != header] for k in c}
            if len(tarjan(c, inner)) != len(c) or any(k in inner[k] for k in c):
                raise Refuse("%s: nested loop under header %#x" % (name, insns[header].addr))
            memo = {}

            def lp(k):
                if k not in memo:
                    memo[k] = w[k] + max([lp(s) for s in inner[k]] or [0])
                return memo[k]
            bound = LOOP_BOUNDS[base(name)][1]
            ccost[n] = bound * lp(header)  # every run of the header starts one path of at most lp
            self.log("%s: loop at %#x, %d instructions, at most %d runs of its header (%s) -> %d" %
                     (name, insns[header].addr, len(c), bound, LOOP_BOUNDS[base(name)][2], ccost[n]))
        # longest path over the condensation (Tarjan gives reverse topological order)
        best = {}
        for n, c in enumerate(sccs):
            outs = {comp[s] for k in c for s in edges[k] if comp[s] != n}
            best[n] = ccost[n] + max([best[o] for o in outs] or [0])
        return best[comp[start]]


def tarjan(nodes, edges):
    index, low, onstack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for s in it:
                if s not in edges:
                    continue
                if s not in index:
                    index[s] = low[s] = counter[0]
                    counter[0] += 1
                    stack.append(s)
                    onstack.add(s)
                    work.append((s, iter(edges[s])))
                    advanced = True
                    break
                elif s in onstack:
                    low[v] = min(low[v], index[s])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                c = []
                while True:
                    x = stack.pop()
                    onstack.discard(x)
                    c.append(x)
                    if x == v:
                        break
                out.append(c)
    return out


def hook_masked(arch, funcs):
    """The hooks' own masked instructions: after the mask in port_lock_hook up to its return, and
    port_unlock_hook's up to and including the unmask (straight-line code, checked)."""
    keys = {base(k): k for k in funcs}
    lock, unlock = funcs.get(keys.get("port_lock_hook")), funcs.get(keys.get("port_unlock_hook"))
    if not lock or not unlock:
        raise Refuse("port_lock_hook / port_unlock_hook not in the ELF")
    if arch == "arm":
        is_mask = lambda i: i.mn == "cpsid" and i.ops == "i"
        is_unmask = lambda i: i.mn == "msr" and i.ops.upper().startswith("PRIMASK")
    else:
        is_mask = lambda i: i.mn in ("csrrc", "csrrci", "csrc", "csrci") and "mstatus" in i.ops and i.ops.endswith(",8")
        is_unmask = lambda i: i.mn in ("csrs", "csrw", "csrrs", "csrrw") and "mstatus" in i.ops
    m = next(k for k, i in enumerate(lock) if is_mask(i))
    r = next(k for k, i in enumerate(lock) if i.kind == "ret")
    u = next(k for k, i in enumerate(unlock) if is_unmask(i))
    if any(i.kind not in ("seq",) for i in lock[:r] + unlock[:u + 1]):
        raise Refuse("the hooks are not straight-line code")
    return (r - m) + (u + 1)


def analyse(elf, entries, verbose):
    arch, funcs = disassemble(elf)
    an = Analyzer(arch, funcs, verbose)
    hooks = hook_masked(arch, funcs)
    print("%s (%s): hooks' own masked instructions %d" % (elf, "Cortex-M4" if arch == "arm" else "RV32", hooks))
    results = {}
    for entry in entries:
        # the window function: reached from the entry by direct calls / tail calls, holding the
        # indirect call through the lock hook field
        seen, todo, window = set(), [an.named(entry)], []
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            insns, fsucc = an.graph(f)
            if any(i.kind == "icall" and hook_field(arch, insns, fsucc, k) == HOOK_LOCK_OFFSET
                   for k, i in enumerate(insns)):
                window.append(f)
            todo.extend(an.resolve(i) for i in insns if i.kind in ("call", "tail"))
        if len(window) != 1:
            raise Refuse("%s: %d functions call the lock hook (%s)" % (entry, len(window), window))
        wf = window[0]
        insns, succ = an.graph(wf)
        locks = [k for k, i in enumerate(insns) if i.kind == "icall" and hook_field(arch, insns, succ, k) == HOOK_LOCK_OFFSET]
        unlocks = {k for k, i in enumerate(insns)
                   if i.kind in ("icall", "ijump") and hook_field(arch, insns, succ, k) == HOOK_UNLOCK_OFFSET}
        if len(locks) != 1 or not unlocks:
            raise Refuse("%s: %d lock calls, %d unlock calls" % (wf, len(locks), len(unlocks)))
        lk = locks[0]
        # hooks.unlock is set whenever hooks.lock is (rt_hooks_set_lock installs both or neither;
        # a half pair is refused with RT_ERR_BAD_HOOKS). The inlined rt_hooks_unlock tests the pointer for NULL before the
        # call; that skip edge is infeasible and dropped (a NULL unlock hook
        # would leave interrupts masked for good: there is no stretch to bound).
        for m, tgt in sorted(unlock_null_tests(arch, insns, succ).items()):
            if tgt != m + 1:
                succ[m] = [x for x in succ[m] if x != tgt]
                an.log("%s: NULL test of the unlock hook at %#x: skip edge to %#x dropped" %
                       (wf, insns[m].addr, insns[tgt].addr))
        an.log("%s -> %s: lock call at %#x, unlock call(s) at %s" % (
            entry, wf, insns[lk].addr, ", ".join("%#x" % insns[k].addr for k in sorted(unlocks))))
        win = an.longest(wf, insns, succ, lk + 1, stop=lambda k: k in unlocks,
                         allow_icall=lambda i: insns.index(i) in unlocks)
        try:  # the cross-check: the whole window function, entry to return (hook calls counted)
            whole = "<= %d" % an.longest(wf, insns, succ, 0, stop=lambda k: False,
                                         allow_icall=lambda i: insns.index(i) in unlocks or insns.index(i) == lk)
        except Refuse as e:
            whole = "not bounded (%s)" % e
        print("  %s: window (lock return .. unlock call, inclusive) <= %d, + hooks %d = %d; "
              "whole %s entry to return %s" % (entry, win, hooks, win + hooks, wf, whole))
        results[entry] = win + hooks
    c = max(results.values())
    print("  static bound on the masked stretch: C <= %d instructions" % c)
    return arch, c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("elf", nargs="+")
    ap.add_argument("--entry", action="append", help="entry points (default rt_tlsf_malloc, rt_tlsf_free)")
    ap.add_argument("--max-pools", type=int, default=None, help="RT_HEAP_MAX_POOLS of the build")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    set_loop_bounds(a.max_pools if a.max_pools else max_pools())
    try:
        for elf in a.elf:
            analyse(elf, a.entry or ["rt_tlsf_malloc", "rt_tlsf_free"], a.verbose)
    except Refuse as e:
        print("wcet_paths: refused: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
