"""The Slang compiler for GPU targets, without a GPU: slangpy's wheel carries
libslang-compiler (its C API, `spProcessCommandLineArguments` taking slangc's own
arguments) but no `slangc` binary, and slangpy opens a device for every target it
compiles to. lavapipe lacks an extension slangpy's Vulkan device asks for, so on CI the
slang backend runs only on slangpy's CPU device; this compiles the same sources for
SPIR-V, CUDA, HLSL and Metal, so what those targets get is compiled by the real compiler too.
"""

from __future__ import annotations

import ctypes
import glob
import os
from dataclasses import dataclass
from typing import Optional

_lib: Optional[ctypes.CDLL] = None
_session: Optional[int] = None


def _library(slangpy) -> ctypes.CDLL:
    global _lib, _session
    if _lib is None:
        (path,) = glob.glob(os.path.join(os.path.dirname(slangpy.__file__), "libslang-compiler.so*"))[:1]
        lib = ctypes.CDLL(path)
        lib.spCreateSession.restype = ctypes.c_void_p
        lib.spCreateSession.argtypes = [ctypes.c_char_p]
        lib.spCreateCompileRequest.restype = ctypes.c_void_p
        lib.spCreateCompileRequest.argtypes = [ctypes.c_void_p]
        lib.spDestroyCompileRequest.argtypes = [ctypes.c_void_p]
        lib.spProcessCommandLineArguments.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
        lib.spCompile.argtypes = [ctypes.c_void_p]
        lib.spGetDiagnosticOutput.restype = ctypes.c_char_p
        lib.spGetDiagnosticOutput.argtypes = [ctypes.c_void_p]
        lib.spGetEntryPointCode.restype = ctypes.c_void_p
        lib.spGetEntryPointCode.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
        _lib, _session = lib, lib.spCreateSession(None)  # one global session: it loads the core module
    return _lib


@dataclass
class Result:
    ok: bool
    diagnostics: str
    code: bytes  # the target's text (SPIR-V as its assembly)


def compile_file(slangpy, path: str, target: str, entry: str, include: str) -> Result:
    """`slangc PATH -target TARGET -entry ENTRY -stage compute -fp-mode precise -I INCLUDE`,
    the options runtime/slang.py gives slangpy. `target`: spirv-asm, cuda, hlsl, metal, ..."""
    lib = _library(slangpy)
    req = lib.spCreateCompileRequest(_session)
    try:
        args = [path, "-target", target, "-entry", entry, "-stage", "compute", "-fp-mode", "precise",
                "-I", include, "-o", path + "." + target]  # -o: the request keeps the code (nothing is written)
        argv = (ctypes.c_char_p * len(args))(*[a.encode() for a in args])
        rc = lib.spProcessCommandLineArguments(req, argv, len(args))
        if rc >= 0:
            rc = lib.spCompile(req)
        diagnostics = (lib.spGetDiagnosticOutput(req) or b"").decode(errors="replace")
        n = ctypes.c_size_t()
        p = lib.spGetEntryPointCode(req, 0, ctypes.byref(n)) if rc >= 0 else None
        code = ctypes.string_at(p, n.value) if p else b""
        return Result(rc >= 0 and bool(code), diagnostics, code)
    finally:
        lib.spDestroyCompileRequest(req)
