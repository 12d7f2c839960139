"""Per-call cost of a goldy kernel as a torch operator (goldy_import/torch.py).

    python benchmarks/torch_op.py [--reps 50] [--n 1024,1048576]

For each tensor size and device (cpu; cuda where torch and a GPU are there): the op
`scale(x, a)` called eagerly (a fresh record and submit each call, DLPack binding, output
allocation), the same kernel as one recorded Scheme re-submitted (the floor the op's
per-call work sits on), and torch's own `a * x`. Every result is checked before timing;
the figure is the best of `reps` (median beside it), in microseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import goldy_import as gi

SRC = """
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn scale(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i]; }
}
"""


def _time(fn, reps: int, sync) -> tuple[float, float]:
    fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e6)
    return min(times), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--n", default="1024,1048576")
    args = ap.parse_args()
    mod = gi.load_source(SRC, "bench_torch.rs")
    op = gi.torch.custom_op(mod.scale, outputs={"y": "x"})
    places = ["cpu"] + (["cuda"] if torch.cuda.is_available() and gi.backend_available("cuda") else [])
    print(f"{'device':6} {'n':>9} {'op call':>16} {'scheme resubmit':>18} {'torch a*x':>14}   (us: best / median)")
    for place in places:
        sync = torch.cuda.synchronize if place == "cuda" else (lambda: None)
        for n in (int(s) for s in args.n.split(",")):
            x = torch.randn(n, device=place)
            assert torch.equal(op(x, 2.0), 2.0 * x)
            dev = gi.torch.device_for(x)
            y = torch.empty_like(x)
            scheme = gi.Scheme(dev)
            mod.scale.prepare(dev).record(scheme, "scale", dev.from_dlpack(x), dev.from_dlpack(y), 2.0).over_1d(n)
            scheme.submit()
            assert torch.equal(y, 2.0 * x)
            rows = [_time(lambda: op(x, 2.0), args.reps, sync), _time(scheme.submit, args.reps, sync),
                    _time(lambda: 2.0 * x, args.reps, sync)]
            cells = [f"{b:8.1f} / {m:8.1f}" for b, m in rows]
            print(f"{place:6} {n:9d} {cells[0]:>16} {cells[1]:>18} {cells[2]:>14}")


if __name__ == "__main__":
    main()
