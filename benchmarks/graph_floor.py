"""The floor of a replayed 100-node CUDA graph on this GPU, without goldy-import (issue 17).

    python3 benchmarks/graph_floor.py

Hand-written PTX through cuda-python alone: 100 dependent launches captured into one
graph, replayed back to back; microseconds per node (best and median of 9 rounds of 200
replays). Two kernels, each with ordinary edges and with programmatic ones (PDL: the
prologue `griddepcontrol.launch_dependents; griddepcontrol.wait;`, launched with
programmatic stream serialization, as codegen/ptx/pdl.py and runtime/cuda_pdl.py do):

- `empty`: a kernel that returns at once (1 block of 32 threads): the graph's own cost;
- `saxpy`: y = a * x + y over 1024 elements (4 blocks of 256), each node reading what the
  one before wrote: the least a chain of real dispatches costs. Its result is checked.

goldy-import's own figure is benchmarks/host_overhead.py's "replayed Scheme" row (the same
1024-element saxpy, with its bounds checks).
"""

from __future__ import annotations

import ctypes
import statistics
import time

import numpy as np
from cuda.bindings import driver as d

SAXPY = """ld.param.u64 %rd1, [px]; ld.param.u64 %rd2, [py]; ld.param.f32 %f1, [pa]; ld.param.u32 %r4, [pn];
mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x; mad.lo.u32 %r1, %r1, %r2, %r3;
setp.ge.u32 %p1, %r1, %r4; @%p1 bra DONE;
mul.wide.u32 %rd3, %r1, 4; add.u64 %rd4, %rd1, %rd3; add.u64 %rd5, %rd2, %rd3;
ld.global.f32 %f2, [%rd4]; ld.global.f32 %f3, [%rd5]; fma.rn.f32 %f4, %f1, %f2, %f3; st.global.f32 [%rd5], %f4;
DONE:"""


def ok(r):
    if r[0] != d.CUresult.CUDA_SUCCESS:
        raise SystemExit(f"driver error {r[0]!r}")
    return r[1] if len(r) == 2 else None


def module(body: str, pdl: bool):
    pro = "griddepcontrol.launch_dependents; griddepcontrol.wait;" if pdl else ""
    ptx = f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 px, .param .u64 py, .param .f32 pa, .param .u32 pn){{
.reg .u64 %rd<9>; .reg .u32 %r<9>; .reg .f32 %f<5>; .reg .pred %p<2>;
{pro}
{body}
ret; }}"""
    mod = ok(d.cuModuleLoadData(ptx.encode()))
    return ok(d.cuModuleGetFunction(mod, b"k"))


def main() -> None:
    ok((d.cuInit(0),))
    dev = ok(d.cuDeviceGet(0))
    ctx = ok(d.cuDevicePrimaryCtxRetain(dev))
    ok((d.cuCtxSetCurrent(ctx)[0],))
    stream = ok(d.cuStreamCreate(1))
    n = 1024
    x, y = ok(d.cuMemAlloc(4 * n)), ok(d.cuMemAlloc(4 * n))
    vals = (ctypes.c_uint64(int(x)), ctypes.c_uint64(int(y)), ctypes.c_float(0.5), ctypes.c_uint32(n))
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in vals])

    def graph(fn, pdl: bool, blocks: int, threads: int):
        ok((d.cuStreamBeginCapture(stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)[0],))
        for _ in range(100):
            if pdl:
                cfg = d.CUlaunchConfig()
                cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = blocks, 1, 1
                cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = threads, 1, 1
                cfg.hStream = stream
                at = d.CUlaunchAttribute()
                at.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
                at.value.programmaticStreamSerializationAllowed = 1
                cfg.attrs, cfg.numAttrs = [at], 1
                ok((d.cuLaunchKernelEx(cfg, fn, ctypes.addressof(params), 0)[0],))
            else:
                ok((d.cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, stream, ctypes.addressof(params), 0)[0],))
        return ok(d.cuGraphInstantiate(ok(d.cuStreamEndCapture(stream)), 0))

    print("| kernel | edges | us per node, best | median |")
    print("|---|---|---:|---:|")
    for name, body, blocks, threads in (("empty", "", 1, 32), ("saxpy", SAXPY, 4, 256)):
        for pdl in (False, True):
            ge = graph(module(body, pdl), pdl, blocks, threads)
            if body:
                d.cuMemsetD32(x, int(np.float32(1).view(np.uint32)), n)
                d.cuMemsetD32(y, 0, n)
            d.cuGraphLaunch(ge, stream)
            d.cuStreamSynchronize(stream)
            if body:  # 100 chained y = 0.5 * 1 + y
                h = np.empty(n, np.float32)
                d.cuMemcpyDtoH(h.ctypes.data, y, 4 * n)
                assert (h == 50).all(), "the chained saxpy lost an update"
            rounds = []
            for _ in range(9):
                t0 = time.perf_counter()
                for _ in range(200):
                    d.cuGraphLaunch(ge, stream)
                d.cuStreamSynchronize(stream)
                rounds.append((time.perf_counter() - t0) / 200 / 100 * 1e6)
            print(f"| {name} | {'programmatic' if pdl else 'ordinary'} | {min(rounds):.3f} | {statistics.median(rounds):.3f} |")


if __name__ == "__main__":
    main()
