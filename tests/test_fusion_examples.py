"""The multi-stage examples of rust_examples/ (goldy_import.examples.PIPELINES), as the
demo runs them: unfused on the CPU against numpy, and unfused and fused on every backend
with the CPU oracle's bits."""

import os

import numpy as np
import pytest

from goldy_import.demo import run_pipeline
from goldy_import.examples import PIPELINES
from oracle import assert_same, backend_or_skip, device

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rust_examples")


@pytest.mark.parametrize("pipe", PIPELINES, ids=[p.name for p in PIPELINES])
def test_cpu_unfused_matches_numpy(pipe):
    args = pipe.inputs(np.random.default_rng(), 5000)
    got, _ = run_pipeline(device("cpu"), ROOT, pipe, args, fused=False)
    for k, w in pipe.reference(args).items():
        np.testing.assert_allclose(got[k], w, rtol=pipe.rtol, atol=pipe.atol, err_msg=k)


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
@pytest.mark.parametrize("pipe", PIPELINES, ids=[p.name for p in PIPELINES])
def test_fused_and_unfused_give_the_oracle_bits(pipe, backend):
    backend_or_skip(backend)
    args = pipe.inputs(np.random.default_rng(), 5000)
    want, _ = run_pipeline(device("cpu"), ROOT, pipe, args, fused=False)
    for fused in (False, True):
        got, _ = run_pipeline(device(backend), ROOT, pipe, args, fused=fused)
        for k in want:
            assert_same(got[k], want[k], what=f"{pipe.name} {'fused' if fused else 'unfused'} on {backend}: `{k}`")
