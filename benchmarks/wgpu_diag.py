"""What a Vulkan driver does with streaming WGSL, without goldy-import's emitter (issue 18).

    python3 benchmarks/wgpu_diag.py [--mib 256] [--reps 10] [--per-submit 20]

Raw wgpu-py, one device; GB/s (12 B/element for saxpy, 8 for the copy) over the median
wall time of a submit of `--per-submit` back-to-back operations, per operation:

- copy: `copy_buffer_to_buffer` of the same size;
- saxpy, same buffers: every dispatch writes the same y (wgpu orders them with barriers);
- saxpy, distinct buffers: each dispatch its own y (no dependence between dispatches);
- saxpy, 4 per thread: each thread four elements 256 apart (a quarter of the workgroups);
- saxpy, grid-stride: 8 workgroups per multiprocessor-ish (2048), each thread looping;
- goldy-import's saxpy (benchmarks/cuda_backend.py's kernel) through its plain entry and
  its batched entry (codegen/wgsl/batch.py), and its workgroup_sum reduction (`block_sum`),
  through gi.Scheme on a goldy-import wgpu device, the same way (one y, `--per-submit`
  dispatches per submit); the two entries' results compared bit for bit first.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import wgpu

HEAD = """
struct P { a: f32, n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
"""
ONE = HEAD + """
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.y * nw.x * 256u + g.x;
    if (i < p.n) { y[i] = p.a * x[i] + y[i]; }
}
"""
FOUR = HEAD + """
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
        @builtin(num_workgroups) nw: vec3<u32>) {
    let base = (w.y * nw.x + w.x) * 1024u + l.x;
    let i0 = base; let i1 = base + 256u; let i2 = base + 512u; let i3 = base + 768u;
    if (i3 < p.n) {
        let x0 = x[i0]; let x1 = x[i1]; let x2 = x[i2]; let x3 = x[i3];
        let y0 = y[i0]; let y1 = y[i1]; let y2 = y[i2]; let y3 = y[i3];
        y[i0] = p.a * x0 + y0; y[i1] = p.a * x1 + y1; y[i2] = p.a * x2 + y2; y[i3] = p.a * x3 + y3;
    } else {
        for (var k = 0u; k < 4u; k++) { let i = base + 256u * k; if (i < p.n) { y[i] = p.a * x[i] + y[i]; } }
    }
}
"""
STRIDE = HEAD + """
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let step = nw.x * 256u;
    for (var i = g.x; i < p.n; i += step) { y[i] = p.a * x[i] + y[i]; }
}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--per-submit", type=int, default=20)
    args = ap.parse_args()
    n = args.mib * (1 << 20) // 4
    per, reps = args.per_submit, args.reps
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    dev = adapter.request_device_sync(required_limits={
        "max_storage_buffer_binding_size": adapter.limits["max-storage-buffer-binding-size"],
        "max_buffer_size": adapter.limits["max-buffer-size"]})
    q = dev.queue
    print(f"# {adapter.info['device']} ({adapter.info.get('description', '')}), {n} f32, "
          f"median of {reps} submits of {per}")
    rng = np.random.default_rng()
    x0 = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    u = wgpu.BufferUsage
    xb = dev.create_buffer_with_data(data=x0, usage=u.STORAGE | u.COPY_SRC)
    ys = [dev.create_buffer_with_data(data=y0, usage=u.STORAGE | u.COPY_SRC | u.COPY_DST) for _ in range(per)]
    pb = dev.create_buffer_with_data(data=np.array([1.5], np.float32).tobytes() + np.uint32(n).tobytes() + bytes(8),
                                     usage=u.UNIFORM)

    def timed(record) -> float:
        def submit():
            enc = dev.create_command_encoder()
            record(enc)
            q.submit([enc.finish()])
            q.read_buffer(ys[0], 0, 4)
        for _ in range(2):
            submit()
        t = []
        for _ in range(reps):
            t0 = time.perf_counter()
            submit()
            t.append(time.perf_counter() - t0)
        return statistics.median(t) / per

    cap = 65535

    def grid(groups):
        gx = min(groups, cap)
        return (gx, -(-groups // gx), 1)

    def pipeline(code):
        pipe = dev.create_compute_pipeline(layout="auto", compute={
            "module": dev.create_shader_module(code=code), "entry_point": "main"})
        bgs = [dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": xb}}, {"binding": 1, "resource": {"buffer": y}},
            {"binding": 2, "resource": {"buffer": pb}}]) for y in ys]
        return pipe, bgs

    def dispatches(code, groups, distinct=False):
        pipe, bgs = pipeline(code)

        def record(enc):
            cp = enc.begin_compute_pass()
            cp.set_pipeline(pipe)
            for j in range(per):
                cp.set_bind_group(0, bgs[j if distinct else 0])
                cp.dispatch_workgroups(*groups)
            cp.end()
        return record

    def check(code, groups):
        dev.queue.write_buffer(ys[0], 0, y0)
        pipe, bgs = pipeline(code)
        enc = dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, bgs[0])
        cp.dispatch_workgroups(*groups)
        cp.end()
        q.submit([enc.finish()])
        got = np.frombuffer(q.read_buffer(ys[0]), np.float32)
        assert np.allclose(got, np.float32(1.5) * x0 + y0, rtol=1e-6, atol=1e-6), "wrong"

    rows = []
    t = timed(lambda enc: [enc.copy_buffer_to_buffer(xb, 0, ys[1], 0, 4 * n) for _ in range(per)])
    rows.append(("copy_buffer_to_buffer", 8 * n / t / 1e9))
    one = grid(-(-n // 256))
    four = grid(-(-n // 1024))
    for name, code, g, distinct in (("saxpy, same buffers", ONE, one, False),
                                    ("saxpy, distinct buffers", ONE, one, True),
                                    ("saxpy, 4 per thread", FOUR, four, False),
                                    ("saxpy, 4 per thread, distinct", FOUR, four, True),
                                    ("saxpy, grid-stride 2048 groups", STRIDE, (2048, 1, 1), False),
                                    ("saxpy, grid-stride 8192 groups", STRIDE, (8192, 1, 1), False)):
        check(code, g)
        rows.append((f"{name} {g}", 12 * n / timed(dispatches(code, g, distinct)) / 1e9))
    rows += goldy_rows(x0, y0, reps, per)
    print("| what | GB/s |\n|---|---:|")
    for name, v in rows:
        print(f"| {name} | {v:.4g} |")


def goldy_rows(x0, y0, reps: int, per: int) -> list:
    """goldy-import's saxpy (plain and batched entry) and block_sum on its wgpu backend."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import goldy_import as gi
    from cuda_backend import PER_THREAD, RUST
    from wgpu_vs_cuda import median_submit
    mod = gi.load_source(RUST, "bench.rs")
    dev = gi.Device("wgpu")
    n = x0.size - x0.size % (256 * PER_THREAD)
    x, partial = dev.buffer(x0[:n]), dev.empty(n // (256 * PER_THREAD), np.float32)
    ps, pr = mod.saxpy.prepare(dev), mod.block_sum.prepare(dev)
    rows, results = [], []
    plain_min = dev.backend.batch_min_threads
    for what, threshold in (("plain entry", 1 << 62), ("batched entry", 0)):
        dev.backend.batch_min_threads = threshold
        y = dev.buffer(y0[:n])
        one, s = gi.Scheme(dev), gi.Scheme(dev)
        ps.record(one, "saxpy", x, y, 1.5).over_1d(n)
        one.submit()
        results.append(y.numpy().copy())
        for j in range(per):
            ps.record(s, f"saxpy{j}", x, y, 1.5).over_1d(n)
        rows.append((f"goldy-import saxpy, {what}", 12 * n / (median_submit(s, reps) / per) / 1e9))
        y.free()
    assert results[0].tobytes() == results[1].tobytes(), "the batched entry differs from the plain one"
    dev.backend.batch_min_threads = plain_min
    s = gi.Scheme(dev)
    for j in range(per):
        pr.record(s, f"sum{j}", x, partial, PER_THREAD).groups((len(partial), 1, 1))
    rows.append(("goldy-import reduction (block_sum)", 4 * n / (median_submit(s, reps) / per) / 1e9))
    dev.close()
    return rows


if __name__ == "__main__":
    main()
