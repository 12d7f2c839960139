"""`load(path)`: import a Rust file in-process and get one KernelDef per kernel."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import TYPE_CHECKING, Optional, Sequence, Union

from goldy_import.codegen.pymodule import class_names, emit_module
from goldy_import.errors import DiagnosticError
from goldy_import.ir import nodes as N
from goldy_import.runtime.core import KernelDef
from goldy_import.runtime.launch import StructType

if TYPE_CHECKING:
    from goldy_import.importresult import ImportResult


class KernelModule(SimpleNamespace):
    """The kernels of one Rust file as attributes (`mod.saxpy`), plus `kernels` (a dict),
    `structs` (name -> host/GPU dtypes) and the import `result` (diagnostics, source hash)."""

    def __repr__(self) -> str:
        return f"<kernels from {self.source_file}: {', '.join(self.kernels)}>"


def _select(result: "ImportResult", kernels: Optional[Sequence[str]]) -> "ImportResult":
    """The part of `result` a `kernels=[...]` selection loads (errors in other kernels ignored)."""
    if kernels is None:
        return result
    if isinstance(kernels, str):
        kernels = [kernels]
    missing = [n for n in kernels if n not in result.kernel_regions]
    if missing:
        have = ", ".join(result.kernel_regions) or "none"
        raise DiagnosticError(f"{result.source.filename}: no kernel {', '.join(f'`{n}`' for n in missing)} "
                              f"(kernels: {have})")
    return result.only(kernels)


def _module_from(result: "ImportResult") -> KernelModule:
    if result.errors:
        n = len(result.errors)
        msg = f"{result.source.filename}: {n} error{'s' if n != 1 else ''} in the Rust source"
        good = [k.name for k in result.kernels]
        if good and len(good) < len(result.kernel_regions):
            ok = result.only(good)
            if not ok.errors:  # every error is inside a failed kernel: say how to load the others
                msg += (f"; the kernels without errors load with kernels=[...]: "
                        f"gi.load(path, kernels={good!r})")
        raise DiagnosticError(msg, result.diagnostics, result.render())
    return module_from_kernels(result.kernels, result.source.filename, result.source_hash, result.structs, result)


def module_from_kernels(kernels_ir: list[N.Kernel], source_file: str, source_hash: str,
                        struct_decls: dict[str, N.StructDecl], result: Optional["ImportResult"] = None) -> KernelModule:
    """The module of verified IR kernels, from a Rust file or elsewhere (`.kir.json` assets)."""
    # Run the very text `goldy-import FILE.rs -o OUT.py` would write, so both give the same classes.
    code = emit_module(kernels_ir, source_file, source_hash, in_process=True, structs=list(struct_decls.values()))
    namespace: dict = {"__name__": f"goldy_kernels.{_stem(source_file)}"}
    exec(compile(code, f"<launch module for {source_file}>", "exec"), namespace)
    classes = class_names(kernels_ir)
    kernels = {k.name: namespace[classes[k.name]] for k in kernels_ir}
    structs: dict[str, StructType] = namespace["STRUCTS"]  # the generated module's own objects
    mod = KernelModule(kernels=kernels, structs=structs, result=result,
                       source_file=source_file, source_hash=source_hash)
    for name, st in structs.items():
        if name not in kernels and _free(name):
            setattr(mod, name, st)
    for name, cls in kernels.items():
        if _free(name):
            setattr(mod, name, cls)
    return mod


_OWN_ATTRIBUTES = frozenset({"kernels", "structs", "result", "source_file", "source_hash"})


def _free(name: str) -> bool:
    """A kernel or struct named like the module's own attributes (`result`, `__dict__`) is
    reachable only through `mod.kernels` / `mod.structs`: it must not replace them."""
    return name not in _OWN_ATTRIBUTES and not hasattr(KernelModule, name)


def _stem(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    return "".join(c if c.isalnum() else "_" for c in stem) or "kernels"


def load(path: Union[str, os.PathLike], kernels: Optional[Sequence[str]] = None) -> KernelModule:
    """Import the kernels of a Rust file. A file with errors raises DiagnosticError listing
    every one; with `kernels=[names]` only those kernels load, and errors inside other
    kernels are ignored (errors outside every kernel still count). A file imported before
    (same name and bytes) is read back from the disk cache (goldy_import/cache.py)."""
    from goldy_import.ircache import import_cached
    from goldy_import.runtime.host_input import path as checked_path
    try:
        with open(checked_path("load", path), "rb") as f:
            data = f.read()
    except OSError as e:
        raise DiagnosticError(f"cannot read {os.fspath(path)}: {e.strerror or e}") from None
    return _module_from(_select(import_cached(data, os.fspath(path)), kernels))


def load_source(text: Union[str, bytes], filename: str = "<source>.rs",
                kernels: Optional[Sequence[str]] = None) -> KernelModule:
    """`load` for source text instead of a file."""
    from goldy_import.ircache import import_cached
    from goldy_import.runtime.host_input import text as checked
    source = checked("load_source(text)", text)
    data = source.encode("utf-8") if isinstance(source, str) else bytes(source)
    return _module_from(_select(import_cached(data, checked("load_source(filename)", filename, (str,))), kernels))


def load_slang(source: Union[str, os.PathLike], filename: Optional[str] = None) -> KernelDef:
    """A hand-written canonical `[goldy_compute]` Slang kernel (a path or the source text),
    recordable like an imported kernel on the slang backend. It has no retained IR, so it
    is opaque to fusion and runs on the slang backend only."""
    from goldy_import.codegen.slang.handwritten import try_kernel_def_from_source
    text = os.fspath(source)
    if filename is None and "\n" not in text and text.endswith(".slang") and os.path.exists(text):
        filename = text
        with open(text, encoding="utf-8") as f:
            text = f.read()
    kernel, reason = try_kernel_def_from_source(text, filename or "<slang>")
    if kernel is None:
        raise DiagnosticError(f"{filename or '<slang>'}: not a canonical goldy_compute kernel: {reason}")
    return KernelDef(kernel)
