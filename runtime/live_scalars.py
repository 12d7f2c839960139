"""A Scheme's live block: the scalars that change between submits, in one device buffer.

A scalar changed with `set_node_param` stays a run-time value of its node (it is not
baked). Passed as a kernel argument, every change costs a backend update per dispatch
that carries it: on CUDA a `cuGraphExecKernelNodeSetParams` per changed graph node at the
next replay (microseconds each; a decode step changes ~40 per token). With specialization
on, the node's variant reads such a scalar from a word of this block instead
(ir/specialize.py `live`): `set_node_param` writes the word into a host mirror, and the
next submit copies the mirror to the device once, ordered before its dispatches
(`Backend.write_ordered`), whatever the number of changed scalars. The recorded graph's
arguments never change again.

A word belongs to one recorded node's scalar (node index, parameter index), so the node's
own variant and every fused region it is part of read the same word. The block holds
`WORDS` words; past that, scalars stay kernel arguments. A kernel at the device's
storage-binding limit gets no live block (`fits`). When the scheme is gone its block goes
back to the device for the next scheme's (writes are ordered after queued work, so a
submit still in flight reads what it was given).
"""

from __future__ import annotations

import struct
import weakref
from typing import Any, Optional

import numpy as np

from goldy_import.ir import nodes as N

from .backend import BufferArg, ScalarArg, storage_bindings

WORDS = 1024  # words per scheme (4 KiB, one copy per submit that changed any)

_FORMAT = {"u32": struct.Struct("<I"), "i32": struct.Struct("<i"), "f32": struct.Struct("<f"),
           "bool": struct.Struct("<I")}  # the bits a kernel argument of that type has


def fits(kernel: N.Kernel, backend: Any) -> bool:
    """Whether `kernel` may bind one more storage buffer (the live block) within the
    backend's limit, counting an error word either way."""
    return storage_bindings(kernel, True) + 1 <= backend.limits.max_storage_buffers_per_stage


class LiveScalars:
    """One scheme's live block (module docstring)."""

    def __init__(self, device: Any):
        self.device = device
        self.words: dict[tuple[int, int], int] = {}  # (node index, parameter index) -> word
        self.mirror = bytearray(4 * WORDS)
        self.buffer: Any = None  # the device Buffer, made with the first word
        self.dirty = False  # the mirror has words the device copy lacks

    def word(self, source: tuple[int, int], arg: ScalarArg) -> Optional[int]:
        """The word of a recorded node's scalar (given one on first use, holding `arg`'s
        value); None once the block is full."""
        w = self.words.get(source)
        if w is None:
            if len(self.words) >= WORDS:
                return None
            if self.buffer is None:  # a block a scheme that is gone left (its queued reads come first), or a new one
                pool = self.device._live_blocks
                self.buffer = pool.pop() if pool else self.device.zeros(WORDS, np.uint32)
                weakref.finalize(self, pool.append, self.buffer)
            w = self.words[source] = len(self.words)
            self.set(w, arg)
        return w

    def set(self, word: int, arg: ScalarArg) -> None:
        v = int(bool(arg.value)) if arg.ty == "bool" else arg.value
        _FORMAT[arg.ty].pack_into(self.mirror, 4 * word, v)
        self.dirty = True

    def changed(self, source: tuple[int, int], arg: ScalarArg) -> Optional[int]:
        """set_node_param: the scalar's word takes the new value; that word, None if it has none."""
        w = self.words.get(source)
        if w is not None:
            self.set(w, arg)
        return w

    def arg(self) -> BufferArg:
        """The block as a variant's last argument."""
        b = self.buffer
        return BufferArg(b.handle, b.offset, WORDS, "u32", 4)

    def flush(self, backend: Any) -> bool:
        """The mirror's used words to the device if any changed, ordered before the next
        dispatches (under the device lock, in the submit); whether it copied."""
        if not self.dirty:
            return False
        backend.write_ordered(self.buffer.handle, 4 * self.buffer.offset, memoryview(self.mirror)[:4 * len(self.words)])
        self.dirty = False
        return True
