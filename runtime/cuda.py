"""CUDA backend: PTX from codegen/ptx/emitter.py, loaded and launched through the driver API
(cuda-python: `cuda.bindings.driver`, or the older `cuda.cuda`).

- The device opens on a background thread (runtime/cuda_init.py): cuInit, the context,
  the stream and the device's attributes are set by `_ready`, which every path that uses
  the driver (`_current`, `describe`, `limits`...) calls first: it waits for the opening
  (and raises a failed opening's BackendUnavailable).
- One primary context per device (shared with CuPy and PyTorch, so their pointers work
  here), one non-blocking stream; every driver call's status is checked and a failure
  raises BackendError naming the call, the CUDA error and the kernel.
- Parameters are packed per the kernel's ABI plan (ir/abi.py, `plan(kernel, "ptx")`, the
  one codegen/ptx/emitter.py declares; `pack_params`, pure Python, tested without a GPU) into one host blob plus the array of pointers into it that
  cuLaunchKernel / kernel graph nodes take.
- A submitted list of dispatches (a Scheme) becomes a CUDA graph on its first submit and is
  replayed afterwards; `update_scalar` patches the node in the instantiated graph
  (cuGraphExecKernelNodeSetParams) instead of capturing again, and a replay with no
  `update_scalar` since the graph was last brought up to date does nothing per node. A
  list of one dispatch, and an eager launch (`launch`), is one cuLaunchKernel of the
  dispatch's parameter block (its arguments prebuilt), with an error word of its own: a
  slot of a pooled block (`_SlotPool`), read at the wait, one copy per block where the
  words live on the device. Record packs the parameter values of the same bound argument
  objects and grid once (`_packed`, held weakly, with their layout and entry choice), and
  a dead dispatch's unchanged state (block, error word, launch arguments) goes to the next
  record of the same objects (`_Packed.spare`: what a fresh Scheme per call costs).
  `enqueue` (submit without waiting) records an event after the graph launch; replays of
  one graph may overlap (a fault in their shared words is reported once, at the first
  wait that reads it).
- `wrap_external(obj)` binds memory exposing `__cuda_array_interface__` (CuPy, PyTorch)
  without a copy, after checking device, dtype and contiguity.
- A kernel whose threads each sum a loop (`acc = acc + E(j)`, codegen/ptx/rowwarp.py) is
  compiled with a row-warp entry as well, one warp per thread; a 1-D dispatch of at most
  `rowwarp_max_threads` threads (a device's worth of warps) launches it with
  ceil(threads * 32 / ROWWARP_BLOCK) blocks, a larger one the plain entry.
- Element-wise kernels are compiled with a second, batched entry (codegen/ptx/emitter.py,
  `batchable`: BATCH workgroups per block in lock step); a dispatch of at least
  `batch_min_threads` threads (BATCH full waves of the device) launches it with
  ceil(groups.x / BATCH) blocks, smaller ones the plain entry. Both entries check the
  same sites and report the same faults.
- Kernels with collectives in a workgroup of [x, 1, 1], x >= LANES_FROM, that qualify
  (codegen/ptx/lanes.py) also get a lanes entry: LANE_THREADS threads per block, each
  running x / LANE_THREADS lanes of the workgroup in lock step; a dispatch of at least
  `lanes_min_threads` lanes (a full wave of the plain entry) launches it.
- Trapping checks (issue 9): a kernel whose IR carries check sites takes one more
  parameter, `p_faults`, the address of its dispatch's error word (ir/abi.py `ERROR_WORD`,
  FAULT_WORDS u32). Each graph (one submitted list of dispatches, i.e. a
  Scheme) owns one slot per checked dispatch, in page-locked host memory mapped into the
  device's address space (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP): a faulting kernel
  writes its slot straight to host memory, so a submit puts nothing but the graph launch on
  the stream, and reads the slots after cuStreamSynchronize. The slots are zero at the start
  of every submit: a host-side write clears them before the launch whenever they may hold
  anything (a fault was read, or a submit did not complete; after a clean read they are
  known to be zero, since a kernel writes a slot only after claiming its flag). Where
  mapped memory cannot be had, the slots live in a device buffer with a page-locked host
  copy instead: cleared with cuMemsetD32Async when not known zero, and brought back by one
  cuMemcpyDtoHAsync after the launch. `submit` returns a FaultReport per slot whose flag
  is set. The kernels never `trap`, so the context survives a fault. Kernels
  without sites (checks off, or every check proven) have no parameter, and a submit of
  only such dispatches does no memset and no readback.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from goldy_import import cache as diskcache
from goldy_import.errors import BackendError, BackendUnavailable, BindingError
from goldy_import.ir import abi as A
from goldy_import.ir import nodes as N
from goldy_import.ir.abi import FAULT_WORDS
from goldy_import.ir.serialize import to_json

from .cuda_pdl import edge_adder
from .cuda_init import OPENED, Opening
from .backend import (Backend, BufferArg, CompileOptions, Dispatch, FaultReport, Finished, Limits, ScalarArg,
                      UniformArg)

CU_MEMHOSTALLOC_DEVICEMAP = 0x02  # cuMemHostAlloc flag: map into the device's address space
CU_EVENT_DISABLE_TIMING = 0x02  # cuEventCreate flag: a synchronization-only event (cheaper to record)
MAX_GRAPHS = 64  # instantiated graphs kept per backend (least recently submitted go first)
LANE_THREADS = 128  # threads per block of a collective kernel's lanes entry (codegen/ptx/lanes.py)
LANES_FROM = 512  # workgroups of at least this many lanes get one (smaller ones fill an SM already)
READ_STAGING_MAX = 16 << 20  # reads up to this many bytes go through one reused page-locked buffer
BATCH = 8  # workgroups per block in the batched entry of element-wise kernels (codegen/ptx/emitter.py)


def _driver():
    try:
        from cuda.bindings import driver
        return driver
    except ImportError:
        pass
    try:
        from cuda import cuda as driver  # cuda-python < 12.6
        return driver
    except ImportError:
        return None


class _InitState:
    """Whether one driver's cuInit succeeded in this process: `ok` None until known, `known`
    set then; `claimed` once an opening thread is to call it (later devices wait for that)."""

    def __init__(self, drv: Any):
        self.ref = weakref.ref(drv)
        self.ok: Optional[bool] = None
        self.known = threading.Event()
        self.claimed = False


_KNOWN: dict = {}  # id(driver) -> _InitState
_KNOWN_LOCK = threading.Lock()


def _state(drv: Any) -> _InitState:
    with _KNOWN_LOCK:
        st = _KNOWN.get(id(drv))
        if st is None or st.ref() is not drv:
            st = _KNOWN[id(drv)] = _InitState(drv)
        return st


def _known(drv: Any, ok: bool) -> None:
    st = _state(drv)
    st.ok = ok
    st.known.set()


def _claim(drv: Any) -> Optional[bool]:
    """Whether `drv`'s cuInit succeeded in this process (waiting for one in flight on
    another device's opening thread), or None: unknown, and the caller's opening calls it.
    Once known, a CudaBackend checks its ordinal (or fails) at once, not at first use."""
    st = _state(drv)
    with _KNOWN_LOCK:
        if not st.claimed and not st.known.is_set():
            st.claimed = True
            return None
    st.known.wait()
    return st.ok


def _ptx() -> Any:
    """codegen/ptx, imported at the first device (not with this module: its import overlaps
    the device's opening)."""
    from goldy_import.codegen import ptx
    return ptx


def available() -> bool:
    """True when cuda-python imports, the driver loads and it reports a GPU."""
    drv = _driver()
    if drv is None:
        return False
    try:
        ok = drv.cuInit(0)[0] == drv.CUresult.CUDA_SUCCESS
        _known(drv, ok)
        if not ok:
            return False
        err, n = drv.cuDeviceGetCount()
        return err == drv.CUresult.CUDA_SUCCESS and n > 0
    except Exception:  # no libcuda.so: cuda-python raises RuntimeError
        _known(drv, False)
        return False


# ---------------------------------------------------------------- parameter packing


@dataclass
class CudaMemory:
    """A device allocation (owned) or external memory (not owned; `keep` holds its owner)."""

    ptr: int
    nbytes: int
    owned: bool = True
    keep: Any = None
    raw: Any = None  # the driver's CUdeviceptr for owned memory


def _address(h: Any) -> int:
    return h.ptr if isinstance(h, CudaMemory) else int(h)


SCALAR_FORMAT = {"u32": "<I", "i32": "<i", "f32": "<f", "bool": "<I"}
_SCALAR_STRUCT = {ty: struct.Struct(f) for ty, f in SCALAR_FORMAT.items()}  # update_scalar packs in place


def pack_params(kernel: N.Kernel, args: list, uniform_ptrs: Optional[dict] = None,
                abi: Optional[A.PtxPlan] = None) -> list[bytes]:
    """The value of each of the kernel's parameters' `.param`s, in order (`abi`, the
    kernel's `ir.abi.plan(kernel, "ptx")`, made here when not given)."""
    abi = abi or A.plan(kernel, "ptx")
    uniform_ptrs = uniform_ptrs or {}
    out: list[bytes] = []
    for w in abi.params:
        a, role = args[w.param], w.role
        try:
            if role == "buffer":  # the address of element `offset` (tensors, images: of element 0)
                off = a.offset * a.stride if isinstance(a, BufferArg) else 0
                out.append(struct.pack("<Q", _address(a.handle) + off))
            elif role == "scalar":
                out.append(struct.pack(SCALAR_FORMAT[a.ty], int(bool(a.value)) if a.ty == "bool" else a.value))
            elif role == "layout":
                out.append(struct.pack("<12I", *a.layout))
            elif role == "uniform":
                out.append(struct.pack("<Q", uniform_ptrs[w.param]))
            else:  # a length or an image size, as the bound argument holds it
                out.append(struct.pack("<I", getattr(a, A.ARG_FIELD[role])))
        except (AttributeError, KeyError):
            raise BackendError(f"kernel `{kernel.name}`: cannot pass {type(a).__name__} "
                               f"to parameter `{kernel.params[w.param].name}`") from None
    return out


def entry_values(kernel: N.Kernel, args: list, uniform_ptrs: Optional[dict] = None, checked: Optional[bool] = None,
                 fault_ptr: int = 0, groups_x: int = 0, abi: Optional[A.PtxPlan] = None) -> list[bytes]:
    """Every `.param` value of the kernel's entries, in order (the batched entry's list):
    `pack_params`, then the error word's address where the kernel has one, then the
    batched entry's workgroup count along x (the plain entry declares one parameter fewer
    and never reads it). `checked`, where given, must agree with the plan."""
    abi = abi or A.plan(kernel, "ptx")
    if checked is not None and checked != abi.checked:
        raise BackendError(f"kernel `{kernel.name}`: called with checked={checked}, but its ABI "
                           f"{'has' if abi.checked else 'has no'} error word")
    values = pack_params(kernel, args, uniform_ptrs, abi)
    if abi.checked:
        values.append(struct.pack("<Q", fault_ptr))
    values.append(struct.pack("<I", groups_x))
    return values


class ParamBlock:
    """Parameter values in one host buffer, each at an offset aligned to its size, and the
    array of pointers to them (the `void**` the driver reads). ctypes, not numpy: making
    and patching one is on the record and launch paths, so it is a few C-level copies
    (no ctypes foreign calls such as memmove, which cost microseconds each)."""

    def __init__(self, values: list[bytes], layout: Optional[tuple] = None):
        offsets, blob_type, fmt = layout or _layout(tuple(map(len, values)))
        self.blob = blob_type()  # the pointers, then the values; zero-filled
        base = self.address = ctypes.addressof(self.blob)
        self.offsets = [base + o for o in offsets]  # where each value lives
        fmt.pack_into(self.blob, 0, *self.offsets, *values)
        self._base = base

    @property
    def pointers(self) -> Any:  # the void** array, as ctypes u64s
        return (ctypes.c_uint64 * max(len(self.offsets), 1)).from_address(self.address)

    def set(self, slot: int, value: bytes) -> None:
        off = self.offsets[slot] - self._base
        self.blob[off:off + len(value)] = value

    def pack(self, slot: int, fmt: struct.Struct, value: Any) -> None:
        """`fmt.pack(value)` into the slot, without the bytes in between (a third of `set`'s cost)."""
        fmt.pack_into(self.blob, self.offsets[slot] - self._base, value)


@functools.lru_cache(maxsize=256)
def _layout(sizes: tuple) -> tuple:
    """(offset of each value from the block's start, the block's ctypes type, the Struct that
    writes pointers and values at once) for values of `sizes`: made once per kernel
    signature (a ctypes array type and a ctypes foreign call each cost microseconds)."""
    count = max(len(sizes), 1)
    pos, fmt, offsets = 8 * count, [f"<{len(sizes)}Q"], []
    for n in sizes:
        align = 8 if n == 8 else 4
        pad = -pos % align
        fmt.append(f"{pad}x{n}s" if pad else f"{n}s")
        pos += pad
        offsets.append(pos)
        pos += n
    return offsets, ctypes.c_char * max(pos, 8 * count + 8), struct.Struct("".join(fmt))


def param_slots(kernel: N.Kernel) -> list[int]:
    """Index of the first `.param` of each IR parameter (scalars are one slot)."""
    return list(A.plan(kernel, "ptx").slots)


# ---------------------------------------------------------------- external memory

_CAI_TYPES = {"<f4": "f32", "<u4": "u32", "<i4": "i32", "=f4": "f32", "=u4": "u32", "=i4": "i32"}


def parse_cuda_array_interface(obj: Any, elem: Optional[str] = None):
    """(pointer, element count, IR element type, shape, producer stream) of an object with
    `__cuda_array_interface__`; BindingError when it cannot be a buffer as it is."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if not isinstance(cai, dict):
        raise BindingError(f"{type(obj).__name__} does not expose __cuda_array_interface__")
    typestr = cai.get("typestr", "")
    got = _CAI_TYPES.get(typestr)
    if got is None:
        raise BindingError(f"external array of dtype {typestr!r}: buffers hold float32, uint32 or int32 "
                           f"(convert it, e.g. `.astype(cupy.float32)` / `.to(torch.int32)`)")
    if elem is not None and elem != got and not (elem == "bool" and got in ("u32", "i32")):
        raise BindingError(f"external array holds {got}, the parameter needs {elem}")
    shape = tuple(int(d) for d in cai["shape"])
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    strides = cai.get("strides")
    if strides is not None and n > 1:
        want, acc = [], 4
        for d in reversed(shape):
            want.append(acc)
            acc *= d
        want.reverse()
        if [s for s, d in zip(strides, shape) if d > 1] != [s for s, d in zip(want, shape) if d > 1]:
            raise BindingError(f"external array with strides {tuple(strides)} is not C-contiguous "
                               f"(call `.contiguous()` / `cupy.ascontiguousarray` first)")
    ptr, read_only = cai["data"]
    if read_only:
        raise BindingError("external array is read-only; bind a writable array")
    return int(ptr), n, got, shape, cai.get("stream")


@dataclass
class External:
    """Memory of another library bound without a copy: `handle` goes where a buffer's does."""

    handle: CudaMemory
    elem: str
    length: int
    shape: tuple


# ---------------------------------------------------------------- compiled kernels and state


def _rowwarp_launch(d: Dispatch) -> tuple[int, int]:
    """(blocks, threads per block) of a dispatch through the row-warp entry: a warp per thread."""
    from goldy_import.codegen.ptx.rowwarp import ROWWARP_BLOCK
    threads = int(d.groups[0]) * d.kernel.workgroup_size[0]
    return -(-threads * 32 // ROWWARP_BLOCK), ROWWARP_BLOCK


@dataclass
class CudaCompiled:
    kernel: N.Kernel
    ptx: str
    module: Any
    function: Any
    abi: A.PtxPlan  # the .params and the error word (ir/abi.py), made once
    batched: Any = None  # the `batch_entry` function where the kernel is batchable
    lanes: int = 1  # lanes per thread of its lanes entry (codegen/ptx/lanes.py), 1: none
    lanes_fn: Any = None  # that entry, launched with workgroup_size.x / lanes threads
    rowwarp: Any = None  # the row-warp entry (codegen/ptx/rowwarp.py): one warp per thread
    dependent: bool = False  # its entries wait for a programmatic predecessor (codegen/ptx/pdl.py)

    @property
    def slots(self) -> tuple[int, ...]:  # each IR parameter's first .param
        return self.abi.slots

    @property
    def checked(self) -> bool:  # takes the error-word parameter (the IR has check sites)
        return self.abi.checked

    @property
    def texel_sites(self) -> frozenset:  # sites checking an image coordinate (report x and y)
        return self.abi.texel_sites


@dataclass
class _State:
    block: ParamBlock
    uniforms: list = field(default_factory=list)
    version: int = 0  # bumped by update_scalar
    batched: bool = False  # launched through the batched entry
    lanes: bool = False  # launched through the lanes entry
    rowwarp: bool = False  # launched through the row-warp entry
    fault_slot: Optional[int] = None  # position of the error word's address in `block`
    launch: Any = None  # eager launches: cuLaunchKernel's leading arguments (function, grid, block, shared)
    launch_args: tuple = ()  # ... and all of them, for `launch_stream`
    launch_stream: Any = None
    eager_faults: Optional["_Faults"] = None  # eager launches: the dispatch's own error word
    eager_slot: Any = None  # the _Slot of the pool that word is in (back to the pool with this state)
    slot_eager: bool = False  # `block` holds that word's address (a graph build may point it elsewhere)


@dataclass(eq=False)
class _Faults:
    """A graph's error words: FAULT_WORDS u32 per checked dispatch, in mapped page-locked
    host memory (`device` None: the kernels write `host` through `dev_ptr`), or else on the
    device with a page-locked (pageable if that cannot be had) host copy."""

    device: Optional["CudaMemory"]  # None: mapped host memory, no copy
    host: np.ndarray  # uint32, FAULT_WORDS per slot
    host_ptr: Optional[int]  # cuMemHostAlloc / cuMemAllocHost pointer to free, None for a numpy array
    dev_ptr: int  # the slots' address as the kernels see it
    dispatches: list  # dispatch index of each slot
    abis: list  # per slot: the dispatch's kernel's ABI plan (decodes its error word)
    clean: bool = False  # all zero but for faults of launches in flight (no memset needed before the next)
    seen: set = field(default_factory=set)  # slots reported since the last clear (in-flight launches share them)
    inflight: list = field(default_factory=list)  # _Tickets of submit(wait=False) not waited for yet

    @property
    def nbytes(self) -> int:
        return self.host.nbytes


PACKED = 256  # parameter values kept per backend, by the identity of the bound arguments (record)
SPARE = 4  # states of dead dispatches kept per packed argument set (a fresh Scheme's record takes one)
SLOTS = 256  # eager error words per allocation of the pool (one cuMemHostAlloc, not one per dispatch)


class _Packed:
    """What `record` keeps of one set of bound argument objects and grid: the packed
    values, their layout and entry choice (`facts`), and the states of dead dispatches
    recorded with them whose blocks still hold exactly those values (`spare`: never
    `update_scalar`ed). A new record takes a spare state, block, eager error word and
    launch arguments included, instead of packing them again: what a fresh Scheme recording
    the arguments of the last one costs. A dispatch dies only once its error word was
    read (a launched one is held until the wait), so a spare state has nothing in flight."""

    __slots__ = ("facts", "compiled", "refs", "spare", "owners")

    def __init__(self, facts: tuple, compiled: Any, refs: list):
        self.facts, self.compiled, self.refs = facts, compiled, refs  # refs: the arguments, weakly
        self.spare: list = []
        self.owners: dict = {}  # id of a weakref to a live dispatch -> (that weakref, the dispatch's state)

    def state(self) -> "_State":
        try:
            return self.spare.pop()
        except IndexError:  # (none, or another thread took the last)
            values, layout, batched, lanes, rowwarp, fault_slot = self.facts
            return _State(ParamBlock(values, layout), [], batched=batched, lanes=lanes, rowwarp=rowwarp,
                          fault_slot=fault_slot)

    def own(self, d: Dispatch) -> None:
        ref = weakref.ref(d, self._died)
        self.owners[id(ref)] = (ref, d.state)

    def _died(self, ref: Any) -> None:
        st = self.owners.pop(id(ref), (None, None))[1]
        if st is not None and st.version == 0 and len(self.spare) < SPARE:
            self.spare.append(st)


class _SlotPool:
    """The error words of dispatches launched eagerly (and of one-node submits): slots of
    blocks of SLOTS words, so that a fresh dispatch costs no allocation and no finalizer.
    A slot goes back to the pool when its dispatch's state dies (`_Slot.__del__`); a
    launched dispatch is held until the wait that reads its word, so none is in flight then."""

    def __init__(self, backend: "CudaBackend"):
        self.backend = weakref.ref(backend)
        self.free: list = []  # (block, the slot's words as a _Faults of one dispatch)
        self.on_device = False  # some block is device memory (no mapped host memory to be had)

    def take(self) -> "_Slot":
        if not self.free:
            b = self.backend()
            assert b is not None
            block = b._fault_words(list(range(SLOTS)), [None] * SLOTS)
            b._eager_words_all.add(block)  # freed at close
            self.on_device = self.on_device or block.device is not None
            self.free.extend((block, _slot_words(block, n)) for n in reversed(range(SLOTS)))
        return _Slot(self, *self.free.pop())


def _slot_words(b: _Faults, n: int) -> _Faults:
    """Slot `n` of block `b` as the error words of one dispatch (what `_collect` reads)."""
    w = FAULT_WORDS
    ptr = b.dev_ptr + 4 * w * n
    device = None if b.device is None else CudaMemory(ptr, 4 * w, owned=False)
    return _Faults(device, b.host[w * n:w * (n + 1)], None, ptr, [0], [None], clean=True)


class _Slot:
    __slots__ = ("pool", "block", "faults")

    def __init__(self, pool: _SlotPool, block: _Faults, faults: _Faults):
        self.pool, self.block, self.faults = pool, block, faults

    def __del__(self) -> None:
        self.pool.free.append((self.block, self.faults))


@dataclass
class _Graph:
    graph: Any
    exec: Any
    nodes: list
    params: list
    versions: list
    refs: list
    faults: Optional[_Faults] = None
    names: str = ""  # its kernels' names, for error messages
    dead: list = field(default_factory=lambda: [False])  # [True] once one of its dispatches was collected
    updates: int = -1  # the backend's `_updates` when its nodes last matched their dispatches' versions


@dataclass
class _Ticket:
    """One `enqueue`d replay: its graph and the event recorded after it."""

    graph: _Graph
    event: Any
    names: str
    faults: Optional[list] = None


class CudaBackend(Backend):
    name = "cuda"
    lowering = "ptx"
    subgroup_width = 32

    def __init__(self, device: int = 0, target: Optional[str] = None, ptx_version: Optional[str] = None):
        drv = _driver()
        if drv is None:
            raise BackendUnavailable("the cuda backend needs cuda-python: pip install 'goldy-import[cuda]'")
        self.drv = drv
        self._ok = drv.CUresult.CUDA_SUCCESS
        self._programmatic = edge_adder(drv)  # None: ordinary graph edges only
        self.ordinal = device
        self.ptx_version = ptx_version
        self._graphs: "OrderedDict[tuple, _Graph]" = OrderedDict()
        self._modules: list = []
        self._closed = False
        self._unwaited = False  # work of ours queued on self.stream since its last synchronize
        self._launched: dict = {}  # id -> checked Dispatch launched eagerly since the last synchronize
        self._events: list = []  # idle events for tickets
        self._packed: dict = {}  # record: (compiled, groups, thresholds, argument ids) -> (state's facts, what holds the ids)
        self._updates = 0  # update_scalar calls so far (a replay with none since its last skips the version check)
        self._eager_words_all: "weakref.WeakSet[_Faults]" = weakref.WeakSet()  # freed at close at the latest
        self._eager_pool = _SlotPool(self)  # eager launches' error words, SLOTS to an allocation
        self._read_stage: Optional[tuple] = None  # (host pointer, numpy view of it) for read(), grown as needed
        initialised = _claim(drv)
        if initialised is False:  # cuInit failed in this process before: open here (raising at once)
            for k, v in self._open(device, target).items():
                setattr(self, k, v)
            self._opening = OPENED
            return
        if initialised:  # cuInit is done: the ordinal is checked now, the context opens in the background
            self._check_ordinal(device)
        self._opening = Opening(functools.partial(self._open, device, target), f"CUDA device {device}")
        _ptx()  # the PTX emitter's modules load while the driver starts

    def _open(self, device: int, target: Optional[str]) -> dict:
        """Initialise the driver and open `device`: the attributes `_ready` sets. Runs on
        the opening's thread, so it reads nothing of `self` but the driver."""
        drv = self.drv
        try:
            self._cu("cuInit", 0)
        except RuntimeError as e:  # cuda-python could not load libcuda.so
            _known(drv, False)
            raise BackendUnavailable(f"no CUDA driver: {e}; the cuda backend needs an NVIDIA GPU and driver") from None
        except BackendError as e:
            _known(drv, False)
            raise BackendUnavailable(f"CUDA driver unusable: {e}") from None
        except BaseException:  # (devices waiting for this cuInit's answer get one)
            _known(drv, False)
            raise
        _known(drv, True)
        self._check_ordinal(device)
        dev = self._cu("cuDeviceGet", device)
        ctx = self._cu("cuDevicePrimaryCtxRetain", dev)
        self._cu("cuCtxSetCurrent", ctx)
        stream = self._cu("cuStreamCreate", int(drv.CUstream_flags.CU_STREAM_NON_BLOCKING))
        from goldy_import.codegen.ptx.emitter import STATIC_SHARED_BYTES  # (loaded by the caller meanwhile)
        A = drv.CUdevice_attribute
        attr = lambda a: self._cu("cuDeviceGetAttribute", getattr(A, a), dev)  # noqa: E731
        cc = (attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"), attr("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"))
        name = self._cu("cuDeviceGetName", 256, dev)
        limits = Limits(
            max_workgroup_size=(attr("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X"),
                                attr("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y"),
                                attr("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z")),
            max_invocations_per_workgroup=attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            max_workgroups=(attr("CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X"),
                            attr("CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y"),
                            attr("CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z")),
            max_workgroup_storage_bytes=STATIC_SHARED_BYTES,  # static .shared limit without opt-in
            max_buffer_bytes=int(self._cu("cuDeviceTotalMem", dev)),
        )
        # A dispatch of at least this many threads uses a kernel's batched entry (BATCH
        # workgroups per block): BATCH full waves of the device, so that batching leaves
        # every multiprocessor as busy as before. Tests set it to 0 to batch everything.
        sms = attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
        per_sm = attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR")
        # ... and one of at least this many lanes a collective kernel's lanes entry: a full
        # wave of the plain entry (a smaller grid runs faster with every lane a thread)
        return dict(dev=dev, ctx=ctx, stream=stream, _own_stream=stream, cc=cc,
                    target=target or f"sm_{max(70, cc[0] * 10 + cc[1])}",
                    device_name=name.split(b"\0")[0].decode(errors="replace"), _limits=limits,
                    _lanes_min=sms * per_sm, _batch_min=BATCH * sms * per_sm, _rowwarp_max=sms * per_sm // 32)

    def _ready(self) -> None:
        """Wait for the device's opening (runtime/cuda_init.py): its attributes are set, or
        its failure raised. Every path that uses the driver comes through here first."""
        opening = self._opening
        if opening is not OPENED:
            opening.apply(self)
            self._opening = OPENED
            # current on the thread that waited too, as it was on the creating thread
            # before the opening moved to a thread of its own (callers of _cu rely on it)
            self.drv.cuCtxSetCurrent(self.ctx)

    def __getattr__(self, name: str) -> Any:
        # an attribute the opening sets (stream, ctx, target, ...), read before it is done:
        # wait for it (benchmarks and tests read them from outside)
        d = self.__dict__
        if name.startswith("__") or d.get("_opening", OPENED) is OPENED:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self._ready()
        return object.__getattribute__(self, name)

    # read from outside (Device.limits, tests), so they wait for the opening
    @property
    def limits(self) -> Limits:  # type: ignore[override]
        self._ready()
        return self._limits

    @limits.setter
    def limits(self, value: Limits) -> None:
        self._ready()
        self._limits = value

    @property
    def batch_min_threads(self) -> int:
        self._ready()
        return self._batch_min

    @batch_min_threads.setter
    def batch_min_threads(self, value: int) -> None:
        self._ready()
        self._batch_min = value

    @property
    def rowwarp_max_threads(self) -> int:
        """Dispatches of at most this many threads of a kernel with a row-warp entry run it
        (one warp per thread: a device's worth of warps; 0: never)."""
        self._ready()
        return self._rowwarp_max

    @rowwarp_max_threads.setter
    def rowwarp_max_threads(self, value: int) -> None:
        self._ready()
        self._rowwarp_max = value

    @property
    def lanes_min_threads(self) -> int:
        self._ready()
        return self._lanes_min

    @lanes_min_threads.setter
    def lanes_min_threads(self, value: int) -> None:
        self._ready()
        self._lanes_min = value

    def _check_ordinal(self, device: int) -> None:
        count = self._cu("cuDeviceGetCount")
        if count <= device:
            raise BackendUnavailable(f"no CUDA device {device} (`cuda:{device}`): this machine has {count} "
                                     f"(cuda:0 .. cuda:{count - 1})" if count else "no CUDA device found")

    # ------------------------------------------------------------ driver calls

    def _cu(self, call: str, *args, kernel: Optional[str] = None):
        """Call driver function `call`; check its status; return its result(s)."""
        res = getattr(self.drv, call)(*args)
        err, rest = (res[0], res[1:]) if isinstance(res, tuple) else (res, ())
        if err != self._ok:
            self._fail(call, err, kernel)
        if not rest:
            return None
        return rest[0] if len(rest) == 1 else rest

    def _fail(self, call: str, err: Any, kernel: Optional[str] = None) -> None:
        """Raise BackendError for driver call `call`'s status `err`."""
        try:
            ename = self.drv.cuGetErrorName(err)[1].decode()
            desc = self.drv.cuGetErrorString(err)[1].decode()
        except Exception:
            ename, desc = str(err), ""
        where = f" (kernel `{kernel}`)" if kernel else ""
        raise BackendError(f"CUDA call {call} failed: {ename}{': ' + desc if desc else ''}{where}")

    def _current(self) -> None:
        if self._opening is not OPENED:
            self._ready()
        err = self.drv.cuCtxSetCurrent(self.ctx)[0]  # (not through _cu: this is on every wait)
        if err != self._ok:
            self._fail("cuCtxSetCurrent", err)

    def _wait_stream(self, kernel: Optional[str] = None) -> None:
        err = self.drv.cuStreamSynchronize(self.stream)[0]
        if err != self._ok:
            self._fail("cuStreamSynchronize", err, kernel)
        self._unwaited = False

    def describe(self) -> str:
        self._ready()
        ver = self._cu("cuDriverGetVersion")
        return f"{self.device_name} (sm_{self.cc[0]}{self.cc[1]}, CUDA driver {ver // 1000}.{ver % 1000 // 10}) via cuda-python"

    # ------------------------------------------------------------ memory

    def alloc(self, nbytes: int) -> CudaMemory:
        self._current()
        raw = self._cu("cuMemAlloc", max(int(nbytes), 4))
        return CudaMemory(int(raw), int(nbytes), True, None, raw)

    def free(self, handle: Any) -> None:
        if isinstance(handle, CudaMemory) and handle.owned and handle.raw is not None and not self._closed:
            self._current()
            self._cu("cuMemFree", handle.raw)
            handle.raw = None

    def write(self, handle: Any, offset: int, data: memoryview) -> None:
        n = data.nbytes
        if n == 0:
            return
        self._current()
        host = np.frombuffer(data, dtype=np.uint8)
        self._cu("cuMemcpyHtoDAsync", self.drv.CUdeviceptr(_address(handle) + offset), host.ctypes.data, n, self.stream)
        self._cu("cuStreamSynchronize", self.stream)

    def write_ordered(self, handle: Any, offset: int, data: memoryview) -> None:
        # from pageable memory the driver copies `data` into its staging before returning
        # (no device synchronisation): stream order does the rest
        n = data.nbytes
        if n:
            self._current()
            self._unwaited = True
            host = np.frombuffer(data, dtype=np.uint8)
            self._cu("cuMemcpyHtoDAsync", self.drv.CUdeviceptr(_address(handle) + offset), host.ctypes.data, n,
                     self.stream)

    def read(self, handle: Any, offset: int, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        self._current()
        stage = self._staging(nbytes)
        if stage is None:  # large: straight into fresh pageable memory, handed over as it is
            host = bytearray(nbytes)
            ptr = np.frombuffer(host, np.uint8).ctypes.data
        else:
            ptr, host = stage
        self._cu("cuMemcpyDtoHAsync", ptr, self.drv.CUdeviceptr(_address(handle) + offset), nbytes, self.stream)
        self._cu("cuStreamSynchronize", self.stream)
        return host if stage is None else bytearray(host[:nbytes])  # one host copy (Buffer.numpy keeps it)

    def _staging(self, nbytes: int) -> Optional[tuple]:
        """(pointer, numpy view) of the page-locked read buffer, at least `nbytes` long: a
        copy from the device into pageable memory goes through the driver's own staging
        (a decode step's 128 KB of logits: ~3x slower). None past READ_STAGING_MAX, or
        where the driver gives no page-locked memory."""
        st = self._read_stage
        if st is not None and len(st[1]) >= nbytes:
            return st
        if nbytes > READ_STAGING_MAX:
            return None
        size = max(1 << 16, 1 << (nbytes - 1).bit_length())
        try:
            ptr = int(self._cu("cuMemHostAlloc", size, CU_MEMHOSTALLOC_DEVICEMAP))
        except BackendError:
            return None
        self._free_staging()
        view = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(ptr))
        self._read_stage = (ptr, view)
        return self._read_stage

    def _free_staging(self) -> None:
        if self._read_stage is not None:
            ptr, self._read_stage = self._read_stage[0], None
            self._cu("cuMemFreeHost", ptr)

    def wrap_external(self, obj: Any, elem: Optional[str] = None) -> External:
        """Bind a CuPy array, PyTorch tensor or anything with `__cuda_array_interface__`
        without copying: checks device, dtype (f32/u32/i32) and C-contiguity, and waits for
        the producer's stream so its pending writes are visible."""
        ptr, n, got, shape, stream = parse_cuda_array_interface(obj, elem)
        self._ready()
        if ptr and n:
            self._current()
            P = self.drv.CUpointer_attribute
            ordinal = self._cu("cuPointerGetAttribute", P.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                               self.drv.CUdeviceptr(ptr))
            if int(ordinal) != self.ordinal:
                raise BindingError(f"external array lives on CUDA device {int(ordinal)}, this backend uses "
                                   f"device {self.ordinal}")
        if stream and int(stream) != int(self.stream):  # the producer's pending writes come first
            self._cu("cuStreamSynchronize", self.drv.CUstream(int(stream)))
        return External(CudaMemory(ptr, 4 * n, owned=False, keep=obj), got, n, shape)

    # ------------------------------------------------------------ kernels

    def compile(self, kernel: N.Kernel, options: CompileOptions) -> CudaCompiled:
        self._current()  # (the device is open: its target is known)
        P = _ptx()
        abi = A.plan(kernel, "ptx")
        wg = kernel.workgroup_size[0] * kernel.workgroup_size[1] * kernel.workgroup_size[2]
        lane_threads = LANE_THREADS if wg >= LANES_FROM else 0
        # the PTX is on disk after a first run; the driver's own JIT cache keeps its SASS
        ptx_key = diskcache.key("ptx", (to_json(kernel, indent=None), self.target, self.ptx_version, BATCH,
                                          lane_threads, self.describe()))
        stored = diskcache.get_text("ptx", ptx_key)
        ptx = stored if stored is not None else P.emit_ptx(kernel, target=self.target, ptx_version=self.ptx_version,
                                                         batch=BATCH, abi=abi, lane_threads=lane_threads,
                                                         rowwarp=True)
        self._current()
        image = np.frombuffer(ptx.encode() + b"\0", dtype=np.uint8)
        try:
            module = self._cu("cuModuleLoadData", image.ctypes.data, kernel=kernel.name)
        except BackendError as e:
            raise BackendError(f"{e}; inspect the PTX with `goldy-import {kernel.source_file} --emit ptx "
                               f"--kernel {kernel.name}` and assemble it with ptxas for the message") from None
        self._modules.append(module)
        fn = self._cu("cuModuleGetFunction", module, P.entry_name(kernel).encode(), kernel=kernel.name)
        most = self._cu("cuFuncGetAttribute",
                        self.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn)
        wx, wy, wz = kernel.workgroup_size
        if wx * wy * wz > most:
            raise BackendError(f"kernel `{kernel.name}` needs {wx * wy * wz} threads per workgroup but "
                               f"its registers allow {most} on {self.device_name}")
        batched = None
        if f".entry {P.batch_entry(kernel, BATCH)}(" in ptx:
            batched = self._cu("cuModuleGetFunction", module, P.batch_entry(kernel, BATCH).encode(), kernel=kernel.name)
        lanes = P.lanes_in(ptx, kernel)
        lanes_fn = None
        if lanes > 1:
            lanes_fn = self._cu("cuModuleGetFunction", module, P.lanes_entry(kernel, lanes).encode(), kernel=kernel.name)
        rowwarp = None
        if f".entry {P.rowwarp_entry(kernel)}(" in ptx:
            rowwarp = self._cu("cuModuleGetFunction", module, P.rowwarp_entry(kernel).encode(), kernel=kernel.name)
        if stored is None:  # only PTX the driver accepted
            diskcache.put("ptx", ptx_key, ptx.encode())
        return CudaCompiled(kernel, ptx, module, fn, abi, batched, lanes, lanes_fn, rowwarp, P.pdl.waits(ptx))

    def record(self, d: Dispatch) -> None:
        groups = d.groups
        key = (id(d.compiled), *groups, self._batch_min, self._lanes_min, self._rowwarp_max, *map(id, d.args))
        hit = self._packed.get(key)
        if hit is not None:  # the same bound arguments and grid again (recorded or launched before)
            d.state = hit.state()
            hit.own(d)
            return
        uniforms, ptrs = [], {}
        for i, a in enumerate(d.args):
            if isinstance(a, UniformArg):
                mem = self.alloc(len(a.data))
                self.write(mem, 0, memoryview(a.data))
                uniforms.append(mem)
                ptrs[i] = mem.ptr
        # the error word's address (set per graph at build) and the batched entry's
        # workgroup count along x follow the kernel's parameters (entry_values)
        abi: A.PtxPlan = d.compiled.abi
        values = entry_values(d.kernel, d.args, ptrs, None, 0, int(groups[0]), abi)
        layout = _layout(tuple(map(len, values)))
        wx, wy, wz = d.kernel.workgroup_size
        threads = int(groups[0]) * int(groups[1]) * int(groups[2]) * wx * wy * wz
        # few threads, each summing a long loop: one warp per thread while the warps fit the
        # device at once (a larger grid has the threads to keep it busy as it is)
        rowwarp = (getattr(d.compiled, "rowwarp", None) is not None and int(groups[1]) == int(groups[2]) == 1
                   and threads <= self._rowwarp_max)
        batched = getattr(d.compiled, "batched", None) is not None and threads >= self._batch_min and not rowwarp
        lanes = getattr(d.compiled, "lanes_fn", None) is not None and threads >= self._lanes_min and not rowwarp
        fault_slot = len(values) - 2 if abi.checked else None
        d.state = _State(ParamBlock(values, layout), uniforms, batched=batched, lanes=lanes, rowwarp=rowwarp,
                         fault_slot=fault_slot)
        if uniforms:
            weakref.finalize(d, _free_all, weakref.ref(self), uniforms)
            return
        # kept for the same bound arguments and grid again, by weak references, so borrowed
        # memory is never held; a dead argument drops the entry before its id can be another's
        died = functools.partial(_unpack, self._packed, key)
        try:
            refs = [weakref.ref(a, died) for a in d.args]
        except TypeError:  # an argument that takes no weak reference: not kept
            return
        self._packed[key] = packed = _Packed((values, layout, batched, lanes, rowwarp, fault_slot), d.compiled, refs)
        packed.own(d)
        if len(self._packed) > PACKED:
            try:  # (a weakref callback may be changing it too)
                self._packed.pop(next(iter(self._packed)), None)
            except (StopIteration, RuntimeError):
                pass

    def update_scalar(self, d: Dispatch, index: int) -> None:
        a = d.args[index]
        assert isinstance(a, ScalarArg)
        v = int(bool(a.value)) if a.ty == "bool" else a.value
        d.state.block.pack(d.compiled.slots[index], _SCALAR_STRUCT[a.ty], v)
        d.state.version += 1
        self._updates += 1  # graphs compare versions again at their next replay

    def _node_params(self, d: Dispatch):
        p = self.drv.CUDA_KERNEL_NODE_PARAMS()
        p.func = d.compiled.function
        p.gridDimX, p.gridDimY, p.gridDimZ = (int(g) for g in d.groups)
        if d.state.batched:
            p.func = d.compiled.batched
            p.gridDimX = -(-int(d.groups[0]) // BATCH)
        p.blockDimX, p.blockDimY, p.blockDimZ = d.kernel.workgroup_size
        if d.state.lanes:
            p.func = d.compiled.lanes_fn  # several lanes of the workgroup per thread
            p.blockDimX = d.kernel.workgroup_size[0] // d.compiled.lanes
        if d.state.rowwarp:
            p.func, p.gridDimX, p.blockDimX = d.compiled.rowwarp, *_rowwarp_launch(d)
        p.sharedMemBytes = 0
        p.kernelParams = d.state.block.address
        p.extra = 0
        return p

    def submit(self, dispatches: list[Dispatch]) -> Optional[list[FaultReport]]:
        if not dispatches:
            return None
        if len(dispatches) == 1:  # a graph of one node saves nothing, and costs its instantiation
            d = dispatches[0]
            self._current()
            self.launch(d)
            self._launched.pop(id(d), None)  # its word is read here
            self._wait_stream(d.kernel.name)
            f = d.state.eager_faults
            if f is None or (f.device is None and not f.host[0]):  # no word, or a clean one in host memory
                return None
            return self._eager_words(d) or None
        g, names = self._start(dispatches)
        try:
            self._cu("cuStreamSynchronize", self.stream, kernel=names)
            self._unwaited = False
        except BackendError:
            if g.faults is not None:
                g.faults.clean = False  # the words are unknown now
            raise
        return self._collect(g.faults) if g.faults is not None else None

    def _start(self, dispatches: list[Dispatch]) -> tuple[_Graph, str]:
        """Put one replay of the dispatches' graph on the stream (building it on first use)."""
        self._current()
        key = tuple(map(id, dispatches))
        g = self._graphs.get(key)
        if g is not None and g.dead[0]:
            self._drop(key)  # a dispatch of it died: its id may be a new dispatch's
            g = None
        if g is None:
            names = ", ".join(dict.fromkeys(d.kernel.name for d in dispatches))
            g = self._build(dispatches, names)
            g.names = names
            self._graphs[key] = g
            while len(self._graphs) > MAX_GRAPHS:
                self._drop(next(iter(self._graphs)))
        else:
            names = g.names
            self._graphs.move_to_end(key)
        if g.updates != self._updates:  # a scalar changed since this graph was last brought up to date
            g.updates = self._updates
            for i, d in enumerate(dispatches):
                if d.state.version != g.versions[i]:
                    if g.faults is not None and d.state.fault_slot is not None:
                        # the block may carry another graph's slot address since this one was built
                        n = g.faults.dispatches.index(i)
                        d.state.block.set(d.state.fault_slot, struct.pack("<Q", self._slot_ptr(g.faults, n)))
                        d.state.slot_eager = False
                    self._cu("cuGraphExecKernelNodeSetParams", g.exec, g.nodes[i], g.params[i],
                             kernel=d.kernel.name)
                    g.versions[i] = d.state.version
        faults = g.faults
        if faults is not None:
            clear = not faults.clean
            if clear:
                for t in list(faults.inflight):  # their faults are read before the words are cleared
                    self.wait_ticket(t)
                faults.clean, faults.seen = True, set()
            self._enqueue(g, names, clear=clear)
        else:
            self._enqueue(g, names)
        return g, names

    # ------------------------------------------------------------ asynchronous work

    def enqueue(self, dispatches: list[Dispatch]) -> Any:
        if not dispatches:
            return Finished(None)
        g, names = self._start(dispatches)
        ev = self._events.pop() if self._events else self._cu("cuEventCreate", CU_EVENT_DISABLE_TIMING)
        self._cu("cuEventRecord", ev, self.stream, kernel=names)
        t = _Ticket(g, ev, names)
        if g.faults is not None:
            g.faults.inflight.append(t)
        return t

    def ticket_done(self, t: Any) -> bool:
        if not isinstance(t, _Ticket) or t.event is None:
            return True
        err = self.drv.cuEventQuery(t.event)[0]
        if err == self.drv.CUresult.CUDA_SUCCESS:
            return True
        if err == getattr(self.drv.CUresult, "CUDA_ERROR_NOT_READY", None):
            return False
        self._cu("cuEventQuery", t.event, kernel=t.names)  # raises, naming the driver's error
        return True

    def wait_ticket(self, t: Any) -> Optional[list[FaultReport]]:
        if not isinstance(t, _Ticket):
            return t.faults
        if t.event is not None:
            ev, t.event = t.event, None
            f = t.graph.faults
            try:
                self._cu("cuEventSynchronize", ev, kernel=t.names)
            except BackendError:
                if f is not None:
                    f.clean = False
                raise
            finally:
                self._events.append(ev)
                if f is not None and t in f.inflight:
                    f.inflight.remove(t)
            t.faults = self._collect(f) if f is not None else None
        return t.faults

    def launch(self, d: Dispatch) -> None:
        """One dispatch on the stream with its prebuilt parameter block: no graph, no wait.
        A checked dispatch has an error word of its own, read by `synchronize` (and by
        `submit`, which launches a lone dispatch this way too)."""
        self._unwaited = True
        st: _State = d.state
        if st.launch_stream is not self.stream:  # first launch, or use_stream since: cuLaunchKernel's arguments
            if st.launch is None:
                self._eager_setup(d)
            st.launch_args, st.launch_stream = (*st.launch, self.stream, st.block.address, 0), self.stream
        if st.eager_faults is not None:
            if not st.slot_eager:
                st.block.set(st.fault_slot, struct.pack("<Q", st.eager_faults.dev_ptr))
                st.slot_eager = True
            self._launched[id(d)] = d
        err = self.drv.cuLaunchKernel(*st.launch_args)[0]
        if err != self._ok:
            self._launched.pop(id(d), None)
            self._fail("cuLaunchKernel", err, d.kernel.name)
        return None

    def _eager_setup(self, d: Dispatch) -> None:
        st: _State = d.state
        fn, gx = d.compiled.function, int(d.groups[0])
        block = d.kernel.workgroup_size
        if st.batched:
            fn, gx = d.compiled.batched, -(-gx // BATCH)
        if st.rowwarp:
            fn, gx, bx = d.compiled.rowwarp, *_rowwarp_launch(d)
            block = (bx, 1, 1)
        st.launch = (fn, gx, int(d.groups[1]), int(d.groups[2]), *block, 0)
        if st.fault_slot is not None:
            st.eager_slot = slot = self._eager_pool.take()
            f = st.eager_faults = slot.faults  # the slot's words, for this dispatch's kernel
            f.abis[0], f.clean = d.compiled.abi, True
            if f.seen:
                f.seen = set()
            if f.device is None:  # a slot comes back from a dead dispatch as it was left
                f.host[:] = 0
            else:
                self._cu("cuMemsetD32Async", self.drv.CUdeviceptr(f.device.ptr), 0, f.nbytes // 4, self.stream)

    def synchronize(self) -> list[tuple[Dispatch, FaultReport]]:
        self._current()
        launched, self._launched = self._launched, {}
        blocks = {id(b): b for b in (d.state.eager_slot.block for d in launched.values()) if b.device is not None} \
            if self._eager_pool.on_device else {}
        for b in blocks.values():  # error words on the device: one copy per pool block, not one per dispatch
            self._cu("cuMemcpyDtoHAsync", b.host.ctypes.data, self.drv.CUdeviceptr(b.device.ptr), b.nbytes,
                     self.stream)
        self._wait_stream()
        # the flag of each launched dispatch's word (in host memory now); only a set one is decoded
        return [(d, r) for d in launched.values() if d.state.eager_faults.host[0]
                for r in self._eager_words(d, copied=True)]

    def _eager_words(self, d: Dispatch, copied: bool = False) -> list[FaultReport]:
        """The faults in a directly launched dispatch's own error word, once its work is done
        (the stream synchronized; `copied`: and a device word brought back); the word is
        cleared after a fault."""
        f = d.state.eager_faults
        if f is None:
            return []
        if f.device is not None and not copied:
            self._cu("cuMemcpyDtoHAsync", f.host.ctypes.data, self.drv.CUdeviceptr(f.device.ptr), f.nbytes,
                     self.stream)
            self._cu("cuStreamSynchronize", self.stream)
        out = self._collect(f) or []
        if not f.clean:  # nothing is in flight now: clear at once
            if f.device is None:
                f.host[:] = 0
            else:
                self._cu("cuMemsetD32Async", self.drv.CUdeviceptr(f.device.ptr), 0, f.nbytes // 4, self.stream)
                self._unwaited = True
            f.clean, f.seen = True, set()
        return out

    def use_stream(self, stream: Any) -> None:
        """Queue later work on `stream` (a torch/CuPy stream, a CUstream or its int handle;
        None: this backend's own), after the work already queued on the current one."""
        self._ready()
        new = self._own_stream if stream is None else self.drv.CUstream(stream_handle(stream))
        if int(new) == int(self.stream):
            return
        self._current()
        if self._unwaited:  # (none after a waiting submit: no event, which a capturing stream refuses)
            ev = self._cu("cuEventCreate", CU_EVENT_DISABLE_TIMING)
            self._cu("cuEventRecord", ev, self.stream)
            self._cu("cuStreamWaitEvent", new, ev, 0)
            self._cu("cuEventDestroy", ev)  # released once the wait is done
        self.stream = new

    def _enqueue(self, g: _Graph, names: str = "", clear: bool = False) -> None:
        """The stream work of one submit: clear the error words if asked, launch the graph,
        copy the error words back (without waiting)."""
        self._unwaited = True
        f = g.faults
        if f is not None and f.device is None:  # mapped: the launch alone (submits do not overlap)
            if clear:
                f.host[:] = 0
            self._cu("cuGraphLaunch", g.exec, self.stream, kernel=names)
            return
        if f is not None and clear:
            self._cu("cuMemsetD32Async", self.drv.CUdeviceptr(f.device.ptr), 0, f.nbytes // 4, self.stream,
                     kernel=names)
        self._cu("cuGraphLaunch", g.exec, self.stream, kernel=names)
        if f is not None:
            assert f.device is not None
            self._cu("cuMemcpyDtoHAsync", f.host.ctypes.data, self.drv.CUdeviceptr(f.device.ptr), f.nbytes,
                     self.stream, kernel=names)

    @staticmethod
    def _slot_ptr(f: _Faults, n: int) -> int:
        return f.dev_ptr + 4 * FAULT_WORDS * n

    def _collect(self, f: _Faults) -> Optional[list[FaultReport]]:
        """FaultReports from the error words read back after a submit."""
        if not (f.host[0] if len(f.dispatches) == 1 else f.host.any()):  # one numpy call: all clean
            return None  # nothing claimed a flag, so nothing was written
        words = f.host.reshape(-1, FAULT_WORDS)
        hit = np.flatnonzero(words[:, 0])
        if not len(hit):
            return None  # nothing claimed a flag, so nothing was written: still all zero
        f.clean = False
        new = [int(n) for n in hit if int(n) not in f.seen]
        f.seen.update(new)  # a launch still in flight shares the words: report each flag once
        return [r for n in new if (r := f.abis[n].decode_fault(words[n], f.dispatches[n])) is not None] or None

    def _build(self, dispatches: list[Dispatch], names: str) -> _Graph:
        checked = [i for i, d in enumerate(dispatches) if d.state.fault_slot is not None]
        faults = self._fault_words(checked, [dispatches[i].compiled.abi for i in checked]) if checked else None
        graph = self._cu("cuGraphCreate", 0)
        nodes, params = [], []
        prev = None
        try:
            for i, d in enumerate(dispatches):
                if faults is not None and d.state.fault_slot is not None:
                    n = faults.dispatches.index(i)
                    d.state.block.set(d.state.fault_slot, struct.pack("<Q", self._slot_ptr(faults, n)))
                    d.state.slot_eager = False
                p = self._node_params(d)
                # a dispatch whose entry waits for its predecessor may be launched while that
                # one still runs (runtime/cuda_pdl.py): a programmatic edge, not an ordinary one
                overlap = prev is not None and d.compiled.dependent and self._programmatic is not None
                deps: Optional[list] = [prev] if prev is not None and not overlap else None
                node = self._cu("cuGraphAddKernelNode", graph, deps, 0 if deps is None else 1, p,
                                kernel=d.kernel.name)
                if overlap:
                    err = self._programmatic(graph, prev, node)[0]
                    if err != self._ok:
                        self._fail("cuGraphAddDependencies", err, d.kernel.name)
                prev = node
                nodes.append(prev)
                params.append(p)
            exe = self._cu("cuGraphInstantiate", graph, 0, kernel=names)
        except BackendError:
            self._cu("cuGraphDestroy", graph)
            if faults is not None:
                self._free_faults(faults)
            raise
        dead = [False]
        died = functools.partial(_mark_dead, dead)  # (no reference to the graph: no cycle)
        return _Graph(graph, exe, nodes, params, [d.state.version for d in dispatches],
                      [weakref.ref(d, died) for d in dispatches], faults, dead=dead, updates=self._updates)

    def _fault_words(self, dispatches: list[int], abis: list) -> _Faults:
        nwords = FAULT_WORDS * len(dispatches)
        try:  # mapped page-locked host memory: no memset, no copy
            host_ptr = int(self._cu("cuMemHostAlloc", 4 * nwords, CU_MEMHOSTALLOC_DEVICEMAP))
        except Exception:
            host_ptr = None
        if host_ptr is not None:
            try:
                dev_ptr = int(self._cu("cuMemHostGetDevicePointer", host_ptr, 0))
            except Exception:
                self._cu("cuMemFreeHost", host_ptr)
                host_ptr = None
        if host_ptr is not None:
            host = np.ctypeslib.as_array((ctypes.c_uint32 * nwords).from_address(host_ptr))
            host[:] = 0
            return _Faults(None, host, host_ptr, dev_ptr, list(dispatches), list(abis), clean=True)
        mem = self.alloc(4 * nwords)
        try:
            host_ptr = int(self._cu("cuMemAllocHost", 4 * nwords))
            host = np.ctypeslib.as_array((ctypes.c_uint32 * nwords).from_address(host_ptr))
        except Exception:  # no page-locked memory to be had: a pageable copy works too, more slowly
            host_ptr, host = None, np.zeros(nwords, dtype=np.uint32)
        return _Faults(mem, host, host_ptr, mem.ptr, list(dispatches), list(abis))

    def _free_faults(self, f: _Faults) -> None:
        if f.device is not None:
            self.free(f.device)
        if f.host_ptr is not None:
            host_ptr, f.host_ptr = f.host_ptr, None
            f.host = np.zeros(0, dtype=np.uint32)
            self._cu("cuMemFreeHost", host_ptr)

    def _drop(self, key: tuple) -> None:
        g = self._graphs.pop(key, None)
        if g is not None:
            self._cu("cuGraphExecDestroy", g.exec)
            self._cu("cuGraphDestroy", g.graph)
            if g.faults is not None:
                self._free_faults(g.faults)

    def close(self) -> None:
        if self._closed:
            return
        try:
            if self._opening.failed():  # nothing was opened (the failure was raised at first use)
                self._closed = True
                return
        except (BackendError, BackendUnavailable):  # ... or is raised now, where no caller has seen it yet
            self._closed = True
            raise
        self._current()
        try:  # work still queued (an external stream's user may not have waited) ends first
            self._cu("cuStreamSynchronize", self.stream)
        except BackendError:
            pass
        for ev in self._events:
            self._cu("cuEventDestroy", ev)
        self._events = []
        for key in list(self._graphs):
            self._drop(key)
        for f in list(self._eager_words_all):
            self._free_faults(f)
        self._free_staging()
        for m in self._modules:
            self._cu("cuModuleUnload", m)
        self._modules = []
        self._cu("cuStreamDestroy", self._own_stream)
        self._closed = True
        self._cu("cuDevicePrimaryCtxRelease", self.dev)


def stream_handle(stream: Any) -> int:
    """The CUstream address of a torch or CuPy stream, a cuda-python CUstream or an int."""
    if isinstance(stream, (int, np.integer)) and not isinstance(stream, bool):
        return int(stream)
    proto = getattr(stream, "__cuda_stream__", None)  # the CUDA stream protocol: (version, handle)
    if proto is not None:
        return int((proto() if callable(proto) else proto)[1])
    for attr in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        if isinstance(getattr(stream, attr, None), (int, np.integer)):
            return int(getattr(stream, attr))
    try:
        return int(stream)  # cuda-python's CUstream
    except (TypeError, ValueError):
        raise BindingError(f"use_stream: expected a torch/CuPy stream, a CUstream or an int handle, "
                           f"got {type(stream).__name__}") from None


def _unpack(packed: dict, key: tuple, _ref: Any) -> None:
    packed.pop(key, None)


def _mark_dead(dead: list, _ref: Any) -> None:
    dead[0] = True


def _free_all(backend_ref, mems: list) -> None:
    b = backend_ref()
    if b is None:
        return
    for m in mems:
        try:
            b.free(m)
        except Exception:  # interpreter shutdown or a dead context: nothing left to free
            pass


BACKEND = CudaBackend
