"""`make demo`: import every example, emit every target into build/, run each example on
the CPU and on every other available backend against a numpy reference, print a table.
Multi-stage examples (examples.PIPELINES) run twice: one dispatch per stage, and fused.

    python -m goldy_import.demo [--backend cpu,wgpu] [--size N] [--out build]
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from typing import Optional

import numpy as np

import goldy_import as gi
from goldy_import.codegen.pymodule import emit_module
from goldy_import.examples import EXAMPLES, PIPELINES, Example, Pipeline
from goldy_import.ir import nodes as N
from goldy_import.ir.serialize import to_json

TARGETS = {  # target -> (module, function, file suffix)
    "wgsl": ("goldy_import.codegen.wgsl", "emit_wgsl", ".wgsl"),
    "ptx": ("goldy_import.codegen.ptx", "emit_ptx", ".ptx"),
    "slang": ("goldy_import.codegen.slang", "emit_slang", ".slang"),
    "cpu": ("goldy_import.codegen.cpu", "emit_cpu", ".cpu.py"),
}


def emit_all(root: str, out: str) -> dict[str, str]:
    """Write IR, every target's code and a launch module per example file; returns
    target -> status."""
    status: dict[str, str] = {}
    emitters = {}
    for target, (mod, fn, _suffix) in TARGETS.items():
        try:
            emitters[target] = getattr(importlib.import_module(mod), fn)
        except (ImportError, AttributeError):
            status[target] = "emitter not built"
    counts = dict.fromkeys(emitters, 0)
    files = sorted({e.file for e in EXAMPLES} | {p.file for p in PIPELINES})
    for f in files:
        mod = gi.load(os.path.join(root, f))
        stem = os.path.splitext(f)[0]
        os.makedirs(os.path.join(out, stem), exist_ok=True)
        kernels = [cls.definition().ir for cls in mod.kernels.values()]
        with open(os.path.join(out, f"{stem}_kernels.py"), "w") as fh:
            fh.write(emit_module(kernels, os.path.join(root, f), mod.source_hash,
                                 module_path=os.path.join(out, f"{stem}_kernels.py")))
        for k in kernels:
            with open(os.path.join(out, stem, f"{k.name}.ir.json"), "w") as fh:
                fh.write(to_json(k) + "\n")
            for target, emit in emitters.items():
                try:
                    text = emit(k)
                except gi.GoldyError as e:
                    status[target] = f"error: {e}"
                    continue
                with open(os.path.join(out, stem, k.name + TARGETS[target][2]), "w") as fh:
                    fh.write(text)
                counts[target] += 1
    for target, n in counts.items():
        status.setdefault(target, f"{n} kernels")
    return status


def run_example(dev: gi.Device, root: str, ex: Example, seed: int, size: Optional[int]) -> tuple[str, float]:
    rng = np.random.default_rng(seed)
    args = ex.inputs(rng, size or ex.size)
    want = ex.reference(args)
    kdef = getattr(gi.load(os.path.join(root, ex.file)), ex.kernel)
    pk = kdef.prepare(dev)
    bound = []
    bufs = []
    for p, a in zip(kdef.definition().ir.params, args):
        if p.category in N.BUFFER_CATEGORIES:
            b = dev.buffer(a)
            bound.append(b)
            bufs.append(b)
        elif p.category in N.TENSOR_CATEGORIES:
            t = dev.tensor(a)
            bound.append(t)
            bufs.append(t)
        else:
            bound.append(a)
            bufs.append(None)
    scheme = gi.Scheme(dev)
    kind, *rest = ex.grid(args)
    builder = pk.record(scheme, ex.kernel, *bound)
    if kind == "groups":
        builder.groups(rest[0])
    else:
        getattr(builder, kind)(*rest)
    scheme.submit()  # warm-up and the checked run
    got = [b.numpy() if b is not None else None for b in bufs]
    worst = 0.0
    for g, w in zip(got, want):
        if w is None:
            continue
        if w.dtype.kind == "f":
            if not np.allclose(g, w, rtol=ex.rtol, atol=ex.atol, equal_nan=True):
                err = np.nanmax(np.abs(g.astype(np.float64) - w))
                return f"FAIL (max err {err:.3g})", 0.0
            worst = max(worst, float(np.nanmax(np.abs(g.astype(np.float64) - w))) if w.size else 0.0)
        elif not np.array_equal(g, w):
            return f"FAIL ({int(np.sum(g != w))} wrong)", 0.0
    # time re-submits of the recorded scheme (inputs are not reset: only the time matters here)
    t0 = time.perf_counter()
    reps = 3
    for _ in range(reps):
        scheme.submit()
    if bufs and bufs[-1] is not None:
        bufs[-1].numpy()
    ms = (time.perf_counter() - t0) / reps * 1e3
    return ("ok" if worst == 0 else f"ok (max err {worst:.1e})"), ms


def run_pipeline(dev: gi.Device, root: str, pipe: Pipeline, args: dict, fused: bool) -> tuple[dict, float]:
    """Run a multi-stage example unfused (one node per stage) or as one FusedKernel; returns
    the final contents of every buffer and the time of a re-submit (ms)."""
    mod = gi.load(os.path.join(root, pipe.file))
    bufs = {k: dev.buffer(v) for k, v in args.items() if isinstance(v, np.ndarray)}
    value = {**args, **bufs}
    n = len(next(iter(bufs.values())))
    stages = [getattr(mod, k).prepare(dev).invoke(*(value[a] for a in names)).over_1d(n)
              for k, names in pipe.stages]
    scheme = gi.Scheme(dev)
    if fused:
        gi.FusedKernel.prepare(dev, stages).record(scheme, pipe.name, stages)
    else:
        for (k, _), inv in zip(pipe.stages, stages):
            inv.record(scheme, k)
    scheme.submit()
    got = {k: b.numpy() for k, b in bufs.items()}
    t0 = time.perf_counter()
    for _ in range(3):
        scheme.submit()
    next(iter(bufs.values())).numpy()
    return got, (time.perf_counter() - t0) / 3 * 1e3


def check_pipeline(dev: gi.Device, root: str, pipe: Pipeline, seed: int, size: Optional[int],
                   fused: bool) -> tuple[str, float]:
    args = pipe.inputs(np.random.default_rng(seed), size or pipe.size)
    want = pipe.reference(args)
    got, ms = run_pipeline(dev, root, pipe, args, fused)
    for k, w in want.items():
        if not np.allclose(got[k], w, rtol=pipe.rtol, atol=pipe.atol, equal_nan=True):
            return f"FAIL `{k}` (max err {np.nanmax(np.abs(got[k].astype(np.float64) - w)):.3g})", 0.0
    return "ok", ms


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="goldy-import-demo")
    ap.add_argument("--backend", help="comma-separated backends (default: cpu plus every available one)")
    ap.add_argument("--size", type=int, help="problem size for every example")
    ap.add_argument("--root", default="rust_examples")
    ap.add_argument("--out", default="build")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    args = ap.parse_args(argv)

    print(f"goldy-import {gi.__version__}: importing {len({e.file for e in EXAMPLES})} example files "
          f"from {args.root}/, emitting into {args.out}/")
    status = emit_all(args.root, args.out)
    for target, st in sorted(status.items()):
        print(f"  {target:6s} {st}")
    if args.backend:
        backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    else:
        backends = ["cpu"] + [b for b in ("cuda", "wgpu", "slang") if gi.backend_available(b)]
    devices = {}
    for b in backends:
        try:
            devices[b] = gi.Device(b)
        except gi.GoldyError as e:
            print(f"  backend {b}: unavailable: {e}")
    print(f"\nrandom seed {args.seed}; backends: " + ", ".join(d.describe() for d in devices.values()) + "\n")
    header = f"{'kernel':16s} {'file':18s} {'backend':8s} {'check':28s} {'time (ms)':>10s}"
    print(header)
    print("-" * len(header))
    failures = 0
    for ex in EXAMPLES:
        for b, dev in devices.items():
            try:
                check, ms = run_example(dev, args.root, ex, args.seed, args.size)
            except gi.GoldyError as e:
                check, ms = f"ERROR: {str(e).splitlines()[0][:60]}", 0.0
            failures += not check.startswith("ok")
            print(f"{ex.kernel:16s} {ex.file:18s} {b:8s} {check:28s} {ms:10.2f}")
    for pipe in PIPELINES:  # multi-stage: unfused, then as one FusedKernel
        for fused in (False, True):
            for b, dev in devices.items():
                try:
                    check, ms = check_pipeline(dev, args.root, pipe, args.seed, args.size, fused)
                except gi.GoldyError as e:
                    check, ms = f"ERROR: {str(e).splitlines()[0][:60]}", 0.0
                failures += not check.startswith("ok")
                name = pipe.name + (" fused" if fused else f" x{len(pipe.stages)}")
                print(f"{name:16s} {pipe.file:18s} {b:8s} {check:28s} {ms:10.2f}")
    runs = (len(EXAMPLES) + 2 * len(PIPELINES)) * len(devices)
    print(f"\n{runs - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
