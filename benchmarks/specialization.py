"""Specialization benchmark: universal program vs the variant with its scalars baked in
(runtime/specialization.py; results in benchmarks/RESULTS.md).

    python3 benchmarks/specialization.py [--backend wgpu] [--reps 30] [--rows 4096] [--cols 256]

Two kernels whose loop bound, divisor and op-code are scalars:
- `gemv`: one row per thread, `for j in 0..n` over the row (`n` baked: a constant trip
  count), plus `row / d` and `row % d` (a constant divisor);
- `opswitch`: element-wise `if op == 0 {..} else if op == 1 ..` with `(i / d) % m` (one arm
  kept, constant divisors).
Each row: the median wall time of `scheme.submit()` (which waits for the device) after 3
warm-ups, one scheme with `set_specialization(False)`, one with `True` once its variant is
active. The outputs of both are checked bit-equal (outputs poisoned first) before timing.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time

import numpy as np

import goldy_import as gi

RUST = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gemv(a: &[f32], x: &[f32], y: &mut [f32], rows: u32, n: u32, d: u32) {
    let row = gpu::global_id().x;
    if row < rows {
        let mut acc = 0.0;
        for j in 0..n {
            acc += a[row * n + j] * x[j];
        }
        y[row] = acc + ((row / d) as f32) - ((row % d) as f32);
    }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn opswitch(x: &[f32], y: &mut [f32], n: u32, op: u32, d: u32, m: u32, s: f32) {
    let i = gpu::global_id().x;
    if i < n {
        let v = x[i];
        let g = ((i / d) % m) as f32;
        if op == 0 {
            y[i] = v * s + g;
        } else if op == 1 {
            y[i] = v - g * s;
        } else if op == 2 {
            y[i] = v.max(g);
        } else {
            y[i] = v.min(s) * g;
        }
    }
}
"""


def median_submit(sch: gi.Scheme, reps: int) -> float:
    for _ in range(3):
        sch.submit()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        sch.submit()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_case(dev, record, out, reps: int) -> tuple[float, float, str]:
    results, times, status = [], [], ""
    for on in (False, True):
        sch = gi.Scheme(dev)
        sch.set_specialization(on)
        record(sch)
        sch.submit()
        if on:
            if not sch.wait_for_specialization(600):
                raise SystemExit("variant compile did not finish")
            sch.submit()
            status = str(sch.specialization_report()).splitlines()[0]
            assert sch.stats.specializations >= 1, sch.specialization_report()
        out.write(np.full(len(out), np.nan, np.float32))
        sch.submit()
        results.append(out.numpy().view(np.uint32).copy())
        times.append(median_submit(sch, reps))
    if not np.array_equal(results[0], results[1]):
        raise SystemExit("universal and specialized results differ")
    return times[0], times[1], status


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="wgpu")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=256)
    ap.add_argument("--elems", type=int, default=1 << 20)
    args = ap.parse_args()
    ks = gi.load_source(RUST, "specialization_bench.rs")
    dev = gi.Device(args.backend)
    rng = np.random.default_rng(0)
    rows, cols, n = args.rows, args.cols, args.elems
    a = dev.buffer(rng.standard_normal(rows * cols).astype(np.float32))
    x = dev.buffer(rng.standard_normal(max(cols, n)).astype(np.float32))
    y = dev.empty(rows)
    z = dev.empty(n)
    g, o = ks.gemv.prepare(dev), ks.opswitch.prepare(dev)
    cases = [
        (f"gemv {rows}x{cols} (for j in 0..n, / d, % d)",
         lambda s: g.record(s, "gemv", a, x, y, rows, cols, 7).over_1d(rows), y),
        (f"opswitch op=1 over {n} (if op == .., / d % m)",
         lambda s: o.record(s, "op", x, z, n, 1, 3, 5, 0.5).over_1d(n), z),
        (f"opswitch op=3 over {n}",
         lambda s: o.record(s, "op", x, z, n, 3, 6, 10, 0.5).over_1d(n), z),
    ]
    print(f"# specialization, {datetime.date.today()}, {platform.node()}, {dev.describe()}, "
          f"median of {args.reps} submits")
    print("| kernel | universal | specialized | speed-up |")
    print("|---|---|---|---|")
    for name, record, out in cases:
        u, s, _status = run_case(dev, record, out, args.reps)
        print(f"| {name} | {u * 1e6:.1f} µs | {s * 1e6:.1f} µs | {u / s:.2f}x |")
    print("(results of universal and specialized checked bit-equal before timing)")


if __name__ == "__main__":
    main()
