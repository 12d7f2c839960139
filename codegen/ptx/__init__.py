"""The PTX target: verified, lowered IR in, PTX text out (`emitter.py`), with the math
library rendered as inline instructions (`math.py`)."""

from . import pdl
from .emitter import (batch_entry, batchable, emit_ptx, entry_name, lanes_entry, lanes_in, ptx_version_for,
                      rowwarp_entry)

__all__ = ["emit_ptx", "batch_entry", "batchable", "entry_name", "lanes_entry", "lanes_in", "ptx_version_for", "pdl",
           "rowwarp_entry"]
