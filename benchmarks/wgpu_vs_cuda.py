"""wgpu against the CUDA backend on the same GPU (issue 18: within 80% of CUDA).

    python3 benchmarks/wgpu_vs_cuda.py [--mib 256] [--reps 10] [--per-submit 20]

saxpy and the workgroup_sum reduction (`block_sum` of benchmarks/cuda_backend.py) over
`--mib` MiB of f32, on the wgpu device (NVIDIA's Vulkan driver on a CUDA machine) and on the
CUDA device, timed the same way on both: the median wall time of `scheme.submit()` of a
Scheme holding `--per-submit` back-to-back dispatches, divided by that count (so the one
submit's own cost is spread over many dispatches), after 2 warm-ups. Before timing, each
backend's result is compared bit for bit with the CPU backend's on a 1 MiB slice of the
same inputs, and the two GPU backends' results at full size with each other.

GB/s counts what each kernel must move: saxpy reads x, y and writes y (12 B/element), the
reduction reads x (4 B/element).
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import goldy_import as gi  # noqa: E402
from cuda_backend import PER_THREAD, RUST  # noqa: E402  (the same kernels as the CUDA table)

CHECK_N = 256 * 1024  # elements compared against the CPU oracle


def run_once(dev, mod, x0, y0, a):
    """saxpy's y and block_sum's partials for these inputs on dev."""
    n = x0.size
    x, y = dev.buffer(x0), dev.buffer(y0)
    partial = dev.empty(n // (256 * PER_THREAD), np.float32)
    partial.write(np.full(len(partial), np.nan, np.float32))  # poisoned: unwritten shows
    s = gi.Scheme(dev)
    mod.saxpy.prepare(dev).record(s, "saxpy", x, y, a).over_1d(n)
    mod.block_sum.prepare(dev).record(s, "sum", x, partial, PER_THREAD).groups((len(partial), 1, 1))
    s.submit()
    out = y.numpy().copy(), partial.numpy().copy()
    for buf in (x, y, partial):
        buf.free()
    return out


def median_submit(scheme, reps: int) -> float:
    for _ in range(2):
        scheme.submit()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        scheme.submit()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(dev, mod, x0, y0, a, reps: int, per: int) -> dict[str, float]:
    n = x0.size
    x, y = dev.buffer(x0), dev.buffer(y0)
    partial = dev.empty(n // (256 * PER_THREAD), np.float32)
    sax, red = gi.Scheme(dev), gi.Scheme(dev)
    ps, pr = mod.saxpy.prepare(dev), mod.block_sum.prepare(dev)
    for j in range(per):
        ps.record(sax, f"saxpy{j}", x, y, a).over_1d(n)
        pr.record(red, f"sum{j}", x, partial, PER_THREAD).groups((len(partial), 1, 1))
    out = {"saxpy": 12 * n / (median_submit(sax, reps) / per) / 1e9,
           "reduction": 4 * n / (median_submit(red, reps) / per) / 1e9}
    for buf in (x, y, partial):
        buf.free()
    return out


def raw_wgsl_saxpy(dev, x0, y0, a, reps: int, per: int) -> float:
    """GB/s of a hand-written WGSL saxpy through raw wgpu-py (no pinning, no checks; the
    driver may fuse a*x+y), `per` dispatches per submit as above: what the driver does with
    the least code."""
    from wgpu_backend import plain_saxpy
    be, n = dev.backend, x0.size
    xb, yb, pipe, bg, groups = plain_saxpy(be, x0, y0, a)

    def submit(count=per):
        enc = be.device.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, bg)
        for _ in range(count):
            cp.dispatch_workgroups(*groups)
        cp.end()
        be.queue.submit([enc.finish()])
        be.queue.read_buffer(yb, 0, 4)  # waits
    submit(1)
    got = np.frombuffer(be.queue.read_buffer(yb), np.float32)
    assert np.allclose(got, np.float32(a) * x0 + y0, rtol=1e-6, atol=1e-6), "raw WGSL saxpy is wrong"
    for _ in range(2):
        submit()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        submit()
        times.append(time.perf_counter() - t0)
    xb.destroy()
    yb.destroy()
    return 12 * n / (statistics.median(times) / per) / 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--per-submit", type=int, default=20)
    ap.add_argument("--backends", default="cuda,wgpu", help="the reference first, then the compared one")
    args = ap.parse_args()
    n = args.mib * (1 << 20) // 4
    n -= n % (256 * PER_THREAD)
    rng = np.random.default_rng()
    x0 = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    a = 1.5
    mod = gi.load_source(RUST, "bench.rs")

    want = run_once(gi.Device("cpu"), mod, x0[:CHECK_N], y0[:CHECK_N], a)
    ref, other = args.backends.split(",")
    devs = {name: gi.Device(name) for name in (ref, other)}
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  "
          + "; ".join(f"{k}: {d.describe()}" for k, d in devs.items()))
    print(f"# {n} f32 ({n * 4 / 2**20:.0f} MiB); median of {args.reps} submits of "
          f"{args.per_submit} dispatches, per dispatch", flush=True)
    full = {}
    for name, dev in devs.items():
        got = run_once(dev, mod, x0[:CHECK_N], y0[:CHECK_N], a)
        for what, g, w in zip(("saxpy", "reduction"), got, want):
            assert np.array_equal(g.view(np.uint32), w.view(np.uint32)), f"{name} {what} differs from the CPU oracle"
        full[name] = run_once(dev, mod, x0, y0, a)
    for what, g, w in zip(("saxpy", "reduction"), full[other], full[ref]):
        assert np.array_equal(g.view(np.uint32), w.view(np.uint32)), f"{other} and {ref} {what} differ at full size"
    res = {name: measure(dev, mod, x0, y0, a, args.reps, args.per_submit) for name, dev in devs.items()}
    print(f"| kernel | {ref} GB/s | {other} GB/s | {other} / {ref} |")
    print("|---|---:|---:|---:|")
    for what in ("saxpy", "reduction"):
        c, w = res[ref][what], res[other][what]
        print(f"| {what} | {c:.0f} | {w:.0f} | {w / c:.0%} |")
    if "wgpu" in devs:
        raw = raw_wgsl_saxpy(devs["wgpu"], x0, y0, a, args.reps, args.per_submit)
        print(f"| saxpy, hand-written WGSL through raw wgpu-py (not pinned, unchecked) | | {raw:.0f} | "
              f"{raw / res[ref]['saxpy']:.0%} |")
    for dev in devs.values():
        dev.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
