"""The contract between the device-independent runtime core and each backend.

The core (runtime/core.py) owns devices, buffers, schemes, validation and caching; a
backend only moves bytes, compiles verified IR, and runs dispatches. Every backend
implements `Backend`; the CPU one is the oracle the others are tested against.

Memory model seen by backends: a buffer is an opaque `handle` of `nbytes` bytes. Elements
are stored in their GPU layout: u32/i32/f32 as 4 little-endian bytes, `bool` as a u32 0/1,
`#[goldy::gpu]` structs with the stride and field offsets of `ir.layout.struct_layout`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Optional, Union

from goldy_import.ir.abi import FaultReport  # noqa: F401  (the error word decoded: ir/abi.py)
from goldy_import.ir.nodes import TENSOR_CATEGORIES, Kernel


@dataclass(frozen=True)
class Limits:
    """Device limits checked by the core at prepare and record time."""

    max_workgroup_size: tuple[int, int, int] = (1024, 1024, 64)
    max_invocations_per_workgroup: int = 1024
    max_workgroups: tuple[int, int, int] = (65535, 65535, 65535)
    max_storage_buffers_per_stage: int = 1 << 30
    max_workgroup_storage_bytes: int = 48 * 1024
    max_buffer_bytes: int = 1 << 40


def storage_bindings(kernel: Kernel, error_word: bool) -> int:
    """Storage buffers `kernel` binds: one per resource (buffer, tensor, image, uniform
    excepted), one for the tensors' layout records if it has tensors, and the error word."""
    storage = sum(1 for p in kernel.params if p.category not in ("scalar", "uniform"))
    storage += any(p.category in TENSOR_CATEGORIES for p in kernel.params)
    return storage + bool(error_word)


@dataclass(frozen=True)
class CompileOptions:
    """Options that change generated code; part of the compile cache key."""

    checks: bool = True  # trapping bounds / division checks (issue 9)
    extra: tuple = ()


# ---------------------------------------------------------------- bound arguments
# The core turns each user argument into one of these, in parameter order, after
# validating it. Backends never see numpy arrays or Python scalars of unknown type.


@dataclass
class BufferArg:
    """A buffer (or the parent buffer of a tensor bound to a plain slice).

    `offset` and `length` are in elements; `length` is the logical length the kernel
    sees through `.len()`, which can be smaller than the allocation."""

    handle: Any
    offset: int
    length: int
    elem: str  # IR element type ("f32", "u32", "i32", "bool", "struct:Name")
    stride: int  # bytes per element on the device


@dataclass
class ScalarArg:
    ty: str  # "u32" | "i32" | "f32" | "bool"
    value: Union[int, float, bool]


@dataclass
class TensorArg:
    """A tensor view: the parent buffer plus Goldy's 48-byte layout record
    (off, rank, numel, d0..d3, s0..s3, flags), all u32, in elements."""

    handle: Any
    elem: str
    layout: tuple[int, ...]  # 12 u32
    buffer_length: int  # elements in the parent buffer (for bounds checks)


@dataclass
class UniformArg:
    """A `gpu::Uniform<S>`: the struct's bytes in GPU layout."""

    data: bytes
    struct: str


@dataclass
class ImageArg:
    handle: Any
    width: int
    height: int
    elem: str


Arg = Union[BufferArg, ScalarArg, TensorArg, UniformArg, ImageArg]


@dataclass
class Dispatch:
    """One recorded dispatch node as the backend sees it."""

    kernel: Kernel
    compiled: Any
    args: list[Arg]
    groups: tuple[int, int, int]
    label: str = ""
    state: Any = None  # backend-private: bind groups, packed parameters, ...


class Backend(ABC):
    name: str = "?"
    lowering: str = "?"  # the code it runs: a target of ir.pipeline ("cpu", "wgsl", "ptx", "slang")
    limits: Limits = Limits()
    subgroup_width: Optional[int] = None

    def describe(self) -> str:
        """Human-readable device name, e.g. `llvmpipe (LLVM 15, 256 bits) via Vulkan`."""
        return self.name

    # -- memory
    @abstractmethod
    def alloc(self, nbytes: int) -> Any: ...

    @abstractmethod
    def free(self, handle: Any) -> None: ...

    @abstractmethod
    def write(self, handle: Any, offset: int, data: memoryview) -> None:
        """Copy bytes to the device at byte `offset`."""

    def write_ordered(self, handle: Any, offset: int, data: memoryview) -> None:
        """`write`, except that it need not wait: the bytes land after the work already
        queued and before any submitted later, and `data` may be reused at once (a
        scheme's live block, runtime/live_scalars.py)."""
        self.write(handle, offset, data)

    @abstractmethod
    def read(self, handle: Any, offset: int, nbytes: int) -> bytes:
        """Copy bytes back from the device (waits for pending work)."""

    # -- kernels
    @abstractmethod
    def compile(self, kernel: Kernel, options: CompileOptions) -> Any:
        """Compile verified IR; raise BackendError on failure. The core caches the result."""

    def record(self, d: Dispatch) -> None:
        """Called once when a dispatch is recorded; may fill `d.state` (bind groups...)."""

    def update_scalar(self, d: Dispatch, index: int) -> None:
        """`d.args[index]` (a ScalarArg) changed between submits."""

    def update_scalars(self, d: Dispatch, indices) -> None:
        """Several scalars of `d` changed between submits (Scheme.submit's one call per
        dispatch); a backend that can write them at once overrides it."""
        for i in sorted(indices):
            self.update_scalar(d, i)

    @abstractmethod
    def submit(self, dispatches: list[Dispatch]) -> Optional[list[FaultReport]]:
        """Run the dispatches in order, each seeing the previous ones' writes, and wait.

        Trapping checks: `Dispatch.kernel` went through `ir.pipeline.lower` with checks on
        when `options.checks` (`ir.pipeline.kernel_info(kernel).sites` lists them); every node with `check >= 0` must be
        checked at run time. A failing access is suppressed (a load gives 0, a store or
        atomic does nothing, a division gives 0), the thread carries on, and the failure is
        recorded in a per-dispatch error word (first failure wins; CUDA without `trap`, so
        the context survives). Return one FaultReport per faulted dispatch (or None)."""

    # -- asynchronous work (runtime/eager.py). The defaults run synchronously and keep the
    # contract: a ticket's faults come back at `wait_ticket`, an eager launch's from `launch`.
    def enqueue(self, dispatches: list[Dispatch]) -> Any:
        """Start the dispatches as `submit` does and return a ticket without waiting."""
        return Finished(self.submit(dispatches))

    def ticket_done(self, ticket: Any) -> bool:
        return True

    def wait_ticket(self, ticket: Any) -> Optional[list[FaultReport]]:
        """Wait for an `enqueue`d ticket; its faults, as `submit` returns them."""
        return ticket.faults

    def launch(self, d: Dispatch) -> Optional[list[FaultReport]]:
        """Eager launch of one recorded dispatch on the device's stream. A backend that
        returns before it ran reports its faults from `synchronize` instead."""
        return self.submit([d])

    def synchronize(self) -> list[tuple[Dispatch, FaultReport]]:
        """Wait for all queued work; the faults of eager launches not reported yet."""
        return []

    def close(self) -> None:
        """Release device resources; the core never calls the backend afterwards."""


@dataclass
class Finished:
    """The ticket of work that already ran (synchronous backends)."""

    faults: Optional[list[FaultReport]]
