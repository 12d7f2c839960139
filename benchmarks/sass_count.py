"""SASS instructions per element of the kernels that are bound by instruction issue
(issues 16 and 18), from the PTX this project emits, without a GPU:

    python3 benchmarks/sass_count.py [--arch sm_90] [--kernel chain|softmax|gemv|matmul|all] [--dump DIR] [--batch N]

Each PTX module is assembled with `ptxas -arch=<arch>` and disassembled with `cuobjdump
-sass` (both on PATH). The kernels:

- `chain`: benchmarks/fusion.py's 4-stage chain (affine, silu, mul, clamp), automatically
  fused with its temporaries elided and specialized, the region the H200 row "automatic
  fusion + temporaries + specialization" runs; built on the cpu backend (the fused region
  and its variant are target independent) and lowered for PTX here. Its batched entry is
  what a large dispatch launches: runtime/cuda.py's BATCH elements per thread (`--batch N`
  counts the entry a BATCH of N would give).
- `matmul`: rust_examples/matmul.rs's `matmul_fast`, checked (the default) and unchecked:
  the SASS of one trip of its k loop (8 steps of k, 512 FFMA per thread), `loop_trip`.
- `softmax`: benchmarks/cuda_backend.py's `row_softmax` (`workgroup_softmax_in_place::<1024>`,
  one element per lane) on its lanes entry at runtime/cuda.py's LANE_THREADS threads per
  block: wx / LANE_THREADS elements per thread; universal (what the benchmark launches) and
  with `count = 1024` baked (what a specialized Scheme node runs).

- `gemv`: benchmarks/llama_decode.rs's `matvec_add` (the decode step's GEMV, one row per
  thread), universal and specialized to 288 x 768 and 288 x 288: registers and spills
  (`ptxas -v`), and its main unrolled trip loop (ir/unroll.py): iterations per trip, its
  global loads, those issued before the trip's first float operation (in flight together),
  and SASS instructions per iteration (`gemv_report`; the loop body is counted, not a hot path).

Counted (chain, softmax): the hot path, i.e. the entry's instructions from its start to its first
unpredicated EXIT (a branch past it, e.g. to the batched entry's general path, leaves the
hot path and skips nothing), without loop bodies (a backward branch's range: the softmax's loops over
further 1024-wide tiles run 0 times at rows of 1024) and without the rare paths (code a
forward branch skips that holds an ATOMG or a CALL: the bounds checks' fault reports, which
ptxas moves inline, and div.rn's slow path; or 16 or more instructions of arithmetic and
branches: the math library's branch for rare inputs, `Ops.when`, and the out-of-line rare
blocks of codegen/ptx/rare.py, wherever ptxas places them). Per element = hot path / elements
per thread. At the H200's issue rate (132 SMs x 4 schedulers x 32 lanes x 1.98 GHz, about
33 T thread-instructions/s), 64M elements at N instructions each take N * 2 us.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

ISSUE_RATE = 132 * 4 * 32 * 1.98e9  # thread-instructions per second, H200 (see the docstring)

# opcode (before the first dot) -> class
_CLASSES = {
    "fp32": "FADD FMUL FFMA FMNMX FSETP FSET FSEL FCHK FRND FSWZADD",
    "mufu": "MUFU",
    "int": "IADD3 IADD IMAD IMUL LEA LOP3 LOP SHF SHL SHR ISETP SEL VIADD VIMNMX IMNMX IABS PRMT FLO POPC BMSK "
           "BREV IDP IMADSP",
    "conv": "I2F F2I F2F I2I FRND I2FP F2IP",
    "pred": "P2R R2P PLOP3 PSETP",
    "move": "MOV HFMA2 CS2R S2R S2UR",
    "global": "LDG STG LD ST ATOM ATOMG RED",
    "shared": "LDS STS ATOMS LDSM",
    "shfl": "SHFL",
    "sync": "BAR WARPSYNC BSSY BSYNC NANOSLEEP MEMBAR ERRBAR DEPBAR",
    "branch": "BRA EXIT CALL RET JMP BRX",
    "const": "LDC ULDC",
}
CLASS_OF = {op: cls for cls, ops in _CLASSES.items() for op in ops.split()}
_INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def classify(text: str) -> str:
    """The class of one SASS instruction (its text without the predicate guard)."""
    op = text.split()[0]
    base = op.split(".")[0]
    if op.startswith(("IMAD.MOV", "IMAD.IADD")) and base == "IMAD":
        return "move" if op.startswith("IMAD.MOV") else "int"
    if base in CLASS_OF:
        return CLASS_OF[base]
    if base.startswith("U"):  # the uniform datapath (UIADD3, UMOV, ULOP3, ...): one issue per warp too
        return "uniform"
    return "other"


def sass(ptx: str, arch: str = "sm_90", dump: str | None = None, name: str = "k") -> dict[str, list[tuple[int, str]]]:
    """entry name -> [(address, instruction text)], from ptxas and cuobjdump."""
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        subprocess.run(["ptxas", f"-arch={arch}", "-o", cubin, src], check=True)
        out = subprocess.run(["cuobjdump", "-sass", cubin], check=True, capture_output=True, text=True).stdout
    if dump:
        os.makedirs(dump, exist_ok=True)
        for ext, text in (("ptx", ptx), ("sass", out)):
            with open(os.path.join(dump, f"{name}.{ext}"), "w") as f:
                f.write(text)
    funcs: dict[str, list[tuple[int, str]]] = {}
    cur: list[tuple[int, str]] = []
    for line in out.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = _INSTR.search(line)
        if m:
            cur.append((int(m.group(1), 16), m.group(2)))
    return funcs


def hot_path(code: list[tuple[int, str]]) -> list[str]:
    """The instructions up to the first unpredicated EXIT, without loop bodies, the code
    a forward branch skips where that code holds an ATOMG or a CALL (a bounds check's
    fault report, inlined by ptxas, or div.rn's slow path), and NOPs (module docstring)."""
    end = next((i for i, (_, t) in enumerate(code) if t.split()[0] == "EXIT"), len(code))
    skip = []
    for addr, t in code[:end]:
        m = _BRA.match(t)
        if not m:
            continue
        target = int(m.group(2), 16)
        if target <= addr:
            skip.append((target, addr))  # a loop body
        elif target > code[end - 1][0] if end else True:
            continue  # out of the hot path (the batched entry's general path): not a skip
        elif not m.group(1):
            skip.append((addr + 1, target - 1))  # jumped over: e.g. the general arm after the softmax's one-tile one
        elif _rare([t2 for a, t2 in code[:end] if addr < a < target]):
            skip.append((addr + 1, target - 1))  # the branch itself stays
    return [t for addr, t in code[:end]
            if not t.startswith("NOP") and not any(a <= addr <= b for a, b in skip)]


def _rare(skipped: list[str]) -> bool:
    """Whether code a forward branch skips is a rare path: a fault report or div.rn's slow
    path (an ATOMG or a CALL), or arithmetic and branches without memory or barriers (the
    math library's `when` for rare inputs, e.g. exp beyond |x| >= 86 or NaN, and the
    out-of-line rare blocks of codegen/ptx/rare.py: a kernel's own `if` holds memory
    accesses or is predicated)."""
    ops = [strip_guard(t).split()[0] for t in skipped]
    if any(op.startswith("BAR") for op in ops):
        return False  # a kernel's own code: a branch of the softmax's one tile (ir/legalize.py)
    if any(op.startswith(("ATOMG", "CALL")) for op in ops):
        return True
    return len(ops) >= 16 and all(classify(op) in ("fp32", "int", "conv", "pred", "move", "mufu", "branch", "sync")
                                  and op != "EXIT" for op in ops)


_BRA = re.compile(r"(@!?U?P\w+\s+)?BRA(?:\.\S+)?\s+(?:`\(\.L_x_\d+\)\s*)?(0x[0-9a-f]+)")


def strip_guard(t: str) -> str:
    return re.sub(r"^@!?U?P\w+\s+", "", t)


def count(ptx: str, entry: str, per_thread: int, arch: str = "sm_90", dump: str | None = None,
          name: str = "") -> dict:
    funcs = sass(ptx, arch, dump, name or entry)
    code = funcs[entry]
    hot = hot_path(code)
    classes = Counter(classify(strip_guard(t)) for t in hot)
    return {"entry": entry, "static": len([t for _, t in code if not t.startswith("NOP")]), "hot": len(hot),
            "per_thread": per_thread, "per_element": len(hot) / per_thread,
            "classes": {k: v / per_thread for k, v in classes.most_common()}}


def loop_trip(code: list[tuple[int, str]]) -> list[str]:
    """One trip of the entry's longest loop as the common case runs it: from its head to
    its backward branch, unconditional branches taken, a conditional forward branch taken
    only where it skips nothing but a fault report (an ATOMG and no memory access of the
    kernel's own): edge paths and fault reports are left out, NOPs too."""
    loops = [(int(m.group(2), 16), a) for a, t in code if (m := _BRA.match(t)) and int(m.group(2), 16) <= a]
    head, back = max(loops, key=lambda x: x[1] - x[0])
    at = {a: i for i, (a, _) in enumerate(code)}
    i, out = at[head], []
    while True:
        addr, t = code[i]
        if not t.startswith("NOP"):
            out.append(t)
        m = _BRA.match(t)
        if addr == back:
            return out
        if m and int(m.group(2), 16) > addr:
            target = int(m.group(2), 16)
            ops = [strip_guard(t2).split()[0] for a, t2 in code if addr < a < target]
            report = any(op.startswith("ATOMG") for op in ops) and not any(
                op.startswith(("LDG", "LDS", "STS", "BAR")) for op in ops)
            if not m.group(1) or report:
                i = at[target]
                continue
        i += 1


def matmul_trips(arch: str = "sm_90", dump: str | None = None) -> list[dict]:
    """matmul_fast's k-loop trip, checked and unchecked: instructions by class, registers."""
    import goldy_import as gi
    from goldy_import.codegen.ptx import emit_ptx
    from goldy_import.ir import pipeline

    kdef = gi.load(os.path.join(HERE, "..", "rust_examples", "matmul.rs")).matmul_fast
    rows = []
    for checks in (True, False):
        ir = kdef.prepare(gi.Device("cpu"), checks=checks).prepared.ir
        ptx = emit_ptx(pipeline.lower(ir, "ptx", checks=checks).kernel)
        name = f"matmul_fast_{'checked' if checks else 'unchecked'}"
        trip = loop_trip(sass(ptx, arch, dump, name)["matmul_fast"])
        ops = Counter(classify(strip_guard(t)) for t in trip)
        rows.append({"checks": checks, "trip": len(trip), "ffma": sum(strip_guard(t).startswith("FFMA") for t in trip),
                     "classes": dict(ops.most_common())})
    return rows


# ---------------------------------------------------------------- the kernels


def chain_ptx(n: int = 1 << 16, batch: int = 0) -> tuple[str, str, int]:
    """(PTX, batched entry, elements per thread) of the fused, specialized 4-stage chain
    (`batch`: elements per thread, runtime/cuda.py's BATCH unless given)."""
    import numpy as np

    import fusion as F
    import goldy_import as gi
    from goldy_import.codegen.ptx import batch_entry, emit_ptx
    from goldy_import.ir import pipeline
    from goldy_import.runtime.cuda import BATCH, LANE_THREADS

    dev = gi.Device("cpu")
    mod = gi.load_source(F.RUST, "fusion_bench.rs")
    x, y = dev.buffer(np.random.default_rng(0).standard_normal(n).astype(np.float32)), dev.empty(n)
    F.chain_schemes(dev, mod, x, y, n)  # settles automatic fusion and specialization
    fused = [pk for pk in dev._variants.entries.values() if pk.kdef.name.startswith("fused_")]
    assert len(fused) == 1, [pk.kdef.name for pk in dev._variants.entries.values()]
    kernel = pipeline.lower(fused[0].kdef.ir, "ptx", checks=True).kernel
    batch = batch or BATCH
    return emit_ptx(kernel, batch=batch, lane_threads=LANE_THREADS), batch_entry(kernel, batch), batch


def softmax_ptx(count: int = 0) -> tuple[str, str, int]:
    """(PTX, lanes entry, elements per thread) of the row softmax over rows of 1024; with
    `count`, the variant a Scheme with specialization on runs (`count` baked, ir/specialize.py)."""
    import cuda_backend as C
    import goldy_import as gi
    from goldy_import.codegen.ptx import emit_ptx, lanes_entry, lanes_in
    from goldy_import.ir import pipeline
    from goldy_import.ir.specialize import specialize
    from goldy_import.runtime.cuda import BATCH, LANE_THREADS

    ir = gi.load_source(C.RUST, "bench.rs").row_softmax.prepare(gi.Device("cpu")).prepared.ir
    if count:
        ir = specialize(ir, {"count": count}, {})
    kernel = pipeline.lower(ir, "ptx", checks=True).kernel
    ptx = emit_ptx(kernel, batch=BATCH, lane_threads=LANE_THREADS)
    c = lanes_in(ptx, kernel)
    return ptx, lanes_entry(kernel, c), c


KERNELS = {"chain": chain_ptx, "softmax": softmax_ptx, "softmax, count 1024 baked": lambda: softmax_ptx(1024)}


# ---------------------------------------------------------------- gemv (issue 18's decode step)

# benchmarks/llama_decode.rs `matvec_add` as the decode step runs it: universal, and
# specialized to the w2 shape (288 rows of 768) the way the Scheme bakes it
GEMV_CASES = (("matvec_add", None), ("matvec_add", (288, 768)), ("matvec_add", (288, 288)))


def gemv_ptx(name: str, shape, checks: bool = True) -> str:
    import goldy_import as gi
    from goldy_import.codegen.ptx import emit_ptx
    from goldy_import.ir import pipeline
    from goldy_import.ir.specialize import specialize

    src = open(os.path.join(HERE, "llama_decode.rs")).read()
    ir = getattr(gi.load_source(src, "llama_decode.rs"), name).prepare(gi.Device("cpu")).prepared.ir
    if shape:
        rows, n = shape
        ir = specialize(ir, {"rows": rows, "n": n}, {"w": ("len", rows * n), "x": ("len", n), "out": ("len", rows)})
    return emit_ptx(pipeline.lower(ir, "ptx", checks=checks).kernel)


def registers(ptx: str, arch: str) -> tuple[int, int]:
    """(registers, spill bytes) from `ptxas -v`."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        err = subprocess.run(["ptxas", "-v", f"-arch={arch}", "-o", os.path.join(tmp, "k.cubin"), src],
                             check=True, capture_output=True, text=True).stderr
    regs = int(re.search(r"Used (\d+) registers", err).group(1))
    spill = sum(int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", err))
    return regs, spill


def gemv_loop(code: list[tuple[int, str]]) -> dict:
    """The main trip loop of a GEMV (the backward branch's range holding the most 128-bit
    loads, else the most loads): its loads, loads issued before the first float operation
    of the trip, float multiplies (= iterations), and instructions per iteration."""
    best = None
    for addr, t in code:
        m = _BRA.match(t)
        if not m or int(m.group(2), 16) > addr:
            continue
        body = [strip_guard(x) for a, x in code if int(m.group(2), 16) <= a <= addr and not x.startswith("NOP")]
        ldg = [x for x in body if x.startswith("LDG")]
        key = (sum(".128" in x for x in ldg), len(ldg))
        if best is None or key > best[0]:
            best = (key, body)
    if best is None:
        return {}
    body = best[1]
    first = next((i for i, x in enumerate(body) if x.split()[0].split(".")[0] in ("FADD", "FMUL", "FFMA")), len(body))
    iters = max(1, sum(x.startswith("FMUL") for x in body))
    ldg = [x for x in body if x.startswith("LDG")]
    return {"instructions": len(body), "iterations": iters, "per_iteration": len(body) / iters,
            "ldg": len(ldg), "ldg128": sum(".128" in x for x in ldg),
            "in_flight": sum(x.startswith("LDG") for x in body[:first]),
            "elements_in_flight": sum(4 if ".128" in x else 1 for x in body[:first] if x.startswith("LDG"))}


def gemv_report(arch: str, dump: str | None = None) -> list[str]:
    """Table rows for the decode step's GEMV (`--kernel gemv`)."""
    rows = ["| kernel | checks | registers | spill bytes | trip: iterations | LDG (128-bit) | "
            "LDG before the first float op (elements) | SASS per iteration |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, shape in GEMV_CASES:
        for checks in (True, False):
            ptx = gemv_ptx(name, shape, checks)
            tag = f"{name} {'%dx%d' % shape if shape else 'universal'}"
            regs, spill = registers(ptx, arch)
            code = sass(ptx, arch, dump, f"{name}_{'x'.join(map(str, shape or ()))}_{checks}")[name]
            r = gemv_loop(code)
            rows.append(f"| {tag} | {'on' if checks else 'off'} | {regs} | {spill} | {r.get('iterations', 0)} | "
                        f"{r.get('ldg', 0)} ({r.get('ldg128', 0)}) | {r.get('in_flight', 0)} "
                        f"({r.get('elements_in_flight', 0)}) | {r.get('per_iteration', 0):.2f} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--kernel", default="all", choices=["all", "chain", "softmax", "gemv", "matmul"])
    ap.add_argument("--dump", help="write each kernel's PTX and SASS into this folder")
    ap.add_argument("--batch", type=int, default=0, help="chain: elements per thread of the batched entry "
                    "(default: runtime/cuda.py's BATCH)")
    args = ap.parse_args()
    if args.kernel in ("all", "gemv"):
        print(f"GEMV trip loop ({args.arch}, benchmarks/llama_decode.rs, ptxas + cuobjdump)")
        print("\n".join(gemv_report(args.arch, args.dump)) + "\n")
        if args.kernel == "gemv":
            return 0
    if args.kernel in ("all", "matmul"):
        print(f"matmul_fast: SASS per trip of the k loop ({args.arch}; common case: no edge, no fault)")
        print("| checks | per trip | FFMA | other | by class |")
        print("|---|---:|---:|---:|---|")
        for r in matmul_trips(args.arch, args.dump):
            by = ", ".join(f"{k} {v}" for k, v in r["classes"].items())
            print(f"| {'on' if r['checks'] else 'off'} | {r['trip']} | {r['ffma']} | {r['trip'] - r['ffma']} | {by} |")
        if args.kernel == "matmul":
            return 0
        print()
    names = [n for n in KERNELS if args.kernel in ("all", n.split(",")[0])]
    print(f"SASS per element ({args.arch}, ptxas hot path: start to first EXIT, no loop bodies)")
    print("| kernel | entry | elements/thread | static | hot path | per element | us per 64M elements | by class |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name in names:
        ptx, entry, per = chain_ptx(batch=args.batch) if name == "chain" else KERNELS[name]()
        r = count(ptx, entry, per, args.arch, args.dump, entry + ("__" + name.split(", ")[1].replace(" ", "_")
                                                                 if ", " in name else ""))
        by = ", ".join(f"{k} {v:.1f}" for k, v in r["classes"].items())
        us = (1 << 26) * r["per_element"] / ISSUE_RATE * 1e6
        print(f"| {name} | {entry} | {per} | {r['static']} | {r['hot']} | {r['per_element']:.1f} | {us:.0f} | {by} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
