"""The WGSL support library (library.wgsl, a data file) as `name -> (dependencies, text)`.

A helper starts at a `// @helper NAME [needs DEP ...]` line and runs to the next one (its
comments follow its marker); the file's own header, before the first marker, is not copied."""

from __future__ import annotations

import os
import re

_MARK = re.compile(r"^// @helper (\w+)(?: needs ((?:\w+ ?)+))?$")


def _load(path: str) -> dict[str, tuple[tuple[str, ...], str]]:
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    out: dict[str, tuple[tuple[str, ...], str]] = {}
    name: str | None = None
    deps: tuple[str, ...] = ()
    body: list[str] = []
    for line in lines + ["// @helper _end"]:
        m = _MARK.match(line)
        if m is None:
            if name is not None:
                body.append(line)
            continue
        if name is not None:
            out[name] = (deps, "\n".join(body).strip("\n"))
        name, deps, body = m.group(1), tuple((m.group(2) or "").split()), []
    return out


LIBRARY = _load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "library.wgsl"))
