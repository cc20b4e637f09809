#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Worst case of TLSF's entry points, in instructions, from the compiled binary.

    tools/wcet.py ELF [ELF ...] [--heap-bytes N] [--json F] [--csv F] [--markdown] [-v]

For each ELF (Cortex-M4 Thumb-2 or RV32, built with -g) it bounds, over every path through the
machine code, for any heap contents and arguments:
  * the instructions of each entry point, entry to return: rt_tlsf_malloc, rt_tlsf_free,
    rt_tlsf_realloc, rt_tlsf_memalign, rt_tlsf_calloc and rt_tlsf_create (--entry to choose);
  * the longest stretch with the lock held, as the on-target study defines it: from the masking
    instruction of the lock hook (exclusive) to the unmasking instruction of the unlock hook
    (inclusive) -- the hooks' own masked instructions plus everything from the lock hook's
    return to the unlock call.
Each bound is given twice. "normal": every path that defers no report and enters no containment
(the walk of the whole heap that damage met, or a wild pointer into a pool, starts: heap_contain,
the code whose loops are bounded by the heap's size). "damage": every path, the heap being
--heap-bytes bytes (default 65536) -- linear in it, and loose (each loop at its bound at once).

How, and what the tool refuses (exit status 2, one line saying why):
  * The ELF is disassembled (arm-none-eabi-objdump / riscv64-unknown-elf-objdump -d -l); each
    entry point's calls are expanded in place, one copy of the callee per call site (so the
    values and the lock state of each call are its own), into one control-flow graph. Every
    instruction counts one each time a path passes it (an IT-predicated one as executed); both
    ways of every branch are taken unless named below. Interrupts are not counted.
  * Register values are followed symbolically from the entry (the heap pointer, the words loaded
    from it, stack slots, constants, words of read-only data), through calls (the ABI's
    callee-saved registers survive a call, the others do not) -- enough to recognise:
      - the lock and unlock hooks: an indirect call through the heap's hooks.lock / hooks.unlock
        (offsets from a probe compiled with the target's compiler, not typed). Their own
        instructions are the port's hook functions (--lock-hook, --unlock-hook; default
        port_lock_hook / port_unlock_hook), where the masking / unmasking instruction is found;
      - the heap's table of functions (h->ops: the read-only table rt_tlsf_create hands on --
        the heap analysed is one rt_tlsf_create made);
      - the user's code: the error handler (hooks.handler), and a function a public setter
        (rt_set_*: rt_set_entropy, rt_set_default_handler) stores in a variable of the library:
        the call instruction counts, the user's code does not (a call of it with the lock held is
        refused). Such a variable is written by its setter only; where the ELF links no setter
        of it, it keeps its initial NULL and the call through it is never made;
      - memcpy, memmove and memset: the call counts, the copy or fill does not (realloc's copy,
        calloc's clearing; a copy with the lock held is refused on a normal path, and listed
        for the damage path's: containment zeroing its accumulator).
    Any other indirect call or jump (a jump table, a pointer the tool cannot follow) is refused.
  * Two configurations, the larger taken: lock hooks installed (hooks.lock and hooks.unlock are
    then non-NULL for the whole call -- rt_hooks_set_lock installs both or neither, before the
    heap is shared -- and h->gate is non-zero, heap_regate), and none (both NULL). A branch on the
    NULL-ness of a hook has one way only. On a normal path h->npending stays 0 -- it is 0 when a
    call starts (every call that defers a report delivers it before it returns) and only the
    field access h->npending writes it -- so HEAP_DELIVER's branch is cut there.
  * Loops: the graph must be reducible (else refused); every loop carries a bound in the
    source, a comment on its line or on the line just above it:
        /* wcet: <= EXPR; why */                its body runs at most EXPR times per entry
        /* wcet: total <= EXPR per FUNC; why */ at most EXPR times in all, over one call of FUNC
                                                (amortised: e.g. scans whose steps all move one
                                                walk on through the heap)
    EXPR is C, evaluated by compiling a probe with the target's compiler in the file's own
    translation unit (config macros, sizeof), HEAP_BYTES standing for --heap-bytes and
    CONTROL_BYTES for the heap's control structure (the table's control_size, read in the ELF). A loop is
    found by the source lines of its header, latches and exits (DWARF: build with -g); an inlined
    loop maps to the same line in every copy. A loop without a bound, a loop whose lines carry
    two, and a bound on no loop of the code analysed (stale) are refused. A bound N allows N + 1
    runs of the loop's header per entry (N back edges), each at most the loop's longest
    iteration; a total bound adds N runs of the longest iteration once per call of FUNC.
    Recursion is refused.
  * The bound is of the ELF analysed, not of the source: rebuild and rerun after any change of
    code, compiler or flags. It counts instructions, as the study does; cycles need the core's
    timing on top.
"""
import argparse
import csv
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENTRIES = ["rt_tlsf_malloc", "rt_tlsf_free", "rt_tlsf_realloc", "rt_tlsf_memalign", "rt_tlsf_calloc",
           "rt_tlsf_create"]
# What each entry point's bound leaves out besides the user's code (the C library's copy/fill).
EXCLUDED_CALLEES = {"memcpy", "memmove", "memset", "__aeabi_memcpy", "__aeabi_memmove", "__aeabi_memset",
                    "__aeabi_memclr"}


class Refuse(Exception):
    pass


# --- ELF32 (little-endian) ------------------------------------------------------------------------

class Elf:
    """The sections and symbols of a little-endian ELF32 file (executable or relocatable)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 1 or d[5] != 1:
            raise Refuse("%s: not a little-endian ELF32 file" % path)
        self.machine = struct.unpack_from("<H", d, 18)[0]
        shoff, = struct.unpack_from("<I", d, 32)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 46)
        raw = [struct.unpack_from("<IIIIIIIIII", d, shoff + k * shentsize) for k in range(shnum)]
        names = raw[shstrndx]
        self.sections = []
        for (name, typ, flags, addr, off, size, link, info, align, entsize) in raw:
            end = d.index(b"\0", names[4] + name)
            self.sections.append({"name": d[names[4] + name:end].decode(), "type": typ, "flags": flags,
                                  "addr": addr, "off": off, "size": size, "link": link})
        self.symbols = []
        for s in self.sections:
            if s["type"] != 2:  # SHT_SYMTAB
                continue
            strtab = self.sections[s["link"]]
            for k in range(s["size"] // 16):
                name, value, size, info, other, shndx = struct.unpack_from("<IIIBBH", d, s["off"] + 16 * k)
                end = d.index(b"\0", strtab["off"] + name)
                self.symbols.append({"name": d[strtab["off"] + name:end].decode(), "value": value, "size": size,
                                     "type": info & 15, "shndx": shndx})

    def section_of(self, addr):
        for s in self.sections:
            if s["flags"] & 2 and s["addr"] <= addr < s["addr"] + s["size"]:  # SHF_ALLOC
                return s
        return None

    def word(self, addr):
        s = self.section_of(addr)
        if s is None or s["type"] == 8 or addr + 4 > s["addr"] + s["size"]:  # SHT_NOBITS
            return None
        return struct.unpack_from("<I", self.data, s["off"] + addr - s["addr"])[0]

    def readonly(self, addr):
        s = self.section_of(addr)
        return s is not None and not s["flags"] & 1 and s["type"] != 8  # no SHF_WRITE

    def symbol(self, name):
        return [x for x in self.symbols if x["name"] == name]

    def object_value(self, sym, n=8):
        """The bytes of a symbol defined in a relocatable object (its section + value)."""
        s = self.sections[sym["shndx"]]
        return int.from_bytes(self.data[s["off"] + sym["value"]:s["off"] + sym["value"] + n], "little")


# --- the two targets --------------------------------------------------------------------------------

class Arch:
    def __init__(self, machine):
        if machine == 40:
            self.name, self.label = "arm", "Cortex-M4"
            self.tools = "arm-none-eabi-"
            self.args = ["r0", "r1", "r2", "r3"]
            self.clobber = {"r0", "r1", "r2", "r3", "r12", "lr"}
            self.flags = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-ffreestanding"]
        elif machine == 243:
            self.name, self.label = "riscv", "RV32"
            self.tools = "riscv64-unknown-elf-"
            self.args = ["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"]
            self.clobber = {"ra", "t0", "t1", "t2", "t3", "t4", "t5", "t6"} | set(self.args)
            self.flags = ["-march=rv32imac_zicsr", "-mabi=ilp32", "-mcmodel=medany", "-ffreestanding"]
        else:
            raise Refuse("ELF machine %d: neither ARM nor RISC-V" % machine)


ARM_ALIAS = {"ip": "r12", "fp": "r11", "sl": "r10", "sb": "r9", "r13": "sp", "r14": "lr", "r15": "pc"}
ARM_CC = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"
ARM_BCOND = re.compile(r"^b(%s)(\.n|\.w)?$" % ARM_CC)
ARM_IT = re.compile(r"^it[te]{0,3}$")
RV_BCOND = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez", "bgez", "bltz", "bgtz", "bgt",
            "ble", "bgtu", "bleu"}
TARGET = re.compile(r"\b([0-9a-f]+) <([^>]+)>")
# Thumb mnemonics that write no core register (besides a base written back) and keep the flags
ARM_NOWRITE = re.compile(r"^(str|strb|strh|strd|stm|stmia|stmdb|stmea|stmfd|push|pld|pli|nop|dmb|dsb|isb|"
                         r"cpsid|cpsie|msr|udf|bkpt|svc|wfi|wfe|sev|vstr|vpush|vstmia|vstmdb)(\.n|\.w)?$")
ARM_COMPARE = re.compile(r"^(cmp|cmn|tst|teq)(\.n|\.w)?$")
# Thumb data-processing mnemonics that keep the flags (no S suffix)
ARM_FLAGSAFE = re.compile(r"^(ldr\w*|ldm\w*|pop|str\w*|stm\w*|push|mov|movw|movt|add|addw|sub|subw|and|orr|"
                          r"orn|eor|bic|lsl|lsr|asr|ror|mul|mla|mls|ubfx|sbfx|bfi|bfc|uxtb|uxth|sxtb|sxth|"
                          r"rbit|rev|clz|adr|b|nop|pld)(\.n|\.w)?$")


def arm_reg(r):
    r = r.strip().rstrip("!")
    return ARM_ALIAS.get(r, r)


class Insn:
    __slots__ = ("addr", "mn", "ops", "line", "kind", "target", "reg", "pred", "comment")

    def __init__(self, addr, mn, ops, line, comment):
        self.addr, self.mn, self.ops, self.line, self.comment = addr, mn, ops, line, comment
        self.kind, self.target, self.reg, self.pred = "seq", None, None, False

    def __repr__(self):
        return "%#x %s %s" % (self.addr, self.mn, self.ops)


def target_of(i):
    m = TARGET.search(i.ops)
    return int(m.group(1), 16) if m else None


def classify_arm(i):
    mn, ops = i.mn, i.ops
    base = re.sub(r"\.(n|w)$", "", mn)
    if mn.startswith("."):
        i.kind = "data"
    elif base == "b":
        i.kind, i.target = "jump", target_of(i)
    elif ARM_BCOND.match(mn) or base in ("cbz", "cbnz"):
        i.kind, i.target = "cond", target_of(i)
    elif base == "bl":
        i.kind, i.target = "call", target_of(i)
    elif base == "blx":
        if target_of(i) is not None:
            i.kind = "bad"  # an interworking call to ARM code
        else:
            i.kind, i.reg = "icall", arm_reg(ops)
    elif re.match(r"^bx(%s)?$" % ARM_CC, base):
        cond = base[2:] not in ("", "al")
        if arm_reg(ops) == "lr":
            i.kind = "condret" if cond else "ret"
        else:
            i.kind, i.reg = ("bad", None) if cond else ("ijump", arm_reg(ops))
    elif re.match(r"^(pop|ldm|ldmia|ldmfd)(%s)?$" % ARM_CC, base) and re.search(r"\bpc\b", ops):
        i.kind = "condret" if i.pred else "ret"
    elif base == "ldr" and re.match(r"^pc, \[sp\], #4$", ops):  # pop {pc}, as a load
        i.kind = "condret" if i.pred else "ret"
    elif base in ("tbb", "tbh") or re.match(r"^pc\b", ops) or re.search(r"\{[^}]*\bpc\b", ops):
        i.kind = "bad"
    elif base == "udf":
        i.kind = "trap"
    elif base in ("bkpt", "svc", "wfi", "wfe"):
        i.kind = "bad"


def classify_rv(i):
    mn, ops = i.mn, i.ops
    if mn.startswith("."):
        i.kind = "data"
    elif mn in RV_BCOND:
        i.kind, i.target = "cond", target_of(i)
    elif mn == "j":
        i.kind, i.target = "jump", target_of(i)
    elif mn == "jal":
        parts = [p.strip() for p in ops.split(",")]
        rd = parts[0] if len(parts) > 1 else "ra"
        if rd == "zero":
            i.kind, i.target = "jump", target_of(i)
        elif rd == "ra":
            i.kind, i.target = "call", target_of(i)
        else:
            i.kind = "bad"
    elif mn == "ret":
        i.kind = "ret"
    elif mn == "jr":
        i.kind, i.reg = ("ret", None) if ops.strip() == "ra" else ("ijump", ops.strip())
    elif mn == "jalr":
        parts = [p.strip() for p in ops.split(",")]
        if len(parts) == 1:
            i.kind, i.reg = "icall", parts[0]
        elif parts[0] == "ra":
            i.kind, i.reg = "icall", re.sub(r"^-?\d*\(|\)$", "", parts[-1])
        elif parts[0] == "zero":
            i.kind, i.reg = "ijump", re.sub(r"^-?\d*\(|\)$", "", parts[-1])
        else:
            i.kind = "bad"
    elif mn in ("ebreak", "unimp", "c.unimp"):
        i.kind = "trap"
    elif mn in ("ecall", "mret", "sret", "wfi"):
        i.kind = "bad"


def disassemble(path, arch):
    """Functions (start address -> {name, insns}) with each instruction's source line."""
    try:
        out = subprocess.run([arch.tools + "objdump", "-d", "-l", "--no-show-raw-insn", path],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise Refuse("%s: %sobjdump failed (%s)" % (path, arch.tools, e))
    funcs, cur, line, it_left = {}, None, None, 0
    for text in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", text)
        if m:
            cur = {"name": m.group(2), "start": int(m.group(1), 16), "insns": []}
            funcs[cur["start"]] = cur
            line, it_left = None, 0
            continue
        if cur is None:
            continue
        m = re.match(r"^(/.+|[A-Za-z.].*):(\d+)(?: \(discriminator \d+\))?$", text)
        if m and not text.endswith("():"):
            line = (os.path.realpath(m.group(1)), int(m.group(2)))
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", text)
        if not m:
            continue
        ops, comment = m.group(3), ""
        for sep in ("@", "#", ";"):
            if sep in ops and not (sep == "#" and arch.name == "arm"):
                ops, _, comment = ops.partition(sep)
        if arch.name == "arm" and "@" in m.group(3):
            ops, _, comment = m.group(3).partition("@")
        i = Insn(int(m.group(1), 16), m.group(2), ops.strip(), line, comment.strip())
        if arch.name == "arm":
            if it_left > 0:
                i.pred = True
                it_left -= 1
            if ARM_IT.match(i.mn):
                it_left = len(i.mn) - 1
            classify_arm(i)
        else:
            classify_rv(i)
        cur["insns"].append(i)
    return funcs


# --- symbolic values -----------------------------------------------------------------------------
# A value is None (unknown) or a tuple:
#   ("H", c)   the heap's address + c          ("F", k)  the word at the heap's offset k
#   ("K", n)   the constant n                  ("G", a)  the word at address a of writable data


class Values:
    """Forward dataflow over one function's instructions: each register's value before each
    instruction, from the values of the argument registers on entry."""

    def __init__(self, an):
        self.an = an

    def load(self, base, off):
        an = self.an
        if base is None:
            return None
        if base[0] == "H":
            k = base[1] + off
            if k == an.off["ops"]:
                return ("K", an.ops_table)  # h->ops: always the table rt_tlsf_create hands on
            return ("F", k)
        if base[0] == "K":
            a = base[1] + off
            if an.elf.readonly(a):
                w = an.elf.word(a)
                return ("K", w) if w is not None else None
            if an.elf.section_of(a) is not None:
                return ("G", a)
        return None

    @staticmethod
    def add(v, n):
        if v is not None and v[0] in ("H", "K", "S"):
            return (v[0], (v[1] + n) & 0xFFFFFFFF if v[0] == "K" else v[1] + n)
        return None


def imm(s):
    s = s.strip().lstrip("#")
    try:
        return int(s, 0)
    except ValueError:
        return None


def split_ops(ops):
    return [o.strip() for o in re.split(r",(?![^{\[]*[}\]])", ops) if o.strip()]


class Analyzer:
    def __init__(self, path, args):
        self.path, self.args = path, args
        self.elf = Elf(path)
        self.arch = Arch(self.elf.machine)
        self.funcs = disassemble(path, self.arch)
        self.by_name = {}
        for f in self.funcs.values():
            self.by_name.setdefault(f["name"], []).append(f)
        self.index = {}
        for f in self.funcs.values():
            f["at"] = {i.addr: k for k, i in enumerate(f["insns"])}
        self.templates = {}
        self.level, self.compiler = self.producer()

    # -- identification ------------------------------------------------------------------------
    def func(self, name):
        fs = self.by_name.get(name, [])
        if len(fs) != 1:
            raise Refuse("%s: %d functions named %s" % (self.path, len(fs), name))
        return fs[0]

    def producer(self):
        """The optimisation level and compiler of the TLSF code, from its DWARF producer string."""
        out = subprocess.run([self.arch.tools + "objdump", "--dwarf=info", self.path], capture_output=True,
                             text=True).stdout
        level, comp, last = "?", "?", None
        for text in out.splitlines():
            m = re.search(r"DW_AT_producer\s*:.*?: (GNU .*)$", text) or re.search(r"DW_AT_producer\s*: (GNU .*)$", text)
            if m:
                last = m.group(1)
                continue
            m = re.search(r"DW_AT_name\s*:.*?(\S+)$", text)
            if m and last and m.group(1).endswith("heap_tlsf.c"):
                self.tlsf_tu = os.path.realpath(m.group(1))
                levels = re.findall(r"(?:^| )-O(\w?)", last)
                level = "-O" + (levels[-1] if levels else "0")
                comp = " ".join(last.split()[:3])
                break
        if level == "?":
            raise Refuse("%s: no DWARF for heap_tlsf.c (build with -g)" % self.path)
        return level, comp

    # -- the values of registers ----------------------------------------------------------------
    def step(self, i, st, fl, vals):
        """Applies instruction i to the state st (registers, and the words of the stack frame at
        ("mem", offset from the entry's sp)); returns the new flag state (Thumb: the value a
        `cmp reg, #0` compared)."""
        a = self.arch
        if i.kind in ("call", "icall"):
            for r in a.clobber:
                st.pop(r, None)
            self.forget_escaped(st)
            # a callee may write the arguments it was passed on the stack (an indirect callee -- a
            # hook, the handler, the heap's table -- takes all its arguments in registers)
            callee = self.funcs.get(i.target) if i.kind == "call" else None
            size = self.incoming(callee) if callee is not None else 0
            sp = st.get("sp")
            for key in [x for x in st if isinstance(x, tuple) and (sp is None or 0 <= x[1] - sp[1] < size)]:
                del st[key]
            return None
        if a.name == "arm":
            return self.step_arm(i, st, fl, vals)
        self.step_rv(i, st, vals)
        return None

    def incoming(self, f):
        """Bytes above its entry's sp that function f reads or writes: its stack arguments."""
        memo = self.__dict__.setdefault("incoming_memo", {})
        if f["start"] in memo:
            return memo[f["start"]] if memo[f["start"]] is not None else 1 << 30
        memo[f["start"]] = None  # (recursion: everything)
        saved = self.V
        self.V = Values(self)
        before = self.dataflow(f, {})
        self.V = saved
        top = 0
        for k, (st, _) in before.items():
            i = f["insns"][k]
            if self.arch.name == "arm":
                m = re.search(r"\[(\w+)(?:, #(-?\w+))?\]", i.ops)
                base = st.get(arm_reg(m.group(1))) if m else None
                off = (imm(m.group(2)) or 0) if m and m.group(2) else 0
            else:
                m = re.search(r"(-?\w+)\((\w+)\)$", i.ops)
                base = st.get(m.group(2)) if m else None
                off = imm(m.group(1)) or 0 if m else 0
            if base is not None and base[0] == "S" and base[1] + off >= 0:
                top = max(top, base[1] + off + 8)
            for v in st.values():  # a frame address above the entry's sp held in a register
                if isinstance(v, tuple) and v[0] == "S" and v[1] >= 0 and st.get("sp") is not v:
                    top = max(top, 1 << 30)
        memo[f["start"]] = top
        return top

    @staticmethod
    def forget_escaped(st, lo=None):
        """A call or a store through an unknown pointer may write the frame's words whose address
        was taken (from the lowest such address up: an object lies above its address)."""
        esc = st.get("esc")
        if esc is None:
            return
        for key in [x for x in st if isinstance(x, tuple) and x[1] >= esc]:
            del st[key]

    def slot_store(self, st, base, off, value, size=4):
        """A store of `size` bytes at base + off."""
        if base is not None and base[0] == "S":
            k = base[1] + off
            for x in [x for x in st if isinstance(x, tuple) and k - 3 <= x[1] < k + size]:
                del st[x]
            if size == 4 and k % 4 == 0 and value is not None:
                st[("mem", k)] = value
        elif base is None or base[0] not in ("H", "F", "K", "G"):
            self.forget_escaped(st)

    def slot_load(self, st, base, off):
        if base is not None and base[0] == "S":
            return st.get(("mem", base[1] + off))
        return self.V.load(base, off)

    def address(self, st, v):
        """A register now holds v; a frame address escapes."""
        if v is not None and v[0] == "S":
            st["esc"] = min(st.get("esc", v[1]), v[1])
        return v

    def step_arm(self, i, st, fl, vals):
        mn = re.sub(r"\.(n|w)$", "", i.mn)
        ops = split_ops(i.ops)
        newfl = fl if ARM_FLAGSAFE.match(i.mn) and not i.pred else None
        if i.kind in ("cond", "jump", "ret", "condret", "ijump", "tail", "trap", "data") or ARM_IT.match(i.mn):
            return fl
        if ARM_COMPARE.match(i.mn):
            if mn == "cmp" and len(ops) == 2 and imm(ops[1]) == 0:
                return ("Z", st.get(arm_reg(ops[0])))
            return None
        sp = st.get("sp")
        regs = re.search(r"\{([^}]*)\}", i.ops)
        reglist = [arm_reg(r) for r in regs.group(1).split(",")] if regs else []
        if mn == "push" or (mn == "stmdb" and ops and arm_reg(ops[0]) == "sp"):
            st["sp"] = Values.add(sp, -4 * len(reglist))
            self.slot_store(st, st["sp"], 0, None, 4 * len(reglist)) if st["sp"] else None
            if st["sp"] is None:
                st.pop("sp")
            return newfl
        if mn == "pop" or (mn.startswith("ldm") and ops and arm_reg(ops[0]) == "sp"):
            for r in reglist:
                st.pop(r, None)
            if sp is not None:
                st["sp"] = Values.add(sp, 4 * len(reglist))
            else:
                st.pop("sp", None)
            return newfl
        mem = None
        if len(ops) >= 2:
            m = re.match(r"^\[(\w+)(?:, #(-?\w+))?\]$", ops[-1])
            if m:
                mem = (arm_reg(m.group(1)), imm(m.group(2)) if m.group(2) else 0)
        writeback = re.search(r"\[(\w+)(?:, [^\]]*)?\](!|, )", i.ops)
        if ARM_NOWRITE.match(i.mn) or mn.startswith("strex"):
            if mn.startswith(("str", "stm")):
                if mem and not writeback and not mn.startswith("stm"):
                    size = {"strb": 1, "strh": 2, "strd": 8}.get(mn, 4)
                    base = vals(mem[0])
                    if mn == "strd":
                        self.slot_store(st, base, mem[1], vals(arm_reg(ops[0])))
                        self.slot_store(st, base, mem[1] + 4, vals(arm_reg(ops[1])))
                    else:
                        self.slot_store(st, base, mem[1], None if i.pred else vals(arm_reg(ops[0])), size)
                else:
                    self.forget_escaped(st)
            if writeback:
                st.pop(arm_reg(writeback.group(1)), None)
            if mn.startswith("strex"):
                st.pop(arm_reg(ops[0]), None)
            return newfl
        written, value = set(), {}
        if mn.startswith("ldm"):
            written |= set(reglist)
            if ops and ops[0].endswith("!"):
                written.add(arm_reg(ops[0]))
        elif mn.startswith("v"):
            written |= {arm_reg(o) for o in ops if re.match(r"^(r\d+|ip|fp|sl|sb|lr)$", o)}
        elif mn in ("umull", "smull", "umlal", "smlal", "ldrd", "ldrexd"):
            written |= {arm_reg(ops[0]), arm_reg(ops[1])}
            if mn == "ldrd" and mem and not writeback and not i.pred:
                base = vals(mem[0])
                value[arm_reg(ops[0])] = self.slot_load(st, base, mem[1])
                value[arm_reg(ops[1])] = self.slot_load(st, base, mem[1] + 4)
        elif ops:
            rd = arm_reg(ops[0])
            written.add(rd)
            if not i.pred:
                if mn in ("ldr", "ldr.w") and mem and mem[0] != "pc" and not writeback:
                    value[rd] = self.slot_load(st, vals(mem[0]), mem[1])
                else:
                    value[rd] = self.arm_value(i, mn, ops, vals)
        if writeback:
            written.add(arm_reg(writeback.group(1)))
        for r in written:
            st.pop(r, None)
        for r, v in value.items():
            if v is not None:
                st[r] = self.address(st, v) if r != "sp" else v
        return newfl

    def arm_value(self, i, mn, ops, vals):
        if mn in ("mov", "movs") and len(ops) == 2:
            if ops[1].startswith("#"):
                return ("K", imm(ops[1]) & 0xFFFFFFFF) if imm(ops[1]) is not None else None
            return vals(arm_reg(ops[1])) if re.match(r"^\w+$", ops[1]) else None
        if mn == "movw" and len(ops) == 2 and imm(ops[1]) is not None:
            return ("K", imm(ops[1]))
        if mn == "movt" and len(ops) == 2 and imm(ops[1]) is not None:
            v = vals(arm_reg(ops[0]))
            return ("K", (v[1] & 0xFFFF) | (imm(ops[1]) << 16)) if v and v[0] == "K" else None
        if mn in ("add", "adds", "addw", "sub", "subs", "subw"):
            sign = -1 if mn.startswith("sub") else 1
            if len(ops) == 3 and ops[2].startswith("#") and imm(ops[2]) is not None:
                return Values.add(vals(arm_reg(ops[1])), sign * imm(ops[2]))
            if len(ops) == 2 and ops[1].startswith("#") and imm(ops[1]) is not None:
                return Values.add(vals(arm_reg(ops[0])), sign * imm(ops[1]))
            return None
        if mn in ("bic", "bics", "and", "ands") and len(ops) == 3 and imm(ops[2]) is not None:
            # the buffer a heap is created in, aligned up: the control structure stands there
            v = vals(arm_reg(ops[1]))
            mask = ~imm(ops[2]) if mn.startswith("bic") else imm(ops[2])
            if v is not None and v[0] == "H" and mask & 0xFFFFFFFF >= 0xFFFFFF00 and v[1] & 7 == 7:
                return ("H", v[1] & mask)
            return None
        if mn in ("ldr", "ldr.w"):
            m = re.match(r"^\[pc(?:, #(-?\w+))?\]$", ops[1]) if len(ops) == 2 else None
            lit = re.search(r"\(([0-9a-f]+) <", i.comment)
            if m and lit:
                w = self.elf.word(int(lit.group(1), 16))
                return ("K", w) if w is not None else None
            return None
        if mn == "adr":
            t = target_of(i)
            return ("K", t) if t is not None else None
        return None

    def step_rv(self, i, st, vals):
        mn, ops = i.mn, split_ops(i.ops)
        if i.kind in ("cond", "jump", "ret", "ijump", "tail", "trap", "data"):
            return
        if mn in ("sb", "sh", "sw") and len(ops) == 2:
            m = re.match(r"^(-?\w+)\((\w+)\)$", ops[1])
            if m:
                self.slot_store(st, vals(m.group(2)), imm(m.group(1)), vals(ops[0]) if mn == "sw" else None,
                                {"sb": 1, "sh": 2, "sw": 4}[mn])
            else:
                self.forget_escaped(st)
            return
        if mn in ("fence", "fence.i", "nop", "csrw", "csrs", "csrc", "csrwi", "csrsi", "csrci") or not ops:
            return
        rd = ops[0]
        v = None
        if mn == "mv" and len(ops) == 2:
            v = vals(ops[1])
        elif mn == "li" and len(ops) == 2 and imm(ops[1]) is not None:
            v = ("K", imm(ops[1]) & 0xFFFFFFFF)
        elif mn == "lui" and len(ops) == 2 and imm(ops[1]) is not None:
            v = ("K", (imm(ops[1]) << 12) & 0xFFFFFFFF)
        elif mn == "auipc" and len(ops) == 2 and imm(ops[1]) is not None:
            v = ("K", (i.addr + (imm(ops[1]) << 12)) & 0xFFFFFFFF)
        elif mn in ("addi", "add") and len(ops) == 3 and imm(ops[2]) is not None:
            v = Values.add(vals(ops[1]), imm(ops[2]))
        elif mn == "lw" and len(ops) == 2:
            m = re.match(r"^(-?\w+)\((\w+)\)$", ops[1])
            if m:
                v = self.slot_load(st, vals(m.group(2)), imm(m.group(1)))
        elif mn in ("andi", "and") and len(ops) == 3 and imm(ops[2]) is not None:
            b = vals(ops[1])
            if b is not None and b[0] == "H" and imm(ops[2]) & 0xFFFFFFFF >= 0xFFFFFF00 and b[1] & 7 == 7:
                v = ("H", b[1] & imm(ops[2]))
        st.pop(rd, None)
        if v is not None and rd != "zero":
            st[rd] = self.address(st, v) if rd != "sp" else v

    def dataflow(self, f, ctx):
        """The register state before each instruction (index -> dict), and the flag state."""
        insns = f["insns"]
        succ = self.local_succ(f)
        init = {r: v for r, v in ctx.items() if v is not None and v[0] != "S"}
        init["sp"] = ("S", 0)
        if self.arch.name == "riscv":  # gp: the linker's __global_pointer$, which no function writes
            gp = self.elf.symbol("__global_pointer$")
            if len(gp) == 1:
                init["gp"] = ("K", gp[0]["value"])
        before = {0: (init, None)}
        work = [0]
        while work:
            k = work.pop()
            st, fl = before[k]
            st = dict(st)
            i = insns[k]
            fl = self.step(i, st, fl, lambda r, s=before[k][0]: s.get(r))
            for s in succ[k]:
                if s not in before:
                    before[s] = (st, fl)
                    work.append(s)
                    continue
                ost, ofl = before[s]
                nst = {r: v for r, v in ost.items() if st.get(r) == v and r != "esc"}
                if "esc" in ost or "esc" in st:
                    nst["esc"] = min(x.get("esc", 1 << 30) for x in (ost, st))
                nfl = ofl if ofl == fl else None
                if nst != ost or nfl != ofl:
                    before[s] = (nst, nfl)
                    work.append(s)
        return before

    def local_succ(self, f):
        """Successors inside f (a call falls through: whether the callee returns is decided later)."""
        if "succ" in f:
            return f["succ"]
        insns, at = f["insns"], f["at"]
        succ = {}
        for k, i in enumerate(insns):
            nxt = [k + 1] if k + 1 < len(insns) else []
            if i.kind in ("seq", "call", "icall", "condret"):
                succ[k] = nxt
            elif i.kind in ("jump", "cond"):
                inside = i.target in at
                s = [at[i.target]] if inside else []
                if i.kind == "cond":
                    s = nxt + s
                elif not inside:
                    i.kind = "tail"
                succ[k] = s
            else:
                succ[k] = []
        f["succ"] = succ
        return succ

    # -- per (function, context, configuration): the resolved graph of one function --------------
    def template(self, f, ctx, hooks):
        key = (f["start"], tuple(sorted(ctx.items())), hooks)
        if key in self.templates:
            return self.templates[key]
        self.V = Values(self)
        before = self.dataflow(f, ctx)
        insns, at = f["insns"], f["at"]
        succ = self.local_succ(f)
        t = {"f": f, "edges": {}, "calls": {}, "tails": {}, "dropped": [], "np_test": {}, "np_store": set()}
        for k in before:
            i = insns[k]
            st, fl = before[k]
            s = list(succ[k])
            # a branch on a value whose NULL-ness is known in this configuration has one way only
            if self.stores_field(i, st, self.off["npending"]):
                t["np_store"].add(k)
            if i.kind == "cond":
                z = self.zero_test(i, st, fl)
                if z is not None and z[0] == ("F", self.off["npending"]) and i.target in at:
                    t["np_test"][k] = k + 1 if z[1] else at[i.target]
                if z is not None:
                    reg_zero, taken_if_zero = z
                    known = self.known_zero(reg_zero, hooks)
                    if known is not None:
                        taken = known == taken_if_zero
                        tgt = at.get(i.target)
                        keep = [x for x in s if (x == tgt) == taken] if tgt is not None and tgt != k + 1 else s
                        if keep != s:
                            t["dropped"].append((i.addr, "NULL test of %s: %s" % (self.describe(reg_zero),
                                                                                 "taken" if taken else "not taken")))
                        s = keep
                if i.target not in at:  # a conditional tail call
                    t["tails"][k] = self.resolve_direct(f, i)
            if i.kind == "call":
                t["calls"][k] = self.call_target(f, i, st, ctx)
            elif i.kind == "icall":
                t["calls"][k] = self.indirect(f, i, st, hooks)
            elif i.kind == "tail":
                t["tails"][k] = self.call_target(f, i, st, ctx)
            elif i.kind == "ijump":
                t["tails"][k] = self.indirect(f, i, st, hooks)
            elif i.kind == "bad":
                t["edges"][k] = ("bad", s)
                continue
            t["edges"][k] = ("ok", s)
        self.templates[key] = t
        return t

    def stores_field(self, i, st, field):
        """Whether instruction i may write the heap's word at offset `field`."""
        if self.arch.name == "arm":
            mn = re.sub(r"\.(n|w)$", "", i.mn)
            if not mn.startswith("str"):
                return False
            m = re.search(r"\[(\w+)(?:, #(-?\w+))?\]", i.ops)
            size = {"strb": 1, "strh": 2, "strd": 8}.get(mn, 4)
            base = st.get(arm_reg(m.group(1))) if m else None
            off = imm(m.group(2)) if m and m.group(2) else 0
        else:
            if i.mn not in ("sb", "sh", "sw"):
                return False
            m = re.match(r"^.*,(-?\w+)\((\w+)\)$", i.ops)
            size = {"sb": 1, "sh": 2, "sw": 4}[i.mn]
            base = st.get(m.group(2)) if m else None
            off = imm(m.group(1)) if m else 0
        return base is not None and base[0] == "H" and base[1] + off - 3 <= field < base[1] + off + size

    def describe(self, v):
        if v is None:
            return "?"
        for name, off in self.off.items():
            if v == ("F", off):
                return "hooks." + name if name in ("lock", "unlock", "handler") else name
        return str(v)

    def zero_test(self, i, st, fl):
        """(value, whether the branch is taken when the value is zero) for a NULL test, else None."""
        mn = re.sub(r"\.(n|w)$", "", i.mn)
        ops = split_ops(i.ops)
        if self.arch.name == "arm":
            if mn in ("cbz", "cbnz"):
                return (st.get(arm_reg(ops[0])), mn == "cbz")
            if mn in ("beq", "bne") and fl is not None and fl[0] == "Z":
                return (fl[1], mn == "beq")
            return None
        if mn in ("beqz", "bnez"):
            return (st.get(ops[0]), mn == "beqz")
        if mn in ("beq", "bne") and len(ops) == 3 and "zero" in ops[:2]:
            r = ops[1] if ops[0] == "zero" else ops[0]
            return (st.get(r), mn == "beq")
        return None

    def known_zero(self, v, hooks):
        if v is None:
            return None
        if v[0] == "K":
            return v[1] == 0
        if v in (("F", self.off["lock"]), ("F", self.off["unlock"])):
            return not hooks
        if v == ("F", self.off["gate"]) and hooks:
            return False  # heap_regate: a lock hook sets the gate
        return None

    def resolve_direct(self, f, i):
        if i.target is None or i.target not in self.funcs:
            raise Refuse("%s: call or jump at %#x into the middle of a function (%s %s)" %
                         (f["name"], i.addr, i.mn, i.ops))
        g = self.funcs[i.target]
        if g["name"] in EXCLUDED_CALLEES:
            return ("excluded", g["name"])
        return ("func", g, None)

    def call_target(self, f, i, st, ctx):
        r = self.resolve_direct(f, i)
        if r[0] == "func":
            return ("func", r[1], {x: st[x] for x in self.arch.args if st.get(x) is not None and st[x][0] != "S"})
        return r

    def indirect(self, f, i, st, hooks):
        v = st.get(i.reg)
        args = {x: st[x] for x in self.arch.args if st.get(x) is not None and st[x][0] != "S"}
        if v == ("F", self.off["lock"]) or v == ("F", self.off["unlock"]):
            if not hooks:
                return ("dead",)
            return ("func", self.hook_funcs["lock" if v == ("F", self.off["lock"]) else "unlock"], {})
        if v == ("F", self.off["handler"]):
            return ("user", "the error handler")
        if v is not None and v[0] == "G" and v[1] in self.user_vars:
            return ("user", "what %s installs" % self.user_vars[v[1]])
        if v is not None and v[0] == "G" and not self.elf.word(v[1]):
            return ("dead",)  # a variable no setter linked here writes: NULL, the call is never made
        if v is not None and v[0] == "K":
            a = v[1] & ~1 if self.arch.name == "arm" else v[1]
            if a in self.funcs:
                g = self.funcs[a]
                if g["name"] in EXCLUDED_CALLEES:
                    return ("excluded", g["name"])
                return ("func", g, args)
            if v[1] == 0:
                return ("dead",)
        raise Refuse("%s: indirect %s at %#x through %s = %s: not a lock hook, the heap's table or the user's "
                     "code" % (f["name"], "call" if i.kind == "icall" else "jump", i.addr, i.reg, v))


# --- probes: struct offsets and the bounds' expressions, from the target's compiler ----------------

class Probe:
    def __init__(self, arch, cflags, heap_bytes, control_bytes=0):
        self.arch, self.cflags, self.heap_bytes, self.control_bytes = arch, cflags, heap_bytes, control_bytes
        self.cc = arch.tools + "gcc"

    def values(self, tu, exprs, include_tu=True, header="heap/heap_internal.h"):
        """Compiles `tu` (a source file of the library, included whole; else `header`) followed by
        one constant per expression; returns their values."""
        src = ['#include "%s"' % (tu if include_tu else header)]
        src.append("#define HEAP_BYTES ((unsigned long long)%du)" % self.heap_bytes)
        src.append("#define CONTROL_BYTES ((unsigned long long)%du)" % self.control_bytes)
        for n, e in enumerate(exprs):
            src.append("const unsigned long long wcet_probe_%d = (unsigned long long)(%s);" % (n, e))
        with tempfile.TemporaryDirectory() as d:
            c, o = os.path.join(d, "probe.c"), os.path.join(d, "probe.o")
            with open(c, "w") as fh:
                fh.write("\n".join(src) + "\n")
            cmd = [self.cc] + self.arch.flags + ["-std=c11", "-O0", "-w", "-I", os.path.join(ROOT, "include"),
                                                 "-I", os.path.join(ROOT, "src")] + self.cflags + ["-c", c, "-o", o]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                err = [x for x in r.stderr.splitlines() if "error" in x] or r.stderr.splitlines() or ["?"]
                raise Refuse("the probe for %s does not compile: %s" % (
                    os.path.relpath(tu, ROOT) if include_tu else "the offsets", err[0].split("probe.c:")[-1]))
            e = Elf(o)
            out = []
            for n in range(len(exprs)):
                s = e.symbol("wcet_probe_%d" % n)
                out.append(e.object_value(s[0]))
        return out

    def includes(self, tu):
        r = subprocess.run([self.cc] + self.arch.flags + ["-std=c11", "-I", os.path.join(ROOT, "include"), "-I",
                                                          os.path.join(ROOT, "src")] + self.cflags + ["-M", tu],
                           capture_output=True, text=True)
        return {os.path.realpath(p) for p in r.stdout.replace("\\\n", " ").split()[1:]} if r.returncode == 0 else set()


OFFSETS = {"control_size": "offsetof(rt_heap_ops_t, control_size)", "ops": "offsetof(struct rt_heap, ops)", "lock": "offsetof(struct rt_heap, hooks.lock)",
           "unlock": "offsetof(struct rt_heap, hooks.unlock)", "handler": "offsetof(struct rt_heap, hooks.handler)",
           "gate": "offsetof(struct rt_heap, gate)", "npending": "offsetof(struct rt_heap, npending)"}


# --- loop bounds in the source ----------------------------------------------------------------------

ANNOT = re.compile(r"^wcet:\s*(total\s+)?<=\s*([^;]*?)(?:\s+per\s+(\w+))?\s*(?:;|$)", re.S)


class Annotations:
    """The `wcet:` comments of the library's sources: (file, loop line) -> bound."""

    def __init__(self):
        self.by_line, self.files = {}, set()

    def scan(self, path):
        if path in self.files:
            return
        self.files.add(path)
        try:
            text = open(path).read()
        except OSError:
            return
        lines = text.split("\n")
        for m in re.finditer(r"/\*(.*?)\*/", text, re.S):
            body = m.group(1)
            if not re.match(r"\s*wcet:", body):
                continue
            start = text.count("\n", 0, m.start()) + 1
            end = text.count("\n", 0, m.end()) + 1
            before = lines[start - 1][:lines[start - 1].find("/*")] if "/*" in lines[start - 1] else ""
            loop_line = start if before.strip() else end + 1
            a = ANNOT.match(" ".join(body.split()))
            if a is None or not a.group(2):
                raise Refuse("%s:%d: a wcet comment that is not `wcet: <= EXPR; why` or `wcet: total <= EXPR per "
                             "FUNC; why`" % (os.path.relpath(path, ROOT), start))
            expr = a.group(2).strip()
            code = lines[loop_line - 1] if loop_line - 1 < len(lines) else ""
            if not re.search(r"\b(for|while|do)\b", code):
                raise Refuse("%s:%d: the wcet bound's line holds no loop (for, while, do)" %
                             (os.path.relpath(path, ROOT), loop_line))
            self.by_line[(path, loop_line)] = {"file": path, "line": loop_line, "expr": expr, "total": bool(a.group(1)),
                                               "scope": a.group(3), "value": None, "sized": "HEAP_BYTES" in expr,
                                               "used": set()}


# --- one entry point's graph: calls expanded in place ----------------------------------------------

NEG = None  # an infeasible item's weight


class Graph:
    """The code of one entry point in one configuration (lock hooks installed or not), every call
    expanded at its call site. Nodes are instructions (plus EXIT); node 0 is the entry."""

    def __init__(self, an, entry, ctx, hooks):
        self.an, self.hooks = an, hooks
        self.succ, self.weight, self.inst, self.k, self.mark = [], [], [], [], []
        self.insts = []
        self.excluded, self.user, self.dropped = set(), set(), []
        self.np_test, self.np_store = {}, set()
        self.ends = set()
        self.exit = None
        entry_node = self.new(-1, -1)
        self.exit = self.new(-1, -1)
        self.weight[self.exit] = 0
        self.weight[entry_node] = 0
        self.ends.add(self.exit)
        first = self.build(entry, ctx, [self.exit], [], None)
        self.succ[entry_node] = [first]

    def new(self, inst, k):
        self.succ.append([])
        self.weight.append(1)
        self.inst.append(inst)
        self.k.append(k)
        self.mark.append(None)
        return len(self.succ) - 1

    def build(self, f, ctx, cont, stack, parent):
        an = self.an
        if any(g["start"] == f["start"] for g in stack):
            raise Refuse("recursion: %s" % " -> ".join(g["name"] for g in stack + [f]))
        try:
            t = an.template(f, ctx, self.hooks)
        except Refuse as e:
            if "reached from" in str(e):
                raise
            raise Refuse("%s (reached from %s)" % (e, " -> ".join(g["name"] for g in stack) or "the entry"))
        me = len(self.insts)
        self.insts.append({"f": f, "parent": parent, "entry": None, "name": f["name"]})
        self.dropped.extend(t["dropped"])
        insns = f["insns"]
        order, seen = [], {0}
        todo = [0]
        while todo:
            k = todo.pop()
            order.append(k)
            if k not in t["edges"]:
                raise Refuse("%s: no state at %#x" % (f["name"], insns[k].addr))
            for s in t["edges"][k][1]:
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        nid = {k: self.new(me, k) for k in sorted(seen)}
        self.insts[me]["entry"] = nid[0]
        hook = an.hook_role.get(f["start"])
        for k in sorted(seen):
            n, i = nid[k], insns[k]
            status, local = t["edges"][k]
            if status == "bad" or i.kind == "data":
                raise Refuse("%s: unanalysable control flow at %#x: %s %s (a jump table, a write to pc or data "
                             "executed)" % (f["name"], i.addr, i.mn, i.ops))
            loc = [nid[s] for s in local]
            if k in t["np_store"]:
                self.np_store.add(n)
            if k in t["np_test"] and t["np_test"][k] in nid:
                self.np_test[n] = nid[t["np_test"][k]]
            if hook is not None and an.hook_insn[hook] == i.addr:
                self.mark[n] = "mask" if hook == "lock" else "unmask"
            if k in t["calls"]:
                c = t["calls"][k]
                if c[0] == "func":
                    callee_cont = [nid[k + 1]] if (k + 1) in seen and (k + 1) in t["edges"][k][1] else []
                    self.succ[n] = [self.build(c[1], c[2], callee_cont, stack + [f], me)]
                elif c[0] == "excluded":
                    self.excluded.add(c[1])
                    self.succ[n] = loc
                    self.mark[n] = "excluded"
                elif c[0] == "user":
                    self.user.add(c[1])
                    self.succ[n] = loc
                    self.mark[n] = "user"
                else:  # dead: a call of a NULL hook in a configuration without hooks
                    self.succ[n] = []
            elif k in t["tails"]:
                c = t["tails"][k]
                if c[0] == "func":
                    entry = self.build(c[1], c[2], cont, stack + [f], me)
                    self.succ[n] = loc + [entry] if i.kind == "cond" else [entry]
                elif c[0] in ("excluded", "user"):
                    (self.excluded if c[0] == "excluded" else self.user).add(c[1])
                    self.succ[n] = loc + cont if i.kind == "cond" else list(cont)
                    self.mark[n] = c[0]
                else:
                    self.succ[n] = loc if i.kind == "cond" else []
            elif i.kind == "ret":
                self.succ[n] = list(cont)
            elif i.kind == "condret":
                self.succ[n] = loc + list(cont)
            elif i.kind == "trap":
                self.succ[n] = []
                self.ends.add(n)
            else:
                self.succ[n] = loc
        return nid[0]

    def insn_name(self, n):
        """The callee an excluded call node calls."""
        i = self.insn(n)
        t = target_of(i) if i is not None else None
        f = self.an.funcs.get(t) if t is not None else None
        return f["name"] if f else "indirect"

    def where(self, n):
        if self.inst[n] < 0:
            return "EXIT" if n == self.exit else "ENTRY"
        f = self.insts[self.inst[n]]["f"]
        i = f["insns"][self.k[n]]
        return "%s+%#x" % (f["name"], i.addr - f["start"])

    def insn(self, n):
        if self.inst[n] < 0:
            return None
        return self.insts[self.inst[n]]["f"]["insns"][self.k[n]]


def dfs_order(n_nodes, succ, root):
    """Reverse postorder of the nodes reachable from root, and the retreating edges."""
    state = [0] * n_nodes
    post, retreat = [], []
    stack = [(root, 0)]
    state[root] = 1
    while stack:
        v, j = stack[-1]
        if j < len(succ[v]):
            stack[-1] = (v, j + 1)
            s = succ[v][j]
            if state[s] == 0:
                state[s] = 1
                stack.append((s, 0))
            elif state[s] == 1:
                retreat.append((v, s))
        else:
            state[v] = 2
            post.append(v)
            stack.pop()
    return post[::-1], retreat


def dominators(rpo, preds, root):
    index = {v: k for k, v in enumerate(rpo)}
    idom = {root: root}

    def intersect(a, b):
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a
    changed = True
    while changed:
        changed = False
        for v in rpo[1:]:
            ps = [p for p in preds[v] if p in idom]
            if not ps:
                continue
            new = ps[0]
            for p in ps[1:]:
                new = intersect(p, new)
            if idom.get(v) != new:
                idom[v] = new
                changed = True
    return idom


def dominates(idom, a, b):
    while True:
        if b == a:
            return True
        if idom[b] == b:
            return False
        b = idom[b]


class Solver:
    """Loops found, bounded and collapsed; longest paths in instructions and in the lock-held stretch."""

    def __init__(self, g, ann):
        self.g, self.ann = g, ann
        n = len(g.succ)
        rpo, retreat = dfs_order(n, g.succ, 0)
        self.reach = set(rpo)
        preds = [[] for _ in range(n)]
        for v in rpo:
            for s in g.succ[v]:
                preds[s].append(v)
        self.preds = preds
        idom = dominators(rpo, preds, 0)
        headers = {}
        for (u, h) in retreat:
            if not dominates(idom, h, u):
                raise Refuse("irreducible control flow: %s -> %s" % (g.where(u), g.where(h)))
            headers.setdefault(h, []).append(u)
        self.loops = []
        for h, latches in headers.items():
            body, todo = {h}, [u for u in latches if u != h]
            body.update(todo)
            while todo:
                v = todo.pop()
                for p in preds[v]:
                    if p not in body and p in self.reach:
                        body.add(p)
                        todo.append(p)
            self.loops.append({"header": h, "latches": latches, "body": body})
        self.loops.sort(key=lambda L: len(L["body"]))
        self.loop_of = {}
        for idx, L in enumerate(self.loops):  # smallest first: the innermost loop of each node
            L["parent"] = None
            for v in L["body"]:
                self.loop_of.setdefault(v, idx)
        for idx, L in enumerate(self.loops):
            for j in range(idx + 1, len(self.loops)):
                if L["header"] in self.loops[j]["body"]:
                    L["parent"] = j
                    break
        for L in self.loops:
            d, p = 0, L["parent"]
            while p is not None:
                d, p = d + 1, self.loops[p]["parent"]
            L["depth"] = d
        for idx, L in enumerate(self.loops):
            self.bind(idx, L)
        self.mark_sized()

    # -- which bound a loop has ----------------------------------------------------------------
    def bind(self, idx, L):
        g = self.g
        hi = g.inst[L["header"]]
        inner = {v for M in self.loops if M["parent"] == idx for v in M["body"]}
        own = [v for v in L["body"] if v not in inner and g.inst[v] == hi]
        control = {L["header"]} | {u for u in L["latches"] if g.inst[u] == hi}
        for v in own:
            if any(s not in L["body"] for s in g.succ[v]):
                control.add(v)
        found = {}
        lines = set()
        for v in control:
            i = g.insn(v)
            if i is None or i.line is None:
                continue
            lines.add(i.line)
            a = self.ann.by_line.get(i.line)
            if a is not None:
                found[i.line] = a
        where = "%s (%s)" % (g.where(L["header"]), ", ".join("%s:%d" % (os.path.relpath(f, ROOT), l)
                                                             for f, l in sorted(lines)) or "no source line")
        if not found:
            raise Refuse("unbounded loop at %s: no `wcet: <=` comment on its lines" % where)
        if len(found) > 1:
            raise Refuse("loop at %s: %d wcet comments on its lines" % (where, len(found)))
        a = list(found.values())[0]
        a["used"].add(g.an.path)
        L["ann"], L["where"] = a, where

    def mark_sized(self):
        """The code of the damage path: the calls of FUNC for a loop bounded by the heap's size in
        total per call of FUNC, else the function holding such a loop; all they call."""
        g = self.g
        roots = set()
        for L in self.loops:
            a = L["ann"]
            if not a["sized"]:
                continue
            x = g.inst[L["header"]]
            if a["total"]:
                while x is not None and g.insts[x]["f"]["name"].split(".")[0] != a["scope"]:
                    x = g.insts[x]["parent"]
            if x is not None:
                roots.add(x)
        roots.discard(0)  # the entry itself: only its size-bounded loops are the damage path
        self.sized_inst = set()
        for x in range(len(g.insts)):
            y = x
            while y is not None and y not in roots:
                y = g.insts[y]["parent"]
            if y is not None:
                self.sized_inst.add(x)

    # -- longest paths ----------------------------------------------------------------------------
    def solve(self, normal):
        """(longest path entry -> end in instructions, its items; longest lock-held stretch, its items)
        over the paths that enter no size-bounded code (normal) or over all paths."""
        g = self.g
        self.normal = normal
        self.cut = self.npending_cut() if normal else set()
        self.cost = {}
        self.budget = {}      # scope instance -> {annotation key: (N, iteration)}
        self.used_weight = set()
        for idx in sorted(range(len(self.loops)), key=lambda j: -self.loops[j]["depth"]):
            self.collapse(idx)
        items, edges = self.level(None)
        total = self.longest(items, edges, 0, set(g.ends))
        stretch = self.stretch(items, edges)
        return total, stretch

    def npending_cut(self):
        """No report is pending when a call starts (every call that defers one delivers it before
        it returns), and a path that defers none -- writes no h->npending, which only the field
        access h->npending writes -- is a normal path (the others are the damage path's: a report
        is deferred where the lock is held, on damage met). So on a normal path the test of
        HEAP_DELIVER finds 0: the branches that deliver are cut from the normal paths."""
        return {(n, s) for n, s in self.g.np_test.items()}

    def node_weight(self, v):
        g = self.g
        if self.normal and (g.inst[v] in self.sized_inst or v in g.np_store):
            return NEG
        w = g.weight[v]
        for x, b in self.budget.items():
            if g.insts[x]["entry"] == v:
                w += sum(n * it for (n, it) in b.values())
        self.used_weight.add(v)
        return w

    def rep(self, v, parent):
        j = self.loop_of.get(v)
        if j is None or j == parent:
            return v
        while self.loops[j]["parent"] != parent:
            j = self.loops[j]["parent"]
            if j is None:
                raise Refuse("internal: loop nesting")
        return ("L", j)

    def level(self, parent):
        g = self.g
        nodes = self.loops[parent]["body"] if parent is not None else self.reach
        header = self.loops[parent]["header"] if parent is not None else None
        items, edges = {}, {}
        for v in nodes:
            r = self.rep(v, parent)
            if r not in items:
                items[r] = self.cost[r[1]] if isinstance(r, tuple) else self.node_weight(v)
                edges[r] = set()
            for s in g.succ[v]:
                if s not in nodes or s == header or (v, s) in self.cut:
                    continue
                rs = self.rep(s, parent)
                if rs != r:
                    edges[r].add(rs)
        return items, edges

    def topo(self, items, edges):
        order, state = [], {}
        for root in items:
            if root in state:
                continue
            stack = [(root, iter(edges[root]))]
            state[root] = 1
            while stack:
                v, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[v] = 2
                    order.append(v)
                    stack.pop()
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(edges[nxt])))
                elif state[nxt] == 1:
                    raise Refuse("internal: a cycle left after collapsing loops")
        return order[::-1]

    def longest(self, items, edges, start, ends):
        """Longest path from start to any item of ends (None: to anywhere), and the path."""
        best, nxt = {}, {}
        for v in reversed(self.topo(items, edges)):
            w = items[v]
            if w is NEG:
                best[v] = NEG
                continue
            cand = [(best[s], s) for s in edges[v] if best.get(s) is not NEG]
            if ends is None or v in ends:
                cand.append((0, None))
            if not cand:
                best[v] = NEG
                continue
            b, s = max(cand, key=lambda x: x[0])
            best[v], nxt[v] = w + b, s
        if best.get(start) is NEG:
            return NEG, []
        path, v = [], start
        while v is not None:
            path.append(v)
            v = nxt.get(v)
        return best[start], path

    def collapse(self, idx):
        g = self.g
        L = self.loops[idx]
        for v in L["body"]:
            if g.mark[v] in ("mask", "unmask"):
                raise Refuse("the lock is taken or released inside the loop at %s" % L["where"])
        items, edges = self.level(idx)
        it, _ = self.longest(items, edges, L["header"], None)
        a = L["ann"]
        if it is NEG:
            self.cost[idx] = NEG
            return
        if self.normal and a["sized"]:
            self.cost[idx] = NEG
            return
        n = a["value"]
        if not a["total"]:
            self.cost[idx] = (n + 1) * it
            return
        x = g.inst[L["header"]]
        while x is not None and g.insts[x]["f"]["name"].split(".")[0] != a["scope"]:
            x = g.insts[x]["parent"]
        if x is None:
            raise Refuse("loop at %s: its total bound is per call of %s, which does not enclose it" %
                         (L["where"], a["scope"]))
        if g.insts[x]["entry"] in self.used_weight:
            raise Refuse("internal: the budget of %s is needed before its loops are bounded" % a["scope"])
        key = (a["file"], a["line"])
        old = self.budget.setdefault(x, {}).get(key, (n, 0))
        self.budget[x][key] = (n, max(old[1], it))
        self.cost[idx] = it  # one run of the header per entry; the other runs from the budget

    def stretch(self, items, edges):
        """Longest lock-held stretch: from after a mask (outermost) to an unmask, inclusive."""
        g = self.g
        order = self.topo(items, edges)
        self.held_excluded = set()
        state = {0: {0: (0, None)}}  # item -> depth on entry -> (open stretch length, predecessor)
        best, best_at = NEG, None
        for v in order:
            ins = state.get(v)
            if not ins:
                continue
            w = items[v]
            if w is NEG:
                continue
            mark = g.mark[v] if not isinstance(v, tuple) else None
            if mark == "user" and any(d > 0 for d in ins):
                raise Refuse("the user's code is called with the lock held at %s" % g.where(v))
            if mark == "excluded" and any(d > 0 for d in ins):
                self.held_excluded.add(v)
            out = {}
            for d, (val, _) in ins.items():
                if mark == "mask":
                    nd, nv = d + 1, (0 if d == 0 else val + w)
                elif mark == "unmask":
                    if d == 0:
                        continue
                    nd, nv = d - 1, val + w
                    if d == 1:
                        if best is NEG or nv > best:
                            best, best_at = nv, (v, d)
                        nv = 0
                else:
                    nd, nv = d, (val + w if d > 0 else 0)
                if nd > 3:
                    raise Refuse("the lock is taken more than 3 deep at %s" % g.where(v))
                if nd not in out or nv > out[nd][0]:
                    out[nd] = (nv, d)
            if (v in g.ends) and any(d > 0 for d in out):
                if v == g.exit:
                    raise Refuse("a path returns with the lock held")
                for d, (val, _) in out.items():
                    if d > 0 and (best is NEG or val > best):
                        best, best_at = val, (v, d)
            for s in edges[v]:
                st = state.setdefault(s, {})
                for d, (val, din) in out.items():
                    if d not in st or val > st[d][0]:
                        st[d] = (val, (v, din))
        path = []
        if best_at is not None:  # back from the end of the stretch to its mask
            v, d = best_at
            seen = set()
            while v is not None and (v, d) not in seen:
                seen.add((v, d))
                path.append(v)
                mark = g.mark[v] if not isinstance(v, tuple) else None
                if mark == "mask" and d == 0:
                    break
                prev = state[v][d][1]
                if prev is None:
                    break
                v, d = prev
        return best, path[::-1]


# --- setting an ELF up: offsets, hooks, the heap's table, the user's variables ----------------

def setup(an, probe, args):
    vals = probe.values(None, list(OFFSETS.values()), include_tu=False)
    an.off = dict(zip(OFFSETS, vals))
    an.ops_table = None
    # the port's hooks and their masking / unmasking instruction
    a = an.arch.name
    is_mask = (lambda i: i.mn == "cpsid" and i.ops == "i") if a == "arm" else \
        (lambda i: i.mn in ("csrrc", "csrrci", "csrc", "csrci") and "mstatus" in i.ops and i.ops.endswith(",8"))
    is_unmask = (lambda i: (i.mn == "msr" and i.ops.upper().startswith("PRIMASK")) or
                 (i.mn == "cpsie" and i.ops == "i")) if a == "arm" else \
        (lambda i: i.mn in ("csrs", "csrsi", "csrw", "csrrs", "csrrw", "csrrsi") and "mstatus" in i.ops)
    an.hook_funcs, an.hook_role, an.hook_insn, an.hook_masked = {}, {}, {}, 0
    for role, name, test in (("lock", args.lock_hook, is_mask), ("unlock", args.unlock_hook, is_unmask)):
        f = an.func(name)
        hits = [i.addr for i in f["insns"] if test(i)]
        if len(hits) != 1:
            raise Refuse("%s: %d %s instructions (need exactly one)" % (name, len(hits),
                                                                         "masking" if role == "lock" else "unmasking"))
        an.hook_funcs[role], an.hook_role[f["start"]], an.hook_insn[role] = f, role, hits[0]
        k = f["at"][hits[0]]
        if role == "lock":  # after the mask, to the return
            tail = f["insns"][k + 1:]
            end = next((j for j, i in enumerate(tail) if i.kind == "ret"), None)
            part = tail[:end + 1] if end is not None else None
        else:  # from the entry to the unmask, inclusive
            part = f["insns"][:k + 1]
        if part is None or any(i.kind not in ("seq", "ret") for i in part[:-1]):
            raise Refuse("%s: not straight-line code around its %s" % (name, "mask" if role == "lock" else "unmask"))
        an.hook_masked = getattr(an, "hook_masked", 0) + len(part)
    # the heap's table: the read-only object rt_tlsf_create hands on (h->ops)
    if args.ops_table:
        s = [x for x in an.elf.symbols if x["name"] == args.ops_table and x["type"] == 1]
        if len(s) != 1:
            raise Refuse("--ops-table %s: not one object of that name" % args.ops_table)
        an.ops_table = s[0]["value"]
    else:
        f = an.func("rt_tlsf_create")
        an.V = Values(an)
        before = an.dataflow(f, {})
        objects = {x["value"]: x["name"] for x in an.elf.symbols if x["type"] == 1 and x["size"] > 0}
        found, anywhere = set(), set()
        for k, (st, _) in before.items():
            for r, v in st.items():
                if isinstance(r, str) and v and v[0] == "K" and v[1] in objects and an.elf.readonly(v[1]):
                    anywhere.add(v[1])
                    if f["insns"][k].kind in ("call", "tail", "icall", "ijump") and r in an.arch.args:
                        found.add(v[1])
        if len(anywhere) == 1:  # the one read-only object create refers to (stored, or handed on)
            found = anywhere
        if len(found) != 1:
            raise Refuse("rt_tlsf_create hands on %d read-only objects (%s): which is the heap's table? "
                         "(--ops-table NAME)" % (len(found), ", ".join(objects[x] for x in sorted(found))))
        an.ops_table = found.pop()
    probe.control_bytes = an.elf.word(an.ops_table + an.off["control_size"]) or 0
    # the user's code behind a variable of the library: a variable a public setter (rt_set_*,
    # e.g. rt_set_entropy) writes one of its arguments to holds a function of the user's
    an.user_vars = {}
    for f in an.funcs.values():
        if not re.match(r"^rt_set_\w+$", f["name"]):
            continue
        an.V = Values(an)
        before = an.dataflow(f, {r: ("A", n) for n, r in enumerate(an.arch.args)})
        for k, (st, _) in before.items():
            i = f["insns"][k]
            ops = split_ops(i.ops)
            if a == "arm" and i.mn in ("str", "str.w") and len(ops) == 2 and (st.get(arm_reg(ops[0])) or "?")[0] == "A":
                m = re.match(r"^\[(\w+)(?:, #(-?\w+))?\]$", ops[1])
                base = st.get(arm_reg(m.group(1))) if m else None
                if base and base[0] == "K":
                    an.user_vars[base[1] + (imm(m.group(2)) if m.group(2) else 0)] = f["name"]
            if a == "riscv" and i.mn == "sw" and len(ops) == 2 and (st.get(ops[0]) or "?")[0] == "A":
                m = re.match(r"^(-?\w+)\((\w+)\)$", ops[1])
                base = st.get(m.group(2)) if m else None
                if base and base[0] == "K":
                    an.user_vars[base[1] + imm(m.group(1))] = f["name"]


# --- the study's measurements: what a descriptor's wrapper and the call site add -----------------

OPS = ["malloc", "free", "realloc", "calloc", "memalign"]


def counter_reads(an, f):
    """The counter reads of f (port_count_begin/end, inlined): (first instruction, the read)."""
    ins, out = f["insns"], []
    for k, i in enumerate(ins):
        ops = split_ops(i.ops)
        if an.arch.name == "arm":
            if i.mn == "movw" and len(ops) == 2 and imm(ops[1]) == 0xE018 and k + 2 < len(ins) and \
                    ins[k + 1].mn == "movt" and imm(split_ops(ins[k + 1].ops)[1]) == 0xE000 and \
                    ins[k + 2].mn.startswith("ldr"):
                out.append((k, k + 2))
        elif i.mn == "csrr" and len(ops) == 2 and ops[1] == "minstret":
            out.append((k, k))
    return out


def wrapper_cost(an, f, target):
    """The instructions of a descriptor's wrapper around `target`, the call of it counted as one."""
    succ = an.local_succ(f)
    ins, memo, busy = f["insns"], {}, set()

    def longest(k):
        if k in memo:
            return memo[k]
        if k in busy:
            raise Refuse("%s: a loop in the wrapper" % f["name"])
        busy.add(k)
        i = ins[k]
        if i.kind in ("call", "tail"):
            t = an.funcs.get(i.target)
            if t is None or t["name"] != target:
                raise Refuse("%s: calls something else than %s" % (f["name"], target))
        elif i.kind not in ("seq", "cond", "jump", "ret"):
            raise Refuse("%s: %s %s in the wrapper" % (f["name"], i.mn, i.ops))
        nxt = [] if i.kind in ("ret", "tail") else succ[k]
        memo[k] = 1 + max([longest(x) for x in nxt] or [0])
        busy.discard(k)
        return memo[k]
    return longest(0)


def study_costs(an, probe, descriptor):
    """What a count of the study (ports/study/vaios_study.c: port_count_begin, d->op(...),
    port_count_end) holds besides the entry point's instructions: the descriptor's wrapper (read
    from the descriptor `descriptor` in the ELF) and the call site -- the longest stretch of any
    measurement of the ELF that encloses one indirect call and no other, between its two counter
    reads, exclusive, the indirect call counted as one."""
    offs = probe.values(None, ["offsetof(rt_allocator_t, %s)" % n for n in OPS], include_tu=False,
                        header="rtalloc/registry.h")
    d = [x for x in an.elf.symbols if x["name"] == descriptor and x["type"] == 1]
    if len(d) != 1:
        raise Refuse("%s: no descriptor object %s" % (an.path, descriptor))
    wrappers = {}
    for n, off in zip(OPS, offs):
        w = an.elf.word(d[0]["value"] + off)
        f = an.funcs.get(w & ~1 if an.arch.name == "arm" else w) if w else None
        if f is None:
            raise Refuse("%s.%s: no function at %#x" % (descriptor, n, w or 0))
        wrappers["rt_tlsf_" + n] = wrapper_cost(an, f, "rt_tlsf_" + n)
    # functions that are one counter read (port_count_begin / port_count_end, not inlined):
    # straight-line; pre = instructions before the read sequence, post = after the read, to the return
    readers = {}
    for f in an.funcs.values():
        reads = counter_reads(an, f)
        if len(reads) == 1:
            a, r = reads[0]
            ret = next((j for j in range(len(f["insns"])) if f["insns"][j].kind == "ret"), None)
            if ret is not None and ret > r and all(i.kind == "seq" for i in f["insns"][:ret]):
                readers[f["start"]] = (a, ret - r)
    site, where = 0, None
    for f in an.funcs.values():
        ins = f["insns"]
        reads = counter_reads(an, f)
        ends = {a: 0 for a, _ in reads}       # index -> instructions of the end read, not counted
        begins = [(r + 1, 0) for _, r in reads]  # (first index, instructions counted before it)
        for k, i in enumerate(ins):
            if i.kind == "call" and i.target in readers:
                pre, post = readers[i.target]
                ends[k] = 1 + pre   # the call and the reader's instructions before its read
                begins.append((k + 1, post))
        if not ends or not begins:
            continue
        succ = an.local_succ(f)
        for first, extra in begins:
            memo, busy, cyclic = {}, set(), [False]

            def walk(k):
                if k in ends:
                    return (ends[k], 0, 0)
                if k in memo:
                    return memo[k]
                if k in busy:
                    cyclic[0] = True
                    return None
                busy.add(k)
                i = ins[k]
                best = None
                if i.kind not in ("ret", "tail", "ijump", "trap", "condret"):
                    for x in succ[k]:
                        w = walk(x)
                        if w is not None and (best is None or w[0] > best[0]):
                            best = w
                busy.discard(k)
                if best is not None:
                    best = (best[0] + 1, best[1] + (i.kind == "icall"), best[2] + (i.kind == "call"))
                memo[k] = best
                return best
            w = walk(first) if first < len(ins) else None
            if w is None or cyclic[0] or w[1] != 1:
                continue
            if w[2]:
                raise Refuse("%s: a measurement around an indirect call also makes a direct call (%#x)" %
                             (f["name"], ins[first].addr))
            if w[0] + extra > site:
                site, where = w[0] + extra, "%s+%#x" % (f["name"], ins[first].addr - f["start"])
    if where is None:
        raise Refuse("%s: no measurement around an indirect call found" % an.path)
    return {"wrappers": wrappers, "site": site, "site_at": where}


def tu_of(path, candidates, probe, cache):
    if path.endswith(".c"):
        return path
    for c in candidates:
        if c not in cache:
            cache[c] = probe.includes(c)
        if path in cache[c]:
            return c
    raise Refuse("%s: no translation unit of the code analysed includes it" % os.path.relpath(path, ROOT))


def runs(g, items):
    """The items of a path as readable runs: function, address range, instructions, source lines."""
    out, cur = [], None
    for v in items:
        if isinstance(v, tuple):
            cur = None
            out.append(["loop", v[1]])
            continue
        i = g.insn(v)
        if i is None:
            continue
        x = g.inst[v]
        f = g.insts[x]["f"]
        depth, p = 0, g.insts[x]["parent"]
        while p is not None:
            depth, p = depth + 1, g.insts[p]["parent"]
        if cur is not None and cur["inst"] == x and cur["last"] is not None and \
                f["insns"].index(i) == cur["k"] + 1 and g.mark[v] is None:
            cur["n"] += 1
            cur["last"] = i.addr
            cur["k"] += 1
            if i.line:
                cur["lines"].add(i.line)
            continue
        cur = {"inst": x, "depth": depth, "name": f["name"], "first": i.addr, "last": i.addr, "n": 1,
               "k": f["insns"].index(i), "lines": {i.line} if i.line else set(), "mark": g.mark[v]}
        out.append(cur)
    return out


def print_path(g, solver, items, title):
    print("    %s:" % title)
    for r in runs(g, items):
        if r[0] == "loop" if isinstance(r, list) else False:
            L = solver.loops[r[1]]
            a = L["ann"]
            print("      loop %s: %s <= %s = %d %s -> %s instructions" % (
                L["where"], "total" if a["total"] else "iterations", a["expr"], a["value"],
                "per call of " + a["scope"] if a["total"] else "per entry", solver.cost[r[1]]))
            continue
        lines = ", ".join(sorted("%s:%d" % (os.path.basename(f), l) for f, l in r["lines"]))
        print("      %s%s %#x..%#x: %d%s  %s" % ("  " * r["depth"], r["name"], r["first"], r["last"], r["n"],
                                                  " (%s)" % r["mark"] if r["mark"] else "", lines))


def analyse(path, args, ann, probe_cache):
    an = Analyzer(path, args)
    probe = Probe(an.arch, args.cflags, args.heap_bytes)
    setup(an, probe, args)
    res = {"elf": path, "target": an.arch.label, "level": an.level, "compiler": an.compiler,
           "heap_bytes": args.heap_bytes, "entries": {}, "hook_masked": an.hook_masked}
    if getattr(args, "study", None):
        res["study"] = study_costs(an, probe, args.study)
    graphs = []
    for name in args.entry:
        f = an.func(name)
        if name == "rt_tlsf_create":
            configs = [(False, {an.arch.args[0]: ("H", 0)})]  # a new heap: no hooks yet
        else:
            configs = [(True, {an.arch.args[0]: ("H", 0)}), (False, {an.arch.args[0]: ("H", 0)})]
        for hooks, ctx in configs:
            graphs.append((name, hooks, Graph(an, f, ctx, hooks)))
    # the bounds' comments: in every source file of the code analysed
    files = set()
    for _, _, g in graphs:
        for x in g.insts:
            for i in x["f"]["insns"]:
                if i.line and i.line[0].startswith(ROOT + os.sep):
                    files.add(i.line[0])
    for fpath in sorted(files):
        ann.scan(fpath)
    cands = [an.tlsf_tu] + sorted(p for p in files if p.endswith(".c") and os.sep + "src" + os.sep in p)
    by_tu = {}
    for a in ann.by_line.values():
        if a["file"] in files:
            by_tu.setdefault(tu_of(a["file"], cands, probe, probe_cache), []).append(a)
    for tu, items in sorted(by_tu.items()):
        for a, v in zip(items, probe.values(tu, [x["expr"] for x in items])):
            if a["value"] is not None and a["value"] != v:
                raise Refuse("%s:%d: the bound evaluates differently for two builds (%d, %d)" % (
                    os.path.relpath(a["file"], ROOT), a["line"], a["value"], v))
            a["value"] = v
    res["lines"] = set()
    for name, hooks, g in graphs:
        for v in range(len(g.succ)):
            i = g.insn(v)
            if i is not None and i.line:
                res["lines"].add(i.line)
    for name, hooks, g in graphs:
        s = Solver(g, ann)
        e = res["entries"].setdefault(name, {"excluded": set(), "user": set(), "normal": NEG, "damage": NEG,
                                            "held": NEG, "held_damage": NEG, "by_config": {}, "loops": set(),
                                            "held_excluded": set()})
        (tn, pn), (hn, qn) = s.solve(True)
        held_ex_n = set(s.held_excluded)
        (td, pd), (hd, qd) = s.solve(False)
        held_ex_d = set(s.held_excluded)
        if held_ex_n:
            raise Refuse("%s: a copy or fill whose own instructions are not bounded runs with the lock held "
                         "on a normal path, at %s" % (name, ", ".join(sorted(held_ex_n))))
        e["held_excluded"] |= {"%s at %s" % (g.insn_name(w), g.where(w)) for w in held_ex_d}
        e["by_config"]["hooks" if hooks else "no hooks"] = (tn, td)
        e["excluded"] |= g.excluded
        e["user"] |= g.user
        for L in s.loops:
            e["loops"].add((L["ann"]["file"], L["ann"]["line"]))

        def mx(a, b):
            return b if a is NEG else a if b is NEG else max(a, b)
        e["normal"], e["damage"] = mx(e["normal"], tn), mx(e["damage"], td)
        if hooks:
            e["held"], e["held_damage"] = hn, hd
        if args.verbose:
            print("  %s %s (%s, %s), %s:" % (os.path.basename(path), name, an.level, an.arch.label,
                                             "lock hooks installed" if hooks else "no lock hooks"))
            for addr, why in sorted(set(g.dropped)):
                print("    at %#x: %s" % (addr, why))
            for L in s.loops:
                a = L["ann"]
                print("    loop %s: %s <= %s = %d%s" % (L["where"], "total" if a["total"] else "per entry", a["expr"],
                                                       a["value"], " per call of " + a["scope"] if a["total"] else ""))
            s.solve(True)
            print_path(g, s, pn, "worst path, normal: %s instructions" % tn)
            if hooks and hn is not NEG:
                print_path(g, s, qn, "longest lock-held stretch, normal: %s instructions" % hn)
            s.solve(False)
            if td != tn:
                print_path(g, s, pd, "worst path, damage: %s instructions" % td)
            if hooks and hd is not NEG and hd != hn:
                print_path(g, s, qd, "longest lock-held stretch, damage: %s instructions" % hd)
    return res


def fmt(v):
    return "-" if v is NEG else str(v)


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("elf", nargs="+")
    ap.add_argument("--entry", action="append", help="entry points (default: %s)" % ", ".join(ENTRIES))
    ap.add_argument("--heap-bytes", type=int, default=65536,
                    help="the heap's size, for the damage path's bound (HEAP_BYTES; default 65536)")
    ap.add_argument("--cflags", action="append", default=[],
                    help="flags for the probes, as the library was built (e.g. -DRT_HEAP_ALIGN=16)")
    ap.add_argument("--lock-hook", default="port_lock_hook")
    ap.add_argument("--unlock-hook", default="port_unlock_hook")
    ap.add_argument("--ops-table", help="the heap's table of functions (default: found from rt_tlsf_create)")
    ap.add_argument("--study", metavar="DESCRIPTOR",
                    help="also what the on-target study's counts add: the wrappers of this descriptor "
                         "(e.g. tlsf_descriptor) and the call site")
    ap.add_argument("--json", help="write the results as JSON to this file")
    ap.add_argument("--csv", help="write the results as CSV to this file")
    ap.add_argument("--markdown", action="store_true", help="print the tables in Markdown")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the loops, their bounds and the worst paths")
    return ap


def run(paths, args, per_path=None):
    """Analyses every ELF (per_path(path): a dict of arguments of its own, e.g. entry, study);
    raises Refuse."""
    ann = Annotations()
    results, cache = [], {}
    for path in paths:
        a = args
        if per_path is not None:
            a = argparse.Namespace(**vars(args))
            for k, v in per_path(path).items():
                setattr(a, k, v)
        results.append(analyse(path, a, ann, cache))
    if set(args.entry) >= set(ENTRIES) or per_path is not None:  # a subset leaves bounds unused
        lines = set().union(*(r["lines"] for r in results))
        for a in sorted(ann.by_line.values(), key=lambda a: (a["file"], a["line"])):
            if not a["used"] and not any((a["file"], a["line"] + d) in lines for d in (0, 1, 2)):
                raise Refuse("%s:%d: a wcet bound on no loop of the code analysed (stale)" %
                             (os.path.relpath(a["file"], ROOT), a["line"]))
    return results, ann


def main():
    args = parser().parse_args()
    args.entry = args.entry or ENTRIES
    args.cflags = [x for c in args.cflags for x in c.split()]
    try:
        results, ann = run(args.elf, args)
    except Refuse as e:
        print("wcet: refused: %s" % e, file=sys.stderr)
        return 2
    report(results, ann, args)
    return 0


def report(results, ann, args):
    names = args.entry
    short = {n: n.replace("rt_tlsf_", "") for n in names}
    for r in results:
        r["held_any"] = max([e["held"] for e in r["entries"].values() if e["held"] is not NEG] or [NEG])
        r["held_any_damage"] = max([e["held_damage"] for e in r["entries"].values() if e["held_damage"] is not NEG]
                                   or [NEG])
    if args.markdown:
        def num(v):
            return "-" if v is NEG else "{:,}".format(v)
        print("Normal paths (no report deferred, no containment): instructions of a call, entry to return "
              "(realloc without its copy, calloc without its clearing: the calls of memcpy, memmove and memset "
              "count, their own instructions do not, nor the user's handler's and entropy source's); lock held: "
              "the longest stretch with the lock held over every entry point, the port hooks' masked "
              "instructions included.")
        print()
        print("| target | level | " + " | ".join(short[n] for n in names) + " | lock held |")
        print("|---|---|" + "---:|" * (len(names) + 1))
        for r in results:
            print("| %s | %s | " % (r["target"], r["level"]) + " | ".join(num(r["entries"][n]["normal"]) for n in names)
                  + " | %s |" % num(r["held_any"]))
        print()
        hx = sorted({x for r in results for e in r["entries"].values() for x in e["held_excluded"]})
        print("Damage path (a call that contains: damage met, or a wild pointer into a pool), heap of %s bytes%s:" % (
            "{:,}".format(args.heap_bytes),
            "; lock held without the own instructions of the calls of %s" % ", ".join(hx) if hx else ""))
        print()
        print("| target | level | " + " | ".join(short[n] for n in names) + " | lock held |")
        print("|---|---|" + "---:|" * (len(names) + 1))
        for r in results:
            print("| %s | %s | " % (r["target"], r["level"]) + " | ".join(num(r["entries"][n]["damage"]) for n in names)
                  + " | %s |" % num(r["held_any_damage"]))
    else:
        for r in results:
            print("%s: %s, %s (%s)" % (r["elf"], r["target"], r["level"], r["compiler"]))
            print("  %-18s %8s %8s %10s %10s  %s" % ("entry point", "normal", "damage", "held", "held dmg",
                                                    "excluded (call counted, callee's code not)"))
            for n in names:
                e = r["entries"][n]
                ex = sorted(e["excluded"]) + sorted("user: " + u for u in e["user"])
                print("  %-18s %8s %8s %10s %10s  %s" % (n, fmt(e["normal"]), fmt(e["damage"]), fmt(e["held"]),
                                                       fmt(e["held_damage"]), ", ".join(ex) or "-"))
            print("  %-18s %8s %8s %10s %10s" % ("any entry point", "", "", fmt(r["held_any"]),
                                                 fmt(r["held_any_damage"])))
            hx = sorted(set().union(*(e["held_excluded"] for e in r["entries"].values())))
            if hx:
                print("  the damage path's lock-held bound leaves out the instructions of: %s" % "; ".join(hx))
        print("instructions; normal: every path that enters no containment; damage: every path, heap of %d bytes"
              % args.heap_bytes)
    rows = []
    for r in results:
        for n in names:
            e = r["entries"][n]
            rows.append({"elf": r["elf"], "target": r["target"], "level": r["level"], "entry": n,
                         "normal": e["normal"], "damage": e["damage"], "held": e["held"],
                         "held_damage": e["held_damage"], "heap_bytes": args.heap_bytes,
                         "held_damage_excluded": " ".join(sorted(x.split(" at ")[0] for x in e["held_excluded"])),
                         "with_hooks": e["by_config"].get("hooks", (NEG, NEG))[0],
                         "without_hooks": e["by_config"].get("no hooks", (NEG, NEG))[0],
                         "excluded": " ".join(sorted(e["excluded"]) + sorted("user:" + u.replace(" ", "_")
                                                                             for u in e["user"]))})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": rows, "held_any": {r["elf"]: [r["held_any"], r["held_any_damage"]] for r in results},
                       "hook_masked": {r["elf"]: r["hook_masked"] for r in results},
                       "study": {r["elf"]: r["study"] for r in results if "study" in r},
                       "loops": [{"file": os.path.relpath(a["file"], ROOT), "line": a["line"], "bound": a["expr"],
                                  "value": a["value"], "total_per": a["scope"]}
                                 for a in sorted(ann.by_line.values(), key=lambda a: (a["file"], a["line"]))]},
                      f, indent=1)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
