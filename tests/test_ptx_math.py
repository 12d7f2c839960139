"""The PTX renderer of the math library (codegen/ptx/math.PtxOps) and PTX's exact f32 `%`.

The library's accuracy and its bits on every backend are tests/test_mathlib.py's; here:
each function renders to PTX that ptxas assembles, using only the portable instructions
(no fma, no f64, no .ftz), and the fmod sequence is exact (its numpy twin evaluates the
very operation list the emitter renders)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from goldy_import.codegen.ptx import math as PM
from goldy_import.ir import mathlib as ML
from goldy_import.codegen.ptx import emit_ptx
from goldy_import.importer import import_source
from test_ptx import assemble, ptxas  # noqa: F401  (the session's ptxas fixture)
from oracle import same_bits

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, np.inf, -np.inf, np.nan,
                    1e-30, 1e30, -1e30], dtype=np.float32)

ALL = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn all_math(x: &[f32], y: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i >= x.len() { return; }
    let k = i * 8;
    out[k] = x[i].sin();
    out[k + 1] = x[i].cos();
    out[k + 2] = x[i].tan();
    out[k + 3] = x[i].exp();
    out[k + 4] = x[i].exp2();
    out[k + 5] = x[i].ln();
    out[k + 6] = x[i].log2();
    out[k + 7] = x[i].powf(y[i]);
}
"""


def test_every_function_assembles_from_portable_instructions(ptxas, tmp_path):  # noqa: F811
    r = import_source(ALL, "t.rs")
    assert r.ok, r.render()
    text = emit_ptx(r.kernels[0])
    assemble(ptxas, text, tmp_path)
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    assert not re.search(r"\.f64\b|\.ftz\b", body)
    assert all(f"{op}.rn.f32" in body for op in ("add", "sub", "mul", "div"))
    # the one fma: exp's x - k * LN2_HI, whose product is exact (Ops.sub_exact_product)
    fmas = [line for line in body.splitlines() if re.search(r"\bfma\.", line)]
    assert fmas and all(PM.fimm(-ML.LN2_HI) in line for line in fmas), fmas[:3]


def test_fmod_is_exact():
    rng = np.random.default_rng(20261117)
    a = np.concatenate([rng.uniform(-100, 100, 200_000), rng.standard_normal(50_000) * 1e30,
                        SPECIAL.repeat(16)]).astype(np.float32)
    b = np.concatenate([rng.uniform(-10, 10, 200_000), rng.standard_normal(50_000) * 1e-3,
                        np.tile(SPECIAL, 16)]).astype(np.float32)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    got = PM.evaluate_fmod(a, b)
    same = same_bits(got, want)
    assert same.all(), list(zip(a[~same], b[~same], got[~same], want[~same]))[:5]


@pytest.mark.parametrize("value,text", [(1.0, "0f3F800000"), (-0.0, "0f80000000"), (np.inf, "0f7F800000")])
def test_immediates_are_exact(value, text):
    assert PM.fimm(value) == text
    assert PM.dimm(1.0) == "0d3FF0000000000000"
