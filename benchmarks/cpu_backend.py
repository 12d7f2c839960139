"""CPU backend benchmark: the numpy oracle against plain numpy doing the same job.

    python benchmarks/cpu_backend.py [--reps 15] [--chunks 65536,262144] [--only racecheck|loops|decode] [--append]

Large kernels (timed through the public API: one recorded Scheme, `submit()` per rep):
  saxpy over 2^24 f32            vs numpy `a * x + y`          target <= 3x
  workgroup_sum over 2^22 f32    vs `x.reshape(-1, 256).sum(1)`  target <= 5x
  atomic histogram of 2^20 u32   vs `np.bincount`               (informative)
Per-dispatch cost of a tiny kernel (256-thread saxpy): backend submit of a recorded
dispatch, `Scheme.submit()` of one node, a fresh record + submit, and a 100-node Scheme
per node. Target: record + submit under 50 us.
Loop-heavy kernels (`--only loops`): the per-row GEMV loop as users write it
(`for j in 0..n { acc = acc + w[i * n + j] * x[j]; }`) at the decode step's shapes, the
one-pass reduction loop (codegen/cpu/loops.py) against the SIMT loop it replaces and
against numpy `w @ x` (BLAS; not bit-identical: it sums in another order). Target: within
3x of plain numpy (benchmarks/decode.py times the whole decode step). Wall time, as
everywhere here (see the decode step for why not CPU time).
Decode step (`--only decode`): benchmarks/decode.py's stories15M step on the cpu backend
against its plain-numpy model, wall time per token of each (medians of alternating
phases, the first steps after each switch untimed; CPU time would charge the spinning of
numpy's BLAS threads to the kernels), and per kernel. Target: within 3x of numpy (issue 18); run it with OPENBLAS_NUM_THREADS=1 too,
for numpy on one core as the cpu backend is.
Racecheck (`Device("cpu", racecheck=True)`): every example of rust_examples/ at its demo
size, against a plain CPU run of the same recorded Scheme. Target: within 5x.

Method: every result is checked before timing; kernel and numpy runs alternate so both see
the same machine load; the figure is the best of `reps` (the median is printed beside it).
`--chunks` repeats the large kernels for each chunk size (threads per chunk) given.
`--append` adds the table to benchmarks/RESULTS.md under "CPU backend".
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import goldy_import as gi
from goldy_import.runtime import cpu as C
from goldy_import.runtime.backend import Dispatch

RUST = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn wg_sum(x: &[f32], out: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let i = gpu::global_id().x;
    let v = if i < x.len() { x[i] } else { 0.0 };
    let total = gpu::workgroup_sum::<256>(v, scratch);
    if gpu::local_id().x == 0 { out[gpu::workgroup_id().x] = total; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gemv(w: &[f32], x: &[f32], out: &mut [f32], rows: u32, n: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = 0.0;
        for j in 0..n { acc = acc + w[i * n + j] * x[j]; }
        out[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn histogram(values: &[u32], bins: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < values.len() { gpu::atomic_add(bins, values[i] % bins.len(), 1u32); }
}
"""


def timed(fns, reps: int) -> list[tuple[float, float]]:
    """(best, median) seconds of each function, runs interleaved."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(reps):
        for t, f in zip(times, fns):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
    return [(min(t), statistics.median(t)) for t in times]


def tree_sum(x: np.ndarray) -> np.ndarray:
    """The collectives' pairwise tree, vectorised over rows (the bit-exact reference)."""
    while x.shape[1] > 1:
        x = x[:, 0::2] + x[:, 1::2]
    return x[:, 0]


def large(kernels, chunk: int, reps: int, rng) -> list[str]:
    dev = gi.Device("cpu", chunk_threads=chunk)
    rows = []

    n = 1 << 24
    x, y0 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    xb, yb = dev.buffer(x), dev.buffer(y0)
    s = gi.Scheme(dev)
    kernels.saxpy.prepare(dev).record(s, "saxpy", xb, yb, 2.0).over_1d(n)
    s.submit()
    assert np.array_equal(yb.numpy(), np.float32(2) * x + y0), "saxpy result"
    (k, km), (r, rm) = timed([s.submit, lambda: np.float32(2) * x + y0], reps)
    rows.append(f"| saxpy 2^24 f32 | {chunk} | {k * 1e3:.2f} ({km * 1e3:.2f}) | `a * x + y` {r * 1e3:.2f} "
                f"({rm * 1e3:.2f}) | {k / r:.2f}x (target 3x) |")

    m = 1 << 22
    xr = (rng.standard_normal(m) * 10.0 ** rng.integers(-3, 4, m)).astype(np.float32)
    out = dev.zeros(m // 256)
    s = gi.Scheme(dev)
    kernels.wg_sum.prepare(dev).record(s, "sum", dev.buffer(xr), out).over_1d(m)
    s.submit()
    assert np.array_equal(out.numpy().view(np.uint32), tree_sum(xr.reshape(-1, 256)).view(np.uint32)), "tree"
    (k, km), (r, rm) = timed([s.submit, lambda: xr.reshape(-1, 256).sum(1)], reps)
    rows.append(f"| workgroup_sum 2^22 f32 (wg 256) | {chunk} | {k * 1e3:.2f} ({km * 1e3:.2f}) | "
                f"`reshape(-1, 256).sum(1)` {r * 1e3:.2f} ({rm * 1e3:.2f}) | {k / r:.2f}x (target 5x) |")

    h = 1 << 20
    vals = rng.integers(0, 1 << 30, h).astype(np.uint32)
    bins = dev.zeros(256, np.uint32)
    s = gi.Scheme(dev)
    kernels.histogram.prepare(dev).record(s, "hist", dev.buffer(vals), bins).over_1d(h)
    s.submit()
    assert np.array_equal(bins.numpy(), np.bincount(vals % 256, minlength=256)), "histogram"
    (k, km), (r, rm) = timed([s.submit, lambda: np.bincount(vals % 256, minlength=256)], max(3, reps // 3))
    rows.append(f"| atomic_add histogram 2^20 u32, 256 bins | {chunk} | {k * 1e3:.2f} ({km * 1e3:.2f}) | "
                f"`np.bincount` {r * 1e3:.2f} ({rm * 1e3:.2f}) | {k / r:.2f}x |")
    return rows


def loops(reps: int, rng) -> list[str]:
    from goldy_import.codegen.cpu import ckernel
    from goldy_import.codegen.cpu import emitter as E
    ckernel.PREFER = False  # the numpy forms compared here (the decode step shows the C form's choice)
    rows_out = []
    for rows, n in ((768, 288), (288, 768), (32000, 288)):
        w = rng.standard_normal(rows * n).astype(np.float32)
        x = rng.standard_normal(n).astype(np.float32)
        want = np.zeros(rows, np.float32)
        for j in range(n):  # Rust's order: one rounded add per j
            want = want + w.reshape(rows, n)[:, j] * x[j]
        runs, outs = [], []
        for one_pass, cap in ((True, None), (True, 0), (False, 0)):  # with transposed copies, without, SIMT
            E._Emitter.one_pass_loops = one_pass
            E._CACHE.clear()
            try:
                dev = gi.Device("cpu") if cap is None else gi.Device("cpu", transposed_cache=cap)
                out = dev.zeros(rows)
                s = gi.Scheme(dev)
                gi.load_source(RUST, "cpu_bench.rs").gemv.prepare(dev).record(
                    s, "gemv", dev.buffer(w), dev.buffer(x), out, rows, n).over_1d(rows)
                s.submit()
            finally:
                E._Emitter.one_pass_loops = True
                E._CACHE.clear()
            assert np.array_equal(out.numpy().view(np.uint32), want.view(np.uint32)), "gemv"
            runs.append(s.submit)
            outs.append(out)
        W = w.reshape(rows, n)
        runs[0]()  # its second submit makes the transposed copy
        assert np.array_equal(outs[0].numpy().view(np.uint32), want.view(np.uint32)), "gemv, transposed copy"
        (f, fm), (c, cm), (p, pm), (b, bm) = timed(runs + [lambda: W @ x], max(3, reps // 3))
        rows_out.append(f"| gemv {rows} x {n} | {f * 1e3:.2f} ({fm * 1e3:.2f}) | {c * 1e3:.2f} ({cm * 1e3:.2f}) | "
                        f"{p * 1e3:.1f} ({pm * 1e3:.1f}) | {b * 1e3:.3f} ({bm * 1e3:.3f}) | {p / f:.0f}x | "
                        f"{f / b:.1f}x |")
    ckernel.PREFER = None
    return rows_out


def decode(reps: int) -> list[str]:
    """Wall ms per token of the decode step and of plain numpy, and the kernels' share.

    Wall time, not CPU time: OpenBLAS's worker threads spin for a while after numpy's
    matmuls, and that CPU time lands on whatever runs next (here the goldy step, 2x its
    wall time on a 2-core machine). The cpu backend runs on one thread, so its wall time is
    its CPU time; numpy runs with the BLAS threads it is given (`blas_threads()`)."""
    import collections
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import decode as D
    cfg, W = D.STORIES15M, D.weights(D.STORIES15M)
    dec, ref = D.GoldyDecoder(gi.Device("cpu"), cfg, W), D.NumpyDecoder(cfg, W)
    plain = D.GoldyDecoder(gi.Device("cpu", transposed_cache=0), cfg, W)  # no transposed copies
    toks = D.tokens_for(cfg, cfg.seq, seed=2)
    D.check(cfg, W, gi.Device("cpu"), 2, False)  # logits against the numpy model first
    for d in (dec, plain):
        D.settle(d, toks[0])  # the C builds done, each dispatch in its faster form (codegen/cpu/ckernel.py)
    forms = collections.Counter("C" if n.dispatch.state.form.choice else "numpy" for n in dec.scheme.nodes)
    per_kernel = collections.defaultdict(float)
    counting = [False]  # only `dec`'s steps (compiled kernels are shared between devices)
    for node in dec.scheme.nodes + plain.scheme.nodes:  # time each kernel function (shared by its nodes)
        ck = node.dispatch.compiled
        if not getattr(ck.fn, "timed", False):
            def timed(G, R, F, f=ck.fn, name=ck.kernel.name):
                t0 = time.perf_counter()
                f(G, R, F)
                if counting[0]:
                    per_kernel[name] += time.perf_counter() - t0
            timed.timed = True
            ck.fn = timed
        if ck.native is not None and not getattr(ck.native.run, "timed", False):  # its C form
            def timed_c(packed, groups, f=ck.native.run, name=ck.kernel.name):
                t0 = time.perf_counter()
                ok = f(packed, groups)
                if counting[0]:
                    per_kernel[name] += time.perf_counter() - t0
                return ok
            timed_c.timed = True
            ck.native.run = timed_c
    ours, nocopy, theirs, pos, logits = [], [], [], 0, {}
    for phase in range(1 + reps):
        for fn, out in ((dec.step, ours), (plain.step, nocopy), (ref.step, theirs)):
            for i in range(PHASE_STEPS):  # the same positions for each
                timed_step = phase >= 1 and i >= SWITCH_STEPS
                counting[0] = out is ours and timed_step
                t0 = time.perf_counter()
                got = fn(toks[(pos + i) % cfg.seq], (pos + i) % cfg.seq)
                if timed_step:
                    out.append(time.perf_counter() - t0)
                if out is ours:
                    logits[i] = got
                elif out is nocopy:  # both goldy steps give the same bits
                    assert np.array_equal(got.view(np.uint32), logits[i].view(np.uint32)), "transposed copies"
        pos += PHASE_STEPS
    counting[0] = False
    g, c, r = statistics.median(ours), statistics.median(nocopy), statistics.median(theirs)
    rows = [f"| decode step, stories15M, cpu backend | {g * 1e3:.1f} | {r * 1e3:.1f} ({blas_threads()}) | "
            f"{g / r:.1f}x (target 3x) |",
            f"| the same without transposed copies (`transposed_cache=0`) | {c * 1e3:.1f} | | {c / r:.1f}x |"]
    total = sum(per_kernel.values())
    share = ", ".join(f"{k} {v / len(ours) * 1e3:.2f}" for k, v in sorted(per_kernel.items(), key=lambda kv: -kv[1]))
    rows.append(f"| kernels (ms per token) | {total / len(ours) * 1e3:.1f}: {share} | | |")
    rows.append(f"| dispatches per form | {forms['C']} C, {forms['numpy']} numpy | | |")
    return rows


# each implementation runs PHASE_STEPS steps in turn; the first SWITCH_STEPS after a switch
# are not timed (numpy's BLAS workers still spin on the cores for a while after its matmuls)
PHASE_STEPS, SWITCH_STEPS = 8, 2


def blas_threads() -> str:
    """The BLAS threads numpy was started with, as the environment sets them."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            return f"{var}={os.environ[var]}"
    return f"BLAS default, {os.cpu_count()} cores"


def tiny(kernels, reps: int) -> list[str]:
    dev = gi.Device("cpu")
    n = 256
    x, y = dev.buffer(np.ones(n, np.float32)), dev.buffer(np.zeros(n, np.float32))
    pk = kernels.saxpy.prepare(dev)
    s1 = gi.Scheme(dev)
    node = pk.record(s1, "saxpy", x, y, 2.0).over_1d(n)
    be, d = dev.backend, node.dispatch

    def fresh():
        s = gi.Scheme(dev)
        pk.record(s, "saxpy", x, y, 2.0).over_1d(n)
        s.submit()

    s100 = gi.Scheme(dev)
    for _ in range(100):
        pk.record(s100, "saxpy", x, y, 2.0).over_1d(n)
    reps = max(reps * 100, 1000)
    (a, am), (b, bm), (c, cm), (e, em) = timed([
        lambda: be.submit([d]),
        lambda: be.record(Dispatch(d.kernel, d.compiled, d.args, d.groups)),
        s1.submit, fresh], reps)
    (f, fm), = timed([s100.submit], max(10, reps // 100))
    us = 1e6
    return [
        f"| backend `submit` of one recorded dispatch | {a * us:.1f} ({am * us:.1f}) |",
        f"| backend `record` (binding arguments) | {b * us:.1f} ({bm * us:.1f}) |",
        f"| `Scheme.submit()` of one node | {c * us:.1f} ({cm * us:.1f}) |",
        f"| fresh Scheme + `record(...).over_1d(n)` + `submit()` (target 50) | {e * us:.1f} ({em * us:.1f}) |",
        f"| 100-node Scheme `submit()`, per node | {f * us / 100:.1f} ({fm * us / 100:.1f}) |",
    ]


def _example_scheme(dev, kdef, ex, args):
    """A Scheme holding one recorded dispatch of example `ex` on `args`."""
    from goldy_import.ir import nodes as N
    bound = []
    for p, a in zip(kdef.definition().ir.params, args):
        if p.category in N.BUFFER_CATEGORIES:
            bound.append(dev.buffer(a))
        elif p.category in N.TENSOR_CATEGORIES:
            bound.append(dev.tensor(a))
        else:
            bound.append(a)
    s = gi.Scheme(dev)
    kind, *rest = ex.grid(args)
    builder = kdef.prepare(dev).record(s, ex.kernel, *bound)
    builder.groups(rest[0]) if kind == "groups" else getattr(builder, kind)(*rest)
    return s


def racecheck(reps: int, rng) -> list[str]:
    from goldy_import.examples import EXAMPLES
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rust_examples")
    plain, checked = gi.Device("cpu", racecheck=False), gi.Device("cpu", racecheck=True)
    rows, ratios = [], []
    for ex in EXAMPLES:
        kdef = getattr(gi.load(os.path.join(root, ex.file)), ex.kernel)
        args = ex.inputs(rng, ex.size)
        sp, sr = _example_scheme(plain, kdef, ex, args), _example_scheme(checked, kdef, ex, args)
        sp.submit()
        sr.submit()  # raises RaceError if the example races
        (p, pm), (r, rm) = timed([sp.submit, sr.submit], reps)
        ratios.append(r / p)
        rows.append(f"| {ex.kernel} ({ex.file}, {ex.size} elements) | {p * 1e3:.2f} ({pm * 1e3:.2f}) | "
                    f"{r * 1e3:.2f} ({rm * 1e3:.2f}) | {r / p:.1f}x |")
    geo = float(np.exp(np.mean(np.log(ratios))))
    rows.append(f"| geometric mean (target 5x) / worst | | | {geo:.1f}x / {max(ratios):.1f}x |")
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        load = "load %.1f" % os.getloadavg()[0]
    except OSError:
        load = "load ?"
    return (f"{cpu}, {os.cpu_count()} cores ({load}), Python {platform.python_version()}, "
            f"numpy {np.__version__}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--chunks", default=str(C.CHUNK_THREADS), help="comma-separated threads per chunk")
    ap.add_argument("--only", choices=("racecheck", "loops", "decode"), help="run only this part")
    ap.add_argument("--append", action="store_true", help="append to benchmarks/RESULTS.md")
    args = ap.parse_args()
    kernels = gi.load_source(RUST, "cpu_bench.rs")
    rng = np.random.default_rng(7)
    lines = []
    if args.only is None:
        lines += ["| kernel | chunk | goldy cpu ms, best (median) | numpy ms, best (median) | ratio |",
                  "|---|---|---|---|---|"]
        for chunk in (int(c) for c in args.chunks.split(",")):
            lines += large(kernels, chunk, args.reps, rng)
        lines += ["", "| per dispatch, tiny kernel | us, best (median) |", "|---|---|"]
        lines += tiny(kernels, args.reps)
        lines += [""]
    if args.only in (None, "loops"):
        lines += ["| loop-heavy kernel | one-pass loop ms, best (median) | one-pass, no transposed copies | "
                  "SIMT loop ms | numpy `w @ x` ms | one-pass speed-up | vs numpy |", "|---|---|---|---|---|---|---|"]
        lines += loops(args.reps, rng)
        lines += [""]
    if args.only in (None, "decode"):
        lines += ["| decode step | goldy cpu ms per token (median, wall) | plain numpy ms (BLAS threads) | ratio |",
                  "|---|---|---|---|"]
        lines += decode(max(2, args.reps // 3))
        lines += [""]
    if args.only in (None, "racecheck"):
        lines += ["| racecheck: example | plain cpu ms, best (median) | racecheck ms, best (median) | cost |",
                  "|---|---|---|---|"]
        lines += racecheck(args.reps, rng)
    table = "\n".join(lines)
    print(f"machine: {machine()}\n")
    print(table)
    if args.append:
        append(table)


def append(table: str) -> None:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             cwd=os.path.dirname(path)).stdout.strip() or "?"
    except OSError:
        rev = "?"
    cmd = ("python benchmarks/cpu_backend.py " + " ".join(sys.argv[1:])).strip()
    entry = (f"\n### {datetime.date.today().isoformat()}, commit {rev}\n\n"
             f"- machine: {machine()}\n- command: `{cmd}`\n\n{table}\n")
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    heading = "\n## CPU backend\n"
    if heading not in text:
        text = text.rstrip("\n") + "\n" + heading + (
            "\nThe numpy backend (`benchmarks/cpu_backend.py`) against plain numpy doing the same job; "
            "targets: saxpy <= 3x `a * x + y`, workgroup_sum <= 5x `reshape(-1, 256).sum(1)`, "
            "record + submit of a tiny kernel < 50 us, racecheck within 5x of a plain run.\n")
    head = text.index(heading) + len(heading)
    nxt = text.find("\n## ", head)
    text = text[:nxt] + entry + text[nxt:] if nxt != -1 else text.rstrip("\n") + "\n" + entry
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
