"""The CPU target, the oracle: verified, lowered IR in, one vectorised numpy function out
(`emitter.py`), running on the helpers of `rt.py`, with the math library evaluated on
numpy arrays (`math.py`)."""

from .emitter import CpuKernel, Slot, compile_cpu, emit_cpu

__all__ = ["CpuKernel", "Slot", "compile_cpu", "emit_cpu"]
