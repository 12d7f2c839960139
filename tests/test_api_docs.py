"""docs/api.md stays in sync with the code: every public function, class, method and
property of the Python API appears there with its exact signature, as does every
environment variable the package reads and every command-line option."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy as np

import goldy_import as gi
from goldy_import.cli import _parser
from goldy_import.runtime import core, eager, launch

REPO = Path(__file__).resolve().parent.parent
API = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
PACKAGE = ("goldy_import", "importer", "ir", "codegen", "runtime")

FUNCTIONS = ["load", "load_source", "load_slang", "backend_available"]
CLASSES = [gi.Device, gi.Buffer, gi.Image, gi.TensorView, gi.KernelDef, gi.PreparedKernel, core.RecordBuilder,
           core.InvokeBuilder, gi.Invocation, gi.Node, gi.Scheme, gi.KernelModule, gi.StructType,
           launch.GeneratedKernel, launch.GeneratedPrepared, eager.LaunchBuilder, eager.Submission]
# Constructed by the package, not by users: documented by their attributes, not their __init__.
NOT_CONSTRUCTED = {"Buffer", "Image", "PreparedKernel", "RecordBuilder", "InvokeBuilder", "Invocation", "Node",
                   "KernelModule", "GeneratedKernel", "GeneratedPrepared", "KernelDef", "StructType",
                   "LaunchBuilder", "Submission"}


def _default(v: object) -> str:
    if isinstance(v, type) and v.__module__ == "numpy":
        return f"np.{v.__name__}"
    return repr(v)


def render(fn, name: str) -> str:
    """`name(params)` as docs/api.md writes it: no annotations, numpy types as `np.x`."""
    params = []
    star = False
    for p in inspect.signature(fn).parameters.values():
        if p.name in ("self", "cls"):
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        text = {p.VAR_POSITIONAL: f"*{p.name}", p.VAR_KEYWORD: f"**{p.name}"}.get(p.kind, p.name)
        if p.kind is p.VAR_POSITIONAL:
            star = True
        if p.default is not p.empty:
            text += f"={_default(p.default)}"
        params.append(text)
    return f"{name}({', '.join(params)})"


def public_api() -> list[str]:
    """Every code span docs/api.md must contain."""
    spans = [render(getattr(gi, f), f"gi.{f}") for f in FUNCTIONS]
    for cls in CLASSES:
        name = cls.__name__
        if name not in NOT_CONSTRUCTED:
            spans.append(render(cls.__init__, f"gi.{name}"))
        for attr, v in sorted(vars(cls).items()):
            if attr.startswith("_"):
                continue
            if isinstance(v, property):
                spans.append(f"{name}.{attr}")
            elif isinstance(v, (staticmethod, classmethod)):
                spans.append(render(v.__func__, f"{name}.{attr}"))
            elif inspect.isfunction(v):
                spans.append(render(v, f"{name}.{attr}"))
    return spans


def test_every_public_callable_is_documented_with_its_signature():
    missing = [s for s in public_api() if f"`{s}`" not in API]
    assert not missing, "docs/api.md lacks (add each as a code span, exactly):\n" + "\n".join(missing)


def test_every_exported_name_is_documented():
    missing = [n for n in gi.__all__ if n != "__version__" and f"`{n}`" not in API and f"gi.{n}" not in API]
    assert not missing, f"docs/api.md does not mention {missing}"


def test_every_environment_variable_is_documented():
    names = set()
    for folder in PACKAGE:
        for path in (REPO / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            # read directly, or through goldy_import/envflag.py's on/off reader
            names |= set(re.findall(r"(?:os\.environ(?:\.get)?[\[(]|env_flag\()\s*\"([A-Z][A-Z0-9_]+)\"", text))
    assert {"GOLDY_BACKEND", "GOLDY_BOUNDS_CHECKS", "GOLDY_DUMP_RUST_KERNELS", "GOLDY_SLANG_CACHE"} <= names
    missing = sorted(n for n in names if f"`{n}`" not in API)
    assert not missing, f"docs/api.md, Environment variables, lacks {missing}"


def test_every_cli_option_is_documented():
    options = [s for a in _parser()._actions for s in a.option_strings if s.startswith("--")]
    missing = [o for o in options if f"`{o}" not in API]
    assert not missing, f"docs/api.md, Command line, lacks {missing}"


def test_numpy_defaults_render_as_written():
    assert render(gi.Device.zeros, "Device.zeros") == "Device.zeros(n, dtype=np.float32)"
    assert render(gi.Device.buffer, "Device.buffer") == "Device.buffer(array, *, read_only=False)"
    assert np.float32.__module__ == "numpy"
