"""Every kernel of rust_examples/: the CPU backend against numpy, every other backend
against the CPU backend, with fresh random inputs each run."""

import os

import numpy as np
import pytest

from goldy_import.examples import EXAMPLES
from oracle import assert_same, check_against_cpu, kernel_ir, run_kernel

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {"softmax.rs": 4000, "collatz.rs": 1000}
IDS = [f"{e.kernel}" for e in EXAMPLES]


def _case(ex, seed):
    rng = np.random.default_rng(seed)
    args = ex.inputs(rng, SIZES.get(ex.file, 5000))
    return os.path.join(REPO, "rust_examples", ex.file), args


@pytest.mark.parametrize("ex", EXAMPLES, ids=IDS)
def test_cpu_backend_matches_numpy_reference(ex):
    path, args = _case(ex, np.random.SeedSequence().entropy % 2**32)
    got = run_kernel("cpu", path, ex.kernel, args, ex.grid(args))
    params = kernel_ir(path, ex.kernel).params
    for p, g, w in zip(params, got, ex.reference(args)):
        if w is not None:
            assert_same(g, w, ex.rtol, ex.atol, f"cpu vs numpy: `{ex.kernel}` parameter `{p.name}`")


@pytest.mark.parametrize("backend", ["wgpu", "slang", "cuda"])
@pytest.mark.parametrize("ex", EXAMPLES, ids=IDS)
def test_backend_matches_cpu_oracle(ex, backend):
    path, args = _case(ex, np.random.SeedSequence().entropy % 2**32)
    check_against_cpu(backend, path, ex.kernel, args, ex.grid(args), ex.rtol, ex.atol)
