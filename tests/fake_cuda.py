"""A stand-in for cuda-python's driver module, for testing runtime/cuda.py without a GPU.

It keeps device memory as bytearrays at made-up addresses, records every driver call in
`calls`, copies kernel-node parameters when a node is added or updated (as the driver
does), and "runs" a graph by applying, for each kernel node whose function has a planned
fault, what the emitted fault block does: claim the flag of the error word the node's
`p_faults` parameter points at (compare-and-swap 0 -> 1), and if it won, store site,
index, length and y. Kernels compute nothing else.
"""

from __future__ import annotations

import ctypes
import enum
import struct
import threading
from types import SimpleNamespace
from typing import Any, Optional

import pytest

from goldy_import.codegen.ptx import batch_entry
from goldy_import.ir.abi import FAULT_PARAM


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1


class CUdeviceptr(int):
    pass


class CUstream(int):
    pass


class _Attrs:
    def __getattr__(self, name: str) -> str:
        return name


ATTRIBUTES = {
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": 9, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": 0,
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X": 1024, "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y": 1024,
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z": 64, "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK": 1024,
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X": 2**31 - 1, "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y": 65535,
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z": 65535, "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT": 2,
    "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR": 2048,
}


class FakeDriver:
    CUresult = CUresult
    CUdeviceptr = CUdeviceptr
    CUstream = CUstream
    CUdevice_attribute = _Attrs()
    CUfunction_attribute = _Attrs()
    CUpointer_attribute = _Attrs()
    CUstream_flags = SimpleNamespace(CU_STREAM_NON_BLOCKING=1)
    # graph edge data as cuda-python 13 has it (runtime/cuda_pdl.py)
    CUgraphEdgeData = SimpleNamespace
    CUgraphDependencyType = SimpleNamespace(CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC="programmatic")
    CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC = 1

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.mem: dict[int, bytearray] = {}
        self.next_addr = 0x7F00_0000_0000
        self.host_blocks: dict[int, Any] = {}
        self.modules: dict[int, str] = {}  # module handle -> PTX text
        self.functions: dict[int, tuple[str, str]] = {}  # function handle -> (name, PTX)
        self.graphs: dict[int, list] = {}
        self.edges: list[tuple] = []  # (from node, to node, "ordinary" or the edge data's type), in order
        self.execs: dict[int, list] = {}
        self.planned: dict[str, tuple[int, int, int, int]] = {}  # function name -> (site, index, length, y)
        self.launches: list[list[str]] = []  # entry names per graph launch (one name per eager launch)
        self.streams: list[int] = []  # the stream of each eager launch and stream wait
        self.handles = 100
        self.mapped = False  # True: cuMemHostAlloc(DEVICEMAP) works (else it fails, as without mapping)
        # the device's opening (runtime/cuda_init.py): cuInit waits for `init_gate` where set and
        # answers `init_error` where set; `check_current` makes calls that need a context assert
        # that one was made current on the calling thread (`current.ctx`, per thread)
        self.init_gate: Optional[threading.Event] = None
        self.init_error: Optional[int] = None
        self.init_threads: list[str] = []  # the thread of each cuInit and cuDevicePrimaryCtxRetain
        self.current = threading.local()
        self.check_current = False

    # -- helpers
    def _handle(self) -> int:
        self.handles += 1
        return self.handles

    def _find(self, addr: int) -> tuple[bytearray, int]:
        for base, buf in self.mem.items():
            if base <= addr < base + len(buf):
                return buf, addr - base
        raise AssertionError(f"fake driver: {addr:#x} is not device memory")

    def words_at(self, addr: int, n: int) -> tuple[int, ...]:
        buf, off = self._find(addr)
        return struct.unpack_from(f"<{n}I", buf, off)

    def count(self, call: str) -> int:
        return self.calls.count(call)

    def __getattr__(self, name: str):
        raise AttributeError(name)

    # -- context, device
    def cuInit(self, flags):
        self.calls.append("cuInit")
        self.init_threads.append(threading.current_thread().name)
        if self.init_gate is not None:
            assert self.init_gate.wait(10), "fake driver: cuInit's gate was never opened"
        if self.init_error is not None:
            return (self.init_error,)
        return (CUresult.CUDA_SUCCESS,)

    def _need_context(self) -> None:
        if self.check_current:
            assert getattr(self.current, "ctx", None) == 1, \
                f"fake driver: no context current on thread {threading.current_thread().name}"

    def cuDeviceGetCount(self):
        return CUresult.CUDA_SUCCESS, 1

    def cuDeviceGet(self, i):
        return CUresult.CUDA_SUCCESS, i

    def cuDevicePrimaryCtxRetain(self, dev):
        self.calls.append("cuDevicePrimaryCtxRetain")
        self.init_threads.append(threading.current_thread().name)
        return CUresult.CUDA_SUCCESS, 1

    def cuDevicePrimaryCtxRelease(self, dev):
        return (CUresult.CUDA_SUCCESS,)

    def cuCtxSetCurrent(self, ctx):
        self.current.ctx = ctx
        return (CUresult.CUDA_SUCCESS,)

    def cuStreamCreate(self, flags):
        return CUresult.CUDA_SUCCESS, 7

    def cuStreamDestroy(self, s):
        return (CUresult.CUDA_SUCCESS,)

    def cuDeviceGetAttribute(self, attr, dev):
        return CUresult.CUDA_SUCCESS, ATTRIBUTES[attr]

    def cuDeviceGetName(self, n, dev):
        return CUresult.CUDA_SUCCESS, b"Fake H200\0"

    def cuDeviceTotalMem(self, dev):
        return CUresult.CUDA_SUCCESS, 1 << 34

    def cuDriverGetVersion(self):
        return CUresult.CUDA_SUCCESS, 13000

    def cuGetErrorName(self, err):
        return CUresult.CUDA_SUCCESS, b"CUDA_ERROR_FAKE"

    def cuGetErrorString(self, err):
        return CUresult.CUDA_SUCCESS, b"fake"

    def cuStreamSynchronize(self, s):
        self.calls.append("cuStreamSynchronize")
        return (CUresult.CUDA_SUCCESS,)

    # -- memory
    def cuMemAlloc(self, n):
        self.calls.append("cuMemAlloc")
        self._need_context()
        addr = self.next_addr
        self.next_addr += (int(n) + 255) // 256 * 256 + 256
        self.mem[addr] = bytearray(b"\xa5" * int(n))  # not zeroed, like the real thing
        return CUresult.CUDA_SUCCESS, CUdeviceptr(addr)

    def cuMemFree(self, p):
        self.calls.append("cuMemFree")
        self.mem.pop(int(p))
        return (CUresult.CUDA_SUCCESS,)

    def cuMemAllocHost(self, n):
        self.calls.append("cuMemAllocHost")
        block = (ctypes.c_uint8 * int(n))()
        addr = ctypes.addressof(block)
        self.host_blocks[addr] = block
        return CUresult.CUDA_SUCCESS, addr

    def cuMemHostAlloc(self, n, flags):
        self.calls.append("cuMemHostAlloc")
        if not self.mapped:
            return (CUresult.CUDA_ERROR_INVALID_VALUE, 0)
        assert flags & 0x02, "fake driver: only mapped host memory is modelled"
        block = (ctypes.c_uint8 * int(n))(*([0xA5] * int(n)))  # not zeroed
        addr = ctypes.addressof(block)
        self.host_blocks[addr] = block
        self.mem[addr] = block  # device pointer == host pointer (unified addressing)
        return CUresult.CUDA_SUCCESS, addr

    def cuMemHostGetDevicePointer(self, p, flags):
        self.calls.append("cuMemHostGetDevicePointer")
        assert int(p) in self.host_blocks and int(p) in self.mem
        return CUresult.CUDA_SUCCESS, CUdeviceptr(int(p))

    def cuMemFreeHost(self, p):
        self.calls.append("cuMemFreeHost")
        del self.host_blocks[int(p)]
        self.mem.pop(int(p), None)
        return (CUresult.CUDA_SUCCESS,)

    def cuPointerGetAttribute(self, attr, ptr):  # CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: one device
        self._find(int(ptr))
        return CUresult.CUDA_SUCCESS, 0

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        buf, off = self._find(int(dst))
        buf[off:off + n] = ctypes.string_at(src, n)
        return (CUresult.CUDA_SUCCESS,)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        self.calls.append("cuMemcpyDtoHAsync")
        buf, off = self._find(int(src))
        ctypes.memmove(dst, bytes(buf[off:off + n]), n)
        return (CUresult.CUDA_SUCCESS,)

    def cuMemsetD32Async(self, dst, value, n, stream):
        self.calls.append("cuMemsetD32Async")
        buf, off = self._find(int(dst))
        buf[off:off + 4 * n] = struct.pack("<I", value) * n
        return (CUresult.CUDA_SUCCESS,)

    # -- modules
    def cuModuleLoadData(self, image):
        self._need_context()
        h = self._handle()
        self.modules[h] = ctypes.string_at(image).decode()
        return CUresult.CUDA_SUCCESS, h

    def cuModuleUnload(self, m):
        return (CUresult.CUDA_SUCCESS,)

    def cuModuleGetFunction(self, module, name):
        h = self._handle()
        self.functions[h] = (name.decode(), self.modules[module])
        return CUresult.CUDA_SUCCESS, h

    def cuFuncGetAttribute(self, attr, fn):
        return CUresult.CUDA_SUCCESS, 1024

    # -- graphs
    def CUDA_KERNEL_NODE_PARAMS(self):
        return SimpleNamespace()

    def cuGraphCreate(self, flags):
        h = self._handle()
        self.graphs[h] = []
        return CUresult.CUDA_SUCCESS, h

    def _node(self, p) -> dict:
        """What the driver keeps of a kernel node: the entry and a copy of its parameters."""
        name, ptx = self.functions[p.func]
        decl = ptx.split(f".entry {name}(")[1].split(")")[0]
        params = [line.strip().rstrip(",") for line in decl.strip().splitlines()]
        faults = None
        for i, line in enumerate(params):
            if line.endswith(" " + FAULT_PARAM):
                ptr = ctypes.c_uint64.from_address(p.kernelParams + 8 * i).value
                faults = ctypes.c_uint64.from_address(ptr).value
        return {"name": name, "faults": faults, "grid": (p.gridDimX, p.gridDimY, p.gridDimZ)}

    def cuGraphAddKernelNode(self, graph, deps, ndeps, p):
        self.calls.append("cuGraphAddKernelNode")
        h = self._handle()
        self.edges += [(dep, h, "ordinary") for dep in (deps or [])[:ndeps]]
        self.graphs[graph].append((h, self._node(p)))
        return CUresult.CUDA_SUCCESS, h

    def cuGraphAddDependencies(self, graph, froms, tos, data, n):
        self.calls.append("cuGraphAddDependencies")
        self.edges += [(a, b, e.type) for a, b, e in zip(froms[:n], tos[:n], data[:n])]
        return (CUresult.CUDA_SUCCESS,)

    def cuGraphInstantiate(self, graph, flags):
        h = self._handle()
        self.execs[h] = [dict(n) for _, n in self.graphs[graph]]
        self.execs[h + 10_000] = [h for h, _ in self.graphs[graph]]  # node handles, same order
        return CUresult.CUDA_SUCCESS, h

    def cuGraphExecKernelNodeSetParams(self, exe, node, p):
        self.calls.append("cuGraphExecKernelNodeSetParams")
        i = self.execs[exe + 10_000].index(node)
        self.execs[exe][i] = self._node(p)
        return (CUresult.CUDA_SUCCESS,)

    def cuGraphLaunch(self, exe, stream):
        self.calls.append("cuGraphLaunch")
        self.launches.append([n["name"] for n in self.execs[exe]])
        for n in self.execs[exe]:
            self._run(n)
        return (CUresult.CUDA_SUCCESS,)

    def _run(self, n: dict) -> None:
        plan = self.planned.get(n["name"])
        if plan is None:
            return
        assert n["faults"], f"{n['name']} faults but was given no error word"
        buf, off = self._find(n["faults"])
        if struct.unpack_from("<I", buf, off)[0] == 0:  # atom.global.cas.b32 flag, 0, 1
            struct.pack_into("<5I", buf, off, 1, *plan)

    # -- eager launches, events, streams (work runs at once, so every event is complete)
    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.calls.append("cuLaunchKernel")
        n = self._node(SimpleNamespace(func=f, kernelParams=int(params), gridDimX=gx, gridDimY=gy, gridDimZ=gz))
        self.launches.append([n["name"]])
        self.streams.append(int(stream))
        self._run(n)
        return (CUresult.CUDA_SUCCESS,)

    def cuEventCreate(self, flags):
        self.calls.append("cuEventCreate")
        return CUresult.CUDA_SUCCESS, self._handle()

    def cuEventRecord(self, ev, stream):
        self.calls.append("cuEventRecord")
        return (CUresult.CUDA_SUCCESS,)

    def cuEventQuery(self, ev):
        return (CUresult.CUDA_SUCCESS,)

    def cuEventSynchronize(self, ev):
        self.calls.append("cuEventSynchronize")
        return (CUresult.CUDA_SUCCESS,)

    def cuEventDestroy(self, ev):
        return (CUresult.CUDA_SUCCESS,)

    def cuStreamWaitEvent(self, stream, ev, flags):
        self.calls.append("cuStreamWaitEvent")
        self.streams.append(int(stream))
        return (CUresult.CUDA_SUCCESS,)

    def cuGraphExecDestroy(self, exe):
        return (CUresult.CUDA_SUCCESS,)

    def cuGraphDestroy(self, g):
        return (CUresult.CUDA_SUCCESS,)


def plan_fault(drv: FakeDriver, kernel_name: str, site: int, index: int, length: int, y: int = 0,
               batched: Optional[int] = None) -> None:
    """Make the entry of `kernel_name` (its batched entry with `batched` = BATCH) fail once."""
    name = kernel_name if batched is None else batch_entry_name(kernel_name, batched)
    drv.planned[name] = (site, index, length, y)


def batch_entry_name(kernel_name: str, batch: int) -> str:
    return batch_entry(SimpleNamespace(name=kernel_name), batch)  # type: ignore[arg-type]


@pytest.fixture(params=[False, True], ids=["device-words", "mapped-words"])
def fake(request, monkeypatch):
    """(FakeDriver, a cuda Device on it): error words in device memory, then in mapped host memory."""
    import goldy_import as gi
    from goldy_import.runtime import cuda
    drv = FakeDriver()
    drv.mapped = request.param
    monkeypatch.setattr(cuda, "_driver", lambda: drv)
    dev = gi.Device("cuda")
    yield drv, dev
    dev.close()
