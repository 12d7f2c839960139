"""Shrunk failures found by tests/test_differential_fuzz.py, kept as regular tests: each
kernel runs on every backend and must agree with the CPU oracle (or, for the importer,
import cleanly). The comment above each says what broke and where it was fixed."""

from __future__ import annotations

import numpy as np
import pytest

from oracle import backend_or_skip, check_against_cpu

BACKENDS = ["wgpu", "slang", "cuda"]

# WGSL emitter: `select(a < b, a >= b, flag)` parsed as the template list `a<b, a>` and naga
# rejected the module (found by the fuzzer; fixed in codegen/wgsl/emitter.py x_Select).
SELECT_COMPARISONS = """use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(a: f32, b: f32, flag: bool, out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        out[i] = (if flag { a >= b } else { a < b }) as u32;
    }
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("flag", [True, False])
def test_select_of_comparisons(backend, flag):
    backend_or_skip(backend)
    got = check_against_cpu(backend, SELECT_COMPARISONS, "k", [1.0, 2.0, flag, np.zeros(5, np.uint32)], ("over_1d", 5))
    assert (got[3] == (0 if flag else 1)).all()
