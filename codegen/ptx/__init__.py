"""The PTX target: verified, lowered IR in, PTX text out (`emitter.py`), with the math
library rendered as inline instructions (`math.py`)."""

from .emitter import (FAULT_PARAM, FAULT_WORDS, batch_entry, batchable, emit_ptx, entry_name, has_check_sites,
                      ptx_version_for)

__all__ = ["emit_ptx", "batch_entry", "batchable", "entry_name", "ptx_version_for", "FAULT_PARAM", "FAULT_WORDS",
           "has_check_sites"]
