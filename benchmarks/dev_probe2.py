"""Temporary probe: 100-node graph replay floors: noop vs saxpy, plain vs PDL edges; our own graph."""
import time, statistics, numpy as np
from cuda.bindings import driver as d
def ck(r):
    if r[0] != d.CUresult.CUDA_SUCCESS: raise SystemExit(repr(r))
    return r[1] if len(r) == 2 else r[1:]
ck((d.cuInit(0),)) if False else d.cuInit(0)
dev = ck(d.cuDeviceGet(0)); ctx = ck(d.cuDevicePrimaryCtxRetain(dev)); d.cuCtxSetCurrent(ctx)
def ptx(body, wait):
    w = {False: "", True: "griddepcontrol.wait;", 2: "griddepcontrol.launch_dependents; griddepcontrol.wait;"}[wait]
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 px, .param .u64 py, .param .f32 pa, .param .u32 pn){{
.reg .u64 %rd<9>; .reg .u32 %r<9>; .reg .f32 %f<5>; .reg .pred %p<2>;
{w}
{body}
ret; }}""".encode()
SAXPY = """ld.param.u64 %rd1, [px]; ld.param.u64 %rd2, [py]; ld.param.f32 %f1, [pa]; ld.param.u32 %r4, [pn];
mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x; mad.lo.u32 %r1, %r1, %r2, %r3;
setp.ge.u32 %p1, %r1, %r4; @%p1 bra DONE;
mul.wide.u32 %rd3, %r1, 4; add.u64 %rd4, %rd1, %rd3; add.u64 %rd5, %rd2, %rd3;
ld.global.f32 %f2, [%rd4]; ld.global.f32 %f3, [%rd5]; fma.rn.f32 %f4, %f1, %f2, %f3; st.global.f32 [%rd5], %f4;
DONE:"""
stream = ck(d.cuStreamCreate(1))
n = 1024
x = ck(d.cuMemAlloc(n * 4)); y = ck(d.cuMemAlloc(n * 4))
d.cuMemsetD32(x, 0, n); d.cuMemsetD32(y, 0, n)
import ctypes
px, py, pa, pn = ctypes.c_uint64(int(x)), ctypes.c_uint64(int(y)), ctypes.c_float(0.5), ctypes.c_uint32(n)
arr = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in (px, py, pa, pn)])
P = ctypes.addressof(arr)
def best(f, n=200, rounds=9):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n): f()
        d.cuStreamSynchronize(stream)
        out.append((time.perf_counter() - t0) / n * 1e6)
    return min(out), statistics.median(out)
def graph(fn, pdl, nodes=100, threads=256, blocks=4):
    ck(d.cuStreamBeginCapture(stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)) if False else d.cuStreamBeginCapture(stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
    for _ in range(nodes):
        if pdl:
            cfg = d.CUlaunchConfig(); cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = blocks, 1, 1
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = threads, 1, 1; cfg.hStream = stream
            at = d.CUlaunchAttribute(); at.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            at.value.programmaticStreamSerializationAllowed = 1
            cfg.attrs = [at]; cfg.numAttrs = 1
            r = d.cuLaunchKernelEx(cfg, fn, P, 0)
        else:
            r = d.cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, stream, P, 0)
        assert r[0] == d.CUresult.CUDA_SUCCESS, r
    g = ck(d.cuStreamEndCapture(stream))
    ge = ck(d.cuGraphInstantiate(g, 0))
    return ge
for name, body in (("noop", ""), ("saxpy", SAXPY)):
    for wait in (False, True, 2):
        mod = ck(d.cuModuleLoadData(ptx(body, wait))); fn = ck(d.cuModuleGetFunction(mod, b"k"))
        for pdl in (False, True):
            if pdl and not wait and body: continue  # unsafe without the wait
            ge = graph(fn, pdl)
            d.cuGraphLaunch(ge, stream); d.cuStreamSynchronize(stream)
            a = best(lambda: d.cuGraphLaunch(ge, stream))
            print(f"{name:6s} wait={wait!s:5s} pdl={pdl!s:5s} per node us min {a[0]/100:.3f} med {a[1]/100:.3f}")
# check saxpy pdl correctness: 100 chained y = 0.5*x + y with x = 1 -> y = 50
d.cuMemsetD32(x, int(np.float32(1).view(np.uint32)), n); d.cuMemsetD32(y, 0, n)
mod = ck(d.cuModuleLoadData(ptx(SAXPY, True))); fn = ck(d.cuModuleGetFunction(mod, b"k"))
ge = graph(fn, True); d.cuGraphLaunch(ge, stream); d.cuStreamSynchronize(stream)
h = np.empty(n, np.float32); d.cuMemcpyDtoH(h.ctypes.data, y, n * 4); print("pdl saxpy chain y", h[:3], h[-1])

import cuda
print("cuda-python", getattr(cuda, "__version__", "?"), getattr(d, "__file__", ""))
def explicit(fn, prog, nodes=100):
    g = ck(d.cuGraphCreate(0)); prev = None
    for _ in range(nodes):
        p = d.CUDA_KERNEL_NODE_PARAMS(); p.func = fn; p.gridDimX, p.gridDimY, p.gridDimZ = 4, 1, 1
        p.blockDimX, p.blockDimY, p.blockDimZ = 256, 1, 1; p.sharedMemBytes = 0; p.kernelParams = P; p.extra = 0
        node = ck(d.cuGraphAddKernelNode(g, None, 0, p))
        if prev is not None:
            if prog:
                e = d.CUgraphEdgeData(); e.type = d.CUgraphDependencyType.CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC
                e.from_port = d.CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC if prog == 1 else d.CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER
                r = d.cuGraphAddDependencies_v2(g, [prev], [node], [e], 1)
            else:
                r = d.cuGraphAddDependencies(g, [prev], [node], 1)
            assert r[0] == d.CUresult.CUDA_SUCCESS, r
        prev = node
    return ck(d.cuGraphInstantiate(g, 0))
for wait in (True, 2):
    mod = ck(d.cuModuleLoadData(ptx(SAXPY, wait))); fn = ck(d.cuModuleGetFunction(mod, b"k"))
    for prog in (0, 1, 2):
        try:
            ge = explicit(fn, prog)
        except Exception as ex:
            print("explicit", wait, prog, repr(ex)); continue
        d.cuMemsetD32(x, int(np.float32(1).view(np.uint32)), n); d.cuMemsetD32(y, 0, n)
        d.cuGraphLaunch(ge, stream); d.cuStreamSynchronize(stream)
        h = np.empty(n, np.float32); d.cuMemcpyDtoH(h.ctypes.data, y, n * 4)
        a = best(lambda: d.cuGraphLaunch(ge, stream))
        print(f"explicit saxpy wait={wait} prog={prog} per node us min {a[0]/100:.3f} med {a[1]/100:.3f} y ok {bool((h == 50).all())}")
