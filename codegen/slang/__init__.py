"""The Slang target: canonical `[goldy_compute]` Slang (`emitter.py`, printed by `text.py`),
the lane-serial form for slangpy's CPU device, which has no barriers (`lanes.py`),
hand-written Slang kernels (`handwritten.py`) and the ABI module they import
(`goldy_abi.slang`)."""

from .emitter import (ABI_DIR, ABI_MODULE, CANONICAL_ENTRY, ENTRY_POINT, abi_description, dump_kernel, emit_slang,
                      emit_wrapper, emit_wrapper_from_kernel_def, uses_barriers)
from .handwritten import HandwrittenKernel, try_kernel_def_from_source
from .text import Names

__all__ = ["emit_slang", "emit_wrapper", "emit_wrapper_from_kernel_def", "dump_kernel", "abi_description",
           "uses_barriers", "ABI_DIR", "ABI_MODULE", "ENTRY_POINT", "CANONICAL_ENTRY", "HandwrittenKernel",
           "try_kernel_def_from_source", "Names"]
