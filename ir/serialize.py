"""Versioned JSON form of the IR. `from_json(to_json(k)) == k` exactly.

A field added with a default (`Kernel.source_lines`, `check`) is left out when it holds the
default and read as the default when absent, so files written before it still load and the
version only changes when a reader would misread a file."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from . import nodes as N

IR_VERSION = 1

_NODE_CLASSES = {
    cls.__name__: cls
    for cls in vars(N).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls not in (N.Expr, N.Stmt)
}
_NODE_CLASSES["AtomicAdd"] = N.Atomic  # files written before the other atomic operations


def _encode(v: Any) -> Any:
    if isinstance(v, N.Span):
        return [v.start, v.end, v.line, v.col, v.end_line, v.end_col]
    if dataclasses.is_dataclass(v):
        out: dict[str, Any] = {"node": type(v).__name__}
        for f in dataclasses.fields(v):
            value = getattr(v, f.name)
            if (f.name == "check" and value == -1) or (f.name == "source_lines" and not value) \
                    or (f.name in ("op", "compare", "fact") and value == f.default):
                continue  # the defaults (unchecked, no source text): kept out so plain IR reads as before
            out[f.name] = _encode(value)
        return out
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    if isinstance(v, dict):
        return {k: _encode(x) for k, x in v.items()}
    if isinstance(v, float):
        # JSON has no inf/nan; keep float-ness explicit so 1.0 does not come back as 1
        return {"f32": repr(v)}
    return v


def _decode(v: Any) -> Any:
    if isinstance(v, dict):
        if "f32" in v and len(v) == 1:
            return float(v["f32"])
        if "node" in v:
            cls = _NODE_CLASSES[v["node"]]
            kwargs = {}
            for f in dataclasses.fields(cls):
                if f.name not in v and (f.default is not dataclasses.MISSING
                                        or f.default_factory is not dataclasses.MISSING):
                    continue  # written before the field existed, or left out as the default
                raw = v[f.name]
                if f.name == "span":
                    kwargs[f.name] = N.Span(*raw)
                elif f.name == "workgroup_size":
                    kwargs[f.name] = tuple(raw)
                else:
                    kwargs[f.name] = _decode(raw)
            return cls(**kwargs)
        return {k: _decode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_decode(x) for x in v]
    return v


def kernel_to_dict(k: N.Kernel) -> dict[str, Any]:
    return {"goldy_ir_version": IR_VERSION, "kernel": _encode(k)}


def kernel_from_dict(d: dict[str, Any]) -> N.Kernel:
    version = d.get("goldy_ir_version")
    if version != IR_VERSION:
        raise ValueError(f"unsupported IR version {version!r} (this toolchain reads {IR_VERSION})")
    k = _decode(d["kernel"])
    if not isinstance(k, N.Kernel):
        raise ValueError("IR document does not hold a kernel")
    return k


_NUMBER_LIST = re.compile(r"\[\s*(-?[\d.e+-]+(?:,\s*-?[\d.e+-]+)*)\s*\]")


def to_json(k: N.Kernel, indent: int | None = 1) -> str:
    text = json.dumps(kernel_to_dict(k), indent=indent)
    if indent is None:
        return text
    # spans and workgroup sizes on one line each: far easier to read and diff
    return _NUMBER_LIST.sub(lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)


def from_json(text: str) -> N.Kernel:
    return kernel_from_dict(json.loads(text))
