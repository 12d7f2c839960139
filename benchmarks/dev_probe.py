"""Temporary probe: ctypes libcuda floors vs cuda-python, init costs, graph replay."""
import ctypes, time, sys, statistics
t0 = time.perf_counter()
cu = ctypes.CDLL("libcuda.so.1")
t_dl = time.perf_counter() - t0
def ck(r, what):
    if r != 0: raise SystemExit(f"{what}: {r}")
t0 = time.perf_counter(); ck(cu.cuInit(0), "init"); t_init = time.perf_counter() - t0
dev = ctypes.c_int()
ck(cu.cuDeviceGet(ctypes.byref(dev), 0), "dev")
ctx = ctypes.c_void_p()
flags = int(sys.argv[1]) if len(sys.argv) > 1 else 0
t0 = time.perf_counter()
if flags < 0:
    ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "prim"); ck(cu.cuCtxSetCurrent(ctx), "set")
else:
    ck(cu.cuCtxCreate_v2(ctypes.byref(ctx), flags, dev), "ctx")
t_ctx = time.perf_counter() - t0
print(f"dlopen {t_dl*1e3:.1f} ms  cuInit {t_init*1e3:.1f} ms  ctx(flags={flags}) {t_ctx*1e3:.1f} ms")
ptx = b""".version 7.8
.target sm_90
.address_size 64
.visible .entry noop(.param .u64 p, .param .u32 n){ ret; }
"""
mod = ctypes.c_void_p(); fn = ctypes.c_void_p()
t0 = time.perf_counter()
ck(cu.cuModuleLoadData(ctypes.byref(mod), ptx), "load")
ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"noop"), "fn")
print(f"module load {1e3*(time.perf_counter()-t0):.1f} ms")
stream = ctypes.c_void_p()
ck(cu.cuStreamCreate(ctypes.byref(stream), 1), "stream")
p0 = ctypes.c_uint64(0); p1 = ctypes.c_uint32(5)
params = (ctypes.c_void_p * 2)(ctypes.addressof(p0), ctypes.addressof(p1))
L = cu.cuLaunchKernel
L.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 6 + [ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
S = cu.cuStreamSynchronize; S.argtypes = [ctypes.c_void_p]
Q = cu.cuStreamQuery; Q.argtypes = [ctypes.c_void_p]
def best(f, n=2000, rounds=7):
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n): f()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return min(out), statistics.median(out)
f_ = fn.value; s_ = stream.value; pa = ctypes.cast(params, ctypes.c_void_p).value
def q(): L(f_, 1, 1, 1, 32, 1, 1, 0, s_, pa, None)
def qw(): L(f_, 1, 1, 1, 32, 1, 1, 0, s_, pa, None); S(s_)
def qspin():
    L(f_, 1, 1, 1, 32, 1, 1, 0, s_, pa, None)
    while Q(s_) != 0: pass
q(); S(s_)
r = best(q, 5000); S(s_); print("ctypes queued launch us", r)
print("ctypes launch+sync us", best(qw))
print("ctypes launch+query-spin us", best(qspin))
# raw C call cost of a trivial driver fn
dv = ctypes.c_int()
G = cu.cuCtxGetDevice
print("ctypes trivial call us", best(lambda: G(ctypes.byref(dv)), 20000))
# graph of 100 nodes via stream capture
graph = ctypes.c_void_p(); gexec = ctypes.c_void_p()
ck(cu.cuStreamBeginCapture_v2(stream, 0), "cap")
for _ in range(100): q()
ck(cu.cuStreamEndCapture(stream, ctypes.byref(graph)), "end")
ck(cu.cuGraphInstantiateWithFlags(ctypes.byref(gexec), graph, ctypes.c_ulonglong(0)), "inst")
GL = cu.cuGraphLaunch; GL.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
ge = gexec.value
def gl(): GL(ge, s_)
def glw(): GL(ge, s_); S(s_)
gl(); S(s_)
a = best(glw, 200); print("ctypes graph100 launch+sync per node us", a[0] / 100, a[1] / 100)
a = best(gl, 200); S(s_); print("ctypes graph100 queued per node us", a[0] / 100, a[1] / 100)
# cuda-python for comparison
try:
    from cuda.bindings import driver as d
    t0 = time.perf_counter()
    def cq(): d.cuLaunchKernel(f_, 1, 1, 1, 32, 1, 1, 0, s_, pa, 0)
    cq(); S(s_)
    print("cuda-python queued (raw ptr params) us", best(cq, 5000)); S(s_)
    print("cuda-python trivial call us", best(lambda: d.cuCtxGetDevice(), 20000))
except Exception as e:
    print("cuda-python:", repr(e))
