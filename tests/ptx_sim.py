"""A small PTX interpreter for tests without a GPU: runs one `.entry` of the emitter's PTX
block by block, all threads of a block in lock step (numpy over the threads).

It knows the instructions the emitter writes for collective and element-wise kernels
(loads, stores, integer and `.rn` float arithmetic, compares, predicates, `shfl.sync.down`/`.bfly`/`.idx`,
`bar.sync`, branches) and raises NotImplementedError on anything else, so a test that
passes ran every instruction with the PTX ISA's meaning. Scheduling: each step runs the
instruction at the lowest program counter among the threads of one warp not waiting at a
barrier (threads that branched apart reconverge there, as in structured code), and a warp
runs until all its threads wait or have exited before the next one starts (warps in
ascending order in even blocks, descending in odd ones), so a missing barrier shows as a
read of what another warp has not written yet (shared memory starts poisoned) or has
already overwritten; a barrier releases when every thread that has not exited waits at one; a full-mask `shfl.sync` demands all 32
lanes of the warp at the same instruction. Float arithmetic is numpy float32 (round to
nearest even, subnormals kept), as the `.rn` forms without `.ftz` are.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np

_U32 = np.uint32


@dataclass
class Instr:
    guard: Optional[tuple[bool, str]]  # (negated, predicate register)
    op: str
    args: list[str]
    text: str


def _split_args(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


class Entry:
    def __init__(self, ptx: str, name: str):
        m = re.search(rf"\.entry {re.escape(name)}\((.*?)\)([^{{]*)\{{(.*?)\n\}}", ptx, re.S)
        if not m:
            raise KeyError(name)
        self.params = [p.strip().split()[-1].split("[")[0] for p in m.group(1).split(",") if p.strip()]
        ntid = re.search(r"\.reqntid (\d+), (\d+), (\d+)", m.group(2))
        self.ntid = tuple(int(x) for x in ntid.groups()) if ntid else None
        self.shared: dict[str, int] = {}
        self.shared_bytes = 0
        self.code: list[Instr] = []
        self.labels: dict[str, int] = {}
        for raw in m.group(3).split("\n"):
            line = raw.split("//")[0].strip()
            if not line:
                continue
            if line.endswith(":"):
                self.labels[line[:-1]] = len(self.code)
                continue
            if line.startswith(".reg"):
                continue
            sm = re.match(r"\.shared \.align \d+ \.b8 (\w+)\[(\d+)\];", line)
            if sm:
                self.shared[sm.group(1)] = self.shared_bytes
                self.shared_bytes += int(sm.group(2))
                continue
            guard = None
            gm = re.match(r"@(!?)(%\w+)\s+(.*)", line)
            if gm:
                guard = (gm.group(1) == "!", gm.group(2))
                line = gm.group(3)
            line = line.rstrip(";").strip()
            parts = line.split(None, 1)
            self.code.append(Instr(guard, parts[0], _split_args(parts[1]) if len(parts) > 1 else [], line))


class Memory:
    """Global memory: named numpy buffers at made-up, far-apart addresses."""

    STRIDE = 1 << 32

    def __init__(self):
        self.bufs: list[np.ndarray] = []

    def add(self, data: np.ndarray) -> int:
        self.bufs.append(np.ascontiguousarray(data).view(np.uint32).reshape(-1).copy())
        return (len(self.bufs)) * self.STRIDE

    def array(self, addr: int) -> np.ndarray:
        return self.bufs[addr // self.STRIDE - 1]

    def where(self, addrs: np.ndarray) -> tuple[np.ndarray, int]:
        addrs = addrs.astype(np.uint64)
        buf = int(addrs[0]) // self.STRIDE
        if np.any(addrs // np.uint64(self.STRIDE) != np.uint64(buf)) or np.any(addrs % np.uint64(4)):
            raise AssertionError("an access spans buffers or is misaligned")
        return self.bufs[buf - 1], buf


def _f(x: np.ndarray) -> np.ndarray:
    return x.view(np.float32)


def _b(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(_U32)


class Block:
    def __init__(self, entry: Entry, mem: Memory, params: dict[str, bytes], ctaid, nctaid, ntid):
        self.e, self.mem, self.params = entry, mem, params
        self.ctaid, self.nctaid = ctaid, nctaid
        nx, ny, nz = ntid
        self.n = nx * ny * nz
        lin = np.arange(self.n)
        self.tid = (lin % nx, (lin // nx) % ny, lin // (nx * ny))
        self.regs: dict[str, np.ndarray] = {}
        self.shared = np.zeros(max(entry.shared_bytes, 4) // 4, dtype=_U32)
        self.shared[:] = 0xDEADBEEF  # poisoned: the tree must not read what nobody wrote

    # -- operands

    def val(self, a: str, width: int = 32) -> np.ndarray:
        dt = np.uint64 if width == 64 else _U32
        if a.startswith("%"):
            sp = {"%tid.x": 0, "%tid.y": 1, "%tid.z": 2}
            if a in sp:
                return self.tid[sp[a]].astype(dt)
            for pre, src in (("%ctaid.", self.ctaid), ("%nctaid.", self.nctaid)):
                if a.startswith(pre):
                    return np.full(self.n, src["xyz".index(a[-1])], dtype=dt)
            if a.startswith("%p"):
                return self.regs[a]
            return self.regs[a].astype(dt)
        if a.startswith("0f"):
            return np.full(self.n, int(a[2:], 16), dtype=_U32)
        if a in self.e.shared:
            return np.full(self.n, self.e.shared[a], dtype=dt)
        v = int(a, 0)
        return np.full(self.n, v & ((1 << width) - 1), dtype=dt)

    def put(self, d: str, v: np.ndarray, m: np.ndarray) -> None:
        if d.startswith("%p"):
            v = np.asarray(v, dtype=bool)
            old = self.regs.get(d, np.zeros(self.n, dtype=bool))
        else:
            v = np.asarray(v)
            if d.startswith("%rd"):
                v = v.astype(np.uint64)
            elif v.dtype != _U32:
                v = v.astype(np.uint64).astype(_U32) if v.dtype.kind in "iu" else v.view(_U32)
            old = self.regs.get(d, np.zeros(self.n, dtype=v.dtype))
        self.regs[d] = np.where(m, v, old)

    def addr(self, a: str) -> np.ndarray:
        inner = a.strip("[]")
        base, _, off = inner.partition("+")
        if base in self.e.shared:
            b = np.full(self.n, self.e.shared[base], dtype=np.uint64)
        elif base in self.params:
            b = np.zeros(self.n, dtype=np.uint64)
        else:
            b = self.regs[base].astype(np.uint64)
        return b + np.uint64(int(off or 0))

    # -- one instruction for the threads in m

    def step(self, ins: Instr, m: np.ndarray) -> Optional[np.ndarray]:
        """Executes `ins` where `m`; returns the mask of threads that take its branch."""
        op, a = ins.op, ins.args
        parts = op.split(".")
        base = parts[0]
        if base == "ld" and parts[1] == "param":
            name, _, off = a[1].strip("[]").partition("+")
            raw = self.params[name][int(off or 0):]
            ty = parts[-1]
            v = struct.unpack("<Q", raw[:8])[0] if ty in ("u64", "b64") else struct.unpack("<I", raw[:4])[0]
            self.put(a[0], np.full(self.n, v, dtype=np.uint64 if ty in ("u64", "b64") else _U32), m)
        elif base in ("ld", "st"):
            self.memory(base, parts, a, m)
        elif op == "cvta.to.global.u64" or op == "mov.b64" or op == "cvt.u64.u32":
            self.put(a[0], self.val(a[1], 64), m)
        elif base == "mov":
            self.put(a[0], self.val(a[1]), m)
        elif op in ("add.s64", "mul.lo.s64", "sub.s64", "and.b64", "or.b64"):
            x, y = self.val(a[1], 64), self.val(a[2], 64)
            self.put(a[0], {"add": np.add, "mul": np.multiply, "sub": np.subtract, "and": np.bitwise_and,
                            "or": np.bitwise_or}[base](x, y), m)
        elif op == "mul.wide.u32":
            self.put(a[0], self.val(a[1]).astype(np.uint64) * self.val(a[2]).astype(np.uint64), m)
        elif parts[-1] == "f32" and base in ("add", "sub", "mul", "div", "max", "min", "sqrt", "neg", "abs", "fma"):
            self.float_op(base, a, m)
        elif parts[-1] == "pred" and base in ("and", "or", "xor", "not"):
            x = self.val(a[1])
            r = ~x if base == "not" else {"and": np.logical_and, "or": np.logical_or,
                                          "xor": np.logical_xor}[base](x, self.val(a[2]))
            self.put(a[0], r, m)
        elif base in ("add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr", "max", "min", "neg", "div", "rem"):
            self.int_op(base, parts, a, m)
        elif base == "setp" and (parts[2] == "u64" or (parts[2] == "s64" and parts[1] in ("eq", "ne"))):
            x, y = self.val(a[1], 64), self.val(a[2], 64)
            self.put(a[0], {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                            "gt": np.greater, "ge": np.greater_equal}[parts[1]](x, y), m)
        elif base == "setp" and parts[2] in ("and", "or"):  # setp.cmp.and.ty d, a, b, c
            r = self.compare(parts[1], parts[3], self.val(a[1]), self.val(a[2]))
            self.put(a[0], (np.logical_and if parts[2] == "and" else np.logical_or)(r, self.val(a[3])), m)
        elif base == "setp":
            self.put(a[0], self.compare(parts[1], parts[2], self.val(a[1]), self.val(a[2])), m)
        elif op == "rcp.approx.ftz.f32":
            self.put(a[0], _b(_rcp_approx(_f(self.val(a[1])))), m)
        elif op == "copysign.f32":
            sign, mag = self.val(a[1]), self.val(a[2])
            self.put(a[0], (mag & _U32(0x7FFFFFFF)) | (sign & _U32(0x80000000)), m)
        elif base == "selp":
            self.put(a[0], np.where(self.val(a[3]), self.val(a[1]), self.val(a[2])), m)
        elif base == "cvt":
            self.convert(parts, a, m)
        elif op in ("shfl.sync.down.b32", "shfl.sync.bfly.b32", "shfl.sync.idx.b32"):
            self.shuffle(a, m, kind=parts[2])
        elif op == "atom.global.cas.b32":
            self.compare_and_swap(a, m)
        elif op in ("bra", "bra.uni"):
            return m
        else:
            raise NotImplementedError(ins.text)
        return None

    def memory(self, base: str, parts: list[str], a: list[str], m: np.ndarray) -> None:
        space = parts[1]
        vec = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
        regs = [r.strip() for r in (a[0] if base == "ld" else a[1]).strip("{}").split(",")]
        addrs = self.addr(a[1] if base == "ld" else a[0])
        idx = np.nonzero(m)[0]
        if not len(idx):
            return
        for j, r in enumerate(regs):
            ad = addrs[idx] + np.uint64(4 * j)
            if space == "shared":
                words, w = self.shared, (ad // np.uint64(4)).astype(np.int64)
            else:
                words, _ = self.mem.where(ad)
                w = ((ad % np.uint64(Memory.STRIDE)) // np.uint64(4)).astype(np.int64)
            if np.any(w >= len(words)):
                raise AssertionError(f"{space} access past the end: {w.max()} >= {len(words)}")
            if vec > 1 and j == 0 and np.any(ad % np.uint64(4 * vec)):
                raise AssertionError(f"a .v{vec} access not aligned to {4 * vec} bytes")
            if base == "ld":
                v = self.regs.get(r, np.zeros(self.n, dtype=_U32)).copy()
                v[idx] = words[w]
                self.regs[r] = v
            else:
                vals = self.val(r)[idx]
                if len(np.unique(w)) != len(w):  # a race, unless they all store the same bits
                    if len(np.unique(np.stack([w, vals.astype(np.int64)]), axis=1)[0]) != len(np.unique(w)):
                        raise AssertionError("two threads store different values to one word in one instruction")
                words[w] = vals

    def compare_and_swap(self, a: list[str], m: np.ndarray) -> None:
        """One thread after another, in thread order (the error word's first-failure claim)."""
        addrs, cmp, new = self.addr(a[1]), self.val(a[2]), self.val(a[3])
        old = self.regs.get(a[0], np.zeros(self.n, dtype=_U32)).copy()
        for t in np.nonzero(m)[0]:
            words, _ = self.mem.where(addrs[t:t + 1])
            w = int(addrs[t] % np.uint64(Memory.STRIDE)) // 4
            old[t] = words[w]
            if words[w] == cmp[t]:
                words[w] = new[t]
        self.regs[a[0]] = old

    def float_op(self, base: str, a: list[str], m: np.ndarray) -> None:
        x = _f(self.val(a[1]))
        with np.errstate(all="ignore"):
            if base in ("sqrt", "neg", "abs"):
                r = {"sqrt": np.sqrt, "neg": np.negative, "abs": np.abs}[base](x)
            elif base == "fma":
                r = _fma(x, _f(self.val(a[2])), _f(self.val(a[3])))
            else:
                y = _f(self.val(a[2]))
                r = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                     "max": np.fmax, "min": np.fmin}[base](x, y)
        self.put(a[0], _b(r), m)

    def int_op(self, base: str, parts: list[str], a: list[str], m: np.ndarray) -> None:
        ty = parts[-1]
        x = self.val(a[1]).astype(np.int64)
        if base in ("not", "neg"):
            r = ~x if base == "not" else -x
        else:
            y = self.val(a[2]).astype(np.int64)
            if ty == "s32" and base in ("max", "min", "div", "rem", "shr"):
                x = x - ((x & 0x80000000) << 1)
                y = y - ((y & 0x80000000) << 1) if base != "shr" else y
            if base in ("mul", "mad"):  # the low 32 bits: wrap in uint64
                r = x.astype(np.uint64) * y.astype(np.uint64)
                if base == "mad":
                    r = r + self.val(a[3]).astype(np.uint64)
                r = (r & np.uint64(0xFFFFFFFF)).astype(np.int64)
            elif base in ("shl", "shr"):
                sh = np.minimum(y, 32)
                r = (x << sh) if base == "shl" else (x >> sh)
            elif base in ("div", "rem"):
                if np.any(y[m] == 0):
                    raise AssertionError("integer division by zero")
                yy = np.where(y == 0, 1, y)
                q = np.trunc(x / yy).astype(np.int64) if ty == "s32" else x // yy
                r = q if base == "div" else x - q * yy
            else:
                r = {"add": x + y, "sub": x - y, "and": x & y, "or": x | y, "xor": x ^ y,
                     "max": np.maximum(x, y), "min": np.minimum(x, y)}[base]
        self.put(a[0], (r & 0xFFFFFFFF).astype(_U32), m)

    def compare(self, cmp: str, ty: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if ty == "pred":
            raise NotImplementedError("setp on predicates")
        if ty == "f32":
            fx, fy = _f(x), _f(y)
            unordered = np.isnan(fx) | np.isnan(fy)
            if cmp == "nan":
                return unordered
            if cmp == "num":
                return ~unordered
            base = cmp[:-1] if cmp.endswith("u") and cmp not in ("lu",) and len(cmp) == 3 else cmp
            r = {"eq": fx == fy, "ne": fx != fy, "lt": fx < fy, "le": fx <= fy, "gt": fx > fy, "ge": fx >= fy}[base]
            return (r | unordered) if base != cmp else (r & ~unordered)
        if ty == "s32":
            x = x.astype(np.int64) - ((x.astype(np.int64) & 0x80000000) << 1)
            y = y.astype(np.int64) - ((y.astype(np.int64) & 0x80000000) << 1)
        return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp]

    def convert(self, parts: list[str], a: list[str], m: np.ndarray) -> None:
        raise NotImplementedError(".".join(parts))

    def shuffle(self, a: list[str], m: np.ndarray, kind: str = "down") -> None:
        if a[3] != "31" or a[4] != "0xffffffff":
            raise NotImplementedError("shfl with a clamp other than 31 or a partial mask")
        lane = np.arange(self.n)
        warps = np.unique(lane[m] // 32)
        for w in warps:
            want = (lane // 32 == w) & (lane < self.n)
            if not np.all(m[want]):
                raise AssertionError("shfl.sync with the full mask reached by part of a warp")
        delta = self.val(a[2]).astype(np.int64)
        if kind == "idx":  # lane `delta` of the warp (c = 31: the whole warp)
            src = lane // 32 * 32 + (delta & 31)
            src = np.where(src < self.n, src, lane)
        else:
            bfly = kind == "bfly"
            src = lane ^ delta if bfly else lane + delta
            src = np.where(((src % 32 >= lane % 32) | bfly) & (src // 32 == lane // 32) & (src < self.n), src, lane)
        self.put(a[0], self.val(a[1])[src], m)

    # -- the scheduler

    def run(self, descending: bool = False, limit: int = 10_000_000) -> None:
        code, labels = self.e.code, self.e.labels
        pc = np.zeros(self.n, dtype=np.int64)
        state = np.zeros(self.n, dtype=np.int8)  # 0 running, 1 at a barrier, 2 exited, 3 at a shfl
        warp = np.arange(self.n) // 32
        order = warp if not descending else warp.max() - warp
        for _ in range(limit):
            running = state == 0
            if not running.any():
                if not (state == 1).any():
                    if (state == 3).any():
                        raise AssertionError("shfl.sync with the full mask reached by part of a warp")
                    return
                state[state == 1] = 0  # every thread not exited waits: the barrier releases
                continue
            running &= order == order[running].min()  # the first warp with threads to run
            p = pc[running].min()
            m = running & (pc == p)
            ins = code[p]
            if ins.op.startswith("shfl.sync"):
                # sm_70 on: a full-mask shfl.sync waits for the warp's other threads (those
                # on an out-of-line rare path); they must arrive at this same shfl
                mine = (warp == warp[np.argmax(m)]) & (state != 2)
                if np.any(mine & (state == 3) & (pc != p)):
                    raise AssertionError("shfl.sync with the full mask reached by part of a warp")
                if not np.all((m | (state == 3))[mine]):
                    state[m] = 3
                    if not np.any(mine & (state == 0)):
                        raise AssertionError("shfl.sync with the full mask reached by part of a warp")
                    continue
                m = mine
                state[mine] = 0
            g = m
            if ins.guard is not None:
                neg, reg = ins.guard
                pv = self.regs[reg]
                g = m & (~pv if neg else pv)
            if ins.op == "ret":
                state[g] = 2
                pc[m & ~g] += 1
                continue
            if ins.op in ("griddepcontrol.wait", "griddepcontrol.launch_dependents"):
                pc[m] += 1  # one grid alone: no programmatic predecessor to wait for
                continue
            if ins.op in ("bar.sync", "barrier.sync"):
                if ins.guard is not None:
                    raise NotImplementedError("a predicated barrier")
                state[m] = 1
                pc[m] += 1
                continue
            taken = self.step(ins, g)
            pc[m] += 1
            if taken is not None:
                pc[taken] = labels[ins.args[0]]
        raise AssertionError("the kernel did not finish")


def _rcp_approx(x: np.ndarray) -> np.ndarray:
    """rcp.approx as the worst the PTX ISA allows (1 ulp): for every other thread the float
    on the far side of 1/x instead of the nearest (normal x; exact reciprocals kept)."""
    with np.errstate(all="ignore"):
        y = np.float32(1) / x
        resid = 1.0 - x.astype(np.float64) * y.astype(np.float64)  # exact: 1/x - y has its sign times x's
        toward = np.where((resid > 0) == (x > 0), np.float32(np.inf), np.float32(-np.inf)).astype(np.float32)
        far = np.nextafter(y, toward)
    odd = (np.arange(len(x)) % 2 == 1) & (resid != 0) & np.isfinite(y) & (y != 0)
    return np.where(odd, far, y).astype(np.float32)


def _fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """f32 fma, one rounding: x * y is exact in f64, the sum exact as s + err (two_sum), and
    s rounded to f32 unless it is a tie that err breaks."""
    with np.errstate(all="ignore"):
        p = x.astype(np.float64) * y.astype(np.float64)
        zz = z.astype(np.float64)
        s = p + zz
        bb = s - p
        err = (p - (s - bb)) + (zz - bb)
        r = s.astype(np.float32)
        other = np.nextafter(r, np.where(s > r.astype(np.float64), np.float32(np.inf), np.float32(-np.inf)).astype(np.float32))
        tie = (s == (r.astype(np.float64) + other.astype(np.float64)) / 2) & (err != 0)
        wants_other = tie & ((err > 0) == (other > r))
        out = np.where(wants_other, other, r).astype(np.float32)
        bad = ~(np.isfinite(x) & np.isfinite(y) & np.isfinite(z) & np.isfinite(s))
    if bad.any():
        out[bad] = _fma_exact(x[bad], y[bad], z[bad])
    return out


def _fma_exact(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i, (a, b, c) in enumerate(zip(x.tolist(), y.tolist(), z.tolist())):
        if not all(np.isfinite([a, b, c])):
            out[i] = np.float32(np.float64(a) * np.float64(b) + np.float64(c))
        else:
            exact = Fraction(a) * Fraction(b) + Fraction(c)
            out[i] = _round_f32(exact)
    return out


def _round_f32(q: Fraction) -> np.float32:
    # float64 nearest first, then nudge toward q until float32 rounding is exact
    d = float(q)
    f = np.float32(d)
    lo, hi = np.nextafter(f, np.float32(-np.inf)), np.nextafter(f, np.float32(np.inf))
    best = min((lo, f, hi), key=lambda c: (abs(Fraction(float(c)) - q) if np.isfinite(c) else Fraction(10**400),
                                           int(np.float32(c).view(np.uint32)) & 1))
    return best


def run(ptx: str, name: str, buffers: list[np.ndarray], scalars: dict[str, bytes], grid, block=None,
        faults: Optional[list] = None) -> list[np.ndarray]:
    """Runs entry `name` over `grid` blocks. `buffers` are the kernel's buffers in `.param`
    order (each takes the next `*_ptr` param; a `*_len` param after it gets its length in
    elements unless `scalars` names it); `scalars` gives every other `.param` by name as
    little-endian bytes. Returns the buffers after the run. A recorded fault raises, unless
    `faults` is a list: then the error word (u32s, ir/abi.py ERROR_WORD) is appended to it."""
    e = Entry(ptx, name)
    mem = Memory()
    params: dict[str, bytes] = {}
    it = iter(buffers)
    last = None
    for p in e.params:
        if p in scalars:
            params[p] = scalars[p]
        elif p == "p_faults":  # the error word: a zeroed buffer after the kernel's own
            params[p] = struct.pack("<Q", mem.add(np.zeros(8, dtype=np.uint32)))
        elif p.endswith("_ptr"):
            last = next(it)
            params[p] = struct.pack("<Q", mem.add(last))
        elif p.endswith("_len") and last is not None:
            params[p] = struct.pack("<I", last.size)
        else:
            raise KeyError(f"no value for .param {p}")
    block = block or e.ntid
    gx, gy, gz = grid
    for z in range(gz):
        for y in range(gy):
            for x in range(gx):
                Block(e, mem, params, (x, y, z), (gx, gy, gz), block).run(descending=bool((x + y + z) % 2))
    out = [b.view(buffers[i].dtype).reshape(buffers[i].shape) for i, b in enumerate(mem.bufs[:len(buffers)])]
    words = [b for i, b in enumerate(mem.bufs) if i >= len(buffers)]
    if faults is not None:
        faults.append([int(v) for v in words[0]] if words else None)
    elif words and words[0].any():
        raise AssertionError(f"the kernel recorded a fault: {words[0].tolist()}")
    return out
