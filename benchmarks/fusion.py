"""Fusion benchmark (run on a GPU machine; see benchmarks/RESULTS.md).

    python3 benchmarks/fusion.py [--mib 256] [--reps 20] [--backend cuda] [--layers 8]

Table 1, a 4-stage element-wise chain over `--mib` MiB of f32, one kernel per stage as a
model would publish them (benchmarks/fusion.py RUST: `t1 = x*a + b`, `t2 = silu(t1)`,
`t3 = t2 * t1`, `y = clamp(t3, -l, l)`):

- unfused: four dispatches, intermediates in plain buffers (4 reads, 4 writes, 1 read
  more for t1);
- FusedKernel: one dispatch, intermediates forwarded in registers but still stored
  (1 read, 4 writes);
- automatic fusion with the intermediates as scheme temporaries: the scheme fuses the
  four nodes and the temporaries live only in registers (1 read, 1 write);
- the same with specialization on: the fused region's variant has the four stages' `n`,
  the scalars and the elided temporaries' lengths baked in (runtime/specialization.py);
- PyTorch eager (five kernels) and `torch.compile` (Inductor: one Triton kernel) of the
  same chain, in the same run.

GB/s counts the 8 bytes per element the chain must move (x in, y out); on CUDA each row is
the median over `--reps` of the device time between two events around 10 back-to-back
calls (`submit(wait=False)`; torch's calls likewise), per call, after 3 warm-ups; on other
backends the wall time of `scheme.submit()`. Every goldy-import row gives the same bits
(checked before timing); the PyTorch rows agree within 1e-5 (their silu rounds otherwise).
With PyTorch on CUDA, each row also gives its kernels' device time per call as CUPTI sees
it (torch.profiler, 40 calls back to back): the kernels alone, where the event time also
holds any gap the caller's host work leaves between calls (torch.compile's guards).

Table 2, a decode-like step: `--layers` layers of one reduction (one workgroup: a norm's
statistic) and nine small element-wise kernels over a 4096-wide hidden state, through
temporaries, i.e. `10 * layers` dispatches per submit (80 by default). Tokens per second
= 1 / median wall time of `scheme.submit()`, recorded graph vs automatic fusion (one
reduction and one fused dispatch per layer) vs automatic fusion with specialization on,
the dispatch counts and how many dispatches run a specialized variant.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from typing import Optional

import numpy as np

import goldy_import as gi

RUST = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn affine(x: &[f32], t1: &mut [f32], n: u32, a: f32, b: f32) {
    let i = gpu::global_id().x;
    if i < n { t1[i] = x[i] * a + b; }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn silu(t1: &[f32], t2: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { let v = t1[i]; t2[i] = v / (1.0 + (-v).exp()); }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn mul(a: &[f32], b: &[f32], out: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { out[i] = a[i] * b[i]; }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn clamp(t3: &[f32], y: &mut [f32], n: u32, l: f32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = t3[i].clamp(-l, l); }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn inv_rms(x: &[f32], stat: &mut [f32], n: u32) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let lid = gpu::local_id().x;
    let mut acc = 0.0;
    let mut c = lid;
    while c < n {
        let v = x[c];
        acc += v * v;
        c += 256u32;
    }
    let total = gpu::workgroup_sum::<256>(acc, scratch);
    if lid == 0u32 { stat[0] = 1.0 / (total / (n as f32) + 0.00001).sqrt(); }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn norm_apply(x: &[f32], stat: &[f32], w: &[f32], h: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { h[i] = x[i] * stat[0] * w[i]; }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn add(a: &[f32], b: &[f32], out: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { out[i] = a[i] + b[i]; }
}
"""

A, B, L = 1.25, -0.5, 2.0


def median_wall_ms(fn, reps: int, warm: int = 3) -> float:
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


BATCH = 10  # calls queued back to back between two events (per METHOD.md): launch gaps hidden


class Timer:
    """Device time on CUDA (driver events around BATCH back-to-back `submit(wait=False)`,
    per submit), wall time elsewhere."""

    def __init__(self, dev: gi.Device, reps: int):
        self.dev, self.reps = dev, reps
        self.cuda = dev.backend_name == "cuda"
        if self.cuda:
            b = dev.backend
            self.e0, self.e1 = b._cu("cuEventCreate", 0), b._cu("cuEventCreate", 0)

    def scheme_ms(self, scheme: gi.Scheme) -> float:
        scheme.submit()  # what this submit runs is what is timed (fused, specialized or not)
        if not self.cuda:
            return median_wall_ms(scheme.submit, self.reps)
        b = self.dev.backend
        for _ in range(3):
            scheme.submit(wait=False)
        self.dev.synchronize()
        times = []
        for _ in range(self.reps):
            b._cu("cuEventRecord", self.e0, b.stream)
            for _ in range(BATCH):
                scheme.submit(wait=False)
            b._cu("cuEventRecord", self.e1, b.stream)
            self.dev.synchronize()  # raises a fault of any of them
            times.append(b._cu("cuEventElapsedTime", self.e0, self.e1) / BATCH)
        return statistics.median(times)


def kernel_us(call, sync, calls: int = 40) -> Optional[float]:
    """Device time of the kernels `calls` calls run, per call, as CUPTI sees them (through
    torch.profiler; None without torch): the kernels alone, without the gaps between calls
    that the event rows include (a caller's host work between launches shows there)."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        return None
    for _ in range(3):
        call()
    sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            call()
        sync()
        torch.cuda.synchronize()
    total = sum(device_us(e) for e in prof.key_averages())
    return total / calls if total else None


def device_us(ev) -> float:
    """One torch.profiler event's total device time in us (`device_time_total`; older
    torch names it `cuda_time_total`)."""
    dt = getattr(ev, "device_time_total", None)
    return (ev.cuda_time_total if dt is None else dt) or 0.0


def settle(scheme: gi.Scheme, spec: bool) -> None:
    """Submits until automatic fusion (and specialization) run their compiled programs."""
    for _ in range(2 + spec):
        scheme.submit()
        if not (scheme.wait_for_fusion(300) and scheme.wait_for_specialization(300)):
            raise SystemExit("automatic fusion or specialization did not finish compiling")


def chain_schemes(dev: gi.Device, mod, x, y, n: int):
    """(name, scheme) for the four goldy-import variants of the 4-stage chain."""
    k = {name: getattr(mod, name).prepare(dev) for name in ("affine", "silu", "mul", "clamp")}

    def stages(t1, t2, t3):
        return [k["affine"].invoke(x, t1, n, A, B).over_1d(n), k["silu"].invoke(t1, t2, n).over_1d(n),
                k["mul"].invoke(t2, t1, t3, n).over_1d(n), k["clamp"].invoke(t3, y, n, L).over_1d(n)]

    plain = [dev.empty(n) for _ in range(3)]
    unfused = gi.Scheme(dev)
    for inv in stages(*plain):
        inv.record(unfused, "stage")
    explicit = gi.Scheme(dev)
    st = stages(*plain)
    gi.FusedKernel.prepare(dev, st).record(explicit, "chain", st)
    autos = []
    for spec in (False, True):
        auto = gi.Scheme(dev)
        auto.set_automatic_fusion(True)
        auto.set_specialization(spec)
        for inv in stages(*(auto.temporary_buffer(n) for _ in range(3))):
            inv.record(auto, "stage")
        settle(auto, spec)
        rep = auto.fusion_report()
        assert [r.status for r in rep.regions] == ["active"] and rep.elided == 3, rep
        srep = auto.specialization_report()
        assert [r.status for r in srep.regions] == (["active"] if spec else ["universal"]), srep
        autos.append(auto)
    return [("unfused (4 dispatches)", unfused, 4), ("FusedKernel, stores kept", explicit, 1),
            ("automatic fusion + temporaries", autos[0], 1),
            ("automatic fusion + temporaries + specialization", autos[1], 1)]


def torch_rows(x0: np.ndarray, want: np.ndarray, reps: int):
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    xt = torch.from_numpy(x0).cuda()

    def chain(x):
        t1 = x * A + B
        t2 = t1 / (1.0 + torch.exp(-t1))
        return torch.clamp(t2 * t1, -L, L)

    rows = []
    for name, fn in (("PyTorch eager", chain), ("torch.compile (Inductor)", torch.compile(chain))):
        out = fn(xt)
        torch.cuda.synchronize()
        np.testing.assert_allclose(out.cpu().numpy(), want, rtol=1e-5, atol=1e-5, err_msg=name)
        for _ in range(3):
            fn(xt)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):  # as Timer: BATCH calls back to back between the events
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(BATCH):
                fn(xt)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / BATCH)
        rows.append((name, statistics.median(times), kernel_us(lambda: fn(xt), torch.cuda.synchronize)))
    return rows


def chain_table(dev: gi.Device, mod, n: int, reps: int) -> None:
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal(n).astype(np.float32)
    x, y = dev.buffer(x0), dev.empty(n)
    timer = Timer(dev, reps)
    rows, ref = [], None
    for name, scheme, dispatches in chain_schemes(dev, mod, x, y, n):
        y.write(np.full(n, np.nan, np.float32))
        scheme.submit()
        got = y.numpy()
        if ref is None:
            ref = got
        elif not np.array_equal(got, ref, equal_nan=True):
            raise SystemExit(f"{name}: results differ from the unfused chain")
        ku = kernel_us(lambda: scheme.submit(wait=False), dev.synchronize) if timer.cuda else None
        rows.append((name, timer.scheme_ms(scheme), dispatches, ku))
    rows += [(name, ms, None, ku) for name, ms, ku in torch_rows(x0, ref, reps)]
    unfused = rows[0][1]
    compiled = next((r for r in rows if r[0].startswith("torch.compile")), None)
    print(f"\n4-stage element-wise chain, {n} f32 ({n * 4 / 2**20:.0f} MiB) on {dev.describe()}")
    print("| variant | dispatches | ms | GB/s (8 B/elem) | vs unfused | vs torch.compile | kernels us (CUPTI) "
          "| kernels vs torch.compile's |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, ms, d, ku in rows:
        vs_c = f"{compiled[1] / ms:.2f}x" if compiled else "-"
        kv = f"{compiled[3] / ku:.2f}x" if compiled and compiled[3] and ku else "-"
        print(f"| {name} | {d if d is not None else '-'} | {ms:.3f} | {8 * n / ms / 1e6:.0f} | "
              f"{unfused / ms:.2f}x | {vs_c} | {f'{ku:.1f}' if ku else '-'} | {kv} |")


def decode_scheme(dev: gi.Device, mod, layers: int, hidden: int, auto: bool, spec: bool = False):
    rng = np.random.default_rng(2)
    k = {name: getattr(mod, name).prepare(dev)
         for name in ("inv_rms", "norm_apply", "silu", "affine", "mul", "add", "clamp")}
    scheme = gi.Scheme(dev)
    scheme.set_automatic_fusion(auto)
    scheme.set_specialization(spec)
    x = dev.buffer(rng.standard_normal(hidden).astype(np.float32))
    first = x
    for layer in range(layers):
        w = dev.buffer(rng.uniform(0.5, 1.5, hidden).astype(np.float32))
        stat = dev.empty(1)
        h, g, u, m, m2, r, r2, r3 = (scheme.temporary_buffer(hidden) for _ in range(8))
        out = dev.empty(hidden)
        n = hidden
        k["inv_rms"].record(scheme, f"L{layer} norm", x, stat, n).groups((1, 1, 1))
        k["norm_apply"].record(scheme, "apply", x, stat, w, h, n).over_1d(n)
        k["silu"].record(scheme, "silu", h, g, n).over_1d(n)
        k["affine"].record(scheme, "up", h, u, n, 1.5, 0.0).over_1d(n)
        k["mul"].record(scheme, "gate", g, u, m, n).over_1d(n)
        k["affine"].record(scheme, "down", m, m2, n, 0.5, 0.01).over_1d(n)
        k["add"].record(scheme, "residual", x, m2, r, n).over_1d(n)
        k["affine"].record(scheme, "post", r, r2, n, 0.9, 0.0).over_1d(n)
        k["mul"].record(scheme, "sq", r2, r, r3, n).over_1d(n)
        k["clamp"].record(scheme, "clamp", r3, out, n, 4.0).over_1d(n)
        x = out
    return scheme, first, x


def decode_table(dev: gi.Device, mod, layers: int, reps: int, hidden: int = 4096) -> None:
    rows, ref = [], None
    for name, auto, spec in (("recorded graph", False, False), ("automatic fusion", True, False),
                             ("automatic fusion + specialization", True, True)):
        scheme, _, out = decode_scheme(dev, mod, layers, hidden, auto, spec)
        settle(scheme, spec)
        out.write(np.full(hidden, np.nan, np.float32))
        scheme.submit()
        got = out.numpy()
        if ref is None:
            ref = got
        elif not np.array_equal(got, ref, equal_nan=True):
            raise SystemExit(f"decode step: {name} changed the result")
        srep = scheme.specialization_report()
        special = sum(u.status == "active" for u in srep.nodes + srep.regions)
        if spec and special != 2 * layers:  # each layer's reduction and fused region
            raise SystemExit(f"decode step: {special} specialized dispatches, expected {2 * layers}\n{srep}")
        before = scheme.stats.dispatches
        ms = median_wall_ms(scheme.submit, max(reps, 50))
        per = (scheme.stats.dispatches - before) // (max(reps, 50) + 3)
        rows.append((name, per, ms, scheme.fusion_report(), special))
    print(f"\ndecode-like step: {layers} layers x (1 reduction + 9 element-wise), hidden {hidden}, "
          f"on {dev.describe()}")
    print("| scheme | dispatches / submit | ms / submit | tokens / s | fused regions | temporaries elided "
          "| specialized dispatches |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, per, ms, rep, special in rows:
        print(f"| {name} | {per} | {ms:.3f} | {1e3 / ms:.0f} | {len(rep.regions)} | {rep.elided} | {special} |")
    print(f"speed-up of automatic fusion: {rows[0][2] / rows[1][2]:.2f}x, with specialization: "
          f"{rows[0][2] / rows[2][2]:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=float, default=256)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--layers", type=int, default=8, help="layers of the decode-like step (0: skip that table)")
    args = ap.parse_args()
    dev = gi.Device(args.backend)
    mod = gi.load_source(RUST, "fusion_bench.rs")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  goldy-import {gi.__version__}  "
          f"{dev.describe()}")
    chain_table(dev, mod, int(args.mib * 2**20) // 4, args.reps)
    if args.layers > 0:
        decode_table(dev, mod, args.layers, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
