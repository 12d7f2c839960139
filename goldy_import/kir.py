"""Kernel IR assets: `.kir.json` files, one kernel's IR each in the versioned JSON form of
`ir/serialize.py`, written by `goldy-import FILE.rs --emit kir` and run by `load_kir`
without the Rust parser (poot's committed kernel IR). `goldy_import/assets.py` keeps a
manifest of them in step with their sources."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Union

from goldy_import.errors import DiagnosticError
from goldy_import.ir import nodes as N
from goldy_import.ir.serialize import kernel_from_dict, to_json
from goldy_import.ir.verify import VerifyError, verify

SUFFIX = ".kir.json"


def kir_text(kernel: N.Kernel) -> str:
    """The bytes of a kernel's asset: its IR as `to_json` writes it, one trailing newline."""
    return to_json(kernel) + "\n"


def asset_name(kernel: N.Kernel) -> str:
    return kernel.name + SUFFIX


def read_kir(path: Union[str, os.PathLike]) -> list[N.Kernel]:
    """The verified kernels of one asset file (one JSON document, or several one after the
    other as `--emit ir` prints them)."""
    shown = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise DiagnosticError(f"cannot read {shown}: {getattr(e, 'strerror', None) or e}") from None
    decoder = json.JSONDecoder()
    kernels = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        try:
            doc, pos = decoder.raw_decode(text, pos)
            kernel = kernel_from_dict(doc)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise DiagnosticError(f"{shown}: not a goldy-import kernel IR asset: {e}") from None
        try:
            verify(kernel)
        except VerifyError as e:
            raise DiagnosticError(f"{shown}: kernel `{kernel.name}` is not valid IR: {e.message}") from None
        kernels.append(kernel)
    if not kernels:
        raise DiagnosticError(f"{shown}: no kernel in this file")
    return kernels


def load_kir(path: Union[str, os.PathLike]):
    """The kernels of a `.kir.json` asset, or of every asset in a directory, as a module like
    `load(FILE.rs)` gives (`mod.saxpy.prepare(dev)`), without parsing any Rust."""
    from goldy_import.loader import module_from_kernels
    from goldy_import.runtime.host_input import path as checked_path

    shown = os.fspath(checked_path("load_kir", path))
    files = ([os.path.join(shown, f) for f in sorted(os.listdir(shown)) if f.endswith(SUFFIX)]
             if os.path.isdir(shown) else [shown])
    if not files:
        raise DiagnosticError(f"{shown}: no {SUFFIX} files in this directory")
    kernels: list[N.Kernel] = []
    digest = hashlib.sha256()
    where: dict[str, str] = {}
    for f in files:
        for k in read_kir(f):
            if k.name in where:
                raise DiagnosticError(f"{f}: kernel `{k.name}` is also defined in {where[k.name]}")
            where[k.name] = f
            kernels.append(k)
        with open(f, "rb") as fh:
            digest.update(fh.read())
    structs = {s.name: s for k in kernels for s in k.structs}
    return module_from_kernels(kernels, shown, digest.hexdigest(), structs)
