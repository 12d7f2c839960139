"""The corpus of wrong answers found (tests/data/fuzz_corpus/): each `NAME.rs` is a
minimised kernel whose comment says what broke, and `NAME.json` beside it its inputs:

    {"found": "where it came from (fuzzer seed, issue)", "kernel": "k",
     "checks": false,                      # optional: run with trapping checks off
     "xfail": {"backends": [...], "reason": "..."},   # optional: known, not fixed yet
     "runs": [{"args": [...], "grid": ["over_1d", n] | ["groups", [x, y, z]],
               "expect": {"param": [values]},                       # Rust's bits
               "expect_ulp": {"param": {"f": "sin", "of": [...], "ulp": 1}},
               "expect_near": {"param": {"start": 1, "step": 2, "value": 1.0, "tol": 1e-5}}}]}

An argument is a scalar (a number, `true`/`false`, or a string such as "nan") or a buffer
`{"f32": [...]}` (also u32, i32, bool; floats may be "nan", "inf", "-inf", "-0.0"). Every
run is replayed on every backend: the CPU oracle and each other backend must give Rust's
values where the case states them, and the other backends must match the oracle bit for
bit on every buffer (NaN as NaN). A case marked `xfail` fails strictly on the backends it
names: it turns into a failure the moment it is fixed, so the mark is removed with the fix.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from oracle import backend_or_skip, kernel_ir, run_kernel, same_bits

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
CORPUS = Path(__file__).resolve().parent / "data" / "fuzz_corpus"
DTYPES = {"f32": np.float32, "u32": np.uint32, "i32": np.int32, "bool": np.bool_}


def cases() -> list:
    out = []
    for rs in sorted(CORPUS.glob("*.rs")):
        meta = json.loads(rs.with_suffix(".json").read_text())
        for backend in BACKENDS:
            marks = []
            xf = meta.get("xfail")
            if xf and backend in xf["backends"]:
                marks.append(pytest.mark.xfail(strict=True, reason=xf["reason"]))
            out.append(pytest.param(rs, meta, backend, id=f"{rs.stem}-{backend}", marks=marks))
    return out


def value(v):
    return float(v) if isinstance(v, str) else v


def argument(a):
    if isinstance(a, dict):
        ((ty, values),) = a.items()
        return np.array([value(v) for v in values], dtype=DTYPES[ty])
    return value(a)


def correctly_rounded(f: str, x: float) -> np.float32:
    return np.float32(getattr(math, f)(float(np.float32(x))))


def check_expectations(run: dict, params: list[str], got: list, what: str) -> None:
    by_name = dict(zip(params, got))
    for name, values in run.get("expect", {}).items():
        g = by_name[name]
        w = np.array([value(v) for v in values], dtype=g.dtype)
        same = same_bits(g, w) if g.dtype.kind == "f" else g == w
        assert same.all(), f"{what}: `{name}` is {g.tolist()}, Rust gives {w.tolist()}"
    for name, spec in run.get("expect_ulp", {}).items():
        g = by_name[name].astype(np.float64)
        ref = np.array([correctly_rounded(spec["f"], x) for x in spec["of"]], np.float32)
        err = np.abs(g - ref) / np.spacing(np.abs(ref)).astype(np.float64)
        assert (err <= spec["ulp"]).all(), f"{what}: `{name}` = {g.tolist()}, {spec['f']} is {ref.tolist()}"
    for name, spec in run.get("expect_near", {}).items():
        g = by_name[name][spec["start"]::spec["step"]]
        assert np.allclose(g, spec["value"], rtol=0, atol=spec["tol"]), f"{what}: `{name}` = {g.tolist()}"


@pytest.mark.parametrize("rs, meta, backend", cases())
def test_corpus_case(rs, meta, backend, monkeypatch):
    backend_or_skip(backend)
    if not meta.get("checks", True):
        monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")
    src, kernel = str(rs), meta["kernel"]
    params = [p.name for p in kernel_ir(src, kernel).params]
    for j, run in enumerate(meta["runs"]):
        args = [argument(a) for a in run["args"]]
        grid = tuple(run["grid"][:1]) + tuple(tuple(g) if isinstance(g, list) else g for g in run["grid"][1:])
        what = f"{rs.name} run {j} on {backend} ({meta['found']})"
        got = run_kernel(backend, src, kernel, args, grid)
        check_expectations(run, params, got, what)
        if backend != "cpu":
            want = run_kernel("cpu", src, kernel, args, grid)
            for name, g, w in zip(params, got, want):
                if w is not None:
                    same = same_bits(g, w) if w.dtype.kind == "f" else g == w
                    assert same.all(), f"{what}: `{name}` differs from the CPU oracle: {g.tolist()} != {w.tolist()}"


def test_every_case_has_its_inputs():
    for rs in CORPUS.glob("*.rs"):
        meta = json.loads(rs.with_suffix(".json").read_text())
        assert meta["found"] and meta["runs"] and rs.read_text().startswith("//"), rs.name
    assert len(list(CORPUS.glob("*.json"))) == len(list(CORPUS.glob("*.rs")))
