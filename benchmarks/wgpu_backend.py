"""wgpu backend benchmark: saxpy throughput and per-dispatch submit overhead.

    python benchmarks/wgpu_backend.py [--mib 32] [--reps 10] [--adapter SUBSTRING] [--append]

Self-contained: runs on whatever wgpu adapter exists (lavapipe here, a real GPU elsewhere)
and prints one table:

- copy: a buffer-to-buffer copy of the same size, the device's memory ceiling;
- saxpy (plain WGSL): a hand-written `y[i] = a * x[i] + y[i]` through raw wgpu-py;
- saxpy (goldy-import): the Rust kernel through gi.Device("wgpu"), one dispatch per
  submit and ten per submit (bounds-checked accessors, pinned float rounding);
- submit overhead: a Scheme of 1 vs 101 one-workgroup dispatches (the difference per
  extra dispatch), and set_node_param + submit.

GB/s counts the bytes a kernel must move (saxpy: read x and y, write y = 12 bytes per
element) over the median wall time of `reps` runs of submit-and-wait, after 2 warm-ups.
Every result is checked against numpy before anything is timed. `--append` adds the table
to benchmarks/RESULTS.md with the date, machine and command.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np

import goldy_import as gi

HERE = os.path.dirname(os.path.abspath(__file__))

RUST = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tiny(y: &mut [u32], k: u32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = y[i] + k; }
}
"""

PLAIN_WGSL = """
struct P { a: f32, n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.y * nw.x * 256u + g.x;  // the grid folded into two dimensions past 65535 groups
    if (i < p.n) { y[i] = p.a * x[i] + y[i]; }
}
"""


def median_time(fn, reps: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def groups_for(n: int, wg: int, limit: int) -> tuple[int, int, int]:
    """A 1-D grid of ceil(n / wg) workgroups folded into (x, y) with x within the limit."""
    g = -(-n // wg)
    gx = min(g, limit)
    return (gx, -(-g // gx), 1)


def plain_saxpy(be, x: np.ndarray, y: np.ndarray, a: float):
    """PLAIN_WGSL on the wgpu backend `be`'s device: (x buffer, y buffer, pipeline, bind
    group, folded grid)."""
    import wgpu

    u, n = wgpu.BufferUsage, x.size
    xb = be.device.create_buffer_with_data(data=x, usage=u.STORAGE)
    yb = be.device.create_buffer_with_data(data=y, usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)
    pb = be.device.create_buffer_with_data(data=np.array([a], np.float32).tobytes() + np.uint32(n).tobytes()
                                           + bytes(8), usage=u.UNIFORM)
    pipe = be.device.create_compute_pipeline(layout="auto", compute={
        "module": be.device.create_shader_module(code=PLAIN_WGSL), "entry_point": "main"})
    bg = be.device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": xb}}, {"binding": 1, "resource": {"buffer": yb}},
        {"binding": 2, "resource": {"buffer": pb}}])
    return xb, yb, pipe, bg, groups_for(n, 256, be.dispatch_cap)


def bench(mib: int, reps: int, adapter: str | None) -> tuple[str, list[tuple[str, str, str]]]:
    dev = gi.Device("wgpu", **({"adapter": adapter} if adapter else {}))
    be = dev.backend
    n = mib * 1024 * 1024 // 4
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    a = np.float32(1.5)
    want = a * x + y0
    rows: list[tuple[str, str, str]] = []

    # copy ceiling: read n*4 bytes and write n*4 bytes
    src, dst = be.alloc(4 * n), be.alloc(4 * n)

    def copy():
        enc = be.device.create_command_encoder()
        enc.copy_buffer_to_buffer(src.buffer, 0, dst.buffer, 0, 4 * n)
        be.queue.submit([enc.finish()])
        be.queue.read_buffer(dst.buffer, 0, 4)  # waits for the copy
    t = median_time(copy, reps)
    rows.append(("copy (buffer to buffer)", f"{8 * n / t / 1e9:.2f} GB/s", f"{t * 1e3:.2f} ms"))
    be.free(src)
    be.free(dst)

    # plain WGSL saxpy through raw wgpu-py: the reference for what the emitter costs
    xb, yb, pipe, bg, groups = plain_saxpy(be, x, y0, a)

    def plain():
        enc = be.device.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(*groups)
        cp.end()
        be.queue.submit([enc.finish()])
        be.queue.read_buffer(yb, 0, 4)
    plain()
    got = np.frombuffer(be.queue.read_buffer(yb), np.float32)
    # plain WGSL leaves `a * x + y` to the driver, which may fuse it (NVIDIA's Vulkan driver
    # does): close, not exact. goldy-import's own result below must be exact.
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6), "plain WGSL saxpy is wrong"
    fused = "" if np.array_equal(got, want) else "driver fused a*x+y (not bit-exact)"
    t = median_time(plain, reps)
    rows.append(("saxpy, plain WGSL (raw wgpu-py)", f"{12 * n / t / 1e9:.2f} GB/s", f"{t * 1e3:.2f} ms {fused}"))
    xb.destroy()
    yb.destroy()

    # the Rust kernel through goldy-import
    mod = gi.load_source(RUST, "bench.rs")
    k = mod.saxpy.prepare(dev)
    xd, yd = dev.buffer(x), dev.buffer(y0)
    s = gi.Scheme(dev)
    k.record(s, "saxpy", xd, yd, float(a)).over_1d(n)
    s.submit()
    assert np.array_equal(yd.numpy(), want), "goldy-import saxpy is wrong"
    t = median_time(s.submit, reps)
    rows.append(("saxpy, goldy-import, 1 dispatch/submit", f"{12 * n / t / 1e9:.2f} GB/s", f"{t * 1e3:.2f} ms"))
    s10 = gi.Scheme(dev)
    for j in range(10):
        k.record(s10, f"saxpy{j}", xd, yd, float(a)).over_1d(n)
    t = median_time(s10.submit, max(3, reps // 3), warmup=1) / 10
    rows.append(("saxpy, goldy-import, 10 dispatches/submit", f"{12 * n / t / 1e9:.2f} GB/s",
                 f"{t * 1e3:.2f} ms per dispatch"))
    xd.free()
    yd.free()

    # submit overhead: many one-workgroup dispatches in one submit
    tk = mod.tiny.prepare(dev)
    yb1 = dev.buffer(np.zeros(64, np.uint32))
    one = gi.Scheme(dev)
    node = tk.record(one, "tiny", yb1, 1).over_1d(64)
    many = gi.Scheme(dev)
    for j in range(101):
        tk.record(many, f"tiny{j}", yb1, 1).over_1d(64)
    before = int(yb1.numpy()[0])
    many.submit()
    assert int(yb1.numpy()[0]) == before + 101, "tiny dispatches lost an update"
    t1 = median_time(one.submit, reps * 5)
    t101 = median_time(many.submit, reps)
    rows.append(("submit + wait, 1 tiny dispatch", f"{t1 * 1e6:.0f} us", ""))
    rows.append(("each extra dispatch in the same submit", f"{(t101 - t1) / 100 * 1e6:.1f} us",
                 f"101 dispatches: {t101 * 1e3:.2f} ms"))

    def update_and_submit():
        one.set_node_param(node, "k", 2)
        one.submit()
    tu = median_time(update_and_submit, reps * 5)
    rows.append(("set_node_param + submit, 1 tiny dispatch", f"{tu * 1e6:.0f} us", ""))
    desc = dev.describe()
    dev.close()
    return desc, rows


def table(rows: list[tuple[str, str, str]]) -> str:
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = [f"| {'measurement'.ljust(w0)} | {'result'.ljust(w1)} | notes |",
             f"|{'-' * (w0 + 2)}|{'-' * (w1 + 2)}|-------|"]
    lines += [f"| {a.ljust(w0)} | {b.ljust(w1)} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=32, help="size of each saxpy array in MiB")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--adapter", default=None, help="substring choosing the wgpu adapter")
    ap.add_argument("--append", action="store_true", help="append the table to benchmarks/RESULTS.md")
    args = ap.parse_args()
    desc, rows = bench(args.mib, args.reps, args.adapter)
    out = table(rows)
    print(f"wgpu backend on {desc}, saxpy over {args.mib} MiB arrays, median of {args.reps} runs\n")
    print(out)
    if args.append:
        cpu = platform.processor() or platform.machine()
        cores = os.cpu_count()
        cmd = "python benchmarks/wgpu_backend.py " + " ".join(sys.argv[1:])
        section = (f"\n## wgpu backend ({datetime.date.today().isoformat()})\n\n"
                   f"- machine: {platform.node() or '?'}, {platform.system()} {platform.release()}, {cpu}, "
                   f"{cores} cores\n- adapter: {desc}\n- command: `{cmd}`\n\n{out}\n")
        with open(os.path.join(HERE, "RESULTS.md"), "a") as f:
            f.write(section)
        print(f"\nappended to {os.path.join(HERE, 'RESULTS.md')}")


if __name__ == "__main__":
    main()
