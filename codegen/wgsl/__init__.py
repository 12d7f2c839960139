"""The WGSL target: verified, lowered IR in, one WGSL compute module out
(`emitter.py`; its docstring describes the module shape and the Rust rules it writes out)."""

from .emitter import (ResourceBinding, UniformField, WgslEmitError, WgslModule, emit_wgsl,
                      emit_wgsl_module, f32_literal)

__all__ = ["emit_wgsl", "emit_wgsl_module", "WgslModule", "ResourceBinding", "UniformField", "WgslEmitError",
           "f32_literal"]
